// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/ptnative.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace probescope::tensor {

/**
 * @brief A .npy file opened to stream its elements (the ptdbg profile's counterpart of PtStream): checked as
 * loadNpy checks it, with the same errors, the elements not read.
 *
 * Files up to `wholeFileLimit` bytes are read whole into `buffer` (one read; the elements are at memory());
 * larger ones keep the file open and their elements are read where they lie (fd() at dataOffset()) a chunk at a
 * time with pread, so a 1 GB array never costs 1 GB of memory. A Fortran-order or big-endian array (rare) is
 * reordered into memory as loadNpy does. The NpyStream must not outlive `buffer`.
 */
class NpyStream
{
public:
    NpyStream() = default;
    NpyStream(NpyStream&& other) noexcept;
    NpyStream& operator=(NpyStream&& other) noexcept;
    NpyStream(const NpyStream&) = delete;
    NpyStream& operator=(const NpyStream&) = delete;
    ~NpyStream();

    DType dtype() const { return m_dtype; }
    const std::vector<std::int64_t>& shape() const { return m_shape; }
    std::int64_t numel() const { return m_numel; }
    const std::byte* memory() const { return m_memory; } ///< the elements, or nullptr: then fd()
    int fd() const { return m_fd; }
    std::uint64_t dataOffset() const { return m_dataOffset; }

private:
    friend Result<NpyStream> openNpyStream(const std::filesystem::path&, ReadBuffer&, std::uint64_t);
    DType m_dtype = DType::Float32;
    std::vector<std::int64_t> m_shape;
    std::int64_t m_numel = 0;
    const std::byte* m_memory = nullptr;
    std::vector<std::byte> m_converted; ///< a Fortran-order or big-endian array, reordered
    int m_fd = -1;
    std::uint64_t m_dataOffset = 0;
};

/// Error ids as loadNpy.
Result<NpyStream> openNpyStream(const std::filesystem::path& path, ReadBuffer& buffer,
                                std::uint64_t wholeFileLimit = std::uint64_t { 1 } << 20);

} // namespace probescope::tensor
