// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"
#include "core/dump/dumpfile.h"
#include "core/dump/rankdump.h"
#include "core/util/diagnostic.h"

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/**
 * The name-mapping options of msprobe's compare (compare-spec §3.6): cell_mapping (-cm), api_mapping (-am),
 * layer_mapping (-lm), and the data_mapping (-dm) they share. They turn an NPU row name into the key it is
 * matched under; the display names never change. docs/compare.md ("Mapping options") lists the decisions.
 */
namespace probescope::compare {

/// -cm: MindSpore cell path -> PyTorch module path ("fc2.Dense: fc2.Linear"), in file order. Without a
/// file the list is empty and only "Cell" -> "Module" applies.
struct CellMapping
{
    std::filesystem::path path;
    std::vector<std::pair<std::string, std::string>> pairs;
};

/// Which of the four index lists of an api_mapping item.
enum class ApiPart : std::uint8_t { Args = 0, Outputs = 1, Parameters = 2, ParametersGrad = 3 };

/// One item of an -am file: the MindSpore API, its PyTorch counterpart and how their arguments line up.
struct ApiMappingRule
{
    std::string msApi; ///< "Functional.dense": the first two segments of a row name
    std::string ptApi;
    std::array<std::vector<std::string>, 4> ms; ///< by ApiPart: argument indices (or kwarg names) as text
    std::array<std::vector<std::string>, 4> pt;
    bool usable = true; ///< false when an ms/pt list pair differs in length (msprobe ignores the item)
    SourceLocation where;
};

/// -am: the user's rules. Without a file only the prefix rules apply (Mint. -> Torch., MintFunctional. ->
/// Functional.); msprobe's built-in ms_to_pt_api.yaml table is not part of ProbeScope (docs/compare.md).
struct ApiMapping
{
    std::filesystem::path path;
    std::vector<ApiMappingRule> rules;
};

/// -lm: per parent class, a sub-name of the NPU model and the bench sub-name it becomes. A key may span
/// several levels ("network.block: block"); the top level is named "TopLayer" (or "Cell", its old name).
struct LayerRule
{
    std::string origin; ///< dotted NPU path below the parent
    std::string target; ///< bench path (text from '(' on is dropped, as msprobe does)
    std::size_t levels = 1;
};
struct LayerMapping
{
    std::filesystem::path path;
    std::vector<std::pair<std::string, std::vector<LayerRule>>> classes; ///< rules longest-first per class
};

/// -dm: a data_mapping.yaml (NPU row name -> bench row name, "N/A" allowed), in file order.
Result<DataMapping> readDataMapping(const std::filesystem::path& path);
Result<CellMapping> readCellMapping(const std::filesystem::path& path);
/// Items whose lists differ in length are kept with usable = false and reported in `warnings`.
Result<ApiMapping> readApiMapping(const std::filesystem::path& path, Diagnostics* warnings = nullptr);
Result<LayerMapping> readLayerMapping(const std::filesystem::path& path);

/// --match-file: tb_graph_ascend's manual matches, resolved against the two dumps' entries (docs/graph.md,
/// "compare --match-file"): one-to-one, each an NPU entry key with a bench entry key, both present.
struct ManualMatches
{
    std::filesystem::path path;
    std::vector<std::pair<std::string, std::string>> pairs; ///< NPU entry -> bench entry, file order
};

/// The mappings in force for one compare. Precedence (§3.6, msprobe 26): api > cell > data > plain name.
/// `manual` comes after all of them: a manually matched entry keeps its partner whatever the names say.
struct NameMappings
{
    std::optional<CellMapping> cell;
    std::optional<ApiMapping> api;
    std::optional<DataMapping> data; ///< -dm, or what -lm generated
    std::optional<ManualMatches> manual; ///< --match-file (not part of any(): it pairs entries, not row names)
    bool any() const { return cell || api || data; }
};

/// First two dot segments of a name ("Functional.conv2d"): the API an api_mapping item names.
std::string apiNameOf(std::string_view name);

/**
 * @brief cell_mapping key of an NPU row name (§3.6).
 *
 * "N/A" when the name has neither ".forward."/".backward." nor a parameters_grad segment; otherwise the first
 * "Cell" becomes "Module" and the cell path (between the first '.' and the first ".forward."/".backward."/
 * ".parameters_grad.") is replaced when it is a key of the file. `substringFallback` (msprobe 26) then tries
 * every pair as a first-occurrence replacement inside the cell path, in file order.
 */
std::string cellMappedName(std::string_view npuName, const CellMapping& mapping, bool substringFallback);

/// api_mapping's prefix rules: "Mint." names become "Torch.", "MintFunctional." names "Functional." (every
/// occurrence of the word, as Python's str.replace does); any other name is unchanged.
std::string apiPrefixMapped(std::string_view npuName);

/**
 * @brief The key of one row under a user api_mapping item, or std::nullopt when the item abandons it.
 *
 * `rowName`/`entryKey` are the NPU names with msApi already replaced by ptApi. The row's index below
 * ".<part>." (input, output, parameters, parameters_grad) is looked up in the ms list; a hit renames it to
 * the pt index at the same position (the last hit wins, as in msprobe).
 */
std::optional<std::string> userRuleKey(const ApiMappingRule& rule, ApiPart part, std::string_view rowName,
                                       std::string_view entryKey);

/// msprobe 26's dtype classes for a MindSpore vs PyTorch compare (§3.2): int, float, bool, complex; other
/// spellings unchanged.
std::string dtypeClass(std::string_view dtype);

/// A MindSpore dtype in PyTorch spelling ("Float32" -> "torch.float32"); other text unchanged. The
/// msprobe-1.2 profile's struct test uses it for MindSpore NPU vs PyTorch bench (docs/compare.md).
std::string torchDtypeName(std::string_view dtype);

/// Whether a dump.json was written by MindSpore ("mindspore"; "mindtorch" too when `withMindTorch`).
bool isMindSporeDump(const dump::DumpFile& dump, bool withMindTorch);

/**
 * @brief layer_mapping, first stage: which bench entry each NPU entry corresponds to (§3.6 -lm).
 *
 * Both sides are placed in a tree of scopes built from construct.json (the enclosing cell/module), the
 * module paths of the keys and stack.json (a framework function that called the API); the NPU scopes are
 * renamed with `rules`, and the k-th call of a name in a scope maps to the k-th call at the renamed bench
 * scope. Returns NPU entry key -> bench entry key or "N/A", in NPU dump order. Empty when the NPU side has
 * no construct.json or stack.json content (msprobe then compares by name); a bench side without them maps
 * everything to "N/A", as msprobe does. Errors: compare.layer-mapping (an entry key or construct parent
 * with fewer than four segments).
 */
Result<std::vector<std::pair<std::string, std::string>>> layerEntryMapping(const dump::RankDump& npu,
                                                                           const dump::RankDump& bench,
                                                                           const LayerMapping& rules);

/// An op as the msprobe-1.2 matcher sees it under -cm/-am: row names replaced by their mapped keys, rows an
/// api_mapping item leaves out removed, MindSpore dtypes in PyTorch spelling against a PyTorch bench.
struct MappedOp
{
    Op op;                           ///< `op.rows` views `rows`
    std::vector<FlatRow> rows;       ///< the mapped rows (names the mapping made live in `texts`)
    std::vector<std::size_t> origin; ///< index into the original op's rows of each row of `op`
    TextArena texts;

    MappedOp() = default;
    MappedOp(MappedOp&&) = default; // a moved vector keeps its buffer: `op.rows` stays valid
    MappedOp& operator=(MappedOp&&) = default;
    MappedOp(const MappedOp&) = delete;
    MappedOp& operator=(const MappedOp&) = delete;
    /// Points `op.rows` at `rows` once they are final.
    void seal() { op.rows = rows; }
};

/**
 * @brief The NPU ops of a msprobe-1.2 compare under -cm/-am (cell mapping first, then api mapping, as
 * msprobe 1.x's MindSpore comparator does; docs/compare.md).
 *
 * An api_mapping item applies to an NPU op of its ms_api when the bench dump has its pt_api: only the
 * listed rows stay, renamed to the pt index, and the rows of each category are ordered by that index.
 */
std::vector<MappedOp> mappedNpuOps(const std::vector<Op>& npu, const std::vector<Op>& bench, const NameMappings& mappings,
                                   CompareMode mode, bool crossFramework);

/// The bench ops of the same compare: an op of an item's pt_api keeps only the rows the item lists.
std::vector<MappedOp> mappedBenchOps(const std::vector<Op>& bench, const std::vector<Op>& npu,
                                     const NameMappings& mappings, CompareMode mode);

/// For two matched mapped ops: the bench row (index into the original bench op) of each original NPU row,
/// pairing the mapped rows position by position in category order.
std::vector<std::optional<std::size_t>> partnerRows(const MappedOp& npu, std::size_t npuRows, const MappedOp& bench);

/// Row names of one entry of one side in the order inputs, parameters, outputs, parameters_grad.
using RowNamesOf = std::function<std::vector<std::string>(bool bench, std::string_view entryKey)>;

/// layer_mapping, second stage: each NPU row maps to the bench row of the mapped entry with the same suffix
/// after the entry key, or to "N/A". Pairs in NPU order (a row named twice keeps its last target).
DataMapping expandEntryMapping(const std::vector<std::pair<std::string, std::string>>& entries,
                               const RowNamesOf& rowsOf, const std::filesystem::path& source);

/// The YAML text of a data mapping (one "NPU row: bench row" line per pair, in order), as msprobe saves the
/// mapping layer_mapping generated.
std::string dataMappingYaml(const DataMapping& mapping);

} // namespace probescope::compare
