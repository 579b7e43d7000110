// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/jsondocument.h"
#include "core/util/diagnostic.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/**
 * The communication graph of msprobe 26's cross-rank searches: `compare -da` (find_first/analyzer.py) and
 * `overflow_check` (overflow_check/analyzer.py) build the same graph with the same passes — every rank's
 * communication ops chained in dump order (one layer each), paired across ranks (send/recv, broadcast, all_reduce
 * ...: a pair shares a layer), pruned, then searched round by round over the groups of paired nodes. What a node
 * holds and what makes it interesting differs between the two; CommGraphRules says where the two tools' rules
 * differ. This is the one builder of both (docs/msprobe26-da.md, docs/overflow-check.md).
 */
namespace probescope::compare::msprobe26 {

enum class CommNodeType : std::uint8_t { Src, Dst, Link };

/// A Python set of small ints, which iterates in ascending order: a sorted vector (8 bytes a rank; a group of 8 ranks
/// in a std::set took 384, for every communication op of every rank at 10,000 ranks).
class RankSet
{
public:
    void insert(long long rank)
    {
        if (m_ranks.empty() || m_ranks.back() < rank) { // the usual case: ranks listed in ascending order
            m_ranks.push_back(rank);
            return;
        }
        const auto it = std::lower_bound(m_ranks.begin(), m_ranks.end(), rank);
        if (*it != rank)
            m_ranks.insert(it, rank);
    }
    std::size_t count(long long rank) const { return std::binary_search(m_ranks.begin(), m_ranks.end(), rank) ? 1 : 0; }
    bool empty() const { return m_ranks.empty(); }
    std::size_t size() const { return m_ranks.size(); }
    std::vector<long long>::const_iterator begin() const { return m_ranks.begin(); }
    std::vector<long long>::const_iterator end() const { return m_ranks.end(); }

private:
    std::vector<long long> m_ranks;
};

/// find_connected_nodes: the peer ranks, the API a peer has, the type a peer has.
struct CommConnection
{
    RankSet ranks; ///< a Python set of small ints iterates in ascending order
    /// The Python set also held values that are no rank (None, a text): it is not empty, so it is not "every rank".
    bool otherValues = false;
    std::string api; ///< "Distributed." + the peer API
    CommNodeType type = CommNodeType::Link;

    bool empty() const { return ranks.empty() && !otherValues; }
};

/// A CommunicationNode: one communication op of one rank.
struct CommNode
{
    std::string id; ///< "<rank>.<op name>"
    int rank = 0;
    std::string api;       ///< the op name's second dot part ("all_reduce")
    std::string callCount; ///< its third part ("0")
    CommNodeType type = CommNodeType::Link;
    std::size_t dataIndex = 0; ///< the caller's data node of the op itself
    /// Pruning keeps the node (-da: it diverges; overflow_check: NaN/Inf in its inputs or outputs).
    bool keep = false;
    std::vector<std::size_t> computeOps; ///< the caller's interesting compute ops before this node (data indices)
    int layer = 0;
    std::size_t order = 0; ///< position among its rank's nodes (dump order)
    // Set by the graph:
    std::vector<std::uint32_t> edges; ///< link, src and dst neighbours (node indices); no duplicates
    bool removed = false;
    int seenRound = 0;
    bool connected = false; ///< paired with some peer (msprobe's `connected`)
    std::optional<Result<CommConnection>> connection; ///< computed on first use, as msprobe caches it
};

struct CommGraphRules
{
    /// -da: a candidate peer is any node of the target rank whose id starts with "<rank>.<api>" (msprobe's prefix
    /// test). overflow_check: a node of exactly that API, one per call count (its {api: {rank: {call_cnt: node}}}
    /// index keeps the last node of a call count, in the place of the first).
    bool prefixMatch = true;
    /// -da's "layer overflow fix": a searching rank's node is put one layer after the previous one when pairing
    /// moved that one to its layer or beyond. overflow_check has no such fix.
    bool layerOverflowFix = true;
    /// Which unseen node of a search round starts a group. -da: one not yet in a group of this round. overflow_check
    /// inverts the test (`node_id in all_ids_in_groups`): only the round's first node, and nodes already grouped
    /// (a duplicate group); every other node popped in that round is dropped unexamined.
    bool onlyGroupedNodesStartGroups = false;
    /// find_connected_nodes of a node (the caller reads its data).
    std::function<Result<CommConnection>(const CommNode&)> connectionOf;
    /// A peer rank that has no nodes at all (no rank table / dump): -da stops (msprobe's KeyError), overflow_check
    /// skips it (nullopt).
    std::function<std::optional<Diagnostic>(const CommNode&, long long target)> missingPeer;
    /// "Cannot find connected communication node" (msprobe logs it).
    std::function<void(const CommNode&)> unconnected;
};

/// Python's == between a value of the dump or rank table and an int rank (an int, a float or a bool can equal it; a
/// text never does, which is why -da's table values never name their own rank).
bool equalsRank(std::optional<dump::JsonValue> v, int rank);

/// Does an op name hold one of msprobe's communication keywords (send, recv, broadcast, all_reduce, ...)? Both
/// tools then test their own name prefixes.
bool hasCommunicationKeyword(std::string_view name);
/// send, recv, isend, irecv, broadcast, scatter, gather, send_object_list, recv_object_list (DIRECTED_API).
bool isDirectedApi(const std::string& api);
/// The API a peer of `api` has: send <-> recv, isend <-> irecv, send/recv_object_list; others themselves.
std::string peerApi(const std::string& api);

/// Writes the result of a search as OUT/<prefix><time_ns>.json (msprobe's diff_analyze_ / anomaly_analyze_ names)
/// through the one output writer: a taken name takes the next nanosecond. Errors (id `errorId`) name the file.
Result<std::filesystem::path> writeAnalysisFile(const std::filesystem::path& outDir, const std::string& prefix,
                                                std::string_view text, const std::string& errorId);

class CommGraph;

/**
 * @brief The three passes of both searches (`_pre_analyze`, `_analyze`, `_post_analyze`): before communication,
 * through the communication graph, after it; the first pass that finds a node answers. `what` is the word of
 * msprobe's log lines ("diff" for -da, "anomaly" for overflow_check).
 *
 * The walk over a rank's ops is this one for both tools: addRank() takes a rank's ops once (its first interesting
 * compute op before communication, or its communication nodes and the interesting compute ops between and after
 * them) and keeps only what the passes need, so a caller can let the rank's data go after the call (-da at 10,000
 * ranks, issue 37). What an op is and which ops are interesting are the tool's rules (the virtual functions below).
 */
class CommSearch
{
public:
    virtual ~CommSearch() = default;
    /// The result text, or nullopt ("Cannot find any <what> node, no need to generate analyze file.").
    Result<std::optional<std::string>> run();

protected:
    /// One op of a rank's dump or rank table, in file order (a repeated key collapsed as Python's dict does).
    using Op = std::pair<std::string_view, dump::JsonValue>;

    CommSearch(std::string what, std::vector<std::string>* log, bool ignoredBeforeCommunication)
        : m_what(std::move(what))
        , m_log(log)
        , m_ignoredBeforeCommunication(ignoredBeforeCommunication)
    {
    }

    /**
     * @brief Walks the ops of one rank. run() takes the ranks in ascending order whatever the order of the calls; a
     * rank walked twice keeps its last walk. Errors are kept and returned by run() where msprobe's pass stops on them
     * (an error of a pass that does not run is never seen, as in msprobe).
     */
    void addRank(int rank, const std::vector<Op>& ops);

    virtual bool isCommunicationOp(std::string_view name) const = 0;
    virtual bool isIgnoredOp(std::string_view name) const = 0;
    /// A compute op that is not ignored: the index of its data node when it is interesting (-da: it diverges;
    /// overflow_check: clean inputs and NaN/Inf output), else nullopt. `beforeCommunication`: the first pass.
    virtual Result<std::optional<std::size_t>> computeNode(int rank, std::string_view name, dump::JsonValue data,
                                                           int subLayer, bool beforeCommunication) = 0;
    /// A communication op: its node (id, rank, api, callCount, type, keep and its data node set), or where msprobe
    /// stops on it.
    virtual Result<CommNode> commNode(int rank, std::string_view name, dump::JsonValue data, int subLayer) = 0;
    /// The graph of the second pass (the tool's rules).
    virtual CommGraph& graph() = 0;
    /// _search_first_*: the second pass's search over graph(), adding to m_found.
    virtual void searchGraph() = 0;
    virtual std::string resultJson() = 0;
    void say(std::string line);

    std::string m_what;
    std::vector<std::string>* m_log;
    std::vector<std::size_t> m_found; ///< the caller's data nodes found

private:
    /// What the passes need of one rank.
    struct RankWalk
    {
        bool empty = false;                   ///< no ops: "Rank N has no dump data!"
        std::optional<Diagnostic> preError;   ///< the first pass stops here
        std::optional<std::size_t> preFound;  ///< the first pass's node
        std::optional<Diagnostic> commError;  ///< the second pass stops here (its nodes are in graph())
        std::vector<std::size_t> afterComm;   ///< interesting compute ops after its last communication op
    };
    void walkCommunication(RankWalk& walk, int rank, const std::vector<Op>& ops, std::size_t first);

    /// -da skips an ignored op before testing for communication in the first pass; overflow_check tests first.
    bool m_ignoredBeforeCommunication;
    std::map<int, RankWalk> m_walks;
};

class CommGraph
{
public:
    explicit CommGraph(CommGraphRules rules);

    /// Every rank of the run, with or without communication ops, in the order msprobe iterates them (ascending).
    void addRank(int rank);
    /// The rank with no nodes (walked again).
    void clearRank(int rank);
    /// Appends a node to its rank (dump order): add_next puts it one layer after the previous one.
    CommNode& append(CommNode node);

    /// _connect_comm_nodes: every rank but the last searches its peers.
    Result<bool> connect();
    /// _pruning: a node neither kept nor holding compute ops leaves the graph (its edges with it).
    void prune();
    /**
     * _search_first_*: round by round each rank's next unseen node (by layer) starts a group unless a group of this
     * round holds it; `onGroup` gets the members of each group (ascending rank, then dump order: msprobe's set
     * order depends on the hash seed). Stops after the first round in which `found()` is true.
     */
    void search(const std::function<void(const std::vector<const CommNode*>&)>& onGroup,
                const std::function<bool()>& found) const;

    const std::vector<CommNode>& nodes() const { return m_nodes; }
    const CommNode* find(const std::string& id) const;

private:
    std::vector<const CommNode*> members(std::uint32_t start, std::vector<char>& inGroup) const;

    CommGraphRules m_rules;
    std::vector<CommNode> m_nodes;
    std::map<int, std::vector<std::uint32_t>> m_ranks; ///< rank -> its nodes in dump order
};

} // namespace probescope::compare::msprobe26
