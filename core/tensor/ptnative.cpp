// SPDX-License-Identifier: Apache-2.0
// A reader for the one layout torch.save gives a single tensor: the archive as a whole (records, data.pkl, the
// tensor's layout) on top of the zip subset (ptzip.cpp) and the pickle machine in tensor mode (ptpickle.cpp).
// It deliberately refuses more than LibTorch does: tests/core/tst_tensor.cpp checks that every
// file it accepts loads identically through LibTorch (loadPtWithTorch).
#include "core/tensor/ptnative.h"
#include "core/tensor/ptarchive.h"
#include "core/util/fileio.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace probescope::tensor {

namespace pt {

// ---------------------------------------------------------------------------------------------
// The archive as a whole

/// The record named `prefix` + `suffix`, found without building the name (a file of the small-tensor pair is
/// looked up five times).
const ZipRecord* findRecord(const std::vector<ZipRecord>& records, std::string_view prefix, std::string_view suffix)
{
    for (const ZipRecord& r : records) {
        if (r.name.size() == prefix.size() + suffix.size() && r.name.starts_with(prefix) && r.name.ends_with(suffix))
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
    head.prefix = std::string_view(records.front().name).substr(0, slash + 1);
    const std::string_view prefix = head.prefix;
    for (const ZipRecord& r : records) {
        if (!r.name.starts_with(prefix))
            return corrupt("zip record " + r.name + " is outside the archive folder " + std::string(prefix));
    }

    const ZipRecord* version = findRecord(records, prefix, ".data/version");
    if (!version)
        version = findRecord(records, prefix, "version");
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

    const ZipRecord* pickleRecord = findRecord(records, prefix, "data.pkl");
    if (!pickleRecord)
        return corrupt("the archive has no data.pkl record");
    head.pickleRecord = pickleRecord;
    if (maxPickleBytes != 0 && pickleRecord->size > maxPickleBytes)
        return PtFailure { "tensor.pickle-limit",
                           "the data.pkl record holds " + std::to_string(pickleRecord->size)
                               + " bytes, more than ProbeScope's bound of " + std::to_string(maxPickleBytes),
                           pickleRecord->dataOffset };
    // Bytes in memory are viewed where they lie; bytes read from the file are kept alive with the head.
    std::string unused;
    if (!source.viewsLast())
        head.pickleBytes = std::make_shared<std::string>();
    std::string_view pickle;
    if (!source.view(pickleRecord->dataOffset, static_cast<std::size_t>(pickleRecord->size),
                     head.pickleBytes ? *head.pickleBytes : unused, pickle))
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
    const std::string_view prefix = head->prefix;
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

    const std::string_view storageKey = item(storageRef, 2).text;
    const ZipRecord* storage = nullptr;
    for (const ZipRecord& r : records) {
        const std::string_view name = r.name;
        if (name.size() == prefix.size() + 5 + storageKey.size() && name.starts_with(prefix)
            && name.substr(prefix.size(), 5) == "data/" && name.ends_with(storageKey)) {
            storage = &r;
            break;
        }
    }
    if (storage) {
        // Refusing unused records keeps this reader from accepting what LibTorch would read differently.
        for (const ZipRecord& r : records) {
            const std::string_view rest = std::string_view(r.name).substr(prefix.size());
            if (&r != storage && &r != head->pickleRecord && &r != head->version && rest != "version"
                && rest != ".data/version" && rest != "byteorder" && rest != ".data/serialization_id")
                return corrupt("zip record " + r.name + " is not part of a single-tensor archive");
        }
        if (const ZipRecord* order = findRecord(records, prefix, "byteorder")) {
            std::string orderScratch;
            std::string_view order_;
            if (order->size > 16
                || !source.view(order->dataOffset, static_cast<std::size_t>(order->size), orderScratch, order_)
                || order_ != "little")
                return corrupt("the archive is not little-endian", order->dataOffset);
        }
    }
    if (!storage) // the name only for the message
        return tensorLayout(pr, top, storage, std::string(prefix) + "data/" + std::string(storageKey));
    return tensorLayout(pr, top, storage, std::string());
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
    return makeError("io.read", fileLocation(path), std::move(message));
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

} // namespace pt

using namespace pt;


Result<Tensor> parsePtArchive(std::string_view bytes, const std::filesystem::path& path)
{
    return parseSource(MemorySource(bytes), path, bytes.substr(0, 4));
}

Result<Tensor> loadPtNative(const std::filesystem::path& path, std::uint64_t wholeFileLimit)
{
    const FileHandle file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return makeError("tensor.missing", fileLocation(path), "file does not exist");
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

Result<PtStream> openPtStream(const std::filesystem::path& path, ReadBuffer& buffer, std::uint64_t wholeFileLimit)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return makeError("tensor.missing", fileLocation(path), "file does not exist");
        return ioError(path, std::string("cannot open file: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return ioError(path, "not a regular file");
    }
    return openPtStream(OpenedDataFile(DataFile { path, static_cast<std::uint64_t>(st.st_size) }, fd), buffer,
                        wholeFileLimit);
}

Result<PtStream> openPtStream(OpenedDataFile opened, ReadBuffer& buffer, std::uint64_t wholeFileLimit)
{
    // The file was opened and found regular by the caller (TensorFolder::open, or the path form above).
    // The path is made only for a message (OpenedDataFile::file()).
    const auto path = [&opened]() -> const std::filesystem::path& { return opened.file().path; };
    const std::uint64_t size = opened.size();
    PtStream stream;
    stream.m_fd = opened.release();

    std::optional<MemorySource> memory;
    std::optional<FileSource> file;
    std::string_view head;
    char headBytes[4] = {};
    const std::byte* readWhole = opened.readWhole();
    if (readWhole && size <= wholeFileLimit) {
        // TensorFolder::open read it already (into this buffer).
        const std::string_view all(reinterpret_cast<const char*>(readWhole), static_cast<std::size_t>(size));
        memory.emplace(all);
        head = all.substr(0, 4);
    } else if (size <= wholeFileLimit) {
        // The whole file in one read(), into a buffer reused from file to file (no zero-filling).
        std::byte* bytes = buffer.reserve(static_cast<std::size_t>(size));
        std::size_t got = 0;
        while (got < size) {
            const ssize_t n = ::read(stream.m_fd, bytes + got, static_cast<std::size_t>(size) - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return ioError(path(), std::string("read failed: ") + std::strerror(errno));
            if (n == 0)
                break; // shrank while reading: parse what is there, as a truncated file
            got += static_cast<std::size_t>(n);
        }
        const std::string_view all(reinterpret_cast<const char*>(bytes), got);
        memory.emplace(all);
        head = all.substr(0, 4);
    } else {
        readAheadUnlessCached(stream.m_fd, 0, size); // before the first read: see fileio.h
        if (!preadAll(stream.m_fd, 0, 4, headBytes))
            return ioError(path(), "read failed");
        file.emplace(stream.m_fd, size);
        head = std::string_view(headBytes, 4);
    }
    const Source& source = memory ? static_cast<const Source&>(*memory) : static_cast<const Source&>(*file);
    if (head.size() < 4 || std::memcmp(head.data(), "PK\x03\x04", 4) != 0)
        return parseSource(source, path(), head).error(); // the same "not a zip" diagnostics as loadPt
    try {
        auto layout = readLayout(source);
        if (!layout)
            return toDiagnostic(path(), std::move(layout.failure()));
        stream.m_dtype = layout->dtype;
        stream.m_shape = std::move(layout->sizes);
        stream.m_numel = layout->numel;
        if (!layout->contiguous) {
            auto tensor = readArchive(source);
            if (!tensor)
                return toDiagnostic(path(), std::move(tensor.failure()));
            stream.m_rearranged = std::move(tensor->data);
            stream.m_memory = stream.m_rearranged.data();
        } else if (memory) {
            stream.m_memory = reinterpret_cast<const std::byte*>(memory->bytes().data()) + layout->dataStart();
        } else {
            stream.placeElements(path(), layout->dataStart(), layout->outBytes);
        }
    } catch (const std::bad_alloc&) {
        return toDiagnostic(path(), corrupt("out of memory while reading the file"));
    }
    if (stream.m_memory && stream.m_fd >= 0) {
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
