// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/elementstream.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <filesystem>
#include <utility>
#include <vector>

namespace probescope::tensor {

/// A .npy file opened to stream its elements (the ptdbg profile's counterpart of PtStream): the same class.
using NpyStream = ElementStream;

/// Error ids as loadNpy.
/// Error ids as loadNpy. Files up to `wholeFileLimit` bytes are read whole (see ElementStream).
inline Result<NpyStream> openNpyStream(const std::filesystem::path& path, ReadBuffer& buffer)
{
    return openNpyStream(path, buffer, std::uint64_t { 1 } << 20);
}

/// openNpyStream on a file TensorFolder::open opened (its descriptor is taken over; no second open or stat).
inline Result<NpyStream> openNpyStream(OpenedDataFile file, ReadBuffer& buffer)
{
    return openNpyStream(std::move(file), buffer, std::uint64_t { 1 } << 20);
}

} // namespace probescope::tensor
