// SPDX-License-Identifier: Apache-2.0
#include "core/tensor/elementstream.h"

#include <unistd.h>

#include <utility>

namespace probescope::tensor {

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
        other.m_memory = nullptr;
    }
    return *this;
}

ElementStream::~ElementStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

} // namespace probescope::tensor
