// SPDX-License-Identifier: Apache-2.0
// The tensor leaves of both front ends of the collector (leafstats.h): msprobe 1.2.2's statistics, md5, .pt
// files and the leaf's JSON. Built with NDEBUG like torchcollect.cpp (LibTorch's headers' layouts depend on it).
#include "leafstats.h"

#include "ptwriter.h"
#include "torchtypes.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

namespace probescope::collect::leaf {

namespace {

/// torch's storage class of a dtype, as torch.save names it in the pickle ("" = not saved).
const char* storageName(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return "FloatStorage";
    case at::kDouble: return "DoubleStorage";
    case at::kHalf: return "HalfStorage";
    case at::kBFloat16: return "BFloat16Storage";
    case at::kLong: return "LongStorage";
    case at::kInt: return "IntStorage";
    case at::kShort: return "ShortStorage";
    case at::kChar: return "CharStorage";
    case at::kByte: return "ByteStorage";
    case at::kBool: return "BoolStorage";
    case at::kComplexFloat: return "ComplexFloatStorage";
    case at::kComplexDouble: return "ComplexDoubleStorage";
    default: return "";
    }
}


template<typename T>
double toDouble(T v)
{
    if constexpr (std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>)
        return static_cast<double>(static_cast<float>(v));
    else
        return static_cast<double>(v);
}

/// Max and Min of floating data in one pass (exact, whatever the order), and whether an element is inf or NaN.
template<typename T>
void scanExtremes(const T* p, std::int64_t n, Stats& s)
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    double hi[4] = { -inf, -inf, -inf, -inf }, lo[4] = { inf, inf, inf, inf };
    bool bad[4] = { false, false, false, false };
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        for (int k = 0; k < 4; ++k) {
            const double v = toDouble(p[i + k]);
            hi[k] = v > hi[k] ? v : hi[k];
            lo[k] = v < lo[k] ? v : lo[k];
            bad[k] = bad[k] || !std::isfinite(v);
        }
    }
    for (; i < n; ++i) {
        const double v = toDouble(p[i]);
        hi[0] = v > hi[0] ? v : hi[0];
        lo[0] = v < lo[0] ? v : lo[0];
        bad[0] = bad[0] || !std::isfinite(v);
    }
    s.max = std::max(std::max(hi[0], hi[1]), std::max(hi[2], hi[3]));
    s.min = std::min(std::min(lo[0], lo[1]), std::min(lo[2], lo[3]));
    s.overflow = bad[0] || bad[1] || bad[2] || bad[3];
    if (s.overflow) {
        for (std::int64_t j = 0; j < n; ++j) {
            if (std::isnan(toDouble(p[j]))) {
                s.max = s.min = std::numeric_limits<double>::quiet_NaN(); // torch.max/min propagate NaN
                break;
            }
        }
    }
}

/// msprobe's handle_tensor_extremum_nan_inf: the extremum of the finite values, else of the non-NaN ones
/// (inf), NaN when every value is NaN. On the tensor as it was (a float64 tensor keeps its precision).
double extremumExceptInfNan(const at::Tensor& t, bool max)
{
    const at::Tensor notNan = t.isnan().logical_not();
    if (!notNan.any().item<bool>())
        return std::numeric_limits<double>::quiet_NaN();
    const at::Tensor finite = t.isfinite();
    const at::Tensor pool = finite.any().item<bool>() ? t.masked_select(finite) : t.masked_select(notNan);
    return (max ? pool.max() : pool.min()).item<double>();
}

std::string hex8(std::uint32_t v)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", v);
    return buf;
}

} // namespace

/**
 * @brief A tensor's statistics exactly as msprobe 1.2.2 computes them (get_stat_info_sync, _analyze_tensor).
 *
 * Bool tensors: Max = any, Min = all. 0-d tensors: item() for all four (so a negative scalar has a negative
 * "Norm", and an integer scalar stays an integer). Otherwise integer and float64 tensors are converted to
 * float32 and Max, Min, Mean and Norm are torch's own reductions in that dtype (float16 stays float16): Mean
 * is torch.mean's float32 sum, not a float64 one, which differs near zero. Max and Min are exact in any order,
 * so one scan gives them (and the overflow flag); Mean and Norm come from at::mean and at::norm, the kernels
 * torch.mean and torch.norm run. `c` is the contiguous CPU copy; `values`, when defined, the tensor as the
 * model had it (msprobe reduces that one: the summation order follows its layout).
 */
Stats stats(const at::Tensor& c, const at::Tensor& values)
{
    const std::int64_t n = c.numel();
    if (n == 0)
        return {}; // torch refuses max/min of an empty tensor; msprobe writes null
    at::DisableRecordFunctionGuard notUserOps; // our reductions are no user's calls
    const at::Tensor& v = values.defined() ? values : c;
    const void* p = c.data_ptr();
    Stats s;
    switch (c.scalar_type()) {
    case at::kBool: {
        s.kind = Stats::Kind::Boolean;
        const auto* b = static_cast<const bool*>(p);
        for (std::int64_t i = 0; i < n; ++i) {
            s.any = s.any || b[i];
            s.all = s.all && b[i];
        }
        return s;
    }
    case at::kLong:
    case at::kInt:
    case at::kShort:
    case at::kChar:
    case at::kByte:
        if (c.dim() == 0) {
            s.kind = Stats::Kind::Integer;
            s.integer = c.item<std::int64_t>();
            return s;
        }
        break;
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16: break;
    default: return {}; // complex and the rest: no statistics
    }
    s.kind = Stats::Kind::Number;
    if (c.dim() == 0) {
        s.max = s.min = s.mean = s.norm = c.item<double>();
        s.overflow = !std::isfinite(s.max);
    } else {
        const bool widen = !c.is_floating_point() || c.scalar_type() == at::kDouble;
        const at::Tensor f = widen ? v.to(at::kFloat) : v;
        const at::Tensor fc = widen ? c.to(at::kFloat) : c;
        switch (fc.scalar_type()) {
        case at::kFloat: scanExtremes(static_cast<const float*>(fc.data_ptr()), n, s); break;
        case at::kHalf: scanExtremes(static_cast<const c10::Half*>(fc.data_ptr()), n, s); break;
        case at::kBFloat16: scanExtremes(static_cast<const c10::BFloat16*>(fc.data_ptr()), n, s); break;
        default: break;
        }
        s.mean = at::mean(f).item<double>();
        s.norm = at::norm(f).item<double>();
    }
    if (s.overflow) {
        // msprobe tests Max and Min (not the elements), and looks at the tensor before any conversion.
        if (!std::isfinite(s.max))
            s.maxExceptInfNan = extremumExceptInfNan(v, true);
        if (!std::isfinite(s.min))
            s.minExceptInfNan = extremumExceptInfNan(v, false);
    }
    return s;
}

/// CRC-32 of the tensor's bytes, bfloat16 widened to float32 first (numpy has none).
std::string md5(const at::Tensor& c)
{
    if (c.scalar_type() == at::kBFloat16) {
        const at::Tensor f = c.to(at::kFloat).contiguous();
        return hex8(crc32Of(f.data_ptr(), f.nbytes()));
    }
    return hex8(crc32Of(c.data_ptr(), c.nbytes()));
}

std::optional<Diagnostic> savePt(const at::Tensor& c, const std::filesystem::path& path)
{
    PtTensorBytes bytes;
    bytes.storageType = storageName(c.scalar_type());
    bytes.shape.assign(c.sizes().begin(), c.sizes().end());
    bytes.data = c.data_ptr();
    bytes.bytes = c.nbytes();
    bytes.elementSize = c.element_size();
    return writePt(path, bytes);
}

at::Tensor readable(const at::Tensor& t)
{
    if (!t.defined() || t.is_sparse() || t.is_meta() || t.is_quantized() || t.is_mkldnn())
        return {};
    at::Tensor c = t.is_cpu() ? t : t.cpu();
    return c.is_contiguous() ? c : c.contiguous();
}

bool savable(const at::Tensor& readableTensor) { return *storageName(readableTensor.scalar_type()) != '\0'; }

void appendStatistic(std::string& out, const Stats& s, int i)
{
    const double values[] = { s.max, s.min, s.mean, s.norm };
    switch (s.kind) {
    case Stats::Kind::Number: dump::appendPyFloat(out, values[i]); break;
    case Stats::Kind::Integer: out += std::to_string(s.integer); break;
    case Stats::Kind::Boolean: out += i >= 2 ? "null" : (i == 0 ? s.any : s.all) ? "true" : "false"; break;
    case Stats::Kind::None: out += "null"; break;
    }
}

void beginTensorLeaf(dump::PyJsonWriter& json, const at::Tensor& t)
{
    json.beginObject();
    json.key("type");
    json.string("torch.Tensor");
    json.key("dtype");
    json.string(torchDtypeName(t.scalar_type()));
    json.key("shape");
    json.beginArray();
    for (const std::int64_t d : t.sizes())
        json.integer(d);
    json.endArray();
}

void writeTensorLeaf(dump::PyJsonWriter& json, const at::Tensor& t, const Stats& s, const std::string* dataName,
                     const std::string* md5Text)
{
    beginTensorLeaf(json, t);
    static constexpr const char* kStats[] = { "Max", "Min", "Mean", "Norm" };
    const double values[] = { s.max, s.min, s.mean, s.norm };
    for (int i = 0; i < 4; ++i) {
        json.key(kStats[i]);
        switch (s.kind) {
        case Stats::Kind::Number: json.number(values[i]); break;
        case Stats::Kind::Integer: json.integer(s.integer); break;
        case Stats::Kind::Boolean:
            if (i < 2)
                json.boolean(i == 0 ? s.any : s.all);
            else
                json.null();
            break;
        case Stats::Kind::None: json.null(); break;
        }
    }
    json.key("requires_grad");
    json.boolean(t.requires_grad());
    if (s.maxExceptInfNan) {
        json.key("Max_except_inf_nan");
        json.number(*s.maxExceptInfNan);
    }
    if (s.minExceptInfNan) {
        json.key("Min_except_inf_nan");
        json.number(*s.minExceptInfNan);
    }
    if (dataName) {
        json.key("data_name");
        json.string(*dataName);
    }
    if (md5Text) {
        json.key("md5");
        json.string(*md5Text);
    }
    json.endObject();
}

} // namespace probescope::collect::leaf
