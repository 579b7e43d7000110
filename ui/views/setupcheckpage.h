// SPDX-License-Identifier: Apache-2.0
#pragma once
// The "Check setup" page (issue 35 item 5, docs/config-check.md "In the GUI"): before any precision compare, are the
// two runs set up alike? Two config_check packs give the summary (pass/warning/error per checker, the likely cause
// first) and each checker's rows; two checkpoints give the per-parameter table, sortable by cos and l2.

#include "ui/jobs/setupcheckjob.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;

namespace probescope::ui {

class CheckpointModel;
class SetupSheetModel;
class SetupSummaryModel;

/// True when two dropped or given paths are a setup check rather than two dumps: two `.zip` files, or two
/// checkpoint folders (a run's folder with its pack beside the dumps is a dump folder there: it is opened on the page
/// itself).
bool isSetupCheckPair(const QString& first, const QString& second);

class SetupCheckPage : public QWidget
{
    Q_OBJECT
public:
    explicit SetupCheckPage(QWidget* parent = nullptr);
    ~SetupCheckPage() override;

    /// Fills the two fields and starts the check (a check under way is cancelled).
    void open(const QString& first, const QString& second);
    void cancel();
    bool isRunning() const;
    std::shared_ptr<const SetupCheckOutcome> outcome() const;

    SetupSummaryModel* summaryModel() const { return m_summary; }
    SetupSheetModel* sheetModel() const { return m_sheet; }
    CheckpointModel* checkpointModel() const { return m_checkpoints; }
    QSortFilterProxyModel* checkpointProxy() const { return m_checkpointProxy; }
    QTableView* summaryView() const { return m_summaryView; }
    QTableView* detailView() const { return m_detailView; }
    QTableView* checkpointView() const { return m_checkpointView; }
    QPushButton* cancelButton() const { return m_cancel; }
    QProgressBar* progressBar() const { return m_progress; }
    /// Shows the rows of the summary's row `summaryRow` below it.
    void showDetails(int summaryRow);
    /// What a scripted run prints: one "checker: result" line per summary row (in the page's order), or the
    /// checkpoint counts and the parameter with the lowest cos.
    QStringList reportLines() const;

signals:
    /// The check ended: ok false with the error (or "cancelled").
    void finished(bool ok, const QString& error);

protected:
    void changeEvent(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void retranslate();
    void onFinished();
    void browse(QLineEdit* field, bool folder);
    void startFromFields();

    SetupCheckJob* m_job = nullptr;
    QLabel* m_intro = nullptr;
    QLabel* m_firstLabel = nullptr;
    QLabel* m_secondLabel = nullptr;
    QLineEdit* m_first = nullptr;
    QLineEdit* m_second = nullptr;
    QPushButton* m_firstZip = nullptr;
    QPushButton* m_firstFolder = nullptr;
    QPushButton* m_secondZip = nullptr;
    QPushButton* m_secondFolder = nullptr;
    QPushButton* m_compare = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_message = nullptr;
    QStackedWidget* m_stack = nullptr;
    QLabel* m_summaryTitle = nullptr;
    QTableView* m_summaryView = nullptr;
    QLabel* m_detailTitle = nullptr;
    QTableView* m_detailView = nullptr;
    QLabel* m_checkpointTitle = nullptr;
    QTableView* m_checkpointView = nullptr;
    SetupSummaryModel* m_summary = nullptr;
    SetupSheetModel* m_sheet = nullptr;
    CheckpointModel* m_checkpoints = nullptr;
    QSortFilterProxyModel* m_checkpointProxy = nullptr;
    QSortFilterProxyModel* m_detailProxy = nullptr;
    std::shared_ptr<const std::vector<compare::XlsxSheet>> m_sheets;
    bool m_cancelled = false;
};

} // namespace probescope::ui
