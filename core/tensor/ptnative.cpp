// SPDX-License-Identifier: Apache-2.0
// A reader for the one layout torch.save gives a single tensor. The zip subset follows PKWARE's
// APPNOTE (local headers, central directory, zip64 end records); the pickle subset follows
// Python's pickletools documentation for protocol 2, with LibTorch 1.13's stack effects.
// It deliberately refuses more than LibTorch does: tests/core/tst_tensor.cpp checks that every
// file it accepts loads identically through LibTorch (loadPtWithTorch).
#include "core/tensor/ptnative.h"
#include "core/util/fileio.h"

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
#include <unordered_map>
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
    // Only in checkpoint mode (PtCheckpoint): inert values, never executed.
    Bytes,   ///< text: the bytes
    Global,  ///< text: "module\nname", straight from the stream
    Rebuild, ///< an allowlisted torch rebuild function other than _rebuild_tensor_v2; number: RebuildKind
    Object,  ///< an instance of a class ProbeScope does not know, or the result of an inert call; first: m_objects
};

enum RebuildKind : std::int64_t {
    kRebuildTensorV1 = 1,   ///< torch._utils._rebuild_tensor(storage, offset, size, stride)
    kRebuildParameter = 2,  ///< torch._utils._rebuild_parameter(data, requires_grad, hooks)
    kRebuildParameterState = 3, ///< torch._utils._rebuild_parameter_with_state(data, requires_grad, hooks, state)
    kRebuildFromType = 4,   ///< torch._tensor._rebuild_from_type_v2(func, type, args, state)
};

/// An inert object: what it was made from (ids into the value table; kNone = absent).
struct ObjectRecord
{
    std::uint32_t callable = 0;
    std::uint32_t args = 0;
    std::uint32_t state = 0xFFFFFFFF;
    std::uint32_t container = 0; ///< items SETITEM(S)/APPEND(S) gave it (a dict or list subclass)
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
    // Checkpoint mode only: list items / dict keys and values (interleaved), and inert objects.
    std::vector<std::vector<std::uint32_t>> containers;
    std::vector<ObjectRecord> objects;
};

/// How far the checkpoint-mode machine may go (PickleLimits, public).
struct MachineLimits
{
    bool general = false; ///< checkpoint mode: any container, inert objects; else exactly torch.save's tensor subset
    std::uint64_t maxObjects = 0;
    std::uint64_t maxMarks = 0;
    std::uint64_t maxStack = 0;
};

/// Modules whose callables could act on the machine (run commands, open files, import code, reach any attribute).
/// The machine never calls anything; a pickle naming one of these in REDUCE/NEWOBJ/BUILD/INST/OBJ is refused
/// because no checkpoint needs them and such a file is hostile.
bool isDangerousGlobal(std::string_view module, std::string_view name)
{
    static constexpr std::array<std::string_view, 34> kModules {
        "os", "posix", "nt", "subprocess", "sys", "shutil", "importlib", "pickle", "_pickle", "marshal", "runpy",
        "code", "codeop", "pty", "socket", "ctypes", "webbrowser", "pathlib", "tempfile", "multiprocessing",
        "threading", "_thread", "signal", "commands", "platform", "types", "operator", "inspect", "pdb", "timeit",
        "gc", "asyncio", "zipimport", "posixpath",
    };
    const std::string_view top = module.substr(0, module.find('.'));
    for (std::string_view m : kModules) {
        if (top == m)
            return true;
    }
    if (top == "builtins" || top == "__builtin__") {
        static constexpr std::array<std::string_view, 14> kData { "set", "frozenset", "bytearray", "bytes", "complex",
                                                                  "slice", "range", "object", "list", "dict",
                                                                  "tuple", "int", "float", "str" };
        return std::find(kData.begin(), kData.end(), name) == kData.end();
    }
    if (top == "io" || top == "_io")
        return name != "BytesIO" && name != "StringIO";
    if (top == "torch" && (module.find("hub") != std::string_view::npos || name == "load"))
        return true;
    return name == "system" || name == "popen" || name.starts_with("exec") || name == "eval"
        || name == "__import__" || name == "getattr" || name == "open";
}

class PickleMachine
{
public:
    explicit PickleMachine(std::string_view stream, MachineLimits limits = {})
        : m_stream(stream)
        , m_limits(limits)
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
        if (protocol != 2 && !(m_limits.general && protocol == 3))
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
                return PickleResult { std::move(m_values), std::move(m_items),      m_stack.back(),
                                      m_manyKeys,          std::move(m_containers), std::move(m_objects) };
            }
            if (m_limits.general) {
                if (m_values.size() > m_limits.maxObjects)
                    return PtFailure { "tensor.pickle-limit",
                                       "the pickle makes more than " + std::to_string(m_limits.maxObjects)
                                           + " objects (ProbeScope's bound)",
                                       m_opStart };
                if (m_stack.size() > m_limits.maxStack || m_marks.size() > m_limits.maxMarks)
                    return PtFailure { "tensor.pickle-limit",
                                       "the pickle nests deeper than ProbeScope's bound (" + std::to_string(m_stack.size())
                                           + " values on the stack, " + std::to_string(m_marks.size()) + " marks)",
                                       m_opStart };
                if (auto problem = generalStep(op))
                    return std::move(*problem);
                continue;
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

    // ---- Checkpoint mode (PtCheckpoint): the opcodes Python's pickler writes at protocols 2 and 3, building
    // inert values. Nothing is ever called: an allowlisted torch rebuild becomes a tensor reference, any other
    // call an Object holding its callable's name and arguments, and a call into a dangerous module is refused.

    std::optional<PtFailure> generalStep(std::uint8_t op)
    {
        switch (op) {
        case ']': // EMPTY_LIST
        case '}': // EMPTY_DICT
            return pushContainer(op == ']' ? Kind::List : Kind::Dict, {});
        case 'l': // LIST
        case 'd': { // DICT
            if (m_marks.empty())
                return failure(std::string(op == 'l' ? "LIST" : "DICT") + " without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (op == 'd' && (m_stack.size() - start) % 2 != 0)
                return failure("DICT with an odd number of keys and values");
            std::vector<std::uint32_t> items(m_stack.begin() + static_cast<std::ptrdiff_t>(start), m_stack.end());
            m_stack.resize(start);
            return pushContainer(op == 'l' ? Kind::List : Kind::Dict, std::move(items));
        }
        case 'a': { // APPEND
            if (!available(2))
                return underflow("APPEND");
            const std::uint32_t target = m_stack[m_stack.size() - 2];
            if (!hasContainer(target, true))
                return failure("APPEND to a value that is not a list");
            m_containers[containerOf(target)].push_back(m_stack.back());
            m_stack.pop_back();
            return std::nullopt;
        }
        case 's': { // SETITEM
            if (!available(3))
                return underflow("SETITEM");
            const std::uint32_t target = m_stack[m_stack.size() - 3];
            if (!hasContainer(target, false))
                return failure("SETITEM on a value that is not a dict");
            auto& items = m_containers[containerOf(target)];
            items.push_back(m_stack[m_stack.size() - 2]);
            items.push_back(m_stack.back());
            m_stack.resize(m_stack.size() - 2);
            return std::nullopt;
        }
        case 'e': // APPENDS
        case 'u': { // SETITEMS
            const char* what = op == 'e' ? "APPENDS" : "SETITEMS";
            if (m_marks.empty())
                return failure(std::string(what) + " without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (start == 0 || !hasContainer(m_stack[start - 1], op == 'e'))
                return failure(std::string(what) + " with no " + (op == 'e' ? "list" : "dict") + " below its MARK");
            if (op == 'u' && (m_stack.size() - start) % 2 != 0)
                return failure("SETITEMS with an odd number of keys and values");
            auto& items = m_containers[containerOf(m_stack[start - 1])];
            items.insert(items.end(), m_stack.begin() + static_cast<std::ptrdiff_t>(start), m_stack.end());
            m_stack.resize(start);
            return std::nullopt;
        }
        case '0': // POP
            if (!available(1))
                return underflow("POP");
            m_stack.pop_back();
            return std::nullopt;
        case '2': // DUP
            if (!available(1))
                return underflow("DUP");
            m_stack.push_back(m_stack.back());
            return std::nullopt;
        case '1': // POP_MARK
            if (m_marks.empty())
                return failure("POP_MARK without a MARK");
            m_stack.resize(m_marks.back());
            m_marks.pop_back();
            return std::nullopt;
        case 'U': // SHORT_BINSTRING
        case 'C': // SHORT_BINBYTES
        case 'T': // BINSTRING
        case 'B': { // BINBYTES
            std::size_t length = 0;
            std::string_view b;
            if (!readLength(op == 'U' || op == 'C', length))
                return truncatedFailure();
            if (!readBytes(length, b))
                return declaredTooLong(length);
            return push({ op == 'U' || op == 'T' ? Kind::String : Kind::Bytes, 0, b });
        }
        case 'X': { // BINUNICODE: as in tensor mode, with the length checked before it is trusted
            std::string_view b;
            if (!readBytes(4, b))
                return truncatedFailure();
            const std::uint32_t length = le32(b.data());
            if (!readBytes(length, b))
                return declaredTooLong(length);
            return push({ Kind::String, 0, b });
        }
        case 0x8A: // LONG1
        case 0x8B: { // LONG4
            std::size_t length = 0;
            std::string_view b;
            if (!readLength(op == 0x8A, length))
                return truncatedFailure();
            if (!readBytes(length, b))
                return declaredTooLong(length);
            // Two's complement, little-endian. Longer than 8 bytes: kept as bytes, its value never matters.
            if (length > 8)
                return push({ Kind::Int, 0, b });
            std::uint64_t v = 0;
            for (std::size_t i = 0; i < length; ++i)
                v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b[i])) << (8 * i);
            if (length > 0 && length < 8 && (static_cast<std::uint8_t>(b[length - 1]) & 0x80))
                v |= ~std::uint64_t { 0 } << (8 * length);
            return push(Kind::Int, static_cast<std::int64_t>(v));
        }
        case 'G': { // BINFLOAT, big-endian; kept as its bits
            std::string_view b;
            if (!readBytes(8, b))
                return truncatedFailure();
            std::uint64_t bits = 0;
            for (int i = 0; i < 8; ++i)
                bits = (bits << 8) | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
            return push(Kind::Float, static_cast<std::int64_t>(bits));
        }
        case 'c': // GLOBAL
            return generalGlobal();
        case 'R': // REDUCE
            return generalReduce();
        case 0x81: { // NEWOBJ: cls.__new__(cls, *args), never called
            if (!available(2))
                return underflow("NEWOBJ");
            const std::uint32_t args = m_stack.back();
            const std::uint32_t cls = m_stack[m_stack.size() - 2];
            if (m_values[args].kind != Kind::Tuple)
                return failure("NEWOBJ with arguments that are not a tuple");
            m_stack.resize(m_stack.size() - 2);
            if (m_values[cls].kind == Kind::OrderedDict)
                return pushContainer(Kind::Dict, {});
            if (m_values[cls].kind != Kind::Global)
                return failure("NEWOBJ of a value that is not a class");
            if (auto refused = refuseDangerous("NEWOBJ", cls))
                return refused;
            return pushObject(cls, args);
        }
        case 'b': { // BUILD: obj.__setstate__(state), never called; an inert object keeps the state
            if (!available(2))
                return underflow("BUILD");
            const std::uint32_t state = m_stack.back();
            const std::uint32_t target = m_stack[m_stack.size() - 2];
            m_stack.pop_back();
            if (auto refused = refuseDangerous("BUILD", target))
                return refused;
            if (m_values[target].kind == Kind::Object)
                m_objects[static_cast<std::size_t>(m_values[target].first)].state = state;
            return std::nullopt;
        }
        case 'i': { // INST: module, name, then the arguments above a MARK
            std::string_view module;
            std::string_view name;
            if (!readGlobalName(module, name))
                return failure("INST name is not terminated by a newline within " + std::to_string(kMaxGlobalName)
                               + " bytes");
            if (m_marks.empty())
                return failure("INST without a MARK");
            if (auto refused = push({ Kind::Global, 0, joined(module, name) }))
                return refused;
            const std::uint32_t cls = m_stack.back();
            m_stack.pop_back();
            if (auto refused = refuseDangerous("INST", cls))
                return refused;
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (auto problem = makeTuple(m_stack.size() - start))
                return problem;
            const std::uint32_t args = m_stack.back();
            m_stack.pop_back();
            return pushObject(cls, args);
        }
        case 'o': { // OBJ: MARK cls args...
            if (m_marks.empty())
                return failure("OBJ without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (m_stack.size() == start)
                return failure("OBJ with no class above its MARK");
            const std::uint32_t cls = m_stack[start];
            if (m_values[cls].kind != Kind::Global)
                return failure("OBJ of a value that is not a class");
            if (auto refused = refuseDangerous("OBJ", cls))
                return refused;
            if (auto problem = makeTuple(m_stack.size() - start - 1))
                return problem;
            const std::uint32_t args = m_stack.back();
            m_stack.resize(start);
            return pushObject(cls, args);
        }
        case 'Q': { // BINPERSID: any device name in a checkpoint (npu:0 too); the tensor is only located
            if (!available(1))
                return underflow("BINPERSID");
            const Value& id = m_values[m_stack.back()];
            if (id.kind != Kind::Tuple || id.count != 5 || item(id, 0).kind != Kind::String || item(id, 0).text != "storage"
                || item(id, 1).kind != Kind::StorageType || item(id, 2).kind != Kind::String
                || item(id, 3).kind != Kind::String || item(id, 4).kind != Kind::Int || item(id, 4).number < 0)
                return failure("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
            const std::string_view key = item(id, 2).text;
            if (key.empty() || key.size() > 64 || key.find_first_of(std::string_view("/\0\\.", 4)) != std::string_view::npos)
                return failure("a storage key is empty or names a path");
            const Value storage { Kind::Storage, 0, {}, id.first, id.count };
            m_stack.pop_back();
            return push(storage);
        }
        case 'q':
        case 'r': { // BINPUT, LONG_BINPUT: Python's pickler numbers memo slots from 0, one per object at most
            std::uint32_t id = 0;
            std::string_view b;
            if (op == 'q') {
                std::uint8_t n = 0;
                if (!readByte(n))
                    return truncatedFailure();
                id = n;
            } else {
                if (!readBytes(4, b))
                    return truncatedFailure();
                id = le32(b.data());
            }
            if (id > m_values.size())
                return failure("memo slot " + std::to_string(id) + " is beyond the " + std::to_string(m_values.size())
                               + " objects made so far");
            return put(id);
        }
        default:
            return step(op);
        }
    }

    /// GLOBAL's and INST's "module\nname\n".
    bool readGlobalName(std::string_view& module, std::string_view& name) { return readLine(module) && readLine(name); }

    /// The length prefix of a value: one byte (the SHORT_ / LONG1 forms) or four, little-endian.
    bool readLength(bool oneByte, std::size_t& length)
    {
        std::string_view b;
        if (!readBytes(oneByte ? 1 : 4, b))
            return false;
        length = oneByte ? static_cast<std::uint8_t>(b[0]) : le32(b.data());
        return true;
    }

    static std::string_view joined(std::string_view module, std::string_view name)
    {
        return { module.data(), static_cast<std::size_t>(name.data() + name.size() - module.data()) };
    }

    static std::pair<std::string_view, std::string_view> splitGlobal(std::string_view text)
    {
        const std::size_t nl = text.find('\n');
        return { text.substr(0, nl), nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1) };
    }

    std::optional<PtFailure> generalGlobal()
    {
        std::string_view module;
        std::string_view name;
        if (!readGlobalName(module, name))
            return failure("GLOBAL name is not terminated by a newline within " + std::to_string(kMaxGlobalName)
                           + " bytes");
        if (module == "torch._utils" && name == "_rebuild_tensor_v2")
            return push(Kind::RebuildTensor);
        if (module == "torch._utils" && name == "_rebuild_tensor")
            return push(Kind::Rebuild, kRebuildTensorV1);
        if (module == "torch._utils" && name == "_rebuild_parameter")
            return push(Kind::Rebuild, kRebuildParameter);
        if (module == "torch._utils" && name == "_rebuild_parameter_with_state")
            return push(Kind::Rebuild, kRebuildParameterState);
        if (module == "torch._tensor" && name == "_rebuild_from_type_v2")
            return push(Kind::Rebuild, kRebuildFromType);
        if (module == "collections" && name == "OrderedDict")
            return push(Kind::OrderedDict);
        if (module == "torch") {
            for (std::size_t i = 0; i < kStorageKinds.size(); ++i) {
                if (kStorageKinds[i].name == name)
                    return push(Kind::StorageType, static_cast<std::int64_t>(i));
            }
        }
        return push({ Kind::Global, 0, joined(module, name) });
    }

    std::optional<PtFailure> refuseDangerous(const char* opcode, std::uint32_t value) const
    {
        if (m_values[value].kind != Kind::Global)
            return std::nullopt;
        const auto [module, name] = splitGlobal(m_values[value].text);
        if (!isDangerousGlobal(module, name))
            return std::nullopt;
        return PtFailure { "tensor.pickle-unsafe",
                           std::string(opcode) + " at pickle offset " + std::to_string(m_opStart) + " would call "
                               + std::string(module) + "." + std::string(name)
                               + ": ProbeScope never runs code from a pickle, and no checkpoint needs this call",
                           m_opStart };
    }

    std::optional<PtFailure> generalReduce()
    {
        if (!available(2))
            return underflow("REDUCE");
        const std::uint32_t argsId = m_stack.back();
        const std::uint32_t callableId = m_stack[m_stack.size() - 2];
        const Value args = m_values[argsId];
        const Value callable = m_values[callableId];
        if (args.kind != Kind::Tuple)
            return failure("REDUCE with arguments that are not a tuple");
        // Python 3.11's enum members pickle as getattr(EnumClass, "member") (argparse.Namespace args hold enums):
        // an attribute of a class that is itself harmless stays an inert value.
        if (isAttributeOfClass(callable, args)) {
            if (auto refused = refuseDangerous("REDUCE", m_items[args.first]))
                return refused;
            m_stack.resize(m_stack.size() - 2);
            return pushObject(callableId, argsId);
        }
        if (auto refused = refuseDangerous("REDUCE", callableId))
            return refused;
        m_stack.resize(m_stack.size() - 2);
        switch (callable.kind) {
        case Kind::OrderedDict:
            if (args.count != 0)
                return failure("OrderedDict called with arguments (torch.save writes OrderedDict())");
            return pushContainer(Kind::Dict, {});
        case Kind::RebuildTensor:
            return rebuildTensor(args, 6);
        case Kind::Rebuild:
            switch (callable.number) {
            case kRebuildTensorV1:
                return rebuildTensor(args, 4);
            case kRebuildParameter:
            case kRebuildParameterState:
                if (args.count < 3 || item(args, 0).kind != Kind::Tensor)
                    return failure("_rebuild_parameter is not called with a tensor");
                return push(item(args, 0));
            default: { // _rebuild_from_type_v2(func, type, args, state)
                if (args.count != 4 || item(args, 2).kind != Kind::Tuple
                    || (item(args, 0).kind != Kind::RebuildTensor
                        && !(item(args, 0).kind == Kind::Rebuild && item(args, 0).number == kRebuildTensorV1)))
                    return failure("_rebuild_from_type_v2 is not called with a tensor rebuild function");
                return rebuildTensor(item(args, 2), item(args, 0).kind == Kind::RebuildTensor ? 6 : 4);
            }
            }
        case Kind::Global:
            return pushObject(callableId, argsId);
        default:
            return failure("REDUCE calls a " + std::string(callable.kind == Kind::Object ? "Python object" : "value")
                           + " that is not a global (ProbeScope calls nothing)");
        }
    }

    bool isAttributeOfClass(const Value& callable, const Value& args) const
    {
        if (callable.kind != Kind::Global || args.count != 2 || item(args, 0).kind != Kind::Global
            || item(args, 1).kind != Kind::String)
            return false;
        const auto [module, name] = splitGlobal(callable.text);
        return (module == "builtins" || module == "__builtin__") && name == "getattr";
    }

    /// (storage, storage_offset, size, stride[, requires_grad, backward_hooks[, metadata]])
    std::optional<PtFailure> rebuildTensor(const Value& args, std::uint32_t minCount)
    {
        if (args.count < minCount || args.count > 7 || item(args, 0).kind != Kind::Storage
            || item(args, 1).kind != Kind::Int || !isIntTuple(item(args, 2)) || !isIntTuple(item(args, 3)))
            return failure("a tensor rebuild is not called with (storage, offset, size, stride, ...)");
        return push({ Kind::Tensor, 0, {}, args.first, args.count });
    }

    bool hasContainer(std::uint32_t value, bool list) const
    {
        const Kind kind = m_values[value].kind;
        return kind == Kind::Object || kind == (list ? Kind::List : Kind::Dict);
    }

    std::size_t containerOf(std::uint32_t value) const
    {
        const Value& v = m_values[value];
        return v.kind == Kind::Object ? m_objects[v.first].container : v.first;
    }

    std::optional<PtFailure> pushContainer(Kind kind, std::vector<std::uint32_t> items)
    {
        const bool empty = items.empty();
        m_containers.push_back(std::move(items));
        return push({ kind, empty ? 0 : 1, {}, static_cast<std::uint32_t>(m_containers.size() - 1), 0 });
    }

    std::optional<PtFailure> pushObject(std::uint32_t callable, std::uint32_t args)
    {
        m_containers.emplace_back();
        m_objects.push_back({ callable, args, kNoValue, static_cast<std::uint32_t>(m_containers.size() - 1) });
        return push({ Kind::Object, 0, {}, static_cast<std::uint32_t>(m_objects.size() - 1), 0 });
    }

    PtFailure declaredTooLong(std::size_t length) const
    {
        return failure("a value declares " + std::to_string(length) + " bytes but only "
                       + std::to_string(m_stream.size() - m_pos) + " remain in the pickle");
    }

    std::optional<PtFailure> global()
    {
        std::string_view module;
        std::string_view name;
        if (!readGlobalName(module, name))
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
    MachineLimits m_limits;
    std::vector<std::vector<std::uint32_t>> m_containers;
    std::vector<ObjectRecord> m_objects;
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

/// A torch.save archive's records and its unpickled data.pkl (the pickle bytes stay alive with it).
struct ArchiveHead
{
    std::vector<ZipRecord> records;
    std::string prefix;
    const ZipRecord* version = nullptr;
    const ZipRecord* pickleRecord = nullptr;
    std::shared_ptr<std::string> pickleBytes; ///< the values' texts point into it (or into the caller's memory)
    PickleResult pickle;
};

Outcome<ArchiveHead> readArchiveHead(const Source& source, const MachineLimits& limits, std::uint64_t maxPickleBytes)
{
    auto zip = readZip(source);
    if (!zip)
        return std::move(zip.failure());
    ArchiveHead head;
    head.records = std::move(*zip);
    const std::vector<ZipRecord>& records = head.records;

    // As in LibTorch, the folder of the first record names the archive; all records live in it.
    const std::size_t slash = records.front().name.find('/');
    if (slash == std::string::npos || slash == 0)
        return corrupt("zip record " + records.front().name + " is not inside an archive folder");
    head.prefix = records.front().name.substr(0, slash + 1);
    const std::string& prefix = head.prefix;
    for (const ZipRecord& r : records) {
        if (!r.name.starts_with(prefix))
            return corrupt("zip record " + r.name + " is outside the archive folder " + prefix);
    }

    const ZipRecord* version = findRecord(records, prefix + ".data/version");
    if (!version)
        version = findRecord(records, prefix + "version");
    if (!version)
        return corrupt("the archive has no version record");
    head.version = version;
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
    head.pickleRecord = pickleRecord;
    if (maxPickleBytes != 0 && pickleRecord->size > maxPickleBytes)
        return PtFailure { "tensor.pickle-limit",
                           "the data.pkl record holds " + std::to_string(pickleRecord->size)
                               + " bytes, more than ProbeScope's bound of " + std::to_string(maxPickleBytes),
                           pickleRecord->dataOffset };
    head.pickleBytes = std::make_shared<std::string>();
    std::string_view pickle;
    if (!source.view(pickleRecord->dataOffset, static_cast<std::size_t>(pickleRecord->size), *head.pickleBytes, pickle))
        return corrupt("the data.pkl record could not be read", pickleRecord->dataOffset);

    auto parsed = PickleMachine(pickle, limits).run();
    if (!parsed) {
        PtFailure failure = std::move(parsed.failure());
        if (failure.offset)
            *failure.offset += pickleRecord->dataOffset;
        if (std::string_view(failure.id) == "tensor.pt-corrupt")
            failure.message = "damaged data.pkl record: " + failure.message;
        return failure;
    }
    head.pickle = std::move(*parsed);
    return head;
}

/// Where a rebuilt tensor's elements lie, checked against its storage record (`storage` null: the record is missing).
Outcome<PtLayout> tensorLayout(const PickleResult& pr, const Value& top, const ZipRecord* storage,
                               const std::string& storageName)
{
    const auto item = [&pr](const Value& tuple, std::uint32_t i) -> const Value& {
        return pr.values[pr.items[tuple.first + i]];
    };
    const Value& storageRef = item(top, 0);
    const StorageKind& kind = kStorageKinds[static_cast<std::size_t>(item(storageRef, 1).number)];
    if (!kind.dtype) {
        std::string typeName(kind.name.substr(0, kind.name.size() - 7));
        return PtFailure { "tensor.dtype-unsupported", "element type " + typeName + " is not supported", std::nullopt };
    }
    const DType dtype = *kind.dtype;
    const std::size_t itemSize = dtypeSize(dtype);
    if (!storage)
        return corrupt("the tensor's storage record " + storageName + " is missing from the archive");
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

Outcome<PtLayout> readLayout(const Source& source)
{
    auto head = readArchiveHead(source, MachineLimits {}, 0);
    if (!head)
        return std::move(head.failure());
    const std::vector<ZipRecord>& records = head->records;
    const std::string& prefix = head->prefix;
    const PickleResult& pr = head->pickle;
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
    if (kind.dtype && item(top, 4).number != 0 && !isFloating(*kind.dtype))
        return corrupt("an integer tensor is marked as requiring gradients, which torch refuses");

    const std::string storageName = prefix + "data/" + std::string(item(storageRef, 2).text);
    const ZipRecord* storage = findRecord(records, storageName);
    if (storage) {
        // Refusing unused records keeps this reader from accepting what LibTorch would read differently.
        for (const ZipRecord& r : records) {
            const std::string_view rest = std::string_view(r.name).substr(prefix.size());
            if (&r != storage && &r != head->pickleRecord && &r != head->version && rest != "version"
                && rest != ".data/version" && rest != "byteorder" && rest != ".data/serialization_id")
                return corrupt("zip record " + r.name + " is not part of a single-tensor archive");
        }
        if (const ZipRecord* order = findRecord(records, prefix + "byteorder")) {
            std::string orderScratch;
            std::string_view order_;
            if (order->size > 16
                || !source.view(order->dataOffset, static_cast<std::size_t>(order->size), orderScratch, order_)
                || order_ != "little")
                return corrupt("the archive is not little-endian", order->dataOffset);
        }
    }
    return tensorLayout(pr, top, storage, storageName);
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


// ---------------------------------------------------------------------------------------------
// Checkpoints: the same zip reader and pickle machine, in checkpoint mode.

struct PtCheckpoint::Impl
{
    std::filesystem::path path;
    int fd = -1;
    ArchiveHead head;
    std::vector<PtTensorRef> tensors; ///< Value::number of a Tensor value indexes it
    ~Impl()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

namespace {
const Value& valueOf(const PickleResult& pr, PtCheckpoint::Node node)
{
    return pr.values[node];
}
} // namespace

PtCheckpoint::Node PtCheckpoint::root() const
{
    return m_impl->head.pickle.top;
}

PtCheckpoint::Type PtCheckpoint::type(Node node) const
{
    switch (valueOf(m_impl->head.pickle, node).kind) {
    case Kind::None:
        return Type::None;
    case Kind::Bool:
        return Type::Bool;
    case Kind::Int:
        return Type::Int;
    case Kind::Float:
        return Type::Float;
    case Kind::String:
        return Type::String;
    case Kind::Bytes:
        return Type::Bytes;
    case Kind::Tuple:
        return Type::Tuple;
    case Kind::List:
        return Type::List;
    case Kind::Dict:
        return Type::Dict;
    case Kind::Object:
        return Type::Object;
    case Kind::Global:
        return Type::Global;
    case Kind::Tensor:
        return Type::Tensor;
    default:
        return Type::Other;
    }
}

std::int64_t PtCheckpoint::integer(Node node) const
{
    return valueOf(m_impl->head.pickle, node).number;
}

std::string PtCheckpoint::text(Node node) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value* v = &valueOf(pr, node);
    if (v->kind == Kind::Object)
        v = &pr.values[pr.objects[v->first].callable];
    std::string out(v->text);
    if (v->kind == Kind::Global)
        std::replace(out.begin(), out.end(), '\n', '.');
    return out;
}

std::size_t PtCheckpoint::size(Node node) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value& v = valueOf(pr, node);
    switch (v.kind) {
    case Kind::Tuple:
        return v.count;
    case Kind::List:
        return pr.containers[v.first].size();
    case Kind::Dict:
        return pr.containers[v.first].size() / 2;
    default:
        return 0;
    }
}

PtCheckpoint::Node PtCheckpoint::item(Node node, std::size_t i) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value& v = valueOf(pr, node);
    return v.kind == Kind::Tuple ? pr.items[v.first + i] : pr.containers[v.first][i];
}

PtCheckpoint::Node PtCheckpoint::key(Node dict, std::size_t i) const
{
    return m_impl->head.pickle.containers[valueOf(m_impl->head.pickle, dict).first][2 * i];
}

PtCheckpoint::Node PtCheckpoint::value(Node dict, std::size_t i) const
{
    return m_impl->head.pickle.containers[valueOf(m_impl->head.pickle, dict).first][2 * i + 1];
}

std::optional<PtCheckpoint::Node> PtCheckpoint::find(Node dict, std::string_view name) const
{
    if (type(dict) != Type::Dict)
        return std::nullopt;
    std::optional<Node> found;
    for (std::size_t i = 0; i < size(dict); ++i) {
        const Value& k = valueOf(m_impl->head.pickle, key(dict, i));
        if (k.kind == Kind::String && k.text == name)
            found = value(dict, i);
    }
    return found;
}

std::optional<PtCheckpoint::Node> PtCheckpoint::attribute(Node object, std::string_view name) const
{
    const PickleResult& pr = m_impl->head.pickle;
    const Value& v = valueOf(pr, object);
    if (v.kind != Kind::Object)
        return std::nullopt;
    Node state = pr.objects[v.first].state;
    if (state == 0xFFFFFFFF) // never BUILT
        return std::nullopt;
    // (dict_state, slot_state) from objects with __slots__
    if (type(state) == Type::Tuple && size(state) == 2)
        state = item(state, 0);
    return find(state, name);
}

const PtTensorRef& PtCheckpoint::tensor(Node node) const
{
    return m_impl->tensors[static_cast<std::size_t>(valueOf(m_impl->head.pickle, node).number)];
}

const std::filesystem::path& PtCheckpoint::path() const
{
    return m_impl->path;
}

int PtCheckpoint::fd() const
{
    return m_impl->fd;
}

Result<PtCheckpoint> openPtCheckpoint(const std::filesystem::path& path, const PickleLimits& limits)
{
    auto opened = openRegularFile(path);
    if (!opened)
        return opened.error();
    auto impl = std::make_shared<PtCheckpoint::Impl>();
    impl->path = path;
    impl->fd = *opened;
    struct stat st {};
    if (::fstat(impl->fd, &st) != 0)
        return ioError(path, "cannot stat file");
    const FileSource source(impl->fd, static_cast<std::uint64_t>(st.st_size));
    char headBytes[4] = {};
    const std::size_t headSize = st.st_size < 4 ? static_cast<std::size_t>(st.st_size) : 4;
    if (!preadAll(impl->fd, 0, headSize, headBytes))
        return ioError(path, "read failed");
    if (headSize < 4 || std::memcmp(headBytes, "PK\x03\x04", 4) != 0)
        return parseSource(source, path, std::string_view(headBytes, headSize)).error();
    try {
        MachineLimits machine;
        machine.general = true;
        machine.maxObjects = limits.maxObjects;
        machine.maxMarks = limits.maxMarks;
        machine.maxStack = limits.maxStack;
        auto head = readArchiveHead(source, machine, limits.maxPickleBytes);
        if (!head)
            return toDiagnostic(path, std::move(head.failure()));
        impl->head = std::move(*head);
        // The records by name: a checkpoint has thousands of storages.
        std::unordered_map<std::string_view, const ZipRecord*> byName;
        byName.reserve(impl->head.records.size());
        for (const ZipRecord& r : impl->head.records)
            byName.emplace(r.name, &r);
        PickleResult& pr = impl->head.pickle;
        std::string storageName;
        for (Value& v : pr.values) {
            if (v.kind != Kind::Tensor)
                continue;
            const Value& storageRef = pr.values[pr.items[v.first]];
            storageName = impl->head.prefix + "data/" + std::string(pr.values[pr.items[storageRef.first + 2]].text);
            const auto it = byName.find(storageName);
            PtTensorRef ref;
            const StorageKind& kind = kStorageKinds[static_cast<std::size_t>(pr.values[pr.items[storageRef.first + 1]].number)];
            ref.dtypeName = std::string(kind.name.substr(0, kind.name.size() - 7));
            auto layout = tensorLayout(pr, v, it == byName.end() ? nullptr : it->second, storageName);
            if (!layout) {
                if (std::string_view(layout.failure().id) != "tensor.dtype-unsupported")
                    return toDiagnostic(path, std::move(layout.failure()));
                // Not an error until the tensor is compared: optimizer or RNG state may hold such types.
                ref.shape.clear();
            } else {
                ref.dtype = layout->dtype;
                ref.shape = layout->sizes;
                ref.strides = layout->strides;
                ref.offset = layout->offset;
                ref.numel = layout->numel;
                ref.storageOffset = layout->storageOffset;
                ref.storageBytes = layout->storageBytes;
                ref.contiguous = layout->contiguous;
            }
            v.number = static_cast<std::int64_t>(impl->tensors.size());
            impl->tensors.push_back(std::move(ref));
        }
    } catch (const std::bad_alloc&) {
        return toDiagnostic(path, corrupt("out of memory while reading the file"));
    }
    PtCheckpoint checkpoint;
    checkpoint.m_impl = std::move(impl);
    return checkpoint;
}

} // namespace probescope::tensor
