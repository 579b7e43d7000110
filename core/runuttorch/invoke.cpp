// SPDX-License-Identifier: Apache-2.0
// The API table of the replay: msprobe names -> aten operators called through c10::Dispatcher, with
// Python's argument binding (positional order, keywords by name, defaults from the schema, overload
// resolution by argument types: dispatch.cpp). Functional.* names that are Python wrappers get a signature and a
// small adapter (functional.cpp); a handful of Tensor dunders and Python-level methods are written by hand
// (customcalls.cpp). Here: a name resolved to one of those, once, and the call made.
#include "core/runuttorch/calls.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace probescope::runuttorch::detail {

namespace {

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
    const auto* ops = findOps("aten::" + op);
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
