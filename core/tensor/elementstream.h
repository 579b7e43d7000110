// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/tensor.h"
#include "core/util/fileio.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace probescope::tensor {

/// A growable byte buffer that is never zero-filled (reused from file to file by the streamed readers).
class ReadBuffer
{
public:
    std::byte* reserve(std::size_t bytes);
    /// Frees the memory when it holds more than `keep` bytes.
    void trim(std::size_t keep);

private:
    std::unique_ptr<std::byte[]> m_data;
    std::size_t m_capacity = 0;
};

class ElementStream;
Result<ElementStream> openPtStream(const std::filesystem::path& path, ReadBuffer& buffer, std::uint64_t wholeFileLimit);
Result<ElementStream> openPtStream(OpenedDataFile file, ReadBuffer& buffer, std::uint64_t wholeFileLimit);
Result<ElementStream> openNpyStream(const std::filesystem::path& path, ReadBuffer& buffer, std::uint64_t wholeFileLimit);
Result<ElementStream> openNpyStream(OpenedDataFile file, ReadBuffer& buffer, std::uint64_t wholeFileLimit);

/**
 * @brief Whether the elements of large tensor files are mapped (ElementStream) instead of read with pread (same
 * results): off by default (measured slower on this project's 2-core VMs: docs/compare-performance.md, "Mapped
 * reads"); the environment variable PROBESCOPE_TENSOR_MMAP=1 or setMappedReads(true) turns it on.
 */
bool mappedReads();
void setMappedReads(bool on);

/**
 * @brief A tensor file opened to stream its elements: checked as its whole-file reader checks it (loadPt,
 * loadNpy: same errors), the elements not read. One class for both formats (PtStream, NpyStream).
 *
 * Files up to the reader's whole-file limit are read whole into `buffer` (one read(); the elements are then at
 * memory()). Larger ones keep the file open and their elements are read where they lie (fd() at dataOffset()), a
 * piece at a time with pread; with mappedReads() on, their element range is mapped instead (MappedFile::mapRange:
 * memory() points into the page cache, nothing is copied, and mapping() says after the pass whether the file was
 * cut short under the map). A 1 GB tensor never costs 1 GB of memory either way. A layout that is not plain
 * (a non-contiguous .pt view, a Fortran-order or big-endian .npy: rare) is rearranged into memory. The stream
 * must not outlive `buffer`.
 */
class ElementStream
{
public:
    ElementStream() = default;
    ElementStream(ElementStream&& other) noexcept;
    ElementStream& operator=(ElementStream&& other) noexcept;
    ElementStream(const ElementStream&) = delete;
    ElementStream& operator=(const ElementStream&) = delete;
    ~ElementStream();

    DType dtype() const { return m_dtype; }
    const std::vector<std::int64_t>& shape() const { return m_shape; }
    std::int64_t numel() const { return m_numel; }
    const std::byte* memory() const { return m_memory; } ///< the elements, or nullptr: then fd()
    int fd() const { return m_fd; }
    std::uint64_t dataOffset() const { return m_dataOffset; }
    /// The mapping memory() points into, or nullptr: a reader checks its damaged() after reading the elements.
    const MappedFile* mapping() const { return m_mapping.get(); }

private:
    friend Result<ElementStream> openPtStream(OpenedDataFile, ReadBuffer&, std::uint64_t);
    friend Result<ElementStream> openNpyStream(OpenedDataFile, ReadBuffer&, std::uint64_t);
    /// Makes the `bytes` elements at file offset `offset` of the open file available: mapped (memory(), the file
    /// then closed) or, where mapping is off or fails, left to pread at fd() from dataOffset() with the kernel's
    /// read-ahead started for the range.
    void placeElements(const std::filesystem::path& path, std::uint64_t offset, std::uint64_t bytes);
    DType m_dtype = DType::Float32;
    std::vector<std::int64_t> m_shape;
    std::int64_t m_numel = 0;
    const std::byte* m_memory = nullptr;
    std::vector<std::byte> m_rearranged; ///< a layout that is not plain, rearranged in C order
    int m_fd = -1;
    std::uint64_t m_dataOffset = 0;
    std::shared_ptr<const MappedFile> m_mapping;
};

} // namespace probescope::tensor
