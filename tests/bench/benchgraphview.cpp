// SPDX-License-Identifier: Apache-2.0
//
// probescope-benchgraphview: the graph view's interactions at 200,000 nodes per side (issue 27 item 3: within
// 100 ms each). Both sides are generated in memory as a graph file (graphmodel.h), the NPU side matched to the bench
// side node for node with a few unmatched calls and some failing ones, shown through the graph-file adapter in a
// GraphView (offscreen platform). Every figure ends with a synchronous repaint of both panes and minimaps, so layout
// and painting are part of it. Each figure is given as wall time and as the GUI thread's CPU time; the 100 ms goal is
// checked on the CPU time, which other processes on a loaded machine do not inflate.
//
//   probescope-benchgraphview [--nodes N] [--repeat R]
//   probescope-benchgraphview --pair NPU BENCH   (a dump pair, e.g. two probescope-gendump runs: compared as the
//                                                window compares it, then the dump-pair adapter and the view timed)
//
// Shapes: "deep" = DefaultModel > 200 layers > 4 blocks > calls; "flat" = DefaultModel > N calls (the worst case of
// one box holding everything).

#include "core/graph/graphmodel.h"
#include "core/session/session.h"
#include "ui/models/graphsides.h"
#include "ui/views/graphview.h"

#include "machineinfo.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace probescope;
using namespace probescope::ui;

namespace {

using bench::threadCpuMs;

double g_cpuStart = 0;

/// Starts a figure: its wall clock and this thread's CPU clock.
void restart(QElapsedTimer& t)
{
    t.restart();
    g_cpuStart = threadCpuMs();
}

struct Figures
{
    std::vector<double> ms;
    std::vector<double> cpu;
    void add(double v)
    {
        ms.push_back(v);
        cpu.push_back(threadCpuMs() - g_cpuStart);
    }
    double cpuMedian() const
    {
        if (cpu.empty())
            return 0;
        auto v = cpu;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
    double cpuMax() const { return cpu.empty() ? 0 : *std::max_element(cpu.begin(), cpu.end()); }
    double median() const
    {
        if (ms.empty())
            return 0;
        auto v = ms;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
    double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

/// One side: node 0 is DefaultModel; `layers` layers of `blocks` blocks of calls, or (layers == 0) `n` calls under
/// the root. Names are msprobe's spellings so the adapter and the view see what they see in real files.
graph::Graph makeGraph(graph::Side side, std::size_t n, std::size_t layers, std::size_t blocks)
{
    graph::Graph g;
    g.side = side;
    g.id = std::string(graph::sideName(side)) + "_0_0";
    g.nodes.reserve(n);
    const auto add = [&](std::string name, std::int32_t parent, std::uint8_t type) {
        graph::Node node;
        node.name = std::move(name);
        node.parent = parent;
        node.type = type;
        const auto index = static_cast<std::uint32_t>(g.nodes.size());
        if (parent >= 0)
            g.nodes[static_cast<std::size_t>(parent)].children.push_back(index);
        g.nodes.push_back(std::move(node));
        return static_cast<std::int32_t>(index);
    };
    const std::int32_t root = add("DefaultModel", -1, 0);
    g.roots.push_back(0);
    std::size_t call = 0;
    if (layers == 0) {
        while (g.nodes.size() < n)
            add("Functional.linear." + std::to_string(call++) + ".forward", root, 1);
        return g;
    }
    const std::size_t perBlock = std::max<std::size_t>(1, (n - 1) / layers / blocks - 1);
    for (std::size_t l = 0; l < layers; ++l) {
        const std::int32_t layer = add("Module.layers." + std::to_string(l) + ".Layer.forward.0", root, 0);
        for (std::size_t b = 0; b < blocks && g.nodes.size() < n; ++b) {
            const std::int32_t block =
                add("Module.layers." + std::to_string(l) + ".block" + std::to_string(b) + ".Block.forward.0", layer, 0);
            for (std::size_t k = 0; k < perBlock && g.nodes.size() < n; ++k)
                add("Functional.linear." + std::to_string(call++) + ".forward", block, 1);
        }
    }
    return g;
}

std::shared_ptr<const graph::GraphFile> makeFile(std::size_t n, bool flat)
{
    auto file = std::make_shared<graph::GraphFile>();
    file->version = graph::MsprobeVersion::V26;
    file->config.graphType = "compare";
    file->config.task = "summary";
    file->colours = graph::defaultColours(graph::MsprobeVersion::V26, "summary");
    file->graphs.push_back(makeGraph(graph::Side::Npu, n, flat ? 0 : 200, 4));
    file->graphs.push_back(makeGraph(graph::Side::Bench, n, flat ? 0 : 200, 4));
    graph::Graph& npu = file->graphs[0];
    for (std::size_t i = 0; i < npu.nodes.size(); ++i) {
        graph::Node& node = npu.nodes[i];
        // Every 997th call unmatched, every 1009th failing, every 101st a warning, the rest pass.
        if (i % 997 == 500)
            continue;
        node.matchedLink = { file->graphs[1].nodes[i].name };
        node.precision = i % 1009 == 7 ? 1.0 : i % 101 == 3 ? 0.5 : 0.0;
    }
    for (graph::Node& node : file->graphs[1].nodes)
        node.matchedLink = { node.name };
    graph::assignStatuses(*file);
    return file;
}

double since(const QElapsedTimer& t) { return static_cast<double>(t.nsecsElapsed()) / 1e6; }

void paintAll(GraphView& view)
{
    for (const GraphSideId s : { GraphSideId::Npu, GraphSideId::Bench }) {
        view.pane(s)->viewport()->repaint();
        view.minimap(s)->repaint();
    }
}

void print(const char* what, const Figures& f, bool& ok)
{
    // Judged on the GUI thread's CPU time: on the shared 2-core machine (load 10 and more while seven builds run)
    // wall time also holds other processes' turns. Both are printed.
    const bool within = f.cpuMax() <= 100.0;
    ok = ok && within;
    std::printf("  %-50s wall median %6.2f max %6.2f ms | CPU median %6.2f max %6.2f ms (n=%zu)%s\n", what, f.median(),
                f.max(), f.cpuMedian(), f.cpuMax(), f.ms.size(), within ? "" : "   OVER 100 ms");
}

} // namespace

/// The dump-pair adapter on a real compare: what the window does after each compare (on a worker).
int benchPair(const std::string& npuPath, const std::string& benchPath, int repeat)
{
    auto plan = session::planSession(npuPath, benchPath);
    if (!plan || plan->pairs.empty()) {
        std::fprintf(stderr, "cannot plan the pair: %s\n", plan ? "no pair" : plan.error().format().c_str());
        return 1;
    }
    session::AnalysisOptions options;
    QElapsedTimer t;
    t.start();
    auto analysis = session::analysePair(plan->pairs.front(), options);
    if (!analysis) {
        std::fprintf(stderr, "%s\n", analysis.error().format().c_str());
        return 1;
    }
    std::printf("dump pair: %zu NPU nodes, %zu rows; compare %.0f ms (not the view's)\n",
                (*analysis)->skeleton->tree->size(), (*analysis)->table->rows.size(), since(t));
    restart(t);
    const auto benchTree = benchTreeOf(**analysis);
    const double treeWall = since(t);
    const double treeCpu = threadCpuMs() - g_cpuStart;
    restart(t);
    const auto sides = graphSidesFromAnalysis(**analysis, benchTree);
    const double sidesWall = since(t);
    const double sidesCpu = threadCpuMs() - g_cpuStart;
    std::size_t paired = 0;
    for (const GraphNode& n : sides->npu().nodes)
        paired += n.partner >= 0 ? 1 : 0;
    std::printf("  %-50s wall %8.2f ms | CPU %8.2f ms (on a worker, once per compare)\n", "bench construct tree (benchTreeOf)",
                treeWall, treeCpu);
    std::printf("  %-50s wall %8.2f ms | CPU %8.2f ms (on a worker, once per compare; %zu of %zu NPU nodes paired)\n",
                "adapter (graphSidesFromAnalysis)", sidesWall, sidesCpu, paired, sides->npu().size());
    bool ok = true;
    GraphView view;
    view.resize(1400, 900);
    view.show();
    QApplication::processEvents();
    Figures show;
    restart(t);
    view.setSides(sides);
    paintAll(view);
    show.add(since(t));
    print("show (top level open, painted)", show, ok);
    Figures select;
    for (int r = 0; r < repeat; ++r) {
        const auto node = static_cast<std::uint32_t>((static_cast<std::size_t>(r) * 104729 + 777) % sides->npu().size());
        restart(t);
        view.selectNode(GraphSideId::Npu, node, true);
        paintAll(view);
        select.add(since(t));
    }
    print("select a node (reveal, partner in step, scroll)", select, ok);
    if (sides->firstFailing) {
        Figures first;
        restart(t);
        view.selectNode(GraphSideId::Npu, *sides->firstFailing, true);
        paintAll(view);
        first.add(since(t));
        print("select the first failing node", first, ok);
    }
    std::printf("%s\n", ok ? "every interaction within 100 ms" : "SOME INTERACTIONS OVER 100 ms");
    return ok ? 0 : 1;
}

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    std::size_t n = 200000;
    int repeat = 20;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--nodes" && i + 1 < argc)
            n = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--repeat" && i + 1 < argc)
            repeat = std::atoi(argv[++i]);
        else if (a == "--pair" && i + 2 < argc) {
            const std::string npuPath = argv[i + 1];
            const std::string benchPath = argv[i + 2];
            return benchPair(npuPath, benchPath, repeat);
        } else {
            std::fprintf(stderr, "usage: probescope-benchgraphview [--nodes N] [--repeat R] | [--repeat R] --pair NPU BENCH\n");
            return 2;
        }
    }
    bool ok = true;
    for (const bool flat : { false, true }) {
        const auto file = makeFile(n, flat);
        std::printf("%s: %zu nodes per side\n", flat ? "flat (one box of every call)" : "deep (200 layers x 4 blocks)",
                    file->graphs[0].nodes.size());
        QElapsedTimer t;
        t.start();
        const auto sides = graphSidesFromGraphFile(file, 0);
        std::printf("  %-52s %8.2f ms (once per file, not an interaction)\n", "adapter (graphSidesFromGraphFile)", since(t));

        GraphView view;
        view.resize(1400, 900);
        view.show();
        QApplication::processEvents();
        Figures show;
        restart(t);
        view.setSides(sides);
        paintAll(view);
        show.add(since(t));
        print("show (top level open, painted)", show, ok);

        const GraphSide& npu = sides->npu();
        const std::uint32_t root = npu.roots.front();
        const auto top = npu.childrenOf(root);
        Figures expand;
        Figures expandBlock;
        Figures collapse;
        Figures select;
        Figures scroll;
        if (flat) {
            // The one box is open already (the top level opens on show): collapse and expand it again.
            for (int r = 0; r < std::min(repeat, 5); ++r) {
                restart(t);
                view.setExpanded(GraphSideId::Npu, root, false);
                paintAll(view);
                collapse.add(since(t));
                restart(t);
                view.setExpanded(GraphSideId::Npu, root, true);
                paintAll(view);
                expand.add(since(t));
            }
            print("collapse the box of every call (both sides)", collapse, ok);
            print("expand the box of every call (both sides)", expand, ok);
        } else {
            for (int r = 0; r < repeat && static_cast<std::size_t>(r) < top.size(); ++r) {
                const std::uint32_t layer = top[static_cast<std::size_t>(r) * top.size() / static_cast<std::size_t>(repeat)];
                restart(t);
                view.setExpanded(GraphSideId::Npu, layer, true);
                paintAll(view);
                expand.add(since(t));
                const std::uint32_t block = npu.childrenOf(layer).front();
                restart(t);
                view.setExpanded(GraphSideId::Npu, block, true);
                paintAll(view);
                expandBlock.add(since(t));
            }
            print("expand a layer (4 blocks; both sides)", expand, ok);
            print("expand a block (~250 calls; both sides)", expandBlock, ok);
        }
        // Select calls deep in boxes not open yet: reveal, partner on the other side at the same height, scroll.
        for (int r = 0; r < repeat; ++r) {
            const std::uint32_t node = static_cast<std::uint32_t>((static_cast<std::size_t>(r) * 7919 * 31 + 12345) % npu.size());
            restart(t);
            view.selectNode(GraphSideId::Npu, node, true);
            paintAll(view);
            select.add(since(t));
        }
        print("select a node (reveal, partner in step, scroll)", select, ok);
        QScrollBar* bar = view.pane(GraphSideId::Npu)->verticalScrollBar();
        for (int r = 0; r < repeat * 3; ++r) {
            restart(t);
            bar->setValue(bar->value() + bar->pageStep());
            paintAll(view);
            scroll.add(since(t));
        }
        print("scroll a page (both sides together)", scroll, ok);
        if (!flat) {
            // Everything open: 200,000 rows a side. Then the same interactions on the largest row lists there are.
            restart(t);
            for (const std::uint32_t layer : top) {
                view.pane(GraphSideId::Npu)->setExpanded(layer, true);
                view.pane(GraphSideId::Bench)->setExpanded(layer, true);
                for (const std::uint32_t block : npu.childrenOf(layer)) {
                    view.pane(GraphSideId::Npu)->setExpanded(block, true);
                    view.pane(GraphSideId::Bench)->setExpanded(block, true);
                }
            }
            paintAll(view);
            std::printf("  %-52s %8.2f ms (1,000 boxes opened one by one; rows: %zu)\n", "open everything",
                        since(t), view.pane(GraphSideId::Npu)->rows().size());
            Figures openSelect;
            Figures openScroll;
            Figures openToggle;
            for (int r = 0; r < repeat; ++r) {
                const std::uint32_t node = static_cast<std::uint32_t>((static_cast<std::size_t>(r) * 104729 + 777) % npu.size());
                restart(t);
                view.selectNode(GraphSideId::Npu, node, true);
                paintAll(view);
                openSelect.add(since(t));
                restart(t);
                bar->setValue(bar->maximum() * r / std::max(1, repeat - 1));
                paintAll(view);
                openScroll.add(since(t));
                const std::uint32_t layer = top[static_cast<std::size_t>(r) % top.size()];
                restart(t);
                view.setExpanded(GraphSideId::Npu, layer, false);
                view.setExpanded(GraphSideId::Npu, layer, true);
                paintAll(view);
                openToggle.add(since(t));
            }
            print("all open: select a node (partner in step)", openSelect, ok);
            print("all open: jump-scroll", openScroll, ok);
            print("all open: collapse + expand a layer (both sides)", openToggle, ok);
        }
    }
    std::printf("%s\n", ok ? "every interaction within 100 ms" : "SOME INTERACTIONS OVER 100 ms");
    return ok ? 0 : 1;
}
