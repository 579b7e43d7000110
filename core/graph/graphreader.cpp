// SPDX-License-Identifier: Apache-2.0
#include "core/graph/graphreader.h"

#include "core/graph/orderedjson.h"
#include "core/graph/sqlitedb.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <iterator>
#include <limits>
#include <thread>
#include <tuple>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace probescope::graph {

namespace {

using detail::ReadOnlyDb;
using detail::Statement;
using Json = nlohmann::ordered_json;

std::optional<Json> parseJson(std::string_view text)
{
    return detail::parseOrderedJson(text).first;
}

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

/// A JSON list of strings ('' = empty, as msprobe writes sub_nodes of a leaf); nullopt when it is something else.
std::optional<std::vector<std::string>> stringList(std::string_view text)
{
    std::vector<std::string> out;
    if (text.empty())
        return out;
    if (auto plain = plainStringList(text))
        return plain;
    const auto j = parseJson(text);
    if (!j || !j->is_array())
        return std::nullopt;
    for (const Json& e : *j) {
        if (!e.is_string())
            return std::nullopt;
        out.push_back(e.get<std::string>());
    }
    return out;
}

std::vector<std::int64_t> intList(std::string_view text)
{
    std::vector<std::int64_t> out;
    const auto j = parseJson(text);
    if (j && j->is_array())
        for (const Json& e : *j)
            if (e.is_number_integer())
                out.push_back(e.get<std::int64_t>());
    return out;
}

std::optional<std::uint8_t> nodeType(std::string_view text)
{
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v > 255)
        return std::nullopt;
    return static_cast<std::uint8_t>(v);
}

void finishColours(GraphFile& file)
{
    const char* what = file.version == MsprobeVersion::V12Vis ? "Colors" : "node_colors";
    if (auto parsed = parseNodeColours(file.config.nodeColorsText)) {
        file.colours = std::move(*parsed);
    } else {
        file.warn([&] {
            return std::string(what) + " of " + file.path + " is not a JSON object of colour bands; msprobe's default bands are used";
        });
        file.colours.clear();
    }
    // A band whose value is no [lo, hi] pair of numbers colours nothing: said per band (the unmatched grey of
    // every version has no value; any other band without one is unreadable). A compare file with no readable band
    // at all would show every node without a verdict: msprobe's default bands are used instead, with the warning.
    std::size_t ranged = 0;
    for (const ColourBand& b : file.colours) {
        if (b.lo && b.hi) {
            ++ranged;
            continue;
        }
        const bool unmatchedBand = b.level == "unmatched node" || b.colour == "#C7C7C7";
        if (!unmatchedBand)
            file.warn([&] {
                return std::string(what) + " of " + file.path + ": band " + b.colour
                    + " has no readable value [lo, hi]; it colours no node";
            });
    }
    if (ranged == 0 && !file.colours.empty() && file.isCompare()) {
        file.warn([&] {
            return std::string(what) + " of " + file.path + " has no readable colour band; msprobe's default bands are used";
        });
        file.colours.clear();
    }
    if (file.colours.empty() && file.isCompare())
        file.colours = defaultColours(file.version, file.config.task);
}

constexpr const char* kNodeColumns[] = {
    "id", "graph_id", "node_order", "node_name", "node_type", "up_node", "sub_nodes", "precision_index",
    "overflow_level", "micro_step_id", "matched_node_link", "stack_id", "parallel_merge_info", "matched_distributed",
    "modified", "input_data", "output_data", "data_source", "dump_data_dir", "step", "rank",
};

/// How many rowid ranges the scan of tb_nodes may be split into, and the row count from which it is split.
constexpr unsigned kMaxScanConnections = 4;
constexpr std::uint64_t kSplitFromRows = 200000;

Result<std::shared_ptr<const GraphFile>> readDb(const std::filesystem::path& path, const ReadOptions& options)
{
    auto opened = ReadOnlyDb::open(path, "graph.db", options.progress);
    if (!opened)
        return opened.error();
    const ReadOnlyDb& db = **opened;
    for (const char* table : { "tb_nodes", "tb_stack", "tb_config" })
        if (!db.hasTable(table))
            return db.error(std::string("not a msprobe .vis.db: it has no table ") + table);
    for (const char* column : kNodeColumns)
        if (!db.hasColumn("tb_nodes", column))
            return db.error(std::string("not a msprobe .vis.db: tb_nodes has no column ") + column);
    auto file = std::make_shared<GraphFile>();
    file->path = path.string();
    if (auto wal = detail::walWarning(path))
        file->warn([&] { return std::move(*wal); });
    const bool v26 = db.hasColumn("tb_nodes", "is_distributed");
    file->version = v26 ? MsprobeVersion::V26 : MsprobeVersion::V8;

    // tb_config: one row (msprobe inserts id '1' with INSERT OR IGNORE).
    {
        auto st = db.prepare("SELECT graph_type, task, tool_tip, micro_steps, overflow_check, node_colors, rank_list,"
                             " step_list FROM tb_config ORDER BY id LIMIT 1");
        if (!st)
            return st.error();
        Statement& s = **st;
        if (s.next()) {
            GraphConfig& c = file->config;
            c.graphType = s.text(0);
            c.task = s.text(1);
            c.toolTip = s.text(2);
            c.microSteps = s.isNull(3) ? 1 : s.integer(3);
            c.overflowCheck = !s.isNull(4) && s.integer(4) != 0;
            c.nodeColorsText = s.text(5);
            c.rankList = intList(s.text(6));
            c.stepList = intList(s.text(7));
        } else if (s.error()) {
            return *s.error();
        } else {
            file->warn([] { return std::string("tb_config has no row"); });
        }
    }

    // tb_stack: id -> frames.
    std::unordered_map<std::string, std::vector<std::string>> stacks;
    {
        auto st = db.prepare("SELECT id, stack_info FROM tb_stack");
        if (!st)
            return st.error();
        Statement& s = **st;
        while (s.next()) {
            auto frames = stringList(s.text(1));
            if (!frames) {
                file->warn([&] { return "tb_stack row " + s.text(0) + ": stack_info is not a JSON list of strings"; });
                frames.emplace();
            }
            stacks.emplace(s.text(0), std::move(*frames));
        }
        if (s.error())
            return *s.error();
    }

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
    std::unordered_map<std::string, std::size_t> graphOf;
    std::vector<std::size_t> graphRows;
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
        Graph& g = file->graphs.emplace_back();
        g.side = side;
        g.step = step;
        g.rank = rank;
        g.id = std::string(sideName(side)) + "_" + std::to_string(step) + "_" + std::to_string(rank);
        graphOf.emplace(g.id, file->graphs.size() - 1);
        if (dirOfRow && firstRowid) {
            dirOfRow->reset();
            dirOfRow->bind(1, *firstRowid);
            if (dirOfRow->next())
                g.dumpDataDir = dirOfRow->text(0);
            if (dirOfRow->error())
                return *dirOfRow->error();
        }
    }
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

    // The scan is split by rowid into ranges read at once, each on its own connection (msprobe inserts each graph in
    // node_order, so a range is a run of consecutive rows of one or two graphs): the rows of a million-node db are
    // most of its open time, and a rowid range is read in page order like the whole table. A table without rowids,
    // or a small one, is read in one go.
    // The rows actually present come from the GROUP BY above (never max(rowid) - min(rowid): a rowid of 2^63 - 1
    // says nothing about the row count). Split points are rowids of the rows themselves (the k-th row by rowid, read
    // off the table's b-tree), so every range holds its share of rows however sparse the rowids are.
    std::uint64_t totalRows = 0;
    for (const std::size_t rows : graphRows)
        totalRows += rows;
    std::vector<std::optional<std::pair<std::int64_t, std::int64_t>>> ranges { std::nullopt };
    {
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
    }
    if (options.progress)
        options.progress->setRange(totalRows);
    std::atomic<std::uint64_t> rowsRead { 0 };
    std::atomic<bool> stop { false };
    const auto cancelled = [&] {
        return makeError("graph.cancelled", SourceLocation { path.string(), std::nullopt, 0, 0 },
                         "opening the graph file was cancelled");
    };
    if (options.progress && options.progress->isCancelled())
        return cancelled();

    struct Chunk
    {
        std::vector<std::vector<Node>> nodes;          // per graph
        std::vector<std::vector<std::int64_t>> orders; // node_order of each node as read
        std::vector<std::string> warnings;
        std::size_t moreWarnings = 0;
        std::optional<Diagnostic> error;
        bool cancelled = false;
    };
    std::vector<Chunk> chunks(ranges.size());
    const std::vector<Graph>& graphs = file->graphs;
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
    std::vector<std::vector<std::int64_t>> orders(file->graphs.size());
    for (std::size_t gi = 0; gi < file->graphs.size(); ++gi) {
        Graph& g = file->graphs[gi];
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
        file->takeWarnings(chunk.warnings, chunk.moreWarnings);
    // tb_stack ids to each graph's own list of distinct stacks (consecutive nodes often share one).
    for (Graph& g : file->graphs) {
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
                file->warn([&] { return g.id + ": node " + n.name + ": stack_id " + n.stackId + " is not in tb_stack"; });
                continue;
            }
            lastId = n.stackId;
            lastStack = n.stack;
        }
    }
    for (std::size_t gi = 0; gi < file->graphs.size(); ++gi) {
        Graph& g = file->graphs[gi];
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
                file->warn([&] {
                    return g.id + ": node_order " + std::to_string(orders[gi][k]) + " of " + g.nodes[k].name + " where "
                        + std::to_string(k) + " was expected";
                });
    }
    file->dataDeferred = !options.nodeData;
    // Each graph is linked on its own (NPU and bench at once); their warnings are gathered in graph order.
    {
        std::vector<GraphFile> scratch(file->graphs.size());
        std::atomic<std::size_t> next { 0 };
        auto link = [&] {
            for (std::size_t gi = next++; gi < file->graphs.size(); gi = next++)
                linkNodes(scratch[gi], file->graphs[gi]);
        };
        const unsigned cores = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
        std::vector<std::thread> workers;
        for (unsigned t = 1; t < std::min<std::size_t>(cores, file->graphs.size()); ++t)
            workers.emplace_back(link);
        link();
        for (std::thread& t : workers)
            t.join();
        for (GraphFile& s2 : scratch)
            file->takeWarnings(s2.warnings, s2.moreWarnings);
    }
    finishColours(*file);
    assignStatuses(*file);
    // The cap is applied to every warning, linking's included: one summary line for the rest.
    file->closeWarnings();
    return std::shared_ptr<const GraphFile>(std::move(file));
}

// ---- .vis (msprobe 1.2.x JSON) ----

std::int64_t numberAfter(std::string_view name, std::string_view word)
{
    const auto at = name.find(word);
    if (at == std::string_view::npos)
        return 0;
    std::int64_t v = 0;
    const char* begin = name.data() + at + word.size();
    std::from_chars(begin, name.data() + name.size(), v);
    return v;
}

std::string jsonText(const Json& j)
{
    // msprobe stores input_data/output_data with Python's json.dumps defaults; here the text only has to be the
    // same JSON object (docs/graph.md), so nlohmann's compact form is kept.
    return j.is_null() ? std::string("{}") : j.dump();
}

std::optional<std::string> readVisGraph(const Json& g, Side side, std::int64_t step, std::int64_t rank, GraphFile& file)
{
    if (!g.is_object())
        return std::string(sideName(side)) + " is not a JSON object";
    const auto nodesIt = g.find("node");
    const auto rootIt = g.find("root");
    if (nodesIt == g.end() || !nodesIt->is_object())
        return std::string(sideName(side)) + ": \"node\" (an object of nodes) is missing";
    if (rootIt == g.end() || !rootIt->is_string())
        return std::string(sideName(side)) + ": \"root\" (a node name) is missing";
    const Json& nodes = *nodesIt;
    Graph graph;
    graph.side = side;
    graph.step = step;
    graph.rank = rank;
    graph.id = std::string(sideName(side)) + "_" + std::to_string(step) + "_" + std::to_string(rank);
    std::string dataDir;
    if (const auto d = g.find("dump_data_dir"); d != g.end() && d->is_string())
        dataDir = d->get<std::string>();

    // msprobe's node_order: iterative DFS post-order from the root over subnodes (Graph.get_sorted_nodes). Nodes are
    // looked up through one hash index of the object's keys: ordered_json finds a key by a linear search, which made
    // every step of the walk cost the node count.
    std::unordered_map<std::string_view, const Json*> byName;
    byName.reserve(nodes.size());
    for (const auto& [name, value] : nodes.items())
        byName.emplace(name, &value);
    const auto nodeJson = [&](std::string_view name) -> const Json* {
        const auto it = byName.find(name);
        return it == byName.end() ? nullptr : it->second;
    };
    const auto subnodesJson = [&](std::string_view name) -> const Json* {
        const Json* j = nodeJson(name);
        if (!j || !j->is_object())
            return nullptr;
        const auto s = j->find("subnodes");
        return s != j->end() && s->is_array() ? &*s : nullptr;
    };
    std::vector<std::string_view> order;
    order.reserve(nodes.size());
    std::unordered_set<std::string_view> seen;
    seen.reserve(nodes.size());
    struct Frame
    {
        std::string_view name;
        const Json* subs = nullptr;
        std::size_t next = 0;
    };
    std::vector<Frame> stack;
    const std::string root = rootIt->get<std::string>();
    if (const auto r = byName.find(root); r != byName.end()) {
        stack.push_back({ r->first, subnodesJson(root), 0 });
        seen.insert(r->first);
    }
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.subs && f.next < f.subs->size()) {
            const Json& child = (*f.subs)[f.next++];
            if (!child.is_string())
                continue;
            const auto c = byName.find(child.get_ref<const std::string&>());
            if (c != byName.end() && seen.insert(c->first).second)
                stack.push_back({ c->first, subnodesJson(c->first), 0 });
            continue;
        }
        order.push_back(f.name);
        stack.pop_back();
    }
    // Not a structured binding: clang 14 (the fuzz preset) cannot capture one in the warning's lambda.
    for (const auto& item : nodes.items()) {
        const std::string& name = item.key();
        if (!seen.count(name)) {
            file.warn([&] { return graph.id + ": node " + name + " is not reachable from the root " + root; });
            order.push_back(byName.find(name)->first);
        }
    }

    std::map<std::vector<std::string>, std::int32_t> stackIndex;
    for (const std::string_view name : order) {
        const Json& j = *nodeJson(name);
        Node n;
        n.name = name;
        if (!j.is_object()) {
            file.warn([&] { return graph.id + ": node " + n.name + " is not a JSON object"; });
            graph.nodes.push_back(std::move(n));
            continue;
        }
        if (const auto t = j.find("node_type"); t != j.end() && t->is_number_unsigned() && t->get<unsigned>() < 256)
            n.type = static_cast<std::uint8_t>(t->get<unsigned>());
        else
            n.type = 255;
        if (const auto u = j.find("upnode"); u != j.end() && u->is_string() && u->get<std::string>() != "None")
            n.upNode = u->get<std::string>();
        if (const Json* subs = subnodesJson(name))
            for (const Json& e : *subs)
                if (e.is_string())
                    n.subNodes.push_back(e.get<std::string>());
        if (const auto l = j.find("matched_node_link"); l != j.end() && l->is_array())
            for (const Json& e : *l)
                if (e.is_string())
                    n.matchedLink.push_back(e.get<std::string>());
        if (const auto d = j.find("data"); d != j.end() && d->is_object())
            if (const auto p = d->find("precision_index"); p != d->end() && p->is_number()) {
                n.precision = p->get<double>();
                n.precisionIsInteger = p->is_number_integer();
            }
        if (const auto m = j.find("micro_step_id"); m != j.end() && m->is_number_integer())
            n.microStep = m->get<std::int64_t>();
        if (const auto o = j.find("overflow_level"); o != j.end() && o->is_string())
            n.overflowLevel = o->get<std::string>();
        if (const auto s = j.find("stack_info"); s != j.end() && s->is_array()) {
            std::vector<std::string> frames;
            for (const Json& e : *s)
                if (e.is_string())
                    frames.push_back(e.get<std::string>());
            const auto [it, added] = stackIndex.emplace(frames, static_cast<std::int32_t>(graph.stacks.size()));
            if (added)
                graph.stacks.push_back(std::move(frames));
            n.stack = it->second;
        }
        n.inputData = jsonText(j.value("input_data", Json::object()));
        n.outputData = jsonText(j.value("output_data", Json::object()));
        n.dumpDataDir = dataDir;
        graph.nodes.push_back(std::move(n));
    }
    linkNodes(file, graph);
    file.graphs.push_back(std::move(graph));
    return std::nullopt;
}

Result<std::shared_ptr<const GraphFile>> readVisJson(const std::filesystem::path& path)
{
    const SourceLocation where { path.string(), std::nullopt, 0, 0 };
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    // Linear in the text (orderedjson.h), nesting bounded; a number beyond a double (1e99999) is a parse failure
    // with its position like any other, never an exception.
    auto [parsed, failure] = detail::parseOrderedJson(*text);
    if (!parsed)
        return makeError("graph.vis", locate(*text, failure.offset, path.string()), "not valid JSON: " + failure.message);
    Json j = std::move(*parsed);
    if (!j.is_object())
        return makeError("graph.vis", where, "a .vis file holds a JSON object");
    auto file = std::make_shared<GraphFile>();
    file->path = path.string();
    file->version = MsprobeVersion::V12Vis;
    // A .vis holds one (step, rank); msprobe names it {build|compare}_step{N}_rank{M}_{ts}.vis.
    const std::string name = path.filename().string();
    const std::int64_t step = numberAfter(name, "step");
    const std::int64_t rank = numberAfter(name, "rank");
    GraphConfig& c = file->config;
    c.stepList = { step };
    c.rankList = { rank };
    if (const auto m = j.find("MicroSteps"); m != j.end() && m->is_number_integer())
        c.microSteps = m->get<std::int64_t>();
    if (const auto o = j.find("OverflowCheck"); o != j.end() && o->is_boolean())
        c.overflowCheck = o->get<bool>();
    const bool compare = j.contains("NPU");
    c.graphType = compare ? "compare" : "build";
    if (compare) {
        if (const auto t = j.find("task"); t != j.end() && t->is_string())
            c.task = t->get<std::string>();
        if (const auto t = j.find("ToolTip"); t != j.end())
            c.toolTip = t->is_string() ? t->get<std::string>() : t->dump();
        c.nodeColorsText = j.contains("Colors") ? j["Colors"].dump() : "null";
        if (auto error = readVisGraph(j["NPU"], Side::Npu, step, rank, *file))
            return makeError("graph.vis", where, *error);
        if (j.contains("Bench"))
            if (auto error = readVisGraph(j["Bench"], Side::Bench, step, rank, *file))
                return makeError("graph.vis", where, *error);
    } else {
        c.nodeColorsText = "null";
        if (auto error = readVisGraph(j, Side::Npu, step, rank, *file))
            return makeError("graph.vis", where, *error);
    }
    if (std::all_of(file->graphs.begin(), file->graphs.end(), [](const Graph& g) { return g.nodes.empty(); }))
        return makeError("graph.vis", where, "no graph in " + path.string() + ": it holds no node");
    finishColours(*file);
    assignStatuses(*file);
    file->closeWarnings();
    return std::shared_ptr<const GraphFile>(std::move(file));
}

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

} // namespace

Result<std::shared_ptr<const GraphFile>> readVisDb(const std::filesystem::path& path, const ReadOptions& options)
{
    return readDb(path, options);
}

Result<NodeData> readNodeData(const GraphFile& file, const Graph& graph, std::uint32_t node)
{
    auto opened = ReadOnlyDb::open(file.path, "graph.db");
    if (!opened)
        return opened.error();
    auto st = (*opened)->prepare("SELECT input_data, output_data FROM tb_nodes WHERE id = ?1");
    if (!st)
        return st.error();
    (*st)->bind(1, graph.id + "_" + graph.nodes.at(node).name);
    if (!(*st)->next())
        return (*st)->error() ? *(*st)->error()
                              : (*opened)->error("no tb_nodes row for node " + graph.nodes[node].name + " of " + graph.id);
    return NodeData { (*st)->text(0), (*st)->text(1) };
}

Result<std::shared_ptr<const GraphFile>> readVis(const std::filesystem::path& path)
{
    return readVisJson(path);
}

Result<std::shared_ptr<const GraphFile>> readGraphFile(const std::filesystem::path& path, const ReadOptions& options)
{
    // A .vis.db is SQLite whatever it holds (its error says so); other names are told apart by the header.
    if (endsWith(path.filename().string(), ".vis.db") || detail::looksLikeSqlite(path))
        return readDb(path, options);
    return readVisJson(path);
}

bool isGraphFileName(const std::filesystem::path& path)
{
    const std::string name = path.filename().string();
    return endsWith(name, ".vis.db") || endsWith(name, ".vis") || endsWith(name, ".trend.db");
}

} // namespace probescope::graph
