// SPDX-License-Identifier: Apache-2.0
// ptdbg_ascend 6.0's compare_core over two .pkl files: read_op / merge_tensor / match_op / get_accuracy /
// get_un_match_accuracy, then compare_by_op per row in real-data mode. The rules are ptdbg's, read from
// its source (acc_compare.py); docs/ptdbg-compare.md lists them and where ProbeScope departs from a crash.
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/compare/ptdbg/ptdbgmetrics.h"
#include "core/compare/ptdbg/highlight.h"

#include "core/compare/table/pytext.h"
#include "core/compare/metrics/realdata.h"
#include "core/dump/jsondocument.h"
#include "core/dump/pklrows.h"
#include "core/tensor/npystream.h"
#include "core/tensor/pathutil.h"
#include "core/util/fileio.h"
#include "core/util/workgroup.h"

#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <unordered_map>

namespace probescope::compare::ptdbg {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kNan = "Nan";
constexpr std::string_view kNoBench = "No bench data matched.";
/// Const.DUMP_RATIO_MAX: rows of a later dump_step keep their name but not their statistics.
constexpr double kDumpRatioMax = 100;

/// One line of a .pkl, converted to what compare_core uses.
struct PklRow
{
    std::string name;
    std::uint32_t line = 0;
    std::size_t size = 0;
    bool stack = false;     ///< the name holds "stack_info"
    bool summaryKept = false; ///< dump_step <= 100
    Cell dtype;
    Cell shape;
    Cell md5;
    std::string dtypeRepr; ///< repr() of the element, for the struct comparisons
    std::string shapeRepr;
    std::string md5Repr;
    bool md5Truthy = false;
    std::vector<Cell> summary;
    Cell stackCell; ///< str() of the frame list
};

Cell toCell(dump::JsonValue v)
{
    switch (v.type()) {
    case dump::JsonType::Null:
        return Cell::none();
    case dump::JsonType::Bool:
        return Cell::boolean(v.asBool());
    case dump::JsonType::Int:
        return Cell::integer(v.asInt());
    case dump::JsonType::Double:
        return Cell::number(v.asDouble());
    case dump::JsonType::String:
        return Cell::text(std::string(v.asString()));
    default:
        return Cell::pyText(pyStr(v));
    }
}

bool contains(std::string_view s, std::string_view what)
{
    return s.find(what) != std::string_view::npos;
}

SourceLocation lineAt(const fs::path& file, std::uint32_t line, std::uint32_t column = 1)
{
    return SourceLocation { file.string(), std::nullopt, line, column };
}

/// The rows of one .pkl, and whether ptdbg's check_stack_mode finds it written in stack mode.
struct PklRows
{
    std::vector<PklRow> rows;
    bool stackMode = false;
};

std::optional<std::string_view> apiPrefixOf(std::string_view line);

/// All rows of a pkl, read with the load step's own grammar (dump::forEachPklLine: one reading of a line for every
/// path, issue 33). With `skipped` (--salvage) a line that is not a row is left out and said there (file:line:col)
/// instead of refusing the file. Stack mode is found in the same pass, on the rows' raw lines as ptdbg tests them.
Result<PklRows> readRows(const fs::path& path, Diagnostics* skipped = nullptr)
{
    auto file = MappedFile::open(path, maxJsonFileBytes());
    if (!file)
        return makeError("ptdbg.input", fileLocation(path),
                         "cannot read the .pkl: " + file.error().message);
    const std::string_view text = (*file)->text();
    PklRows result;
    std::vector<PklRow>& rows = result.rows;
    std::size_t skippedLines = 0; ///< with --salvage; the first 200 are listed, the rest counted
    std::optional<Diagnostic> failure;
    // check_stack_mode: whether the first API of the file (the first row named like one) is followed by its own
    // ".stack_info" row; the prefix is `["API`, matched on the raw lines that follow it.
    std::string stackPrefix;
    bool stackDecided = false;
    const auto refuse = [&](Diagnostic d) {
        d.id = "ptdbg.row";
        if (!skipped) {
            failure = std::move(d);
            return dump::PklVisit::Stop;
        }
        if (++skippedLines <= 200) {
            d.severity = Severity::Warning;
            d.id = "ptdbg.row-skipped";
            d.message += " (--salvage: the line is left out)";
            skipped->push_back(std::move(d));
        }
        return dump::PklVisit::Continue;
    };
    dump::forEachPklLine(
        text, path.string(),
        [&](dump::JsonValue row, const dump::PklLine& line) {
            if (!stackDecided) {
                if (stackPrefix.empty()) {
                    if (const auto api = apiPrefixOf(line.text))
                        stackPrefix = "[\"" + std::string(*api);
                } else if (line.text.substr(0, stackPrefix.size()) == stackPrefix) {
                    if (line.text.substr(0, stackPrefix.size() + 11) == stackPrefix + ".stack_info") {
                        result.stackMode = true;
                        stackDecided = true;
                    }
                } else {
                    stackDecided = true;
                }
            }
            const std::uint32_t lineNumber = line.number;
            PklRow r;
            r.name = std::string(row.at(0).asString());
            r.line = lineNumber;
            r.size = row.size();
            r.stack = contains(r.name, "stack_info");
            if (r.stack) {
                if (r.size == 2)
                    r.stackCell = Cell::pyText(pyStr(row.at(1)));
            } else if (r.size == 6) {
                if (!row.at(1).isNumber())
                    return refuse(makeError("ptdbg.row", lineAt(path, lineNumber),
                                            "dump_step (the second element) must be a number"));
                r.summaryKept = row.at(1).asDouble() <= kDumpRatioMax;
                r.md5 = toCell(row.at(2));
                r.md5Repr = pyRepr(row.at(2));
                r.md5Truthy = pyTruthy(row.at(2));
                r.dtype = toCell(row.at(3));
                r.dtypeRepr = pyRepr(row.at(3));
                r.shape = toCell(row.at(4));
                r.shapeRepr = pyRepr(row.at(4));
                const dump::JsonValue summary = row.at(5);
                if (summary.isArray()) {
                    for (std::uint32_t i = 0; i < summary.size(); ++i)
                        r.summary.push_back(toCell(summary.at(i)));
                } else {
                    r.summary.push_back(toCell(summary));
                }
            } else if (r.size >= 3) {
                r.md5Truthy = pyTruthy(row.at(2));
            }
            rows.push_back(std::move(r));
            return dump::PklVisit::Continue;
        },
        [&](const dump::PklLineProblem& found, const dump::PklLine&) {
            // Invalid UTF-8 inside a row is the load step's finding (pkl.utf8); the row itself is read.
            if (found.rowKept)
                return dump::PklVisit::Continue;
            return refuse(found.diagnostic);
        });
    if (failure)
        return *failure;
    if (skippedLines > 200)
        skipped->push_back(makeWarning("ptdbg.row-skipped", fileLocation(path),
                                       std::to_string(skippedLines - 200) + " more lines that are not rows were left out"));
    return result;
}

/// merge_tensor's dictionary of one API (or of the run of rows read_op took as one).
struct Op
{
    std::vector<const PklRow*> names;
    std::vector<const PklRow*> inputs;  ///< input_struct
    std::vector<const PklRow*> outputs; ///< output_struct
    std::vector<const PklRow*> summary; ///< "summery": rows whose dump_step <= 100
    const PklRow* stack = nullptr;
};

/// read_op over the rows of one file: an API is a run of rows ending with rows whose name holds the end
/// flag ("output", or "stack_info" in stack mode), closed by the next row without it or the end of file.
class OpReader
{
public:
    OpReader(const std::vector<PklRow>& rows, const fs::path& file, bool stackMode)
        : m_rows(rows)
        , m_file(file)
        , m_endFlag(stackMode ? "stack_info" : "output")
    {
    }

    /// false at the end of the file (read_err); an op with no tensor row is dropped as merge_tensor does.
    bool read(std::deque<Op>& queue)
    {
        bool last = false;
        bool curr = false;
        std::vector<const PklRow*> block;
        while (true) {
            if (m_pos == m_rows.size()) {
                if (!curr)
                    return false; // rows after the last end-flag row are never compared (ptdbg drops them)
                merge(block, queue);
                return true;
            }
            const PklRow& row = m_rows[m_pos++];
            last = curr;
            curr = contains(row.name, m_endFlag);
            if (last && !curr) {
                --m_pos;
                merge(block, queue);
                return true;
            }
            block.push_back(&row);
        }
    }

    std::optional<Diagnostic> error;
    std::size_t droppedAtEnd() const { return m_rows.size() - m_pos; }

private:
    void merge(const std::vector<const PklRow*>& block, std::deque<Op>& queue)
    {
        Op op;
        for (const PklRow* row : block) {
            if (row->stack) {
                if (row->size != 2 && !error)
                    error = makeError("ptdbg.row", lineAt(m_file, row->line),
                                      "this stack_info row is not complete: it must be [name, [frames]]");
                op.stack = row;
                break;
            }
            op.names.push_back(row);
            if (row->size != 6) {
                if (!error)
                    error = makeError("ptdbg.row", lineAt(m_file, row->line),
                                      "this summary row is not complete: it must be [name, dump_step, md5, dtype, "
                                      "shape, summary], it has "
                                          + std::to_string(row->size) + " elements");
                continue;
            }
            if (contains(row->name, "input"))
                op.inputs.push_back(row);
            else if (contains(row->name, "output"))
                op.outputs.push_back(row);
            if (row->summaryKept)
                op.summary.push_back(row);
        }
        if (!op.names.empty())
            queue.push_back(std::move(op));
    }

    const std::vector<PklRow>& m_rows;
    fs::path m_file;
    std::string_view m_endFlag;
    std::size_t m_pos = 0;
};

bool structEqual(const std::vector<const PklRow*>& a, const std::vector<const PklRow*>& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i]->dtypeRepr != b[i]->dtypeRepr || a[i]->shapeRepr != b[i]->shapeRepr || a[i]->md5Repr != b[i]->md5Repr)
            return false;
    }
    return true;
}

/// check_type_shape_match: pairs of zip() (so the shorter list decides), float16/float32/bfloat16 alike.
bool typeShapeMatch(const std::vector<const PklRow*>& a, const std::vector<const PklRow*>& b)
{
    bool match = false;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        const bool shape = a[i]->shapeRepr == b[i]->shapeRepr;
        bool type = a[i]->dtypeRepr == b[i]->dtypeRepr;
        if (!type) {
            auto half = [](const std::string& t) {
                return t == "'torch.float16'" || t == "'torch.float32'" || t == "'torch.bfloat16'";
            };
            const std::string& x = a[i]->dtypeRepr;
            const std::string& y = b[i]->dtypeRepr;
            // ptdbg lists float16<->float32 and float16<->bfloat16, not float32<->bfloat16.
            type = half(x) && half(y) && (x == "'torch.float16'" || y == "'torch.float16'");
        }
        match = shape && type;
        if (!match)
            return false;
    }
    return match;
}

bool structMatch(const Op& n, const Op& b)
{
    if (structEqual(n.inputs, b.inputs) && structEqual(n.outputs, b.outputs))
        return true;
    if (n.inputs.empty() || b.inputs.empty() || n.inputs.size() != b.inputs.size())
        return false;
    return typeShapeMatch(n.inputs, b.inputs) && typeShapeMatch(n.outputs, b.outputs);
}

bool nameListEqual(const Op& n, const Op& b)
{
    if (n.names.size() != b.names.size())
        return false;
    for (std::size_t i = 0; i < n.names.size(); ++i) {
        if (n.names[i]->name != b.names[i]->name)
            return false;
    }
    return true;
}

bool fuzzyOpMatch(const Op& n, const Op& b)
{
    if (n.names.empty() || b.names.empty() || n.names.size() != b.names.size())
        return false;
    for (std::size_t i = 0; i < n.names.size(); ++i) {
        if (!fuzzyNameMatch(n.names[i]->name, b.names[i]->name))
            return false;
    }
    return true;
}

bool checkOp(const Op& n, const Op& b, bool fuzzy, bool& graphModeSeen)
{
    const bool nAten = contains(n.names.front()->name, "Aten");
    const bool bAten = contains(b.names.front()->name, "Aten");
    if (nAten != bAten) {
        // ptdbg maps Aten names to torch names with compare/mapping.yaml here (graph_mapping); not
        // reproduced: such pairs never match (docs/ptdbg-compare.md).
        graphModeSeen = true;
        return false;
    }
    const bool structOk = structMatch(n, b);
    if (!fuzzy)
        return nameListEqual(n, b) && structOk;
    return fuzzyOpMatch(n, b) && structOk;
}

std::pair<long, long> matchOp(const std::deque<Op>& npu, const std::deque<Op>& bench, bool fuzzy, bool& graphMode)
{
    const Op& lastNpu = npu.back();
    for (std::size_t bi = 0; bi + 1 < bench.size(); ++bi) {
        if (checkOp(lastNpu, bench[bi], fuzzy, graphMode))
            return { static_cast<long>(npu.size() - 1), static_cast<long>(bi) };
    }
    if (checkOp(lastNpu, bench.back(), fuzzy, graphMode))
        return { static_cast<long>(npu.size() - 1), static_cast<long>(bench.size() - 1) };
    for (std::size_t ni = 0; ni + 1 < npu.size(); ++ni) {
        if (checkOp(npu[ni], bench.back(), fuzzy, graphMode))
            return { static_cast<long>(ni), static_cast<long>(bench.size() - 1) };
    }
    return { -1, -1 };
}

Cell nanCell()
{
    return Cell::text(std::string(kNan));
}

/// The table being built, with what compare_by_op needs per row.
struct Builder
{
    CompareMode mode = CompareMode::RealData;
    std::vector<std::vector<Cell>> rows;
    std::vector<bool> matched;
    std::vector<std::string> benchNames; ///< "Nan" when unmatched
    std::vector<RowColor> colors;
    Diagnostics notes;
    bool padNoted = false;

    /// A statistics list as ptdbg extends the row with it; 3-element (ptdbg < 4.0) lists get "Nan" for the
    /// missing l2norm so the columns stay in place (ptdbg 6.0 would shift them, docs/ptdbg-compare.md).
    void extendSummary(std::vector<Cell>& row, const PklRow* r)
    {
        std::size_t n = 0;
        if (r) {
            for (const Cell& c : r->summary) {
                if (n++ < 4)
                    row.push_back(c);
            }
        }
        for (; n < 4; ++n)
            row.push_back(nanCell());
    }
};

void accuracyCore(Builder& t, const Op& n, const Op& b, std::size_t nStart, std::size_t nLen, std::size_t bStart,
                  std::size_t bLen, bool input, std::vector<std::size_t>& added)
{
    const std::vector<const PklRow*>& nStruct = input ? n.inputs : n.outputs;
    const std::vector<const PklRow*>& bStruct = input ? b.inputs : b.outputs;
    const bool hasStack = n.stack && b.stack;
    const std::size_t minLen = std::min(nLen, bLen);
    auto at = [](const std::vector<const PklRow*>& v, std::size_t i) -> const PklRow* {
        return i < v.size() ? v[i] : nullptr;
    };
    auto cellOf = [](const PklRow* r, Cell PklRow::*field) { return r ? r->*field : Cell::text(std::string(kNan)); };
    for (std::size_t index = 0; index < minLen; ++index) {
        const PklRow* nName = at(n.names, nStart + index);
        const PklRow* bName = at(b.names, bStart + index);
        const PklRow* ns = at(nStruct, index);
        const PklRow* bs = at(bStruct, index);
        if (!nName || !bName || !ns || !bs)
            continue;
        std::vector<Cell> row { Cell::text(nName->name), Cell::text(bName->name), cellOf(ns, &PklRow::dtype),
                                cellOf(bs, &PklRow::dtype), cellOf(ns, &PklRow::shape), cellOf(bs, &PklRow::shape) };
        if (t.mode == CompareMode::Md5) {
            row.push_back(ns->md5);
            row.push_back(bs->md5);
            row.push_back(Cell::text(ns->md5Repr == bs->md5Repr ? "Pass" : "Different"));
        } else {
            const std::size_t metrics = t.mode == CompareMode::Summary ? 4 : 5;
            for (std::size_t i = 0; i < metrics; ++i)
                row.push_back(Cell::text(" "));
            const PklRow* nSum = at(n.summary, nStart + index);
            const PklRow* bSum = at(b.summary, bStart + index);
            t.extendSummary(row, nSum);
            t.extendSummary(row, bSum);
            std::string errMsg;
            std::string result;
            if (t.mode == CompareMode::Summary) {
                constexpr std::size_t start = 6;
                bool warning = false;
                for (std::size_t i = 0; i < 4; ++i) {
                    const Cell& nv = row[10 + i];
                    const Cell& bv = row[14 + i];
                    if (nv.isNumeric() && bv.isNumeric()) {
                        Cell diff;
                        if (!nv.isFloat() && !bv.isFloat())
                            diff = Cell::integer(static_cast<std::int64_t>(nv.asDouble()) - static_cast<std::int64_t>(bv.asDouble()));
                        else
                            diff = Cell::number(nv.asDouble() - bv.asDouble());
                        const double d = diff.asDouble();
                        const double magnitude = std::abs(d) / (std::max(std::abs(nv.asDouble()), std::abs(bv.asDouble())) + 1e-10);
                        if (magnitude > 0.5)
                            warning = true;
                        row[start + i] = diff;
                    } else {
                        row[start + i] = nanCell();
                    }
                }
                result = warning ? "Warning" : "";
                errMsg = warning ? "Need double check api accuracy." : "";
                // ptdbg turns inf/nan numbers into text with a TAB here, so the highlight sees text.
                for (std::size_t i = start; i < row.size(); ++i) {
                    const std::string s = pyStr(row[i]);
                    if (s == "inf" || s == "-inf" || s == "nan")
                        row[i] = Cell::text(s + "\t");
                }
            }
            row.push_back(Cell::text(t.mode == CompareMode::Summary ? result : "Yes"));
            row.push_back(Cell::text(errMsg));
        }
        if (hasStack && index == 0 && input)
            row.push_back(n.stack->stackCell);
        added.push_back(t.rows.size());
        t.rows.push_back(std::move(row));
        t.matched.push_back(true);
        t.benchNames.push_back(bName->name);
    }
    for (std::size_t index = bLen; index < nLen; ++index) {
        const PklRow* nName = at(n.names, nStart + index);
        const PklRow* ns = at(nStruct, index);
        if (!nName || !ns)
            continue;
        std::vector<Cell> row { Cell::text(nName->name), nanCell(), ns->dtype, nanCell(), ns->shape, nanCell() };
        if (t.mode == CompareMode::Md5) {
            row.push_back(ns->md5);
            row.push_back(nanCell());
            row.push_back(nanCell());
        } else {
            // ptdbg writes five " " here in every mode; in statistics mode that is one column too many and
            // pandas refuses the table, so ProbeScope keeps the mode's column count.
            const std::size_t metrics = t.mode == CompareMode::Summary ? 4 : 5;
            for (std::size_t i = 0; i < metrics; ++i)
                row.push_back(Cell::text(" "));
            t.extendSummary(row, at(n.summary, nStart + index));
            for (std::size_t i = 0; i < 4; ++i)
                row.push_back(nanCell());
            row.push_back(Cell::text("Yes"));
            row.push_back(Cell::text(""));
            if (hasStack && index == 0 && input)
                row.push_back(n.stack->stackCell);
        }
        added.push_back(t.rows.size());
        t.rows.push_back(std::move(row));
        t.matched.push_back(false);
        t.benchNames.push_back(std::string(kNan));
    }
}

std::size_t countInputs(const Op& op)
{
    std::size_t n = 0;
    for (const PklRow* r : op.names)
        n += contains(r->name, "input");
    return n;
}

void getAccuracy(Builder& t, const Op& n, const Op& b)
{
    const std::size_t nIn = countInputs(n);
    const std::size_t bIn = countInputs(b);
    const std::size_t lastLen = t.rows.size();
    std::vector<std::size_t> added;
    accuracyCore(t, n, b, 0, nIn, 0, bIn, true, added);
    accuracyCore(t, n, b, nIn, n.names.size() - nIn, bIn, b.names.size() - bIn, false, added);
    t.colors.resize(t.rows.size(), RowColor::None);
    if (t.mode == CompareMode::Summary)
        findErrorRows(t.rows, t.colors, lastLen, t.rows.size() - lastLen, nIn, true);
}

void getUnmatchAccuracy(Builder& t, const Op& n)
{
    std::size_t indexOut = 0;
    for (std::size_t index = 0; index < n.names.size(); ++index) {
        const PklRow* name = n.names[index];
        const PklRow* s = nullptr;
        if (contains(name->name, "input"))
            s = index < n.inputs.size() ? n.inputs[index] : nullptr;
        else
            s = indexOut < n.outputs.size() ? n.outputs[indexOut++] : nullptr;
        if (!s)
            continue;
        std::vector<Cell> row { Cell::text(name->name), nanCell(), s->dtype, nanCell(), s->shape, nanCell() };
        if (t.mode == CompareMode::Md5) {
            for (int i = 0; i < 3; ++i)
                row.push_back(nanCell());
        } else {
            const std::size_t metrics = t.mode == CompareMode::Summary ? 4 : 5;
            for (std::size_t i = 0; i < metrics; ++i)
                row.push_back(nanCell());
            t.extendSummary(row, index < n.summary.size() ? n.summary[index] : nullptr);
            for (int i = 0; i < 4; ++i)
                row.push_back(nanCell());
            row.push_back(nanCell());
            row.push_back(Cell::text(std::string(kNoBench)));
        }
        if (n.stack && index == 0)
            row.push_back(n.stack->stackCell);
        t.rows.push_back(std::move(row));
        t.matched.push_back(false);
        t.benchNames.push_back(std::string(kNan));
    }
}

std::vector<std::string> ptdbgHeader(CompareMode mode, bool stack)
{
    std::vector<std::string> h;
    if (mode == CompareMode::Md5)
        h = { "NPU Name", "Bench Name", "NPU Tensor Dtype", "Bench Tensor Dtype", "NPU Tensor Shape",
              "Bench Tensor Shape", "NPU MD5", "BENCH MD5", "Result" };
    else if (mode == CompareMode::Summary)
        h = { "NPU Name", "Bench Name", "NPU Tensor Dtype", "Bench Tensor Dtype", "NPU Tensor Shape",
              "Bench Tensor Shape", "Max diff", "Min diff", "Mean diff", "L2norm diff", "NPU max", "NPU min",
              "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean", "Bench l2norm", "Result",
              "Err_message" };
    else
        h = { "NPU Name", "Bench Name", "NPU Tensor Dtype", "Bench Tensor Dtype", "NPU Tensor Shape",
              "Bench Tensor Shape", "Cosine", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
              "Five Thousandths Err Ratio", "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max",
              "Bench min", "Bench mean", "Bench l2norm", "Accuracy Reached or Not", "Err_message" };
    if (stack)
        h.emplace_back("NPU_Stack_Info");
    return h;
}

/// The two sides' .npy files: the only way a row reaches them (tensor/resolver.h).
struct RowTensors
{
    const tensor::TensorResolver& npu;
    const tensor::TensorResolver& bench;
};

/// compare_by_op for one row: loads {name}.npy of both sides. `problem` gets the error of a file that is there but
/// cannot be read, or of a name leaving its folder (the row then says "unreadable", never "not found").
PtdbgMetrics compareRow(const RowTensors& tensors, const std::string& npuName, const std::string& benchName,
                        std::optional<Diagnostic>& problem, Splitter& splitter, const std::function<void()>& next)
{
    auto nanAll = [](std::string message) {
        PtdbgMetrics m;
        m.cosine = m.maxAbsErr = m.maxRelativeErr = m.oneThousandthErrRatio = m.fiveThousandthsErrRatio = nanCell();
        m.message = std::move(message);
        return m;
    };
    if (benchName == kNan)
        return nanAll(std::string(kNoBench));
    const std::string nFile = npuName + ".npy";
    const std::string bFile = benchName + ".npy";
    const auto shown = [](const tensor::TensorResolver& side, const std::string& file) {
        return (side.folder() / file).string();
    };
    const auto unreadable = [&](const tensor::TensorResolver& side, const std::string& file, Diagnostic error) {
        std::string message = "Dump file: " + shown(side, file) + " " + std::string(kUnreadableMark) + " " + error.format();
        problem = std::move(error);
        return nanAll(std::move(message));
    };
    // ptdbg checks that both files exist before it reads either. Both are opened at once (TensorResolver::open:
    // the resolver's checks and the open in four system calls per file); a name the resolver refuses is said at
    // once, an open that fails (io.*) only after the other side was found, as when the files were resolved first.
    const auto isResolverError = [](const Diagnostic& error) { return error.id.starts_with("tensor."); };
    NextRowReadAhead readAhead(next);
    auto nOpened = tensors.npu.open(nFile);
    if (!nOpened && nOpened.error().id == "tensor.missing")
        return nanAll("Dump file: " + shown(tensors.npu, nFile) + " not found.");
    if (!nOpened && isResolverError(nOpened.error()))
        return unreadable(tensors.npu, nFile, nOpened.error());
    auto bOpened = tensors.bench.open(bFile);
    if (!bOpened && bOpened.error().id == "tensor.missing")
        return nanAll("Dump file: " + shown(tensors.bench, bFile) + " not found.");
    if (!bOpened && isResolverError(bOpened.error()))
        return unreadable(tensors.bench, bFile, bOpened.error());
    // Both files streamed (small ones read whole into per-thread buffers reused from row to row, large ones a
    // chunk at a time), never loaded whole; a large pair's chunks go to idle threads.
    thread_local tensor::ReadBuffer npuBuffer;
    thread_local tensor::ReadBuffer benchBuffer;
    auto open = [](Result<tensor::OpenedDataFile> opened, tensor::ReadBuffer& buffer) -> Result<tensor::NpyStream> {
        if (!opened)
            return opened.error();
        const fs::path& path = opened->file().path;
        if (tensor::lowerExtension(path) != ".npy")
            return makeError("tensor.format-unknown", fileLocation(path),
                             "cannot tell the tensor format of this file (expected a .pt or .npy file)");
        return tensor::openNpyStream(std::move(opened).value(), buffer);
    };
    auto n = open(std::move(nOpened), npuBuffer);
    if (!n)
        return unreadable(tensors.npu, nFile, n.error());
    auto b = open(std::move(bOpened), benchBuffer);
    if (!b)
        return unreadable(tensors.bench, bFile, b.error());
    readAhead.opened(!n->memory() || !b->memory());
    auto metrics = compareSides(pairSideOf(*n), pairSideOf(*b), npuName != benchName, splitter);
    if (!metrics)
        return unreadable(tensors.npu, nFile,
                          makeError("io.read", fileLocation(tensors.npu.folder() / nFile),
                                    "a read of the pair's elements failed or came short (the file changed while it was read?)"));
    return std::move(*metrics);
}

bool isApiNameChar(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}

/**
 * What ptdbg's re.search(r'\["([0-9a-zA-Z_.]+.(for|back)ward).(in|out)put(\.[0-9]+)?', line) finds as group 1,
 * without a regular expression: std::regex backtracks recursively and overflows the stack on a 35 KB name
 * (issue 25). The leftmost `["` that starts a match wins; for it the greedy run of name characters is given back
 * one at a time, so the longest group 1 wins: the run's prefix of k >= 1 name characters, any one character but a
 * line end ("."), then "forward" or "backward", any one character, then "input" or "output". Linear: each `["` is
 * followed by a run that ends at the next quote or bracket, and each k costs a constant.
 */
std::optional<std::string_view> apiPrefixOf(std::string_view line)
{
    const auto anyChar = [&](std::size_t at) { return at < line.size() && line[at] != '\n' && line[at] != '\r'; };
    const auto wordAt = [&](std::size_t at, std::string_view word) { return line.substr(at, word.size()) == word; };
    for (std::size_t open = line.find("[\""); open != std::string_view::npos; open = line.find("[\"", open + 1)) {
        const std::size_t start = open + 2;
        std::size_t run = 0;
        while (start + run < line.size() && isApiNameChar(line[start + run]))
            ++run;
        for (std::size_t k = run; k >= 1; --k) {
            const std::size_t dot = start + k; // the "." after the name characters
            if (!anyChar(dot))
                continue;
            for (const std::string_view ward : { std::string_view("forward"), std::string_view("backward") }) {
                const std::size_t after = dot + 1 + ward.size();
                if (!wordAt(dot + 1, ward) || !anyChar(after))
                    continue;
                if (wordAt(after + 1, "input") || wordAt(after + 1, "output"))
                    return line.substr(start, after - start);
            }
        }
    }
    return std::nullopt;
}

/// A ptdbg data folder's dump folder: the .pkl's own when the data folder lies beside it (the layout ptdbg writes,
/// so a data folder that is a link to another dump's is refused); else the data folder itself, named on purpose.
fs::path dumpFolderOf(const fs::path& pkl, const fs::path& dataDir)
{
    return dataDir.parent_path() == pkl.parent_path() ? pkl.parent_path() : dataDir;
}

} // namespace

Result<std::shared_ptr<const CompareTable>> comparePkl(const PtdbgInput& input, const PtdbgOptions& options,
                                                       ProgressSink* progress)
{
    std::error_code ec;
    for (const fs::path* p : { &input.npuPkl, &input.benchPkl }) {
        if (!fs::is_regular_file(*p, ec))
            return makeError("ptdbg.input", fileLocation(*p), "no such .pkl file");
    }
    const bool summaryCompare = input.npuDataDir.empty() || input.benchDataDir.empty();
    if (!summaryCompare) {
        for (const fs::path* p : { &input.npuDataDir, &input.benchDataDir }) {
            if (!fs::is_directory(*p, ec))
                return makeError("ptdbg.input", fileLocation(*p),
                                 "no such dump data folder");
        }
    }
    Diagnostics skipped;
    auto npuRows = readRows(input.npuPkl, options.salvage ? &skipped : nullptr);
    if (!npuRows)
        return npuRows.error();
    auto benchRows = readRows(input.benchPkl, options.salvage ? &skipped : nullptr);
    if (!benchRows)
        return benchRows.error();
    // Each side's .npy files, bound to the folder of its .pkl (a data folder that is a link to another dump's is
    // refused before any row is compared: the NPU would be compared with the bench's own tensors).
    std::shared_ptr<const tensor::TensorResolver> npuTensors = options.npuTensors;
    std::shared_ptr<const tensor::TensorResolver> benchTensors = options.benchTensors;
    if (!summaryCompare) {
        if (!npuTensors)
            npuTensors = tensor::makeTensorResolver(dumpFolderOf(input.npuPkl, input.npuDataDir), input.npuDataDir);
        if (!benchTensors)
            benchTensors = tensor::makeTensorResolver(dumpFolderOf(input.benchPkl, input.benchDataDir), input.benchDataDir);
        for (const auto* side : { &npuTensors, &benchTensors }) {
            if ((*side)->folderProblem())
                return *(*side)->folderProblem();
        }
    }
    if (npuRows->rows.empty() || benchRows->rows.empty())
        return makeError("ptdbg.row", lineAt(npuRows->rows.empty() ? input.npuPkl : input.benchPkl, 1),
                         "the dump file has no row (ptdbg: \"dump file have empty line\")");

    Builder t;
    t.notes = std::move(skipped);
    // is_md5_compare looks at the NPU pkl's first row only.
    const bool md5 = npuRows->rows.front().md5Truthy;
    t.mode = md5 ? CompareMode::Md5 : summaryCompare ? CompareMode::Summary : CompareMode::RealData;
    if (md5 && summaryCompare)
        t.notes.push_back(makeWarning(
            "ptdbg.md5-pkl-only", fileLocation(input.npuPkl),
            "ptdbg 6.0 crashes on an md5 compare without data folders (IndexError in its highlight); ProbeScope "
            "compares the md5 values as ptdbg does with data folders"));

    // check_pkl_file: ptdbg refuses -s on dumps without stack rows, no -s on api_stack dumps, and a mix.
    const bool npuStack = npuRows->stackMode;
    const bool benchStack = benchRows->stackMode;
    const SourceLocation npuAt = fileLocation(input.npuPkl);
    if (npuStack != benchStack)
        return makeError("compare.option", npuAt,
                         "The dump mode of the two files is not same, please check the dump files (one holds "
                         "stack_info rows, the other not)");
    if (npuStack && !options.stackMode)
        return makeError("compare.option", npuAt,
                         "The current file contains stack information, please turn on the stack_mode (-s)");
    if (!npuStack && options.stackMode)
        return makeError("compare.option", npuAt,
                         "The current file does not contain stack information, please turn off the stack_mode (-s)");

    OpReader npuReader(npuRows->rows, input.npuPkl, options.stackMode);
    OpReader benchReader(benchRows->rows, input.benchPkl, options.stackMode);
    std::deque<Op> npuQueue;
    std::deque<Op> benchQueue;
    bool graphMode = false;
    while (true) {
        const std::size_t lastNpuLen = npuQueue.size();
        const bool npuMore = npuReader.read(npuQueue);
        const bool benchMore = benchReader.read(benchQueue);
        for (OpReader* r : { &npuReader, &benchReader }) {
            if (r->error)
                return *r->error;
        }
        if (!npuMore && !benchMore)
            break;
        if (npuQueue.empty() || benchQueue.empty() || npuQueue.size() == lastNpuLen)
            continue;
        const auto [nPoint, bPoint] = matchOp(npuQueue, benchQueue, options.fuzzy, graphMode);
        if (nPoint < 0)
            continue;
        for (long i = 0; i < nPoint; ++i)
            getUnmatchAccuracy(t, npuQueue[static_cast<std::size_t>(i)]);
        getAccuracy(t, npuQueue[static_cast<std::size_t>(nPoint)], benchQueue[static_cast<std::size_t>(bPoint)]);
        npuQueue.erase(npuQueue.begin(), npuQueue.begin() + nPoint + 1);
        benchQueue.erase(benchQueue.begin(), benchQueue.begin() + bPoint + 1);
    }
    for (const Op& op : npuQueue)
        getUnmatchAccuracy(t, op);
    if (graphMode)
        t.notes.push_back(makeWarning("ptdbg.graph-mode", fileLocation(input.npuPkl),
                                      "one side names Aten ops and the other does not: ptdbg maps those with its "
                                      "graph mapping, which ProbeScope does not reproduce; such APIs stay unmatched"));
    if (npuReader.droppedAtEnd() > 0)
        t.notes.push_back(makeWarning("ptdbg.tail", fileLocation(input.npuPkl),
                                      std::to_string(npuReader.droppedAtEnd())
                                          + " last rows do not end with an output row; ptdbg never compares them"));

    auto table = std::make_shared<CompareTable>();
    table->mode = t.mode;
    table->stackMode = options.stackMode;
    table->header = ptdbgHeader(t.mode, options.stackMode);
    t.colors.resize(t.rows.size(), RowColor::None);

    if (t.mode == CompareMode::RealData) {
        // read_dump_data: a dict keyed by NPU name, so a name listed twice uses its last bench name.
        std::unordered_map<std::string, std::string> mapping;
        for (std::size_t i = 0; i < t.rows.size(); ++i)
            mapping[t.rows[i][0].asString()] = t.benchNames[i];
        std::vector<PtdbgMetrics> metrics(t.rows.size());
        std::vector<std::optional<Diagnostic>> problems(t.rows.size());
        const RowTensors tensors { *npuTensors, *benchTensors };
        const auto benchOf = [&](std::size_t i) {
            const auto bench = mapping.find(t.rows[i][0].asString());
            return bench == mapping.end() ? std::string(kNan) : bench->second;
        };
        // The one thread pool (util/workgroup): rows side by side, and a large row's chunks on idle threads.
        const bool finished = parallelForSplittable(
            t.rows.size(), options.threads,
            [&](std::size_t i, Splitter& splitter) {
                // While a large pair is computed, the next row's files are read ahead.
                const auto next = [&] {
                    if (i + 1 >= t.rows.size())
                        return;
                    const std::string nextBench = benchOf(i + 1);
                    if (nextBench == kNan)
                        return;
                    tensors.npu.prefetch(t.rows[i + 1][0].asString() + ".npy");
                    tensors.bench.prefetch(nextBench + ".npy");
                };
                metrics[i] = compareRow(tensors, t.rows[i][0].asString(), benchOf(i), problems[i], splitter, next);
            },
            progress);
        if (!finished || (progress && progress->isCancelled()))
            return makeError("compare.cancelled", fileLocation(input.npuPkl),
                             "the compare was cancelled");
        for (std::size_t i = 0; i < t.rows.size(); ++i) {
            auto& row = t.rows[i];
            const PtdbgMetrics& m = metrics[i];
            row[6] = m.cosine;
            row[7] = m.maxAbsErr;
            row[8] = m.maxRelativeErr;
            row[9] = m.oneThousandthErrRatio;
            row[10] = m.fiveThousandthsErrRatio;
            if (row.size() > 20) {
                row[19] = Cell::text(checkAccuracy(m.cosine, m.maxAbsErr));
                row[20] = Cell::text(m.message);
            }
        }
        findCompareResultErrorRows(t.rows, t.colors);
        // A damaged .npy or a name leaving its folder is an error of the input, never "not found" (issue 25).
        std::size_t count = 0;
        for (std::size_t i = 0; i < problems.size(); ++i) {
            if (!problems[i])
                continue;
            if (++count <= 10) {
                Diagnostic d = *problems[i];
                if (d.id != "tensor.path-escape") {
                    d.message = "row " + t.rows[i][0].asString() + ": its .npy file is unreadable: " + d.message;
                    d.id = "compare.tensor-unreadable";
                }
                t.notes.push_back(std::move(d));
            }
        }
        if (count > 10)
            t.notes.push_back(makeError("compare.tensor-unreadable", fileLocation(input.npuPkl),
                                        std::to_string(count - 10) + " more rows with unreadable .npy files"));
    }
    // pandas fills the rows without a stack with None (written "None").
    for (auto& row : t.rows)
        row.resize(table->header.size(), Cell::none());
    table->rows = std::move(t.rows);
    table->colors = std::move(t.colors);
    table->matched = std::move(t.matched);
    table->npuEntry.assign(table->rows.size(), 0);
    table->diagnostics = std::move(t.notes);
    return std::shared_ptr<const CompareTable>(std::move(table));
}

} // namespace probescope::compare::ptdbg
