// SPDX-License-Identifier: Apache-2.0
// The main window's ways in (issue 38 split of mainwindow.cpp): the demo pair, the Open pair and compare.json
// dialogs, the folder the file dialogs start in, the recent pairs (menu and empty state), the "Check setup" page and
// what a drop opens. They all end in openInputs() (mainwindow.cpp), openGraphFile() or openSetupCheck().
#include "ui/views/mainwindow.h"

#include "ui/jobs/graphfilejob.h"
#include "ui/panels/openpairdialog.h"
#include "ui/views/setupcheckpage.h"

#include <QCoreApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>

namespace probescope::ui {

namespace {

constexpr int kMaxRecent = 8;

} // namespace

QString MainWindow::demoDir()
{
    const QString app = QCoreApplication::applicationDirPath();
    for (const QString& candidate : { app + "/../share/probescope/demo", QStringLiteral(PROBESCOPE_SOURCE_DIR "/resources/demo") }) {
        if (QFileInfo(candidate + "/npu").isDir())
            return QDir(candidate).canonicalPath();
    }
    return {};
}

void MainWindow::openDemo()
{
    const QString dir = demoDir();
    if (dir.isEmpty()) {
        QMessageBox::warning(this, tr("Open demo"), tr("The bundled demo pair was not found."));
        return;
    }
    openInputs(dir + "/npu", dir + "/bench");
}

void MainWindow::openPairDialog(bool benchFirst)
{
    // Never one side alone: a new NPU dump compared at once against whatever bench is open gave bogus
    // "first failing nodes" (issue 19). The dialog starts from the open pair and opens both sides together.
    OpenPairDialog dialog(m_settings, m_npuInput, m_benchInput, this);
    dialog.focusField(benchFirst ? OpenPairDialog::Focus::Bench : OpenPairDialog::Focus::Npu);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const Settings chosen = dialog.settings();
    if (chosen.fuzzy != m_settings.fuzzy || chosen.stackMode != m_settings.stackMode) {
        m_settings = chosen;
        m_settings.save();
    }
    openInputs(dialog.npu(), dialog.bench());
}

void MainWindow::chooseCompareJson()
{
    const QString file = QFileDialog::getOpenFileName(this, tr("Open msprobe compare.json"), lastDialogFolder(),
                                                      tr("JSON files (*.json)"));
    rememberDialogFolder(file);
    if (!file.isEmpty())
        openInputs(file, QString());
}

QString MainWindow::lastDialogFolder()
{
    // The file dialogs start where the last one ended (they forgot it, issue 36 item 12).
    const QString folder = QSettings().value(QStringLiteral("dialogs/lastFolder")).toString();
    return QFileInfo(folder).isDir() ? folder : QString();
}

void MainWindow::rememberDialogFolder(const QString& chosen)
{
    if (chosen.isEmpty())
        return;
    const QFileInfo info(chosen);
    QSettings().setValue(QStringLiteral("dialogs/lastFolder"), info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

void MainWindow::rememberPair(const QString& npu, const QString& bench)
{
    QSettings store;
    QStringList recent = store.value("recent/pairs").toStringList();
    const QString entry = npu + '\n' + bench;
    recent.removeAll(entry);
    recent.prepend(entry);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    store.setValue("recent/pairs", recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value("recent/pairs").toStringList();
    for (const QString& entry : recent) {
        const QStringList parts = entry.split('\n');
        const QString npu = parts.value(0);
        const QString bench = parts.value(1);
        auto* a = m_recentMenu->addAction(bench.isEmpty() ? npu : npu + QStringLiteral("  ↔  ") + bench);
        connect(a, &QAction::triggered, this, [this, npu, bench] { openInputs(npu, bench); });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
    if (m_emptyRecent) {
        m_emptyRecent->clear();
        for (const auto& [npu, bench] : recentPairs()) {
            auto* item = new QListWidgetItem(bench.isEmpty() ? npu : npu + QStringLiteral("  ↔  ") + bench, m_emptyRecent);
            item->setData(Qt::UserRole, npu);
            item->setData(Qt::UserRole + 1, bench);
            item->setToolTip(item->text());
        }
        m_emptyRecent->setVisible(m_emptyRecent->count() > 0);
        m_emptyRecentLabel->setVisible(m_emptyRecent->count() > 0);
    }
}

SetupCheckPage* MainWindow::openSetupCheck(const QString& first, const QString& second)
{
    if (!m_setupPage) {
        m_setupPage = new SetupCheckPage(this);
        m_setupPage->setWindowFlag(Qt::Window);
    }
    m_setupPage->show();
    m_setupPage->raise();
    m_setupPage->activateWindow();
    if (!first.isEmpty() && !second.isEmpty())
        m_setupPage->open(first, second);
    return m_setupPage;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile())
            paths << url.toLocalFile();
    }
    if (paths.size() >= 2 && isSetupCheckPair(paths[0], paths[1])) {
        openSetupCheck(paths[0], paths[1]);
    } else if (paths.size() >= 2) {
        openInputs(paths[0], paths[1]);
    } else if (paths.size() == 1) {
        const QFileInfo info(paths[0]);
        if (isGraphFilePath(paths[0]))
            openGraphFile(paths[0]);
        else if (info.isFile() && info.suffix() == "json" && info.fileName() != "dump.json")
            openInputs(paths[0], QString());
        else if (m_npuInput.isEmpty() || (!m_benchInput.isEmpty() && m_plan)) {
            m_npuInput = paths[0];
            m_benchInput.clear();
            m_plan.reset();
            if (!openFreeBenchmarkOnly(paths[0]))
                say([=, this] { return tr("NPU dump: %1 — now drop the bench dump.").arg(paths[0]); });
        } else {
            openInputs(m_npuInput, paths[0]);
        }
    }
    event->acceptProposedAction();
}

} // namespace probescope::ui
