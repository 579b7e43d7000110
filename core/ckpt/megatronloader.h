// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/ptnative.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

// msprobe 26's Megatron checkpoint loader (msprobe/core/config_check/ckpt_compare/megatron_loader.py), ported:
// the same rank folders, name mapping, TP concatenation, layer and expert renumbering. Tensors are located, not
// read: the compare streams their elements (ckptcompare.h).
namespace probescope::ckpt {

/// A console line as msprobe's logger writes it ("[INFO] ...", "[WARNING] ...").
using LogSink = std::function<void(Severity, const std::string&)>;

/// One TP shard of a parameter: a tensor inside one opened model_optim_rng.pt.
struct Piece
{
    std::shared_ptr<const tensor::PtCheckpoint> file;
    tensor::PtCheckpoint::Node node = 0;
    const tensor::PtTensorRef& ref() const { return file->tensor(node); }
};

/// A parameter as msprobe's _consolidate_tp_weights makes it.
struct MergedParam
{
    std::vector<Piece> pieces; ///< in TP rank order
    int axis = -1;             ///< 0 or 1: concatenated along it; -1: the first piece (the others should be equal)
    std::vector<std::int64_t> shape;
    std::int64_t numel = 0;
};

struct MegatronCheckpoint
{
    std::filesystem::path iterFolder;
    std::map<std::string, MergedParam> params; ///< by mcore name with global layer and expert numbers
};

/// A numpy shape as Python prints the tuple: "(24, 8)", "(8,)", "()".
std::string pyTupleText(const std::vector<std::int64_t>& shape);

/// msprobe's name_mapping.yaml, in its order: each pair is applied with Python's str.replace.
std::string mapToMcoreName(std::string name);

/**
 * @brief load_megatron_weights: `path` is a checkpoint folder (latest_checkpointed_iteration.txt) or an iteration
 * folder; TP x PP x EP ranks come from the first mp_rank_* folder's `args` (an argparse.Namespace).
 *
 * Unlike msprobe, a rank file that cannot be read is an error (msprobe warns and merges the others, which
 * silently changes the shapes); see docs/checkpoint-compare.md for every such decision.
 */
Result<MegatronCheckpoint> loadMegatronCheckpoint(const std::filesystem::path& path, const LogSink& log,
                                                  const tensor::PickleLimits& limits = {});

} // namespace probescope::ckpt
