// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to ProbeScope::runuttorch: the Python-like argument values rebuilt from dump.json and the
// functions the three LibTorch sources share. Includes LibTorch headers; never include it from
// outside core/runuttorch.

#include "core/dump/dumpfile.h"
#include "core/runut/replayer.h"
#include "core/tensor/tensor.h"

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace probescope::runuttorch::detail {

/// Raised inside a replay for a reason msprobe would report as the SKIP message; replay() catches it
/// (and LibTorch's c10::Error) and never lets it out.
class ReplayError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/// A ReplayError whose cause is a tensor file of the dump that the resolver refused: carries its diagnostic, so
/// the run tells a damaged input from any other SKIP by the id, never by the text.
class TensorInputError : public ReplayError
{
public:
    TensorInputError(const std::string& what, Diagnostic diagnostic)
        : ReplayError(what)
        , m_diagnostic(std::move(diagnostic))
    {
    }
    const Diagnostic& diagnostic() const { return m_diagnostic; }

private:
    Diagnostic m_diagnostic;
};

/// Refused above this: a random tensor of 2^31 elements is 8 GiB in fp32 already (and twice that on
/// the fp64 bench), so a larger shape is a damaged descriptor, not a workload.
constexpr std::int64_t kMaxElements = std::int64_t(1) << 31;

/// A value as msprobe's gen_args/gen_kwargs would hand it to the Python callable.
struct PyValue
{
    enum class Kind : std::uint8_t { None, Bool, Int, Float, Str, Tensor, List, Slice, Ellipsis, DType, Device };
    Kind kind = Kind::None;
    bool boolValue = false;
    std::int64_t intValue = 0;
    double floatValue = 0;
    std::string text;            ///< Str; Device: the device string as dumped ("npu:0")
    at::Tensor tensor;           ///< Tensor
    std::vector<PyValue> items;  ///< List (also tuples and torch.Size); Slice: start, stop, step (None or Int)
    at::ScalarType dtype = at::ScalarType::Float; ///< DType
    bool isSize = false;         ///< List from a torch.Size

    static PyValue none() { return {}; }
    static PyValue fromInt(std::int64_t v)
    {
        PyValue p;
        p.kind = Kind::Int;
        p.intValue = v;
        return p;
    }
    static PyValue fromFloat(double v)
    {
        PyValue p;
        p.kind = Kind::Float;
        p.floatValue = v;
        return p;
    }
    static PyValue fromBool(bool v)
    {
        PyValue p;
        p.kind = Kind::Bool;
        p.boolValue = v;
        return p;
    }
    static PyValue fromStr(std::string v)
    {
        PyValue p;
        p.kind = Kind::Str;
        p.text = std::move(v);
        return p;
    }
    static PyValue fromTensor(at::Tensor t)
    {
        PyValue p;
        p.kind = Kind::Tensor;
        p.tensor = std::move(t);
        return p;
    }
    bool isNumber() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
    double number() const
    {
        return kind == Kind::Float ? floatValue : kind == Kind::Bool ? (boolValue ? 1.0 : 0.0) : double(intValue);
    }
};

using PyArgs = std::vector<PyValue>;
using PyKwargs = std::vector<std::pair<std::string, PyValue>>;

const PyValue* findKwarg(const PyKwargs& kwargs, std::string_view key);

// ---- inputs.cpp ---------------------------------------------------------------------------------

/// What input reconstruction needs besides the descriptor (run-ut-spec §4.1, §4.2).
struct InputContext
{
    at::Generator generator;                ///< the call's own generator
    const dump::DumpFile* dump = nullptr;   ///< tensorDir resolves data_name
    std::string apiName;                    ///< "conv2d", "__mul__", "add.Tensor"
    std::string prefix;                     ///< "Functional", ...
};

/// A seed that depends on the run's seed and the call's full name only (SplitMix64 over FNV-1a).
std::uint64_t callSeed(std::uint64_t runSeed, std::string_view fullName);

/// gen_args: input_args -> positional values; `needGrad` false when the call has an `out` kwarg.
PyArgs genArgs(dump::JsonValue inputArgs, InputContext& ctx, bool needGrad);
/// gen_kwargs: input_kwargs -> keyword values (tensors with need_grad, lists without).
PyKwargs genKwargs(dump::JsonValue inputKwargs, InputContext& ctx);
/// One descriptor (a tensor leaf, a scalar, a list of them), as gen_args decodes it. `where` names it
/// in messages ("input_args[1]").
PyValue genValue(dump::JsonValue value, InputContext& ctx, bool needGrad, const std::string& where);

/// The dtype dump.json names, as LibTorch's; throws ReplayError for dtypes LibTorch 1.13 lacks.
at::ScalarType scalarTypeOf(std::string_view dtypeText, const std::string& where);
/// float16/bfloat16/float32/... as msprobe writes them ("torch.float32").
std::string dtypeText(at::ScalarType type);

/// A copy of `t` as a LibTorch CPU tensor.
at::Tensor toTorch(const tensor::Tensor& t);
/// A replay output (tensor, tuple, list, number, None) as the seam's Value; tensors are detached,
/// moved to the CPU and made contiguous.
runut::Value toValue(const c10::IValue& value);
runut::Value tensorValue(const at::Tensor& t);

/// Rounds fp32 values to HF32 in place (§4.2): keeps sign, exponent and the top 11 mantissa bits.
void roundToHf32(at::Tensor& t);

// ---- invoke.cpp ---------------------------------------------------------------------------------

struct Callable; ///< a resolved API: aten candidates, argument adapter or hand-written call

/// The replay of (prefix, apiName), or the reason there is none. Resolved once per name, then cached.
struct Resolved
{
    std::shared_ptr<const Callable> callable;
    std::string problem;
};
Resolved resolveApi(const std::string& prefix, const std::string& apiName);

/// Calls the API with Python-like arguments; `device` is where tensor-creating calls put results.
/// Throws ReplayError (binding problems) or c10::Error (LibTorch refused the call).
c10::IValue invoke(const Callable& callable, const PyArgs& args, const PyKwargs& kwargs);

std::vector<std::string> tableApiNames();

} // namespace probescope::runuttorch::detail
