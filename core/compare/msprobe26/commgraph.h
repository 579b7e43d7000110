// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/jsondocument.h"
#include "core/util/diagnostic.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
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

/**
 * @brief A CommunicationNode as a tool gives it to the graph (CommGraph::append): one communication op of the rank
 * the graph walks. The graph does not keep this struct: it interns the texts and keeps 48 bytes a node
 * (issue 37: 10,000 ranks of several such ops each).
 */
struct CommNode
{
    std::string name;      ///< the op name; the node's id is "<rank>.<name>"
    std::string api;       ///< the op name's second dot part ("all_reduce")
    std::string callCount; ///< its third part ("0"), the exact text
    CommNodeType type = CommNodeType::Link;
    std::size_t dataIndex = 0; ///< the caller's data node of the op itself
    /// Pruning keeps the node (-da: it diverges; overflow_check: NaN/Inf in its inputs or outputs).
    bool keep = false;
    std::vector<std::size_t> computeOps; ///< the caller's interesting compute ops before this node (data indices)
    /// find_connected_nodes of the node, computed by the tool while the op's data is at hand; an error is kept for
    /// the moment msprobe meets it (connect() returns it then).
    Result<CommConnection> connection = CommConnection {};
};

class CommGraph;

/// A node of the graph as the rules and the search see it (a graph and an index: valid while the graph is).
class CommNodeRef
{
public:
    CommNodeRef(const CommGraph& graph, std::uint32_t index)
        : m_graph(&graph)
        , m_index(index)
    {
    }
    int rank() const;
    std::string_view name() const;
    /// "<rank>.<op name>", made on demand.
    std::string id() const;
    const std::string& api() const;
    CommNodeType type() const;
    std::size_t dataIndex() const;
    /// Its layer after connect() (pairing moves nodes).
    int layer() const;
    /// The interesting compute ops before it (the caller's data indices).
    std::span<const std::size_t> computeOps() const;
    std::uint32_t index() const { return m_index; }

private:
    const CommGraph* m_graph;
    std::uint32_t m_index;
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
    /// A peer rank that has no nodes at all (no rank table / dump): -da stops (msprobe's KeyError), overflow_check
    /// skips it (nullopt).
    std::function<std::optional<Diagnostic>(const CommNodeRef&, long long target)> missingPeer;
    /// "Cannot find connected communication node" (msprobe logs it).
    std::function<void(const CommNodeRef&)> unconnected;
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
    /// What the passes need of one rank (about 40 bytes; an error, rare, lies in m_walkErrors).
    struct RankWalk
    {
        static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
        static constexpr std::uint32_t kNoError = static_cast<std::uint32_t>(-1);
        int rank = 0;
        bool empty = false;                ///< no ops: "Rank N has no dump data!"
        bool preFailed = false;            ///< the first pass stops at m_walkErrors[error]; else the second does
        std::uint32_t error = kNoError;    ///< where a pass stops on this rank
        std::size_t preFound = kNone;      ///< the first pass's node
        std::size_t afterComm = kNone;     ///< the first interesting compute op after its last communication op
    };
    void walkCommunication(RankWalk& walk, int rank, const std::vector<Op>& ops, std::size_t first);
    void fail(RankWalk& walk, Diagnostic error, bool pre);

    /// -da skips an ignored op before testing for communication in the first pass; overflow_check tests first.
    bool m_ignoredBeforeCommunication;
    /// In the order of the calls; run() takes each rank's last walk, in ascending rank order.
    std::vector<RankWalk> m_walks;
    std::vector<Diagnostic> m_walkErrors;
};

class CommGraph
{
public:
    explicit CommGraph(CommGraphRules rules);
    CommGraph(const CommGraph&) = delete; // its connection index refers to it
    CommGraph& operator=(const CommGraph&) = delete;

    /**
     * @brief Starts a rank's nodes (every rank of the run, with or without communication ops, is begun once; msprobe
     * iterates them in ascending order). A rank begun again drops the nodes of its earlier walk.
     */
    void beginRank(int rank);
    /// Appends a node to the rank begun last (rank 0 if none was; dump order): add_next puts it one layer after the
    /// previous one.
    void append(CommNode node);

    /// _connect_comm_nodes: every rank but the last searches its peers. The edges are not kept: what the search
    /// asks of them is the groups of nodes joined by edges between nodes that prune() keeps (a union-find).
    Result<bool> connect();
    /// _pruning: a node neither kept nor holding compute ops leaves the graph (its edges with it). search() needs it.
    void prune();
    /**
     * _search_first_*: round by round each rank's next unseen node (by layer) starts a group unless a group of this
     * round holds it; `onGroup` gets the members of each group (ascending rank, then dump order: msprobe's set
     * order depends on the hash seed). Stops after the first round in which `found()` is true.
     */
    void search(const std::function<void(const std::vector<CommNodeRef>&)>& onGroup,
                const std::function<bool()>& found) const;

private:
    friend class CommNodeRef;
    static constexpr std::uint32_t kErrorBit = 0x80000000u;

    /// A node as kept: its texts interned, its connection shared with the nodes that have the same one.
    struct Node
    {
        std::int32_t rank = 0;
        std::uint32_t op = 0;          ///< m_opList
        std::uint32_t connection = 0;  ///< m_connections, or kErrorBit | m_connectionErrors
        std::int32_t layer = 0;
        std::int32_t seenRound = 0;
        std::uint32_t computeBegin = 0; ///< m_computeOps
        std::uint32_t computeCount = 0;
        CommNodeType type = CommNodeType::Link;
        bool keep = false;
        bool removed = false;
        bool connected = false; ///< paired with some peer (msprobe's `connected`)
        std::size_t dataIndex = 0;
        /// Its group (a union-find over the pairs of nodes that prune() keeps): the parent, and the next member
        /// in a ring of the group's members.
        std::uint32_t parent = 0;
        std::uint32_t next = 0;
    };
    /// An op name with its API and call count (the same names recur on every rank).
    struct OpText
    {
        std::string name;
        std::string callCount;
        std::uint32_t api = 0; ///< m_textList
    };
    /// A CommConnection: its ranks a slice of m_connectionRanks.
    struct Connection
    {
        std::uint32_t ranksBegin = 0;
        std::uint32_t ranksCount = 0;
        std::uint32_t api = 0; ///< m_textList
        CommNodeType type = CommNodeType::Link;
        bool otherValues = false;
        bool empty() const { return ranksCount == 0 && !otherValues; }
    };
    /// One walk of a rank: its nodes are m_nodes[begin, end).
    struct Walk
    {
        int rank = 0;
        std::uint32_t begin = 0;
        std::uint32_t end = 0;
    };
    struct ConnectionHash
    {
        const CommGraph* graph;
        std::size_t operator()(std::uint32_t c) const;
    };
    struct ConnectionEqual
    {
        const CommGraph* graph;
        bool operator()(std::uint32_t a, std::uint32_t b) const;
    };

    std::uint32_t text(std::string_view t);
    std::uint32_t opText(const CommNode& node);
    std::uint32_t connection(Result<CommConnection> c);
    std::span<const long long> ranksOf(const Connection& c) const;
    /// The ranks (ascending) with their last walk: what connect() and search() iterate.
    const std::vector<Walk>& ranks() const;
    /// prune()'s rule: a node neither kept nor holding compute ops leaves the graph.
    static bool survivesPruning(const Node& n) { return n.keep || n.computeCount != 0; }
    std::uint32_t root(std::uint32_t i);
    void join(std::uint32_t a, std::uint32_t b);
    std::vector<CommNodeRef> members(std::uint32_t start, std::vector<char>& inGroup) const;

    CommGraphRules m_rules;
    std::deque<Node> m_nodes; ///< no copy of the whole when it grows
    std::vector<std::size_t> m_computeOps;
    std::vector<std::string> m_textList;
    std::unordered_map<std::string, std::uint32_t> m_texts;
    std::vector<OpText> m_opList;
    std::unordered_map<std::string, std::uint32_t> m_ops; ///< name, api and call count, '\0' apart
    std::vector<Connection> m_connections;
    std::vector<long long> m_connectionRanks;
    std::unordered_set<std::uint32_t, ConnectionHash, ConnectionEqual> m_connectionIndex;
    std::vector<Diagnostic> m_connectionErrors;
    std::vector<Walk> m_walks;      ///< in the order of beginRank
    mutable std::vector<Walk> m_rankWalks; ///< ranks(), made once
};

} // namespace probescope::compare::msprobe26
