// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/session/session.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace probescope::session {

/**
 * @brief What a viewer shows first of a pair it opened before, kept on disk so that opening it again paints
 * the coloured tree at once (issue 17: re-opening a million-node pair in <= 2 s): the NPU construct tree,
 * every node's status, the first failing node and the compare mode. About 150 bytes per node.
 *
 * One file per pair and options in a cache folder (never beside the dumps), named by a hash of both dump paths
 * and the options. It records the size and modification time of every input (both dump.json files, the NPU
 * construct.json, the stack.json in stack mode, the mapping files) and is ignored when one differs. The
 * analysis still runs in full after a reopen; the cache only shows its result early (docs/gui-performance.md).
 */
struct CachedPair
{
    std::shared_ptr<const tree::ConstructTree> tree; ///< without its dump (hasRank() false)
    std::shared_ptr<const NodeStatusTable> status;
    compare::FirstFailure firstFailure;
    compare::CompareMode mode = compare::CompareMode::Summary;
    std::uint64_t keysHash = 0; ///< tree->keysHash() when written
};

/**
 * @brief The user's private cache folder: $PROBESCOPE_CACHE_DIR, else $XDG_CACHE_HOME/probescope, else
 * $HOME/.cache/probescope, the first that is usable (missing, to be created 0700, or private: see cacheDirProblem).
 *
 * Empty when none is: the cache is then off and `problem` (when given) says why. Never a shared folder such as
 * /tmp/probescope-cache: another user could plant links there or read the trees (docs/reopen-cache.md).
 */
std::filesystem::path defaultCacheDir(std::string* problem = nullptr);

/// Why `dir` cannot hold the cache, or nothing when it is private: a real folder (not a symbolic link), owned by
/// this user, writable by nobody else (no group or other write bit). A missing folder is a problem too.
std::optional<std::string> cacheDirProblem(const std::filesystem::path& dir);

/// The cache file of `pair` analysed with `options` inside `dir`.
std::filesystem::path pairCacheFile(const std::filesystem::path& dir, const RankPair& pair,
                                    const AnalysisOptions& options);

/// The cached result, or nullopt when there is none, an input changed since, the file is damaged (a miss, never
/// trusted), or the folder is not private (cacheDirProblem) or the file is a symbolic link (never followed).
std::optional<CachedPair> readPairCache(const std::filesystem::path& file, const RankPair& pair,
                                        const AnalysisOptions& options);

/// Writes the cache of a finished analysis (core/util/outputfile.h: complete or absent, replacing an older one or a
/// link at the name, never following it) and keeps the folder at most `keepFiles` cache files (oldest removed; only
/// regular files named pair-<16 hex>.pspair, never through a link). The folder is created 0700 when missing and
/// must be private (cacheDirProblem). The reason when it could not be written.
std::optional<std::string> writePairCache(const std::filesystem::path& file, const RankPair& pair,
                                          const AnalysisOptions& options, const PairAnalysis& analysis,
                                          std::size_t keepFiles = 16);

} // namespace probescope::session
