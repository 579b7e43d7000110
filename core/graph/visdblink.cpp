// SPDX-License-Identifier: Apache-2.0
// Reading a .vis.db, stage 3: the nodes read by the scan linked into graphs (stack frames, node_order, parents and
// children).
#include "core/graph/visdbread.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace probescope::graph::detail {

void resolveDbStacks(GraphFile& file, const DbStacks& stacks)
{
    // Consecutive nodes often share one.
    for (Graph& g : file.graphs) {
        std::unordered_map<std::string, std::int32_t> known;
        std::string_view lastId;
        std::int32_t lastStack = -1;
        for (Node& n : g.nodes) {
            if (n.stackId.empty())
                continue;
            if (!lastId.empty() && n.stackId == lastId) {
                n.stack = lastStack;
                continue;
            }
            if (const auto it = known.find(n.stackId); it != known.end()) {
                n.stack = it->second;
            } else if (const auto found = stacks.find(n.stackId); found != stacks.end()) {
                n.stack = static_cast<std::int32_t>(g.stacks.size());
                g.stacks.push_back(found->second);
                known.emplace(n.stackId, n.stack);
            } else {
                file.warn([&] { return g.id + ": node " + n.name + ": stack_id " + n.stackId + " is not in tb_stack"; });
                continue;
            }
            lastId = n.stackId;
            lastStack = n.stack;
        }
    }
}

void orderDbNodes(GraphFile& file, DbNodeOrders& orders)
{
    for (std::size_t gi = 0; gi < file.graphs.size(); ++gi) {
        Graph& g = file.graphs[gi];
        const auto& order = orders[gi];
        // In order already when msprobe wrote the file (nodes are read straight into the graph, no second copy of a
        // million nodes); otherwise a stable permutation by node_order.
        if (!std::is_sorted(order.begin(), order.end())) {
            std::vector<std::uint32_t> perm(order.size());
            for (std::uint32_t k = 0; k < perm.size(); ++k)
                perm[k] = k;
            std::stable_sort(perm.begin(), perm.end(), [&](std::uint32_t a, std::uint32_t b) { return order[a] < order[b]; });
            std::vector<Node> sorted;
            sorted.reserve(g.nodes.size());
            std::vector<std::int64_t> sortedOrder;
            for (const std::uint32_t k : perm) {
                sorted.push_back(std::move(g.nodes[k]));
                sortedOrder.push_back(order[k]);
            }
            g.nodes = std::move(sorted);
            orders[gi] = std::move(sortedOrder);
        }
        for (std::size_t k = 0; k < g.nodes.size(); ++k)
            if (orders[gi][k] != static_cast<std::int64_t>(k))
                file.warn([&] {
                    return g.id + ": node_order " + std::to_string(orders[gi][k]) + " of " + g.nodes[k].name + " where "
                        + std::to_string(k) + " was expected";
                });
    }
}

void linkDbGraphs(GraphFile& file)
{
    // Each graph is linked on its own (NPU and bench at once).
    std::vector<GraphFile> scratch(file.graphs.size());
    std::atomic<std::size_t> next { 0 };
    auto link = [&] {
        for (std::size_t gi = next++; gi < file.graphs.size(); gi = next++)
            linkNodes(scratch[gi], file.graphs[gi]);
    };
    const unsigned cores = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < std::min<std::size_t>(cores, file.graphs.size()); ++t)
        workers.emplace_back(link);
    link();
    for (std::thread& t : workers)
        t.join();
    for (GraphFile& s2 : scratch)
        file.takeWarnings(s2.warnings, s2.moreWarnings);
}

} // namespace probescope::graph::detail
