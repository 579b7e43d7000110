// SPDX-License-Identifier: Apache-2.0
#pragma once
// tb_graph_ascend's manual-match file `{tag}_{step}_{rank}.vis.config`: a flat JSON object of node names
// (docs/graph.md, "Manual matches").

#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::graph {

/// One "key": "value" entry as the file holds it, in file order. The plugin writes NPU rows (npu -> bench) and
/// Bench rows (bench -> npu) into the same object, so an entry alone does not say which side its key is on.
struct MatchEntry
{
    std::string key;
    std::string value;
};

struct VisConfig
{
    std::string path;
    std::vector<MatchEntry> entries;
};

/// One manual match: an NPU node paired with a bench node.
struct NodeMatch
{
    std::string npu;
    std::string bench;
    friend bool operator==(const NodeMatch&, const NodeMatch&) = default;
};

/// The matches of a file once its entries are resolved against the two sides, and what was left out and why.
struct ResolvedMatches
{
    std::vector<NodeMatch> matches; ///< file order of the entry that gave each match; one-to-one
    std::vector<std::string> notes; ///< entries dropped (unknown names, conflicting pairings)
};

/// Reads a .vis.config (regular file, JSON object of strings). Errors (id graph.match-file) name the file and,
/// for JSON syntax, the position; a non-string value names its key.
Result<VisConfig> readVisConfig(const std::filesystem::path& path);

/**
 * @brief Resolves the entries into one-to-one NPU <-> bench matches.
 *
 * Every entry k: v is read both ways, because the plugin saves both sides' rows into one object: as NPU k with
 * bench v (how tb_graph_ascend loads it) and, second, as bench k with NPU v (a Bench row). A reading counts only
 * when its NPU name is on the NPU side (`isNpu`) and its bench name on the bench side (`isBench`). First every
 * key-as-NPU reading is taken, then every key-as-bench reading whose two nodes are still free; a reading whose
 * node is already paired with another node is dropped with a note. This recovers the NPU row an equal-named
 * Bench row overwrote in the file (the plugin's collision, docs/graph.md).
 */
ResolvedMatches resolveMatches(const VisConfig& config, const std::function<bool(std::string_view)>& isNpu,
                               const std::function<bool(std::string_view)>& isBench);

/// tb_graph_ascend's get_opposite_node_name: every "forward" becomes "backward", or, in a name without "forward",
/// every "backward" becomes "forward" (the plugin matches a node's opposite direction with it).
std::string oppositeName(std::string_view name);

/// `matches` plus the opposite-direction pair of each (oppositeName of both names) where both nodes exist and are
/// not matched otherwise: what the plugin saves for one manual match.
std::vector<NodeMatch> withOpposites(const std::vector<NodeMatch>& matches,
                                     const std::function<bool(std::string_view)>& isNpu,
                                     const std::function<bool(std::string_view)>& isBench);

/// The text ProbeScope writes: NPU -> bench entries only (no Bench rows, so no key can collide), in the given
/// order, formatted as the plugin's json.dump(indent=4, ensure_ascii=False), no trailing newline.
std::string visConfigText(const std::vector<NodeMatch>& matches);

/// Writes visConfigText to `folder`/{tag}_{step}_{rank}.vis.config (the plugin's name; tag = the db's name without
/// .vis.db) through util/outputfile: never replacing a file (a taken name gets _1, ...). Returns the path written.
Result<std::filesystem::path> writeVisConfig(const std::filesystem::path& folder, std::string_view tag, std::int64_t step,
                                             std::int64_t rank, const std::vector<NodeMatch>& matches);

} // namespace probescope::graph
