// SPDX-License-Identifier: Apache-2.0
// NumPy's .npy format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// The header is a Python dict literal; it is parsed by hand here (no Python, no eval) and every
// number in it is checked before anything is allocated, so a hostile header cannot exhaust memory.
#include "core/tensor/npystream.h"
#include "core/tensor/tensor.h"
#include "core/util/fileio.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>

namespace probescope::tensor {

namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);

Diagnostic npyError(const std::filesystem::path& path, std::string id, std::uint64_t offset, std::string message)
{
    return makeError(std::move(id), SourceLocation { path.string(), offset, 0, 0 }, std::move(message));
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            text += ", ";
        text += std::to_string(shape[i]);
    }
    if (shape.size() == 1)
        text += ',';
    return text + ')';
}

std::string approxBytes(long double bytes)
{
    char buffer[64];
    if (bytes < 1e6L)
        std::snprintf(buffer, sizeof buffer, "%.0Lf", bytes);
    else
        std::snprintf(buffer, sizeof buffer, "%.1Le", bytes);
    return buffer;
}

/// The header values ProbeScope cares about; anything else in the dict is skipped.
struct NpyHeader
{
    std::optional<std::string> descr;
    bool descrIsString = true; ///< false for structured dtypes, whose descr is a list
    std::optional<bool> fortranOrder;
    std::optional<std::vector<std::int64_t>> shape;
};

/// A tiny reader for the subset of Python literal syntax that numpy writes into headers.
class HeaderParser
{
public:
    HeaderParser(std::string_view text, std::uint64_t baseOffset)
        : m_text(text)
        , m_base(baseOffset)
    {
    }

    bool parse(NpyHeader& header)
    {
        skipSpace();
        if (!consume('{'))
            return fail("expected '{' at the start of the header dict");
        while (true) {
            skipSpace();
            if (consume('}'))
                break;
            std::string key;
            if (!parseString(key))
                return fail("expected a quoted key in the header dict");
            skipSpace();
            if (!consume(':'))
                return fail("expected ':' after key '" + key + "'");
            skipSpace();
            if (key == "descr") {
                if (peek() == '\'' || peek() == '"') {
                    std::string descr;
                    if (!parseString(descr))
                        return fail("unterminated string for 'descr'");
                    header.descr = descr;
                } else {
                    // Structured dtypes come as a list of fields; remember that and skip it.
                    if (!skipValue())
                        return false;
                    header.descr = std::string();
                    header.descrIsString = false;
                }
            } else if (key == "fortran_order") {
                if (consumeWord("True"))
                    header.fortranOrder = true;
                else if (consumeWord("False"))
                    header.fortranOrder = false;
                else
                    return fail("'fortran_order' must be True or False");
            } else if (key == "shape") {
                std::vector<std::int64_t> shape;
                if (!parseShape(shape))
                    return false;
                header.shape = std::move(shape);
            } else if (!skipValue()) {
                return false;
            }
            skipSpace();
            if (consume(','))
                continue;
            skipSpace();
            if (consume('}'))
                break;
            return fail("expected ',' or '}' in the header dict");
        }
        // numpy pads the header with spaces and ends it with '\n'; nothing else may follow the dict.
        skipSpace();
        if (m_pos != m_text.size())
            return fail("unexpected text after the header dict");
        return true;
    }

    const std::string& error() const { return m_error; }
    std::uint64_t errorOffset() const { return m_base + m_errorPos; }

private:
    char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }

    bool consume(char c)
    {
        if (peek() != c || m_pos >= m_text.size())
            return false;
        ++m_pos;
        return true;
    }

    bool consumeWord(std::string_view word)
    {
        if (m_text.substr(m_pos, word.size()) != word)
            return false;
        m_pos += word.size();
        return true;
    }

    void skipSpace()
    {
        while (m_pos < m_text.size()
               && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' || m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
            ++m_pos;
    }

    bool fail(std::string message)
    {
        if (m_error.empty()) {
            m_error = std::move(message);
            m_errorPos = m_pos;
        }
        return false;
    }

    bool parseString(std::string& out)
    {
        const char quote = peek();
        if (quote != '\'' && quote != '"')
            return false;
        ++m_pos;
        while (m_pos < m_text.size() && m_text[m_pos] != quote) {
            if (m_text[m_pos] == '\\' && m_pos + 1 < m_text.size())
                ++m_pos; // keep the escaped character literally; numpy never needs more
            out += m_text[m_pos++];
        }
        return consume(quote);
    }

    bool parseInt(std::int64_t& out)
    {
        const std::size_t start = m_pos;
        bool negative = false;
        if (consume('-'))
            negative = true;
        else
            consume('+');
        if (peek() < '0' || peek() > '9')
            return fail("expected a number in 'shape'");
        // Accumulate as a negative number so the full int64 range (and overflow) is handled exactly.
        std::int64_t value = 0;
        while (peek() >= '0' && peek() <= '9') {
            const int digit = m_text[m_pos] - '0';
            if (value < (std::numeric_limits<std::int64_t>::min() + digit) / 10) {
                m_pos = start;
                return fail("a dimension in 'shape' does not fit in 64 bits");
            }
            value = value * 10 - digit;
            ++m_pos;
        }
        consume('L'); // Python 2 era numpy wrote long integers as "3L"
        if (!negative) {
            if (value == std::numeric_limits<std::int64_t>::min()) {
                m_pos = start;
                return fail("a dimension in 'shape' does not fit in 64 bits");
            }
            value = -value;
        }
        out = value;
        return true;
    }

    bool parseShape(std::vector<std::int64_t>& shape)
    {
        const char open = peek();
        if (open != '(' && open != '[')
            return fail("'shape' must be a tuple of integers");
        const char close = open == '(' ? ')' : ']';
        ++m_pos;
        while (true) {
            skipSpace();
            if (consume(close))
                return true;
            std::int64_t dim = 0;
            if (!parseInt(dim))
                return false;
            if (shape.size() >= 64)
                return fail("'shape' has more than 64 dimensions");
            shape.push_back(dim);
            skipSpace();
            if (consume(','))
                continue;
            skipSpace();
            if (consume(close))
                return true;
            return fail("expected ',' or '" + std::string(1, close) + "' in 'shape'");
        }
    }

    /// Skips one value of any nesting (strings, tuples, lists, dicts, words, numbers).
    bool skipValue()
    {
        int depth = 0;
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c == '\'' || c == '"') {
                std::string ignored;
                if (!parseString(ignored))
                    return fail("unterminated string in the header");
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                if (++depth > 32)
                    return fail("the header nests too deeply");
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0)
                    return true;
                --depth;
            } else if (c == ',' && depth == 0) {
                return true;
            }
            ++m_pos;
        }
        return fail("the header dict is not closed");
    }

    std::string_view m_text;
    std::uint64_t m_base;
    std::size_t m_pos = 0;
    std::string m_error;
    std::size_t m_errorPos = 0;
};

/// A checked .npy file: where its elements are and how they are stored.
struct NpyLayout
{
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape;
    bool fortran = false; ///< column-major with more than one axis (the elements need reordering)
    bool swap = false;    ///< big-endian elements
    std::uint64_t dataStart = 0;
    std::uint64_t bytes = 0;
    std::int64_t itemCount = 0;
};

struct NpyType
{
    DType dtype;
    bool swap; ///< stored big-endian
};

std::optional<NpyType> npyType(std::string_view descr)
{
    char order = '=';
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
        order = descr[0];
        descr.remove_prefix(1);
    }
    std::optional<DType> dtype;
    if (descr == "b1" || descr == "?")
        dtype = DType::Bool;
    else if (descr == "u1")
        dtype = DType::UInt8;
    else if (descr == "i1")
        dtype = DType::Int8;
    else if (descr == "i2")
        dtype = DType::Int16;
    else if (descr == "i4")
        dtype = DType::Int32;
    else if (descr == "i8")
        dtype = DType::Int64;
    else if (descr == "f2")
        dtype = DType::Float16;
    else if (descr == "f4")
        dtype = DType::Float32;
    else if (descr == "f8")
        dtype = DType::Float64;
    if (!dtype)
        return std::nullopt;
    // '|' means "byte order does not apply"; '=' is the writer's native order, which for every
    // platform msprobe runs on (x86-64, aarch64) is little-endian.
    return NpyType { *dtype, order == '>' && dtypeSize(*dtype) > 1 };
}

void byteSwap(std::vector<std::byte>& data, std::size_t itemSize)
{
    for (std::size_t i = 0; i + itemSize <= data.size(); i += itemSize)
        std::reverse(data.begin() + static_cast<std::ptrdiff_t>(i),
                     data.begin() + static_cast<std::ptrdiff_t>(i + itemSize));
}

/// Copies column-major (Fortran) elements into row-major order.
/// Out of line: GCC 12 inlined into tensorOf() warns about the index vectors (-Wfree-nonheap-object, a false alarm).
[[gnu::noinline]] void fortranToC(const std::byte* source, std::vector<std::byte>& target, const std::vector<std::int64_t>& shape,
                std::size_t itemSize)
{
    const std::size_t rank = shape.size();
    std::vector<std::int64_t> fortranStride(rank);
    std::int64_t stride = 1;
    for (std::size_t k = 0; k < rank; ++k) {
        fortranStride[k] = stride;
        stride *= shape[k];
    }
    std::vector<std::int64_t> index(rank, 0);
    std::int64_t sourceElement = 0;
    const std::size_t count = target.size() / itemSize;
    for (std::size_t out = 0; out < count; ++out) {
        std::memcpy(target.data() + out * itemSize, source + static_cast<std::size_t>(sourceElement) * itemSize,
                    itemSize);
        // Advance the C-order index (last axis fastest) and keep the Fortran offset in step with it.
        for (std::size_t k = rank; k-- > 0;) {
            ++index[k];
            sourceElement += fortranStride[k];
            if (index[k] < shape[k])
                break;
            sourceElement -= index[k] * fortranStride[k];
            index[k] = 0;
        }
    }
}

/// Everything loadNpy checks before it copies the elements: the same errors for the loader and the stream.
/// `bytes` is the file's start: all of it, or at least its first min(fileSize, data start) bytes.
Result<NpyLayout> parseLayout(const std::filesystem::path& path, std::string_view bytes, std::uint64_t fileSize)
{
    if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
        return npyError(path, "tensor.npy-format", 0,
                        fileSize == 0 ? "the file is empty" : "not a NumPy .npy file (the \\x93NUMPY magic is missing)");
    }
    if (bytes.size() < 8)
        return npyError(path, "tensor.truncated", fileSize, "the file ends inside the .npy version field");
    const auto major = static_cast<unsigned char>(bytes[6]);
    const auto minor = static_cast<unsigned char>(bytes[7]);
    if (major < 1 || major > 3 || minor != 0) {
        return npyError(path, "tensor.npy-version", 6,
                        "unsupported .npy format version " + std::to_string(major) + '.' + std::to_string(minor)
                            + " (1.0, 2.0 and 3.0 are understood)");
    }
    const std::size_t lengthBytes = major == 1 ? 2 : 4;
    if (bytes.size() < 8 + lengthBytes)
        return npyError(path, "tensor.truncated", fileSize, "the file ends inside the .npy header length");
    std::uint64_t headerLength = 0;
    for (std::size_t i = 0; i < lengthBytes; ++i)
        headerLength |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    const std::uint64_t headerStart = 8 + lengthBytes;
    const std::uint64_t dataStart = headerStart + headerLength;
    if (dataStart > fileSize) {
        return npyError(path, "tensor.truncated", fileSize,
                        "the header claims " + std::to_string(headerLength) + " bytes but the file ends after "
                            + std::to_string(fileSize - headerStart));
    }

    NpyHeader header;
    HeaderParser parser(bytes.substr(headerStart, headerLength), headerStart);
    if (!parser.parse(header))
        return npyError(path, "tensor.npy-header", parser.errorOffset(), "bad .npy header: " + parser.error());
    if (!header.descr)
        return npyError(path, "tensor.npy-header", headerStart, "bad .npy header: 'descr' is missing");
    if (!header.shape)
        return npyError(path, "tensor.npy-header", headerStart, "bad .npy header: 'shape' is missing");
    if (!header.fortranOrder)
        return npyError(path, "tensor.npy-header", headerStart, "bad .npy header: 'fortran_order' is missing");
    const bool fortran = *header.fortranOrder;

    const std::optional<NpyType> type = header.descrIsString ? npyType(*header.descr) : std::nullopt;
    if (!type) {
        const std::string what = header.descrIsString ? "'" + *header.descr + "'" : "a structured (record) dtype";
        return npyError(path, "tensor.dtype-unsupported", headerStart,
                        "element type " + what
                            + " is not supported (bool, uint8, int8/16/32/64 and float16/32/64 are)");
    }

    const std::vector<std::int64_t>& shape = *header.shape;
    const std::size_t itemSize = dtypeSize(type->dtype);
    std::uint64_t numel = 1;
    bool overflow = false;
    long double approxNeeded = static_cast<long double>(itemSize);
    for (std::int64_t dim : shape) {
        if (dim < 0) {
            return npyError(path, "tensor.npy-header", headerStart,
                            "header says shape " + shapeText(shape) + ", which has a negative dimension");
        }
        approxNeeded *= static_cast<long double>(dim);
        if (!overflow && __builtin_mul_overflow(numel, static_cast<std::uint64_t>(dim), &numel))
            overflow = true;
    }
    std::uint64_t needed = 0;
    if (!overflow && __builtin_mul_overflow(numel, static_cast<std::uint64_t>(itemSize), &needed))
        overflow = true;
    if (overflow) {
        // The product may collapse back to zero through a zero dimension; only a real overflow is refused.
        if (approxNeeded != 0) {
            return npyError(path, "tensor.npy-header", headerStart,
                            "header says shape " + shapeText(shape) + " which needs " + approxBytes(approxNeeded)
                                + " bytes, more than any file can hold");
        }
        needed = 0;
        numel = 0;
    }
    const std::uint64_t available = fileSize - dataStart;
    if (available < needed) {
        return npyError(path, "tensor.truncated", fileSize,
                        "header says shape " + shapeText(shape) + " which needs " + approxBytes(static_cast<long double>(needed))
                            + " bytes of data, but the file has " + std::to_string(available));
    }
    if (available > needed) {
        return npyError(path, "tensor.npy-trailing", dataStart + needed,
                        "header says shape " + shapeText(shape) + " which needs " + std::to_string(needed)
                            + " bytes of data, but the file has " + std::to_string(available)
                            + " (extra bytes after the array)");
    }

    NpyLayout layout;
    layout.dtype = type->dtype;
    layout.shape = shape;
    layout.fortran = fortran && shape.size() > 1 && numel > 0;
    layout.swap = type->swap;
    layout.dataStart = dataStart;
    layout.bytes = needed;
    layout.itemCount = static_cast<std::int64_t>(numel);
    return layout;
}

/// The elements of a checked .npy as a C-order little-endian Tensor.
Tensor tensorOf(const NpyLayout& layout, std::string_view bytes)
{
    const std::size_t itemSize = dtypeSize(layout.dtype);
    Tensor tensor;
    tensor.dtype = layout.dtype;
    tensor.shape = layout.shape;
    const auto* source = reinterpret_cast<const std::byte*>(bytes.data() + layout.dataStart);
    if (layout.fortran) {
        tensor.data.resize(layout.bytes);
        fortranToC(source, tensor.data, layout.shape, itemSize);
    } else {
        tensor.data.assign(source, source + layout.bytes);
    }
    if (layout.swap)
        byteSwap(tensor.data, itemSize);
    return tensor;
}

} // namespace

Result<Tensor> loadNpy(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return npyError(path, "tensor.missing", 0, "file does not exist");
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    const std::string_view bytes = (*mapped)->text();
    auto layout = parseLayout(path, bytes, bytes.size());
    if (!layout)
        return layout.error();
    Tensor tensor = tensorOf(*layout, bytes);
    if ((*mapped)->damaged()) // cut short under the map: the pages past its new end were read as zeros
        return npyError(path, "tensor.truncated", 0, "the file was cut short while it was being read");
    return tensor;
}

namespace {

/// Reads [offset, offset + length) or less at the end of the file; returns how much was read, or -1.
std::int64_t readSome(int fd, std::uint64_t offset, std::size_t length, std::byte* out)
{
    std::size_t got = 0;
    while (got < length) {
        const ssize_t n = ::pread(fd, out + got, length - got, static_cast<off_t>(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += static_cast<std::size_t>(n);
    }
    return static_cast<std::int64_t>(got);
}

} // namespace

Result<NpyStream> openNpyStream(const std::filesystem::path& path, ReadBuffer& buffer, std::uint64_t wholeFileLimit)
{
    // The same checks and errors as loadNpy (exists, then fileio's regular-file open).
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return npyError(path, "tensor.missing", 0, "file does not exist");
    auto opened = openRegularFile(path);
    if (!opened)
        return opened.error();
    struct stat st {};
    if (::fstat(*opened, &st) != 0) {
        const int err = errno;
        ::close(*opened);
        return makeError("io.read", fileLocation(path),
                         std::string("cannot stat file: ") + std::strerror(err));
    }
    return openNpyStream(OpenedDataFile(DataFile { path, static_cast<std::uint64_t>(st.st_size) }, *opened), buffer,
                         wholeFileLimit);
}

Result<NpyStream> openNpyStream(OpenedDataFile opened, ReadBuffer& buffer, std::uint64_t wholeFileLimit)
{
    // The file was opened and found regular by the caller (TensorFolder::open, or the path form above).
    const std::filesystem::path& path = opened.file().path;
    const std::uint64_t size = opened.file().size;
    NpyStream stream;
    stream.m_fd = opened.release();
    const auto readFailed = [&] {
        return makeError("io.read", fileLocation(path),
                         std::string("read failed: ") + std::strerror(errno));
    };
    // The start of the file: all of it when small (one read into a buffer reused from file to file), else the
    // header, read again whole when it is longer than the first 4 KiB.
    const bool whole = size <= wholeFileLimit;
    if (!whole)
        readAheadUnlessCached(stream.m_fd, 0, size); // before the first read: see fileio.h
    std::size_t want = static_cast<std::size_t>(whole ? size : std::min<std::uint64_t>(size, 4096));
    std::byte* bytes = buffer.reserve(want);
    std::int64_t got = readSome(stream.m_fd, 0, want, bytes);
    if (got < 0)
        return readFailed();
    std::string_view head(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(got));
    if (!whole && head.size() >= 12 && head.substr(0, kMagic.size()) == kMagic) {
        const auto major = static_cast<unsigned char>(head[6]);
        std::uint64_t headerLength = 0;
        const std::size_t lengthBytes = major == 1 ? 2 : 4;
        for (std::size_t i = 0; i < lengthBytes; ++i)
            headerLength |= static_cast<std::uint64_t>(static_cast<unsigned char>(head[8 + i])) << (8 * i);
        const std::uint64_t dataStart = 8 + lengthBytes + headerLength;
        if (dataStart > head.size() && dataStart <= size) {
            want = static_cast<std::size_t>(dataStart);
            bytes = buffer.reserve(want);
            got = readSome(stream.m_fd, 0, want, bytes);
            if (got < 0)
                return readFailed();
            head = std::string_view(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(got));
        }
    }
    // A file that shrank while it was read is judged by what was read, as a truncated file.
    auto layout = parseLayout(path, head, whole ? head.size() : size);
    if (!layout)
        return layout.error();
    stream.m_dtype = layout->dtype;
    stream.m_shape = layout->shape;
    // parseLayout refused a shape whose byte count overflows, unless a zero dimension makes it empty.
    stream.m_numel = layout->itemCount;
    if (layout->fortran || layout->swap) {
        // Rare layouts are reordered in memory, as loadNpy does.
        if (!whole) {
            auto loaded = loadNpy(path);
            if (!loaded)
                return loaded.error();
            stream.m_rearranged = std::move(loaded->data);
        } else {
            stream.m_rearranged = tensorOf(*layout, head).data;
        }
        stream.m_memory = stream.m_rearranged.data();
    } else if (whole) {
        stream.m_memory = bytes + layout->dataStart;
    } else {
        stream.placeElements(path, layout->dataStart, layout->bytes);
        if (!stream.m_memory)
            return stream; // the elements are read where they lie (fd() at dataOffset())
    }
    if (stream.m_fd >= 0)
        ::close(std::exchange(stream.m_fd, -1));
    return stream;
}

} // namespace probescope::tensor
