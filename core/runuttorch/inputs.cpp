// SPDX-License-Identifier: Apache-2.0
// Input reconstruction (run-ut-spec §4.1, §4.2): dump.json descriptors -> Python-like values holding
// LibTorch tensors, real (data_name) or random (gen_random_tensor from Max/Min/dtype/shape), and the
// conversions between LibTorch tensors and the seam's tensor::Tensor.
#include "core/runuttorch/replaydetail.h"

#include "core/dump/leaf.h"
#include "core/tensor/resolver.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace probescope::runuttorch::detail {

using dump::JsonType;
using dump::JsonValue;

const PyValue* findKwarg(const PyKwargs& kwargs, std::string_view key)
{
    for (const auto& [name, value] : kwargs) {
        if (name == key)
            return &value;
    }
    return nullptr;
}

std::uint64_t callSeed(std::uint64_t runSeed, std::string_view fullName)
{
    // FNV-1a of the name, mixed with the run's seed by SplitMix64's finaliser: stable across
    // platforms and library versions, unlike std::hash.
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : fullName) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    std::uint64_t z = h ^ (runSeed + 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

namespace {

std::optional<at::ScalarType> toScalarType(tensor::DType d)
{
    switch (d) {
    case tensor::DType::Bool: return at::kBool;
    case tensor::DType::UInt8: return at::kByte;
    case tensor::DType::Int8: return at::kChar;
    case tensor::DType::Int16: return at::kShort;
    case tensor::DType::Int32: return at::kInt;
    case tensor::DType::Int64: return at::kLong;
    case tensor::DType::Float16: return at::kHalf;
    case tensor::DType::BFloat16: return at::kBFloat16;
    case tensor::DType::Float32: return at::kFloat;
    case tensor::DType::Float64: return at::kDouble;
    }
    return std::nullopt;
}

std::optional<tensor::DType> fromScalarType(at::ScalarType t)
{
    switch (t) {
    case at::kBool: return tensor::DType::Bool;
    case at::kByte: return tensor::DType::UInt8;
    case at::kChar: return tensor::DType::Int8;
    case at::kShort: return tensor::DType::Int16;
    case at::kInt: return tensor::DType::Int32;
    case at::kLong: return tensor::DType::Int64;
    case at::kHalf: return tensor::DType::Float16;
    case at::kBFloat16: return tensor::DType::BFloat16;
    case at::kFloat: return tensor::DType::Float32;
    case at::kDouble: return tensor::DType::Float64;
    default: return std::nullopt;
    }
}

bool isFloatType(at::ScalarType t)
{
    return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
}

/// finfo(dtype).max, the stand-in for +inf bounds.
double finfoMax(at::ScalarType t)
{
    switch (t) {
    case at::kHalf: return 65504.0;
    case at::kBFloat16: return 3.3895313892515355e38;
    case at::kFloat: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
    }
}

/// Python's truth value of a float: NaN is truthy.
bool truthy(double v)
{
    return v != 0.0 || std::isnan(v);
}

/// int(x) of Python, with its errors for NaN and infinities.
std::int64_t pythonInt(double v)
{
    if (std::isnan(v))
        throw ReplayError("cannot convert float NaN to integer");
    if (std::isinf(v))
        throw ReplayError("cannot convert float infinity to integer");
    const double t = std::trunc(v);
    if (t < -9.2233720368547758e18 || t >= 9.2233720368547758e18)
        throw ReplayError("integer bound " + std::to_string(v) + " does not fit int64");
    return static_cast<std::int64_t>(t);
}

/// A statistic of a tensor descriptor: absent or null -> nullopt; numbers and bools as double.
std::optional<double> statOf(JsonValue desc, std::string_view key, const std::string& where)
{
    const auto v = desc.find(key);
    if (!v || v->isNull())
        return std::nullopt;
    switch (v->type()) {
    case JsonType::Bool: return v->asBool() ? 1.0 : 0.0;
    case JsonType::Int:
    case JsonType::Double: return v->asDouble();
    default:
        throw ReplayError(where + ": " + std::string(key) + " must be a number to generate random data, got "
                          + (v->isString() ? "\"" + std::string(v->asString()) + "\"" : std::string("a container")));
    }
}

std::vector<std::int64_t> readShape(JsonValue desc, const std::string& where)
{
    const auto s = desc.find("shape");
    if (!s)
        throw ReplayError(where + ": the tensor descriptor has no \"shape\"");
    if (!s->isArray())
        throw ReplayError(where + ": \"shape\" must be a list of integers");
    std::vector<std::int64_t> shape;
    std::int64_t numel = 1;
    bool zero = false;
    bool tooLarge = false;
    std::string text = "[";
    for (std::uint32_t i = 0; i < s->size(); ++i) {
        const JsonValue d = s->at(i);
        if (!d.isInt() || d.asInt() < 0)
            throw ReplayError(where + ": \"shape\" element " + std::to_string(i) + " is not a non-negative integer");
        shape.push_back(d.asInt());
        if (i)
            text += ", ";
        text += std::to_string(d.asInt());
        if (d.asInt() == 0)
            zero = true;
        else if (!tooLarge && (__builtin_mul_overflow(numel, d.asInt(), &numel) || numel > kMaxElements))
            tooLarge = true;
    }
    if (tooLarge && !zero)
        throw ReplayError(where + ": shape " + text + "] has more than 2^31 elements; refusing to build it");
    return shape;
}

std::string dtypeField(JsonValue desc, const std::string& where)
{
    const auto d = desc.find("dtype");
    if (!d || !d->isString())
        throw ReplayError(where + ": the tensor descriptor has no \"dtype\" string");
    return std::string(d->asString());
}

/// CONVERT_API (§4.1): the dtype a generated tensor of `from` gets for this API.
at::ScalarType convertedType(const std::string& apiName, at::ScalarType t)
{
    if (apiName == "cross_entropy" && t == at::kInt)
        return at::kLong;
    if (apiName == "histc" && t == at::kLong)
        return at::kFloat;
    return t;
}

bool isHf32Api(const std::string& apiName)
{
    return apiName == "conv1d" || apiName == "conv2d";
}

void fixElement(at::Tensor& flat, std::int64_t index, double value)
{
    flat.select(0, index).fill_(value);
}

/// gen_random_tensor (§4.2).
at::Tensor randomTensor(JsonValue desc, at::ScalarType dtype, const std::vector<std::int64_t>& shape,
                        InputContext& ctx, const std::string& where, bool crossEntropyTarget)
{
    const auto options = at::TensorOptions().dtype(dtype);
    bool empty = false;
    for (const std::int64_t d : shape)
        empty = empty || d == 0;

    double low = 0, lowOrigin = 0, high = 0, highOrigin = 0;
    if (!empty) {
        const auto minV = statOf(desc, "Min", where);
        const auto maxV = statOf(desc, "Max", where);
        const auto minX = statOf(desc, "Min_except_inf_nan", where);
        const auto maxX = statOf(desc, "Max_except_inf_nan", where);
        if (!minV && !minX)
            throw ReplayError(where + ": the tensor descriptor has no numeric \"Min\" to generate random data from");
        if (!maxV && !maxX)
            throw ReplayError(where + ": the tensor descriptor has no numeric \"Max\" to generate random data from");
        low = minX ? *minX : *minV;
        high = maxX ? *maxX : *maxV;
        lowOrigin = minV ? *minV : low;
        highOrigin = maxV ? *maxV : high;
        if (crossEntropyTarget) {
            // §4.1: cross_entropy targets are class indices, so a negative Min becomes 0.
            if (low <= 0)
                low = 0;
            if (lowOrigin <= 0)
                lowOrigin = 0;
        }
    }

    at::Tensor t;
    if (dtype == at::kBool) {
        std::int64_t lo = pythonInt(low), hi = pythonInt(high);
        if (lo > hi)
            std::swap(lo, hi);
        low = static_cast<double>(lo);
        high = static_cast<double>(hi);
        t = at::randint(lo, hi + 1, shape, ctx.generator, at::TensorOptions().dtype(at::kLong)).gt(0);
    } else if (isFloatType(dtype)) {
        if (std::isnan(high))
            return at::full(shape, std::numeric_limits<double>::quiet_NaN(), options);
        if (truthy(highOrigin) && std::isinf(high)) {
            t = at::full(shape, high, options);
            if (t.dim() == 0)
                throw ReplayError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                  "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
            if (t.size(0) > 0)
                t.select(0, -1).fill_(low);
            return t;
        }
        const double fmax = finfoMax(dtype);
        const double lowS = std::isinf(low) ? (low > 0 ? fmax : -fmax) : low;
        const double highS = std::isinf(high) ? (high > 0 ? fmax : -fmax) : high;
        t = at::rand(shape, ctx.generator, options).mul(highS - lowS).add(lowS);
    } else if (dtype == at::kByte || dtype == at::kChar || dtype == at::kShort || dtype == at::kInt
               || dtype == at::kLong) {
        const std::int64_t lo = pythonInt(low);
        const std::int64_t hi = pythonInt(high);
        if (hi == std::numeric_limits<std::int64_t>::max())
            throw ReplayError(where + ": Max " + std::to_string(hi) + " is too large for random integers");
        t = at::randint(lo, hi + 1, shape, ctx.generator, options);
    } else {
        throw ReplayError(where + ": random data of dtype " + dtypeText(dtype) + " is not supported");
    }

    if (t.numel() == 0)
        return t;
    // Post-fix (§4.2 step 6): the extremes the statistics promise appear at the ends.
    at::Tensor flat = t.view({ -1 });
    const std::int64_t n = flat.numel();
    if (std::isnan(highOrigin)) {
        if (n <= 2) {
            fixElement(flat, 0, std::numeric_limits<double>::quiet_NaN());
            fixElement(flat, n - 1, high);
        } else {
            fixElement(flat, 0, low);
            fixElement(flat, 1, std::numeric_limits<double>::quiet_NaN());
            fixElement(flat, n - 1, high);
        }
    } else {
        fixElement(flat, 0, low);
        fixElement(flat, n - 1, high);
        if (std::isinf(highOrigin))
            fixElement(flat, n - 1, highOrigin);
        if (std::isinf(lowOrigin))
            fixElement(flat, 0, lowOrigin);
    }
    return t;
}

at::Tensor realTensor(JsonValue desc, InputContext& ctx, const std::string& where)
{
    if (!ctx.dump)
        throw ReplayError(where + ": real data needs the dump folder");
    std::string name;
    if (const auto p = desc.find("datapath"); p && p->isString() && !p->asString().empty()) {
        // Old dumps record an absolute path on the machine that dumped; only its file name is used,
        // resolved in this dump's tensor folder like data_name (never a path outside it).
        name = std::filesystem::path(std::string(p->asString())).filename().string();
    } else if (const auto d = desc.find("data_name"); d && d->isString()) {
        name = std::string(d->asString());
    }
    // Through the dump's one resolver (tensor/resolver.h): the name and the tensor folder stay inside the dump.
    auto loaded = tensor::makeTensorResolver(ctx.dump->path.parent_path(), ctx.dump->tensorDir)->load(name);
    if (!loaded)
        throw TensorInputError(where + ": " + loaded.error().format(), loaded.error());
    return toTorch(*loaded);
}

bool isTensorDescriptor(JsonValue v)
{
    if (!v.isObject())
        return false;
    const auto type = v.find("type");
    if (!type || !type->isString())
        return false;
    const std::string_view t = type->asString();
    return (t.substr(0, 6) == "torch." && t.find("Tensor") != std::string_view::npos)
        || t == "torch.nn.parameter.Parameter";
}

PyValue genTensor(JsonValue desc, InputContext& ctx, bool needGrad, const std::string& where)
{
    const std::string dtypeName = dtypeField(desc, where);
    const bool real = (desc.find("data_name") && desc.find("data_name")->isString())
        || (desc.find("datapath") && desc.find("datapath")->isString());
    at::Tensor t;
    if (real) {
        t = realTensor(desc, ctx, where);
        const at::ScalarType to = convertedType(ctx.apiName, t.scalar_type());
        if (to != t.scalar_type())
            t = t.to(to);
    } else {
        at::ScalarType dtype = scalarTypeOf(dtypeName, where);
        // §4.1: histc of integers is replayed on float32.
        if (ctx.apiName == "histc" && where == "input_args[0]"
            && (dtype == at::kChar || dtype == at::kInt || dtype == at::kLong))
            dtype = at::kFloat;
        dtype = convertedType(ctx.apiName, dtype);
        const auto shape = readShape(desc, where);
        const bool target = ctx.apiName == "cross_entropy" && where == "input_args[1]";
        t = randomTensor(desc, dtype, shape, ctx, where, target);
    }
    if (isHf32Api(ctx.apiName) && t.scalar_type() == at::kFloat)
        roundToHf32(t);
    const auto rg = desc.find("requires_grad");
    if (needGrad && rg && rg->isBool() && rg->asBool()) {
        t.requires_grad_(true);
        t = t.mul(1).type_as(t);
        t.retain_grad();
    }
    return PyValue::fromTensor(std::move(t));
}

/// A JSON value passed on as it is ("anything else -> value").
PyValue plainValue(JsonValue v, const std::string& where)
{
    switch (v.type()) {
    case JsonType::Null: return PyValue::none();
    case JsonType::Bool: return PyValue::fromBool(v.asBool());
    case JsonType::Int: return PyValue::fromInt(v.asInt());
    case JsonType::Double: return PyValue::fromFloat(v.asDouble());
    case JsonType::String: return PyValue::fromStr(std::string(v.asString()));
    case JsonType::Array: {
        PyValue list;
        list.kind = PyValue::Kind::List;
        for (std::uint32_t i = 0; i < v.size(); ++i)
            list.items.push_back(plainValue(v.at(i), where + "[" + std::to_string(i) + "]"));
        return list;
    }
    case JsonType::Object: break;
    }
    throw ReplayError(where + ": a nested object where a plain value was expected");
}

PyValue sizeValue(JsonValue desc, const std::string& where)
{
    PyValue list;
    list.kind = PyValue::Kind::List;
    list.isSize = true;
    const auto v = desc.find("value");
    if (!v || !v->isArray())
        throw ReplayError(where + ": torch.Size needs a list \"value\"");
    for (std::uint32_t i = 0; i < v->size(); ++i) {
        if (!v->at(i).isInt())
            throw ReplayError(where + ": torch.Size elements must be integers");
        list.items.push_back(PyValue::fromInt(v->at(i).asInt()));
    }
    return list;
}

PyValue dtypeValue(JsonValue desc, const std::string& where)
{
    const auto v = desc.find("value");
    if (!v || !v->isString())
        throw ReplayError(where + ": torch.dtype needs a string \"value\"");
    PyValue p;
    p.kind = PyValue::Kind::DType;
    p.dtype = scalarTypeOf(v->asString(), where);
    return p;
}

PyValue deviceValue(JsonValue desc)
{
    PyValue p;
    p.kind = PyValue::Kind::Device;
    if (const auto v = desc.find("value"); v && v->isString())
        p.text = std::string(v->asString());
    return p;
}

/// msprobe writes memory formats as {"type": "torch.memory_format", "format": "preserve_format"}.
std::optional<PyValue> memoryFormatValue(std::string_view type, JsonValue desc)
{
    const auto format = desc.find("format");
    if (type != "torch.memory_format" || !format || !format->isString())
        return std::nullopt;
    return PyValue::fromStr("torch." + std::string(format->asString()));
}

PyValue numpyValue(std::string_view type, JsonValue desc, const std::string& where)
{
    const std::string_view t = type.substr(6);
    const auto v = desc.find("value");
    auto need = [&](bool ok) {
        if (!ok || !v)
            throw ReplayError(where + ": " + std::string(type) + " needs a matching \"value\"");
    };
    if (t == "int8" || t == "int16" || t == "int32" || t == "int64" || t == "uint8" || t == "uint16"
        || t == "uint32" || t == "uint64") {
        need(v && v->isNumber());
        return PyValue::fromInt(v->isInt() ? v->asInt() : pythonInt(v->asDouble()));
    }
    if (t == "float16" || t == "float32" || t == "float64" || t == "float128") {
        need(v && (v->isNumber() || v->isBool()));
        return PyValue::fromFloat(v->isBool() ? (v->asBool() ? 1.0 : 0.0) : v->asDouble());
    }
    if (t == "bool_") {
        need(v && (v->isBool() || v->isNumber()));
        return PyValue::fromBool(v->isBool() ? v->asBool() : v->asDouble() != 0);
    }
    if (t == "string_" || t == "bytes_" || t == "unicode_") {
        need(v && v->isString());
        return PyValue::fromStr(std::string(v->asString()));
    }
    if (t == "complex64" || t == "complex128" || t == "complex256")
        throw ReplayError(where + ": complex numpy scalars (" + std::string(type) + ") are not supported");
    throw ReplayError(where + ": unsupported numpy type " + std::string(type));
}

} // namespace

at::ScalarType scalarTypeOf(std::string_view text, const std::string& where)
{
    if (const auto d = tensor::parseDType(text)) {
        if (const auto s = toScalarType(*d))
            return *s;
    }
    throw ReplayError(where + ": dtype " + std::string(text) + " is not supported by the replay");
}

std::string dtypeText(at::ScalarType type)
{
    if (const auto d = fromScalarType(type))
        return tensor::torchName(*d);
    return std::string("torch.") + c10::toString(type);
}

PyValue genValue(JsonValue v, InputContext& ctx, bool needGrad, const std::string& where)
{
    switch (v.type()) {
    case JsonType::Null: return PyValue::none();
    case JsonType::Array: {
        PyValue list;
        list.kind = PyValue::Kind::List;
        for (std::uint32_t i = 0; i < v.size(); ++i)
            list.items.push_back(genValue(v.at(i), ctx, needGrad, where + "[" + std::to_string(i) + "]"));
        return list;
    }
    case JsonType::Object: break;
    default:
        throw ReplayError(where + ": a bare JSON value where a descriptor was expected (NotImplementedError in msprobe)");
    }
    const auto typeField = v.find("type");
    if (!typeField || !typeField->isString())
        throw ReplayError(where + ": the descriptor has no \"type\"");
    const std::string_view type = typeField->asString();
    if (isTensorDescriptor(v))
        return genTensor(v, ctx, needGrad, where);
    if (type.substr(0, 6) == "numpy.")
        return numpyValue(type, v, where);
    if (type == "torch.Size")
        return sizeValue(v, where);
    if (type == "slice") {
        const auto value = v.find("value");
        if (!value || !value->isArray() || value->size() != 3)
            throw ReplayError(where + ": a slice needs \"value\": [start, stop, step]");
        PyValue s;
        s.kind = PyValue::Kind::Slice;
        for (std::uint32_t i = 0; i < 3; ++i) {
            const JsonValue part = value->at(i);
            if (!part.isNull() && !part.isInt())
                throw ReplayError(where + ": slice bounds must be integers or null");
            s.items.push_back(part.isNull() ? PyValue::none() : PyValue::fromInt(part.asInt()));
        }
        return s;
    }
    if (type == "ellipsis") {
        PyValue e;
        e.kind = PyValue::Kind::Ellipsis;
        return e;
    }
    // Deviation from gen_data, which passes the dtype/device text on: the dtype and device objects
    // themselves let Tensor.type(torch.float16)-like calls run (see docs/run-ut-replay.md).
    if (type == "torch.dtype")
        return dtypeValue(v, where);
    if (type == "torch.device")
        return deviceValue(v);
    if (const auto format = memoryFormatValue(type, v))
        return *format;
    const auto value = v.find("value");
    if (!value)
        throw ReplayError(where + ": unknown descriptor type \"" + std::string(type) + "\" without a \"value\"");
    return plainValue(*value, where);
}

PyArgs genArgs(JsonValue inputArgs, InputContext& ctx, bool needGrad)
{
    PyArgs args;
    if (!inputArgs.valid() || inputArgs.isNull())
        return args;
    if (!inputArgs.isArray())
        throw ReplayError("input_args must be a list");
    for (std::uint32_t i = 0; i < inputArgs.size(); ++i)
        args.push_back(genValue(inputArgs.at(i), ctx, needGrad, "input_args[" + std::to_string(i) + "]"));
    return args;
}

PyKwargs genKwargs(JsonValue inputKwargs, InputContext& ctx)
{
    PyKwargs kwargs;
    if (!inputKwargs.valid() || inputKwargs.isNull())
        return kwargs;
    if (!inputKwargs.isObject())
        throw ReplayError("input_kwargs must be an object");
    for (std::uint32_t i = 0; i < inputKwargs.size(); ++i) {
        const std::string key(inputKwargs.keyAt(i));
        const std::string where = "input_kwargs[" + key + "]";
        const JsonValue v = inputKwargs.at(i);
        PyValue value;
        if (v.isArray()) {
            value.kind = PyValue::Kind::List;
            for (std::uint32_t k = 0; k < v.size(); ++k) {
                const JsonValue e = v.at(k);
                const std::string w = where + "[" + std::to_string(k) + "]";
                if (isTensorDescriptor(e))
                    value.items.push_back(genValue(e, ctx, false, w));
                else if (e.isObject() && e.find("type") && e.find("type")->isString()
                         && e.find("type")->asString() == "torch.Size")
                    value.items.push_back(sizeValue(e, w));
                else if (e.isObject())
                    value.items.push_back(e.find("value") ? plainValue(*e.find("value"), w) : PyValue::none());
                else
                    value.items.push_back(plainValue(e, w));
            }
        } else if (v.isNull()) {
            value = PyValue::none();
        } else if (v.isObject()) {
            const auto typeField = v.find("type");
            const std::string_view type = typeField && typeField->isString() ? typeField->asString() : std::string_view();
            if (isTensorDescriptor(v) || type.substr(0, 6) == "numpy.")
                value = genValue(v, ctx, true, where);
            else if (type == "torch.dtype")
                value = dtypeValue(v, where);
            else if (type == "torch.device")
                value = deviceValue(v);
            else if (type == "torch.Size")
                value = sizeValue(v, where);
            else if (const auto format = memoryFormatValue(type, v))
                value = *format;
            else if (const auto raw = v.find("value"))
                value = plainValue(*raw, where);
            else if (type.empty())
                throw ReplayError(where + ": the descriptor has no \"type\"");
            else
                throw ReplayError(where + ": unknown descriptor type \"" + std::string(type) + "\" without a \"value\"");
        } else {
            value = plainValue(v, where);
        }
        kwargs.emplace_back(key, std::move(value));
    }
    return kwargs;
}

void roundToHf32(at::Tensor& t)
{
    if (t.scalar_type() != at::kFloat || t.numel() == 0)
        return;
    at::Tensor c = t.detach().contiguous().clone();
    auto* p = static_cast<std::int32_t*>(c.data_ptr());
    const std::int64_t n = c.numel();
    for (std::int64_t k = 0; k < n; ++k) {
        // Arithmetic shifts as in msprobe's numpy code (C++20 defines >> on negatives as arithmetic).
        const std::int32_t i = p[k];
        const std::int32_t rounded = ((i >> 11) + 1) >> 1;
        p[k] = static_cast<std::int32_t>(static_cast<std::uint32_t>(rounded) << 12);
    }
    const bool grad = t.requires_grad();
    t = c;
    if (grad)
        t.requires_grad_(true);
}

at::Tensor toTorch(const tensor::Tensor& t)
{
    const auto type = toScalarType(t.dtype);
    at::Tensor out = at::empty(t.shape, at::TensorOptions().dtype(*type));
    if (!t.data.empty())
        std::memcpy(out.data_ptr(), t.data.data(), std::min<std::size_t>(t.data.size(), out.nbytes()));
    return out;
}

runut::Value tensorValue(const at::Tensor& source)
{
    runut::Value v;
    if (!source.defined())
        return v;
    const at::Tensor t = source.detach().to(at::kCPU).contiguous();
    const auto dtype = fromScalarType(t.scalar_type());
    if (!dtype)
        throw ReplayError(std::string("an output of dtype ") + c10::toString(t.scalar_type())
                          + " cannot be compared (complex, quantized and float8 outputs are not supported)");
    v.kind = runut::Value::Kind::Tensor;
    v.tensor.dtype = *dtype;
    v.tensor.shape.assign(t.sizes().begin(), t.sizes().end());
    v.tensor.data.resize(t.nbytes());
    if (t.nbytes() > 0)
        std::memcpy(v.tensor.data.data(), t.data_ptr(), t.nbytes());
    return v;
}

runut::Value toValue(const c10::IValue& value)
{
    runut::Value v;
    if (value.isNone())
        return v;
    if (value.isTensor())
        return tensorValue(value.toTensor());
    if (value.isBool()) {
        v.kind = runut::Value::Kind::Bool;
        v.boolValue = value.toBool();
        return v;
    }
    if (value.isInt()) {
        v.kind = runut::Value::Kind::Int;
        v.intValue = value.toInt();
        return v;
    }
    if (value.isDouble()) {
        v.kind = runut::Value::Kind::Float;
        v.floatValue = value.toDouble();
        return v;
    }
    if (value.isString()) {
        v.kind = runut::Value::Kind::Str;
        v.text = value.toStringRef();
        return v;
    }
    if (value.isTensorList()) {
        v.kind = runut::Value::Kind::List;
        for (const at::Tensor& t : value.toTensorVector())
            v.items.push_back(tensorValue(t));
        return v;
    }
    if (value.isList()) {
        v.kind = runut::Value::Kind::List;
        for (const c10::IValue& e : value.toListRef())
            v.items.push_back(toValue(e));
        return v;
    }
    if (value.isTuple()) {
        v.kind = runut::Value::Kind::List;
        for (const c10::IValue& e : value.toTupleRef().elements())
            v.items.push_back(toValue(e));
        return v;
    }
    if (value.isIntList()) {
        v.kind = runut::Value::Kind::List;
        for (const std::int64_t i : value.toIntVector()) {
            runut::Value e;
            e.kind = runut::Value::Kind::Int;
            e.intValue = i;
            v.items.push_back(e);
        }
        return v;
    }
    throw ReplayError(std::string("an output of type ") + value.tagKind() + " cannot be compared");
}

} // namespace probescope::runuttorch::detail
