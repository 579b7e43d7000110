// SPDX-License-Identifier: Apache-2.0
// run_ut's replay, the hand-written calls: Tensor dunders and Python-level methods with no aten operator of their
// own (indexing, casts, einsum, norm), torch 2.x functionals LibTorch 1.13 lacks, and msprobe's CPU benches of
// torch_npu operators.
#include "core/runuttorch/calls.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>

#include <cmath>
#include <limits>

namespace probescope::runuttorch::detail {

namespace {

const at::Tensor& selfTensor(const PyArgs& args, const char* api)
{
    if (args.empty() || args[0].kind != PyValue::Kind::Tensor)
        throw ReplayError(std::string(api) + ": the first argument must be a Tensor");
    return args[0].tensor;
}

/// Appends one Python index. TensorIndex objects are built in place and never moved: LibTorch 1.13's
/// implicit move copies its uninitialised bool member, which UBSan rightly reports.
void appendIndex(std::vector<at::indexing::TensorIndex>& out, const PyValue& v)
{
    using namespace at::indexing;
    switch (v.kind) {
    case PyValue::Kind::None: out.emplace_back(None); return;
    case PyValue::Kind::Ellipsis: out.emplace_back(Ellipsis); return;
    case PyValue::Kind::Int: out.emplace_back(v.intValue); return;
    case PyValue::Kind::Bool: out.emplace_back(v.boolValue); return;
    case PyValue::Kind::Tensor: out.emplace_back(v.tensor); return;
    case PyValue::Kind::Slice: {
        auto part = [&](std::size_t k) -> c10::optional<std::int64_t> {
            if (v.items[k].kind == PyValue::Kind::Int)
                return v.items[k].intValue;
            return c10::nullopt;
        };
        out.emplace_back(Slice(part(0), part(1), part(2)));
        return;
    }
    case PyValue::Kind::List: {
        // A list inside an index tuple is advanced indexing by those integers.
        const auto ints = intList(v);
        if (!ints)
            throw ReplayError("__getitem__: a nested index list must hold integers");
        out.emplace_back(at::tensor(*ints, at::kLong));
        return;
    }
    default: throw ReplayError(std::string("__getitem__: an index of type ") + kindName(v) + " is not supported");
    }
}

void toIndices(const PyValue& v, std::vector<at::indexing::TensorIndex>& out)
{
    if (v.kind == PyValue::Kind::List) {
        // dump.json writes tuple indices (x[0, :, None]) as lists; they index one dimension each.
        out.reserve(v.items.size());
        for (const PyValue& e : v.items)
            appendIndex(out, e);
    } else {
        out.reserve(1);
        appendIndex(out, v);
    }
}

c10::IValue getItem(const PyArgs& args, const PyKwargs&)
{
    const at::Tensor& self = selfTensor(args, "__getitem__");
    if (args.size() != 2)
        throw ReplayError("__getitem__ takes exactly one index");
    std::vector<at::indexing::TensorIndex> indices;
    toIndices(args[1], indices);
    return self.index(indices);
}

c10::IValue setItem(const PyArgs& args, const PyKwargs&)
{
    at::Tensor self = selfTensor(args, "__setitem__");
    if (args.size() != 3)
        throw ReplayError("__setitem__ takes an index and a value");
    std::vector<at::indexing::TensorIndex> indices;
    toIndices(args[1], indices);
    if (args[2].kind == PyValue::Kind::Tensor)
        self.index_put_(indices, args[2].tensor);
    else if (args[2].isNumber())
        self.index_put_(indices, args[2].kind == PyValue::Kind::Float ? at::Scalar(args[2].floatValue)
                                     : args[2].kind == PyValue::Kind::Bool ? at::Scalar(args[2].boolValue)
                                                                            : at::Scalar(args[2].intValue));
    else
        throw ReplayError("__setitem__: the value must be a Tensor or a number");
    // Python returns None; the updated tensor is what can be compared.
    return self;
}

c10::IValue reverseTrueDiv(const PyArgs& args, const PyKwargs&)
{
    // Tensor.__rtruediv__ is `self.reciprocal() * other` in torch/_tensor.py.
    const at::Tensor& self = selfTensor(args, "__rtruediv__");
    if (args.size() != 2)
        throw ReplayError("__rtruediv__ takes one operand");
    if (args[1].kind == PyValue::Kind::Tensor)
        return self.reciprocal() * args[1].tensor;
    if (!args[1].isNumber())
        throw ReplayError("__rtruediv__: the operand must be a Tensor or a number");
    return self.reciprocal() * at::Scalar(args[1].number());
}

c10::IValue einsum(const PyArgs& args, const PyKwargs&)
{
    // torch.einsum(equation, *operands) or einsum(equation, [operands]).
    if (args.empty() || args[0].kind != PyValue::Kind::Str)
        throw ReplayError("einsum: the first argument must be the equation");
    std::vector<at::Tensor> operands;
    const bool listForm = args.size() == 2 && args[1].kind == PyValue::Kind::List;
    for (const PyValue& v : listForm ? args[1].items : PyArgs(args.begin() + 1, args.end())) {
        if (v.kind != PyValue::Kind::Tensor)
            throw ReplayError("einsum: operands must be Tensors");
        operands.push_back(v.tensor);
    }
    return at::einsum(args[0].text, operands);
}

template<at::ScalarType Type>
c10::IValue castTo(const PyArgs& args, const PyKwargs&)
{
    return selfTensor(args, "cast").to(Type);
}

c10::IValue tensorType(const PyArgs& args, const PyKwargs& kwargs)
{
    const at::Tensor& self = selfTensor(args, "type");
    const PyValue* dtype = args.size() > 1 ? &args[1] : findKwarg(kwargs, "dtype");
    if (!dtype || dtype->kind != PyValue::Kind::DType)
        throw ReplayError("Tensor.type is replayed only with a torch.dtype argument");
    return self.to(dtype->dtype);
}

c10::IValue normCall(const PyArgs& args, const PyKwargs& kwargs)
{
    // torch.norm / Tensor.norm (torch/functional.py) hand p='fro' and numeric p to linalg.vector_norm.
    static const std::vector<Param> params = parseSignature("input, p='fro', dim=None, keepdim=False, ~out=None, dtype=None");
    Bound b = bindPython("norm", params, args, kwargs);
    PyValue* p = b.get("p");
    if (p->kind == PyValue::Kind::Str) {
        if (p->text != "fro")
            throw ReplayError("norm with p='" + p->text + "' is not supported by the replay");
        *p = PyValue::fromInt(2);
    } else if (p->kind == PyValue::Kind::None) {
        *p = PyValue::fromInt(2);
    }
    const PyValue* out = b.get("out");
    if (out && out->kind != PyValue::Kind::None)
        throw ReplayError("norm with out= is not supported by the replay");
    b.erase("out");
    b.rename("p", "ord");
    PyValue* dim = b.get("dim");
    if (dim->kind == PyValue::Kind::Int) {
        PyValue list;
        list.kind = PyValue::Kind::List;
        list.items.push_back(*dim);
        *dim = list;
    }
    return callCandidates(opsOrThrow("linalg_vector_norm"), {}, b.named, {});
}

/// Python binding for hand-written calls; `aliases` maps other keyword spellings (torch_npu's `self`).
Bound bindCustom(const char* name, const char* signature, const PyArgs& args, const PyKwargs& kwargs,
                 std::initializer_list<std::pair<const char*, const char*>> aliases = {})
{
    PyKwargs renamed = kwargs;
    for (auto& [key, value] : renamed) {
        for (const auto& [from, to] : aliases) {
            if (key == from)
                key = to;
        }
    }
    return bindPython(name, parseSignature(signature), args, renamed);
}

double numberArg(Bound& b, std::string_view name)
{
    const PyValue* v = b.get(name);
    if (!v || !v->isNumber())
        throw ReplayError("argument '" + std::string(name) + "' must be a number");
    return v->number();
}

std::int64_t implicitSoftmaxDim(const at::Tensor& t)
{
    const std::int64_t nd = t.dim();
    return nd == 0 || nd == 1 || nd == 3 ? 0 : 1;
}

c10::IValue softmin(const PyArgs& args, const PyKwargs& kwargs)
{
    // F.softmin is softmax(-input) with F.softmax's implicit dim.
    Bound b = bindCustom("softmin", "input, dim=None, _stacklevel=3, dtype=None", args, kwargs);
    const at::Tensor& input = b.tensor("input");
    const PyValue* dim = b.get("dim");
    const std::int64_t d = dim->kind == PyValue::Kind::Int ? dim->intValue : implicitSoftmaxDim(input);
    const PyValue* dtype = b.get("dtype");
    if (dtype->kind == PyValue::Kind::DType)
        return at::softmax(input.neg(), d, dtype->dtype);
    return at::softmax(input.neg(), d);
}

c10::IValue normalize(const PyArgs& args, const PyKwargs& kwargs)
{
    // F.normalize: input / max(||input||_p over dim, eps), the norm being Tensor.norm (linalg.vector_norm).
    Bound b = bindCustom("normalize", "input, p=2.0, dim=1, eps=1e-12, out=None", args, kwargs);
    if (b.get("out")->kind != PyValue::Kind::None)
        throw ReplayError("normalize with out= is not supported by the replay");
    const at::Tensor& input = b.tensor("input");
    const PyValue* dim = b.get("dim");
    std::vector<std::int64_t> dims;
    if (dim->kind == PyValue::Kind::Int)
        dims.push_back(dim->intValue);
    else if (const auto list = intList(*dim))
        dims = *list;
    else
        throw ReplayError("normalize: dim must be an int or a list of ints");
    const at::Tensor denom = at::linalg_vector_norm(input, numberArg(b, "p"), dims, true)
                                 .clamp_min(numberArg(b, "eps"))
                                 .expand_as(input);
    return input / denom;
}

c10::IValue scaledDotProductAttention(const PyArgs& args, const PyKwargs& kwargs)
{
    // torch 2.x's F.scaled_dot_product_attention (absent from LibTorch 1.13), by its math definition:
    // softmax(q k^T * scale + mask) v, with the causal mask and dropout on the weights.
    Bound b = bindCustom("scaled_dot_product_attention",
                         "query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None", args, kwargs);
    const at::Tensor& q = b.tensor("query");
    const at::Tensor& k = b.tensor("key");
    const at::Tensor& v = b.tensor("value");
    const PyValue* scale = b.get("scale");
    const double factor = scale->isNumber() ? scale->number() : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    at::Tensor weights = at::matmul(q, k.transpose(-2, -1)) * factor;
    if (b.isTrue("is_causal")) {
        const at::Tensor keep = at::ones({ q.size(-2), k.size(-2) }, q.options().dtype(at::kBool)).tril();
        weights = weights.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
    }
    if (const PyValue* mask = b.get("attn_mask"); mask->kind == PyValue::Kind::Tensor) {
        if (mask->tensor.scalar_type() == at::kBool)
            weights = weights.masked_fill(mask->tensor.logical_not(), -std::numeric_limits<double>::infinity());
        else
            weights = weights + mask->tensor;
    }
    weights = at::softmax(weights, -1);
    if (const double p = numberArg(b, "dropout_p"); p > 0)
        weights = at::dropout(weights, p, true);
    return at::matmul(weights, v);
}

c10::IValue npuRmsNorm(const PyArgs& args, const PyKwargs& kwargs)
{
    // msprobe's CPU bench of torch_npu.npu_rms_norm: (x * rsqrt(mean(x^2, -1) + eps) * gamma, rstd fp32).
    Bound b = bindCustom("npu_rms_norm", "x, gamma, epsilon=1e-05", args, kwargs, { { "self", "x" } });
    const at::Tensor& x = b.tensor("x");
    const at::Tensor rstd = at::rsqrt(at::mean(x.pow(2), { -1 }, true) + numberArg(b, "epsilon"));
    return c10::ivalue::Tuple::create({ x * rstd * b.tensor("gamma"), rstd.to(at::kFloat) });
}

c10::IValue npuSwiglu(const PyArgs& args, const PyKwargs& kwargs)
{
    // msprobe's CPU bench of torch_npu.npu_swiglu: silu(a) * b of the two halves along dim, computed in
    // fp32 for fp16/bf16 inputs (silu rounded to the input dtype first) and returned in the input dtype.
    Bound b = bindCustom("npu_swiglu", "x, dim=-1", args, kwargs, { { "self", "x" } });
    const at::Tensor& x = b.tensor("x");
    const PyValue* dim = b.get("dim");
    if (dim->kind != PyValue::Kind::Int)
        throw ReplayError("npu_swiglu: dim must be an int");
    const auto halves = at::chunk(x, 2, dim->intValue);
    if (halves.size() != 2)
        throw ReplayError("npu_swiglu: the input cannot be split in two along dim");
    if (x.scalar_type() == at::kFloat)
        return at::sigmoid(halves[0]) * halves[0] * halves[1];
    const at::Tensor act = at::silu(halves[0].to(at::kFloat)).to(x.scalar_type()).to(at::kFloat);
    return (act * halves[1].to(at::kFloat)).to(x.scalar_type());
}

c10::IValue npuRotaryMul(const PyArgs& args, const PyKwargs& kwargs)
{
    // msprobe's CPU bench of torch_npu.npu_rotary_mul: r1 * x + r2 * rotate(x), rotate_half by
    // default (cat(-x2, x1) of the halves), pairwise for rotary_mode='interleave' as torch_npu documents.
    Bound b = bindCustom("npu_rotary_mul", "x, r1, r2, rotary_mode='half'", args, kwargs,
                         { { "self", "x" }, { "input", "x" } });
    const at::Tensor& x = b.tensor("x");
    const PyValue* mode = b.get("rotary_mode");
    at::Tensor rotated;
    if (mode->kind == PyValue::Kind::Str && mode->text == "interleave") {
        using namespace at::indexing;
        const at::Tensor even = x.index({ Ellipsis, Slice(None, None, 2) });
        const at::Tensor odd = x.index({ Ellipsis, Slice(1, None, 2) });
        rotated = at::stack({ odd.neg(), even }, -1).reshape(x.sizes());
    } else {
        const auto halves = at::chunk(x, 2, -1);
        if (halves.size() != 2)
            throw ReplayError("npu_rotary_mul: the last dimension cannot be split in two");
        rotated = at::cat({ halves[1].neg(), halves[0] }, -1);
    }
    return b.tensor("r1") * x + b.tensor("r2") * rotated;
}

} // namespace

const std::vector<CustomDef>& customDefs()
{
    static const std::vector<CustomDef> defs = {
        { "Tensor", "__getitem__", getItem },
        { "Tensor", "__setitem__", setItem },
        { "Tensor", "__rtruediv__", reverseTrueDiv },
        { "Tensor", "__rdiv__", reverseTrueDiv },
        { "Torch", "einsum", einsum },
        { "Tensor", "float", castTo<at::kFloat> },
        { "Tensor", "double", castTo<at::kDouble> },
        { "Tensor", "half", castTo<at::kHalf> },
        { "Tensor", "bfloat16", castTo<at::kBFloat16> },
        { "Tensor", "int", castTo<at::kInt> },
        { "Tensor", "long", castTo<at::kLong> },
        { "Tensor", "short", castTo<at::kShort> },
        { "Tensor", "char", castTo<at::kChar> },
        { "Tensor", "byte", castTo<at::kByte> },
        { "Tensor", "bool", castTo<at::kBool> },
        { "Tensor", "type", tensorType },
        { "Torch", "norm", normCall },
        { "Tensor", "norm", normCall },
        { "Functional", "softmin", softmin },
        { "Functional", "normalize", normalize },
        { "Functional", "scaled_dot_product_attention", scaledDotProductAttention },
        { "NPU", "npu_rms_norm", npuRmsNorm },
        { "NPU", "npu_swiglu", npuSwiglu },
        { "NPU", "npu_rotary_mul", npuRotaryMul },
    };
    return defs;
}

} // namespace probescope::runuttorch::detail
