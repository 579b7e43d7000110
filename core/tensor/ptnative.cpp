// SPDX-License-Identifier: Apache-2.0
// A reader for the one layout torch.save gives a single tensor. The zip subset follows PKWARE's
// APPNOTE (local headers, central directory, zip64 end records); the pickle subset follows
// Python's pickletools documentation for protocol 2, with LibTorch 1.13's stack effects.
// It deliberately refuses more than LibTorch does: tests/core/tst_tensor.cpp checks that every
// file it accepts loads identically through LibTorch (loadPtWithTorch).
#include "core/tensor/ptnative.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <unordered_set>
#include <vector>

namespace probescope::tensor {

namespace {

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

PtFailure corrupt(std::string message, std::optional<std::uint64_t> offset = std::nullopt)
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

std::uint16_t le16(const char* p)
{
    return static_cast<std::uint16_t>(static_cast<std::uint8_t>(p[0]) | (static_cast<std::uint8_t>(p[1]) << 8));
}

std::uint32_t le32(const char* p)
{
    return static_cast<std::uint32_t>(le16(p)) | (static_cast<std::uint32_t>(le16(p + 2)) << 16);
}

std::uint64_t le64(const char* p)
{
    return static_cast<std::uint64_t>(le32(p)) | (static_cast<std::uint64_t>(le32(p + 4)) << 32);
}

bool fits(std::uint64_t offset, std::uint64_t length, std::uint64_t size)
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
    bool copy(std::uint64_t offset, std::size_t length, std::byte* destination) const override
    {
        if (length > 0)
            std::memcpy(destination, m_bytes.data() + offset, length);
        return true;
    }

private:
    std::string_view m_bytes;
};

bool preadAll(int fd, std::uint64_t offset, std::size_t length, char* destination)
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
// Zip

struct ZipRecord
{
    std::string name;
    std::uint64_t dataOffset = 0; ///< where the stored bytes start
    std::uint64_t size = 0;
};

/// ASCII-only lower case, as LibTorch's case-insensitive zip lookup folds names (locale-independent).
std::string foldCase(std::string_view name)
{
    std::string out(name);
    for (char& c : out)
        c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    return out;
}

/// Reads the central directory and every local header; refuses anything torch.save would not write.
Outcome<std::vector<ZipRecord>> readZip(const Source& source)
{
    const std::uint64_t size = source.size();
    constexpr std::size_t kEndSize = 22;
    if (size < kEndSize)
        return corrupt("the zip archive is shorter than its end record");

    // The end record sits at the very end unless an archive comment follows it.
    std::string tailScratch;
    std::string_view tail;
    const std::size_t tailSize = static_cast<std::size_t>(std::min<std::uint64_t>(size, kEndSize + 0xFFFF));
    const std::uint64_t tailStart = size - tailSize;
    if (!source.view(tailStart, tailSize, tailScratch, tail))
        return corrupt("the file could not be read to its end");
    std::optional<std::size_t> endPos;
    for (std::size_t p = tailSize - kEndSize + 1; p-- > 0;) {
        if (std::memcmp(tail.data() + p, "PK\x05\x06", 4) == 0) {
            if (p + kEndSize + le16(tail.data() + p + 20) == tailSize)
                endPos = p;
            break;
        }
    }
    if (!endPos)
        return corrupt("no zip end-of-central-directory record (truncated file?)");
    const char* end = tail.data() + *endPos;
    std::uint64_t entries = le16(end + 10);
    std::uint64_t cdSize = le32(end + 12);
    std::uint64_t cdOffset = le32(end + 16);
    if (le16(end + 4) != 0 || le16(end + 6) != 0 || le16(end + 8) != le16(end + 10))
        return corrupt("multi-disk zip archives are not written by torch.save");

    // torch's writer always adds the zip64 end record and its locator; when present they rule.
    const std::uint64_t endOffset = tailStart + *endPos;
    if (*endPos >= 20 && std::memcmp(end - 20, "PK\x06\x07", 4) == 0) {
        const char* locator = end - 20;
        const std::uint64_t zip64Offset = le64(locator + 8);
        if (le32(locator + 4) != 0 || le32(locator + 16) != 1)
            return corrupt("multi-disk zip64 archives are not written by torch.save");
        constexpr std::size_t kZip64EndSize = 56;
        if (!fits(zip64Offset, kZip64EndSize, endOffset - 20))
            return corrupt("the zip64 end record lies outside the file");
        std::string scratch;
        std::string_view record;
        if (!source.view(zip64Offset, kZip64EndSize, scratch, record))
            return corrupt("the zip64 end record could not be read");
        if (std::memcmp(record.data(), "PK\x06\x06", 4) != 0)
            return corrupt("the zip64 locator does not point at a zip64 end record");
        if (le32(record.data() + 16) != 0 || le32(record.data() + 20) != 0
            || le64(record.data() + 24) != le64(record.data() + 32))
            return corrupt("multi-disk zip64 archives are not written by torch.save");
        const std::uint64_t entries64 = le64(record.data() + 32);
        const std::uint64_t cdSize64 = le64(record.data() + 40);
        const std::uint64_t cdOffset64 = le64(record.data() + 48);
        // The plain record holds either the same values or the "see zip64" markers.
        if ((entries != 0xFFFF && entries != entries64) || (cdSize != 0xFFFFFFFF && cdSize != cdSize64)
            || (cdOffset != 0xFFFFFFFF && cdOffset != cdOffset64))
            return corrupt("the zip end record and the zip64 end record disagree");
        entries = entries64;
        cdSize = cdSize64;
        cdOffset = cdOffset64;
    } else if (entries == 0xFFFF || cdSize == 0xFFFFFFFF || cdOffset == 0xFFFFFFFF) {
        return corrupt("the zip end record refers to a zip64 record that is missing");
    }

    constexpr std::size_t kCentralSize = 46;
    if (entries == 0)
        return corrupt("the zip archive holds no records");
    if (!fits(cdOffset, cdSize, endOffset) || cdSize / kCentralSize < entries)
        return corrupt("the zip central directory lies outside the file", endOffset);

    std::string cdScratch;
    std::string_view cd;
    if (!source.view(cdOffset, static_cast<std::size_t>(cdSize), cdScratch, cd))
        return corrupt("the zip central directory could not be read");

    std::vector<ZipRecord> records;
    records.reserve(static_cast<std::size_t>(entries));
    std::size_t pos = 0;
    std::string localScratch;
    std::unordered_set<std::string> foldedNames;
    foldedNames.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(entries, 1u << 20)));
    for (std::uint64_t i = 0; i < entries; ++i) {
        const std::uint64_t where = cdOffset + pos;
        if (cd.size() - pos < kCentralSize || std::memcmp(cd.data() + pos, "PK\x01\x02", 4) != 0)
            return corrupt("damaged zip central directory entry", where);
        const char* e = cd.data() + pos;
        const std::uint16_t flags = le16(e + 8);
        const std::uint16_t method = le16(e + 10);
        std::uint64_t compressed = le32(e + 20);
        std::uint64_t uncompressed = le32(e + 24);
        const std::size_t nameLength = le16(e + 28);
        const std::size_t extraLength = le16(e + 30);
        const std::size_t commentLength = le16(e + 32);
        const std::uint16_t disk = le16(e + 34);
        const std::uint32_t externalAttributes = le32(e + 38);
        std::uint64_t localOffset = le32(e + 42);
        if (cd.size() - pos - kCentralSize < nameLength + extraLength + commentLength)
            return corrupt("damaged zip central directory entry", where);
        const std::string_view name(e + kCentralSize, nameLength);
        if ((flags & ~0x0808u) != 0) // only "sizes in a data descriptor" and "UTF-8 names"
            return corrupt("zip record " + std::string(name) + " is encrypted or uses unsupported options", where);
        if (method != 0)
            return corrupt("zip record " + std::string(name)
                               + " is compressed; torch.save stores records uncompressed",
                           where);

        // Zip64 extra field: the 64-bit values, in this order, of the fields set to 0xFFFFFFFF.
        std::string_view extra(e + kCentralSize + nameLength, extraLength);
        bool sawZip64 = false;
        while (!extra.empty()) {
            if (extra.size() < 4)
                return corrupt("damaged extra field in zip record " + std::string(name), where);
            const std::uint16_t id = le16(extra.data());
            const std::size_t length = le16(extra.data() + 2);
            if (extra.size() - 4 < length)
                return corrupt("damaged extra field in zip record " + std::string(name), where);
            if (id == 0x0001) {
                if (sawZip64)
                    return corrupt("two zip64 fields in zip record " + std::string(name), where);
                sawZip64 = true;
                std::string_view values = extra.substr(4, length);
                for (std::uint64_t* field : { &uncompressed, &compressed, &localOffset }) {
                    if (*field != 0xFFFFFFFF)
                        continue;
                    if (values.size() < 8)
                        return corrupt("short zip64 field in zip record " + std::string(name), where);
                    *field = le64(values.data());
                    values.remove_prefix(8);
                }
            }
            extra.remove_prefix(4 + length);
        }
        if (uncompressed == 0xFFFFFFFF || compressed == 0xFFFFFFFF || localOffset == 0xFFFFFFFF)
            if (!sawZip64)
                return corrupt("zip record " + std::string(name) + " lacks its zip64 sizes", where);
        if (compressed != uncompressed)
            return corrupt("stored zip record " + std::string(name) + " has differing sizes", where);
        if (disk != 0 && disk != 0xFFFF)
            return corrupt("multi-disk zip archives are not written by torch.save", where);
        if (nameLength == 0 || name.find('\0') != std::string_view::npos)
            return corrupt("a zip record has an empty or invalid name", where);
        // LibTorch's zip reader hands back no bytes for a folder record, whatever its sizes say.
        if (name.ends_with('/') || (externalAttributes & 0x10) != 0)
            return corrupt("zip record " + std::string(name) + " is marked as a folder", where);

        // The local header repeats the name; its extra field (torch's alignment padding) may differ.
        constexpr std::size_t kLocalSize = 30;
        if (!fits(localOffset, kLocalSize + nameLength, cdOffset))
            return corrupt("zip record " + std::string(name) + " points outside the file", where);
        std::string_view local;
        if (!source.view(localOffset, kLocalSize + nameLength, localScratch, local))
            return corrupt("zip record " + std::string(name) + " could not be read", localOffset);
        if (std::memcmp(local.data(), "PK\x03\x04", 4) != 0 || le16(local.data() + 8) != 0
            || le16(local.data() + 26) != nameLength || local.substr(kLocalSize) != name)
            return corrupt("the local header of zip record " + std::string(name) + " does not match the directory",
                           localOffset);
        const std::uint64_t dataOffset = localOffset + kLocalSize + nameLength + le16(local.data() + 28);
        if (!fits(dataOffset, uncompressed, cdOffset))
            return corrupt("zip record " + std::string(name) + " reaches past its archive", localOffset);

        // LibTorch's zip lookup ignores case, so such twins could be read either way. A hash set keeps the
        // check linear: comparing with every earlier record took minutes for 65,000 records (issue 20).
        if (!foldedNames.insert(foldCase(name)).second)
            return corrupt("zip record " + std::string(name) + " appears twice", where);
        records.push_back({ std::string(name), dataOffset, uncompressed });
        pos += kCentralSize + nameLength + extraLength + commentLength;
    }
    return records;
}

// ---------------------------------------------------------------------------------------------
// Pickle

struct StorageKind
{
    std::string_view name; ///< the class name in the torch module
    std::optional<DType> dtype;
};

constexpr std::array<StorageKind, 18> kStorageKinds { {
    { "BoolStorage", DType::Bool },
    { "ByteStorage", DType::UInt8 },
    { "CharStorage", DType::Int8 },
    { "ShortStorage", DType::Int16 },
    { "IntStorage", DType::Int32 },
    { "LongStorage", DType::Int64 },
    { "HalfStorage", DType::Float16 },
    { "BFloat16Storage", DType::BFloat16 },
    { "FloatStorage", DType::Float32 },
    { "DoubleStorage", DType::Float64 },
    // Known to LibTorch but not to ProbeScope.
    { "ComplexHalfStorage", std::nullopt },
    { "ComplexFloatStorage", std::nullopt },
    { "ComplexDoubleStorage", std::nullopt },
    { "QInt8Storage", std::nullopt },
    { "QUInt8Storage", std::nullopt },
    { "QInt32Storage", std::nullopt },
    { "QUInt4x2Storage", std::nullopt },
    { "QUInt2x4Storage", std::nullopt },
} };

enum class Kind : std::uint8_t {
    None,
    Bool,
    Int,
    Float,
    String,
    Tuple,
    List,
    Dict,
    RebuildTensor, ///< the torch._utils._rebuild_tensor_v2 global
    OrderedDict,   ///< the collections.OrderedDict global
    StorageType,   ///< number: index into kStorageKinds
    Storage,       ///< a persistent storage reference; items: its 5-tuple
    Tensor,        ///< the result of _rebuild_tensor_v2; items: its argument tuple
};

struct Value
{
    Kind kind = Kind::None;
    std::int64_t number = 0;
    std::string_view text;
    std::uint32_t first = 0; ///< tuple items: m_items[first, first + count)
    std::uint32_t count = 0;
};

struct PickleResult
{
    std::vector<Value> values;
    std::vector<std::uint32_t> items;
    std::uint32_t top = 0;
    bool manyStorageKeys = false; ///< LibTorch would read every one of them
};

class PickleMachine
{
public:
    explicit PickleMachine(std::string_view stream)
        : m_stream(stream)
    {
    }

    /// Offsets in failures are relative to the stream.
    Outcome<PickleResult> run()
    {
        std::uint8_t op = 0;
        if (!readByte(op) || op != 0x80)
            return fail("the pickle does not start with a PROTO opcode");
        std::uint8_t protocol = 0;
        if (!readByte(protocol))
            return truncated();
        if (protocol != 2)
            return fail("pickle protocol " + std::to_string(protocol) + " (torch.save writes protocol 2)");
        while (true) {
            m_opStart = m_pos;
            if (!readByte(op))
                return truncated();
            if (op == '.') { // STOP
                if (!m_marks.empty())
                    return fail("the pickle stops with an unclosed MARK");
                if (m_stack.size() != 1)
                    return fail("the pickle stops with " + std::to_string(m_stack.size()) + " values instead of 1");
                return PickleResult { std::move(m_values), std::move(m_items), m_stack.back(), m_manyKeys };
            }
            if (auto problem = step(op))
                return std::move(*problem);
        }
    }

private:
    std::optional<PtFailure> step(std::uint8_t op)
    {
        switch (op) {
        case '(': // MARK
            m_marks.push_back(m_stack.size());
            return std::nullopt;
        case ')': // EMPTY_TUPLE
            return push({ Kind::Tuple, 0, {}, static_cast<std::uint32_t>(m_items.size()), 0 });
        case ']': // EMPTY_LIST
            return push(Kind::List);
        case '}': // EMPTY_DICT
            return push(Kind::Dict);
        case 'N': // NONE
            return push(Kind::None);
        case 0x88: // NEWTRUE
        case 0x89: // NEWFALSE
            return push(Kind::Bool, op == 0x88 ? 1 : 0);
        case 'K': { // BININT1
            std::string_view b;
            if (!readBytes(1, b))
                return truncatedFailure();
            return push(Kind::Int, static_cast<std::uint8_t>(b[0]));
        }
        case 'M': { // BININT2
            std::string_view b;
            if (!readBytes(2, b))
                return truncatedFailure();
            return push(Kind::Int, le16(b.data()));
        }
        case 'J': { // BININT
            std::string_view b;
            if (!readBytes(4, b))
                return truncatedFailure();
            return push(Kind::Int, static_cast<std::int32_t>(le32(b.data())));
        }
        case 0x8A: { // LONG1: LibTorch reads only the 8-byte form
            std::uint8_t length = 0;
            std::string_view b;
            if (!readByte(length) || !readBytes(length, b))
                return truncatedFailure();
            if (length != 8)
                return failure("LONG1 of " + std::to_string(length) + " bytes (LibTorch reads only 8)");
            return push(Kind::Int, static_cast<std::int64_t>(le64(b.data())));
        }
        case 'G': { // BINFLOAT: the value itself never matters for a tensor
            std::string_view b;
            if (!readBytes(8, b))
                return truncatedFailure();
            return push(Kind::Float);
        }
        case 'X': { // BINUNICODE
            std::string_view b;
            if (!readBytes(4, b))
                return truncatedFailure();
            const std::uint32_t length = le32(b.data());
            if (!readBytes(length, b))
                return truncatedFailure();
            return push({ Kind::String, 0, b });
        }
        case 't': { // TUPLE
            if (m_marks.empty())
                return failure("TUPLE without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            return makeTuple(m_stack.size() - start);
        }
        case 0x85: // TUPLE1
        case 0x86: // TUPLE2
        case 0x87: { // TUPLE3
            const std::size_t count = op - 0x84u;
            if (!available(count))
                return underflow("TUPLE" + std::to_string(count));
            return makeTuple(count);
        }
        case 'l': // LIST
        case 'd': { // DICT
            if (m_marks.empty())
                return failure(std::string(op == 'l' ? "LIST" : "DICT") + " without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (op == 'd' && (m_stack.size() - start) % 2 != 0)
                return failure("DICT with an odd number of keys and values");
            const bool empty = m_stack.size() == start;
            m_stack.resize(start);
            return push(op == 'l' ? Kind::List : Kind::Dict, empty ? 0 : 1);
        }
        case 'e': // APPENDS
        case 'u': { // SETITEMS
            const char* what = op == 'e' ? "APPENDS" : "SETITEMS";
            if (m_marks.empty())
                return failure(std::string(what) + " without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (start == 0 || m_values[m_stack[start - 1]].kind != (op == 'e' ? Kind::List : Kind::Dict))
                return failure(std::string(what) + " with no " + (op == 'e' ? "list" : "dict") + " below its MARK");
            if (op == 'u' && (m_stack.size() - start) % 2 != 0)
                return failure("SETITEMS with an odd number of keys and values");
            if (m_stack.size() > start)
                m_values[m_stack[start - 1]].number = 1; // no longer empty
            m_stack.resize(start);
            return std::nullopt;
        }
        case 'q': { // BINPUT
            std::uint8_t id = 0;
            if (!readByte(id))
                return truncatedFailure();
            return put(id);
        }
        case 'r': { // LONG_BINPUT
            std::string_view b;
            if (!readBytes(4, b))
                return truncatedFailure();
            return put(le32(b.data()));
        }
        case 'h': { // BINGET
            std::uint8_t id = 0;
            if (!readByte(id))
                return truncatedFailure();
            return get(id);
        }
        case 'j': { // LONG_BINGET
            std::string_view b;
            if (!readBytes(4, b))
                return truncatedFailure();
            return get(le32(b.data()));
        }
        case 'c': // GLOBAL
            return global();
        case 'Q': // BINPERSID
            return persistentLoad();
        case 'R': // REDUCE
            return reduce();
        default: // includes SETITEM, which LibTorch 1.13 cannot unpickle either
            return failure("opcode 0x" + hex(op) + " is not one torch.save writes for a tensor");
        }
    }

    std::optional<PtFailure> global()
    {
        std::string_view module;
        std::string_view name;
        if (!readLine(module) || !readLine(name))
            return failure("GLOBAL name is not terminated by a newline within " + std::to_string(kMaxGlobalName)
                           + " bytes");
        if (module == "torch._utils" && name == "_rebuild_tensor_v2")
            return push(Kind::RebuildTensor);
        if (module == "collections" && name == "OrderedDict")
            return push(Kind::OrderedDict);
        if (module == "torch" && name.size() > 7 && name.ends_with("Storage")) {
            for (std::size_t i = 0; i < kStorageKinds.size(); ++i) {
                if (kStorageKinds[i].name == name)
                    return push(Kind::StorageType, static_cast<std::int64_t>(i));
            }
            return failure("unknown storage type torch." + std::string(name));
        }
        PtFailure problem { "tensor.pt-not-tensor",
                            "the file holds a Python object of type " + std::string(module) + "." + std::string(name)
                                + ", which ProbeScope cannot read as a plain tensor",
                            m_opStart };
        return problem;
    }

    std::optional<PtFailure> persistentLoad()
    {
        if (!available(1))
            return underflow("BINPERSID");
        const Value& id = m_values[m_stack.back()];
        if (id.kind != Kind::Tuple || id.count != 5)
            return failure("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
        const Value& tag = item(id, 0);
        const Value& type = item(id, 1);
        const Value& key = item(id, 2);
        const Value& location = item(id, 3);
        const Value& numel = item(id, 4);
        if (tag.kind != Kind::String || tag.text != "storage" || type.kind != Kind::StorageType
            || key.kind != Kind::String || location.kind != Kind::String || numel.kind != Kind::Int)
            return failure("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
        if (key.text.empty() || key.text.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos)
            return failure("a storage key is empty or names a path");
        if (!knownLocation(location.text))
            return failure("storage location \"" + std::string(location.text) + "\" is not a device LibTorch knows");
        if (numel.number < 0)
            return failure("a storage has a negative size");
        if (m_firstKey.empty())
            m_firstKey = key.text;
        else if (key.text != m_firstKey)
            m_manyKeys = true;
        const Value storage { Kind::Storage, 0, {}, id.first, id.count };
        m_stack.pop_back();
        return push(storage);
    }

    /// The locations torch.save writes for CPU and CUDA tensors; the tensor is loaded to the CPU anyway.
    static bool knownLocation(std::string_view text)
    {
        if (text == "cpu" || text == "cuda")
            return true;
        if (!text.starts_with("cuda:") || text.size() == 5 || text.size() > 8)
            return false;
        return std::all_of(text.begin() + 5, text.end(), [](char c) { return c >= '0' && c <= '9'; });
    }

    std::optional<PtFailure> reduce()
    {
        if (!available(2))
            return underflow("REDUCE");
        const Value args = m_values[m_stack.back()];
        const Value callable = m_values[m_stack[m_stack.size() - 2]];
        if (args.kind != Kind::Tuple)
            return failure("REDUCE with arguments that are not a tuple");
        if (callable.kind == Kind::OrderedDict) {
            if (args.count != 0)
                return failure("OrderedDict called with arguments (torch.save writes OrderedDict())");
            m_stack.resize(m_stack.size() - 2);
            return push(Kind::Dict);
        }
        if (callable.kind != Kind::RebuildTensor)
            return failure("REDUCE of a value that is not a known callable");
        // (storage, storage_offset, size, stride, requires_grad, backward_hooks)
        if (args.count != 6 || item(args, 0).kind != Kind::Storage || item(args, 1).kind != Kind::Int
            || !isIntTuple(item(args, 2)) || !isIntTuple(item(args, 3)) || item(args, 4).kind != Kind::Bool
            || item(args, 5).kind != Kind::Dict || item(args, 5).number != 0)
            return failure("_rebuild_tensor_v2 is not called with (storage, offset, size, stride, requires_grad, "
                           "OrderedDict())");
        m_stack.resize(m_stack.size() - 2);
        return push({ Kind::Tensor, 0, {}, args.first, args.count });
    }

    bool isIntTuple(const Value& v) const
    {
        if (v.kind != Kind::Tuple || v.count > kMaxDims)
            return false;
        for (std::uint32_t i = 0; i < v.count; ++i) {
            if (item(v, i).kind != Kind::Int)
                return false;
        }
        return true;
    }

    const Value& item(const Value& tuple, std::uint32_t i) const { return m_values[m_items[tuple.first + i]]; }

    std::optional<PtFailure> makeTuple(std::size_t count)
    {
        const auto first = static_cast<std::uint32_t>(m_items.size());
        m_items.insert(m_items.end(), m_stack.end() - static_cast<std::ptrdiff_t>(count), m_stack.end());
        m_stack.resize(m_stack.size() - count);
        return push({ Kind::Tuple, 0, {}, first, static_cast<std::uint32_t>(count) });
    }

    std::optional<PtFailure> put(std::uint32_t id)
    {
        if (m_stack.empty())
            return underflow("PUT");
        // Every slot torch's pickler uses costs at least two bytes of stream, which bounds the table.
        if (id >= m_stream.size())
            return failure("memo slot " + std::to_string(id) + " is beyond what this pickle can use");
        if (id >= m_memo.size())
            m_memo.resize(id + 1, kNoValue);
        m_memo[id] = m_stack.back();
        return std::nullopt;
    }

    std::optional<PtFailure> get(std::uint32_t id)
    {
        if (id >= m_memo.size() || m_memo[id] == kNoValue)
            return failure("GET of memo slot " + std::to_string(id) + ", which was never stored");
        m_stack.push_back(m_memo[id]);
        return std::nullopt;
    }

    bool available(std::size_t count) const
    {
        const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
        return m_stack.size() >= floor + count;
    }

    std::optional<PtFailure> push(Kind kind, std::int64_t number = 0)
    {
        Value value;
        value.kind = kind;
        value.number = number;
        return push(value);
    }

    std::optional<PtFailure> push(Value value)
    {
        m_stack.push_back(static_cast<std::uint32_t>(m_values.size()));
        m_values.push_back(value);
        return std::nullopt;
    }

    bool readByte(std::uint8_t& out)
    {
        if (m_pos >= m_stream.size())
            return false;
        out = static_cast<std::uint8_t>(m_stream[m_pos++]);
        return true;
    }

    bool readBytes(std::size_t count, std::string_view& out)
    {
        if (m_stream.size() - m_pos < count)
            return false;
        out = m_stream.substr(m_pos, count);
        m_pos += count;
        return true;
    }

    bool readLine(std::string_view& out)
    {
        const std::size_t end = m_stream.find('\n', m_pos);
        if (end == std::string_view::npos || end - m_pos > kMaxGlobalName)
            return false;
        out = m_stream.substr(m_pos, end - m_pos);
        m_pos = end + 1;
        return true;
    }

    static std::string hex(std::uint8_t value)
    {
        static const char digits[] = "0123456789abcdef";
        return { digits[value >> 4], digits[value & 0xF] };
    }

    PtFailure failure(std::string message) const { return corrupt(std::move(message), m_opStart); }
    PtFailure fail(std::string message) const { return failure(std::move(message)); }
    PtFailure truncated() const { return failure("the pickle ends in the middle of an opcode"); }
    std::optional<PtFailure> truncatedFailure() const { return truncated(); }
    PtFailure underflow(const std::string& what) const { return failure(what + " needs more values than the stack holds"); }

    static constexpr std::uint32_t kNoValue = 0xFFFFFFFF;
    std::string_view m_stream;
    std::size_t m_pos = 0;
    std::uint64_t m_opStart = 0;
    std::vector<Value> m_values;
    std::vector<std::uint32_t> m_items;
    std::vector<std::uint32_t> m_stack;
    std::vector<std::size_t> m_marks;
    std::vector<std::uint32_t> m_memo;
    std::string_view m_firstKey;
    bool m_manyKeys = false;
};

std::string describe(Kind kind)
{
    switch (kind) {
    case Kind::Dict:
        return "dict";
    case Kind::List:
        return "list";
    case Kind::Tuple:
        return "tuple";
    case Kind::None:
        return "None";
    case Kind::String:
        return "string";
    case Kind::Int:
    case Kind::Float:
    case Kind::Bool:
        return "plain number";
    case Kind::Storage:
        return "bare storage";
    default:
        return "Python object";
    }
}

// ---------------------------------------------------------------------------------------------
// The archive as a whole

const ZipRecord* findRecord(const std::vector<ZipRecord>& records, std::string_view name)
{
    for (const ZipRecord& r : records) {
        if (r.name == name)
            return &r;
    }
    return nullptr;
}

/// Copies the view into C order. The caller has checked that every element lies inside `storage`.
void gather(const char* storage, std::size_t itemSize, std::int64_t offset, const std::vector<std::int64_t>& sizes,
            const std::vector<std::int64_t>& strides, std::byte* out)
{
    const std::size_t dims = sizes.size();
    if (dims == 0) {
        std::memcpy(out, storage + static_cast<std::size_t>(offset) * itemSize, itemSize);
        return;
    }
    std::vector<std::int64_t> index(dims, 0);
    const std::int64_t inner = sizes[dims - 1];
    const std::int64_t innerStride = strides[dims - 1];
    std::int64_t base = offset;
    while (true) {
        const char* from = storage + static_cast<std::size_t>(base) * itemSize;
        if (innerStride == 1) {
            const std::size_t bytes = static_cast<std::size_t>(inner) * itemSize;
            std::memcpy(out, from, bytes);
            out += bytes;
        } else {
            for (std::int64_t i = 0; i < inner; ++i, out += itemSize)
                std::memcpy(out, from + static_cast<std::size_t>(i * innerStride) * itemSize, itemSize);
        }
        // Odometer over the outer dimensions.
        std::size_t k = dims - 1;
        while (true) {
            if (k == 0)
                return;
            --k;
            if (++index[k] < sizes[k]) {
                base += strides[k];
                break;
            }
            base -= (sizes[k] - 1) * strides[k];
            index[k] = 0;
        }
    }
}

/// Everything about the tensor but its elements: checked, with where the elements are.
struct PtLayout
{
    DType dtype = DType::Float32;
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides;
    std::int64_t offset = 0;        ///< storage offset, in elements
    std::int64_t numel = 0;
    std::uint64_t outBytes = 0;     ///< numel * item size
    std::uint64_t storageOffset = 0; ///< where the storage record's bytes start in the file
    std::uint64_t storageBytes = 0;
    bool contiguous = true;
    /// File offset of element 0 of a contiguous view.
    std::uint64_t dataStart() const { return storageOffset + static_cast<std::uint64_t>(offset) * dtypeSize(dtype); }
};

Outcome<PtLayout> readLayout(const Source& source)
{
    auto zip = readZip(source);
    if (!zip)
        return std::move(zip.failure());
    const std::vector<ZipRecord>& records = *zip;

    // As in LibTorch, the folder of the first record names the archive; all records live in it.
    const std::size_t slash = records.front().name.find('/');
    if (slash == std::string::npos || slash == 0)
        return corrupt("zip record " + records.front().name + " is not inside an archive folder");
    const std::string prefix = records.front().name.substr(0, slash + 1);
    for (const ZipRecord& r : records) {
        if (!r.name.starts_with(prefix))
            return corrupt("zip record " + r.name + " is outside the archive folder " + prefix);
    }

    const ZipRecord* version = findRecord(records, prefix + ".data/version");
    if (!version)
        version = findRecord(records, prefix + "version");
    if (!version)
        return corrupt("the archive has no version record");
    std::string scratch;
    std::string_view text;
    if (version->size > 32 || !source.view(version->dataOffset, static_cast<std::size_t>(version->size), scratch, text))
        return corrupt("the archive's version record is damaged", version->dataOffset);
    if (text.ends_with('\n'))
        text.remove_suffix(1);
    std::uint64_t formatVersion = 0;
    if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return corrupt("the archive's version record is not a number", version->dataOffset);
    for (const char c : text)
        formatVersion = formatVersion * 10 + static_cast<std::uint64_t>(c - '0');
    if (formatVersion < kMinFileFormatVersion || formatVersion > kMaxFileFormatVersion)
        return corrupt("archive format version " + std::to_string(formatVersion) + " is not supported",
                       version->dataOffset);

    const ZipRecord* pickleRecord = findRecord(records, prefix + "data.pkl");
    if (!pickleRecord)
        return corrupt("the archive has no data.pkl record");
    std::string pickleScratch;
    std::string_view pickle;
    if (!source.view(pickleRecord->dataOffset, static_cast<std::size_t>(pickleRecord->size), pickleScratch, pickle))
        return corrupt("the data.pkl record could not be read", pickleRecord->dataOffset);

    auto parsed = PickleMachine(pickle).run();
    if (!parsed) {
        PtFailure failure = std::move(parsed.failure());
        if (failure.offset)
            *failure.offset += pickleRecord->dataOffset;
        if (std::string_view(failure.id) == "tensor.pt-corrupt")
            failure.message = "damaged data.pkl record: " + failure.message;
        return failure;
    }
    const PickleResult& pr = *parsed;
    const Value& top = pr.values[pr.top];
    if (top.kind != Kind::Tensor)
        return PtFailure { "tensor.pt-not-tensor", "the file holds a " + describe(top.kind) + ", not a single tensor",
                           std::nullopt };

    const auto item = [&pr](const Value& tuple, std::uint32_t i) -> const Value& {
        return pr.values[pr.items[tuple.first + i]];
    };
    if (pr.manyStorageKeys)
        return corrupt("the pickle refers to more than one storage record");
    const Value& storageRef = item(top, 0);
    const StorageKind& kind = kStorageKinds[static_cast<std::size_t>(item(storageRef, 1).number)];
    if (!kind.dtype) {
        std::string typeName(kind.name.substr(0, kind.name.size() - 7));
        return PtFailure { "tensor.dtype-unsupported", "element type " + typeName + " is not supported", std::nullopt };
    }
    const DType dtype = *kind.dtype;
    const std::size_t itemSize = dtypeSize(dtype);
    if (item(top, 4).number != 0 && !isFloating(dtype))
        return corrupt("an integer tensor is marked as requiring gradients, which torch refuses");

    const std::string storageName = prefix + "data/" + std::string(item(storageRef, 2).text);
    const ZipRecord* storage = findRecord(records, storageName);
    if (!storage)
        return corrupt("the tensor's storage record " + storageName + " is missing from the archive");
    // Refusing unused records keeps this reader from accepting what LibTorch would read differently.
    for (const ZipRecord& r : records) {
        const std::string_view rest = std::string_view(r.name).substr(prefix.size());
        if (&r != storage && &r != pickleRecord && &r != version && rest != "version" && rest != ".data/version"
            && rest != "byteorder" && rest != ".data/serialization_id")
            return corrupt("zip record " + r.name + " is not part of a single-tensor archive");
    }
    if (const ZipRecord* order = findRecord(records, prefix + "byteorder")) {
        std::string orderScratch;
        std::string_view order_;
        if (order->size > 16 || !source.view(order->dataOffset, static_cast<std::size_t>(order->size), orderScratch, order_)
            || order_ != "little")
            return corrupt("the archive is not little-endian", order->dataOffset);
    }

    const std::int64_t storageNumel = item(storageRef, 4).number;
    std::uint64_t storageBytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(storageNumel), itemSize, &storageBytes)
        || storageBytes != storage->size)
        return corrupt("the storage record holds " + std::to_string(storage->size) + " bytes but the pickle says "
                           + std::to_string(storageNumel) + " elements of " + std::to_string(itemSize) + " bytes",
                       storage->dataOffset);

    const std::int64_t offset = item(top, 1).number;
    const Value& sizeTuple = item(top, 2);
    const Value& strideTuple = item(top, 3);
    if (sizeTuple.count != strideTuple.count)
        return corrupt("damaged tensor record: the tensor's sizes and strides disagree in length");
    std::vector<std::int64_t> sizes(sizeTuple.count);
    std::vector<std::int64_t> strides(strideTuple.count);
    std::int64_t numel = 1;
    for (std::uint32_t k = 0; k < sizeTuple.count; ++k) {
        sizes[k] = item(sizeTuple, k).number;
        strides[k] = item(strideTuple, k).number;
        if (sizes[k] < 0 || strides[k] < 0)
            return corrupt("damaged tensor record: the tensor has a negative size or stride");
        if (__builtin_mul_overflow(numel, sizes[k], &numel))
            return corrupt("damaged tensor record: the tensor's sizes overflow");
    }
    if (offset < 0)
        return corrupt("damaged tensor record: the tensor has a negative storage offset");
    if (numel > 0) {
        std::int64_t last = offset;
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            std::int64_t reach = 0;
            if (__builtin_mul_overflow(sizes[k] - 1, strides[k], &reach) || __builtin_add_overflow(last, reach, &last))
                return corrupt("damaged tensor record: the tensor's sizes and strides overflow");
        }
        if (last >= storageNumel)
            return corrupt("damaged tensor record: the tensor's shape and strides reach element " + std::to_string(last)
                           + " but its storage record holds " + std::to_string(storageNumel));
    } else if (offset > storageNumel) {
        return corrupt("damaged tensor record: the storage offset lies beyond the storage");
    }
    std::uint64_t outBytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(numel), itemSize, &outBytes)
        || (outBytes > storageBytes && outBytes > kMaxExpandedBytes))
        return corrupt("the tensor repeats its " + std::to_string(storageBytes) + " stored bytes into more than "
                       + std::to_string(kMaxExpandedBytes >> 20) + " MiB, which ProbeScope refuses");

    PtLayout layout;
    layout.dtype = dtype;
    layout.sizes = std::move(sizes);
    layout.strides = std::move(strides);
    layout.offset = offset;
    layout.numel = numel;
    layout.outBytes = outBytes;
    layout.storageOffset = storage->dataOffset;
    layout.storageBytes = storageBytes;
    std::int64_t expected = 1;
    for (std::size_t k = layout.sizes.size(); k-- > 0;) {
        if (layout.sizes[k] != 1 && layout.strides[k] != expected)
            layout.contiguous = false;
        expected *= layout.sizes[k];
    }
    return layout;
}

Outcome<Tensor> readArchive(const Source& source)
{
    auto parsed = readLayout(source);
    if (!parsed)
        return std::move(parsed.failure());
    const PtLayout& layout = *parsed;
    const std::size_t itemSize = dtypeSize(layout.dtype);
    Tensor tensor;
    tensor.dtype = layout.dtype;
    tensor.shape = layout.sizes;
    tensor.data.resize(static_cast<std::size_t>(layout.outBytes));
    if (layout.numel == 0)
        return tensor;

    if (layout.contiguous) {
        if (!source.copy(layout.dataStart(), static_cast<std::size_t>(layout.outBytes), tensor.data.data()))
            return corrupt("the storage record could not be read", layout.storageOffset);
        return tensor;
    }
    std::string storageScratch;
    std::string_view stored;
    if (!source.view(layout.storageOffset, static_cast<std::size_t>(layout.storageBytes), storageScratch, stored))
        return corrupt("the storage record could not be read", layout.storageOffset);
    gather(stored.data(), itemSize, layout.offset, layout.sizes, layout.strides, tensor.data.data());
    return tensor;
}

Diagnostic toDiagnostic(const std::filesystem::path& path, PtFailure failure)
{
    return makeError(failure.id, SourceLocation { path.string(), failure.offset, 0, 0 }, std::move(failure.message));
}

Result<Tensor> parseSource(const Source& source, const std::filesystem::path& path, std::string_view head)
{
    if (head.size() < 4 || std::memcmp(head.data(), "PK\x03\x04", 4) != 0) {
        return toDiagnostic(path, PtFailure { "tensor.pt-format",
                                              head.empty() ? std::string("the file is empty")
                                                           : std::string("not a torch.save zip archive (legacy format "
                                                                         "or not a .pt file)"),
                                              0 });
    }
    try {
        auto tensor = readArchive(source);
        if (!tensor)
            return toDiagnostic(path, std::move(tensor.failure()));
        return std::move(*tensor);
    } catch (const std::bad_alloc&) {
        return toDiagnostic(path, corrupt("out of memory while reading the file"));
    }
}

Diagnostic ioError(const std::filesystem::path& path, std::string message)
{
    return makeError("io.read", SourceLocation { path.string(), std::nullopt, 0, 0 }, std::move(message));
}

/// Closes the descriptor on every return path.
class FileHandle
{
public:
    explicit FileHandle(int fd)
        : m_fd(fd)
    {
    }
    ~FileHandle()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FileHandle(const FileHandle&) = delete;
    FileHandle& operator=(const FileHandle&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

} // namespace

Result<Tensor> parsePtArchive(std::string_view bytes, const std::filesystem::path& path)
{
    return parseSource(MemorySource(bytes), path, bytes.substr(0, 4));
}

Result<Tensor> loadPtNative(const std::filesystem::path& path, std::uint64_t wholeFileLimit)
{
    const FileHandle file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return makeError("tensor.missing", SourceLocation { path.string(), std::nullopt, 0, 0 }, "file does not exist");
        return ioError(path, std::string("cannot open file: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return ioError(path, "not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);

    if (size <= wholeFileLimit) {
        // One buffer per thread: thousands of small files then cost no allocation for the bytes.
        thread_local std::string buffer;
        buffer.resize(static_cast<std::size_t>(size));
        std::size_t got = 0;
        while (got < buffer.size()) {
            const ssize_t n = ::read(file.get(), buffer.data() + got, buffer.size() - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return ioError(path, std::string("read failed: ") + std::strerror(errno));
            if (n == 0)
                break; // shrank while reading: parse what is there, as a truncated file
            got += static_cast<std::size_t>(n);
        }
        buffer.resize(got);
        auto result = parsePtArchive(buffer, path);
        if (buffer.capacity() > (1u << 20))
            std::string().swap(buffer);
        return result;
    }

    char head[4] = {};
    const std::size_t headSize = size < 4 ? static_cast<std::size_t>(size) : 4;
    if (!preadAll(file.get(), 0, headSize, head))
        return ioError(path, "read failed");
    return parseSource(FileSource(file.get(), size), path, std::string_view(head, headSize));
}

Result<Tensor> loadPt(const std::filesystem::path& path)
{
    return loadPtNative(path, kDefaultWholeFileLimit);
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

PtStream::PtStream(PtStream&& other) noexcept
{
    *this = std::move(other);
}

PtStream& PtStream::operator=(PtStream&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_dtype = other.m_dtype;
        m_shape = std::move(other.m_shape);
        m_numel = other.m_numel;
        const bool gathered = other.m_memory && other.m_memory == other.m_gathered.data();
        m_gathered = std::move(other.m_gathered);
        m_memory = gathered ? m_gathered.data() : other.m_memory;
        m_fd = std::exchange(other.m_fd, -1);
        m_dataOffset = other.m_dataOffset;
        other.m_memory = nullptr;
    }
    return *this;
}

PtStream::~PtStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<PtStream> openPtStream(const std::filesystem::path& path, ReadBuffer& buffer, std::uint64_t wholeFileLimit)
{
    PtStream stream;
    stream.m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (stream.m_fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return makeError("tensor.missing", SourceLocation { path.string(), std::nullopt, 0, 0 }, "file does not exist");
        return ioError(path, std::string("cannot open file: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(stream.m_fd, &st) != 0 || !S_ISREG(st.st_mode))
        return ioError(path, "not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);

    std::optional<MemorySource> memory;
    std::optional<FileSource> file;
    std::string_view head;
    char headBytes[4] = {};
    if (size <= wholeFileLimit) {
        // The whole file in one read(), into a buffer reused from file to file (no zero-filling).
        std::byte* bytes = buffer.reserve(static_cast<std::size_t>(size));
        std::size_t got = 0;
        while (got < size) {
            const ssize_t n = ::read(stream.m_fd, bytes + got, static_cast<std::size_t>(size) - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return ioError(path, std::string("read failed: ") + std::strerror(errno));
            if (n == 0)
                break; // shrank while reading: parse what is there, as a truncated file
            got += static_cast<std::size_t>(n);
        }
        const std::string_view all(reinterpret_cast<const char*>(bytes), got);
        memory.emplace(all);
        head = all.substr(0, 4);
    } else {
        if (!preadAll(stream.m_fd, 0, 4, headBytes))
            return ioError(path, "read failed");
        file.emplace(stream.m_fd, size);
        head = std::string_view(headBytes, 4);
    }
    const Source& source = memory ? static_cast<const Source&>(*memory) : static_cast<const Source&>(*file);
    if (head.size() < 4 || std::memcmp(head.data(), "PK\x03\x04", 4) != 0)
        return parseSource(source, path, head).error(); // the same "not a zip" diagnostics as loadPt
    try {
        auto layout = readLayout(source);
        if (!layout)
            return toDiagnostic(path, std::move(layout.failure()));
        stream.m_dtype = layout->dtype;
        stream.m_shape = layout->sizes;
        stream.m_numel = layout->numel;
        if (!layout->contiguous) {
            auto tensor = readArchive(source);
            if (!tensor)
                return toDiagnostic(path, std::move(tensor.failure()));
            stream.m_gathered = std::move(tensor->data);
            stream.m_memory = stream.m_gathered.data();
        } else if (memory) {
            stream.m_memory = buffer.reserve(0) + layout->dataStart();
        } else {
            stream.m_dataOffset = layout->dataStart();
            // The elements will be read front to back: let the kernel read ahead, from a cold disk too, while
            // the first chunks are being computed.
            ::posix_fadvise(stream.m_fd, static_cast<off_t>(stream.m_dataOffset),
                            static_cast<off_t>(layout->outBytes), POSIX_FADV_WILLNEED);
        }
    } catch (const std::bad_alloc&) {
        return toDiagnostic(path, corrupt("out of memory while reading the file"));
    }
    if (stream.m_memory) {
        ::close(stream.m_fd);
        stream.m_fd = -1;
    }
    return stream;
}

std::optional<PickleProblem> checkTorchPickle(std::string_view stream)
{
    // The native reader's own pickle machine: what it accepts, it has fully simulated (stack, marks, memo, the
    // three globals torch.save writes); LibTorch's guard needs exactly that, with its own reading of the result.
    auto parsed = PickleMachine(stream).run();
    if (parsed)
        return std::nullopt;
    const PtFailure& failure = parsed.failure();
    return PickleProblem { failure.offset.value_or(0), failure.message,
                           std::string_view(failure.id) == "tensor.pt-not-tensor" };
}

} // namespace probescope::tensor
