// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the "Check setup" page of the desktop app opens (docs/config-check.md, "In the GUI"): two config_check packs
// (zips), two Megatron/MindSpeed checkpoints, or two runs' folders with a pack beside their dumps; and the pack
// compare without an output folder of the user's (the packs are extracted into a private scratch folder that is
// removed afterwards, file by file, as extracted).

#include "core/compare/output/xlsxwriter.h"
#include "core/util/diagnostic.h"
#include "core/util/ziparchive.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace probescope::setupcheck {

struct SetupInput
{
    enum class Kind { None, Pack, Checkpoint };
    Kind kind = Kind::None;
    std::filesystem::path path; ///< the zip (Pack) or the checkpoint folder (Checkpoint)
    std::string why;            ///< Kind::None: why the input is neither
};

/**
 * @brief What `path` is for the setup check:
 * - a regular file whose name ends in `.zip`: a pack;
 * - a folder holding `latest_checkpointed_iteration.txt`, an `iter_*` or an `mp_rank_*` entry: a checkpoint;
 * - another folder (a run's folder or its dump folder): the one `*.zip` in it that is a config_check pack (has an
 *   `env`, `pip`, `hyperparameters/`, `dataset/`, `weights/` or `random/` entry), else the one in its parent folder.
 *   Two packs at the same level are ambiguous: Kind::None, saying which.
 */
SetupInput classifySetupInput(const std::filesystem::path& path);

/// A folder holding `latest_checkpointed_iteration.txt`, an `iter_*` or an `mp_rank_*` folder (one listing, no more).
bool isCheckpointFolder(const std::filesystem::path& path);

/// Both inputs of a pair, which must be of the same kind (errors, id `setup.input`, name the path).
Result<std::pair<SetupInput, SetupInput>> classifySetupPair(const std::filesystem::path& first,
                                                            const std::filesystem::path& second);

/**
 * @brief comparePackFolders of two zips without an output folder: both are checked (ZipLimits) and extracted into a
 * fresh private folder (mkdtemp, mode 0700) under `scratchParent` ($TMPDIR or /tmp when empty), compared, and the
 * extracted files and folders removed again (only the ones extraction wrote). `progress` counts the four steps
 * (open, extract, extract, compare) and may cancel between them (the error id is then `setup.cancelled`).
 */
Result<std::vector<compare::XlsxSheet>> comparePackZips(const std::filesystem::path& benchZip,
                                                        const std::filesystem::path& cmpZip,
                                                        const std::filesystem::path& scratchParent = {},
                                                        const ZipLimits& limits = {}, ProgressSink* progress = nullptr);

} // namespace probescope::setupcheck
