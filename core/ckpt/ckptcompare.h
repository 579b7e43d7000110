// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/ckpt/megatronloader.h"

#include <optional>
#include <string>
#include <vector>

// msprobe 26's compare_checkpoints (ckpt_comparator.py, metrics.py): l2 distance, cosine similarity, numel and
// shape of every parameter both checkpoints hold, computed as numpy computes them on float32 arrays (sequential
// float32 sums, as the reference BLAS sdot adds), but streamed shard by shard from the files.
namespace probescope::ckpt {

struct ParamMetrics
{
    std::string name;
    bool sameShape = true;
    std::optional<double> l2;  ///< None when the shapes differ
    std::optional<double> cos; ///< None when the shapes differ or exactly one norm is 0
    std::int64_t numel1 = 0;
    std::int64_t numel2 = 0;
    std::vector<std::int64_t> shape1;
    std::vector<std::int64_t> shape2;
};

struct CheckpointComparison
{
    std::vector<ParamMetrics> params;       ///< sorted by name
    std::vector<std::string> onlyInFirst;   ///< "Parameters not in ckpt2", sorted
    std::vector<std::string> onlyInSecond;  ///< "Parameters not in ckpt1", sorted
    std::uint64_t bytesRead = 0;            ///< element bytes streamed from both sides
};

struct CompareOptions
{
    tensor::PickleLimits limits;
    std::size_t chunkBytes = 4u << 20; ///< per shard read buffer
    unsigned threads = 0;              ///< parameters compared at once (0: one per hardware thread)
};

/// Loads both checkpoints and compares them, a parameter per thread (each one's sums stay sequential, so the
/// digits do not depend on the thread count). `progress` (optional) counts parameters and may cancel.
Result<CheckpointComparison> compareCheckpoints(const std::filesystem::path& first, const std::filesystem::path& second,
                                                const CompareOptions& options, const LogSink& log,
                                                ProgressSink* progress = nullptr);

/// The per-parameter metrics of one merged pair (exposed for tests and the benchmark).
Result<ParamMetrics> compareParam(const std::string& name, const MergedParam& a, const MergedParam& b,
                                  const CompareOptions& options, const LogSink& log, std::uint64_t* bytesRead = nullptr);

/// json.dump(results, indent=4) of msprobe's result dict (keys sorted; msprobe's follow Python set order).
std::string toJson(const CheckpointComparison& comparison);

/// Python's repr() of a set of str as msprobe logs it: "set()" or "{'a', 'b'}" (sorted).
std::string pySetRepr(const std::vector<std::string>& names);

} // namespace probescope::ckpt
