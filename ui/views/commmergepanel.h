// SPDX-License-Identifier: Apache-2.0
#pragma once
// The whole-job view's "Communication ops" tab (issue 35 item 4): merge_result's table, communication ops × ranks
// for one step and one metric, filled in as the rank overview analyses the job (CommMergeModel).

#include <QWidget>

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace probescope::ui {

class CommMergeModel;
class RankOverviewModel;

class CommMergePanel : public QWidget
{
    Q_OBJECT
public:
    explicit CommMergePanel(RankOverviewModel* overview, QWidget* parent = nullptr);

    CommMergeModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QComboBox* metricBox() const { return m_metricBox; }
    QComboBox* stepBox() const { return m_stepBox; }
    void retranslate();

protected:
    void changeEvent(QEvent* event) override;

private:
    void refresh();

    RankOverviewModel* m_overview = nullptr;
    CommMergeModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QLabel* m_stepLabel = nullptr;
    QComboBox* m_stepBox = nullptr;
    QLabel* m_metricLabel = nullptr;
    QComboBox* m_metricBox = nullptr;
    QLabel* m_status = nullptr;
    QTableView* m_table = nullptr;
};

} // namespace probescope::ui
