// SPDX-License-Identifier: Apache-2.0
// The arithmetic follows numpy 1.24 on float32 arrays as msprobe calls it: np.linalg.norm(x) is sqrt(x.dot(x)), and
// a float32 dot is cblas_sdot over chunks of 2^30 elements summed in double (numpy's FLOAT_dot); Debian's reference
// BLAS sdot adds the float32 products one after the other. So each of dot(a,b), dot(a,a), dot(b,b), dot(a-b,a-b) is
// a sequential float32 sum here too, built without fused multiply-add (CMakeLists.txt: -ffp-contract=off).
#include "core/ckpt/ckptcompare.h"

#include "core/compare/table/pytext.h"
#include "core/tensor/dtype.h"
#include "core/util/parallel.h"
#include "core/util/pytext.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace probescope::ckpt {

namespace {

using tensor::DType;

/// numpy's NPY_CBLAS_CHUNK: a float32 dot of more elements is several sdot calls summed in double.
constexpr std::uint64_t kBlasChunk = (0x7FFFFFFFu / 2) + 1;
constexpr std::size_t kBlock = 1u << 16; ///< elements compared per step

Diagnostic readError(const std::filesystem::path& file, std::string message, std::optional<std::uint64_t> offset = {})
{
    return makeError("ckpt.read", SourceLocation { file.string(), offset, 0, 0 }, std::move(message));
}

/// One shard's elements, front to back, as float32 (Tensor.float()): read with pread a buffer at a time.
class PieceCursor
{
public:
    PieceCursor(const Piece& piece, std::size_t bufferBytes)
        : m_piece(piece)
        , m_dtype(piece.ref().dtype.value_or(DType::Float32))
        , m_itemSize(tensor::dtypeSize(m_dtype))
        , m_next(piece.ref().storageOffset + static_cast<std::uint64_t>(piece.ref().offset) * m_itemSize)
        , m_left(static_cast<std::uint64_t>(piece.ref().numel))
        , m_raw(static_cast<std::size_t>(std::clamp<std::uint64_t>(m_left, 1, std::max<std::size_t>(bufferBytes / m_itemSize, 1)))
                * m_itemSize)
    {
        ::posix_fadvise(piece.file->fd(), static_cast<off_t>(m_next), static_cast<off_t>(m_left * m_itemSize),
                        POSIX_FADV_SEQUENTIAL);
    }

    std::optional<Diagnostic> check() const
    {
        const tensor::PtTensorRef& ref = m_piece.ref();
        if (!ref.dtype)
            return readError(m_piece.file->path(), "element type " + ref.dtypeName + " is not supported");
        if (!ref.contiguous)
            return readError(m_piece.file->path(), "a parameter is a strided view of its storage, which the streaming "
                                                   "compare does not read");
        return std::nullopt;
    }

    /// The next `n` elements into `out`.
    std::optional<Diagnostic> read(float* out, std::size_t n, std::uint64_t& bytesRead)
    {
        while (n > 0) {
            if (m_pos == m_have) {
                if (m_left == 0)
                    return readError(m_piece.file->path(), "the tensor ends early");
                const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(m_left, m_raw.size() / m_itemSize));
                if (auto problem = fill(count * m_itemSize))
                    return problem;
                bytesRead += count * m_itemSize;
                m_left -= count;
                m_have = count;
                m_pos = 0;
            }
            const std::size_t take = std::min(n, m_have - m_pos);
            convert(m_raw.data() + m_pos * m_itemSize, out, take);
            m_pos += take;
            out += take;
            n -= take;
        }
        return std::nullopt;
    }

private:
    std::optional<Diagnostic> fill(std::size_t bytes)
    {
        char* to = reinterpret_cast<char*>(m_raw.data());
        std::size_t done = 0;
        while (done < bytes) {
            const ssize_t got = ::pread(m_piece.file->fd(), to + done, bytes - done, static_cast<off_t>(m_next + done));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                return readError(m_piece.file->path(),
                                 got == 0 ? "the file ends inside a tensor (it shrank while being read)"
                                          : std::string("read failed: ") + std::strerror(errno),
                                 m_next + done);
            done += static_cast<std::size_t>(got);
        }
        m_next += bytes;
        return std::nullopt;
    }

    template <typename T>
    static T load(const std::byte* p)
    {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }

    /// Tensor.float() of one element type: static_cast, as torch converts.
    template <typename T>
    static void widen(const std::byte* in, float* out, std::size_t n)
    {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = static_cast<float>(load<T>(in + sizeof(T) * i));
    }

    void convert(const std::byte* in, float* out, std::size_t n) const
    {
        switch (m_dtype) {
        case DType::Float32:
            std::memcpy(out, in, n * sizeof(float));
            return;
        case DType::BFloat16: // the upper half of a float32, as torch widens it (inline: this is the hot loop)
            for (std::size_t i = 0; i < n; ++i) {
                const std::uint32_t bits = static_cast<std::uint32_t>(load<std::uint16_t>(in + 2 * i)) << 16;
                std::memcpy(out + i, &bits, 4);
            }
            return;
        case DType::Float16:
            for (std::size_t i = 0; i < n; ++i)
                out[i] = tensor::halfToFloat(load<std::uint16_t>(in + 2 * i));
            return;
        case DType::Float64:
            return widen<double>(in, out, n);
        case DType::Int64:
            return widen<std::int64_t>(in, out, n);
        case DType::Int32:
            return widen<std::int32_t>(in, out, n);
        case DType::Int16:
            return widen<std::int16_t>(in, out, n);
        case DType::Int8:
            return widen<std::int8_t>(in, out, n);
        default: // UInt8, Bool
            return widen<std::uint8_t>(in, out, n);
        }
    }

    Piece m_piece;
    DType m_dtype;
    std::size_t m_itemSize;
    std::uint64_t m_next;
    std::uint64_t m_left;
    std::vector<std::byte> m_raw;
    std::size_t m_have = 0;
    std::size_t m_pos = 0;
};

/// The merged tensor (np.concatenate of the shards) in C order, without building it: along dim 0 the shards follow
/// each other; along dim 1 each row of the result is a row block of every shard in turn.
class MergedReader
{
public:
    MergedReader(const MergedParam& param, std::size_t bufferBytes)
        : m_param(param)
    {
        const std::size_t used = param.axis < 0 ? 1 : param.pieces.size();
        for (std::size_t i = 0; i < used; ++i)
            m_cursors.emplace_back(param.pieces[i], bufferBytes);
        if (param.axis == 1 && param.shape[0] > 0) {
            for (const Piece& p : param.pieces)
                m_blocks.push_back(static_cast<std::uint64_t>(p.ref().numel / param.shape[0]));
        } else {
            for (std::size_t i = 0; i < used; ++i)
                m_blocks.push_back(static_cast<std::uint64_t>(param.pieces[i].ref().numel));
        }
        m_leftInBlock = m_blocks.empty() ? 0 : m_blocks[0];
    }

    std::optional<Diagnostic> check() const
    {
        for (const PieceCursor& c : m_cursors) {
            if (auto problem = c.check())
                return problem;
        }
        return std::nullopt;
    }

    std::optional<Diagnostic> read(float* out, std::size_t n, std::uint64_t& bytesRead)
    {
        while (n > 0) {
            while (m_leftInBlock == 0) {
                m_current = (m_current + 1) % m_cursors.size();
                m_leftInBlock = m_blocks[m_current];
            }
            const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, m_leftInBlock));
            if (auto problem = m_cursors[m_current].read(out, take, bytesRead))
                return problem;
            m_leftInBlock -= take;
            out += take;
            n -= take;
        }
        return std::nullopt;
    }

private:
    const MergedParam& m_param;
    std::vector<PieceCursor> m_cursors;
    std::vector<std::uint64_t> m_blocks;
    std::size_t m_current = 0;
    std::uint64_t m_leftInBlock = 0;
};

/// The four float32 dots, chunked as numpy chunks them.
struct Dots
{
    float dot = 0, aa = 0, bb = 0, dd = 0;
    double dotSum = 0, aaSum = 0, bbSum = 0, ddSum = 0;
    std::uint64_t inChunk = 0;

    void add(const float* a, const float* b, std::size_t n)
    {
        while (n > 0) {
            const std::size_t m = static_cast<std::size_t>(std::min<std::uint64_t>(n, kBlasChunk - inChunk));
            float d1 = dot, d2 = aa, d3 = bb, d4 = dd;
            for (std::size_t i = 0; i < m; ++i) {
                const float x = a[i];
                const float y = b[i];
                const float xy = x * y;
                const float xx = x * x;
                const float yy = y * y;
                const float diff = x - y;
                const float dsq = diff * diff;
                d1 += xy;
                d2 += xx;
                d3 += yy;
                d4 += dsq;
            }
            dot = d1, aa = d2, bb = d3, dd = d4;
            inChunk += m;
            if (inChunk == kBlasChunk)
                flush();
            a += m;
            b += m;
            n -= m;
        }
    }

    void flush()
    {
        dotSum += static_cast<double>(dot);
        aaSum += static_cast<double>(aa);
        bbSum += static_cast<double>(bb);
        ddSum += static_cast<double>(dd);
        dot = aa = bb = dd = 0;
        inChunk = 0;
    }
};

void appendIntList(std::string& out, const std::vector<std::int64_t>& values, const std::string& indent)
{
    if (values.empty()) {
        out += "[]";
        return;
    }
    out += "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += indent + "    " + std::to_string(values[i]);
    }
    out += "\n" + indent + "]";
}

} // namespace

bool piecesAllClose(const std::vector<Piece>& pieces)
{
    std::vector<float> a(kBlock);
    std::vector<float> b(kBlock);
    std::uint64_t bytes = 0;
    for (std::size_t k = 1; k < pieces.size(); ++k) {
        if (pieces[k].ref().shape != pieces[0].ref().shape)
            return false;
        MergedParam first;
        first.pieces = { pieces[0] };
        MergedParam other;
        other.pieces = { pieces[k] };
        MergedReader ra(first, 1u << 20);
        MergedReader rb(other, 1u << 20);
        if (ra.check() || rb.check())
            return false;
        for (std::uint64_t left = static_cast<std::uint64_t>(pieces[0].ref().numel); left > 0;) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kBlock));
            if (ra.read(a.data(), n, bytes) || rb.read(b.data(), n, bytes))
                return false;
            for (std::size_t i = 0; i < n; ++i) {
                const float x = a[i];
                const float y = b[i];
                if (std::isfinite(x) && std::isfinite(y)) {
                    if (!(std::fabs(x - y) <= 1e-8f + 1e-5f * std::fabs(y)))
                        return false;
                } else if (!(x == y)) { // inf only equals the same inf; NaN never
                    return false;
                }
            }
            left -= n;
        }
    }
    return true;
}

Result<ParamMetrics> compareParam(const std::string& name, const MergedParam& a, const MergedParam& b,
                                  const CompareOptions& options, const LogSink& log, std::uint64_t* bytesRead)
{
    ParamMetrics m;
    m.name = name;
    m.shape1 = a.shape;
    m.shape2 = b.shape;
    m.numel1 = a.numel;
    m.numel2 = b.numel;
    m.sameShape = a.shape == b.shape;
    if (!m.sameShape) {
        const std::string warning = "a, b are in different shape. a: " + pyTupleText(a.shape) + ", b: " + pyTupleText(b.shape);
        log(Severity::Warning, warning); // l2_distance
        log(Severity::Warning, warning); // cos_sim
        if (a.numel != b.numel)
            log(Severity::Warning, "parameters have different number of element");
        log(Severity::Warning, warning); // shape
        return m;
    }
    MergedReader ra(a, options.chunkBytes);
    MergedReader rb(b, options.chunkBytes);
    if (auto problem = ra.check())
        return *problem;
    if (auto problem = rb.check())
        return *problem;
    std::vector<float> x(kBlock);
    std::vector<float> y(kBlock);
    Dots dots;
    std::uint64_t bytes = 0;
    for (std::uint64_t left = static_cast<std::uint64_t>(a.numel); left > 0;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kBlock));
        if (auto problem = ra.read(x.data(), n, bytes))
            return *problem;
        if (auto problem = rb.read(y.data(), n, bytes))
            return *problem;
        dots.add(x.data(), y.data(), n);
        left -= n;
    }
    dots.flush();
    if (bytesRead)
        *bytesRead += bytes;
    m.l2 = static_cast<double>(std::sqrt(static_cast<float>(dots.ddSum)));
    const float num = static_cast<float>(dots.dotSum);
    const float normA = std::sqrt(static_cast<float>(dots.aaSum));
    const float normB = std::sqrt(static_cast<float>(dots.bbSum));
    if (normA == 0 && normB == 0) {
        m.cos = 1.0;
    } else if (normA == 0 || normB == 0) {
        log(Severity::Warning, "One tensor norm is zero.");
    } else {
        const float denominator = normA * normB;
        const float sim = num / denominator;
        m.cos = static_cast<double>(sim);
    }
    return m;
}

Result<CheckpointComparison> compareCheckpoints(const std::filesystem::path& first, const std::filesystem::path& second,
                                                const CompareOptions& options, const LogSink& log,
                                                ProgressSink* progress)
{
    auto a = loadMegatronCheckpoint(first, log, options.limits);
    if (!a)
        return a.error();
    auto b = loadMegatronCheckpoint(second, log, options.limits);
    if (!b)
        return b.error();
    CheckpointComparison out;
    std::vector<std::string> common;
    for (const auto& [name, param] : a->params) {
        if (b->params.contains(name))
            common.push_back(name);
        else
            out.onlyInFirst.push_back(name);
    }
    for (const auto& [name, param] : b->params) {
        if (!a->params.contains(name))
            out.onlyInSecond.push_back(name);
    }
    log(Severity::Warning, "Parameters not in ckpt2: " + pySetRepr(out.onlyInFirst));
    log(Severity::Warning, "Parameters not in ckpt1: " + pySetRepr(out.onlyInSecond));
    struct Slot
    {
        std::optional<Result<ParamMetrics>> metrics;
        std::vector<std::pair<Severity, std::string>> lines; ///< logged in parameter order once all are done
        std::uint64_t bytes = 0;
    };
    std::vector<Slot> slots(common.size());
    const bool finished = parallelFor(
        common.size(), resolveThreadCount(options.threads),
        [&](std::size_t i) {
            Slot& slot = slots[i];
            const LogSink local = [&slot](Severity s, const std::string& m) { slot.lines.emplace_back(s, m); };
            slot.metrics = compareParam(common[i], a->params.at(common[i]), b->params.at(common[i]), options, local,
                                        &slot.bytes);
        },
        progress);
    if (!finished)
        return makeError("ckpt.cancelled", fileLocation(first), "cancelled");
    for (Slot& slot : slots) {
        for (const auto& [severity, line] : slot.lines)
            log(severity, line);
        if (!*slot.metrics)
            return slot.metrics->error();
        out.params.push_back(std::move(slot.metrics->value()));
        out.bytesRead += slot.bytes;
    }
    return out;
}

std::string toJson(const CheckpointComparison& comparison)
{
    if (comparison.params.empty())
        return "{}";
    std::string out = "{";
    bool firstParam = true;
    for (const ParamMetrics& m : comparison.params) {
        out += firstParam ? "\n    " : ",\n    ";
        firstParam = false;
        appendPyJsonString(out, m.name);
        out += ": {\n        \"l2\": ";
        if (m.l2)
            appendPyJsonFloat(out, *m.l2);
        else
            out += "null";
        out += ",\n        \"cos\": ";
        if (m.cos)
            appendPyJsonFloat(out, *m.cos);
        else
            out += "null";
        out += ",\n        \"numel\": ";
        if (m.numel1 == m.numel2)
            out += std::to_string(m.numel1);
        else
            appendIntList(out, { m.numel1, m.numel2 }, "        ");
        out += ",\n        \"shape\": ";
        if (m.sameShape) {
            appendIntList(out, m.shape1, "        ");
        } else {
            out += "[\n            ";
            appendIntList(out, m.shape1, "            ");
            out += ",\n            ";
            appendIntList(out, m.shape2, "            ");
            out += "\n        ]";
        }
        out += "\n    }";
    }
    out += "\n}";
    return out;
}

std::string pySetRepr(const std::vector<std::string>& names)
{
    if (names.empty())
        return "set()";
    std::string out = "{";
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i ? ", " : "") + compare::pyStrRepr(names[i]); // one Python str repr (core/compare)
    return out + "}";
}

} // namespace probescope::ckpt
