// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchrankmap [--ranks 10000] [--steps 2] [--repeat 5] [--job DIR]
//
// Issue 37: the rank overview's map (ui/views/rankmapview, ui/models/rankoverviewmodel) at 10,000 ranks x 2 steps,
// each interaction timed as the user meets it, the repaint included (QWidget::repaint paints synchronously):
//   open      RankOverviewModel::setPlan (20,000 pending pairs) + the view's layout + a repaint
//   colour    every summary in one batch (core's origin over all pairs) + a repaint
//   origin    the "Go to origin" jump: setCurrentPair(originRow) scrolls there + a repaint
//   filter    the rank filter set to the origin's communication group (16 ranks) + a repaint, and cleared again
//   scroll    to the last rank + a repaint
// No compare runs: summaries are synthetic (a group of 16 ranks fails, its first rank earliest in communication,
// so it is the origin). Prints best and first time of each, the goal (100 ms) and the load average beside it.
// --job DIR (a probescope-gendump job: DIR/npu, DIR/bench) also times session::planSession over its folders, the
// discovery the window runs when it opens a job, and maps that plan instead of a synthetic one.
// Runs offscreen when no display is set.

#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>

#include "core/session/session.h"
#include "ui/models/rankoverviewmodel.h"
#include "ui/views/rankmapview.h"
#include "syntheticplan.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

using namespace probescope;

namespace {

std::string load()
{
    std::ifstream in("/proc/loadavg");
    std::string first;
    in >> first;
    return first;
}

/// Ranks [group, group + 16) fail in step 0 (the first one before any collective: the origin); the rest pass.
session::PairSummary summaryOf(const session::SessionPlan& plan, std::size_t i, int group)
{
    const session::RankPair& pair = plan.pairs[i];
    const int rank = static_cast<int>(*pair.npu.rank);
    session::PairSummary s;
    s.pairIndex = i;
    s.nodes = 30;
    s.counts[std::size_t(session::Status::Pass)] = 30;
    s.failure.step = pair.step;
    s.failure.rank = rank;
    s.failure.rankLabel = pair.npu.rankLabel;
    if (pair.step == 0 && rank >= group && rank < group + 16) {
        s.counts[std::size_t(session::Status::Pass)] = 26;
        s.counts[std::size_t(session::Status::Error)] = 4;
        s.firstFailure.found = true;
        s.firstFailure.key = rank == group ? "Functional.gelu.1.forward" : "Distributed.all_reduce.0.forward";
        s.firstFailure.executionIndex = rank == group ? 6 : 14;
        job::locateFailure(s.failure, s.firstFailure, nullptr);
        s.failure.commBefore = rank == group ? 1 : 3;
    }
    return s;
}

struct Figure
{
    double first = -1;
    double best = 1e300;
    std::string loadBefore;
};

double timeIt(const std::function<void()>& f)
{
    QElapsedTimer t;
    t.start();
    f();
    return double(t.nsecsElapsed()) / 1e6;
}

void print(const char* what, const Figure& f)
{
    std::printf("  %-44s first %8.2f ms, best %8.2f ms  (goal 100 ms: %s) | load %s\n", what, f.first, f.best,
                f.best <= 100.0 ? (f.first <= 100.0 ? "met" : "met after the first") : "NOT met", f.loadBefore.c_str());
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")
        && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int ranks = 10000, steps = 2, repeat = 5;
    std::string jobDir;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (a == "--job")
            jobDir = argv[i + 1];
        else if (a == "--ranks" && v >= 16)
            ranks = v;
        else if (a == "--steps" && v >= 1)
            steps = v;
        else if (a == "--repeat" && v >= 1)
            repeat = v;
        else {
            std::fprintf(stderr, "usage: probescope-benchrankmap [--ranks N>=16] [--steps S] [--repeat K] [--job DIR]\n");
            return 2;
        }
    }
    session::SessionPlan plan;
    if (!jobDir.empty()) {
        const std::string loadBefore = load();
        QElapsedTimer t;
        t.start();
        auto planned = session::planSession(jobDir + "/npu", jobDir + "/bench");
        const double ms = double(t.nsecsElapsed()) / 1e6;
        if (!planned) {
            std::fprintf(stderr, "%s\n", planned.error().format().c_str());
            return 1;
        }
        plan = std::move(*planned);
        steps = 1;
        for (const session::RankPair& p : plan.pairs)
            steps = std::max<int>(steps, int(p.step) + 1);
        ranks = int(plan.pairs.size()) / steps;
        std::printf("planning %s (the window's discovery of %zu pairs): %.0f ms | load %s\n", jobDir.c_str(),
                    plan.pairs.size(), ms, loadBefore.c_str());
    } else {
        plan = testing::syntheticPlan(ranks, steps);
    }
    const int group = (ranks / 8) / 16 * 16; // the failing group and its first rank, the origin
    std::vector<session::PairSummary> all;
    all.reserve(plan.pairs.size());
    for (std::size_t i = 0; i < plan.pairs.size(); ++i)
        all.push_back(summaryOf(plan, i, group));
    const QString groupText = QString("%1-%2").arg(group).arg(group + 15);
    std::printf("rank map at %d ranks x %d steps (%zu pairs), best of %d, viewport 900 x 700\n", ranks, steps,
                plan.pairs.size(), repeat);

    ui::RankOverviewModel model;
    ui::RankMapView view;
    view.setModel(&model);
    view.resize(900, 700);
    view.show();
    QApplication::processEvents();
    Figure open, colour, origin, filter, unfilter, scroll;
    int failures = 0;
    for (int r = 0; r < repeat; ++r) {
        auto measure = [&](Figure& f, const std::function<void()>& step) {
            f.loadBefore = load();
            const double ms = timeIt([&] {
                step();
                view.viewport()->repaint();
            });
            if (f.first < 0)
                f.first = ms;
            f.best = std::min(f.best, ms);
        };
        measure(open, [&] { model.setPlan(plan); });
        measure(colour, [&] { model.setSummaries(all); });
        if (model.origin().rank != group) {
            std::printf("  FAILED: the origin is rank %lld, not rank %d\n", static_cast<long long>(model.origin().rank),
                        group);
            ++failures;
        }
        measure(origin, [&] { view.setCurrentPair(model.originRow()); });
        const int originGridRow = model.originRow() >= 0 ? model.gridRowOf(std::size_t(model.originRow())) : -1;
        if (!view.cellRect(originGridRow, 0).intersects(view.viewport()->rect())) {
            std::printf("  FAILED: the origin's cell is not in view after the jump\n");
            ++failures;
        }
        measure(filter, [&] { view.setRankFilter(groupText); });
        if (view.shownRows() != 16) {
            std::printf("  FAILED: the filter shows %d rows, not 16\n", view.shownRows());
            ++failures;
        }
        measure(unfilter, [&] { view.setRankFilter(QString()); });
        measure(scroll, [&] { view.verticalScrollBar()->setValue(view.verticalScrollBar()->maximum()); });
        view.verticalScrollBar()->setValue(0);
    }
    print("open (setPlan, layout, repaint)", open);
    print("colour (all summaries in one batch, repaint)", colour);
    print("jump to the origin (scroll, repaint)", origin);
    print(("filter by group (" + groupText.toStdString() + ", repaint)").c_str(), filter);
    print("filter cleared (every rank again, repaint)", unfilter);
    print("scroll to the last rank (repaint)", scroll);
    std::printf("  cells painted by the last repaint: %d (the visible ones only)\n", view.lastPaintedCells());
    return failures ? 1 : 0;
}
