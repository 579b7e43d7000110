// SPDX-License-Identifier: Apache-2.0
// Reader for the "precision dumps" of ptdbg_ascend (msprobe's predecessor): a .pkl text file of JSON
// arrays, one row per line, plus a folder of .npy files. The rows are converted into a document shaped
// like msprobe's dump.json so everything downstream sees one format. See docs/legacy-pkl.md.
#include "core/dump/dumpfile.h"
#include "core/dump/pklrows.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <array>
#include <exception>
#include <limits>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

namespace probescope::dump {

namespace {

// A broken or binary file could otherwise produce one diagnostic per line.
constexpr std::size_t kMaxReportedProblems = 200;
// Index paths come from the file: bound them so "input.99999999" cannot allocate a huge array.
constexpr std::uint32_t kMaxListIndex = 1u << 16;
// And bound what they add up to: the argument slots of a whole file (each empty one is written as null) are at
// most this many plus one per byte of the file, so "input.9999.9999" rows cannot turn 20 KB into millions of
// slots and gigabytes (issue 25). One list of kMaxListIndex elements still fits.
constexpr std::uint64_t kSlotSlack = kMaxListIndex;
constexpr std::size_t kMaxPathDepth = 32;

constexpr std::string_view kStackSuffix = "_stack_info";
// ptdbg 6.0 names rows with dots, as msprobe does ("Functional.conv2d.0.forward.stack_info").
constexpr std::string_view kDotStackSuffix = ".stack_info";

/// A JSON scalar copied out of a row (rows are parsed one at a time; their documents do not live on).
/// Strings live beside it in the Row, so statistics need no allocation.
struct Scalar
{
    enum class Kind : std::uint8_t { Null, Bool, Int, Double, String };
    Kind kind = Kind::Null;
    union {
        std::int64_t integer = 0;
        double number;
    };
};

struct Row
{
    std::string name;
    bool isScalar = false;
    std::string type; ///< tensor dtype ("torch.float32") or scalar type ("int")
    std::vector<std::int64_t> shape;
    std::string md5;
    std::array<Scalar, 4> stats {}; ///< Max, Min, Mean[, Norm] as written (tensor rows)
    std::uint8_t statCount = 0;
    Scalar value; ///< scalar rows
    std::string valueText; ///< scalar rows holding a string
    std::uint64_t offset = 0;
};

/// One node of an entry field being assembled from index paths ("input.0.1").
struct Slot
{
    enum class Kind : std::uint8_t { Empty, Leaf, List, Dict };
    Kind kind = Kind::Empty;
    std::uint32_t row = 0;
    std::vector<Slot> items;
    std::vector<std::string> keys; ///< Dict: keys parallel to items, in first-seen order
};

struct PendingEntry
{
    std::string key;
    bool backward = false;
    Slot input; ///< input_args (forward) or input (backward)
    Slot kwargs; ///< input_kwargs (forward only)
    Slot output;
    std::uint64_t offset = 0;
    std::uint32_t line = 0;
};

struct PendingStack
{
    std::string key;
    std::vector<std::string> frames;
    std::uint64_t offset = 0;
};

struct RowName
{
    std::string_view key; ///< Functional_conv2d_0_forward
    bool backward = false;
    bool output = false;
    std::string_view path; ///< "0.1", or "" when the name has no index ("..._forward_output")
};

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Splits "{key}_{input|output}[.{path}]" (ptdbg up to 5.x) or "{key}.{input|output}[.{path}]" (6.0,
/// msprobe's spelling). The API part may hold underscores and, for Aten names, dots
/// ("Aten__native_batch_norm_legit_functional.default_0_forward_input.0"), so the last direction marker
/// followed by input/output and then the end or a '.' is taken.
std::optional<RowName> splitRowName(std::string_view name)
{
    std::optional<RowName> best;
    std::size_t bestAt = 0;
    for (const std::string_view marker : { std::string_view("_forward_"), std::string_view("_backward_"),
             std::string_view(".forward."), std::string_view(".backward.") }) {
        for (std::size_t at = name.find(marker); at != std::string_view::npos; at = name.find(marker, at + 1)) {
            if (at == 0 || (best && at < bestAt))
                continue;
            const std::string_view rest = name.substr(at + marker.size());
            for (const std::string_view category : { std::string_view("input"), std::string_view("output") }) {
                if (rest.substr(0, category.size()) != category)
                    continue;
                const std::string_view tail = rest.substr(category.size());
                if (!tail.empty() && tail.front() != '.')
                    continue;
                RowName candidate;
                candidate.key = name.substr(0, at + marker.size() - 1);
                candidate.backward = marker == "_backward_" || marker == ".backward.";
                candidate.output = category == "output";
                candidate.path = tail.empty() ? tail : tail.substr(1);
                best = candidate;
                bestAt = at;
            }
        }
    }
    return best;
}

std::optional<std::uint32_t> listIndex(std::string_view segment)
{
    if (segment.empty() || segment.size() > 6)
        return std::nullopt;
    std::uint32_t value = 0;
    for (const char c : segment) {
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return value;
}

std::vector<std::string_view> splitPath(std::string_view path)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = path.find('.', start);
        parts.push_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    return parts;
}

/// Puts row `row` at `path` below `root`; on failure says why in `problem` (and whether it is a duplicate).
bool placeLeaf(
    Slot& root, const std::vector<std::string_view>& path, std::uint32_t row, std::string& problem, bool& duplicate)
{
    Slot* slot = &root;
    for (const std::string_view segment : path) {
        if (const auto index = listIndex(segment)) {
            if (slot->kind == Slot::Kind::Empty)
                slot->kind = Slot::Kind::List;
            if (slot->kind != Slot::Kind::List) {
                problem = slot->kind == Slot::Kind::Leaf ? "a tensor of this API is also used as a list"
                                                         : "a keyword container of this API is also used as a list";
                return false;
            }
            if (*index >= slot->items.size())
                slot->items.resize(*index + 1);
            slot = &slot->items[*index];
        } else {
            if (slot->kind == Slot::Kind::Empty)
                slot->kind = Slot::Kind::Dict;
            if (slot->kind != Slot::Kind::Dict) {
                problem = slot->kind == Slot::Kind::Leaf ? "a tensor of this API is also used as a container"
                                                         : "a list of this API is also used with a name index";
                return false;
            }
            std::size_t i = 0;
            while (i < slot->keys.size() && slot->keys[i] != segment)
                ++i;
            if (i == slot->keys.size()) {
                slot->keys.emplace_back(segment);
                slot->items.emplace_back();
            }
            slot = &slot->items[i];
        }
    }
    if (slot->kind != Slot::Kind::Empty) {
        duplicate = slot->kind == Slot::Kind::Leaf;
        problem = duplicate ? "this argument was already dumped for this API"
                            : "this index already holds a list or keyword arguments of this API";
        return false;
    }
    slot->kind = Slot::Kind::Leaf;
    slot->row = row;
    return true;
}

/// How many slots placeLeaf would add for `path` below `root`: an index past the end of a list pads it with empty
/// slots (written as null), so "input.9999.9999" alone asks for 20,000 of them. Nothing is allocated here.
std::uint64_t slotCost(const Slot& root, const std::vector<std::string_view>& path)
{
    const Slot* slot = &root;
    std::uint64_t cost = 0;
    for (const std::string_view segment : path) {
        const auto index = listIndex(segment);
        if (!slot) { // below a new slot everything is new
            cost += index ? std::uint64_t { *index } + 1 : 1;
            continue;
        }
        if (index) {
            if (slot->kind != Slot::Kind::Empty && slot->kind != Slot::Kind::List)
                return cost; // placeLeaf refuses the row (pkl.conflict) before allocating
            if (*index < slot->items.size()) {
                slot = &slot->items[*index];
                continue;
            }
            cost += std::uint64_t { *index } + 1 - slot->items.size();
            slot = nullptr;
        } else {
            if (slot->kind != Slot::Kind::Empty && slot->kind != Slot::Kind::Dict)
                return cost;
            const auto key = std::find(slot->keys.begin(), slot->keys.end(), segment);
            if (key != slot->keys.end()) {
                slot = &slot->items[static_cast<std::size_t>(key - slot->keys.begin())];
                continue;
            }
            cost += 1;
            slot = nullptr;
        }
    }
    return cost;
}

/// ptdbg's text in a summary slot: "Nan" (not computed) and the spellings of non-finite values.
bool isSummaryPlaceholder(std::string_view text)
{
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    for (const char* ok : { "nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity", "none", "null" }) {
        if (lower == ok)
            return true;
    }
    return false;
}

Scalar copyScalar(JsonValue v, std::string* text = nullptr)
{
    Scalar s;
    switch (v.type()) {
    case JsonType::Bool:
        s.kind = Scalar::Kind::Bool;
        s.integer = v.asBool() ? 1 : 0;
        break;
    case JsonType::Int:
        s.kind = Scalar::Kind::Int;
        s.integer = v.asInt();
        break;
    case JsonType::Double:
        s.kind = Scalar::Kind::Double;
        s.number = v.asDouble();
        break;
    case JsonType::String:
        if (text) {
            s.kind = Scalar::Kind::String;
            *text = std::string(v.asString());
        }
        break;
    default:
        break;
    }
    return s;
}

void emitScalar(JsonBuilder& b, const Scalar& s, std::string_view text, std::uint64_t offset)
{
    switch (s.kind) {
    case Scalar::Kind::Null:
        b.null(offset);
        break;
    case Scalar::Kind::Bool:
        b.boolean(s.integer != 0, offset);
        break;
    case Scalar::Kind::Int:
        b.integer(s.integer, offset);
        break;
    case Scalar::Kind::Double:
        b.number(s.number, offset);
        break;
    case Scalar::Kind::String:
        b.string(text, offset);
        break;
    }
}

/// "<class 'int'>" (3.x) or "int" (later) mark a non-tensor argument; returns its Python type name.
std::optional<std::string_view> scalarTypeName(std::string_view dtype)
{
    constexpr std::string_view open = "<class '";
    constexpr std::string_view close = "'>";
    if (dtype.size() > open.size() + close.size() && dtype.substr(0, open.size()) == open && endsWith(dtype, close))
        return dtype.substr(open.size(), dtype.size() - open.size() - close.size());
    for (const std::string_view builtin : { "int", "float", "bool", "str", "complex" }) {
        if (dtype == builtin)
            return dtype;
    }
    return std::nullopt;
}

/// Shapes are lists; scalar rows wrote str([]) instead, so "[1, 2]" and "(1, 2)" are accepted too.
bool parseShape(JsonValue v, std::vector<std::int64_t>& shape)
{
    shape.clear();
    if (v.isArray()) {
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            // A negative dimension is no shape (it was accepted silently before issue 20).
            if (!v.at(i).isInt() || v.at(i).asInt() < 0)
                return false;
            shape.push_back(v.at(i).asInt());
        }
        return true;
    }
    if (!v.isString())
        return false;
    std::string_view s = v.asString();
    if (s.size() < 2 || !((s.front() == '[' && s.back() == ']') || (s.front() == '(' && s.back() == ')')))
        return false;
    s = s.substr(1, s.size() - 2);
    std::int64_t value = 0;
    bool haveDigits = false;
    for (const char c : s) {
        if (c >= '0' && c <= '9') {
            if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
                return false;
            value = value * 10 + (c - '0');
            haveDigits = true;
        } else if (c == ',') {
            if (!haveDigits)
                return false;
            shape.push_back(value);
            value = 0;
            haveDigits = false;
        } else if (c != ' ') {
            return false;
        }
    }
    if (haveDigits)
        shape.push_back(value);
    return true;
}

/// msprobe's stack.json frame text, so stacks of both formats read the same.
std::string formatFrame(JsonValue frame)
{
    auto part = [](JsonValue v) -> std::string {
        switch (v.type()) {
        case JsonType::String:
            return std::string(v.asString());
        case JsonType::Int:
            return std::to_string(v.asInt());
        case JsonType::Null:
            return "None"; // what Python's f-string printed for a frame without source
        default:
            return {};
        }
    };
    return "File " + part(frame.at(0)) + ", line " + part(frame.at(1)) + ", in " + part(frame.at(2)) + ", \n "
        + part(frame.at(3));
}

class PklReader
{
public:
    PklReader(std::string_view text, const std::filesystem::path& path, const ReadOptions& options)
        : m_text(text)
        , m_path(path)
        , m_file(path.string())
        , m_options(options)
    { }

    Result<std::shared_ptr<const DumpFile>> run();

private:
    std::string_view m_text;
    std::filesystem::path m_path;
    std::string m_file;
    ReadOptions m_options;

    std::vector<Row> m_rows;
    std::vector<PendingEntry> m_entries;
    std::unordered_map<std::string, std::size_t> m_entryIndex;
    std::vector<PendingStack> m_stacks;
    std::unordered_map<std::string, std::size_t> m_stackIndex;
    std::unordered_set<std::string> m_npyFiles;

    Diagnostics m_diagnostics;
    std::size_t m_problems = 0;
    std::size_t m_goodRows = 0;
    std::uint64_t m_slots = 0; ///< argument slots made so far (bounded: kSlotSlack + one per byte of the file)
    std::optional<Diagnostic> m_firstProblem;
    bool m_truncated = false;
    std::string m_droppedEntry;

    // Current line.
    std::uint64_t m_lineStart = 0;
    std::uint32_t m_lineNumber = 0;

    SourceLocation at(std::uint64_t offset) const
    {
        const auto column = static_cast<std::uint32_t>(offset - m_lineStart + 1);
        return SourceLocation { m_file, offset, m_lineNumber, column };
    }
    void problem(Diagnostic d);
    void rowError(const std::string& id, std::uint64_t offset, const std::string& message)
    {
        problem(makeError(id, at(offset), message));
    }

    void readRow(JsonValue row, const PklLine& line);
    void readProblem(const PklLineProblem& found, const PklLine& line);
    void readTruncated(std::string_view line);
    void addStackRow(JsonValue row, std::string_view name);
    void addTensorRow(JsonValue row, std::string_view name);
    void listNpyFolder(const std::filesystem::path& folder);
    void emitSlot(JsonBuilder& b, const Slot& slot) const;
    void emitField(JsonBuilder& b, std::string_view key, const Slot& slot, bool dict, std::uint64_t offset) const;
    void emitLeaf(JsonBuilder& b, const Row& row) const;
};

void PklReader::problem(Diagnostic d)
{
    if (!m_firstProblem)
        m_firstProblem = d;
    if (++m_problems <= kMaxReportedProblems)
        m_diagnostics.push_back(std::move(d));
}

void PklReader::readRow(JsonValue row, const PklLine& line)
{
    m_lineNumber = line.number;
    m_lineStart = line.start;
    const std::string_view name = row.at(0).asString();
    if (endsWith(name, kStackSuffix) || endsWith(name, kDotStackSuffix))
        addStackRow(row, name);
    else
        addTensorRow(row, name);
}

void PklReader::readProblem(const PklLineProblem& found, const PklLine& line)
{
    m_lineNumber = line.number;
    m_lineStart = line.start;
    if (found.cut) {
        readTruncated(line.text);
        return;
    }
    Diagnostic d = found.diagnostic;
    if (!found.rowKept)
        d.message += "; the line is skipped";
    problem(std::move(d));
}

void PklReader::readTruncated(std::string_view line)
{
    m_truncated = true;
    // The complete elements of the cut row tell which API lost its data.
    JsonParseOptions salvage;
    salvage.salvageTruncated = true;
    salvage.maxDepth = kMaxPklRowDepth;
    const auto partial = JsonDocument::parse(line, m_file, salvage);
    std::string lost = "its name was cut too";
    if (partial.document && partial.document->root().isArray() && partial.document->root().size() > 0
        && partial.document->root().at(0).isString()) {
        const std::string_view name = partial.document->root().at(0).asString();
        lost = "\"" + std::string(name) + "\"";
        std::string_view key;
        if (endsWith(name, kStackSuffix) || endsWith(name, kDotStackSuffix)) {
            lost = "the stack of \"" + std::string(name.substr(0, name.size() - kStackSuffix.size())) + "\"";
        } else if (const auto split = splitRowName(name)) {
            key = split->key;
        }
        // A half-read API would give wrong compare rows (an input without its output), so it goes entirely.
        if (!key.empty()) {
            if (const auto it = m_entryIndex.find(std::string(key)); it != m_entryIndex.end())
                m_droppedEntry = key;
        }
    }
    std::string message = "the file ends inside the row at line " + std::to_string(m_lineNumber) + " (" + lost
        + "): the run that wrote it probably stopped early; that row is lost";
    if (!m_droppedEntry.empty())
        message += ", and the incomplete API \"" + m_droppedEntry + "\" is dropped";
    message += "; every complete row before it is kept";
    // Not counted as a problem: the file is readable, only its end is missing.
    m_diagnostics.push_back(makeError("pkl.truncated", at(m_lineStart + line.size()), std::move(message)));
}

void PklReader::addStackRow(JsonValue row, std::string_view name)
{
    const std::uint64_t rowOffset = m_lineStart + row.offset();
    if (row.size() != 2 || !row.at(1).isArray()) {
        rowError("pkl.row", rowOffset, "a stack row must be [name, [frames...]]; the line is skipped");
        return;
    }
    const JsonValue frames = row.at(1);
    PendingStack stack;
    stack.key = std::string(name.substr(0, name.size() - kStackSuffix.size()));
    stack.offset = rowOffset;
    for (std::uint32_t i = 0; i < frames.size(); ++i) {
        const JsonValue frame = frames.at(i);
        if (frame.isString()) {
            // ptdbg wrote a lone "" when inspect.stack() failed: there is no frame to show.
            if (!frame.asString().empty())
                stack.frames.emplace_back(frame.asString());
            continue;
        }
        bool valid = frame.isArray() && frame.size() == 4;
        for (std::uint32_t k = 0; valid && k < 4; ++k) {
            const JsonType t = frame.at(k).type();
            valid = t == JsonType::String || t == JsonType::Null || (k == 1 && t == JsonType::Int);
        }
        if (!valid) {
            rowError("pkl.row", m_lineStart + frame.offset(),
                "a stack frame must be a string or [file, line, function, code]; the line is skipped");
            return;
        }
        stack.frames.push_back(formatFrame(frame));
    }
    if (m_stackIndex.count(stack.key) != 0) {
        problem(makeWarning(
            "pkl.duplicate", at(rowOffset), "a second stack for \"" + stack.key + "\"; the first one is kept"));
        return;
    }
    m_stackIndex.emplace(stack.key, m_stacks.size());
    m_stacks.push_back(std::move(stack));
    ++m_goodRows;
}

void PklReader::addTensorRow(JsonValue row, std::string_view name)
{
    const std::uint64_t rowOffset = m_lineStart + row.offset();
    auto elementAt = [&](std::uint32_t i) { return m_lineStart + row.at(i).offset(); };
    if (row.size() < 6) {
        rowError("pkl.row", rowOffset,
            "a tensor row must be [name, dump_step, md5, dtype, shape, summary], this one has "
                + std::to_string(row.size()) + " elements; the line is skipped");
        return;
    }
    const auto split = splitRowName(name);
    if (!split) {
        rowError("pkl.name", elementAt(0),
            "\"" + std::string(name)
                + "\" is not named {API}_{forward|backward}_{input|output}[.index] (ptdbg up to 5.x) or "
                  "{API}.{forward|backward}.{input|output}[.index] (6.0); the line is skipped");
        return;
    }
    if (!row.at(1).isNumber()) {
        rowError("pkl.row", elementAt(1), "dump_step must be a number; the line is skipped");
        return;
    }
    Row r;
    r.name = std::string(name);
    r.offset = rowOffset;
    const JsonValue md5 = row.at(2);
    if (md5.isString())
        r.md5 = std::string(md5.asString());
    else if (!(md5.isNull() || (md5.isArray() && md5.size() == 0))) {
        rowError("pkl.row", elementAt(2), "md5 must be a string or []; the line is skipped");
        return;
    }
    if (!row.at(3).isString()) {
        rowError("pkl.row", elementAt(3), "dtype must be a string; the line is skipped");
        return;
    }
    const std::string_view dtype = row.at(3).asString();
    const JsonValue summary = row.at(5);
    if (!summary.isArray()) {
        rowError("pkl.row", elementAt(5), "the summary must be a list [max, min, mean(, norm)]; the line is skipped");
        return;
    }
    if (const auto scalarType = scalarTypeName(dtype)) {
        r.isScalar = true;
        r.type = std::string(*scalarType);
        // A scalar's "summary" repeats its value.
        if (summary.size() > 0 && !summary.at(0).isArray() && !summary.at(0).isObject())
            r.value = copyScalar(summary.at(0), &r.valueText);
    } else {
        r.type = std::string(dtype);
        if (!parseShape(row.at(4), r.shape)) {
            rowError("pkl.row", elementAt(4), "shape must be a list of non-negative integers; the line is skipped");
            return;
        }
        for (std::uint32_t i = 0; i < summary.size() && i < 4; ++i) {
            const JsonValue s = summary.at(i);
            if (s.isObject() || (s.isArray() && s.size() > 0)) {
                rowError("pkl.row", m_lineStart + s.offset(), "summary values must be numbers; the line is skipped");
                return;
            }
            // Text is only ptdbg's placeholders for a value it could not compute or a non-finite one; any other text
            // ("abc") is a damaged row, never a statistic read as missing (issue 25).
            if (s.isString() && !isSummaryPlaceholder(s.asString())) {
                rowError("pkl.row", m_lineStart + s.offset(),
                         "summary values must be numbers (or \"Nan\", \"inf\", \"-inf\"); \""
                             + std::string(s.asString().substr(0, 40)) + "\" is neither; the line is skipped");
                return;
            }
            // [] (empty or bool tensor) and the "Nan" placeholder mean "not computed", like msprobe's null.
            r.stats[r.statCount++] = copyScalar(s);
        }
    }

    std::vector<std::string_view> path;
    if (split->path.empty()) {
        // A single tensor was dumped without an index; msprobe lists it as element 0.
        path.push_back("0");
    } else {
        path = splitPath(split->path);
    }
    for (const std::string_view segment : path) {
        const auto index = listIndex(segment);
        if (segment.empty() || path.size() > kMaxPathDepth || (index && *index >= kMaxListIndex)
            || (!index && segment.find_first_not_of("0123456789") == std::string_view::npos)) {
            rowError("pkl.name", elementAt(0),
                "\"" + std::string(name) + "\" has an unusable index path; the line is skipped");
            return;
        }
    }

    // Rows of one call are consecutive, so the last entry is nearly always the one: skip the hash lookup.
    std::size_t existing = m_entries.size();
    if (!m_entries.empty() && m_entries.back().key == split->key) {
        existing = m_entries.size() - 1;
    } else if (const auto found = m_entryIndex.find(std::string(split->key)); found != m_entryIndex.end()) {
        existing = found->second;
    }
    const bool isNew = existing == m_entries.size();
    PendingEntry fresh;
    if (isNew) {
        fresh.key = std::string(split->key);
        fresh.backward = split->backward;
        fresh.offset = rowOffset;
        fresh.line = m_lineNumber;
    }
    PendingEntry& entry = isNew ? fresh : m_entries[existing];
    Slot* root = &entry.output;
    if (!split->output) {
        root = &entry.input;
        // Tensors passed by keyword carry the keyword instead of a position.
        if (!split->backward && !listIndex(path.front()))
            root = &entry.kwargs;
    }
    const std::uint64_t cost = slotCost(*root, path);
    if (m_slots + cost > kSlotSlack + m_text.size()) {
        rowError("pkl.amplification", elementAt(0),
            "\"" + std::string(name.substr(0, 256)) + (name.size() > 256 ? "...\"" : "\"") + ": its index path would add "
                + std::to_string(cost) + " argument slots (empty positions written as null) to the " + std::to_string(m_slots)
                + " already made, more than a file of " + std::to_string(m_text.size()) + " bytes can describe (at most "
                + std::to_string(kSlotSlack) + " plus one per byte); the line is skipped");
        return;
    }
    m_slots += cost;
    std::string why;
    bool duplicate = false;
    if (!placeLeaf(*root, path, static_cast<std::uint32_t>(m_rows.size()), why, duplicate)) {
        if (duplicate)
            problem(makeWarning("pkl.duplicate", at(elementAt(0)),
                "\"" + std::string(name) + "\" appears again; the first row is kept"));
        else
            rowError("pkl.conflict", elementAt(0), "\"" + std::string(name) + "\": " + why + "; the line is skipped");
        return;
    }
    if (isNew) {
        m_entryIndex.emplace(fresh.key, m_entries.size());
        m_entries.push_back(std::move(fresh));
    }
    m_rows.push_back(std::move(r));
    ++m_goodRows;
}

void PklReader::listNpyFolder(const std::filesystem::path& folder)
{
    // One directory listing instead of one stat() per row: dumps hold hundreds of thousands of files.
    std::error_code ec;
    std::filesystem::directory_iterator it(folder, ec);
    const std::filesystem::directory_iterator end;
    for (; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (endsWith(name, ".npy"))
            m_npyFiles.insert(std::move(name));
    }
}

void PklReader::emitLeaf(JsonBuilder& b, const Row& row) const
{
    b.beginObject(row.offset);
    b.key("type");
    if (row.isScalar) {
        b.string(row.type, row.offset);
        b.key("value");
        emitScalar(b, row.value, row.valueText, row.offset);
        b.end();
        return;
    }
    b.string("torch.Tensor", row.offset);
    b.key("dtype");
    b.string(row.type, row.offset);
    b.key("shape");
    b.beginArray(row.offset);
    for (const std::int64_t d : row.shape)
        b.integer(d, row.offset);
    b.end();
    static constexpr std::array<std::string_view, 4> statNames { "Max", "Min", "Mean", "Norm" };
    for (std::size_t i = 0; i < row.statCount; ++i) {
        b.key(statNames[i]);
        emitScalar(b, row.stats[i], {}, row.offset);
    }
    if (!row.md5.empty()) {
        b.key("md5");
        b.string(row.md5, row.offset);
    }
    const std::string fileName = row.name + ".npy";
    if (m_npyFiles.count(fileName) != 0) {
        b.key("data_name");
        b.string(fileName, row.offset);
    }
    b.end();
}

void PklReader::emitSlot(JsonBuilder& b, const Slot& slot) const
{
    switch (slot.kind) {
    case Slot::Kind::Empty:
        // An argument that was not dumped (None, a string, ...): msprobe writes null for those too.
        b.null();
        return;
    case Slot::Kind::Leaf:
        emitLeaf(b, m_rows[slot.row]);
        return;
    case Slot::Kind::List:
        b.beginArray();
        for (const Slot& item : slot.items)
            emitSlot(b, item);
        b.end();
        return;
    case Slot::Kind::Dict:
        b.beginObject();
        for (std::size_t i = 0; i < slot.items.size(); ++i) {
            b.key(slot.keys[i]);
            emitSlot(b, slot.items[i]);
        }
        b.end();
        return;
    }
}

void PklReader::emitField(JsonBuilder& b, std::string_view key, const Slot& slot, bool dict, std::uint64_t offset) const
{
    b.key(key);
    if (slot.kind == Slot::Kind::Empty) {
        if (dict)
            b.beginObject(offset);
        else
            b.beginArray(offset);
        b.end();
        return;
    }
    emitSlot(b, slot);
}

Result<std::shared_ptr<const DumpFile>> PklReader::run()
{
    if (m_text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return makeError("pkl.empty", SourceLocation { m_file, 0, 1, 1 }, "the .pkl file is empty");
    if (static_cast<unsigned char>(m_text.front()) == 0x80)
        return makeError("pkl.format", SourceLocation { m_file, 0, 1, 1 },
            "this is a binary Python pickle; ptdbg_ascend .pkl dumps are text with one JSON row per line");

    // One row per line: sizing the tables once avoids rehashing them a dozen times on large dumps.
    std::size_t lineCount = 1;
    for (std::size_t nl = m_text.find('\n'); nl != std::string_view::npos; nl = m_text.find('\n', nl + 1))
        ++lineCount;
    m_rows.reserve(lineCount);
    m_entryIndex.reserve(lineCount / 2);

    // The one grammar of the lines (pklrows.h), which the ptdbg profile reads with too.
    forEachPklLine(
        m_text, m_file,
        [this](JsonValue row, const PklLine& line) {
            readRow(row, line);
            return PklVisit::Continue;
        },
        [this](const PklLineProblem& found, const PklLine& line) {
            readProblem(found, line);
            return PklVisit::Continue;
        });
    // ptdbg_ascend ends every row with a line break (every .pkl it wrote does). A last row that is complete JSON but
    // has none was cut right after its closing bracket: the rows after it are lost, which nothing else would show
    // (issue 25: such a file compared clean with exit 0). Same rule as run_ut's CSVs (docs/reliability.md §5).
    if (!m_truncated) {
        const std::size_t lastBreak = m_text.rfind('\n');
        const std::string_view tail = m_text.substr(lastBreak == std::string_view::npos ? 0 : lastBreak + 1);
        if (tail.find_first_not_of(" \t\r") != std::string_view::npos) {
            m_truncated = true;
            m_diagnostics.push_back(makeError("pkl.truncated", at(m_text.size()),
                "the file ends at line " + std::to_string(m_lineNumber)
                    + " without the line break ptdbg_ascend writes after every row: it was probably cut right after "
                      "that row, and whatever followed is lost; every row before the end is kept"));
        }
    }

    if (m_truncated && !m_options.salvageTruncated) {
        for (const Diagnostic& d : m_diagnostics) {
            if (d.id == "pkl.truncated")
                return d;
        }
    }
    if (m_goodRows == 0 && m_firstProblem)
        return makeError("pkl.format", m_firstProblem->location,
            "not a ptdbg_ascend dump: no line is a valid row (first problem: " + m_firstProblem->message + ")");
    if (m_problems > kMaxReportedProblems)
        m_diagnostics.push_back(makeWarning("pkl.more", SourceLocation { m_file, std::nullopt, 0, 0 },
            std::to_string(m_problems - kMaxReportedProblems) + " more problems were found and not reported"));

    // ptdbg saved the .npy files in a folder named like the .pkl without its extension.
    const std::filesystem::path folder = m_path.parent_path() / m_path.stem();
    std::error_code ec;
    const bool haveFolder = std::filesystem::is_directory(folder, ec);
    if (haveFolder)
        listNpyFolder(folder);

    auto dump = std::make_shared<DumpFile>();
    dump->format = DumpFormat::LegacyPkl;
    dump->path = m_path;
    dump->tensorDir = folder;
    dump->truncated = m_truncated;
    dump->header.task = haveFolder ? "tensor" : "statistics";
    dump->header.level = "L1";
    dump->header.framework = "pytorch";
    if (haveFolder)
        dump->header.dumpDataDir = folder.string();

    JsonBuilder b;
    b.beginObject();
    b.key("task");
    b.string(dump->header.task);
    b.key("level");
    b.string(dump->header.level);
    b.key("framework");
    b.string(dump->header.framework);
    b.key("dump_data_dir");
    if (haveFolder)
        b.string(folder.string());
    else
        b.null();
    // Before "data", so that as in a dump.json the member a crash cuts is the last one.
    if (!m_stacks.empty()) {
        b.key("stack");
        b.beginObject(m_stacks.front().offset);
        for (const PendingStack& stack : m_stacks) {
            b.key(stack.key);
            b.beginArray(stack.offset);
            for (const std::string& frame : stack.frames)
                b.string(frame, stack.offset);
            b.end();
        }
        b.end();
    }
    b.key("data");
    b.beginObject(m_entries.empty() ? 0 : m_entries.front().offset);
    std::vector<const PendingEntry*> kept;
    kept.reserve(m_entries.size());
    for (const PendingEntry& entry : m_entries) {
        if (entry.key == m_droppedEntry)
            continue;
        kept.push_back(&entry);
        b.key(entry.key);
        b.beginObject(entry.offset);
        if (entry.backward) {
            emitField(b, "input", entry.input, false, entry.offset);
        } else {
            emitField(b, "input_args", entry.input, false, entry.offset);
            emitField(b, "input_kwargs", entry.kwargs, true, entry.offset);
        }
        emitField(b, "output", entry.output, false, entry.offset);
        b.end();
    }
    if (m_truncated)
        b.markOpenTruncated();
    dump->document = b.finish();

    const JsonValue root = dump->document->root();
    const std::optional<JsonValue> data = root.find("data");
    dump->entries.reserve(kept.size());
    for (std::uint32_t i = 0; data && i < data->size(); ++i) {
        const JsonValue value = data->at(i);
        Entry entry { value.key(), parseEntryName(value.key()), value, kept[i]->offset, kept[i]->line };
        if (entry.name.kind == EntryKind::Unknown)
            m_diagnostics.push_back(
                makeWarning("pkl.entry-name", SourceLocation { m_file, entry.offset, entry.line, 1 },
                    "API \"" + std::string(entry.key)
                        + "\" is not named {Prefix}_{api}_{index}_{forward|backward} or {Prefix}.{api}.{index}.{forward|backward}"));
        dump->entries.push_back(entry);
    }
    dump->diagnostics = std::move(m_diagnostics);
    dump->buildIndex();
    return std::shared_ptr<const DumpFile>(std::move(dump));
}

} // namespace

Result<std::shared_ptr<const DumpFile>> readLegacyPkl(const std::filesystem::path& path, const ReadOptions& options)
{
    try {
        auto file = MappedFile::open(path, maxJsonFileBytes());
        if (!file)
            return file.error();
        PklReader reader((*file)->text(), path, options);
        return reader.run();
    } catch (const std::exception& e) {
        // Only allocation failures can get here; the reader itself does not throw.
        return makeError("pkl.internal", fileLocation(path),
            std::string("reading the .pkl failed: ") + e.what());
    }
}

} // namespace probescope::dump
