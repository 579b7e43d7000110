// SPDX-License-Identifier: Apache-2.0
// The communication graph that msprobe 26's `compare -da` and `overflow_check` share (commgraph.h).
#include "core/compare/msprobe26/commgraph.h"

#include "core/util/outputfile.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace probescope::compare::msprobe26 {

bool equalsRank(std::optional<dump::JsonValue> v, int rank)
{
    if (!v)
        return false;
    if (v->isInt())
        return v->asInt() == rank;
    if (v->type() == dump::JsonType::Double)
        return v->asDouble() == rank;
    if (v->isBool())
        return (v->asBool() ? 1 : 0) == rank;
    return false;
}

bool hasCommunicationKeyword(std::string_view name)
{
    static const char* const keywords[] = { "send",
                                            "recv",
                                            "broadcast",
                                            "all_reduce",
                                            "reduce",
                                            "all_gather",
                                            "gather",
                                            "isend",
                                            "irecv",
                                            "scatter",
                                            "reduce_scatter",
                                            "_reduce_scatter_base",
                                            "_all_gather_base",
                                            "all_to_all_single",
                                            "all_to_all",
                                            "all_gather_into_tensor",
                                            "reduce_scatter_tensor",
                                            "send_object_list",
                                            "recv_object_list" };
    return std::any_of(std::begin(keywords), std::end(keywords),
                       [&](const char* k) { return name.find(k) != std::string_view::npos; });
}

bool isDirectedApi(const std::string& api)
{
    static const std::set<std::string> directed = { "send",    "recv",    "isend",  "irecv",            "broadcast",
                                                    "scatter", "gather",  "send_object_list", "recv_object_list" };
    return directed.count(api) != 0;
}

std::string peerApi(const std::string& api)
{
    static const std::unordered_map<std::string, std::string> mapping = {
        { "send", "recv" },   { "recv", "send" },   { "isend", "irecv" }, { "irecv", "isend" },
        { "send_object_list", "recv_object_list" }, { "recv_object_list", "send_object_list" },
    };
    const auto it = mapping.find(api);
    return it == mapping.end() ? api : it->second;
}

void CommSearch::addRank(int rank, const std::vector<Op>& ops)
{
    RankWalk walk;
    walk.empty = ops.empty();
    graph().clearRank(rank); // a rank walked again: its earlier nodes leave the graph
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto& [name, data] = ops[i];
        if (m_ignoredBeforeCommunication && isIgnoredOp(name))
            continue;
        if (isCommunicationOp(name)) {
            walkCommunication(walk, rank, ops, i);
            break;
        }
        if (isIgnoredOp(name))
            continue;
        auto found = computeNode(rank, name, data, 0, true);
        if (!found) {
            walk.preError = found.error();
            break;
        }
        if (*found) {
            walk.preFound = **found;
            break;
        }
    }
    m_walks.insert_or_assign(rank, std::move(walk));
}

void CommSearch::walkCommunication(RankWalk& walk, int rank, const std::vector<Op>& ops, std::size_t first)
{
    // The nodes go straight into the graph (in dump order: append puts each one layer after the previous one); the
    // graph is only searched when the first pass finds nothing.
    std::vector<std::size_t> computeOps;
    int subLayer = 0;
    for (std::size_t i = first; i < ops.size(); ++i) {
        const auto& [name, data] = ops[i];
        if (isCommunicationOp(name)) {
            auto node = commNode(rank, name, data, subLayer);
            if (!node) {
                walk.commError = node.error();
                return;
            }
            node->computeOps = std::move(computeOps);
            graph().append(std::move(*node));
            computeOps.clear();
            subLayer = 0;
        } else if (!isIgnoredOp(name)) {
            auto found = computeNode(rank, name, data, subLayer, false);
            if (!found) {
                walk.commError = found.error();
                return;
            }
            if (*found)
                computeOps.push_back(**found);
            ++subLayer;
        }
    }
    walk.afterComm = std::move(computeOps);
}

Result<std::optional<std::string>> CommSearch::run()
{
    say("Start searching " + m_what + " node before communication.");
    for (const auto& [rank, walk] : m_walks) {
        if (walk.preError)
            return *walk.preError;
        if (walk.empty)
            say("Rank " + std::to_string(rank) + " has no dump data!");
        if (walk.preFound)
            m_found.push_back(*walk.preFound);
    }
    if (m_found.empty()) {
        say("Start searching " + m_what + " node during communication.");
        for (const auto& [rank, walk] : m_walks) {
            if (walk.commError)
                return *walk.commError;
        }
        CommGraph& g = graph();
        if (auto r = g.connect(); !r)
            return r.error();
        g.prune();
        searchGraph();
    }
    if (m_found.empty()) {
        say("Start searching " + m_what + " node after communication.");
        for (const auto& [rank, walk] : m_walks) {
            if (!walk.afterComm.empty())
                m_found.push_back(walk.afterComm.front());
        }
    }
    if (m_found.empty()) {
        say("Cannot find any " + m_what + " node, no need to generate analyze file.");
        return std::optional<std::string> {};
    }
    return std::optional<std::string>(resultJson());
}

void CommSearch::say(std::string line)
{
    if (m_log)
        m_log->push_back(std::move(line));
}

Result<std::filesystem::path> writeAnalysisFile(const std::filesystem::path& outDir, const std::string& prefix,
                                                std::string_view text, const std::string& errorId)
{
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const std::filesystem::path path = outDir / (prefix + std::to_string(ns++) + ".json");
        const auto failure = writeFileAtomically(path, text, ReplaceMode::Never);
        if (!failure)
            return path;
        if (!failure->nameTaken)
            return makeError(errorId, fileLocation(path),
                             "cannot write the analysis: " + failure->message);
    }
    return makeError(errorId, fileLocation(outDir),
                     "no free " + prefix + "<ns>.json name after 1000 tries");
}

namespace {

bool fitsInt(long long v)
{
    return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
}

} // namespace

CommGraph::CommGraph(CommGraphRules rules)
    : m_rules(std::move(rules))
{
}

void CommGraph::addRank(int rank)
{
    m_ranks[rank];
}

void CommGraph::clearRank(int rank)
{
    m_ranks[rank].clear(); // its nodes stay in m_nodes, unreachable: no rank list, no edge leads to them
}

CommNode& CommGraph::append(CommNode node)
{
    auto& list = m_ranks[node.rank];
    // add_next: the next communication op of a rank is one layer further.
    node.layer = list.empty() ? 0 : m_nodes[list.back()].layer + 1;
    node.order = list.size();
    list.push_back(static_cast<std::uint32_t>(m_nodes.size()));
    m_nodes.push_back(std::move(node));
    return m_nodes.back();
}

const CommNode* CommGraph::find(const std::string& id) const
{
    const auto dot = id.find('.');
    const auto it = m_ranks.find(std::atoi(id.substr(0, dot).c_str()));
    if (it == m_ranks.end())
        return nullptr;
    for (const std::uint32_t i : it->second) {
        if (m_nodes[i].id == id && !m_nodes[i].removed)
            return &m_nodes[i];
    }
    return nullptr;
}

Result<bool> CommGraph::connect()
{
    auto connectionOf = [&](CommNode& node) -> const Result<CommConnection>& {
        if (!node.connection)
            node.connection = m_rules.connectionOf(node);
        return *node.connection;
    };
    // overflow_check's {api: {rank: {call_cnt: node}}} index: per (rank, api) one node per call count, the last
    // node of a call count in the place of the first.
    std::map<std::pair<int, std::string>, std::vector<std::uint32_t>> byApi;
    if (!m_rules.prefixMatch) {
        std::map<std::pair<int, std::string>, std::unordered_map<std::string, std::size_t>> slots;
        for (const auto& [rank, list] : m_ranks) {
            for (const std::uint32_t i : list) {
                const CommNode& n = m_nodes[i];
                auto& slot = slots[{ rank, n.api }];
                auto& nodes = byApi[{ rank, n.api }];
                const auto [it, fresh] = slot.emplace(n.callCount, nodes.size());
                if (fresh)
                    nodes.push_back(i);
                else
                    nodes[it->second] = i;
            }
        }
    }
    std::vector<long long> everyRank;
    for (const auto& [rank, list] : m_ranks)
        everyRank.push_back(rank);

    std::set<int> searched;
    std::size_t index = 0;
    int round = 0;
    for (auto& [rank, list] : m_ranks) {
        if (++index == m_ranks.size())
            break; // the last rank never searches
        searched.insert(rank);
        ++round; // "seen" is per searching rank: a node is seen when its stamp is this round
        // For one searching rank the match test of a candidate depends only on (target rank, api, type): the
        // searching rank is fixed, and seen nodes stay seen. So a candidate that failed once fails again, and each
        // (target, api, type) resumes where it stopped (msprobe rescans from the start: the same picks, in
        // quadratic time).
        std::map<std::tuple<long long, std::string, CommNodeType>, std::size_t> cursors;
        CommNode* last = nullptr;
        for (const std::uint32_t curIndex : list) {
            CommNode& cur = m_nodes[curIndex];
            if (m_rules.layerOverflowFix && last && last->layer >= cur.layer)
                cur.layer = last->layer + 1;
            const auto& conn = connectionOf(cur);
            if (!conn)
                return conn.error();
            const std::vector<long long> ranks = conn->empty() ? everyRank
                                                               : std::vector<long long>(conn->ranks.begin(), conn->ranks.end());
            last = &cur;
            bool found = cur.connected;
            const std::string api = conn->api.starts_with("Distributed.") ? conn->api.substr(12) : conn->api;
            for (const long long target : ranks) {
                if (fitsInt(target) && searched.count(static_cast<int>(target)))
                    continue;
                const auto targetIt = fitsInt(target) ? m_ranks.find(static_cast<int>(target)) : m_ranks.end();
                if (targetIt == m_ranks.end()) {
                    if (m_rules.missingPeer) {
                        if (auto error = m_rules.missingPeer(cur, target))
                            return *error;
                    }
                    continue;
                }
                const std::vector<std::uint32_t>* candidates = &targetIt->second;
                if (!m_rules.prefixMatch) {
                    const auto it = byApi.find({ targetIt->first, api });
                    if (it == byApi.end())
                        continue;
                    candidates = &it->second;
                }
                const std::string prefix = std::to_string(target) + "." + conn->api;
                std::size_t& k = cursors[{ target, conn->api, conn->type }];
                for (; k < candidates->size(); ++k) {
                    const std::uint32_t candIndex = (*candidates)[k];
                    CommNode& candidate = m_nodes[candIndex];
                    if (candidate.seenRound == round || candidate.type != conn->type)
                        continue;
                    if (m_rules.prefixMatch && !candidate.id.starts_with(prefix))
                        continue;
                    const auto& candConn = connectionOf(candidate);
                    if (!candConn)
                        return candConn.error();
                    if ((candConn->empty() && !isDirectedApi(candidate.api)) || candConn->ranks.count(cur.rank)) {
                        candidate.seenRound = round;
                        candidate.layer = cur.layer; // every edge kind puts the peer on the searching node's layer
                        cur.edges.push_back(candIndex);
                        candidate.edges.push_back(curIndex);
                        cur.connected = candidate.connected = true;
                        found = true;
                        ++k;
                        break;
                    }
                }
            }
            if (!found && m_rules.unconnected)
                m_rules.unconnected(cur);
        }
    }
    return true;
}

void CommGraph::prune()
{
    // A removed node keeps its edge lists; members() never walks into a removed node, which is what msprobe's
    // delete() (popping the node from every neighbour) amounts to for the search.
    for (CommNode& n : m_nodes) {
        if (!n.keep && n.computeOps.empty())
            n.removed = true;
    }
}

std::vector<const CommNode*> CommGraph::members(std::uint32_t start, std::vector<char>& inGroup) const
{
    std::vector<std::uint32_t> queue { start };
    std::unordered_set<std::uint32_t> ids { start };
    for (std::size_t i = 0; i < queue.size(); ++i) {
        for (const std::uint32_t e : m_nodes[queue[i]].edges) {
            if (!m_nodes[e].removed && ids.insert(e).second)
                queue.push_back(e);
        }
    }
    std::vector<const CommNode*> out;
    out.reserve(queue.size());
    for (const std::uint32_t i : queue) {
        inGroup[i] = 1;
        out.push_back(&m_nodes[i]);
    }
    std::sort(out.begin(), out.end(), [](const CommNode* a, const CommNode* b) {
        return std::pair { a->rank, a->order } < std::pair { b->rank, b->order };
    });
    return out;
}

void CommGraph::search(const std::function<void(const std::vector<const CommNode*>&)>& onGroup,
                       const std::function<bool()>& found) const
{
    std::vector<std::vector<std::uint32_t>> queues;
    for (const auto& [rank, list] : m_ranks) {
        std::vector<std::uint32_t> q;
        for (const std::uint32_t i : list) {
            if (!m_nodes[i].removed)
                q.push_back(i);
        }
        std::stable_sort(q.begin(), q.end(), [&](std::uint32_t a, std::uint32_t b) { return m_nodes[a].layer < m_nodes[b].layer; });
        queues.push_back(std::move(q));
    }
    std::vector<std::size_t> heads(queues.size(), 0);
    std::vector<char> seen(m_nodes.size(), 0);
    std::vector<char> inGroup(m_nodes.size(), 0);
    auto anyLeft = [&] {
        for (std::size_t i = 0; i < queues.size(); ++i) {
            if (heads[i] < queues[i].size())
                return true;
        }
        return false;
    };
    while (anyLeft()) {
        std::vector<std::vector<const CommNode*>> groups;
        std::vector<std::uint32_t> grouped; // to reset inGroup after the round
        for (std::size_t q = 0; q < queues.size(); ++q) {
            std::optional<std::uint32_t> node;
            while (heads[q] < queues[q].size()) {
                const std::uint32_t next = queues[q][heads[q]++];
                if (!seen[next]) {
                    node = next;
                    break;
                }
            }
            if (!node)
                continue;
            const bool starts = groups.empty()
                || (m_rules.onlyGroupedNodesStartGroups ? inGroup[*node] != 0 : inGroup[*node] == 0);
            if (starts) {
                auto group = members(*node, inGroup);
                for (const CommNode* m : group)
                    grouped.push_back(static_cast<std::uint32_t>(m - m_nodes.data()));
                groups.push_back(std::move(group));
            }
        }
        for (const std::uint32_t i : grouped)
            inGroup[i] = 0;
        for (const auto& group : groups) {
            for (const CommNode* m : group)
                seen[static_cast<std::size_t>(m - m_nodes.data())] = 1;
            onGroup(group);
        }
        if (found())
            return;
    }
}

} // namespace probescope::compare::msprobe26
