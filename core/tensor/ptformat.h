// SPDX-License-Identifier: Apache-2.0
#pragma once
// The torch.save reader's shared parts (internal to core/tensor): failures, where the bytes come from, and the
// zip subset (ptzip.cpp), used by the pickle machine (ptpickle*.cpp), the single-tensor reader (ptnative.cpp)
// and the checkpoint reader (ptcheckpoint.cpp).
#include "core/tensor/dtype.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

namespace probescope::tensor::pt {

constexpr std::uint64_t kDefaultWholeFileLimit = 8ULL << 20;
/// Views with overlapping elements (stride 0, from expand) may legitimately hold more elements
/// than their storage; this caps what such a file can make us allocate.
constexpr std::uint64_t kMaxExpandedBytes = 256ULL << 20;
constexpr std::size_t kMaxDims = 64;
constexpr std::size_t kMaxGlobalName = 256;
constexpr std::uint64_t kMinFileFormatVersion = 1; ///< LibTorch 1.13's supported range
constexpr std::uint64_t kMaxFileFormatVersion = 10;

struct PtFailure
{
    const char* id;
    std::string message;
    std::optional<std::uint64_t> offset;
};

inline PtFailure corrupt(std::string message, std::optional<std::uint64_t> offset = std::nullopt)
{
    return { "tensor.pt-corrupt", std::move(message), offset };
}

template <typename T>
class Outcome
{
public:
    Outcome(T value)
        : m_value(std::move(value))
    {
    }
    Outcome(PtFailure failure)
        : m_failure(std::move(failure))
    {
    }
    explicit operator bool() const { return m_value.has_value(); }
    T& operator*() { return *m_value; }
    T* operator->() { return &*m_value; }
    PtFailure& failure() { return *m_failure; }

private:
    std::optional<T> m_value;
    std::optional<PtFailure> m_failure;
};

inline std::uint16_t le16(const char* p)
{
    return static_cast<std::uint16_t>(static_cast<std::uint8_t>(p[0]) | (static_cast<std::uint8_t>(p[1]) << 8));
}

inline std::uint32_t le32(const char* p)
{
    return static_cast<std::uint32_t>(le16(p)) | (static_cast<std::uint32_t>(le16(p + 2)) << 16);
}

inline std::uint64_t le64(const char* p)
{
    return static_cast<std::uint64_t>(le32(p)) | (static_cast<std::uint64_t>(le32(p + 4)) << 32);
}

inline bool fits(std::uint64_t offset, std::uint64_t length, std::uint64_t size)
{
    return offset <= size && length <= size - offset;
}

// ---------------------------------------------------------------------------------------------
// Where the bytes come from: the whole file in memory, or pread() on demand for large files.

class Source
{
public:
    virtual ~Source() = default;
    virtual std::uint64_t size() const = 0;
    /// Bytes [offset, offset + length), already checked to lie inside the file.
    virtual bool view(std::uint64_t offset, std::size_t length, std::string& scratch, std::string_view& out) const = 0;
    virtual bool copy(std::uint64_t offset, std::size_t length, std::byte* destination) const = 0;
    /// Whether a view outlives its scratch string (the bytes are the caller's memory, not a copy).
    virtual bool viewsLast() const { return false; }
};

class MemorySource final : public Source
{
public:
    explicit MemorySource(std::string_view bytes)
        : m_bytes(bytes)
    {
    }
    std::uint64_t size() const override { return m_bytes.size(); }
    bool view(std::uint64_t offset, std::size_t length, std::string& /*scratch*/, std::string_view& out) const override
    {
        out = m_bytes.substr(static_cast<std::size_t>(offset), length);
        return true;
    }
    bool viewsLast() const override { return true; }
    std::string_view bytes() const { return m_bytes; }
    bool copy(std::uint64_t offset, std::size_t length, std::byte* destination) const override
    {
        if (length > 0)
            std::memcpy(destination, m_bytes.data() + offset, length);
        return true;
    }

private:
    std::string_view m_bytes;
};

inline bool preadAll(int fd, std::uint64_t offset, std::size_t length, char* destination)
{
    while (length > 0) {
        const ssize_t n = ::pread(fd, destination, length, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false; // 0: the file shrank under us
        destination += n;
        offset += static_cast<std::uint64_t>(n);
        length -= static_cast<std::size_t>(n);
    }
    return true;
}

class FileSource final : public Source
{
public:
    FileSource(int fd, std::uint64_t size)
        : m_fd(fd)
        , m_size(size)
    {
    }
    std::uint64_t size() const override { return m_size; }
    bool view(std::uint64_t offset, std::size_t length, std::string& scratch, std::string_view& out) const override
    {
        scratch.resize(length);
        if (!preadAll(m_fd, offset, length, scratch.data()))
            return false;
        out = scratch;
        return true;
    }
    bool copy(std::uint64_t offset, std::size_t length, std::byte* destination) const override
    {
        return preadAll(m_fd, offset, length, reinterpret_cast<char*>(destination));
    }

private:
    int m_fd;
    std::uint64_t m_size;
};

// ---------------------------------------------------------------------------------------------
// Zip (ptzip.cpp)

struct ZipRecord
{
    std::string name;
    std::uint64_t dataOffset = 0; ///< where the stored bytes start
    std::uint64_t size = 0;
};

/// ASCII-only lower case, as LibTorch's case-insensitive zip lookup folds names (locale-independent).
std::string foldCase(std::string_view name);

/// Reads the central directory and every local header; refuses anything torch.save would not write.
Outcome<std::vector<ZipRecord>> readZip(const Source& source);

} // namespace probescope::tensor::pt
