// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/entryname.h"
#include "core/dump/jsondocument.h"
#include "core/dump/stringidtable.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probescope {
class MappedFile;
}

namespace probescope::dump {

enum class DumpFormat : std::uint8_t {
    DumpJson,  ///< msprobe dump.json (any version, PyTorch or MindSpore)
    DebugJson, ///< msprobe debug.json (level debug, single-point save)
    LegacyPkl, ///< ptdbg_ascend .pkl of JSON lines plus a folder of .npy files
};

struct DumpHeader
{
    std::string task;      ///< tensor, statistics, overflow_check, structure, ... ("" when absent)
    std::string level;     ///< L0, L1, L2, mix, debug
    std::string framework; ///< pytorch, mindspore, mindtorch ("" in old dumps)
    std::optional<std::string> dumpDataDir;
};

/// One dump.json entry: an API call, a module call, a parameters_grad or a debug variable.
struct Entry
{
    std::string_view key; ///< view into the document (stable for the document's lifetime)
    EntryName name;       ///< parsed from key
    JsonValue value;      ///< the entry's object (or any value for debug.json)
    std::uint64_t offset = 0;
    std::uint32_t line = 0; ///< 1-based line of the key in the file (0 for synthesized entries)
};

struct ReadOptions
{
    /// Read what a crashed run left: every complete entry is kept, a diagnostic says what was lost.
    bool salvageTruncated = true;
    /// Check each tensor leaf's fields (types of dtype, shape, stats, data_name); problems become diagnostics.
    bool validateLeaves = true;
    /// loadRank: read stack.json too. The desktop app leaves it for later (readRankStack), because at
    /// 200k entries it is as large as half the dump and nothing before the first coloured tree needs it.
    bool stackJson = true;
    /// loadRank: read construct.json too (the desktop app builds its tree from the NPU side's alone).
    bool constructJson = true;
};

/**
 * @brief One parsed dump file: dump.json, debug.json or a legacy .pkl, immutable once read.
 *
 * Entries keep the file's order (msprobe relies on it). The document owns all strings.
 */
class DumpFile
{
public:
    DumpFormat format = DumpFormat::DumpJson;
    std::filesystem::path path;      ///< the file read
    std::filesystem::path tensorDir; ///< where data_name files live (dump_tensor_data, or the .npy folder)
    DumpHeader header;
    std::vector<Entry> entries;
    Diagnostics diagnostics;
    bool truncated = false;
    std::uint64_t fileBytes = 0; ///< size of the text read (where a truncated file was cut)
    std::shared_ptr<const JsonDocument> document;

    const Entry* find(std::string_view key) const;
    void buildIndex();

private:
    // parseDumpJson fills the index while it checks for duplicate keys, instead of a second pass.
    friend Result<std::shared_ptr<const DumpFile>> parseDumpJson(std::string_view, const std::filesystem::path&,
                                                                 const ReadOptions&, const MappedFile*);
    // A parsed dump.json: entry index by the document's id of the entry's key (keys are interned while
    // parsing, so this needs no hashing of its own). Other files: m_index.
    std::vector<std::uint32_t> m_entryOfKey;
    StringIdTable m_index; // key -> index into entries
    std::string_view keyOf(std::uint32_t i) const { return entries[i].key; }
};

/// Reads dump.json or debug.json. Fatal problems (not JSON, no "data" object) are errors; a file cut
/// short is salvaged (with an error diagnostic) when options.salvageTruncated is set.
Result<std::shared_ptr<const DumpFile>> readDumpJson(const std::filesystem::path& path, const ReadOptions& options = {});

/// Same, from text already in memory (`path` names it in diagnostics and sets tensorDir). `source`: the mapped file
/// `text` is, whose pages are given back as the reader goes past them (readDumpJson).
Result<std::shared_ptr<const DumpFile>> parseDumpJson(std::string_view text, const std::filesystem::path& path,
                                                      const ReadOptions& options = {}, const MappedFile* source = nullptr);

/// Reads a ptdbg_ascend .pkl (JSON lines) with its .npy folder; see docs/legacy-pkl.md.
Result<std::shared_ptr<const DumpFile>> readLegacyPkl(const std::filesystem::path& path, const ReadOptions& options = {});

} // namespace probescope::dump
