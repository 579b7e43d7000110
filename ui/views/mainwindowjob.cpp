// SPDX-License-Identifier: Apache-2.0
// The main window's state for a job (issue 38 split of mainwindow.cpp): a plan of several steps or ranks, its step
// and rank selectors, the rank overview of every pair and its origin (O), and the jumps between ranks (P). One pair
// alone never comes here; mainwindow.cpp shows whichever pair the job selects.
#include "ui/views/mainwindow.h"

#include "core/job/origin.h"
#include "ui/jobs/overviewjob.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/panels/elidedlabel.h"
#include "ui/views/comparetreeview.h"
#include "ui/views/rankmapview.h"

#include <QComboBox>

#include <algorithm>
#include <iterator>

namespace probescope::ui {

namespace {

QString toQ(const std::string& s) { return QString::fromStdString(s); }

} // namespace

// ----- steps and ranks -------------------------------------------------------------------------

void MainWindow::populateSelectors()
{
    m_stepBox->clear();
    for (const std::int64_t step : m_plan->steps())
        m_stepBox->addItem(step < 0 ? tr("(no step)") : tr("step %1").arg(step), QVariant::fromValue<qint64>(step));
    m_stepBox->setEnabled(m_stepBox->count() > 1);
}

void MainWindow::onStepChosen(int comboIndex)
{
    const auto pairs = m_plan->pairsOfStep(m_stepBox->itemData(comboIndex).toLongLong());
    if (!pairs.empty())
        showPair(static_cast<int>(pairs.front()));
}

void MainWindow::onRankChosen(int comboIndex)
{
    showPair(m_rankBox->itemData(comboIndex).toInt());
}

bool MainWindow::isMultiRank() const
{
    if (!m_plan)
        return false;
    for (const std::int64_t step : m_plan->steps())
        if (m_plan->pairsOfStep(step).size() > 1)
            return true;
    return false;
}

void MainWindow::onOverviewFinished()
{
    // A job opens at its origin: once the overview knows it, unless the user went elsewhere meanwhile.
    const bool follow = std::exchange(m_followOrigin, false) && m_autoPair >= 0 && m_autoPair == m_pairIndex
        && selectedNodeKey() == m_autoKey && m_overviewModel->originRow() >= 0;
    if (follow && !(m_overviewModel->originRow() == m_pairIndex && toQ(m_overviewModel->origin().key) == m_autoKey))
        jumpToOrigin();
    else if (m_analysis && !isComparing() && m_say)
        m_message->setText(m_say()); // the origin is known now
    emit overviewFinished();
}

void MainWindow::startOverview()
{
    if (!m_plan || m_plan->pairs.size() < 2 || m_runMode) // one run: the NaN/Inf search is its overview
        return;
    m_overview->startAll(*m_plan, compareSettings());
}

void MainWindow::showNodeInPair(int pairIndex, const QString& key)
{
    if (pairIndex != m_pairIndex) {
        m_pendingSelection = key; // selected when that pair's compare ends
        showPair(pairIndex);
        return;
    }
    if (isComparing())
        m_pendingSelection = key; // else the first failing node would replace it at the end
    if (m_model->tree() && !selectNodeByKey(key))
        say([=, this] { return tr("%1 is not in the shown dump.").arg(key); });
}

bool MainWindow::jumpToOrigin()
{
    if (m_runMode)
        return jumpToRunOrigin();
    const int row = m_overviewModel->originRow();
    if (!m_plan || row < 0) {
        say([=, this] { return tr("No job origin yet: the rank overview has found no failing pair so far."); });
        return false;
    }
    m_rankPanel->map()->setCurrentPair(row);
    showNodeInPair(row, toQ(m_overviewModel->origin().key));
    m_tree->setFocus();
    return true;
}

bool MainWindow::jumpToPeerRank()
{
    if (m_runMode && jumpToRunPeer())
        return true;
    const QString key = selectedNodeKey();
    if (!m_plan || m_pairIndex < 0 || !job::isCommunicationKey(key.toStdString())) {
        say([=, this] { return tr("Select a communication node (Distributed.*) to jump to another rank's."); });
        return false;
    }
    // The ranks of a step take part in the same collectives in the same order; the next one, cyclically,
    // so repeated presses visit every peer.
    const std::vector<std::size_t> ranks = m_plan->pairsOfStep(m_plan->pairs[std::size_t(m_pairIndex)].step);
    const auto here = std::find(ranks.begin(), ranks.end(), std::size_t(m_pairIndex));
    if (ranks.size() < 2 || here == ranks.end()) {
        say([=, this] { return tr("This step has no other rank."); });
        return false;
    }
    const std::size_t peer = std::next(here) == ranks.end() ? ranks.front() : *std::next(here);
    m_rankPanel->map()->setCurrentPair(int(peer));
    const QString to = toQ(m_plan->pairs[peer].label());
    m_nextNote = [=, this] { return tr("P: %1 on the next rank, %2.").arg(key, to); };
    showNodeInPair(int(peer), key);
    m_tree->setFocus();
    return true;
}

} // namespace probescope::ui
