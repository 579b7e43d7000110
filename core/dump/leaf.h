// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/dump/jsondocument.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::dump {

/// A statistic as written (Max may be a float, an int, a bool for bool tensors, null, or absent).
struct StatValue
{
    enum class Kind : std::uint8_t { Absent, Null, Bool, Int, Float, String };
    Kind kind = Kind::Absent;
    double number = 0;     ///< Bool/Int/Float as double
    std::int64_t integer = 0;
    std::string_view text; ///< String kind

    bool hasNumber() const { return kind == Kind::Bool || kind == Kind::Int || kind == Kind::Float; }
    static StatValue from(std::optional<JsonValue> v);
};

enum class LeafKind : std::uint8_t {
    Tensor,       ///< torch.Tensor, mindspore.Tensor, numpy.ndarray, DTensor, ...
    Scalar,       ///< int, float, bool, str, numpy scalars: {"type": ..., "value": ...}
    Slice,        ///< {"type": "slice", "value": [start, stop, step]}
    Ellipsis,
    Size,         ///< torch.Size
    DType,        ///< torch.dtype
    Device,       ///< torch.device
    Other,        ///< memory_format, ProcessGroup, ReduceOp, any other typed leaf
    P2POp,        ///< {"class_type": "torch.distributed.P2POp", "tensor": {...}}
    Null,         ///< a None argument
};

/// The typed view of a tensor leaf. Views point into the JsonDocument.
struct TensorLeaf
{
    std::string_view type;  ///< "torch.Tensor", "mindspore.Tensor", ...
    std::string_view dtype; ///< as written: "torch.float32", "Float16", "float32"
    std::vector<std::int64_t> shape;
    StatValue max, min, mean, norm;
    std::optional<bool> requiresGrad;
    std::string_view dataName; ///< empty when absent (statistics task)
    std::string_view md5;      ///< summary_mode md5 (CRC-32 hex) or Era C xor checksum
};

/// Classifies a value found in an entry; std::nullopt for containers (lists, tuples, plain dicts).
std::optional<LeafKind> classifyLeaf(JsonValue value);

/**
 * @brief Reads a tensor leaf, checking every field's type.
 * @return the problem ("shape must be a list of integers", ...) in `error` when a field has a wrong type.
 */
std::optional<TensorLeaf> readTensorLeaf(JsonValue value, std::string* error = nullptr);

/// Where a leaf sits inside an entry: the top-level field and the index path below it.
struct LeafPath
{
    std::string_view field; ///< input_args, input_kwargs, input, output, parameters, or the parameter name
    std::string path;       ///< "0", "0.1", "alpha", "weight" ("" when the field itself is the leaf)
};

/**
 * @brief Visits every leaf of an entry value in file order, depth first.
 *
 * Containers are descended into; empty containers yield nothing; a null element yields a Null leaf.
 * Stops early when the callback returns false.
 */
void forEachLeaf(JsonValue entryValue, const std::function<bool(const LeafPath&, JsonValue, LeafKind)>& visit,
                 std::uint32_t maxDepth = 64);

} // namespace probescope::dump
