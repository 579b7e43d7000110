// SPDX-License-Identifier: Apache-2.0
#include "ui/panels/exportdialog.h"

#include "ui/panels/taskprogressview.h"
#include "core/graph/graphwriter.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace probescope::ui {

namespace fs = std::filesystem;

namespace {

QString pathText(const fs::path& p)
{
    return QString::fromStdString(p.string());
}

fs::path toPath(const QString& s)
{
    return fs::path(s.toStdString());
}

} // namespace

ExportRequest exportRequestFor(const session::PairAnalysis& analysis, const Settings& settings, const fs::path& outDir)
{
    ExportRequest r;
    r.outDir = outDir;
    r.options.profile = settings.exportProfile;
    r.options.xlsx = settings.exportXlsx;
    r.options.fuzzy = settings.fuzzy;
    r.options.threads = settings.threads;
    // The manual matches the shown verdicts were computed with: the files say what the window shows.
    r.options.manualMatches = analysis.manualMatches;
    if (analysis.skeleton) {
        const session::RankPair& pair = analysis.skeleton->pair;
        r.input.npuPath = pair.npu.dumpFile;
        r.input.benchPath = pair.bench.dumpFile;
        r.npuRankDir = pair.npu.dir;
        r.benchRankDir = pair.bench.dir;
        // msprobe 1.2 writes NPU_Stack_Info only with -s and a stack_path; follow what the analysis shows.
        const fs::path stack = pair.npu.dumpFile.parent_path() / "stack.json";
        std::error_code ec;
        if (fs::is_regular_file(stack, ec)) {
            r.input.stackPath = stack;
            r.options.stackFlag = analysis.table && analysis.table->stackMode;
        }
    }
    return r;
}

ExportOutcome runExport(const ExportRequest& request, ProgressSink* progress)
{
    ExportOutcome out;
    if (request.format != ExportFormat::Csv) {
        // The same writer and options as `probescope-cli graph -tp NPU -gp BENCH -o OUT [-fm] [--format]`, on the
        // pair's rank folders (msprobe reads a rank folder as step 0, rank 0, and so does the writer). The writer
        // takes no progress sink: Cancel is seen before it starts only.
        graph::GraphWriteOptions options;
        options.format = request.format == ExportFormat::VisDb83 ? graph::WriteFormat::V83 : graph::WriteFormat::V26;
        options.fuzzy = request.options.fuzzy;
        options.threads = request.options.threads;
        // The window's manual matches, as `graph --match-file` takes them: the db shows what the window shows.
        options.matches = request.options.manualMatches ? &*request.options.manualMatches : nullptr;
        if (progress && progress->isCancelled()) {
            out.cancelled = true;
            return out;
        }
        // The writer compares through the compare pipeline: a pair the compare refuses is refused here too.
        Diagnostics findings;
        options.findings = &findings;
        auto written = graph::writeGraphDb(request.npuRankDir, request.benchRankDir, request.outDir, options);
        if (!written) {
            out.error = QString::fromStdString(written.error().format());
            return out;
        }
        for (const Diagnostic& d : findings)
            out.notes << QString::fromStdString(d.format());
        out.files << pathText(written->written);
        for (const std::string& note : written->notes)
            out.notes << QString::fromStdString(note);
        out.ok = true;
        return out;
    }
    auto results = compare::runCompareJob(request.input, request.outDir, request.options, progress);
    if (!results) {
        out.cancelled = results.error().id == "compare.cancelled";
        out.error = QString::fromStdString(results.error().format());
        return out;
    }
    for (const compare::PairResult& r : *results) {
        for (const fs::path* p : { &r.csvFile, &r.xlsxFile, &r.advisorFile }) {
            if (!p->empty())
                out.files << pathText(*p);
        }
        // A dump with errors is not exported unless request.options.salvage says so (issue 20).
        if (r.refused && out.error.isEmpty() && !r.inputDiagnostics.empty())
            out.error = QString::fromStdString(r.inputDiagnostics.front().format());
    }
    out.ok = out.error.isEmpty();
    return out;
}

ExportJob::ExportJob(QObject* parent)
    : QObject(parent)
{
    connect(&m_task, &BackgroundTask::progressChanged, this, &ExportJob::progressChanged);
    connect(&m_task, &BackgroundTask::finished, this, [this] {
        m_outcome = m_running ? *m_running : ExportOutcome {};
        m_running.reset();
        emit finished();
    });
}

bool ExportJob::start(const ExportRequest& request)
{
    if (m_task.isRunning())
        return false;
    auto outcome = std::make_shared<ExportOutcome>();
    m_running = outcome;
    // The worker owns copies of the request and of the outcome's shared state; nothing of the dialog.
    return m_task.start([request, outcome](ProgressSink& progress) { *outcome = runExport(request, &progress); });
}

ExportDialog::ExportDialog(std::shared_ptr<const session::PairAnalysis> analysis, const Settings& settings,
                           QWidget* parent)
    : QDialog(parent)
    , m_analysis(std::move(analysis))
    , m_settings(settings)
{
    setWindowTitle(tr("Export comparison CSV"));
    setMinimumWidth(620); // room for a full output path
    auto* outer = new QVBoxLayout(this);
    const bool havePair = m_analysis && m_analysis->skeleton;
    auto* pairLabel = new QLabel(
        havePair ? tr("Writes msprobe's compare_result file for %1 (never replacing an existing file).")
                       .arg(QString::fromStdString(m_analysis->skeleton->pair.label()))
                 : tr("No compared pair is open."),
        this);
    pairLabel->setWordWrap(true);
    outer->addWidget(pairLabel);

    auto* form = new QFormLayout;
    auto* folderRow = new QHBoxLayout;
    // The last folder exported to, else <Documents>/ProbeScope/compare: Export works without typing a path.
    m_folder = new QLineEdit(outputFolderOr(m_settings.exportFolder, QStringLiteral("compare")), this);
    m_browse = new QPushButton(tr("Browse…"), this);
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(m_browse);
    form->addRow(tr("Output folder:"), folderRow);
    m_format = new QComboBox(this);
    m_format->setObjectName("exportFormat");
    m_format->addItem(tr("compare_result CSV (msprobe compare)"), static_cast<int>(ExportFormat::Csv));
    m_format->addItem(tr("Graph .vis.db, msprobe 26 (graph_visualize)"), static_cast<int>(ExportFormat::VisDb26));
    m_format->addItem(tr("Graph .vis.db, msprobe 8.3 (graph)"), static_cast<int>(ExportFormat::VisDb83));
    m_format->setToolTip(tr("A .vis.db opens in tb_graph_ascend and in ProbeScope (File → Open graph file)."));
    form->addRow(tr("Format:"), m_format);
    m_profile = new QComboBox(this);
    m_profile->addItem(tr("msprobe 1.2 (default)"), static_cast<int>(compare::Profile::Msprobe12));
    m_profile->addItem(tr("msprobe 26"), static_cast<int>(compare::Profile::Msprobe26));
    form->addRow(tr("Profile:"), m_profile);
    m_xlsx = new QCheckBox(tr("Also write the XLSX workbook"), this);
    form->addRow(m_xlsx);
    m_stack = new QCheckBox(tr("NPU stack column (-s)"), this);
    form->addRow(m_stack);
    m_fuzzy = new QCheckBox(tr("Fuzzy matching (-f)"), this);
    form->addRow(m_fuzzy);
    outer->addLayout(form);

    m_progress = new TaskProgressView(m_job.task(), tr("%v of %m tensor pairs"), this);
    m_progress->setPlaceholderText(tr("The written files are listed here."));
    outer->addWidget(m_progress);

    auto* buttons = new QDialogButtonBox(this);
    m_export = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    m_cancel = buttons->addButton(tr("Cancel export"), QDialogButtonBox::ActionRole);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    m_export->setDefault(true);
    outer->addWidget(buttons);

    // Defaults from the settings and the analysis; the dialog only changes this one run.
    const ExportRequest defaults = havePair ? exportRequestFor(*m_analysis, m_settings, {}) : ExportRequest {};
    setProfile(m_settings.exportProfile);
    m_xlsx->setChecked(m_settings.exportXlsx);
    m_fuzzy->setChecked(m_settings.fuzzy);
    m_stack->setChecked(defaults.options.stackFlag);
    if (!defaults.input.stackPath)
        m_stack->setToolTip(tr("The NPU dump has no stack.json"));

    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Export into folder"), outputFolder());
        if (!dir.isEmpty())
            setOutputFolder(dir);
    });
    connect(m_export, &QPushButton::clicked, this, &ExportDialog::startExport);
    connect(m_cancel, &QPushButton::clicked, this, &ExportDialog::cancelExport);
    connect(m_close, &QPushButton::clicked, this, &ExportDialog::reject);
    connect(m_folder, &QLineEdit::textChanged, this, &ExportDialog::updateState);
    connect(m_profile, &QComboBox::currentIndexChanged, this, &ExportDialog::updateState);
    connect(m_format, &QComboBox::currentIndexChanged, this, &ExportDialog::updateState);
    connect(&m_job, &ExportJob::finished, this, &ExportDialog::onFinished);
    updateState();
}

ExportDialog::~ExportDialog()
{
    m_job.cancel();
    m_job.waitForFinished();
}

QString ExportDialog::outputFolder() const
{
    return m_folder->text().trimmed();
}

void ExportDialog::setOutputFolder(const QString& folder)
{
    m_folder->setText(folder);
}

compare::Profile ExportDialog::profile() const
{
    return static_cast<compare::Profile>(m_profile->currentData().toInt());
}

void ExportDialog::setProfile(compare::Profile profile)
{
    m_profile->setCurrentIndex(std::max(0, m_profile->findData(static_cast<int>(profile))));
}

ExportFormat ExportDialog::format() const
{
    return static_cast<ExportFormat>(m_format->currentData().toInt());
}

void ExportDialog::setFormat(ExportFormat format)
{
    m_format->setCurrentIndex(std::max(0, m_format->findData(static_cast<int>(format))));
}

bool ExportDialog::xlsx() const
{
    return m_xlsx->isChecked();
}

void ExportDialog::setXlsx(bool on)
{
    m_xlsx->setChecked(on);
}

ExportRequest ExportDialog::request() const
{
    Settings s = m_settings;
    s.exportProfile = profile();
    s.exportXlsx = xlsx();
    s.fuzzy = m_fuzzy->isChecked();
    ExportRequest r = exportRequestFor(*m_analysis, s, toPath(outputFolder()));
    r.options.stackFlag = r.input.stackPath.has_value() && m_stack->isChecked();
    r.format = format();
    return r;
}

QString ExportDialog::resultText() const
{
    return m_progress->text();
}

void ExportDialog::startExport()
{
    if (!m_analysis || !m_analysis->skeleton || outputFolder().isEmpty() || m_job.isRunning())
        return;
    m_progress->begin();
    m_job.start(request());
    updateState();
}

void ExportDialog::cancelExport()
{
    if (m_progress->requestCancel())
        m_cancel->setEnabled(false);
}

void ExportDialog::reject()
{
    // Closing while a run is under way cancels it; the compare stops at its next tensor pair.
    m_progress->cancelAndWait();
    QDialog::reject();
}

void ExportDialog::onFinished()
{
    const ExportOutcome& o = m_job.outcome();
    if (o.ok && o.files.isEmpty())
        m_progress->setText(tr("Nothing was written: no row matched (msprobe writes no file then)."));
    else if (o.ok)
        m_progress->setTextWithFiles(QStringList { tr("Written:") } + o.files + o.notes, o.files);
    else if (o.cancelled)
        m_progress->setText(tr("Cancelled; no file was written."));
    else
        m_progress->setText(tr("Export failed: %1").arg(o.error));
    updateState();
    emit exportFinished(o.ok ? o.files : QStringList());
}

void ExportDialog::updateState()
{
    const bool running = m_job.isRunning();
    m_export->setEnabled(!running && m_analysis && m_analysis->skeleton && !outputFolder().isEmpty());
    m_cancel->setVisible(running);
    m_cancel->setEnabled(running);
    m_folder->setEnabled(!running);
    m_browse->setEnabled(!running);
    // The graph formats have their own columns and verdicts (msprobe's graph compare): profile, XLSX and the
    // stack column are the CSV's options.
    const bool csv = format() == ExportFormat::Csv;
    m_format->setEnabled(!running);
    m_profile->setEnabled(!running && csv);
    m_xlsx->setEnabled(!running && csv);
    m_fuzzy->setEnabled(!running);
    // msprobe 26 adds the stack column whenever stack.json is there; -s only exists in 1.2.
    const bool stackAvailable = m_analysis && m_analysis->skeleton && exportRequestFor(*m_analysis, m_settings, {}).input.stackPath;
    m_stack->setEnabled(!running && csv && stackAvailable && profile() == compare::Profile::Msprobe12);
}

} // namespace probescope::ui
