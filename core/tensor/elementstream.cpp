// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/elementstream.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace probescope::tensor {

namespace {
std::atomic<int> g_mappedReads { -1 }; // -1: not yet decided (the environment)
} // namespace

bool mappedReads()
{
    int on = g_mappedReads.load(std::memory_order_relaxed);
    if (on < 0) {
        // Off unless asked for: on the 2-core VMs this was measured on, a page fault (16 pages mapped by
        // fault-around) and the unmap cost more CPU than pread's copy (docs/compare-performance.md, "Mapped reads").
        const char* env = std::getenv("PROBESCOPE_TENSOR_MMAP");
        on = env && std::strcmp(env, "1") == 0 ? 1 : 0;
        g_mappedReads.store(on, std::memory_order_relaxed);
    }
    return on != 0;
}

void setMappedReads(bool on)
{
    g_mappedReads.store(on ? 1 : 0, std::memory_order_relaxed);
}

std::byte* ReadBuffer::reserve(std::size_t bytes)
{
    if (bytes > m_capacity) {
        m_data.reset();
        m_data = std::make_unique_for_overwrite<std::byte[]>(bytes);
        m_capacity = bytes;
    }
    return m_data.get();
}

void ReadBuffer::trim(std::size_t keep)
{
    if (m_capacity > keep) {
        m_data.reset();
        m_capacity = 0;
    }
}

ElementStream::ElementStream(ElementStream&& other) noexcept
{
    *this = std::move(other);
}

ElementStream& ElementStream::operator=(ElementStream&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_dtype = other.m_dtype;
        m_shape = std::move(other.m_shape);
        m_numel = other.m_numel;
        const bool rearranged = other.m_memory && other.m_memory == other.m_rearranged.data();
        m_rearranged = std::move(other.m_rearranged);
        m_memory = rearranged ? m_rearranged.data() : other.m_memory;
        m_fd = std::exchange(other.m_fd, -1);
        m_dataOffset = other.m_dataOffset;
        m_mapping = std::move(other.m_mapping);
        other.m_memory = nullptr;
    }
    return *this;
}

ElementStream::~ElementStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void ElementStream::placeElements(const std::filesystem::path& path, std::uint64_t offset, std::uint64_t bytes)
{
    if (bytes > 0 && mappedReads()) {
        if (auto mapped = MappedFile::mapRange(m_fd, path, offset, bytes)) {
            m_fd = -1; // the mapping holds the file now
            m_mapping = std::move(mapped).value();
            m_memory = reinterpret_cast<const std::byte*>(m_mapping->text().data());
            return;
        }
    }
    // The stream's open read the file's first window ahead (readAheadUnlessCached); the kernel's read-ahead does the
    // rest as the chunks are read.
    m_dataOffset = offset;
}

} // namespace probescope::tensor
