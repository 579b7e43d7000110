// SPDX-License-Identifier: Apache-2.0
#pragma once
// One side of an NPU/bench pair as the metric kernels read it (kernels.h): the one way every profile (msprobe 1.2's
// realdata, msprobe 26's metrics, ptdbg) sets up its operands, from a loaded tensor or from a streamed file.

#include "core/compare/metrics/kernels.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <vector>

namespace probescope::compare {

/// A side's type and shape, and where its elements are (in memory, or in a file at an offset).
struct PairSide
{
    tensor::DType dtype = tensor::DType::Float32; ///< as stored (bfloat16 not yet widened)
    const std::vector<std::int64_t>* shape = nullptr; ///< the tensor's or stream's own; it must outlive the side
    std::int64_t numel = 0;
    kernels::Operand operand;
};

/// A loaded tensor: its elements are in memory.
inline PairSide pairSideOf(const tensor::Tensor& t)
{
    PairSide side;
    side.dtype = t.dtype;
    side.shape = &t.shape;
    side.numel = t.numel();
    side.operand.dtype = t.dtype;
    side.operand.memory = t.data.data();
    return side;
}

/// A file opened to stream its elements (.pt or .npy): in memory when it was read whole or mapped (the kernels check
/// the mapping after their pass), else at fd() from dataOffset().
template <class Stream>
    requires requires(const Stream& s) { s.fd(); s.dataOffset(); }
PairSide pairSideOf(const Stream& stream)
{
    PairSide side;
    side.dtype = stream.dtype();
    side.shape = &stream.shape();
    side.numel = stream.numel();
    side.operand.dtype = stream.dtype();
    side.operand.memory = stream.memory();
    side.operand.fd = stream.fd();
    side.operand.fileOffset = stream.dataOffset();
    side.operand.mapping = stream.mapping();
    return side;
}

} // namespace probescope::compare
