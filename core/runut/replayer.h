// SPDX-License-Identifier: Apache-2.0
#pragma once
// The seam between run_ut's judge (ProbeScope::runut, no LibTorch) and the replay of one API call
// (ProbeScope::runuttorch, LibTorch). The runner in core/runut drives a Replayer per worker and turns
// what it returns into msprobe's result and details rows; nothing here includes LibTorch headers.

#include "core/dump/dumpfile.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace probescope::runut {

/// One forward API call of an L1/mix dump.json, with its backward entry when the dump has one
/// (run-ut-spec §2.1, §2.2). Entries of `dump` stay valid as long as `dump` lives.
struct ApiCall
{
    std::string fullName;        ///< "Functional.gelu.0", "Torch.linalg.inv.0", "Aten.add.Tensor.3"
    std::string prefix;          ///< "Functional", "Tensor", "Torch", "Aten", "NPU", "VF", ...
    std::string apiName;         ///< "gelu", "linalg.inv", "add.Tensor", "__mul__"
    std::int64_t callIndex = -1; ///< the trailing call index
    const dump::Entry* forward = nullptr;  ///< "<fullName>.forward" (input_args, input_kwargs, output)
    const dump::Entry* backward = nullptr; ///< "<fullName>.backward" (input, output), or null
    std::shared_ptr<const dump::DumpFile> dump; ///< owns the entries; tensorDir resolves data_name
};

/// A Python-like value produced by a replay: what the API returned, or one gradient.
struct Value
{
    enum class Kind : std::uint8_t { None, Tensor, Bool, Int, Float, Str, List, Dict };
    Kind kind = Kind::None;
    tensor::Tensor tensor;          ///< Kind::Tensor: contiguous CPU copy in the dtype it had
    bool boolValue = false;
    std::int64_t intValue = 0;
    double floatValue = 0;
    std::string text;               ///< Kind::Str
    std::vector<Value> items;       ///< Kind::List (also tuples) and Kind::Dict (values, in key order)
    std::vector<std::string> keys;  ///< Kind::Dict
};

/// How one call was replayed. When `skipMessage` is set the API gets msprobe's SKIP row with that
/// message (the Python tool's exception text or its SKIP reason) and nothing else is read.
struct ReplayResult
{
    std::string skipMessage;
    /// Set with skipMessage when the skip is a tensor file of the dump the resolver refused (a data name leaving
    /// the dump, a damaged file): a damaged input, which the run reports as such (issue 33: by this, not by text).
    std::optional<Diagnostic> inputError;
    Value benchForward;  ///< CPU bench output, after upcasting (§4.3)
    Value deviceForward; ///< output on the device in the dtype the API ran in
    /// Positional-argument gradients (§4.4 step 5), in order; Kind::None where an argument has none.
    /// Both empty when backward did not run.
    std::vector<Value> benchGrads;
    std::vector<Value> deviceGrads;
    /// One of msprobe's backward messages (UNSUPPORT_BACKWARD_MESSAGE, ...) when backward was skipped
    /// for a reason that gets a SKIP row; empty otherwise.
    std::string backwardMessage;
    bool inputWasFp8 = false; ///< decides in_dtype for the standard dispatch (§5.3)
    /// The device dtype the device call was autocast to, when autocast applied (for messages only).
    std::optional<tensor::DType> autocastDtype;
};

struct ReplayOptions
{
    std::uint64_t seed = 1234;  ///< random inputs of call C come from a generator seeded by (seed, C.fullName)
    std::string device = "cpu"; ///< "cpu", or "cuda[:N]" when LibTorch has CUDA
    int intraOpThreads = 1;     ///< LibTorch threads per worker
};

/**
 * @brief Replays API calls. One instance per worker thread; replay() is not called concurrently on
 * one instance. Never throws: every failure becomes skipMessage.
 */
class Replayer
{
public:
    virtual ~Replayer() = default;
    virtual ReplayResult replay(const ApiCall& call) = 0;
    /// True when the API (prefix, apiName) has a replay at all; unsupported ones are SKIP rows.
    virtual bool supports(const std::string& prefix, const std::string& apiName) const = 0;
};

} // namespace probescope::runut
