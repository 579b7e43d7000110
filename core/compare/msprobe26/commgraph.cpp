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

namespace {

/// Records of rank walks in the order they were made -> each rank's last one, ascending rank (a rank walked again
/// keeps its last walk).
template<class Walk>
void keepLastWalkOfEachRank(std::vector<Walk>& walks)
{
    std::stable_sort(walks.begin(), walks.end(), [](const Walk& a, const Walk& b) { return a.rank < b.rank; });
    std::size_t kept = 0;
    for (std::size_t i = 0; i < walks.size(); ++i) {
        if (i + 1 == walks.size() || walks[i + 1].rank != walks[i].rank)
            walks[kept++] = walks[i];
    }
    walks.resize(kept);
    walks.shrink_to_fit();
}

} // namespace

void CommSearch::addRank(int rank, const std::vector<Op>& ops)
{
    RankWalk walk;
    walk.rank = rank;
    walk.empty = ops.empty();
    graph().beginRank(rank); // a rank walked again: its earlier nodes leave the graph
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
            fail(walk, found.error(), true);
            break;
        }
        if (*found) {
            walk.preFound = **found;
            break;
        }
    }
    m_walks.push_back(walk);
}

void CommSearch::fail(RankWalk& walk, Diagnostic error, bool pre)
{
    walk.preFailed = pre;
    walk.error = static_cast<std::uint32_t>(m_walkErrors.size());
    m_walkErrors.push_back(std::move(error));
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
                fail(walk, node.error(), false);
                return;
            }
            node->computeOps = std::move(computeOps);
            graph().append(std::move(*node));
            computeOps.clear();
            subLayer = 0;
        } else if (!isIgnoredOp(name)) {
            auto found = computeNode(rank, name, data, subLayer, false);
            if (!found) {
                fail(walk, found.error(), false);
                return;
            }
            if (*found)
                computeOps.push_back(**found);
            ++subLayer;
        }
    }
    if (!computeOps.empty()) // the third pass reports a rank's first one only
        walk.afterComm = computeOps.front();
}

Result<std::optional<std::string>> CommSearch::run()
{
    keepLastWalkOfEachRank(m_walks);
    say("Start searching " + m_what + " node before communication.");
    for (const RankWalk& walk : m_walks) {
        if (walk.error != RankWalk::kNoError && walk.preFailed)
            return m_walkErrors[walk.error];
        if (walk.empty)
            say("Rank " + std::to_string(walk.rank) + " has no dump data!");
        if (walk.preFound != RankWalk::kNone)
            m_found.push_back(walk.preFound);
    }
    if (m_found.empty()) {
        say("Start searching " + m_what + " node during communication.");
        for (const RankWalk& walk : m_walks) {
            if (walk.error != RankWalk::kNoError)
                return m_walkErrors[walk.error];
        }
        CommGraph& g = graph();
        if (auto r = g.connect(); !r)
            return r.error();
        g.prune();
        searchGraph();
    }
    if (m_found.empty()) {
        say("Start searching " + m_what + " node after communication.");
        for (const RankWalk& walk : m_walks) {
            if (walk.afterComm != RankWalk::kNone)
                m_found.push_back(walk.afterComm);
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
    , m_connectionIndex(0, ConnectionHash { this }, ConnectionEqual { this })
{
}

int CommNodeRef::rank() const
{
    return m_graph->m_nodes[m_index].rank;
}

std::string_view CommNodeRef::name() const
{
    return m_graph->m_opList[m_graph->m_nodes[m_index].op].name;
}

std::string CommNodeRef::id() const
{
    return std::to_string(rank()) + "." + std::string(name());
}

const std::string& CommNodeRef::api() const
{
    return m_graph->m_textList[m_graph->m_opList[m_graph->m_nodes[m_index].op].api];
}

CommNodeType CommNodeRef::type() const
{
    return m_graph->m_nodes[m_index].type;
}

std::size_t CommNodeRef::dataIndex() const
{
    return m_graph->m_nodes[m_index].dataIndex;
}

int CommNodeRef::layer() const
{
    return m_graph->m_nodes[m_index].layer;
}

std::span<const std::size_t> CommNodeRef::computeOps() const
{
    const auto& n = m_graph->m_nodes[m_index];
    return std::span<const std::size_t>(m_graph->m_computeOps).subspan(n.computeBegin, n.computeCount);
}

std::size_t CommGraph::ConnectionHash::operator()(std::uint32_t c) const
{
    const Connection& k = graph->m_connections[c];
    std::size_t h = std::hash<std::uint64_t> {}((std::uint64_t { k.api } << 8) | (static_cast<std::uint64_t>(k.type) << 1)
                                                 | (k.otherValues ? 1 : 0));
    for (const long long r : graph->ranksOf(k))
        h = h * 1000003u ^ std::hash<long long> {}(r);
    return h;
}

bool CommGraph::ConnectionEqual::operator()(std::uint32_t a, std::uint32_t b) const
{
    const Connection& x = graph->m_connections[a];
    const Connection& y = graph->m_connections[b];
    const auto rx = graph->ranksOf(x);
    const auto ry = graph->ranksOf(y);
    return x.api == y.api && x.type == y.type && x.otherValues == y.otherValues
        && std::equal(rx.begin(), rx.end(), ry.begin(), ry.end());
}

std::span<const long long> CommGraph::ranksOf(const Connection& c) const
{
    return std::span<const long long>(m_connectionRanks).subspan(c.ranksBegin, c.ranksCount);
}

std::uint32_t CommGraph::text(std::string_view t)
{
    const auto [it, fresh] = m_texts.emplace(std::string(t), static_cast<std::uint32_t>(m_textList.size()));
    if (fresh)
        m_textList.emplace_back(t);
    return it->second;
}

std::uint32_t CommGraph::opText(const CommNode& node)
{
    std::string key = node.name;
    key += '\0';
    key += node.api;
    key += '\0';
    key += node.callCount;
    const auto [it, fresh] = m_ops.emplace(std::move(key), static_cast<std::uint32_t>(m_opList.size()));
    if (fresh)
        m_opList.push_back(OpText { node.name, node.callCount, text(node.api) });
    return it->second;
}

std::uint32_t CommGraph::connection(Result<CommConnection> c)
{
    if (!c) {
        m_connectionErrors.push_back(c.error());
        return kErrorBit | static_cast<std::uint32_t>(m_connectionErrors.size() - 1);
    }
    // The nodes of a group share one connection (the same peers, API and type): it is kept once.
    Connection k;
    k.ranksBegin = static_cast<std::uint32_t>(m_connectionRanks.size());
    k.ranksCount = static_cast<std::uint32_t>(c->ranks.size());
    k.api = text(c->api);
    k.type = c->type;
    k.otherValues = c->otherValues;
    m_connectionRanks.insert(m_connectionRanks.end(), c->ranks.begin(), c->ranks.end());
    m_connections.push_back(k);
    const auto candidate = static_cast<std::uint32_t>(m_connections.size() - 1);
    const auto [it, fresh] = m_connectionIndex.insert(candidate);
    if (!fresh) {
        m_connections.pop_back();
        m_connectionRanks.resize(k.ranksBegin);
    }
    return *it;
}

void CommGraph::beginRank(int rank)
{
    const auto at = static_cast<std::uint32_t>(m_nodes.size());
    m_walks.push_back(Walk { rank, at, at });
    m_rankWalks.clear();
}

void CommGraph::append(CommNode node)
{
    if (m_walks.empty())
        beginRank(0);
    Walk& walk = m_walks.back();
    Node n;
    n.rank = walk.rank;
    n.op = opText(node);
    n.connection = connection(std::move(node.connection));
    // add_next: the next communication op of a rank is one layer further.
    n.layer = walk.end == walk.begin ? 0 : m_nodes.back().layer + 1;
    n.computeBegin = static_cast<std::uint32_t>(m_computeOps.size());
    n.computeCount = static_cast<std::uint32_t>(node.computeOps.size());
    m_computeOps.insert(m_computeOps.end(), node.computeOps.begin(), node.computeOps.end());
    n.type = node.type;
    n.keep = node.keep;
    n.dataIndex = node.dataIndex;
    n.parent = n.next = static_cast<std::uint32_t>(m_nodes.size());
    m_nodes.push_back(n);
    walk.end = static_cast<std::uint32_t>(m_nodes.size());
}

const std::vector<CommGraph::Walk>& CommGraph::ranks() const
{
    if (m_rankWalks.empty() && !m_walks.empty()) {
        // A rank begun again keeps its last walk (its earlier nodes stay in m_nodes, unreachable).
        m_rankWalks = m_walks;
        keepLastWalkOfEachRank(m_rankWalks);
    }
    return m_rankWalks;
}

Result<bool> CommGraph::connect()
{
    const std::vector<Walk>& rankList = ranks();
    auto rankPosition = [&](long long target) -> std::optional<std::size_t> {
        if (!fitsInt(target))
            return std::nullopt;
        const auto it = std::lower_bound(rankList.begin(), rankList.end(), target,
                                         [](const Walk& w, long long r) { return w.rank < r; });
        if (it == rankList.end() || it->rank != target)
            return std::nullopt;
        return static_cast<std::size_t>(it - rankList.begin());
    };
    // The candidates of a (target rank, API): -da, every node of the target rank; overflow_check, its
    // {api: {rank: {call_cnt: node}}} index: per (rank, api) one node per call count, the last node of a call count
    // in the place of the first. Kept flat: byApi[keys[k].begin, + count) for the sorted (rank, api) keys.
    struct ApiKey
    {
        int rank;
        std::uint32_t api;
        std::uint32_t begin;
        std::uint32_t count;
    };
    std::vector<ApiKey> keys;
    std::vector<std::uint32_t> byApi;
    if (!m_rules.prefixMatch) {
        std::unordered_map<std::uint64_t, std::size_t> slot; // (api, call count) -> position in `slots`
        std::vector<std::pair<std::uint32_t, std::uint32_t>> slots; // (api, node), first appearance order
        for (const Walk& w : rankList) {
            slot.clear();
            slots.clear();
            for (std::uint32_t i = w.begin; i < w.end; ++i) {
                const OpText& op = m_opList[m_nodes[i].op];
                // The call count's text, interned: the same text is the same key.
                const std::uint64_t key = (std::uint64_t { op.api } << 32) | text(op.callCount);
                const auto [it, fresh] = slot.emplace(key, slots.size());
                if (fresh)
                    slots.emplace_back(op.api, i);
                else
                    slots[it->second].second = i;
            }
            std::stable_sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            for (std::size_t s = 0; s < slots.size(); ++s) {
                if (s == 0 || slots[s].first != slots[s - 1].first)
                    keys.push_back(ApiKey { w.rank, slots[s].first, static_cast<std::uint32_t>(byApi.size()), 0 });
                byApi.push_back(slots[s].second);
                ++keys.back().count;
            }
        }
    }
    auto connectionOf = [&](const Node& n) -> Result<const Connection*> {
        if (n.connection & kErrorBit)
            return m_connectionErrors[n.connection & ~kErrorBit];
        return &m_connections[n.connection];
    };
    std::vector<long long> everyRank;
    everyRank.reserve(rankList.size());
    for (const Walk& w : rankList)
        everyRank.push_back(w.rank);

    int round = 0;
    for (std::size_t position = 0; position + 1 < rankList.size(); ++position) { // the last rank never searches
        const Walk& searching = rankList[position];
        ++round; // "seen" is per searching rank: a node is seen when its stamp is this round
        // For one searching rank the match test of a candidate depends only on (target rank, api, type): the
        // searching rank is fixed, and seen nodes stay seen. So a candidate that failed once fails again, and each
        // (target, api, type) resumes where it stopped (msprobe rescans from the start: the same picks, in
        // quadratic time).
        std::map<std::tuple<long long, std::uint32_t, CommNodeType>, std::uint32_t> cursors;
        std::optional<std::uint32_t> last;
        for (std::uint32_t curIndex = searching.begin; curIndex < searching.end; ++curIndex) {
            Node& cur = m_nodes[curIndex];
            if (m_rules.layerOverflowFix && last && m_nodes[*last].layer >= cur.layer)
                cur.layer = m_nodes[*last].layer + 1;
            const auto conn = connectionOf(cur);
            if (!conn)
                return conn.error();
            const Connection& c = **conn;
            const std::span<const long long> ranks = c.empty() ? std::span<const long long>(everyRank) : ranksOf(c);
            last = curIndex;
            bool found = cur.connected;
            const std::string& connApi = m_textList[c.api];
            // The peer's API without "Distributed." (the index's key); an API no node has finds no candidate.
            std::optional<std::uint32_t> api;
            if (!m_rules.prefixMatch) {
                const auto it = m_texts.find(connApi.starts_with("Distributed.") ? connApi.substr(12) : connApi);
                if (it != m_texts.end())
                    api = it->second;
            }
            for (const long long target : ranks) {
                const auto targetPosition = rankPosition(target);
                if (targetPosition && *targetPosition <= position)
                    continue; // searched already
                if (!targetPosition) {
                    if (m_rules.missingPeer) {
                        if (auto error = m_rules.missingPeer(CommNodeRef(*this, curIndex), target))
                            return *error;
                    }
                    continue;
                }
                const Walk& targetWalk = rankList[*targetPosition];
                // The candidates, as a slice of node indices: -da, the target's walk (contiguous).
                std::uint32_t first = targetWalk.begin;
                std::uint32_t count = targetWalk.end - targetWalk.begin;
                const std::uint32_t* list = nullptr;
                if (!m_rules.prefixMatch) {
                    if (!api)
                        continue;
                    const auto it = std::lower_bound(keys.begin(), keys.end(), std::pair { targetWalk.rank, *api },
                                                     [](const ApiKey& k, const std::pair<int, std::uint32_t>& v) {
                                                         return std::pair { k.rank, k.api } < v;
                                                     });
                    if (it == keys.end() || it->rank != targetWalk.rank || it->api != *api)
                        continue;
                    list = byApi.data() + it->begin;
                    first = 0;
                    count = it->count;
                }
                std::uint32_t& k = cursors[{ target, c.api, c.type }];
                for (; k < count; ++k) {
                    const std::uint32_t candIndex = list ? list[k] : first + k;
                    Node& candidate = m_nodes[candIndex];
                    if (candidate.seenRound == round || candidate.type != c.type)
                        continue;
                    // msprobe's prefix test of the id, "<target>.<api>": the candidate's rank is the target.
                    if (m_rules.prefixMatch && !m_opList[candidate.op].name.starts_with(connApi))
                        continue;
                    const auto candConn = connectionOf(candidate);
                    if (!candConn)
                        return candConn.error();
                    const Connection& cc = **candConn;
                    const auto candRanks = ranksOf(cc);
                    if ((cc.empty() && !isDirectedApi(m_textList[m_opList[candidate.op].api]))
                        || std::binary_search(candRanks.begin(), candRanks.end(), static_cast<long long>(cur.rank))) {
                        candidate.seenRound = round;
                        candidate.layer = cur.layer; // every edge kind puts the peer on the searching node's layer
                        // An edge between nodes that both survive pruning joins their groups; the search never walks
                        // into a pruned node, so an edge to one joins nothing.
                        if (survivesPruning(cur) && survivesPruning(candidate))
                            join(curIndex, candIndex);
                        cur.connected = candidate.connected = true;
                        found = true;
                        ++k;
                        break;
                    }
                }
            }
            if (!found && m_rules.unconnected)
                m_rules.unconnected(CommNodeRef(*this, curIndex));
        }
    }
    return true;
}

void CommGraph::prune()
{
    // A removed node was never joined to a group (connect()), which is what msprobe's delete() (popping the node
    // from every neighbour) amounts to for the search.
    for (Node& n : m_nodes) {
        if (!survivesPruning(n))
            n.removed = true;
    }
}

std::uint32_t CommGraph::root(std::uint32_t i)
{
    while (m_nodes[i].parent != i) {
        m_nodes[i].parent = m_nodes[m_nodes[i].parent].parent; // path halving
        i = m_nodes[i].parent;
    }
    return i;
}

void CommGraph::join(std::uint32_t a, std::uint32_t b)
{
    const std::uint32_t ra = root(a);
    const std::uint32_t rb = root(b);
    if (ra == rb)
        return;
    m_nodes[rb].parent = ra;
    std::swap(m_nodes[ra].next, m_nodes[rb].next); // the two rings become one
}

std::vector<CommNodeRef> CommGraph::members(std::uint32_t start, std::vector<char>& inGroup) const
{
    // The ring of its group: every member once (a removed node is in no group but its own, and never a start).
    std::vector<std::uint32_t> queue;
    std::uint32_t i = start;
    do {
        queue.push_back(i);
        i = m_nodes[i].next;
    } while (i != start);
    // Ascending rank, then dump order: the nodes of a rank's walk lie in dump order.
    std::sort(queue.begin(), queue.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::pair { m_nodes[a].rank, a } < std::pair { m_nodes[b].rank, b };
    });
    std::vector<CommNodeRef> out;
    out.reserve(queue.size());
    for (const std::uint32_t member : queue) {
        inGroup[member] = 1;
        out.emplace_back(*this, member);
    }
    return out;
}

void CommGraph::search(const std::function<void(const std::vector<CommNodeRef>&)>& onGroup,
                       const std::function<bool()>& found) const
{
    // Each rank's nodes left after pruning, by layer (stable: dump order within a layer), one slice a rank.
    const std::vector<Walk>& rankList = ranks();
    std::vector<std::uint32_t> order;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> queues; // [head, end) in `order`
    queues.reserve(rankList.size());
    for (const Walk& w : rankList) {
        const auto begin = static_cast<std::uint32_t>(order.size());
        for (std::uint32_t i = w.begin; i < w.end; ++i) {
            if (!m_nodes[i].removed)
                order.push_back(i);
        }
        std::stable_sort(order.begin() + begin, order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return m_nodes[a].layer < m_nodes[b].layer; });
        queues.emplace_back(begin, static_cast<std::uint32_t>(order.size()));
    }
    std::vector<char> seen(m_nodes.size(), 0);
    std::vector<char> inGroup(m_nodes.size(), 0);
    auto anyLeft = [&] {
        return std::any_of(queues.begin(), queues.end(), [](const auto& q) { return q.first < q.second; });
    };
    while (anyLeft()) {
        std::vector<std::vector<CommNodeRef>> groups;
        std::vector<std::uint32_t> grouped; // to reset inGroup after the round
        for (auto& [head, end] : queues) {
            std::optional<std::uint32_t> node;
            while (head < end) {
                const std::uint32_t next = order[head++];
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
                for (const CommNodeRef& m : group)
                    grouped.push_back(m.index());
                groups.push_back(std::move(group));
            }
        }
        for (const std::uint32_t i : grouped)
            inGroup[i] = 0;
        for (const auto& group : groups) {
            for (const CommNodeRef& m : group)
                seen[m.index()] = 1;
            onGroup(group);
        }
        if (found())
            return;
    }
}

} // namespace probescope::compare::msprobe26
