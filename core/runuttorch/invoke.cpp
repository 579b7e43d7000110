// SPDX-License-Identifier: Apache-2.0
// The API table of the replay: msprobe names -> aten operators called through c10::Dispatcher, with
// Python's argument binding (positional order, keywords by name, defaults from the schema, overload
// resolution by argument types). Functional.* names that are Python wrappers get a signature and a
// small adapter; a handful of Tensor dunders and Python-level methods are written by hand.
#include "core/runuttorch/replaydetail.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace probescope::runuttorch::detail {

namespace {

// ---- operator registry ----------------------------------------------------------------------------

/// Every overload of every dispatcher operator, by name; built once (getAllOpNames walks ~2500 names).
class OpRegistry
{
public:
    static const OpRegistry& instance()
    {
        static const OpRegistry registry;
        return registry;
    }

    /// Overloads of "aten::<name>", the default overload first, then by overload name (a stable order,
    /// so overload resolution never depends on the dispatcher's hash order).
    const std::vector<c10::OperatorHandle>* find(const std::string& qualified) const
    {
        const auto it = m_ops.find(qualified);
        return it == m_ops.end() ? nullptr : &it->second;
    }

private:
    OpRegistry()
    {
        auto& dispatcher = c10::Dispatcher::singleton();
        for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
            if (auto handle = dispatcher.findOp(name); handle && handle->hasSchema())
                m_ops[name.name].push_back(*handle);
        }
        for (auto& [name, handles] : m_ops) {
            std::sort(handles.begin(), handles.end(), [](const c10::OperatorHandle& a, const c10::OperatorHandle& b) {
                return a.operator_name().overload_name < b.operator_name().overload_name;
            });
        }
    }
    std::unordered_map<std::string, std::vector<c10::OperatorHandle>> m_ops;
};

// ---- conversion of one argument to the schema's type ------------------------------------------------

struct BindMode
{
    bool atenPositional = false;   ///< Aten.*: positional values fill keyword-only arguments too
    bool method = false;           ///< Tensor.*: args[0] is self (for the varargs rule)
    bool numbersAsTensors = false; ///< second pass: Python numbers for Tensor arguments (wrapped numbers)
};

const char* kindName(const PyValue& v)
{
    switch (v.kind) {
    case PyValue::Kind::None: return "None";
    case PyValue::Kind::Bool: return "bool";
    case PyValue::Kind::Int: return "int";
    case PyValue::Kind::Float: return "float";
    case PyValue::Kind::Str: return "str";
    case PyValue::Kind::Tensor: return "Tensor";
    case PyValue::Kind::List: return "list";
    case PyValue::Kind::Slice: return "slice";
    case PyValue::Kind::Ellipsis: return "ellipsis";
    case PyValue::Kind::DType: return "torch.dtype";
    case PyValue::Kind::Device: return "torch.device";
    }
    return "?";
}

std::optional<std::int64_t> memoryFormatOf(const std::string& s)
{
    if (s == "torch.contiguous_format")
        return static_cast<std::int64_t>(at::MemoryFormat::Contiguous);
    if (s == "torch.preserve_format")
        return static_cast<std::int64_t>(at::MemoryFormat::Preserve);
    if (s == "torch.channels_last")
        return static_cast<std::int64_t>(at::MemoryFormat::ChannelsLast);
    if (s == "torch.channels_last_3d")
        return static_cast<std::int64_t>(at::MemoryFormat::ChannelsLast3d);
    return std::nullopt;
}

at::Tensor wrappedNumber(const PyValue& v)
{
    at::Tensor t = v.kind == PyValue::Kind::Float ? at::scalar_tensor(v.floatValue, at::kDouble)
        : v.kind == PyValue::Kind::Bool           ? at::scalar_tensor(v.boolValue, at::kBool)
                                                  : at::scalar_tensor(v.intValue, at::kLong);
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
}

std::optional<std::vector<std::int64_t>> intList(const PyValue& v)
{
    if (v.kind != PyValue::Kind::List)
        return std::nullopt;
    std::vector<std::int64_t> out;
    for (const PyValue& e : v.items) {
        if (e.kind != PyValue::Kind::Int)
            return std::nullopt;
        out.push_back(e.intValue);
    }
    return out;
}

/// The value as an IValue of `arg`'s type, or nullopt (with `why`) when Python would not accept it.
std::optional<c10::IValue> convertArg(const c10::Argument& arg, const PyValue& v, const BindMode& mode, std::string& why)
{
    c10::TypePtr type = arg.real_type();
    if (type->kind() == c10::TypeKind::OptionalType) {
        if (v.kind == PyValue::Kind::None)
            return c10::IValue();
        type = type->castRaw<c10::OptionalType>()->getElementType();
    }
    auto refuse = [&](const char* expected) -> std::optional<c10::IValue> {
        why = "argument " + arg.name() + ": expected " + expected + ", got " + kindName(v);
        return std::nullopt;
    };
    using K = c10::TypeKind;
    switch (type->kind()) {
    case K::TensorType:
        if (v.kind == PyValue::Kind::Tensor)
            return c10::IValue(v.tensor);
        if (mode.numbersAsTensors && v.isNumber())
            return c10::IValue(wrappedNumber(v));
        return refuse("Tensor");
    case K::IntType:
    case K::SymIntType:
        if (v.kind == PyValue::Kind::Int)
            return c10::IValue(v.intValue);
        return refuse("int");
    case K::FloatType:
        if (v.kind == PyValue::Kind::Float || v.kind == PyValue::Kind::Int)
            return c10::IValue(v.number());
        return refuse("float");
    case K::BoolType:
        if (v.kind == PyValue::Kind::Bool)
            return c10::IValue(v.boolValue);
        if (mode.atenPositional && v.kind == PyValue::Kind::Int)
            return c10::IValue(v.intValue != 0);
        return refuse("bool");
    case K::NumberType:
        if (v.kind == PyValue::Kind::Int)
            return c10::IValue(v.intValue);
        if (v.kind == PyValue::Kind::Float)
            return c10::IValue(v.floatValue);
        if (v.kind == PyValue::Kind::Bool)
            return c10::IValue(v.boolValue);
        if (mode.numbersAsTensors && v.kind == PyValue::Kind::Tensor && v.tensor.defined() && v.tensor.numel() == 1)
            return c10::IValue(v.tensor.item());
        return refuse("number");
    case K::StringType:
        if (v.kind == PyValue::Kind::Str)
            return c10::IValue(v.text);
        return refuse("str");
    case K::ScalarTypeType:
        if (v.kind == PyValue::Kind::DType)
            return c10::IValue(static_cast<std::int64_t>(v.dtype));
        if (mode.atenPositional && v.kind == PyValue::Kind::Int)
            return c10::IValue(v.intValue); // the collector records enums as their numbers
        return refuse("torch.dtype");
    case K::LayoutType:
        if (v.kind == PyValue::Kind::Str && v.text == "torch.strided")
            return c10::IValue(static_cast<std::int64_t>(at::kStrided));
        if (v.kind == PyValue::Kind::Int)
            return c10::IValue(v.intValue);
        return refuse("torch.layout");
    case K::MemoryFormatType:
        if (v.kind == PyValue::Kind::Str) {
            if (const auto f = memoryFormatOf(v.text))
                return c10::IValue(*f);
        }
        if (v.kind == PyValue::Kind::Int)
            return c10::IValue(v.intValue);
        return refuse("torch.memory_format");
    case K::DeviceObjType:
        if (v.kind == PyValue::Kind::Device || v.kind == PyValue::Kind::Str)
            return c10::IValue(c10::Device(v.text));
        return refuse("torch.device");
    case K::ListType: {
        const c10::TypePtr element = type->castRaw<c10::ListType>()->getElementType();
        const bool sized = arg.N().has_value();
        switch (element->kind()) {
        case K::IntType:
        case K::SymIntType:
            if (const auto list = intList(v))
                return c10::IValue(*list);
            if (v.kind == PyValue::Kind::Int && (sized || mode.numbersAsTensors))
                return c10::IValue(std::vector<std::int64_t>(sized ? *arg.N() : 1, v.intValue));
            return refuse("a list of ints");
        case K::FloatType: {
            if (v.kind == PyValue::Kind::List) {
                std::vector<double> out;
                for (const PyValue& e : v.items) {
                    if (e.kind != PyValue::Kind::Float && e.kind != PyValue::Kind::Int)
                        return refuse("a list of floats");
                    out.push_back(e.number());
                }
                return c10::IValue(out);
            }
            if ((v.kind == PyValue::Kind::Float || v.kind == PyValue::Kind::Int) && sized)
                return c10::IValue(std::vector<double>(*arg.N(), v.number()));
            return refuse("a list of floats");
        }
        case K::BoolType: {
            if (v.kind != PyValue::Kind::List)
                return refuse("a list of bools");
            c10::List<bool> out;
            for (const PyValue& e : v.items) {
                if (e.kind != PyValue::Kind::Bool)
                    return refuse("a list of bools");
                out.push_back(e.boolValue);
            }
            return c10::IValue(out);
        }
        case K::TensorType: {
            if (v.kind != PyValue::Kind::List)
                return refuse("a list of Tensors");
            std::vector<at::Tensor> out;
            for (const PyValue& e : v.items) {
                if (e.kind != PyValue::Kind::Tensor)
                    return refuse("a list of Tensors");
                out.push_back(e.tensor);
            }
            return c10::IValue(out);
        }
        case K::OptionalType: {
            if (v.kind != PyValue::Kind::List)
                return refuse("a list of optional Tensors");
            c10::List<c10::optional<at::Tensor>> out;
            for (const PyValue& e : v.items) {
                if (e.kind == PyValue::Kind::None)
                    out.push_back(c10::nullopt);
                else if (e.kind == PyValue::Kind::Tensor)
                    out.push_back(e.tensor);
                else
                    return refuse("a list of optional Tensors");
            }
            return c10::IValue(out);
        }
        default:
            return refuse(element->str().c_str());
        }
    }
    default:
        why = "argument " + arg.name() + " has type " + type->str() + ", which the replay cannot build";
        return std::nullopt;
    }
}

/// Python's binding of (args, kwargs) to one schema; nullopt with `why` when it does not fit.
std::optional<torch::jit::Stack> bindSchema(const c10::FunctionSchema& schema, const PyArgs& argsIn,
                                            const PyKwargs& kwargs, const BindMode& mode, std::string& why)
{
    const auto& params = schema.arguments();
    std::vector<std::size_t> positional;
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (mode.atenPositional || !params[i].kwarg_only())
            positional.push_back(i);
    }
    // Python's varargs rule: a single int-list parameter (after self for methods) also takes
    // x.view(2, 3) / x.permute(0, 2, 1) as separate ints.
    const PyArgs* args = &argsIn;
    PyArgs packed;
    const std::size_t first = mode.method ? 1 : 0;
    if (!mode.atenPositional && positional.size() == first + 1 && argsIn.size() > first
        && argsIn[first].kind == PyValue::Kind::Int) {
        const c10::TypePtr& t = params[positional[first]].type();
        if (t->kind() == c10::TypeKind::ListType) {
            const auto ek = t->castRaw<c10::ListType>()->getElementType()->kind();
            if (ek == c10::TypeKind::IntType || ek == c10::TypeKind::SymIntType) {
                packed.assign(argsIn.begin(), argsIn.begin() + static_cast<std::ptrdiff_t>(first));
                PyValue list;
                list.kind = PyValue::Kind::List;
                list.items.assign(argsIn.begin() + static_cast<std::ptrdiff_t>(first), argsIn.end());
                packed.push_back(std::move(list));
                args = &packed;
            }
        }
    }
    if (args->size() > positional.size()) {
        why = "takes " + std::to_string(positional.size()) + " positional arguments but " + std::to_string(args->size())
            + " were given";
        return std::nullopt;
    }
    std::vector<const PyValue*> bound(params.size(), nullptr);
    for (std::size_t k = 0; k < args->size(); ++k)
        bound[positional[k]] = &(*args)[k];
    for (const auto& [name, value] : kwargs) {
        auto index = schema.argumentIndexWithName(name);
        // torch.* documents the first tensor as `input` while the schema calls it `self` (and the other way).
        if (!index && name == "input")
            index = schema.argumentIndexWithName("self");
        if (!index && name == "self")
            index = schema.argumentIndexWithName("input");
        if (!index) {
            why = "got an unexpected keyword argument '" + name + "'";
            return std::nullopt;
        }
        if (bound[*index]) {
            why = "got multiple values for argument '" + params[*index].name() + "'";
            return std::nullopt;
        }
        bound[*index] = &value;
    }
    torch::jit::Stack stack;
    stack.reserve(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (!bound[i]) {
            if (!params[i].default_value()) {
                why = "missing required argument '" + params[i].name() + "'";
                return std::nullopt;
            }
            stack.push_back(*params[i].default_value());
            continue;
        }
        auto value = convertArg(params[i], *bound[i], mode, why);
        if (!value)
            return std::nullopt;
        stack.push_back(std::move(*value));
    }
    return stack;
}

c10::IValue callOp(const c10::OperatorHandle& op, torch::jit::Stack& stack)
{
    op.callBoxed(&stack);
    if (stack.size() == 1)
        return std::move(stack[0]);
    if (stack.empty())
        return c10::IValue();
    return c10::ivalue::Tuple::create(std::move(stack));
}

std::string schemaName(const c10::OperatorHandle& h)
{
    const auto& n = h.operator_name();
    return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

/// Overload resolution: the first overload (in a fixed order) that accepts the arguments as Python
/// would; a second pass lets Python numbers stand for tensors, as torch's argument parser does.
c10::IValue callCandidates(const std::vector<c10::OperatorHandle>& candidates, const PyArgs& args,
                           const PyKwargs& kwargs, BindMode mode)
{
    const bool wantsOut = findKwarg(kwargs, "out") != nullptr;
    std::string reasons;
    for (const bool lenient : { false, true }) {
        mode.numbersAsTensors = lenient;
        for (const c10::OperatorHandle& h : candidates) {
            const c10::FunctionSchema& schema = h.schema();
            bool hasOut = false;
            for (const auto& a : schema.arguments())
                hasOut = hasOut || a.is_out();
            if (hasOut != wantsOut)
                continue; // out= variants only for calls that pass out=, as in Python
            std::string why;
            if (auto stack = bindSchema(schema, args, kwargs, mode, why))
                return callOp(h, *stack);
            if (!lenient && reasons.size() < 600)
                reasons += (reasons.empty() ? "" : "; ") + schemaName(h) + ": " + why;
        }
    }
    const std::string name = candidates.empty() ? std::string("?") : candidates.front().operator_name().name;
    throw ReplayError("no overload of " + name + " accepts these arguments (" + reasons + ")");
}

const std::vector<c10::OperatorHandle>& opsOrThrow(const std::string& name)
{
    const auto* ops = OpRegistry::instance().find("aten::" + name);
    if (!ops)
        throw ReplayError("aten::" + name + " does not exist in this LibTorch");
    return *ops;
}

// ---- Functional.* signatures ----------------------------------------------------------------------

struct Param
{
    std::string name;
    std::optional<PyValue> defaultValue;
    bool pythonOnly = false; ///< handled by the adapter or meaningless here; never passed to aten
};

/// Named arguments after Python binding, and what the adapter decides.
struct Bound
{
    std::string op;
    PyKwargs named;
    int pickOutput = -1; ///< return only this element of a tuple result (adaptive_max_pool without indices)
    bool rebuilt = false; ///< the adapter wrote the aten arguments itself: keep all of them

    PyValue* get(std::string_view name)
    {
        for (auto& [k, v] : named) {
            if (k == name)
                return &v;
        }
        return nullptr;
    }
    void set(const std::string& name, PyValue value)
    {
        if (PyValue* p = get(name))
            *p = std::move(value);
        else
            named.emplace_back(name, std::move(value));
    }
    void erase(std::string_view name)
    {
        named.erase(std::remove_if(named.begin(), named.end(), [&](const auto& kv) { return kv.first == name; }),
                    named.end());
    }
    void rename(std::string_view from, const std::string& to)
    {
        for (auto& [k, v] : named) {
            if (k == from)
                k = to;
        }
    }
    bool isTrue(std::string_view name)
    {
        const PyValue* p = get(name);
        return p && ((p->kind == PyValue::Kind::Bool && p->boolValue) || (p->kind == PyValue::Kind::Int && p->intValue));
    }
    const at::Tensor& tensor(std::string_view name)
    {
        const PyValue* p = get(name);
        if (!p || p->kind != PyValue::Kind::Tensor)
            throw ReplayError("argument '" + std::string(name) + "' must be a Tensor");
        return p->tensor;
    }
};

using Adapter = void (*)(Bound&);

struct FunctionalDef
{
    const char* name;
    const char* signature; ///< Python parameters; `~name` = Python-only, never passed to aten
    const char* op;        ///< the aten operator (the adapter may change it)
    Adapter adapter = nullptr;
};

PyValue parseDefault(const std::string& text)
{
    if (text == "None")
        return PyValue::none();
    if (text == "True" || text == "False")
        return PyValue::fromBool(text == "True");
    if (text.size() >= 2 && text.front() == '\'')
        return PyValue::fromStr(text.substr(1, text.size() - 2));
    if (text.find_first_of(".e") != std::string::npos)
        return PyValue::fromFloat(std::stod(text));
    return PyValue::fromInt(std::stoll(text));
}

std::vector<Param> parseSignature(const char* signature)
{
    std::vector<Param> params;
    std::string text(signature);
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t end = text.find(',', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string item = text.substr(pos, end - pos);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) {
            Param p;
            if (item.front() == '~') {
                p.pythonOnly = true;
                item.erase(0, 1);
            }
            const auto eq = item.find('=');
            p.name = item.substr(0, eq);
            if (eq != std::string::npos)
                p.defaultValue = parseDefault(item.substr(eq + 1));
            params.push_back(std::move(p));
        }
        pos = end + 1;
    }
    return params;
}

/// reduction='mean' and the legacy size_average/reduce flags -> aten's Reduction enum.
void reductionToInt(Bound& b)
{
    std::string reduction = "mean";
    if (const PyValue* r = b.get("reduction"); r && r->kind == PyValue::Kind::Str)
        reduction = r->text;
    const PyValue* sizeAverage = b.get("size_average");
    const PyValue* reduce = b.get("reduce");
    if ((sizeAverage && sizeAverage->kind != PyValue::Kind::None) || (reduce && reduce->kind != PyValue::Kind::None)) {
        const bool avg = !sizeAverage || sizeAverage->kind == PyValue::Kind::None || b.isTrue("size_average");
        const bool red = !reduce || reduce->kind == PyValue::Kind::None || b.isTrue("reduce");
        reduction = !red ? "none" : avg ? "mean" : "sum";
    }
    std::int64_t value = 1;
    if (reduction == "none")
        value = 0;
    else if (reduction == "sum")
        value = 2;
    else if (reduction != "mean")
        throw ReplayError(reduction + " is not a valid value for reduction");
    b.set("reduction", PyValue::fromInt(value));
}

void inplaceVariant(Bound& b)
{
    if (b.isTrue("inplace"))
        b.op += "_";
}

void batchNormAdapter(Bound& b)
{
    b.set("cudnn_enabled", PyValue::fromBool(true));
}

void dropoutAdapter(Bound& b)
{
    b.rename("training", "train");
    inplaceVariant(b);
}

void softmaxAdapter(Bound& b)
{
    // F.softmax(dim=None) picks the dimension itself (_get_softmax_dim).
    PyValue* dim = b.get("dim");
    if (dim && dim->kind == PyValue::Kind::None) {
        const std::int64_t nd = b.tensor("input").dim();
        *dim = PyValue::fromInt(nd == 0 || nd == 1 || nd == 3 ? 0 : 1);
    }
}

void lossAdapter(Bound& b)
{
    reductionToInt(b);
}

void mseAdapter(Bound& b)
{
    reductionToInt(b);
    // F.mse_loss/l1_loss broadcast the operands before calling aten.
    auto both = at::broadcast_tensors({ b.tensor("input"), b.tensor("target") });
    b.set("input", PyValue::fromTensor(both[0]));
    b.set("target", PyValue::fromTensor(both[1]));
}

void embeddingAdapter(Bound& b)
{
    const PyValue* maxNorm = b.get("max_norm");
    if (maxNorm && maxNorm->kind != PyValue::Kind::None)
        throw ReplayError("embedding with max_norm renormalises the weight in place, which the replay does not do");
    const std::int64_t rows = b.tensor("weight").size(0);
    PyValue* pad = b.get("padding_idx");
    if (!pad || pad->kind == PyValue::Kind::None)
        b.set("padding_idx", PyValue::fromInt(-1));
    else if (pad->kind == PyValue::Kind::Int && pad->intValue < 0)
        pad->intValue += rows;
    b.rename("input", "indices");
}

void poolStrideAdapter(Bound& b)
{
    PyValue* stride = b.get("stride");
    if (stride && stride->kind == PyValue::Kind::None) {
        PyValue empty;
        empty.kind = PyValue::Kind::List;
        *stride = empty;
    }
}

void maxPoolAdapter(Bound& b)
{
    poolStrideAdapter(b);
    if (b.isTrue("return_indices"))
        b.op += "_with_indices";
}

void adaptivePoolSizeFix(Bound& b)
{
    PyValue* size = b.get("output_size");
    const at::Tensor& input = b.tensor("input");
    if (size && size->kind == PyValue::Kind::List) {
        const std::int64_t n = static_cast<std::int64_t>(size->items.size());
        for (std::int64_t k = 0; k < n; ++k) {
            if (size->items[k].kind == PyValue::Kind::None)
                size->items[k] = PyValue::fromInt(input.size(input.dim() - n + k));
        }
    }
}

void adaptiveMaxAdapter(Bound& b)
{
    adaptivePoolSizeFix(b);
    if (!b.isTrue("return_indices"))
        b.pickOutput = 0;
}

void interpolateAdapter(Bound& b)
{
    const at::Tensor& input = b.tensor("input");
    const std::int64_t dims = input.dim() - 2;
    if (dims < 1 || dims > 3)
        throw ReplayError("interpolate expects a 3-D, 4-D or 5-D input");
    std::string mode = "nearest";
    if (const PyValue* m = b.get("mode"); m && m->kind == PyValue::Kind::Str)
        mode = m->text;
    PyValue size = b.get("size") ? *b.get("size") : PyValue::none();
    PyValue scale = b.get("scale_factor") ? *b.get("scale_factor") : PyValue::none();
    auto repeat = [&](PyValue v) {
        if (v.kind == PyValue::Kind::Int || v.kind == PyValue::Kind::Float) {
            PyValue list;
            list.kind = PyValue::Kind::List;
            list.items.assign(static_cast<std::size_t>(dims), v);
            return list;
        }
        return v;
    };
    size = repeat(size);
    scale = repeat(scale);
    if (scale.kind == PyValue::Kind::List) {
        for (PyValue& e : scale.items)
            e = PyValue::fromFloat(e.number());
    }
    if (b.isTrue("recompute_scale_factor") && scale.kind == PyValue::Kind::List) {
        PyValue sizes;
        sizes.kind = PyValue::Kind::List;
        for (std::int64_t k = 0; k < dims; ++k)
            sizes.items.push_back(PyValue::fromInt(static_cast<std::int64_t>(
                std::floor(static_cast<double>(input.size(2 + k)) * scale.items[static_cast<std::size_t>(k)].floatValue))));
        size = sizes;
        scale = PyValue::none();
    }
    const bool alignCorners = b.isTrue("align_corners");
    const std::string n = std::to_string(dims);
    b.named.clear();
    b.rebuilt = true;
    b.set("input", PyValue::fromTensor(input));
    b.set("output_size", size);
    if (mode == "nearest" || mode == "nearest-exact") {
        b.op = (mode == "nearest" ? "upsample_nearest" : "_upsample_nearest_exact") + n + "d";
    } else {
        static const std::map<std::string, std::string> linear = {
            { "linear", "1" }, { "bilinear", "2" }, { "trilinear", "3" }, { "bicubic", "2" } };
        const auto it = linear.find(mode);
        if (it == linear.end() || it->second != n)
            throw ReplayError("interpolate mode '" + mode + "' with a " + std::to_string(dims + 2)
                              + "-D input is not supported by the replay");
        b.op = mode == "linear" ? "upsample_linear1d" : mode == "bilinear" ? "upsample_bilinear2d"
            : mode == "trilinear"                      ? "upsample_trilinear3d"
                                                       : "upsample_bicubic2d";
        b.set("align_corners", PyValue::fromBool(alignCorners));
    }
    b.set("scale_factors", scale);
}

void oneHotAdapter(Bound& b)
{
    b.rename("tensor", "self");
}

const std::vector<FunctionalDef>& functionalDefs()
{
    static const std::vector<FunctionalDef> defs = {
        { "linear", "input, weight, bias=None", "linear" },
        { "bilinear", "input1, input2, weight, bias=None", "bilinear" },
        { "conv1d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv1d" },
        { "conv2d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv2d" },
        { "conv3d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv3d" },
        { "conv_transpose1d", "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
          "conv_transpose1d" },
        { "conv_transpose2d", "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
          "conv_transpose2d" },
        { "conv_transpose3d", "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
          "conv_transpose3d" },
        { "layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-05", "layer_norm" },
        { "batch_norm",
          "input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05",
          "batch_norm", batchNormAdapter },
        { "instance_norm",
          "input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-05",
          "instance_norm", batchNormAdapter },
        { "group_norm", "input, num_groups, weight=None, bias=None, eps=1e-05", "group_norm" },
        { "relu", "input, ~inplace=False", "relu", inplaceVariant },
        { "relu6", "input, ~inplace=False", "relu6" },
        { "gelu", "input, approximate='none'", "gelu" },
        { "silu", "input, ~inplace=False", "silu", inplaceVariant },
        { "sigmoid", "input", "sigmoid" },
        { "tanh", "input", "tanh" },
        { "softplus", "input, beta=1, threshold=20", "softplus" },
        { "leaky_relu", "input, negative_slope=0.01, ~inplace=False", "leaky_relu", inplaceVariant },
        { "elu", "input, alpha=1.0, ~inplace=False", "elu", inplaceVariant },
        { "selu", "input, ~inplace=False", "selu", inplaceVariant },
        { "celu", "input, alpha=1.0, ~inplace=False", "celu", inplaceVariant },
        { "hardswish", "input, ~inplace=False", "hardswish", inplaceVariant },
        { "hardsigmoid", "input, ~inplace=False", "hardsigmoid", inplaceVariant },
        { "hardtanh", "input, min_val=-1.0, max_val=1.0, ~inplace=False", "hardtanh", inplaceVariant },
        { "mish", "input, ~inplace=False", "mish", inplaceVariant },
        { "logsigmoid", "input", "log_sigmoid" },
        { "glu", "input, dim=-1", "glu" },
        { "threshold", "input, threshold, value, ~inplace=False", "threshold", inplaceVariant },
        { "prelu", "input, weight", "prelu" },
        { "softmax", "input, dim=None, ~_stacklevel=3, dtype=None", "softmax", softmaxAdapter },
        { "log_softmax", "input, dim=None, ~_stacklevel=3, dtype=None", "log_softmax", softmaxAdapter },
        { "dropout", "input, p=0.5, training=True, ~inplace=False", "dropout", dropoutAdapter },
        { "dropout1d", "input, p=0.5, training=True, ~inplace=False", "feature_dropout", dropoutAdapter },
        { "dropout2d", "input, p=0.5, training=True, ~inplace=False", "feature_dropout", dropoutAdapter },
        { "dropout3d", "input, p=0.5, training=True, ~inplace=False", "feature_dropout", dropoutAdapter },
        { "alpha_dropout", "input, p=0.5, training=False, ~inplace=False", "alpha_dropout", dropoutAdapter },
        { "cross_entropy",
          "input, target, weight=None, ~size_average=None, ignore_index=-100, ~reduce=None, reduction='mean', label_smoothing=0.0",
          "cross_entropy_loss", lossAdapter },
        { "nll_loss", "input, target, weight=None, ~size_average=None, ignore_index=-100, ~reduce=None, reduction='mean'",
          "nll_loss_nd", lossAdapter },
        { "mse_loss", "input, target, ~size_average=None, ~reduce=None, reduction='mean'", "mse_loss", mseAdapter },
        { "l1_loss", "input, target, ~size_average=None, ~reduce=None, reduction='mean'", "l1_loss", mseAdapter },
        { "smooth_l1_loss", "input, target, ~size_average=None, ~reduce=None, reduction='mean', beta=1.0",
          "smooth_l1_loss", mseAdapter },
        { "binary_cross_entropy", "input, target, weight=None, ~size_average=None, ~reduce=None, reduction='mean'",
          "binary_cross_entropy", lossAdapter },
        { "binary_cross_entropy_with_logits",
          "input, target, weight=None, ~size_average=None, ~reduce=None, reduction='mean', pos_weight=None",
          "binary_cross_entropy_with_logits", lossAdapter },
        { "embedding",
          "input, weight, padding_idx=None, ~max_norm=None, ~norm_type=2.0, scale_grad_by_freq=False, sparse=False",
          "embedding", embeddingAdapter },
        { "max_pool1d", "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, ~return_indices=False",
          "max_pool1d", maxPoolAdapter },
        { "max_pool2d", "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, ~return_indices=False",
          "max_pool2d", maxPoolAdapter },
        { "max_pool3d", "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, ~return_indices=False",
          "max_pool3d", maxPoolAdapter },
        { "avg_pool1d", "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True",
          "avg_pool1d", poolStrideAdapter },
        { "avg_pool2d",
          "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None",
          "avg_pool2d", poolStrideAdapter },
        { "avg_pool3d",
          "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None",
          "avg_pool3d", poolStrideAdapter },
        { "adaptive_avg_pool1d", "input, output_size", "adaptive_avg_pool1d", adaptivePoolSizeFix },
        { "adaptive_avg_pool2d", "input, output_size", "adaptive_avg_pool2d", adaptivePoolSizeFix },
        { "adaptive_avg_pool3d", "input, output_size", "adaptive_avg_pool3d", adaptivePoolSizeFix },
        { "adaptive_max_pool1d", "input, output_size, ~return_indices=False", "adaptive_max_pool1d", adaptiveMaxAdapter },
        { "adaptive_max_pool2d", "input, output_size, ~return_indices=False", "adaptive_max_pool2d", adaptiveMaxAdapter },
        { "interpolate",
          "input, ~size=None, ~scale_factor=None, ~mode='nearest', ~align_corners=None, ~recompute_scale_factor=None, ~antialias=False",
          "upsample_nearest2d", interpolateAdapter },
        { "upsample",
          "input, ~size=None, ~scale_factor=None, ~mode='nearest', ~align_corners=None",
          "upsample_nearest2d", interpolateAdapter },
        { "pad", "input, pad, mode='constant', value=None", "pad" },
        { "one_hot", "tensor, num_classes=-1", "one_hot", oneHotAdapter },
        { "cosine_similarity", "x1, x2, dim=1, eps=1e-08", "cosine_similarity" },
        { "pairwise_distance", "x1, x2, p=2.0, eps=1e-06, keepdim=False", "pairwise_distance" },
        { "pixel_shuffle", "input, upscale_factor", "pixel_shuffle" },
        { "unfold", "input, kernel_size, dilation=1, padding=0, stride=1", "im2col" },
    };
    return defs;
}

struct ParsedFunctional
{
    const FunctionalDef* def;
    std::vector<Param> params;
};

const std::map<std::string, ParsedFunctional>& functionalTable()
{
    static const std::map<std::string, ParsedFunctional> table = [] {
        std::map<std::string, ParsedFunctional> t;
        for (const FunctionalDef& d : functionalDefs())
            t.emplace(d.name, ParsedFunctional { &d, parseSignature(d.signature) });
        return t;
    }();
    return table;
}

Bound bindPython(const std::string& name, const std::vector<Param>& params, const PyArgs& args, const PyKwargs& kwargs)
{
    Bound b;
    if (args.size() > params.size())
        throw ReplayError(name + "() takes " + std::to_string(params.size()) + " positional arguments but "
                          + std::to_string(args.size()) + " were given");
    std::vector<const PyValue*> given(params.size(), nullptr);
    for (std::size_t k = 0; k < args.size(); ++k)
        given[k] = &args[k];
    for (const auto& [key, value] : kwargs) {
        const auto it = std::find_if(params.begin(), params.end(), [&](const Param& p) { return p.name == key; });
        if (it == params.end())
            throw ReplayError(name + "() got an unexpected keyword argument '" + key + "'");
        const auto index = static_cast<std::size_t>(it - params.begin());
        if (given[index])
            throw ReplayError(name + "() got multiple values for argument '" + key + "'");
        given[index] = &value;
    }
    for (std::size_t k = 0; k < params.size(); ++k) {
        if (given[k])
            b.named.emplace_back(params[k].name, *given[k]);
        else if (params[k].defaultValue)
            b.named.emplace_back(params[k].name, *params[k].defaultValue);
        else
            throw ReplayError(name + "() missing required argument: '" + params[k].name + "'");
    }
    return b;
}

// ---- hand-written calls ----------------------------------------------------------------------------

using CustomFn = c10::IValue (*)(const PyArgs&, const PyKwargs&);

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

struct CustomDef
{
    const char* prefix;
    const char* name;
    CustomFn fn;
};

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

/// Tensor dunders and other names whose aten operator is spelled differently; `swap` calls op(other, self).
struct RenameDef
{
    const char* name;
    const char* op;
    bool swap = false;
};

const std::vector<RenameDef>& tensorRenames()
{
    static const std::vector<RenameDef> defs = {
        { "__add__", "add" }, { "__radd__", "add" }, { "__iadd__", "add_" },
        { "__sub__", "sub" }, { "__isub__", "sub_" }, { "__rsub__", "rsub" },
        { "__mul__", "mul" }, { "__rmul__", "mul" }, { "__imul__", "mul_" },
        { "__truediv__", "div" }, { "__div__", "div" }, { "__itruediv__", "div_" }, { "__idiv__", "div_" },
        { "__floordiv__", "floor_divide" }, { "__ifloordiv__", "floor_divide_" }, { "__rfloordiv__", "floor_divide", true },
        { "__mod__", "remainder" }, { "__imod__", "remainder_" }, { "__rmod__", "remainder", true },
        { "__pow__", "pow" }, { "__ipow__", "pow_" }, { "__rpow__", "pow", true },
        { "__matmul__", "matmul" }, { "__rmatmul__", "matmul", true },
        { "__eq__", "eq" }, { "__ne__", "ne" }, { "__lt__", "lt" }, { "__le__", "le" }, { "__gt__", "gt" }, { "__ge__", "ge" },
        { "__neg__", "neg" }, { "__abs__", "abs" }, { "__invert__", "bitwise_not" }, { "__pos__", "positive" },
        { "__rand__", "__and__" }, { "__ror__", "__or__" }, { "__rxor__", "__xor__" },
    };
    return defs;
}

/// The Torch/Tensor names listed by replayableApis() besides the table entries: common aten operators
/// that bind as they are (checked against torch 1.13's Python namespaces: torch.X, Tensor.X or both).
struct PlainNames
{
    const char* both;
    const char* torchOnly;
    const char* tensorOnly;
};

const PlainNames& plainAtenNames()
{
    static const PlainNames names = {
        "matmul mm bmm addmm baddbmm addbmm add sub mul div exp log sqrt rsqrt pow abs neg clamp clamp_ clip sum "
        "mean max min amax amin var std cumsum argmax argmin topk sort gather scatter scatter_add index_select "
        "masked_fill where reshape permute transpose flatten squeeze unsqueeze repeat_interleave chunk split t eq ne "
        "lt le gt ge logical_and logical_or logical_not sigmoid tanh relu softmax log_softmax clone detach erf sin "
        "cos reciprocal square floor ceil round masked_select nonzero all any isnan isinf isfinite flip roll tril "
        "triu narrow select unbind bitwise_not fill_ zero_ prod logsumexp addcmul",
        "cat stack ones_like zeros_like full_like layer_norm",
        "add_ mul_ div_ masked_fill_ view expand expand_as repeat contiguous type_as copy_",
    };
    return names;
}

void appendWords(std::vector<std::string>& out, const std::string& prefix, const char* words)
{
    std::string w;
    for (const char* p = words;; ++p) {
        if (*p == ' ' || *p == '\0') {
            if (!w.empty())
                out.push_back(prefix + w);
            w.clear();
            if (*p == '\0')
                break;
        } else {
            w += *p;
        }
    }
}

} // namespace

struct Callable
{
    enum class Kind : std::uint8_t { Schema, Functional, Custom };
    Kind kind = Kind::Schema;
    const std::vector<c10::OperatorHandle>* candidates = nullptr; ///< Schema
    std::vector<c10::OperatorHandle> fixedOverload;               ///< Schema with one overload (Aten.add.Tensor)
    BindMode mode;
    bool swap = false;
    const ParsedFunctional* functional = nullptr;
    std::string functionalName;
    CustomFn custom = nullptr;
};

namespace {

Resolved schemaCallable(const std::string& op, BindMode mode, bool swap = false)
{
    const auto* ops = OpRegistry::instance().find("aten::" + op);
    if (!ops)
        return { nullptr, "no aten operator aten::" + op };
    auto c = std::make_shared<Callable>();
    c->kind = Callable::Kind::Schema;
    c->candidates = ops;
    c->mode = mode;
    c->swap = swap;
    return { c, {} };
}

Resolved resolveUncached(const std::string& prefix, const std::string& apiName)
{
    const auto unsupported = [&](const std::string& why) {
        return Resolved { nullptr, "API " + prefix + "." + apiName + " is not replayable with LibTorch: " + why };
    };
    if (apiName.empty())
        return unsupported("the name has no API part");
    for (const CustomDef& d : customDefs()) {
        if (prefix == d.prefix && apiName == d.name) {
            auto c = std::make_shared<Callable>();
            c->kind = Callable::Kind::Custom;
            c->custom = d.fn;
            return { c, {} };
        }
    }
    if (prefix == "Aten") {
        // "add.Tensor" -> aten::add overload Tensor; "gelu.default" -> the default overload; "add" -> all.
        BindMode mode;
        mode.atenPositional = true;
        const auto dot = apiName.find('.');
        const std::string name = apiName.substr(0, dot);
        if (dot == std::string::npos) {
            Resolved r = schemaCallable(name, mode);
            return r.callable ? r : unsupported(r.problem);
        }
        std::string overload = apiName.substr(dot + 1);
        if (overload == "default")
            overload.clear();
        const auto handle = c10::Dispatcher::singleton().findOp(c10::OperatorName("aten::" + name, overload));
        if (!handle || !handle->hasSchema())
            return unsupported("no aten operator aten::" + name + (overload.empty() ? "" : "." + overload));
        auto c = std::make_shared<Callable>();
        c->kind = Callable::Kind::Schema;
        c->fixedOverload.push_back(*handle);
        c->mode = mode;
        return { c, {} };
    }
    if (prefix == "Functional") {
        const auto& table = functionalTable();
        if (const auto it = table.find(apiName); it != table.end()) {
            auto c = std::make_shared<Callable>();
            c->kind = Callable::Kind::Functional;
            c->functional = &it->second;
            c->functionalName = apiName;
            return { c, {} };
        }
        // Functionals without an entry whose Python signature is the aten schema's (sigmoid, tanh, ...).
        Resolved r = schemaCallable(apiName, {});
        return r.callable ? r : unsupported("no signature in the replay table and " + r.problem);
    }
    if (prefix == "Tensor" || prefix == "Torch") {
        BindMode mode;
        mode.method = prefix == "Tensor";
        if (prefix == "Tensor") {
            for (const RenameDef& d : tensorRenames()) {
                if (apiName == d.name)
                    return schemaCallable(d.op, mode, d.swap);
            }
        }
        std::string op = apiName;
        std::replace(op.begin(), op.end(), '.', '_'); // torch.linalg.inv -> aten::linalg_inv
        Resolved r = schemaCallable(op, mode);
        return r.callable ? r : unsupported(r.problem);
    }
    if (prefix == "NPU")
        return unsupported("NPU operators have no CPU bench function in this replay");
    return unsupported("the prefix " + prefix + " is not executed by run_ut");
}

} // namespace

Resolved resolveApi(const std::string& prefix, const std::string& apiName)
{
    static std::shared_mutex mutex;
    static std::unordered_map<std::string, Resolved> cache;
    const std::string key = prefix + "." + apiName;
    {
        std::shared_lock lock(mutex);
        if (const auto it = cache.find(key); it != cache.end())
            return it->second;
    }
    Resolved r = resolveUncached(prefix, apiName);
    std::unique_lock lock(mutex);
    return cache.emplace(key, std::move(r)).first->second;
}

c10::IValue invoke(const Callable& callable, const PyArgs& args, const PyKwargs& kwargs)
{
    switch (callable.kind) {
    case Callable::Kind::Custom: return callable.custom(args, kwargs);
    case Callable::Kind::Functional: {
        const ParsedFunctional& f = *callable.functional;
        Bound b = bindPython(callable.functionalName, f.params, args, kwargs);
        b.op = f.def->op;
        if (f.def->adapter)
            f.def->adapter(b);
        for (const Param& p : f.params) {
            if (p.pythonOnly && !b.rebuilt)
                b.erase(p.name);
        }
        c10::IValue out = callCandidates(opsOrThrow(b.op), {}, b.named, {});
        if (b.pickOutput >= 0 && out.isTuple())
            return out.toTupleRef().elements().at(static_cast<std::size_t>(b.pickOutput));
        return out;
    }
    case Callable::Kind::Schema: {
        const auto& candidates = callable.fixedOverload.empty() ? *callable.candidates : callable.fixedOverload;
        if (callable.swap && args.size() >= 2) {
            PyArgs swapped = args;
            std::swap(swapped[0], swapped[1]);
            return callCandidates(candidates, swapped, kwargs, callable.mode);
        }
        return callCandidates(candidates, args, kwargs, callable.mode);
    }
    }
    throw ReplayError("unknown callable");
}

std::vector<std::string> tableApiNames()
{
    std::vector<std::string> names;
    for (const CustomDef& d : customDefs())
        names.push_back(std::string(d.prefix) + "." + d.name);
    for (const FunctionalDef& d : functionalDefs())
        names.push_back(std::string("Functional.") + d.name);
    for (const RenameDef& d : tensorRenames())
        names.push_back(std::string("Tensor.") + d.name);
    const PlainNames& plain = plainAtenNames();
    appendWords(names, "Tensor.", plain.both);
    appendWords(names, "Torch.", plain.both);
    appendWords(names, "Torch.", plain.torchOnly);
    appendWords(names, "Tensor.", plain.tensorOnly);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

} // namespace probescope::runuttorch::detail
