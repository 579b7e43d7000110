// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to core/runuttorch: how invoke() makes a call. dispatch.cpp binds Python-like arguments to the
// dispatcher's schemas (overload resolution as Python's argument parser does it); functional.cpp holds the
// Functional.* signatures and their argument adapters; customcalls.cpp the hand-written calls; invoke.cpp resolves an
// API name to one of them. Includes LibTorch headers; never include it from outside core/runuttorch.

#include "core/runuttorch/replaydetail.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::runuttorch::detail {

// ---- dispatch.cpp: Python-like arguments bound to the dispatcher's schemas ----

struct BindMode
{
    bool atenPositional = false;   ///< Aten.*: positional values fill keyword-only arguments too
    bool method = false;           ///< Tensor.*: args[0] is self (for the varargs rule)
    bool numbersAsTensors = false; ///< second pass: Python numbers for Tensor arguments (wrapped numbers)
};

/// Python's type name of a value ("int", "Tensor"), for messages.
const char* kindName(const PyValue& v);
/// A list of ints, or nullopt for anything else.
std::optional<std::vector<std::int64_t>> intList(const PyValue& v);
/// Overloads of "aten::<name>", the default overload first, then by overload name; null when there is none.
const std::vector<c10::OperatorHandle>* findOps(const std::string& qualified);
/// Overload resolution: the first overload (in a fixed order) that accepts the arguments as Python would; a second
/// pass lets Python numbers stand for tensors. Throws ReplayError when none does.
c10::IValue callCandidates(const std::vector<c10::OperatorHandle>& candidates, const PyArgs& args,
                           const PyKwargs& kwargs, BindMode mode);
/// The overloads of aten::<name>; throws ReplayError when this LibTorch has no such operator.
const std::vector<c10::OperatorHandle>& opsOrThrow(const std::string& name);

// ---- functional.cpp: Functional.* signatures ----

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

/// Python parameters ("input, p=2.0, ~inplace=False") as Params; `~name` = Python-only.
std::vector<Param> parseSignature(const char* signature);
/// The Functional.* table: name, Python signature, aten operator, adapter.
const std::vector<FunctionalDef>& functionalDefs();

struct ParsedFunctional
{
    const FunctionalDef* def;
    std::vector<Param> params;
};

/// functionalDefs() by name, signatures parsed once.
const std::map<std::string, ParsedFunctional>& functionalTable();
/// Python's binding of (args, kwargs) to `params` by name; throws ReplayError as Python's TypeError would.
Bound bindPython(const std::string& name, const std::vector<Param>& params, const PyArgs& args, const PyKwargs& kwargs);

// ---- customcalls.cpp: the hand-written calls ----

using CustomFn = c10::IValue (*)(const PyArgs&, const PyKwargs&);

struct CustomDef
{
    const char* prefix;
    const char* name;
    CustomFn fn;
};

const std::vector<CustomDef>& customDefs();

} // namespace probescope::runuttorch::detail
