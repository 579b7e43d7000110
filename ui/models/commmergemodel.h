// SPDX-License-Identifier: Apache-2.0
#pragma once
// The whole-job view's merge_result table (issue 35 item 4): communication ops × ranks for one step and one metric,
// made from the rank overview's pair summaries (each carries its pair's communication rows, session::PairSummary::
// comm) with compare::msprobe26::mergeCommRows: the same table `probescope-cli merge_result` writes, without a file.

#include "core/compare/output/xlsxwriter.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <QTimer>

#include <cstdint>
#include <memory>
#include <vector>

namespace probescope::ui {

class RankOverviewModel;

class CommMergeModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role : int { SortRole = Qt::UserRole + 1 };

    /// Follows `source`: rebuilt (at most every kRebuildMs) as its summaries arrive.
    explicit CommMergeModel(RankOverviewModel* source, QObject* parent = nullptr);
    static constexpr int kRebuildMs = 200;

    /// The step shown (one of source->steps()); the first step until set.
    void setStep(std::int64_t step);
    std::int64_t step() const { return m_step; }
    /// The metric shown: an index into metrics().
    void setMetric(int index);
    int metric() const { return m_metric; }
    /// merge_result's indexes the step's tables have (Max diff ... for statistics, Cosine ... for tensors).
    QStringList metrics() const;
    /// msprobe's notes for the step ("all_gather not found in rank2 compare result.").
    const std::vector<std::string>& notes() const { return m_notes; }
    /// The merged sheets of the step (one per metric), as mergeCommRows made them.
    const std::vector<compare::XlsxSheet>& sheets() const { return m_sheets; }
    /// Pairs of the step summarised so far / in all.
    int ranksDone() const { return m_ranksDone; }
    int ranksTotal() const { return m_ranksTotal; }
    /// Rebuilds now (tests; the timer does it otherwise).
    void rebuild();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    /// The metrics, the notes or the rank counts changed (after a rebuild).
    void rebuilt();

private:
    RankOverviewModel* m_source = nullptr;
    QTimer m_timer;
    std::int64_t m_step = 0;
    bool m_stepSet = false;
    int m_metric = 0;
    std::vector<compare::XlsxSheet> m_sheets;
    std::vector<std::string> m_notes;
    int m_ranksDone = 0;
    int m_ranksTotal = 0;
};

} // namespace probescope::ui
