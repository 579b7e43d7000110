// SPDX-License-Identifier: Apache-2.0
// The main window's tool results on the shown NPU side (issue 38 split of mainwindow.cpp): msprobe's free benchmark
// (its own tab, badges on the tree, a folder of its results alone) and run_ut (Tools -> Run run_ut..., its verdicts
// as badges), and File -> Export.
#include "ui/views/mainwindow.h"

#include "core/freebench/freebenchcsv.h"
#include "ui/inspect/freebenchpanel.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/nodebadges.h"
#include "ui/panels/exportdialog.h"
#include "ui/panels/runutdialog.h"

#include <QFileInfo>
#include <QMessageBox>
#include <QStackedWidget>
#include <QTabWidget>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }

} // namespace

// ----- free benchmark --------------------------------------------------------------------------

bool MainWindow::isFreeBenchmarkShown() const { return m_tabs->indexOf(m_freeBench) >= 0; }

bool MainWindow::openFreeBenchmarkOnly(const QString& folder)
{
    const QFileInfo info(folder);
    if (info.isFile() && info.fileName() != QLatin1String("dump.json")
        && info.fileName() != QLatin1String("free_benchmark.csv"))
        return false; // compare.json and the like
    // Only folder names are listed here (no file is read), so it is cheap enough for the GUI thread.
    if (probescope::freebench::findFreeBenchmarkCsvs(folder.toStdString()).empty())
        return false;
    closeShownInput();
    m_npuInput = folder;
    m_leftStack->setCurrentWidget(m_leftStack->widget(1));
    setBusy(false);
    loadFreeBenchmark({ folder });
    retranslate();
    say([=, this] { return tr("Free benchmark results of %1. Open a bench dump too to compare, and to see the flagged "
                          "APIs in the tree.")
                           .arg(folder); });
    return true;
}

void MainWindow::loadFreeBenchmark(const QStringList& inputs)
{
    m_freeBench->load(inputs);
}

void MainWindow::onFreeBenchmarkLoaded(int files, int rows)
{
    Q_UNUSED(rows);
    const int tab = m_tabs->indexOf(m_freeBench);
    if (files > 0 && tab < 0)
        m_tabs->addTab(m_freeBench, tr("Free benchmark"));
    else if (files == 0 && tab >= 0)
        m_tabs->removeTab(tab);
    if ((files > 0) != (tab >= 0))
        retranslate(); // the Alt+N actions follow the tabs
    if (files > 0 && !m_plan)
        m_tabs->setCurrentWidget(m_freeBench);
    updateFreeBenchmarkBadges();
    // A free-benchmark-only folder has no compare: what was opened is ready now (the scripted mode waits on this).
    if (!m_plan && m_pairIndex < 0 && files > 0)
        emit analysisFinished(true, QString());
}

void MainWindow::updateFreeBenchmarkBadges()
{
    const auto table = m_freeBench->table();
    if (!m_plan || m_pairIndex < 0 || !m_model->tree() || !table) {
        m_badges->clear(NodeBadgeDelegate::FreeBenchmark);
        return;
    }
    // Rows of the shown step and NPU rank; a dump without step folders or with a bare "rank" folder matches
    // any step or rank (msprobe writes rank 0 when not distributed).
    const session::RankPair& pair = m_plan->pairs[static_cast<std::size_t>(m_pairIndex)];
    m_badges->setBadges(NodeBadgeDelegate::FreeBenchmark,
                        freeBenchBadges(*m_model->tree(), *table, pair.step, pair.npu.rank.value_or(-1)));
}

void MainWindow::onFreeBenchmarkApi(const QString& apiName, qint64 step, qint64 rank)
{
    if (!m_plan) {
        say([=, this] { return tr("Open a bench dump too to see %1 in the tree.").arg(apiName); });
        return;
    }
    int target = -1;
    for (std::size_t i = 0; i < m_plan->pairs.size() && target < 0; ++i) {
        const session::RankPair& p = m_plan->pairs[i];
        if ((p.step < 0 || p.step == step) && (!p.npu.rank || *p.npu.rank == rank))
            target = static_cast<int>(i);
    }
    if (target < 0) {
        say([=, this] { return tr("The opened dumps have no step %1, rank %2 for %3.").arg(step).arg(rank).arg(apiName); });
        return;
    }
    showNodeInPair(target, apiName);
}

// ----- tools -----------------------------------------------------------------------------------

void MainWindow::exportCsv()
{
    if (!m_plan || m_pairIndex < 0) {
        QMessageBox::information(this, tr("Export"), tr("Open a dump pair first."));
        return;
    }
    if (!m_analysis) {
        QMessageBox::information(this, tr("Export"), tr("Wait for the compare to finish first."));
        return;
    }
    ExportDialog dialog(m_analysis, m_settings, this);
    // The folder written to is where the next export starts.
    connect(&dialog, &ExportDialog::exportFinished, this, [this, &dialog](const QStringList& files) {
        if (files.isEmpty() || m_settings.exportFolder == dialog.outputFolder())
            return;
        m_settings.exportFolder = dialog.outputFolder();
        m_settings.save();
    });
    dialog.exec();
}

std::unique_ptr<RunUtDialog> MainWindow::createRunUtDialog(std::unique_ptr<RunUtBackend> backend)
{
    if (!backend) {
        backend = loadRunUtBackend();
    }
    auto dialog = std::make_unique<RunUtDialog>(std::move(backend), this);
    if (m_plan && m_pairIndex >= 0) {
        RunUtRequest request = dialog->request();
        request.dumpJson = toQ(m_plan->pairs[static_cast<std::size_t>(m_pairIndex)].npu.dumpFile.string());
        dialog->setRequest(request);
    }
    if (!m_settings.runUtFolder.isEmpty()) {
        RunUtRequest request = dialog->request();
        request.outputDir = m_settings.runUtFolder;
        dialog->setRequest(request);
    }
    RunUtDialog* shown = dialog.get();
    connect(shown, &RunUtDialog::runFinished, this, [this, shown](bool ok, const QString&) {
        const QString folder = shown->request().outputDir;
        if (!ok || m_settings.runUtFolder == folder)
            return;
        m_settings.runUtFolder = folder;
        m_settings.save();
    });
    connect(dialog.get(), &RunUtDialog::verdictsChanged, this, &MainWindow::applyRunUtVerdicts);
    connect(dialog.get(), &RunUtDialog::apiActivated, this, [this](const QString& fullName) {
        if (!selectNodeByKey(fullName + QStringLiteral(".forward")) && !selectNodeByKey(fullName + QStringLiteral(".backward")))
            say([=, this] { return tr("%1 is not in the shown dump.").arg(fullName); });
    });
    return dialog;
}

void MainWindow::runRunUt()
{
    createRunUtDialog()->exec();
}

void MainWindow::applyRunUtVerdicts(const QString& dumpJson, const QList<RunUtVerdict>& verdicts)
{
    m_runUtDump = dumpJson;
    m_runUtVerdicts = verdicts;
    updateRunUtBadges();
}

void MainWindow::updateRunUtBadges()
{
    const auto sameFile = [](const QString& a, const std::filesystem::path& b) {
        const QString ca = QFileInfo(a).canonicalFilePath();
        return !ca.isEmpty() && ca == QFileInfo(toQ(b.string())).canonicalFilePath();
    };
    if (!m_plan || m_pairIndex < 0 || !m_model->tree() || m_runUtVerdicts.isEmpty()
        || !sameFile(m_runUtDump, m_plan->pairs[static_cast<std::size_t>(m_pairIndex)].npu.dumpFile)) {
        m_badges->clear(NodeBadgeDelegate::RunUt);
        return;
    }
    m_badges->setBadges(NodeBadgeDelegate::RunUt, runUtBadges(*m_model->tree(), m_runUtVerdicts));
}

} // namespace probescope::ui
