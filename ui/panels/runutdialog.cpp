// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/runutdialog.h"

#include "ui/panels/settings.h"

#include "ui/models/runutresultmodel.h"
#include "ui/panels/taskprogressview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

namespace probescope::ui {

namespace {

QHBoxLayout* withBrowse(QLineEdit* edit, QPushButton* browse)
{
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(browse);
    return row;
}

} // namespace

RunUtDialog::RunUtDialog(QWidget* parent)
    : RunUtDialog(runUtBackend(), parent)
{
}

RunUtDialog::RunUtDialog(std::unique_ptr<RunUtBackend> backend, QWidget* parent)
    : QDialog(parent)
    , m_backend(backend ? std::move(backend) : runUtBackend())
{
    setWindowTitle(tr("Run run_ut"));
    setMinimumWidth(760); // room for full dump.json and output paths, and the result columns
    auto* outer = new QVBoxLayout(this);

    m_banner = new QLabel(this);
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setFrameShape(QFrame::StyledPanel);
    m_banner->setMargin(6);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #FFF4D6; color: #4A3600; border: 1px solid #E0B84A; }"));
    outer->addWidget(m_banner);

    auto* intro = new QLabel(tr("Replays every API of a dump.json on the device and in higher precision on the CPU, "
                                "and writes msprobe's accuracy_checking_result and accuracy_checking_details CSVs."),
                             this);
    intro->setWordWrap(true);
    outer->addWidget(intro);

    auto* form = new QFormLayout;
    m_dumpJson = new QLineEdit(this);
    m_dumpJson->setPlaceholderText(tr("…/step0/rank0/dump.json"));
    m_browseDump = new QPushButton(tr("Browse…"), this);
    form->addRow(tr("dump.json (-api_info):"), withBrowse(m_dumpJson, m_browseDump));
    m_device = new QComboBox(this);
    m_device->addItems(m_backend->devices());
    form->addRow(tr("Device (-d):"), m_device);
    m_filter = new QCheckBox(tr("Replay one call of each group of similar calls (-f, --filter_api)"), this);
    form->addRow(m_filter);
    m_white = new QLineEdit(this);
    m_white->setPlaceholderText(tr("all APIs (e.g. conv2d, linalg.inv)"));
    m_white->setToolTip(tr("Only these APIs are replayed; names separated by commas or spaces"));
    form->addRow(tr("White list:"), m_white);
    m_black = new QLineEdit(this);
    m_black->setPlaceholderText(tr("none"));
    m_black->setToolTip(tr("These APIs are skipped; the black list wins over the white list"));
    form->addRow(tr("Black list:"), m_black);
    // <Documents>/ProbeScope/run_ut until the caller gives the last folder used: Run needs no typing.
    m_output = new QLineEdit(defaultOutputFolder(QStringLiteral("run_ut")), this);
    m_browseOutput = new QPushButton(tr("Browse…"), this);
    form->addRow(tr("Output folder (-o):"), withBrowse(m_output, m_browseOutput));
    m_profile = new QComboBox(this);
    m_profile->addItem(tr("msprobe 1.2: per-API precision standards (default)"), QStringLiteral("msprobe-1.2"));
    m_profile->addItem(tr("msprobe 26: benchmark standard for every float"), QStringLiteral("msprobe-26"));
    form->addRow(tr("Profile:"), m_profile);
    outer->addLayout(form);

    m_progress = new TaskProgressView(m_task, tr("%v of %m APIs"), this);
    m_progress->setPlaceholderText(tr("The result files are listed here."));
    outer->addWidget(m_progress);

    // Live results: one row per judged API, filtered by verdict.
    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(new QLabel(tr("Show:"), this));
    for (const QString& status : { QStringLiteral("error"), QStringLiteral("warning"), QStringLiteral("pass"),
                                   QStringLiteral("SKIP") }) {
        auto* toggle = new QCheckBox(RunUtResultModel::verdictWord(status), this);
        toggle->setChecked(true);
        toggle->setProperty("status", status);
        connect(toggle, &QCheckBox::toggled, this, &RunUtDialog::applyStatusToggles);
        filterRow->addWidget(toggle);
        m_statusToggles << toggle;
    }
    filterRow->addStretch(1);
    m_export = new QPushButton(tr("Export CSVs…"), this);
    m_export->setToolTip(tr("Copy the written result and details CSVs to a folder (existing files are kept)"));
    filterRow->addWidget(m_export);
    outer->addLayout(filterRow);
    m_results = new RunUtResultModel(this);
    m_filterProxy = new RunUtStatusFilter(this);
    m_filterProxy->setSourceModel(m_results);
    m_resultView = new QTableView(this);
    m_resultView->setObjectName("runUtResults");
    m_resultView->setModel(m_filterProxy);
    m_resultView->setSortingEnabled(true);
    m_resultView->sortByColumn(RunUtResultModel::IndexColumn, Qt::AscendingOrder);
    m_resultView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_resultView->verticalHeader()->hide();
    m_resultView->verticalHeader()->setDefaultSectionSize(m_resultView->fontMetrics().height() + 6);
    m_resultView->horizontalHeader()->setStretchLastSection(true);
    m_resultView->setColumnWidth(RunUtResultModel::IndexColumn, 40);
    m_resultView->setColumnWidth(RunUtResultModel::ApiColumn, 200);
    m_resultView->resizeColumnToContents(RunUtResultModel::ForwardColumn); // msprobe's long headers stay readable
    m_resultView->resizeColumnToContents(RunUtResultModel::BackwardColumn);
    m_resultView->resizeColumnToContents(RunUtResultModel::DumpedColumn);
    m_resultView->resizeColumnToContents(RunUtResultModel::VerdictColumn);
    m_resultView->setMinimumHeight(180);
    outer->addWidget(m_resultView, 1);

    // Why Run is disabled, in words beside it (a tooltip alone is found by few).
    m_blocked = new QLabel(this);
    m_blocked->setWordWrap(true);
    m_blocked->setAccessibleName(tr("Why Run is disabled"));
    outer->addWidget(m_blocked);
    auto* buttons = new QDialogButtonBox(this);
    m_run = buttons->addButton(tr("Run"), QDialogButtonBox::AcceptRole);
    m_cancel = buttons->addButton(tr("Cancel run"), QDialogButtonBox::ActionRole);
    auto* close = buttons->addButton(QDialogButtonBox::Close);
    outer->addWidget(buttons);

    if (!m_backend->isAvailable()) {
        m_banner->setText(m_backend->unavailableReason());
        m_banner->setAccessibleName(tr("run_ut availability"));
    } else {
        m_banner->hide();
    }

    connect(m_browseDump, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("dump.json to replay"), m_dumpJson->text(),
                                                       tr("msprobe dump (dump.json);;JSON files (*.json)"));
        if (!f.isEmpty())
            m_dumpJson->setText(f);
    });
    connect(m_browseOutput, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("run_ut output folder"), m_output->text());
        if (!d.isEmpty())
            m_output->setText(d);
    });
    for (QLineEdit* e : { m_dumpJson, m_white, m_black, m_output })
        connect(e, &QLineEdit::textChanged, this, &RunUtDialog::updateState);
    connect(m_run, &QPushButton::clicked, this, &RunUtDialog::startRun);
    connect(m_cancel, &QPushButton::clicked, this, &RunUtDialog::cancelRun);
    connect(close, &QPushButton::clicked, this, &RunUtDialog::reject);
    connect(&m_task, &BackgroundTask::finished, this, &RunUtDialog::onFinished);
    connect(&m_task, &BackgroundTask::progressChanged, this, &RunUtDialog::drainLiveRows);
    connect(m_export, &QPushButton::clicked, this, &RunUtDialog::exportFiles);
    connect(m_resultView, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        emit apiActivated(index.data(RunUtResultModel::FullNameRole).toString());
    });
    updateState();
}

RunUtDialog::~RunUtDialog()
{
    // m_task's destructor cancels and waits; the backend must outlive the work, so stop it first.
    m_task.cancel();
    m_task.waitForFinished();
}

RunUtRequest RunUtDialog::request() const
{
    RunUtRequest r;
    r.dumpJson = m_dumpJson->text().trimmed();
    r.device = m_device->currentText();
    r.filterApi = m_filter->isChecked();
    r.whiteList = splitApiList(m_white->text());
    r.blackList = splitApiList(m_black->text());
    r.outputDir = m_output->text().trimmed();
    r.profile = m_profile->currentData().toString();
    return r;
}

void RunUtDialog::setRequest(const RunUtRequest& r)
{
    m_dumpJson->setText(r.dumpJson);
    const int device = m_device->findText(r.device);
    if (device >= 0)
        m_device->setCurrentIndex(device);
    m_filter->setChecked(r.filterApi);
    m_white->setText(r.whiteList.join(QStringLiteral(", ")));
    m_black->setText(r.blackList.join(QStringLiteral(", ")));
    m_output->setText(r.outputDir);
    const int profile = m_profile->findData(r.profile);
    if (profile >= 0)
        m_profile->setCurrentIndex(profile);
    updateState();
}

QString RunUtDialog::availabilityText() const
{
    return m_backend->isAvailable() ? QString() : m_backend->unavailableReason();
}

QString RunUtDialog::runBlockedReason() const
{
    if (!m_backend->isAvailable())
        return m_backend->unavailableReason();
    if (m_task.isRunning())
        return tr("run_ut is running.");
    return validateRunUtRequest(request());
}

bool RunUtDialog::canRun() const
{
    return runBlockedReason().isEmpty();
}

QString RunUtDialog::resultText() const
{
    return m_progress->text();
}

void RunUtDialog::startRun()
{
    if (!canRun())
        return;
    auto result = std::make_shared<RunUtResult>();
    m_running = result;
    auto live = std::make_shared<LiveRows>();
    m_live = live;
    m_results->clear();
    RunUtBackend* backend = m_backend.get();
    const RunUtRequest req = request();
    QDir().mkpath(req.outputDir); // the default folder may not exist yet; run_ut reports a folder it cannot use
    m_runningDump = req.dumpJson;
    m_elapsed.start();
    m_progress->begin();
    // The backend lives as long as the dialog, and the dialog waits for the work before it goes. Judged
    // APIs are queued here and taken by the GUI at each progress poll, not signalled one by one.
    m_task.start([backend, req, result, live](ProgressSink& progress) {
        *result = backend->runLive(req, progress, [live](const RunUtApiRow& row) {
            const std::lock_guard<std::mutex> lock(live->mutex);
            live->rows.append(row);
        });
    });
    updateState();
}

void RunUtDialog::cancelRun()
{
    if (m_progress->requestCancel())
        m_cancel->setEnabled(false);
}

void RunUtDialog::reject()
{
    m_progress->cancelAndWait();
    QDialog::reject();
}

void RunUtDialog::drainLiveRows()
{
    if (!m_live)
        return;
    QList<RunUtApiRow> rows;
    {
        const std::lock_guard<std::mutex> lock(m_live->mutex);
        rows.swap(m_live->rows);
    }
    if (rows.isEmpty())
        return;
    m_results->append(rows);
    emit verdictsChanged(m_runningDump, m_results->verdicts());
}

void RunUtDialog::applyStatusToggles()
{
    QSet<QString> accepted;
    for (QCheckBox* toggle : m_statusToggles) {
        if (toggle->isChecked())
            accepted.insert(toggle->property("status").toString());
    }
    m_filterProxy->setAcceptedStatuses(accepted);
}

QStringList RunUtDialog::writtenFiles() const
{
    QStringList files;
    for (const QString& f : { m_result.resultCsv, m_result.detailsCsv, m_result.dumpedResultCsv, m_result.dumpedDetailsCsv }) {
        if (!f.isEmpty())
            files << f;
    }
    return files;
}

QStringList RunUtDialog::exportTo(const QString& folder, QString* error)
{
    return exportRunUtFiles(writtenFiles(), folder, error);
}

void RunUtDialog::exportFiles()
{
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export run_ut CSVs to"), m_output->text());
    if (folder.isEmpty())
        return;
    QString error;
    const QStringList written = exportTo(folder, &error);
    QStringList lines = m_progress->text().split(QLatin1Char('\n'));
    if (!error.isEmpty())
        lines << tr("Export failed: %1").arg(error);
    for (const QString& f : written)
        lines << tr("Exported: %1").arg(f);
    m_progress->setTextWithFiles(lines, writtenFiles() + written);
}

void RunUtDialog::onFinished()
{
    drainLiveRows();
    m_live.reset();
    m_result = m_running ? *m_running : RunUtResult {};
    m_running.reset();
    if (m_result.ok) {
        QStringList lines { tr("Finished.") };
        // The counts are those of the table's Verdict column (the worse of the replay and the dumped outputs),
        // so the line never says "0 error" above error rows; the time is the wall time the user waited.
        // Three counts, each labelled: the Verdict column (the worse of the two judgements), the replay alone
        // (Forward/Backward, msprobe's accuracy_checking_result) and the dumped outputs alone. Unlabelled, the
        // first two seemed to contradict each other ("39 pass … 4 error" above "43 pass … 0 error", issue 28).
        struct Counts
        {
            int pass = 0, warning = 0, error = 0, skip = 0, none = 0;
            void add(const QString& status)
            {
                const QString s = status.trimmed().toLower();
                pass += s == QLatin1String("pass");
                warning += s == QLatin1String("warning");
                error += s == QLatin1String("error");
                skip += s == QLatin1String("skip");
                none += s.isEmpty();
            }
        };
        Counts verdict, replay, dumped;
        for (const RunUtApiRow& row : m_results->rows()) {
            verdict.add(RunUtResultModel::verdictOf(row));
            replay.add(row.overall);
            dumped.add(row.dumpedOverall);
        }
        lines << tr("Verdict (the worse of the two lines below): %1 APIs: %2 pass, %3 warning, %4 error, %5 SKIP in %6 s")
                     .arg(m_results->rowCount())
                     .arg(verdict.pass)
                     .arg(verdict.warning)
                     .arg(verdict.error)
                     .arg(verdict.skip)
                     .arg(static_cast<double>(m_elapsed.elapsed()) / 1000.0, 0, 'f', 1);
        lines << tr("Replay on the device against the CPU (Forward/Backward): %1 pass, %2 warning, %3 error, %4 SKIP")
                     .arg(replay.pass)
                     .arg(replay.warning)
                     .arg(replay.error)
                     .arg(replay.skip);
        if (dumped.none < m_results->rowCount())
            lines << tr("Dumped outputs against the CPU: %1 pass, %2 warning, %3 error, %4 not judged")
                         .arg(dumped.pass)
                         .arg(dumped.warning)
                         .arg(dumped.error)
                         .arg(dumped.skip + dumped.none);
        // The backend's own first line repeats the replay's counts; its other lines (first failing API) stay.
        QStringList backendLines = m_result.summary.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        if (!backendLines.isEmpty())
            backendLines.removeFirst();
        lines << backendLines;
        if (!m_result.resultCsv.isEmpty())
            lines << tr("Result: %1").arg(m_result.resultCsv);
        if (!m_result.detailsCsv.isEmpty())
            lines << tr("Details: %1").arg(m_result.detailsCsv);
        if (!m_result.dumpedResultCsv.isEmpty())
            lines << tr("Dumped outputs: %1").arg(m_result.dumpedResultCsv);
        m_progress->setTextWithFiles(lines, writtenFiles());
    } else if (m_result.cancelled || m_task.isCancelRequested()) {
        m_progress->setText(tr("Cancelled."));
    } else {
        m_progress->setText(tr("run_ut failed: %1").arg(m_result.error));
    }
    updateState();
    emit runFinished(m_result.ok, m_result.resultCsv);
}

void RunUtDialog::updateState()
{
    const bool running = m_task.isRunning();
    const QString blocked = runBlockedReason();
    m_run->setEnabled(blocked.isEmpty());
    m_run->setToolTip(blocked);
    // The banner already says when run_ut is missing; "running" is what the progress bar shows.
    m_blocked->setText(m_backend->isAvailable() && !running ? blocked : QString());
    m_blocked->setVisible(!m_blocked->text().isEmpty());
    m_cancel->setVisible(running);
    m_cancel->setEnabled(running);
    for (QWidget* w : std::initializer_list<QWidget*> { m_dumpJson, m_browseDump, m_device, m_filter, m_white, m_black,
                                                        m_output, m_browseOutput, m_profile })
        w->setEnabled(!running);
    m_export->setEnabled(!running && !writtenFiles().isEmpty());
}

} // namespace probescope::ui
