// SPDX-License-Identifier: Apache-2.0
#include "core/compare/msprobe12/compare.h"

#include "core/compare/msprobe12/highlight.h"
#include "core/compare/match/mapping.h"
#include "core/compare/match/matcher.h"
#include "core/compare/table/pytext.h"
#include "core/compare/metrics/realdata.h"
#include "core/util/pages.h"
#include "core/util/parallel.h"
#include "core/util/workgroup.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <thread>
#include <unordered_map>

namespace probescope::compare {

using dump::JsonValue;

namespace {

// A.6 step 1: the bench leaf's data_name found from the bench row name.
std::string benchDataName(const dump::DumpFile& bench, const tensor::TensorResolver& benchTensors,
                          const std::string& name)
{
    // A ptdbg .pkl row's tensor is {row name}.npy in the .npy folder, whatever era its names come from. Only a
    // file that is not there is "no data file": a name that leaves the folder is kept, so its read says why.
    if (bench.format == dump::DumpFormat::LegacyPkl) {
        const auto resolved = benchTensors.resolve(name + ".npy");
        return resolved || resolved.error().id != "tensor.missing" ? name + ".npy" : std::string();
    }
    static constexpr std::string_view seps[] = { ".input.", ".output.", ".kwargs.", ".parameters.",
                                                 ".parameters_grad." };
    auto nextSep = [&](std::size_t from, std::string_view* word) {
        std::size_t best = std::string::npos;
        for (std::string_view s : seps) {
            const std::size_t p = name.find(s, from);
            if (p != std::string::npos && p < best) {
                best = p;
                *word = s;
            }
        }
        return best;
    };
    std::string_view sep;
    const std::size_t at = nextSep(0, &sep);
    if (at == std::string::npos)
        return {};
    const std::string_view word = sep.substr(1, sep.size() - 2);
    const std::size_t restStart = at + sep.size();
    std::string_view ignored;
    const std::size_t restEnd = nextSep(restStart, &ignored);
    const std::string third = name.substr(restStart, restEnd == std::string::npos ? std::string::npos : restEnd - restStart);
    std::string entryKey = name.substr(0, at);
    if (word == "parameters_grad")
        entryKey += ".parameters_grad";
    const dump::Entry* entry = bench.find(entryKey);
    if (!entry)
        return {};
    std::optional<JsonValue> container;
    if (word == "input")
        container = entry->value.find("input") ? entry->value.find("input") : entry->value.find("input_args");
    else if (word == "kwargs")
        container = entry->value.find("input_kwargs");
    else if (word == "output")
        container = entry->value.find("output");
    else if (word == "parameters")
        container = entry->value.find("parameters");
    else
        container = entry->value;
    std::vector<std::string> steps;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = third.find('.', start);
        steps.push_back(third.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    if (word == "parameters_grad")
        steps.push_back("0");
    for (const std::string& step : steps) {
        if (!container)
            return {};
        if (container->isObject()) {
            container = container->find(step);
        } else if (container->isArray()) {
            char* end = nullptr;
            const long idx = std::strtol(step.c_str(), &end, 10);
            if (step.empty() || *end != '\0' || idx < 0 || static_cast<std::uint32_t>(idx) >= container->size())
                return {};
            container = container->at(static_cast<std::uint32_t>(idx));
        } else {
            return {};
        }
    }
    if (!container || !container->isObject())
        return {};
    const auto dn = container->find("data_name");
    return dn && dn->isString() ? std::string(dn->asString()) : std::string();
}

// A.7: one statistic pair of a summary row, appended to the row as it goes (no Cell per value).
struct StatDiff
{
    FlatCell diff;            ///< Int, Float or the text "N/A" / "Nan"
    std::string_view label;   ///< "N/A" / "Nan" for the relative error, else empty: `relative` prints with a '%'
    double relative = 0;
    bool flagged = false;
};

StatDiff statDiff(const FlatCell& npu, const FlatCell& bench)
{
    StatDiff out;
    if (!npu.isNumber() || !bench.isNumber()) {
        out.diff = FlatCell::text("N/A");
        out.label = "N/A";
        return out;
    }
    double diff = 0;
    if (npu.kind == CellKind::Int && bench.kind == CellKind::Int) {
        const std::int64_t d = npu.integer - bench.integer;
        out.diff = FlatCell::ofInteger(d);
        diff = static_cast<double>(d);
    } else {
        diff = npu.asDouble() - bench.asDouble();
        out.diff = FlatCell::ofNumber(diff);
    }
    if (std::isnan(diff)) {
        out.diff = FlatCell::text("Nan");
        out.label = "Nan";
        return out;
    }
    const double b = bench.asDouble();
    if (b != 0)
        out.relative = std::fabs((diff / b) * 100.0);
    else
        out.label = "N/A";
    out.flagged = std::fabs(diff) / (std::max(std::fabs(npu.asDouble()), std::fabs(b)) + 1e-10) > 0.5;
    return out;
}

/**
 * msprobe's MindSpore comparator reads the NPU tensor as <row name>.npy (MindSpore dumps write numpy files;
 * so do ptdbg_ascend's .pkl dumps, compared the same way)
 * and the bench tensor under its data_name (.npy, or .pt for a PyTorch bench). Everything else (messages,
 * metrics) is the PyTorch row's: when a file cannot be read, compareRealDataRow gives msprobe's
 * "Dump file: ... not found." for the same row.
 */
RealDataMetrics compareNpyRow(const RealDataRow& row)
{
    if (row.dataNameCell == "-1" || row.benchDataName.empty())
        return compareRealDataRow(row); // nothing is loaded on these paths
    auto npu = row.npuTensors->load(row.npuName + ".npy");
    auto bench = npu ? row.benchTensors->load(row.benchDataName) : npu;
    if (!npu || !bench) {
        // Only a file that is not there keeps msprobe's "not found." (from the .pt path); one that is there but
        // damaged, or a name leaving the dump folder, is an error of the input (issue 25).
        const Diagnostic& error = npu ? bench.error() : npu.error();
        if (error.id == "tensor.missing")
            return compareRealDataRow(row);
        RealDataMetrics m;
        m.cosine = m.maxAbsErr = m.maxRelativeErr = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio =
            Cell::text("unsupported");
        m.message = "Dump file: " + row.dataNameCell + " " + std::string(kUnreadableMark) + " " + error.format();
        return m;
    }
    RealDataMetrics m = compareTensors(*npu, *bench);
    if (row.fuzzy && row.benchName != row.npuName && row.benchName != "N/A")
        m.message += " Fuzzy matching data, the comparison accuracy may be affected.";
    return m;
}

/// Writes rows into a table laid out beforehand (CellRows::layOut), from row `firstRow` on: the texts of names, dtypes
/// and shapes are copied once, from the flattened rows' views into the table's blocks. Builders on different threads
/// write different rows of the same table.
class TableBuilder
{
public:
    TableBuilder(const dump::DumpFile& npu, const dump::DumpFile& bench, const CompareOptions& options,
                 CompareTable& table, std::vector<std::uint8_t>& matchedRows, std::size_t firstRow)
        : m_npu(npu)
        , m_bench(bench)
        , m_options(options)
        , m_table(table)
        , m_out(table.rows)
        , m_matchedRows(matchedRows)
        , m_row(firstRow)
        , m_stack(options.stackMode ? options.stack : nullptr)
        , m_npuTensors(options.npuTensors ? options.npuTensors : tensorResolverOf(npu))
        , m_benchTensors(options.benchTensors ? options.benchTensors : tensorResolverOf(bench))
    {
    }

    /// Rows the builder writes for a step: as many as the NPU op has, or the pairs of a plain match.
    static std::size_t rowsOf(const Op& n, const Op* b, bool mapped)
    {
        return b && !mapped ? std::min(n.rows.size(), b->rows.size()) : n.rows.size();
    }

    void matched(const Op& n, const Op& b)
    {
        n.rowsByCategory(m_npuRows);
        b.rowsByCategory(m_benchRows);
        bool stackPlaced = false;
        for (std::size_t i = 0; i < m_npuRows.size() && i < m_benchRows.size(); ++i) {
            bool stack = false;
            if (!stackPlaced && m_npuRows[i]->category == RowCategory::Input) {
                stack = true;
                stackPlaced = true;
            }
            addMatched(n, *m_npuRows[i], *m_benchRows[i], stack);
        }
    }

    /// A pair matched under -cm/-am: each NPU row (category order) with its partner in `b`, if any; a row
    /// the api mapping abandoned is shown without bench data. The stack goes to the first input row (A.5).
    void matchedMapped(const Op& n, const Op& b, const std::vector<std::optional<std::size_t>>& partner)
    {
        bool stackPlaced = false;
        n.rowsByCategory(m_npuRows);
        for (const FlatRow* row : m_npuRows) {
            bool stack = false;
            if (!stackPlaced && row->category == RowCategory::Input) {
                stack = true;
                stackPlaced = true;
            }
            const auto i = static_cast<std::size_t>(row - n.rows.data());
            if (partner[i])
                addMatched(n, *row, b.rows[*partner[i]], stack);
            else
                addUnmatched(n, *row, stack);
        }
    }

    // Data mapping (A.13): no matching; stats stay raw; every row carries its NPU entry's stack.
    void mappedRow(const Op& op, const FlatRow& n, const FlatRow& b) { addMatched(op, n, b, true, true); }

    void unmatched(const Op& n)
    {
        n.rowsByCategory(m_npuRows);
        for (std::size_t i = 0; i < m_npuRows.size(); ++i)
            addUnmatched(n, *m_npuRows[i], i == 0);
    }

    struct Job
    {
        std::size_t row;
        RealDataRow input;
        bool npyNpu = false; ///< a MindSpore NPU dump: .npy files (see compareNpyRow)
    };
    std::vector<Job>& jobs() { return m_jobs; }

    /// Fills one deferred row: the five metrics (columns 6-10), Accuracy (19) and Err_message (20).
    static void finish(CompareTable& table, const Job& job, Splitter& splitter, const Job* next = nullptr)
    {
        const RealDataMetrics metrics = job.npyNpu
            ? compareNpyRow(job.input)
            : compareRealDataRow(job.input, splitter, next && !next->npyNpu ? &next->input : nullptr);
        // Workers fill different rows at once.
        CellRows& rows = table.rows;
        rows.setShared(job.row, 6, metrics.cosine);
        rows.setShared(job.row, 7, metrics.maxAbsErr);
        rows.setShared(job.row, 8, metrics.maxRelativeErr);
        rows.setShared(job.row, 9, metrics.oneThousandthErrRatio);
        rows.setShared(job.row, 10, metrics.fiveThousandthsErrRatio);
        rows.setShared(job.row, 19, Cell::text(accuracyReached(metrics.cosine, metrics.maxAbsErr)));
        rows.setShared(job.row, 20, Cell::text(metrics.message));
    }

private:
    const dump::DumpFile& m_npu;
    const dump::DumpFile& m_bench;
    const CompareOptions& m_options;
    CompareTable& m_table;
    CellRows::Writer m_out;
    std::vector<std::uint8_t>& m_matchedRows; // CompareTable::matched is a vector<bool>: threads share its words
    std::size_t m_row;
    const dump::StackMap* m_stack;
    std::shared_ptr<const tensor::TensorResolver> m_npuTensors;
    std::shared_ptr<const tensor::TensorResolver> m_benchTensors;
    std::vector<Job> m_jobs;
    std::vector<const FlatRow*> m_npuRows; // category order of the op at hand, reused
    std::vector<const FlatRow*> m_benchRows;
    std::string m_scratch;
    std::string m_stackJson;                                   // stack.json text of the op at hand
    std::unordered_map<std::string, std::string> m_stackTexts; // that text -> NPU_Stack_Info text

    CellRows::Writer& rows() { return m_out; }

    void put(const FlatCell& c)
    {
        switch (c.kind) {
        case CellKind::None: rows().appendNone(); return;
        case CellKind::Bool: rows().appendBool(c.boolean); return;
        case CellKind::Int: rows().appendInt(c.integer); return;
        case CellKind::Float: rows().appendNumber(c.number); return;
        case CellKind::String: rows().appendText(c.textView()); return;
        case CellKind::PyText: rows().appendPyText(c.textView()); return;
        }
    }

    /// A statistic as a matched row shows it: NaN as the text "Nan" (raw under a data mapping).
    void putStat(const FlatCell& c, bool raw)
    {
        if (!raw && c.kind == CellKind::Float && std::isnan(c.number))
            rows().appendText("Nan");
        else
            put(c);
    }

    /// The NPU_Stack_Info cell (stack mode): the op's frames as Python list text, or None. The frames are read for
    /// this row only (not kept), and an API called from many layers has one text, stored once.
    void putStack(const Op& op, bool place)
    {
        if (!m_table.stackMode)
            return;
        if (!place || !m_stack) {
            rows().appendNone();
            return;
        }
        // Layers call the same APIs from the same lines: the text made of one frames list serves every op whose
        // stack.json text is the same, so it is parsed and printed once.
        if (m_stack->framesOf.readJson(op.key, m_stackJson)) {
            auto [it, added] = m_stackTexts.try_emplace(m_stackJson);
            if (added)
                it->second = stackText(m_stack->framesOf.parseJson(m_stackJson));
            rows().appendSharedPyText(it->second);
            return;
        }
        const auto frames = m_stack->framesOf.read(op.key);
        if (frames)
            rows().appendSharedPyText(stackText(*frames));
        else
            rows().appendNone();
    }

    void putNA(int count)
    {
        for (int i = 0; i < count; ++i)
            rows().appendText("N/A");
    }

    void begin(const FlatRow& n, const FlatRow* b)
    {
        rows().beginRow(m_row);
        appendName(n);
        if (b)
            appendName(*b);
        else
            rows().appendText("N/A");
        put(n.dtype());
        if (b)
            put(b->dtype());
        else
            rows().appendText("N/A");
        put(n.shape());
        if (b)
            put(b->shape());
        else
            rows().appendText("N/A");
    }

    void appendName(const FlatRow& row)
    {
        if (row.nameTail().empty()) {
            rows().appendText(row.nameHead());
            return;
        }
        m_scratch.clear();
        row.appendName(m_scratch);
        rows().appendText(m_scratch);
    }

    void end(const Op& op, bool isMatched)
    {
        m_table.npuEntry[m_row] = op.entryIndex;
        m_matchedRows[m_row] = isMatched ? 1 : 0;
        ++m_row;
    }

    RealDataRow realDataRow(const FlatRow& n, std::string_view benchName, std::string_view dataNameCell,
                            const std::string& benchData) const
    {
        RealDataRow row;
        row.npuName = n.nameText();
        row.benchName = benchName;
        row.dataNameCell = dataNameCell;
        row.benchDataName = benchData;
        // Tensor files are reached only through the sides' resolvers (dump_tensor_data, or the .npy folder named
        // like a ptdbg .pkl: DumpFile::tensorDir), never by a path of the row's making.
        row.npuTensors = m_npuTensors;
        row.benchTensors = m_benchTensors;
        row.fuzzy = m_options.fuzzy;
        return row;
    }

    void addMatched(const Op& op, const FlatRow& n, const FlatRow& b, bool stack, bool rawStats = false)
    {
        const std::size_t row = m_row;
        begin(n, &b);
        switch (m_table.mode) {
        case CompareMode::RealData: {
            // The metrics need both tensor files: they are filled in later by parallel jobs.
            m_jobs.push_back({ row, realDataRow(n, b.nameText(), n.dataName(), benchDataName(m_bench, *m_benchTensors, b.nameText())),
                               isMindSporeDump(m_npu, false) || m_npu.format == dump::DumpFormat::LegacyPkl });
            for (int i = 0; i < 5; ++i)
                rows().appendNone();
            for (int i = 0; i < 4; ++i)
                putStat(n.stat(i), rawStats);
            for (int i = 0; i < 4; ++i)
                putStat(b.stat(i), rawStats);
            rows().appendNone(); // Accuracy Reached or Not
            rows().appendNone(); // Err_message
            putStack(op, stack);
            rows().appendText(n.dataName());
            break;
        }
        case CompareMode::Summary: {
            std::array<StatDiff, 4> diffs;
            bool flagged = false;
            for (int i = 0; i < 4; ++i) {
                diffs[i] = statDiff(n.stat(i), b.stat(i));
                flagged = flagged || diffs[i].flagged;
            }
            for (const auto& d : diffs)
                put(d.diff);
            for (const auto& d : diffs) {
                if (!d.label.empty()) {
                    rows().appendText(d.label);
                } else {
                    m_scratch.clear();
                    appendPyFloatRepr(m_scratch, d.relative);
                    m_scratch += '%';
                    rows().appendUniqueText(m_scratch);
                }
            }
            for (int i = 0; i < 4; ++i)
                putStat(n.stat(i), rawStats);
            for (int i = 0; i < 4; ++i)
                putStat(b.stat(i), rawStats);
            rows().appendText(flagged ? "Warning" : "");
            rows().appendText(flagged ? "Need double check api accuracy." : "");
            putStack(op, stack);
            break;
        }
        case CompareMode::Md5:
            put(n.md5());
            put(b.md5());
            rows().appendText(sameText(n.md5(), b.md5()) ? "pass" : "Different");
            putStack(op, stack);
            break;
        }
        end(op, true);
    }

    void addUnmatched(const Op& op, const FlatRow& n, bool stack)
    {
        begin(n, nullptr);
        switch (m_table.mode) {
        case CompareMode::RealData: {
            const auto metrics = compareRealDataRow(realDataRow(n, "N/A", "-1", {}));
            for (const Cell* c : { &metrics.cosine, &metrics.maxAbsErr, &metrics.maxRelativeErr,
                                   &metrics.oneThousandthErrRatio, &metrics.fiveThousandthsErrRatio })
                rows().append(*c);
            for (int i = 0; i < 4; ++i)
                put(n.stat(i)); // raw: a NaN stays a float (shown as nan + TAB)
            putNA(4);
            rows().appendText(accuracyReached(metrics.cosine, metrics.maxAbsErr));
            rows().appendText(metrics.message);
            putStack(op, stack);
            rows().appendText("-1");
            break;
        }
        case CompareMode::Summary:
            putNA(8);
            for (int i = 0; i < 4; ++i)
                put(n.stat(i));
            putNA(5);
            rows().appendText("No bench data matched.");
            putStack(op, stack);
            break;
        case CompareMode::Md5:
            putNA(3);
            putStack(op, stack);
            break;
        }
        end(op, false);
    }
};

} // namespace

namespace {

/// The row tail below an entry key (".input.0"): what pairs the rows of a manually matched pair of entries.
std::string_view rowTail(const FlatRow& row, std::string_view key, std::string& buffer)
{
    buffer.clear();
    row.appendName(buffer);
    std::string_view name = buffer;
    return name.substr(0, key.size()) == key ? name.substr(key.size()) : name;
}

/// --match-file in the msprobe 1.2 profile: NPU op index -> (bench op index, the bench row of each NPU row). The rows
/// of the two entries pair by their tail below the key (".input.0" with ".input.0"), not by position, so a pair with
/// a different number of rows loses none of the NPU rows (a row without a partner is shown without bench data).
struct ManualPairs
{
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::vector<std::optional<std::size_t>>>> byNpu;
    std::vector<bool> npuTaken;
    std::vector<bool> benchTaken;
};

ManualPairs manualPairs(const NameMappings* mappings, const std::vector<Op>& npuOps, const std::vector<Op>& benchOps)
{
    ManualPairs out;
    if (!mappings || !mappings->manual || mappings->manual->pairs.empty())
        return out;
    // The first entry of a key, as dump::DumpFile::find answers (the pipeline resolved the names with it).
    std::unordered_map<std::string_view, std::uint32_t> npuIndex;
    std::unordered_map<std::string_view, std::uint32_t> benchIndex;
    for (std::uint32_t i = 0; i < npuOps.size(); ++i)
        npuIndex.emplace(npuOps[i].key, i);
    for (std::uint32_t i = 0; i < benchOps.size(); ++i)
        benchIndex.emplace(benchOps[i].key, i);
    out.npuTaken.assign(npuOps.size(), false);
    out.benchTaken.assign(benchOps.size(), false);
    std::string a;
    std::string b;
    for (const auto& [npuName, benchName] : mappings->manual->pairs) {
        const auto n = npuIndex.find(npuName);
        const auto m = benchIndex.find(benchName);
        if (n == npuIndex.end() || m == benchIndex.end() || out.npuTaken[n->second] || out.benchTaken[m->second])
            continue;
        const Op& npuOp = npuOps[n->second];
        const Op& benchOp = benchOps[m->second];
        std::vector<std::optional<std::size_t>> partner(npuOp.rows.size());
        std::vector<bool> used(benchOp.rows.size(), false);
        for (std::size_t r = 0; r < npuOp.rows.size(); ++r) {
            const std::string_view tail = rowTail(npuOp.rows[r], npuOp.key, a);
            for (std::size_t k = 0; k < benchOp.rows.size(); ++k) {
                if (!used[k] && rowTail(benchOp.rows[k], benchOp.key, b) == tail) {
                    partner[r] = k;
                    used[k] = true;
                    break;
                }
            }
        }
        out.npuTaken[n->second] = true;
        out.benchTaken[m->second] = true;
        out.byNpu.emplace(n->second, std::pair { m->second, std::move(partner) });
    }
    return out;
}

} // namespace

namespace {

std::shared_ptr<CompareTable> newTable(CompareMode mode, const CompareOptions& options)
{
    auto table = std::make_shared<CompareTable>();
    table->mode = mode;
    table->stackMode = options.stackMode;
    table->header = headerFor(mode, options.stackMode);
    return table;
}

// The start shared by every way of building a table: mode, empty table, both dumps flattened.
struct Prepared
{
    std::shared_ptr<CompareTable> table;
    FlatSide npu;
    FlatSide bench;
};

Result<Prepared> prepare(const dump::DumpFile& npu, const dump::DumpFile& bench, const CompareOptions& options)
{
    auto mode = detectMode(npu, bench);
    if (!mode)
        return mode.error();
    // The two sides flatten side by side: on 200k-entry dumps this is the largest step before the table.
    Result<FlatSide> benchOps = makeError("compare.internal", {}, "not flattened");
    auto flattenBench = [&] { benchOps = flattenDump(bench, *mode); };
    std::thread benchFlattener;
    if (options.sideThreads && resolveThreadCount(options.threads) > 1)
        benchFlattener = std::thread(flattenBench);
    else
        flattenBench();
    auto npuOps = flattenDump(npu, *mode);
    if (benchFlattener.joinable())
        benchFlattener.join();
    if (!npuOps)
        return npuOps.error();
    if (!benchOps)
        return benchOps.error();
    return Prepared { newTable(*mode, options), std::move(*npuOps), std::move(*benchOps) };
}

// Each job reads two tensor files, computes and frees them: memory stays bounded by the thread count,
// and every job writes only its own row, so the table does not depend on the number of threads.
Result<std::shared_ptr<const CompareTable>> finishTable(std::shared_ptr<CompareTable> table,
                                                        const std::vector<TableBuilder::Job>& jobs,
                                                        const dump::DumpFile& npu, const CompareOptions& options,
                                                        ProgressSink* progress)
{
    if (options.layoutReady)
        options.layoutReady(*table);
    // A large tensor pair is split into chunks that idle threads take (workgroup.h).
    const bool completed = parallelForSplittable(
        jobs.size(), options.threads,
        [&](std::size_t i, Splitter& splitter) {
            // The row this thread is likely to take next is read ahead while this one is computed.
            const std::size_t ahead = i + splitter.threads();
            TableBuilder::finish(*table, jobs[i], splitter, ahead < jobs.size() ? &jobs[ahead] : nullptr);
            if (options.rowReady)
                options.rowReady(jobs[i].row, table->rows.rowShared(jobs[i].row));
        },
        progress);
    if (!completed)
        return makeError("compare.cancelled", fileLocation(npu.path),
                         "the compare was cancelled");
    applyHighlight(*table);
    return std::shared_ptr<const CompareTable>(std::move(table));
}

} // namespace

Result<std::shared_ptr<const CompareTable>> compareDumps(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                         const CompareOptions& options, ProgressSink* progress)
{
    auto prepared = prepare(npu, bench, options);
    if (!prepared)
        return prepared.error();
    // Named references, not a structured binding: lambdas below capture them, which clang before 16 refuses for
    // structured bindings (the fuzz and TSAN presets build with clang 14).
    std::shared_ptr<CompareTable>& table = prepared->table;
    FlatSide& npuSide = prepared->npu;
    FlatSide& benchSide = prepared->bench;
    const std::vector<Op>& npuOps = npuSide.ops;
    const std::vector<Op>& benchOps = benchSide.ops;

    // -cm/-am (MindSpore): the matcher sees mapped copies of the ops; the table shows the originals.
    const NameMappings* mappings = options.mappings && (options.mappings->cell || options.mappings->api)
        ? options.mappings
        : nullptr;
    std::vector<MappedOp> npuViews;
    std::vector<MappedOp> benchViews;
    if (mappings) {
        const bool crossFramework = isMindSporeDump(npu, false) && bench.header.framework == "pytorch";
        npuViews = mappedNpuOps(npuOps, benchOps, *mappings, table->mode, crossFramework);
        benchViews = mappedBenchOps(benchOps, npuOps, *mappings, table->mode);
    }
    // --match-file: in msprobe's walk a manually matched op matches its partner only; a pair the walk never brought
    // together (too far apart, or past the point where msprobe's loop stopped) is paired afterwards at its NPU place.
    const ManualPairs manual = manualPairs(options.mappings, npuOps, benchOps);
    std::vector<const Op*> n;
    std::vector<const Op*> b;
    for (std::size_t i = 0; i < npuOps.size(); ++i)
        n.push_back(mappings ? &npuViews[i].op : &npuOps[i]);
    for (std::size_t i = 0; i < benchOps.size(); ++i)
        b.push_back(mappings ? &benchViews[i].op : &benchOps[i]);
    ManualPairing pairing;
    if (!manual.byNpu.empty()) {
        pairing.benchOf.assign(npuOps.size(), -1);
        pairing.npuOf.assign(benchOps.size(), -1);
        for (const auto& [npuIndex, pair] : manual.byNpu) {
            pairing.benchOf[npuIndex] = pair.first;
            pairing.npuOf[pair.first] = npuIndex;
        }
    }
    MatchOutcome match = matchOps(n, b, options.fuzzy, table->mode == CompareMode::Md5,
                                  manual.byNpu.empty() ? nullptr : &pairing);
    if (!manual.byNpu.empty()) {
        // The partner bench op matches no other op, so it is free whatever the walk did.
        std::vector<std::uint32_t> missing;
        std::vector<bool> seen(npuOps.size(), false);
        for (MatchStep& step : match.steps) {
            seen[step.npu] = true;
            if (pairing.benchOf[step.npu] >= 0)
                step.bench = pairing.benchOf[step.npu];
        }
        for (const auto& [npuIndex, pair] : manual.byNpu) {
            if (!seen[npuIndex])
                missing.push_back(npuIndex);
        }
        if (!missing.empty()) {
            std::sort(missing.begin(), missing.end());
            std::vector<MatchStep> merged;
            merged.reserve(match.steps.size() + missing.size());
            auto next = missing.begin();
            for (const MatchStep& step : match.steps) {
                for (; next != missing.end() && *next < step.npu; ++next)
                    merged.push_back({ *next, pairing.benchOf[*next] });
                merged.push_back(step);
            }
            for (; next != missing.end(); ++next)
                merged.push_back({ *next, pairing.benchOf[*next] });
            match.steps = std::move(merged);
            if (match.stoppedEarly)
                match.npuOpsLost -= static_cast<std::uint32_t>(
                    std::count_if(missing.begin(), missing.end(), [&](std::uint32_t i) { return !npuOps[i].rows.empty(); }));
        }
    }
    const auto manualOf = [&](const MatchStep& step) -> const std::vector<std::optional<std::size_t>>* {
        if (manual.byNpu.empty() || step.bench < 0)
            return nullptr;
        const auto it = manual.byNpu.find(step.npu);
        return it == manual.byNpu.end() ? nullptr : &it->second.second;
    };
    table->npuOpsLost = match.npuOpsLost;
    if (match.stoppedEarly)
        table->diagnostics.push_back(makeWarning(
            "compare.stopped", fileLocation(npu.path),
            "the NPU and bench dumps do not have the same number and calls of APIs; as msprobe 1.2 does, matching "
            "stopped and " + std::to_string(match.npuOpsLost) + " NPU entries are not in the table"));

    // Rows are built in chunks of match steps on every core, straight into the table: the rows each step makes are
    // counted first, so every chunk knows where its rows go, and the table does not depend on the thread count.
    const unsigned threads = resolveThreadCount(options.threads);
    const std::size_t chunks = threads > 1 && match.steps.size() >= 4096 ? std::size_t { threads } * 4 : 1;
    const auto stepRows = [&](const MatchStep& step) {
        return TableBuilder::rowsOf(npuOps[step.npu], step.bench < 0 ? nullptr : &benchOps[static_cast<std::size_t>(step.bench)],
                                    mappings != nullptr || manualOf(step) != nullptr);
    };
    std::vector<std::size_t> chunkRow(chunks + 1, 0);
    for (std::size_t c = 0; c < chunks; ++c) {
        std::size_t rowsInChunk = 0;
        for (std::size_t i = match.steps.size() * c / chunks; i < match.steps.size() * (c + 1) / chunks; ++i)
            rowsInChunk += stepRows(match.steps[i]);
        chunkRow[c + 1] = chunkRow[c] + rowsInChunk;
    }
    table->rows.layOut(chunkRow.back(), table->header.size());
    table->npuEntry.resize(chunkRow.back());
    std::vector<std::uint8_t> matchedRows(chunkRow.back(), 0);
    std::vector<std::vector<TableBuilder::Job>> chunkJobs(chunks);
    parallelFor(chunks, threads, [&](std::size_t c) {
        TableBuilder builder(npu, bench, options, *table, matchedRows, chunkRow[c]);
        // The steps take the NPU ops in order and the matched bench ops in order, so the flattened rows a chunk has
        // been through are read by no other chunk: their pages go back to the system as it moves on, and the table
        // being filled does not peak together with both flattened sides (~0.5 GB at a million entries). The rows
        // viewed by the -cm/-am views are left alone.
        const void* npuFrom = nullptr;
        const void* npuTo = nullptr;
        const void* benchFrom = nullptr;
        const void* benchTo = nullptr;
        const auto release = [&] {
            // Manual pairs take bench ops out of order: no page behind the walk may be given back then.
            if (mappings || !manual.byNpu.empty())
                return;
            npuFrom = releasePages(npuFrom, npuTo);
            benchFrom = releasePages(benchFrom, benchTo);
        };
        std::size_t sinceRelease = 0;
        for (std::size_t i = match.steps.size() * c / chunks; i < match.steps.size() * (c + 1) / chunks; ++i) {
            const MatchStep& step = match.steps[i];
            const auto benchIndex = static_cast<std::size_t>(step.bench);
            const std::span<const FlatRow> npuRows = npuOps[step.npu].rows;
            npuFrom = npuFrom ? npuFrom : npuRows.data();
            npuTo = npuRows.data() + npuRows.size();
            if (step.bench >= 0) {
                const std::span<const FlatRow> benchRows = benchOps[benchIndex].rows;
                benchFrom = benchFrom ? benchFrom : benchRows.data();
                benchTo = benchRows.data() + benchRows.size();
            }
            if (step.bench < 0)
                builder.unmatched(npuOps[step.npu]);
            else if (const auto* partner = manualOf(step))
                builder.matchedMapped(npuOps[step.npu], benchOps[benchIndex], *partner);
            else if (mappings)
                builder.matchedMapped(npuOps[step.npu], benchOps[benchIndex],
                                      partnerRows(npuViews[step.npu], npuOps[step.npu].rows.size(),
                                                  benchViews[benchIndex]));
            else
                builder.matched(npuOps[step.npu], benchOps[benchIndex]);
            if (++sinceRelease == 4096) {
                sinceRelease = 0;
                release();
            }
        }
        release();
        chunkJobs[c] = std::move(builder.jobs());
    });
    // The flattened ops are done with (the real-data jobs hold copies of what they read): at a million entries they
    // are a GB, and the rest of the compare does not need them.
    npuSide = FlatSide();
    benchSide = FlatSide();
    std::vector<MappedOp>().swap(npuViews);
    std::vector<MappedOp>().swap(benchViews);
    table->matched.assign(matchedRows.begin(), matchedRows.end());
    std::vector<TableBuilder::Job> jobs;
    for (auto& part : chunkJobs)
        jobs.insert(jobs.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return finishTable(std::move(table), jobs, npu, options, progress);
}

Result<std::shared_ptr<const CompareTable>> compareWithDataMapping(const dump::DumpFile& npu,
                                                                   const dump::DumpFile& bench,
                                                                   const DataMapping& mapping,
                                                                   const CompareOptions& options,
                                                                   ProgressSink* progress)
{
    auto prepared = prepare(npu, bench, options);
    if (!prepared)
        return prepared.error();
    // Named references, not a structured binding: lambdas below capture them, which clang before 16 refuses for
    // structured bindings (the fuzz and TSAN presets build with clang 14).
    std::shared_ptr<CompareTable>& table = prepared->table;
    FlatSide& npuSide = prepared->npu;
    FlatSide& benchSide = prepared->bench;
    // Row name -> (op, row); a later duplicate name wins, as in msprobe's dict.
    std::unordered_map<std::string, std::pair<const Op*, const FlatRow*>> npuRows;
    std::unordered_map<std::string, const FlatRow*> benchRows;
    for (const Op& op : npuSide.ops) {
        for (const FlatRow& r : op.rows)
            npuRows[r.nameText()] = { &op, &r };
    }
    for (const Op& op : benchSide.ops) {
        for (const FlatRow& r : op.rows)
            benchRows[r.nameText()] = &r;
    }
    TextArena naTexts;
    FlatRow na; // msprobe's pseudo-row for a mapping to "N/A"
    na.setName("N/A");
    for (int slot = 0; slot < FlatRow::Slots; ++slot)
        na.set(slot, FlatCell::text("N/A"), naTexts);
    na.setDataName("-1");

    struct Pair
    {
        const Op* op;
        const FlatRow* npu;
        const FlatRow* bench;
    };
    std::vector<Pair> pairs;
    for (const auto& [npuName, benchName] : mapping.pairs) {
        const auto n = npuRows.find(npuName);
        const FlatRow* b = benchName == "N/A" ? &na : nullptr;
        if (!b) {
            const auto it = benchRows.find(benchName);
            b = it == benchRows.end() ? nullptr : it->second;
        }
        if (n == npuRows.end() || !b) {
            table->diagnostics.push_back(makeWarning(
                "compare.mapping-skipped", fileLocation(mapping.path),
                "\"" + npuName + ": " + benchName + "\" skipped: "
                    + (n == npuRows.end() ? "the NPU dump has no row " + npuName : "the bench dump has no row " + benchName)));
            continue;
        }
        pairs.push_back({ n->second.first, n->second.second, b });
    }
    table->rows.layOut(pairs.size(), table->header.size());
    table->npuEntry.resize(pairs.size());
    std::vector<std::uint8_t> matchedRows(pairs.size(), 0);
    std::vector<TableBuilder::Job> jobs;
    {
        TableBuilder builder(npu, bench, options, *table, matchedRows, 0);
        for (const Pair& p : pairs)
            builder.mappedRow(*p.op, *p.npu, *p.bench);
        jobs = std::move(builder.jobs());
    }
    table->matched.assign(matchedRows.begin(), matchedRows.end());
    return finishTable(std::move(table), jobs, npu, options, progress);
}

} // namespace probescope::compare
