// SPDX-License-Identifier: Apache-2.0
// Reading a .vis.db, stage 2: the graph list (one GROUP BY over tb_nodes) and the scan of tb_nodes' rows into the
// graphs' nodes, split into rowid ranges read at once on their own connections.
#include "core/graph/visdbread.h"

#include "core/graph/orderedjson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <iterator>
#include <limits>
#include <thread>
#include <tuple>

namespace probescope::graph::detail {

namespace {

using Json = nlohmann::ordered_json;

/// The common case of stringList without a JSON parser: ["a", "b"] with no escapes (a 1M-node db has 2M such
/// lists); nullopt sends anything else to the full parser.
std::optional<std::vector<std::string>> plainStringList(std::string_view text)
{
    std::vector<std::string> out;
    std::size_t i = 0;
    auto skip = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
            ++i;
    };
    skip();
    if (i >= text.size() || text[i++] != '[')
        return std::nullopt;
    skip();
    if (i < text.size() && text[i] == ']')
        return ++i, skip(), i == text.size() ? std::optional(out) : std::nullopt;
    for (;;) {
        skip();
        if (i >= text.size() || text[i++] != '"')
            return std::nullopt;
        const std::size_t start = i;
        while (i < text.size() && text[i] != '"') {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c == '\\' || c < 0x20)
                return std::nullopt;
            ++i;
        }
        if (i >= text.size())
            return std::nullopt;
        out.emplace_back(text.substr(start, i - start));
        ++i;
        skip();
        if (i >= text.size())
            return std::nullopt;
        if (text[i] == ',') {
            ++i;
            continue;
        }
        if (text[i++] != ']')
            return std::nullopt;
        skip();
        return i == text.size() ? std::optional(out) : std::nullopt;
    }
}

std::optional<std::uint8_t> nodeType(std::string_view text)
{
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v > 255)
        return std::nullopt;
    return static_cast<std::uint8_t>(v);
}

/// How many rowid ranges the scan of tb_nodes may be split into, and the row count from which it is split.
constexpr unsigned kMaxScanConnections = 4;
constexpr std::uint64_t kSplitFromRows = 200000;

/// tb_nodes' columns in kNodeColumns' order, then is_distributed (v26 with the node data) or NULL.
std::string nodeQuery(bool v26, const ReadOptions& options)
{
    // Without the node data, no column after input_data/output_data is read from the rows either: SQLite would walk
    // each row's overflow pages (its KBs of JSON) to reach them. The graph's key comes from graph_id; dump_data_dir
    // was read once per graph; is_distributed is msprobe's name test (db_utils.py).
    std::string sql = "SELECT ";
    for (const char* column : kNodeColumns) {
        const std::string_view c = column;
        const bool after = c == "input_data" || c == "output_data" || c == "data_source" || c == "dump_data_dir"
            || c == "step" || c == "rank";
        sql += !options.nodeData && after ? std::string("NULL") : std::string(c);
        sql += ", ";
    }
    sql += v26 && options.nodeData ? "is_distributed" : "NULL";
    sql += " FROM tb_nodes";
    return sql;
}

using RowidRange = std::optional<std::pair<std::int64_t, std::int64_t>>;

/// The scan is split by rowid into ranges read at once, each on its own connection (msprobe inserts each graph in
/// node_order, so a range is a run of consecutive rows of one or two graphs): the rows of a million-node db are
/// most of its open time, and a rowid range is read in page order like the whole table. A table without rowids,
/// or a small one, is read in one go.
/// The rows actually present come from the GROUP BY above (never max(rowid) - min(rowid): a rowid of 2^63 - 1
/// says nothing about the row count). Split points are rowids of the rows themselves (the k-th row by rowid, read
/// off the table's b-tree), so every range holds its share of rows however sparse the rowids are.
std::vector<RowidRange> scanRanges(const ReadOnlyDb& db, std::uint64_t totalRows, const ReadOptions& options)
{
    std::vector<RowidRange> ranges { std::nullopt };
    const unsigned cores = std::max(1u, std::min(kMaxScanConnections, std::thread::hardware_concurrency()));
    const std::uint64_t parts = options.scanConnections > 0
        ? std::min<std::uint64_t>(std::min(options.scanConnections, kMaxScanConnections), std::max<std::uint64_t>(1, totalRows))
        : (totalRows >= kSplitFromRows ? cores : 1);
    std::vector<std::int64_t> starts;
    if (parts > 1) {
        auto at = db.prepare("SELECT rowid FROM tb_nodes ORDER BY rowid LIMIT 1 OFFSET ?1");
        if (at) {
            for (std::uint64_t k = 0; k < parts; ++k) {
                (*at)->reset();
                (*at)->bind(1, static_cast<std::int64_t>(totalRows / parts * k));
                if (!(*at)->next())
                    break;
                const std::int64_t rowid = (*at)->integer(0);
                if (starts.empty() || rowid > starts.back())
                    starts.push_back(rowid);
            }
        }
    }
    if (starts.size() > 1) {
        ranges.clear();
        for (std::size_t k = 0; k < starts.size(); ++k) {
            const std::int64_t last = k + 1 < starts.size() ? starts[k + 1] - 1 : std::numeric_limits<std::int64_t>::max();
            ranges.emplace_back(std::pair(starts[k], last));
        }
    }
    return ranges;
}

/// The rows one range of the scan read, put together in range order once every range is done.
struct Chunk
{
    std::vector<std::vector<Node>> nodes;          // per graph
    std::vector<std::vector<std::int64_t>> orders; // node_order of each node as read
    std::vector<std::string> warnings;
    std::size_t moreWarnings = 0;
    std::optional<Diagnostic> error;
    bool cancelled = false;
};

/// One row of tb_nodes into its node (columns in kNodeColumns' order); `warn` is the chunk's capped warning.
template<typename Warn>
void readNodeRow(const Statement& s, const Graph& g, Node& n, bool v26, const ReadOptions& options, const Warn& warn)
{
    n.name = s.view(3);
    const std::string_view typeText = s.view(4);
    if (const auto t = nodeType(typeText)) {
        n.type = *t;
    } else {
        warn([&] { return g.id + ": node " + n.name + " has node_type \"" + std::string(typeText) + "\""; });
        n.type = 255;
    }
    n.upNode = s.view(5);
    if (auto subs = stringList(s.view(6)))
        n.subNodes = std::move(*subs);
    else
        warn([&] { return g.id + ": node " + n.name + ": sub_nodes is not a JSON list of names"; });
    if (!s.isNull(7)) {
        n.precision = s.number(7);
        n.precisionIsInteger = s.isInteger(7);
        if (!n.precision)
            warn([&] { return g.id + ": node " + n.name + ": precision_index \"" + s.text(7) + "\" is not a number"; });
    }
    n.overflowLevel = s.view(8);
    n.microStep = s.integer(9);
    if (auto link = stringList(s.view(10)))
        n.matchedLink = std::move(*link);
    else
        warn([&] { return g.id + ": node " + n.name + ": matched_node_link is not a JSON list of names"; });
    n.stackId = s.view(11);
    n.parallelMergeInfo = s.view(12);
    n.matchedDistributed = s.view(13);
    n.modified = !s.isNull(14) && s.integer(14) != 0;
    if (options.nodeData) {
        n.inputData = s.view(15);
        n.outputData = s.view(16);
        n.dumpDataDir = s.view(18);
        n.isDistributed = !s.isNull(21) && s.integer(21) != 0;
    } else {
        // Graph::dumpDataDir holds it once (a per-node copy of the same path was 2M allocations).
        n.isDistributed = v26 && n.name.rfind("Distributed", 0) == 0;
    }
}

/// The chunks' nodes appended to their graphs in range order (the table's order); returns each graph's node_order.
DbNodeOrders mergeChunks(std::vector<Chunk>& chunks, GraphFile& file)
{
    std::vector<std::vector<std::int64_t>> orders(file.graphs.size());
    for (std::size_t gi = 0; gi < file.graphs.size(); ++gi) {
        Graph& g = file.graphs[gi];
        g.nodes = std::move(chunks[0].nodes[gi]);
        orders[gi] = std::move(chunks[0].orders[gi]);
        for (std::size_t c = 1; c < chunks.size(); ++c) {
            auto& more = chunks[c].nodes[gi];
            if (more.empty())
                continue;
            if (g.nodes.empty()) {
                g.nodes = std::move(more);
                orders[gi] = std::move(chunks[c].orders[gi]);
                continue;
            }
            if (g.nodes.capacity() < g.nodes.size() + more.size())
                g.nodes.reserve(g.nodes.size() + more.size());
            std::move(more.begin(), more.end(), std::back_inserter(g.nodes));
            orders[gi].insert(orders[gi].end(), chunks[c].orders[gi].begin(), chunks[c].orders[gi].end());
            std::vector<Node>().swap(more);
        }
    }
    for (Chunk& chunk : chunks)
        file.takeWarnings(chunk.warnings, chunk.moreWarnings);
    return orders;
}

} // namespace

/// A JSON list of strings ('' = empty, as msprobe writes sub_nodes of a leaf); nullopt when it is something else.
std::optional<std::vector<std::string>> stringList(std::string_view text)
{
    std::vector<std::string> out;
    if (text.empty())
        return out;
    if (auto plain = plainStringList(text))
        return plain;
    const auto j = parseOrderedJson(text).first;
    if (!j || !j->is_array())
        return std::nullopt;
    for (const Json& e : *j) {
        if (!e.is_string())
            return std::nullopt;
        out.push_back(e.get<std::string>());
    }
    return out;
}

Result<DbGraphIndex> listDbGraphs(const ReadOnlyDb& db, const std::filesystem::path& path, const ReadOptions& options,
                                  GraphFile& file)
{
    // The graphs first (an index answers it), then one scan of the table in its own order: msprobe inserts each
    // graph in node_order, and a scan reads the pages in sequence where an index walk (ORDER BY node_order) jumps
    // between them (4 s instead of 0.4 s at a million rows). Rows are put in their graph by graph_id (a column before
    // the JSON) and sorted by node_order in memory.
    // (step, rank, data_source, rows, the graph's first rowid or nullopt in a table without rowids)
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string, std::int64_t, std::optional<std::int64_t>>> graphKeys;
    const bool hasRowid = static_cast<bool>(db.prepare("SELECT rowid FROM tb_nodes LIMIT 0"));
    {
        // The row count of each graph comes with it (the GROUP BY walks the index anyway): each graph's nodes are
        // allocated once, never moved while a million of them are read. Its first rowid finds its dump_data_dir below
        // by one b-tree lookup (a query by step and rank would scan a table without msprobe's indexes per graph).
        auto keys = db.prepare(std::string("SELECT step, rank, data_source, count(*), ") + (hasRowid ? "min(rowid)" : "NULL")
                               + " FROM tb_nodes GROUP BY step, rank, data_source");
        if (!keys)
            return keys.error();
        while ((*keys)->next())
            graphKeys.emplace_back((*keys)->integer(0), (*keys)->integer(1), (*keys)->text(2), (*keys)->integer(3),
                                   (*keys)->isNull(4) ? std::nullopt : std::optional((*keys)->integer(4)));
        if ((*keys)->error())
            return *(*keys)->error();
    }
    // A db without a node holds no graph: an error naming the file (an empty compare is no result to show).
    if (graphKeys.empty())
        return db.error("no graph in " + path.string() + ": tb_nodes has no row");
    // NPU before Bench within a (step, rank).
    std::stable_sort(graphKeys.begin(), graphKeys.end(), [](const auto& a, const auto& b) {
        if (std::get<0>(a) != std::get<0>(b))
            return std::get<0>(a) < std::get<0>(b);
        if (std::get<1>(a) != std::get<1>(b))
            return std::get<1>(a) < std::get<1>(b);
        return (std::get<2>(a) == "NPU") > (std::get<2>(b) == "NPU");
    });
    DbGraphIndex index;
    std::unordered_map<std::string, std::size_t>& graphOf = index.graphOf;
    std::vector<std::size_t>& graphRows = index.graphRows;
    std::unique_ptr<Statement> dirOfRow;
    if (!options.nodeData && hasRowid) {
        auto dir = db.prepare("SELECT dump_data_dir FROM tb_nodes WHERE rowid = ?1");
        if (!dir)
            return dir.error();
        dirOfRow = std::move(*dir);
    }
    for (const auto& [step, rank, source, rows, firstRowid] : graphKeys) {
        graphRows.push_back(static_cast<std::size_t>(std::max<std::int64_t>(0, rows)));
        Side side = Side::Npu;
        if (source == "Bench")
            side = Side::Bench;
        else if (source != "NPU")
            return db.error("tb_nodes: data_source is \"" + source + "\", not NPU or Bench");
        Graph& g = file.graphs.emplace_back();
        g.side = side;
        g.step = step;
        g.rank = rank;
        g.id = std::string(sideName(side)) + "_" + std::to_string(step) + "_" + std::to_string(rank);
        graphOf.emplace(g.id, file.graphs.size() - 1);
        if (dirOfRow && firstRowid) {
            dirOfRow->reset();
            dirOfRow->bind(1, *firstRowid);
            if (dirOfRow->next())
                g.dumpDataDir = dirOfRow->text(0);
            if (dirOfRow->error())
                return *dirOfRow->error();
        }
    }
    return index;
}

Result<DbNodeOrders> scanDbNodes(const ReadOnlyDb& db, const std::filesystem::path& path, const DbGraphIndex& index,
                                 bool v26, const ReadOptions& options, GraphFile& file)
{
    const std::unordered_map<std::string, std::size_t>& graphOf = index.graphOf;
    const std::vector<std::size_t>& graphRows = index.graphRows;
    const std::string sql = nodeQuery(v26, options);
    std::uint64_t totalRows = 0;
    for (const std::size_t rows : graphRows)
        totalRows += rows;
    const std::vector<RowidRange> ranges = scanRanges(db, totalRows, options);
    if (options.progress)
        options.progress->setRange(totalRows);
    std::atomic<std::uint64_t> rowsRead { 0 };
    std::atomic<bool> stop { false };
    const auto cancelled = [&] {
        return makeError("graph.cancelled", fileLocation(path),
                         "opening the graph file was cancelled");
    };
    if (options.progress && options.progress->isCancelled())
        return cancelled();

    std::vector<Chunk> chunks(ranges.size());
    const std::vector<Graph>& graphs = file.graphs;
    auto scan = [&](std::size_t which) {
        Chunk& chunk = chunks[which];
        // The chunk's warnings under the file's cap: a text is made only while there is room for it.
        const auto warn = [&chunk](auto&& make) {
            if (chunk.warnings.size() < kMaxGraphWarnings)
                chunk.warnings.push_back(make());
            else
                ++chunk.moreWarnings;
        };
        chunk.nodes.resize(graphs.size());
        chunk.orders.resize(graphs.size());
        std::shared_ptr<ReadOnlyDb> own;
        const ReadOnlyDb* conn = &db;
        std::string query = sql;
        if (ranges[which]) {
            if (which > 0) {
                auto opened2 = ReadOnlyDb::open(path, "graph.db", options.progress);
                if (!opened2) {
                    chunk.error = opened2.error();
                    return;
                }
                own = *opened2;
                conn = own.get();
            }
            query += " WHERE rowid BETWEEN " + std::to_string(ranges[which]->first) + " AND "
                + std::to_string(ranges[which]->second);
        }
        auto st = conn->prepare(query);
        if (!st) {
            chunk.error = st.error();
            return;
        }
        Statement& s = **st;
        // Reserved for the whole graph: untouched capacity costs address space only, and the chunks are appended to
        // the first one's vectors without a reallocation.
        std::string_view lastGraph;
        std::size_t lastIndex = 0;
        std::uint64_t local = 0;
        while (s.next()) {
            if ((++local & 4095) == 0) {
                const std::uint64_t done = rowsRead.fetch_add(4096) + 4096;
                if (options.progress) {
                    options.progress->advance(done);
                    if (options.progress->isCancelled())
                        stop = true;
                }
                if (stop) {
                    chunk.cancelled = true;
                    return;
                }
            }
            const std::string_view graphId = s.view(1);
            std::size_t gi = lastIndex;
            if (lastGraph.empty() || graphId != lastGraph) {
                const auto where = graphOf.find(std::string(graphId));
                if (where == graphOf.end()) {
                    warn([&] {
                        return "tb_nodes row " + s.text(0) + ": graph_id " + std::string(graphId)
                            + " is not data_source_step_rank of any graph; row left out";
                    });
                    lastGraph = {};
                    continue;
                }
                gi = where->second;
                // The view dies with the row: the graph's own id is kept instead.
                lastGraph = graphs[gi].id;
                lastIndex = gi;
                if (chunk.nodes[gi].capacity() == 0) {
                    chunk.nodes[gi].reserve(graphRows[gi]);
                    chunk.orders[gi].reserve(graphRows[gi]);
                }
            }
            const Graph& g = graphs[gi];
            Node& n = chunk.nodes[gi].emplace_back();
            const std::int64_t order = s.integer(2);
            readNodeRow(s, g, n, v26, options, warn);
            chunk.orders[gi].push_back(order);
        }
        if (s.error())
            chunk.error = *s.error();
        else if (local > 0)
            rowsRead.fetch_add(local & 4095);
    };
    {
        std::vector<std::thread> workers;
        for (std::size_t c = 1; c < chunks.size(); ++c)
            workers.emplace_back(scan, c);
        scan(0);
        for (std::thread& t : workers)
            t.join();
    }
    // A cancel interrupts SQLite too (the progress handler): its failed step is the cancel, not a damaged file.
    if (options.progress && options.progress->isCancelled())
        return cancelled();
    for (const Chunk& chunk : chunks) {
        if (chunk.error)
            return *chunk.error;
        if (chunk.cancelled)
            return cancelled();
    }
    if (options.progress)
        options.progress->advance(rowsRead.load());
    return mergeChunks(chunks, file);
}

} // namespace probescope::graph::detail
