// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchgui: how fast the desktop app's tree gets from two opened dumps to a coloured,
// painted QTreeView, and how long the common interactions take (gui-anchors §e.3 goals).
//
// The pair is benchpair.h's: two probescope-gendump runs with one bug injected into the NPU side. That
// gelu call is then the only failing node and the first failure, which the program checks.
//
// Everything runs as in the app: planSession, CompareController on its worker thread, CompareTreeModel
// behind a TreeRowsModel in a CompareTreeView (offscreen platform); each step ends with a synchronous
// repaint of the viewport, so layout and painting are part of every figure. The rows named "(proxy)"
// are the filter model's (a QSortFilterProxyModel before TreeRowsModel).
//
// The open is cold (no reopen cache) unless --reopen: then the pair's reopen cache (session/paircache.h) is
// made first, by this program in a child process so that its memory does not count, and the open measured
// is the one a user gets on opening the pair again.

#include "ui/jobs/comparecontroller.h"
#include "ui/models/comparetreemodel.h"
#include "ui/models/nodesearch.h"
#include "ui/models/treerowsmodel.h"
#include "ui/views/comparetreeview.h"
#include "benchpair.h"
#include "machineinfo.h"
#include "procstatus.h"
#include "core/session/paircache.h"
#include "core/session/session.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QHeaderView>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using namespace probescope;

struct Options
{
    std::vector<std::uint64_t> sizes { 20000, 200000 };
    fs::path work = "benchgui-data";
    std::string gendump = PROBESCOPE_GENDUMP;
    int repeat = 3;
    bool smoke = false; ///< check results only; no goals
    bool reopen = false; ///< measure an open from the reopen cache
    std::string self;    ///< this program, to make the cache in a child process
};

fs::path cacheDirOf(const Options& o, std::uint64_t nodes)
{
    return o.work / ("reopen-cache-" + std::to_string(nodes));
}

/// The settings of the measured open: two compare threads, the msprobe 1.2 profile, the cache with --reopen.
ui::CompareSettings settingsOf(const Options& o, std::uint64_t nodes)
{
    ui::CompareSettings settings { 2, false, compare::Profile::Msprobe12 };
    if (o.reopen)
        settings.cacheDir = cacheDirOf(o, nodes);
    return settings;
}

/// `--make-cache`: one analysis of the pair and its reopen cache, as the app writes it after a first open.
int makeCache(const Options& o, std::uint64_t nodes)
{
    const fs::path dir = o.work / ("pair-" + std::to_string(nodes));
    auto plan = session::planSession(dir / "npu", dir / "bench");
    if (!plan || plan->pairs.empty())
        return 1;
    session::AnalysisOptions options;
    settingsOf(o, nodes).applyTo(options);
    const session::RankPair& pair = plan->pairs[0];
    const fs::path file = session::pairCacheFile(options.cacheDir, pair, options);
    if (session::readPairCache(file, pair, options))
        return 0;
    auto analysis = session::analysePair(pair, options);
    if (!analysis) {
        std::fprintf(stderr, "bench-gui: %s\n", analysis.error().format().c_str());
        return 1;
    }
    if (auto why = session::writePairCache(file, pair, options, **analysis)) {
        std::fprintf(stderr, "bench-gui: the reopen cache was not written: %s\n", why->c_str());
        return 1;
    }
    return 0;
}

double ms(const QElapsedTimer& t)
{
    return double(t.nsecsElapsed()) / 1e6;
}

// ---- measuring

/// CPU seconds of the whole process (all threads): steadier than wall time on a shared machine.
double cpuSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

struct Figures
{
    double plan = 0, skeleton = 0, firstPaint = 0, coloured = 0, finished = 0;
    double cpuSkeleton = 0, cpuColoured = 0, cpuFinished = 0;
    double setSkeleton = 0, setStatus = 0; ///< the model's share of the open
    bool earlyTree = false;                 ///< the skeleton was the tree from the keys (PairSkeleton::early)
    struct Interaction
    {
        std::string name;
        std::vector<double> alone;   ///< the model/proxy/search work
        std::vector<double> painted; ///< including the repaint
    };
    std::vector<Interaction> interactions;

    void add(const std::string& name, double alone, double painted)
    {
        for (auto& i : interactions) {
            if (i.name == name) {
                i.alone.push_back(alone);
                i.painted.push_back(painted);
                return;
            }
        }
        interactions.push_back({ name, { alone }, { painted } });
    }
};

int runSize(const Options& o, std::uint64_t nodes)
{
    const fs::path dir = o.work / ("pair-" + std::to_string(nodes));
    QElapsedTimer gen;
    gen.start();
    const auto bug = bench::makeBugPair(o.gendump, nodes, dir);
    if (!bug) {
        std::fprintf(stderr, "bench-gui: could not make the %llu-node pair\n", static_cast<unsigned long long>(nodes));
        return 1;
    }
    std::printf("\n== %llu nodes per side (pair ready in %.1f s; injected bug: %s)\n",
                static_cast<unsigned long long>(nodes), ms(gen) / 1000, bug->c_str());
    if (o.reopen) {
        QElapsedTimer made;
        made.start();
        const auto child = bench::runChild({ o.self, "--make-cache", "--nodes", std::to_string(nodes), "--work",
                                             o.work.string() });
        if (!child.ok()) {
            std::fprintf(stderr, "bench-gui: could not make the reopen cache (status %d)\n", child.status);
            return 1;
        }
        std::printf("  reopen: the cache of a first open is in %s (ready in %.1f s); this open is the next one\n",
                    cacheDirOf(o, nodes).c_str(), ms(made) / 1000);
    }

    Figures f;
    ui::CompareTreeModel model;
    ui::TreeRowsModel proxy;
    proxy.setSourceModel(&model);
    ui::CompareTreeView view;
    view.setModel(&proxy);
    view.horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view.resize(1280, 900);
    view.show();
    ui::repaintOnAppearanceChange(&model, &view);
    auto paint = [&] { view.viewport()->repaint(); };

    // What this machine gives, measured before the open (docs/compare-performance.md compares machines by it).
    bench::printMachine(bench::measureMachine());
    rusage usage0 {};
    ::getrusage(RUSAGE_SELF, &usage0);
    const double cpu0 = cpuSeconds();
    QElapsedTimer clock;
    clock.start();
    auto plan = session::planSession(dir / "npu", dir / "bench");
    if (!plan) {
        std::fprintf(stderr, "bench-gui: %s\n", plan.error().format().c_str());
        return 1;
    }
    f.plan = ms(clock);

    ui::CompareController controller;
    std::shared_ptr<const session::PairAnalysis> analysis;
    QString failure;
    // The app waits in QApplication::exec(); a processEvents() loop with a timeout would spin (Qt ignores
    // WaitForMoreEvents in that overload) and steal a core from the compare.
    QEventLoop waiting;
    QObject::connect(&controller, &ui::CompareController::skeletonReady, [&](auto skeleton) {
        f.skeleton = ms(clock);
        f.earlyTree = skeleton->early;
        model.setSkeleton(skeleton);
        f.setSkeleton = ms(clock) - f.skeleton;
        paint();
        f.firstPaint = ms(clock);
        f.cpuSkeleton = cpuSeconds() - cpu0;
    });
    QObject::connect(&controller, &ui::CompareController::layoutReady, [&](auto status) {
        const double before = ms(clock);
        model.setStatus(status);
        f.setStatus = ms(clock) - before;
        paint();
        f.coloured = ms(clock);
        f.cpuColoured = cpuSeconds() - cpu0;
    });
    QObject::connect(&controller, &ui::CompareController::statusBatch,
                     [&](const session::StatusUpdate& u) { model.applyUpdate(u); });
    QObject::connect(&controller, &ui::CompareController::finished, [&](auto a) {
        analysis = a;
        model.setStatus(a->status);
        paint();
        f.finished = ms(clock);
        f.cpuFinished = cpuSeconds() - cpu0;
        waiting.quit();
    });
    QObject::connect(&controller, &ui::CompareController::failed, [&](const QString& m) {
        failure = m;
        waiting.quit();
    });
    controller.start(*plan, 0, settingsOf(o, nodes));
    waiting.exec();
    if (!analysis) {
        std::fprintf(stderr, "bench-gui: the analysis failed: %s\n", failure.toStdString().c_str());
        return 1;
    }
    rusage usage1 {};
    ::getrusage(RUSAGE_SELF, &usage1);
    const std::uint64_t rss = bench::procStatusBytes("VmRSS");
    const std::uint64_t peak = bench::procStatusBytes("VmHWM");

    int rc = 0;
    const auto& failing = model.failingNodesInDisplayOrder();
    if (analysis->firstFailure.key != *bug) {
        std::fprintf(stderr, "bench-gui: first failure is '%s', expected the injected '%s'\n",
                     analysis->firstFailure.key.c_str(), bug->c_str());
        rc = 3;
    }
    if (model.nodeCount() != nodes) {
        std::fprintf(stderr, "bench-gui: %zu nodes in the tree, expected %llu\n", model.nodeCount(),
                     static_cast<unsigned long long>(nodes));
        rc = 3;
    }

    // ---- interactions, each ending with a painted viewport
    const ui::NodeSearch& search = *proxy.nodeSearch(); // built with the tree, as the app uses it
    // Each figure is the action alone and the action plus the repaint it causes.
    auto timed = [&](const std::string& name, const std::function<void()>& action) {
        QElapsedTimer t;
        t.start();
        action();
        const double alone = ms(t);
        paint();
        f.add(name, alone, ms(t));
    };
    // Every node pending again: what a new compare's layout does to an expanded tree.
    auto pending = std::make_shared<session::NodeStatusTable>(*analysis->status);
    std::fill(pending->own.begin(), pending->own.end(), session::Status::Pending);
    session::aggregate(*pending, *model.tree());

    for (int r = 0; r < o.repeat; ++r) {
        timed("collapse all", [&] { view.collapseAll(); });
        timed("expand all", [&] { view.expandAll(); });
        timed("scroll to end", [&] { view.scrollToBottom(); });
        timed("scroll to top", [&] { view.scrollToTop(); });
        std::size_t hits = 0;
        timed("search 'gelu' (NodeSearch)", [&] { hits = search.find("gelu").nodes.size(); });
        timed("search regex (NodeSearch)", [&] {
            hits = search.find(R"(^Functional\.gelu\.\d+\.forward$)", { true, false }).nodes.size();
        });
        if (hits == 0)
            rc = 3;
        timed("name filter 'gelu' (proxy)", [&] { proxy.setNameFilter("gelu"); });
        timed("clear filter (proxy)", [&] { proxy.clearFilters(); });
        view.expandAll();
        paint();
        timed("recolour: continuous bands", [&] {
            model.setBands({ session::ColorBands::Scheme::ContinuousIndex, 0.05, 0.2 });
        });
        timed("recolour: msprobe rules", [&] { model.setBands({}); });
        timed("recolour: dark palette", [&] { model.setDarkPalette(r % 2 == 0); });
        timed("all verdicts change (setStatus)", [&] { model.setStatus(pending); });
        timed("verdicts back (setStatus)", [&] { model.setStatus(analysis->status); });
        timed("stream batch of 1000 (applyUpdate)", [&] {
            session::StatusUpdate u;
            for (std::uint32_t k = 0; k < 1000 && k < model.nodeCount(); ++k) {
                const std::uint32_t node = std::uint32_t((std::uint64_t(k) * 7919u * (r + 1)) % model.nodeCount());
                u.nodes.push_back(node);
                u.own.push_back(r % 2 == 0 ? session::Status::Pending : analysis->status->own[node]);
            }
            model.applyUpdate(u);
        });
        model.setStatus(analysis->status);
        timed("next failing (N)", [&] {
            const tree::NodeId next = model.nextFailing(tree::NodeId {});
            const QModelIndex at = proxy.reveal(next);
            view.setCurrentIndex(at);
            view.scrollTo(at);
        });
        timed("status filter: failing only", [&] {
            proxy.setStatusMask(ui::TreeRowsModel::statusBit(session::Status::Error)
                                | ui::TreeRowsModel::statusBit(session::Status::Warning));
        });
        timed("clear status filter", [&] { proxy.clearFilters(); });
        // The same filters on a collapsed tree (top level shown): what typing in the filter box costs
        // before anything is expanded.
        view.collapseAll();
        paint();
        timed("name filter, collapsed tree", [&] { proxy.setNameFilter("gelu"); });
        timed("clear filter, collapsed tree", [&] { proxy.clearFilters(); });
        timed("status filter, collapsed tree", [&] {
            proxy.setStatusMask(ui::TreeRowsModel::statusBit(session::Status::Error)
                                | ui::TreeRowsModel::statusBit(session::Status::Warning));
        });
        proxy.clearFilters();
    }
    if (failing.empty())
        rc = 3;

    // The line reads as it always did (scripts parse it); the next one says when the skeleton came before the dumps.
    std::printf("  plan %.0f ms | skeleton (both dumps loaded, tree built) %.0f ms | first paint %.0f ms | "
                "coloured tree %.0f ms | compare finished %.0f ms\n",
                f.plan, f.skeleton, f.firstPaint, f.coloured, f.finished);
    if (f.earlyTree)
        std::printf("  skeleton: the tree from the NPU dump's keys, shown before the dumps were read (docs/gui.md)\n");
    std::printf("  model: setSkeleton %.1f ms, setStatus (layout) %.1f ms\n", f.setSkeleton, f.setStatus);
    std::printf("  CPU time (all threads): %.2f s to the skeleton painted, %.2f s to the coloured tree, %.2f s to "
                "the end\n",
                f.cpuSkeleton, f.cpuColoured, f.cpuFinished);
    auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    std::printf("  open to the end: user %.2f s, system %.2f s, %ld minor page faults\n",
                seconds(usage1.ru_utime) - seconds(usage0.ru_utime), seconds(usage1.ru_stime) - seconds(usage0.ru_stime),
                usage1.ru_minflt - usage0.ru_minflt);
    if (o.reopen && !analysis->reopened) {
        std::fprintf(stderr, "bench-gui: --reopen, but the open did not come from the cache\n");
        rc = 3;
    }
    std::printf("  RSS %.0f MB, peak %.0f MB; %zu failing node(s), first failure %s\n", double(rss) / 1e6,
                double(peak) / 1e6, failing.size(), analysis->firstFailure.key.c_str());
    // gui-anchors e.3 up to 200k nodes; issue 17 at a million (and 2 s for a reopen from the cache).
    const double goal = o.reopen ? 2000.0 : nodes <= 20000 ? 1000.0 : nodes < 1000000 ? 5000.0 : 12000.0;
    auto verdict = [](bool met) { return met ? "met" : "MISSED"; };
    if (!o.smoke)
        std::printf("  goal: coloured tree <= %.0f ms: %s\n", goal, verdict(f.coloured <= goal));
    if (!o.smoke && !o.reopen && nodes >= 1000000)
        std::printf("  goal: skeleton painted <= 4000 ms: %s; compare finished <= 15000 ms: %s; peak <= 4000 MB: %s\n",
                    verdict(f.firstPaint <= 4000.0), verdict(f.finished <= 15000.0), verdict(double(peak) / 1e6 <= 4000.0));
    std::printf("  %-30s %22s %26s\n", "interaction", "work: best / worst ms", "with repaint: best / worst ms");
    for (const auto& i : f.interactions) {
        const auto [aMin, aMax] = std::minmax_element(i.alone.begin(), i.alone.end());
        const auto [pMin, pMax] = std::minmax_element(i.painted.begin(), i.painted.end());
        std::printf("  %-30s %10.1f / %8.1f %14.1f / %8.1f%s\n", i.name.c_str(), *aMin, *aMax, *pMin, *pMax,
                    o.smoke ? "" : (*pMax <= 100.0 ? "" : "   (> 100 ms goal)"));
    }
    return rc;
}

std::vector<std::uint64_t> parseSizes(const std::string& text)
{
    std::vector<std::uint64_t> out;
    std::size_t from = 0;
    while (from <= text.size()) {
        const std::size_t comma = text.find(',', from);
        const std::string part = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (!part.empty())
            out.push_back(std::strtoull(part.c_str(), nullptr, 10));
        if (comma == std::string::npos)
            break;
        from = comma + 1;
    }
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    if (!std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 0);
    QApplication app(argc, argv);
    Options o;
    o.self = argv[0];
    bool makeCacheOnly = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench-gui: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--nodes")
            o.sizes = parseSizes(value());
        else if (a == "--work")
            o.work = value();
        else if (a == "--gendump")
            o.gendump = value();
        else if (a == "--repeat")
            o.repeat = std::max(1, std::atoi(value().c_str()));
        else if (a == "--smoke")
            o.smoke = true;
        else if (a == "--reopen")
            o.reopen = true;
        else if (a == "--make-cache")
            makeCacheOnly = o.reopen = true; // the cache the measured --reopen open reads
        else {
            std::fprintf(stderr,
                         "usage: probescope-benchgui [--nodes N[,N...]] [--work DIR] [--gendump PATH] [--repeat K] "
                         "[--smoke] [--reopen]\n");
            return 2;
        }
    }
    int rc = 0;
    for (const std::uint64_t n : o.sizes) {
        if (n == 0)
            continue;
        rc = std::max(rc, makeCacheOnly ? makeCache(o, n) : runSize(o, n));
    }
    return rc;
}
