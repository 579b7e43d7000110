// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumpfile.h"
#include "core/dump/entrycheck.h"

#include "core/dump/leaf.h"
#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace probescope::dump {

namespace {
constexpr std::uint32_t kNoEntry = 0xffffffffu;
}

const Entry* DumpFile::find(std::string_view key) const
{
    if (!m_entryOfKey.empty()) {
        const auto id = document->keyId(key);
        return id && m_entryOfKey[*id] != kNoEntry ? &entries[m_entryOfKey[*id]] : nullptr;
    }
    const auto i = m_index.find(key, [this](std::uint32_t id) { return keyOf(id); });
    return i ? &entries[*i] : nullptr;
}

void DumpFile::buildIndex()
{
    m_entryOfKey.clear();
    m_index = {};
    bool added = false;
    for (std::uint32_t i = 0; i < entries.size(); ++i) {
        m_index.insert(entries[i].key, i, [this](std::uint32_t id) { return keyOf(id); }, added);
        if (!added)
            m_index.setLast(i);
    }
}

namespace {

// Newlines in [p, end): 16 bytes per step. An indent=1 dump has a line per value, so a memchr per line
// cost more than the count itself. Byte counters (0 - matches) are summed every 255 steps, before they
// wrap; no popcount, which the baseline x86-64 target lacks.
std::uint32_t countNewlines(const char* p, const char* end)
{
    std::uint64_t count = 0;
#if defined(__SSE2__)
    const __m128i newline = _mm_set1_epi8('\n');
    while (end - p >= 16) {
        __m128i counters = _mm_setzero_si128();
        for (int step = 0; step < 255 && end - p >= 16; ++step, p += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(v, newline));
        }
        const __m128i sums = _mm_sad_epu8(counters, _mm_setzero_si128());
        count += static_cast<std::uint64_t>(_mm_cvtsi128_si64(sums))
            + static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
    }
#endif
    for (; p < end; ++p)
        count += *p == '\n';
    return static_cast<std::uint32_t>(count);
}

// Counts lines incrementally: entry offsets only grow, so the whole file is scanned once.
class LineCounter
{
public:
    explicit LineCounter(std::string_view text)
        : m_text(text)
    {
    }
    std::uint32_t lineAt(std::uint64_t offset)
    {
        const auto target = static_cast<std::size_t>(std::min<std::uint64_t>(offset, m_text.size()));
        if (target < m_pos)
            return locate(m_text, target, {}).line;
        m_line += countNewlines(m_text.data() + m_pos, m_text.data() + target);
        m_pos = target;
        return m_line;
    }

private:
    std::string_view m_text;
    std::size_t m_pos = 0;
    std::uint32_t m_line = 1;
};

std::string headerString(JsonValue root, std::string_view key, const std::string& file, std::string_view text,
                         Diagnostics& diagnostics)
{
    const auto v = root.find(key);
    if (!v || v->isNull())
        return {};
    if (!v->isString()) {
        std::string message = "\"";
        message.append(key);
        message += "\" should be a string; ignored";
        diagnostics.push_back(makeWarning("dump.header-type", locate(text, v->offset(), file), std::move(message)));
        return {};
    }
    return std::string(v->asString());
}

constexpr std::size_t kMaxReportedLeafErrors = 50;

} // namespace

Result<std::shared_ptr<const DumpFile>> parseDumpJson(std::string_view text, const std::filesystem::path& path,
                                                      const ReadOptions& options, const MappedFile* source)
{
    const std::string file = path.string();
    JsonParseOptions jsonOptions;
    jsonOptions.salvageTruncated = options.salvageTruncated;
    // Two passes read the text front to back (the parser, then the line numbers of the entries): the pages behind
    // each go back, so a dump costs its parsed form and not its text as well (785 MB at a million entries).
    if (source)
        jsonOptions.readPast = [source](std::size_t offset) { source->release(offset); };
    auto parsed = JsonDocument::parse(text, file, jsonOptions);
    if (!parsed.document) {
        // Cut before anything could be kept (an empty file, or no salvage asked for).
        if (parsed.truncated && options.salvageTruncated)
            return makeError("dump.truncated", locate(text, text.size(), file),
                             text.empty() ? std::string("the file is empty")
                                          : "the file ends after " + std::to_string(text.size())
                                                + " bytes, before its \"data\" object: nothing can be salvaged");
        return parsed.diagnostics.front();
    }

    auto dump = std::make_shared<DumpFile>();
    dump->path = path;
    dump->tensorDir = path.parent_path() / "dump_tensor_data";
    dump->document = parsed.document;
    dump->truncated = parsed.truncated;
    dump->fileBytes = text.size();
    dump->format = path.filename() == "debug.json" ? DumpFormat::DebugJson : DumpFormat::DumpJson;

    const JsonValue root = parsed.document->root();
    if (!root.isObject())
        return makeError("dump.not-object", locate(text, root.offset(), file),
                         "a dump file must hold a JSON object with \"task\", \"level\" and \"data\"");
    const auto data = root.find("data");
    if (!data) {
        if (parsed.truncated)
            return makeError("dump.truncated", locate(text, text.size(), file),
                             "the file ends after " + std::to_string(text.size())
                                 + " bytes, before its \"data\" object: nothing can be salvaged");
        return makeError("dump.no-data", locate(text, root.offset(), file), "no \"data\" object in the dump file");
    }
    if (!data->isObject())
        return makeError("dump.data-type", locate(text, data->offset(), file), "\"data\" must be an object");

    Diagnostics& diagnostics = dump->diagnostics;
    dump->header.task = headerString(root, "task", file, text, diagnostics);
    dump->header.level = headerString(root, "level", file, text, diagnostics);
    dump->header.framework = headerString(root, "framework", file, text, diagnostics);
    if (const auto dir = root.find("dump_data_dir"); dir && dir->isString())
        dump->header.dumpDataDir = std::string(dir->asString());

    LineCounter lines(text);
    std::size_t nextRelease = std::size_t { 32 } << 20;
    // The duplicate check builds the lookup index as it goes (find() uses it afterwards).
    std::vector<std::uint32_t>& entryOfKey = dump->m_entryOfKey;
    entryOfKey.assign(parsed.document->keyCount(), kNoEntry);
    dump->entries.reserve(data->size());
    std::string droppedEntry;
    for (std::uint32_t i = 0; i < data->size(); ++i) {
        const JsonValue value = data->at(i);
        const std::string_view key = data->keyAt(i);
        // The entry being written when the run died is incomplete; reading half of it would give wrong rows.
        if (value.isTruncated()) {
            droppedEntry = std::string(key);
            continue;
        }
        Entry entry { key, parseEntryName(key), value, value.offset(), 0 };
        // The key precedes the value; report the value's line, which is where the entry's data starts.
        entry.line = lines.lineAt(entry.offset);
        if (source && entry.offset >= nextRelease) {
            source->release(entry.offset);
            nextRelease = entry.offset + (std::size_t { 32 } << 20);
        }
        std::uint32_t& first = entryOfKey[parsed.document->node(value.index()).key];
        if (first != kNoEntry) {
            // Python's dict keeps the first position and the last value.
            diagnostics.push_back(makeWarning("dump.duplicate-key", locate(text, entry.offset, file),
                                              "entry \"" + std::string(key)
                                                  + "\" appears more than once; the last one is used"));
            dump->entries[first].value = value;
            continue;
        }
        if (entry.name.kind == EntryKind::Unknown)
            diagnostics.push_back(makeWarning("dump.entry-name", SourceLocation { file, entry.offset, entry.line, 0 },
                                              "entry \"" + std::string(key)
                                                  + "\" is not named like an API, module, parameters_grad or debug entry"));
        first = static_cast<std::uint32_t>(dump->entries.size());
        dump->entries.push_back(entry);
    }

    if (parsed.truncated) {
        std::string message = "the file was cut short after " + std::to_string(text.size()) + " bytes; "
            + std::to_string(dump->entries.size()) + " complete entries were read";
        if (!droppedEntry.empty())
            message += ", the incomplete entry \"" + droppedEntry + "\" was dropped";
        message += " and anything after it was lost";
        diagnostics.push_back(makeError("dump.truncated", locate(text, text.size(), file), std::move(message)));
    }

    if (options.validateLeaves) {
        std::size_t leafErrors = 0;
        std::string error;
        for (const Entry& entry : dump->entries) {
            forEachLeaf(entry.value, [&](const LeafPath& where, JsonValue leaf, LeafKind kind) {
                if (kind != LeafKind::Tensor)
                    return true;
                error.clear();
                if (readTensorLeaf(leaf, &error))
                    return true;
                if (++leafErrors <= kMaxReportedLeafErrors) {
                    std::string at = std::string(where.field);
                    if (!where.path.empty())
                        at += "." + where.path;
                    diagnostics.push_back(makeError("dump.leaf-type", locate(text, leaf.offset(), file),
                                                    "entry \"" + std::string(entry.key) + "\", " + at + ": " + error));
                }
                return true;
            });
        }
        if (leafErrors > kMaxReportedLeafErrors)
            diagnostics.push_back(makeError("dump.leaf-type", SourceLocation { file, std::nullopt, 0, 0 },
                                            std::to_string(leafErrors - kMaxReportedLeafErrors)
                                                + " more tensor entries with wrongly typed fields"));
    }

    if (options.validateLeaves)
        checkEntryStructure(*dump, text, diagnostics);

    for (Diagnostic& d : parsed.diagnostics) {
        // The JSON-level truncation notice is replaced by the entry-level one above.
        if (d.id != "json.truncated")
            diagnostics.push_back(std::move(d));
    }
    return std::shared_ptr<const DumpFile>(std::move(dump));
}

Result<std::shared_ptr<const DumpFile>> readDumpJson(const std::filesystem::path& path, const ReadOptions& options)
{
    auto file = MappedFile::open(path, maxJsonFileBytes());
    if (!file)
        return file.error();
    return parseDumpJson((*file)->text(), path, options, file->get());
}

} // namespace probescope::dump
