// SPDX-License-Identifier: Apache-2.0
#include "ui/views/setupcheckpage.h"

#include "ui/jobs/jobsupport.h"
#include "ui/models/setupcheckmodels.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

namespace probescope::ui {

namespace {

enum Page : int { EmptyPage, PackPage, CheckpointPage };

std::filesystem::path toPath(const QString& s)
{
    return std::filesystem::path(s.toStdString());
}

QTableView* makeTable(QWidget* parent, const char* name)
{
    auto* view = new QTableView(parent);
    view->setObjectName(name);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideMiddle);
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    return view;
}

} // namespace

bool isSetupCheckPair(const QString& first, const QString& second)
{
    // Decided from the names and one listing of each folder: no pack is searched for here (two dump folders, the
    // common case, stay a dump compare at once).
    const auto isZip = [](const QString& p) { return p.endsWith(QLatin1String(".zip")) && QFileInfo(p).isFile(); };
    return (isZip(first) && isZip(second))
        || (setupcheck::isCheckpointFolder(toPath(first)) && setupcheck::isCheckpointFolder(toPath(second)));
}

SetupCheckPage::SetupCheckPage(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("setupCheckPage");
    setAcceptDrops(true);
    m_job = new SetupCheckJob(this);
    m_summary = new SetupSummaryModel(this);
    m_sheet = new SetupSheetModel(this);
    m_checkpoints = new CheckpointModel(this);

    auto* layout = new QVBoxLayout(this);
    m_intro = new QLabel(this);
    m_intro->setWordWrap(true);
    layout->addWidget(m_intro);

    auto* inputs = new QGridLayout;
    m_firstLabel = new QLabel(this);
    m_secondLabel = new QLabel(this);
    m_first = new QLineEdit(this);
    m_first->setObjectName("setupFirst");
    m_second = new QLineEdit(this);
    m_second->setObjectName("setupSecond");
    m_firstLabel->setBuddy(m_first);
    m_secondLabel->setBuddy(m_second);
    m_firstZip = new QPushButton(this);
    m_firstFolder = new QPushButton(this);
    m_secondZip = new QPushButton(this);
    m_secondFolder = new QPushButton(this);
    m_compare = new QPushButton(this);
    m_compare->setObjectName("setupCompare");
    inputs->addWidget(m_firstLabel, 0, 0);
    inputs->addWidget(m_first, 0, 1);
    inputs->addWidget(m_firstZip, 0, 2);
    inputs->addWidget(m_firstFolder, 0, 3);
    inputs->addWidget(m_secondLabel, 1, 0);
    inputs->addWidget(m_second, 1, 1);
    inputs->addWidget(m_secondZip, 1, 2);
    inputs->addWidget(m_secondFolder, 1, 3);
    inputs->addWidget(m_compare, 0, 4, 2, 1);
    inputs->setColumnStretch(1, 1);
    layout->addLayout(inputs);

    auto* progressRow = new QHBoxLayout;
    m_progress = new QProgressBar(this);
    m_progress->setObjectName("setupProgress");
    m_cancel = new QPushButton(this);
    m_cancel->setObjectName("setupCancel");
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancel);
    layout->addLayout(progressRow);
    m_progress->hide();
    m_cancel->hide();
    m_message = new QLabel(this);
    m_message->setObjectName("setupMessage");
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);

    m_stack = new QStackedWidget(this);
    m_stack->addWidget(new QWidget(m_stack));

    // Packs: the summary above, the chosen checker's rows below.
    auto* packPage = new QSplitter(Qt::Vertical, m_stack);
    auto* summaryBox = new QWidget(packPage);
    auto* summaryLayout = new QVBoxLayout(summaryBox);
    summaryLayout->setContentsMargins(0, 0, 0, 0);
    m_summaryTitle = new QLabel(summaryBox);
    m_summaryView = makeTable(summaryBox, "setupSummary");
    m_summaryView->setModel(m_summary);
    m_summaryView->setWordWrap(true);
    summaryLayout->addWidget(m_summaryTitle);
    summaryLayout->addWidget(m_summaryView);
    auto* detailBox = new QWidget(packPage);
    auto* detailLayout = new QVBoxLayout(detailBox);
    detailLayout->setContentsMargins(0, 0, 0, 0);
    m_detailTitle = new QLabel(detailBox);
    m_detailView = makeTable(detailBox, "setupDetails");
    m_detailProxy = new QSortFilterProxyModel(this);
    m_detailProxy->setSourceModel(m_sheet);
    m_detailProxy->setSortRole(SetupSortRole);
    m_detailView->setModel(m_detailProxy);
    m_detailView->setSortingEnabled(true);
    m_detailView->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    detailLayout->addWidget(m_detailTitle);
    detailLayout->addWidget(m_detailView);
    packPage->addWidget(summaryBox);
    packPage->addWidget(detailBox);
    packPage->setStretchFactor(0, 2);
    packPage->setStretchFactor(1, 3);
    m_stack->addWidget(packPage);

    // Checkpoints: one table, lowest cos first.
    auto* ckptPage = new QWidget(m_stack);
    auto* ckptLayout = new QVBoxLayout(ckptPage);
    ckptLayout->setContentsMargins(0, 0, 0, 0);
    m_checkpointTitle = new QLabel(ckptPage);
    m_checkpointTitle->setWordWrap(true);
    m_checkpointView = makeTable(ckptPage, "setupCheckpoints");
    m_checkpointProxy = new QSortFilterProxyModel(this);
    m_checkpointProxy->setSourceModel(m_checkpoints);
    m_checkpointProxy->setSortRole(SetupSortRole);
    m_checkpointView->setModel(m_checkpointProxy);
    m_checkpointView->setSortingEnabled(true);
    m_checkpointView->sortByColumn(CheckpointModel::CosColumn, Qt::AscendingOrder);
    ckptLayout->addWidget(m_checkpointTitle);
    ckptLayout->addWidget(m_checkpointView);
    m_stack->addWidget(ckptPage);
    layout->addWidget(m_stack, 1);

    connect(m_firstZip, &QPushButton::clicked, this, [this] { browse(m_first, false); });
    connect(m_firstFolder, &QPushButton::clicked, this, [this] { browse(m_first, true); });
    connect(m_secondZip, &QPushButton::clicked, this, [this] { browse(m_second, false); });
    connect(m_secondFolder, &QPushButton::clicked, this, [this] { browse(m_second, true); });
    connect(m_compare, &QPushButton::clicked, this, &SetupCheckPage::startFromFields);
    connect(m_first, &QLineEdit::returnPressed, this, &SetupCheckPage::startFromFields);
    connect(m_second, &QLineEdit::returnPressed, this, &SetupCheckPage::startFromFields);
    connect(m_cancel, &QPushButton::clicked, this, &SetupCheckPage::cancel);
    connect(m_job, &SetupCheckJob::progressChanged, this, [this](qint64 done, qint64 total) {
        m_progress->setRange(0, total > 0 ? 1000 : 0);
        if (total > 0)
            m_progress->setValue(static_cast<int>(1000 * done / total));
    });
    connect(m_job, &SetupCheckJob::finished, this, &SetupCheckPage::onFinished);
    connect(m_summaryView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { showDetails(current.row()); });
    connect(m_summaryView, &QTableView::activated, this, [this](const QModelIndex& index) { showDetails(index.row()); });
    retranslate();
    resize(1100, 700);
}

SetupCheckPage::~SetupCheckPage() = default;

void SetupCheckPage::retranslate()
{
    setWindowTitle(tr("Check setup — ProbeScope"));
    m_intro->setText(tr("Before comparing precision, check that the two runs are set up alike: open two config_check "
                        "packs (.zip), two checkpoints (folders with iter_* or mp_rank_*), or two runs' folders with "
                        "their pack beside the dumps."));
    m_firstLabel->setText(tr("&Bench:"));
    m_secondLabel->setText(tr("C&ompared:"));
    m_first->setPlaceholderText(tr("pack .zip, checkpoint folder or run folder"));
    m_second->setPlaceholderText(tr("pack .zip, checkpoint folder or run folder"));
    for (QPushButton* b : { m_firstZip, m_secondZip })
        b->setText(tr("Zip…"));
    for (QPushButton* b : { m_firstFolder, m_secondFolder })
        b->setText(tr("Folder…"));
    m_compare->setText(tr("&Check"));
    m_cancel->setText(tr("Cancel"));
    m_summaryTitle->setText(tr("Summary — the likely cause first; select a check to see its rows:"));
    m_detailTitle->setText(m_sheet->sheetName().isEmpty()
                               ? QString()
                               : tr("Rows of %1 — errors first, then warnings:").arg(m_sheet->sheetName()));
    if (const auto* c = m_checkpoints->comparison())
        m_checkpointTitle->setText(tr("%1 parameters in both, %2 only in the first, %3 only in the second. Sorted by "
                                      "cos, lowest first; click a column to sort by l2.")
                                       .arg(c->params.size())
                                       .arg(c->onlyInFirst.size())
                                       .arg(c->onlyInSecond.size()));
}

void SetupCheckPage::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void SetupCheckPage::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void SetupCheckPage::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile())
            paths << url.toLocalFile();
    }
    if (paths.size() >= 2) {
        open(paths[0], paths[1]);
    } else if (paths.size() == 1) {
        // One at a time: the first field, then the second (which starts the check).
        if (m_first->text().isEmpty() || !m_second->text().isEmpty()) {
            m_first->setText(paths[0]);
            m_second->clear();
        } else {
            open(m_first->text(), paths[0]);
        }
    }
    event->acceptProposedAction();
}

void SetupCheckPage::browse(QLineEdit* field, bool folder)
{
    const QString chosen = folder
        ? QFileDialog::getExistingDirectory(this, tr("Checkpoint or run folder"), field->text())
        : QFileDialog::getOpenFileName(this, tr("config_check pack"), field->text(), tr("config_check packs (*.zip)"));
    if (!chosen.isEmpty())
        field->setText(chosen);
}

void SetupCheckPage::startFromFields()
{
    if (m_first->text().isEmpty() || m_second->text().isEmpty()) {
        m_message->setText(tr("Give both inputs first."));
        return;
    }
    open(m_first->text(), m_second->text());
}

void SetupCheckPage::open(const QString& first, const QString& second)
{
    m_first->setText(first);
    m_second->setText(second);
    m_cancelled = false;
    m_message->setText(tr("Checking…"));
    m_progress->setRange(0, 0);
    m_progress->show();
    m_cancel->show();
    m_cancel->setEnabled(true);
    m_job->start(toPath(first), toPath(second));
}

void SetupCheckPage::cancel()
{
    if (!m_job->isRunning())
        return;
    m_cancelled = true;
    m_cancel->setEnabled(false);
    m_message->setText(tr("Cancelling…"));
    m_job->cancel();
}

bool SetupCheckPage::isRunning() const
{
    return m_job->isRunning();
}

std::shared_ptr<const SetupCheckOutcome> SetupCheckPage::outcome() const
{
    return m_job->outcome();
}

void SetupCheckPage::onFinished()
{
    m_progress->hide();
    m_cancel->hide();
    const auto outcome = m_job->outcome();
    if (!outcome || outcome->cancelled) {
        m_message->setText(tr("Cancelled; the previous result, if any, is still shown."));
        emit finished(false, tr("cancelled"));
        return;
    }
    if (outcome->error) {
        const QString error = formatDiagnostic(*outcome->error);
        m_message->setText(tr("Cannot check: %1").arg(error));
        emit finished(false, error);
        return;
    }
    const QString first = QString::fromStdString(outcome->first.string());
    const QString second = QString::fromStdString(outcome->second.string());
    if (outcome->kind == setupcheck::SetupInput::Kind::Pack) {
        m_sheets = std::make_shared<const std::vector<compare::XlsxSheet>>(outcome->sheets);
        m_summary->setSheets(m_sheets);
        m_checkpoints->setComparison(nullptr);
        m_summaryView->resizeColumnsToContents();
        m_stack->setCurrentIndex(PackPage);
        m_message->setText(tr("Packs: %1 ↔ %2").arg(first, second));
        if (m_summary->rowCount() > 0)
            m_summaryView->selectRow(0);
        else
            showDetails(-1);
    } else {
        m_summary->setSheets(nullptr);
        m_sheet->setSheet(nullptr, -1);
        m_checkpoints->setComparison(outcome->checkpoints);
        m_checkpointView->resizeColumnsToContents();
        m_stack->setCurrentIndex(CheckpointPage);
        m_message->setText(tr("Checkpoints: %1 ↔ %2").arg(first, second));
    }
    retranslate();
    emit finished(true, QString());
}

void SetupCheckPage::showDetails(int summaryRow)
{
    m_sheet->setSheet(m_sheets, m_summary->sheetOfRow(summaryRow));
    m_detailView->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    m_detailProxy->sort(-1);
    m_detailView->resizeColumnsToContents();
    retranslate();
}

QStringList SetupCheckPage::reportLines() const
{
    QStringList lines;
    const auto outcome = m_job->outcome();
    if (!outcome)
        return lines;
    if (outcome->kind == setupcheck::SetupInput::Kind::Pack) {
        for (int r = 0; r < m_summary->rowCount(); ++r) {
            const QString checker = m_summary->index(r, SetupSummaryModel::CheckColumn).data().toString();
            const int sheet = m_summary->sheetOfRow(r);
            const auto& summaryRows = outcome->sheets.front().rows;
            QString result;
            for (const auto& row : summaryRows) {
                if (row.size() >= 2 && QString::fromStdString(row[0].text) == checker)
                    result = QString::fromStdString(row[1].text);
            }
            lines << QStringLiteral("%1: %2 (%3 rows)")
                         .arg(checker, result)
                         .arg(sheet >= 0 ? outcome->sheets[static_cast<std::size_t>(sheet)].rows.size() : 0);
        }
    } else if (outcome->checkpoints) {
        const auto& c = *outcome->checkpoints;
        lines << QStringLiteral("checkpoints: %1 parameters in both, %2 only in the first, %3 only in the second")
                     .arg(c.params.size())
                     .arg(c.onlyInFirst.size())
                     .arg(c.onlyInSecond.size());
        if (m_checkpointProxy->rowCount() > 0) {
            const auto at = [this](int column) { return m_checkpointProxy->index(0, column).data().toString(); };
            // A parameter one side lacks has no cos or l2: its shape column says which side has it.
            lines << (at(CheckpointModel::CosColumn).isEmpty()
                          ? QStringLiteral("first row: %1 %2").arg(at(CheckpointModel::NameColumn),
                                                                    at(CheckpointModel::ShapeColumn))
                          : QStringLiteral("first row: %1 cos %2 l2 %3")
                                .arg(at(CheckpointModel::NameColumn), at(CheckpointModel::CosColumn),
                                     at(CheckpointModel::L2Column)));
        }
    }
    return lines;
}

} // namespace probescope::ui
