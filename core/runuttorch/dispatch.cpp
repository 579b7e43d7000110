// SPDX-License-Identifier: Apache-2.0
// run_ut's replay, the dispatch: Python-like arguments converted to a schema's types and bound to its parameters as
// Python's argument parser would, and the overload that accepts them called through the dispatcher.
#include "core/runuttorch/calls.h"

#include <ATen/ATen.h>
#include <ATen/core/stack.h>

#include <unordered_map>

namespace probescope::runuttorch::detail {

namespace {

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

} // namespace

const std::vector<c10::OperatorHandle>* findOps(const std::string& qualified)
{
    return OpRegistry::instance().find(qualified);
}

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

} // namespace probescope::runuttorch::detail
