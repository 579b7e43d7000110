// SPDX-License-Identifier: Apache-2.0
//
// probescope-gendump: writes a large synthetic msprobe statistics-mode dump (level "mix") so the
// dump.json reader can be benchmarked on realistic input without shipping a 150 MB fixture.
//
// The output copies what msprobe 1.2.x writes with Python's json.dump(indent=1, allow_nan=True):
// key order, indentation, separators, float repr and the bare NaN/Infinity tokens, so that
// `json.dumps(json.load(f), indent=1)` reproduces the file byte for byte.
//
// The simulated run is a decoder-only transformer trained with gradient accumulation: each micro-batch
// runs the forward pass (API entries, then each module entry when its forward completes) and then the
// backward pass in reverse order. Micro-batches repeat until --entries entries are written; the last one
// is cut short there, so its tail has forward entries without backward ones.

#include "benchargs.h"
#include "benchjson.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace probescope::bench {
namespace {


class Rng
{
public:
    explicit Rng(std::uint64_t seed)
        : m_state(seed)
    {
    }
    std::uint64_t next() { return splitMix(m_state); }
    double uniform() { return double(next() >> 11) * 0x1p-53; } ///< [0, 1)
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    bool chance(double p) { return uniform() < p; }

private:
    std::uint64_t m_state;
};

std::uint64_t hashString(std::string_view s, std::uint64_t seed)
{
    std::uint64_t h = 1469598103934665603ull ^ seed;
    for (const char c : s)
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

/// The double Python gets from float(t.max()) of a float32 tensor: a float32 value widened.
double asFloat32(double v)
{
    return double(static_cast<float>(v));
}

/// The same for a bfloat16 value (round to nearest even on the top 16 bits of the float32).
double asBFloat16(double v)
{
    auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
    bits += 0x7fffu + ((bits >> 16) & 1u);
    bits &= 0xffff0000u;
    return double(std::bit_cast<float>(bits));
}

// ------------------------------------------------------------------------------------------------
// Values

enum class DType : std::uint8_t { BFloat16, Float32, Int64 };

std::string_view dtypeName(DType d)
{
    switch (d) {
    case DType::BFloat16: return "torch.bfloat16";
    case DType::Float32: return "torch.float32";
    case DType::Int64: return "torch.int64";
    }
    return "torch.float32";
}

/// A tensor; its statistics derive from `seed`, so the same tensor shows the same stats in every
/// entry it appears in (an API input and its module's input, as in real dumps).
struct TensorSpec
{
    DType dtype = DType::BFloat16;
    std::uint8_t rank = 0;
    bool requiresGrad = false;
    std::array<std::int64_t, 4> dims {};
    double scale = 1.0; ///< typical magnitude of the elements
    std::uint64_t seed = 0;

    double numel() const
    {
        double n = 1;
        for (int i = 0; i < rank; ++i)
            n *= double(dims[std::size_t(i)]);
        return n;
    }
};

/// One argument of an API call, as msprobe records it.
struct Arg
{
    enum class Kind : std::uint8_t { Tensor, Int, Float, Bool, Str, Dtype, Size, Slice, None, Tuple };
    Kind kind = Kind::None;
    TensorSpec tensor {};
    std::int64_t i = 0;
    double f = 0;
    bool b = false;
    std::string_view s;
    std::vector<std::int64_t> ints;                     // torch.Size value
    std::array<std::optional<std::int64_t>, 3> slice {}; // start, stop, step
    std::vector<Arg> items;                             // tuple / list argument

    static Arg t(const TensorSpec& spec)
    {
        Arg a;
        a.kind = Kind::Tensor;
        a.tensor = spec;
        return a;
    }
    static Arg integer(std::int64_t v)
    {
        Arg a;
        a.kind = Kind::Int;
        a.i = v;
        return a;
    }
    static Arg real(double v)
    {
        Arg a;
        a.kind = Kind::Float;
        a.f = v;
        return a;
    }
    static Arg boolean(bool v)
    {
        Arg a;
        a.kind = Kind::Bool;
        a.b = v;
        return a;
    }
    static Arg str(std::string_view v)
    {
        Arg a;
        a.kind = Kind::Str;
        a.s = v;
        return a;
    }
    static Arg dtype(DType d)
    {
        Arg a;
        a.kind = Kind::Dtype;
        a.s = dtypeName(d);
        return a;
    }
    static Arg size(std::vector<std::int64_t> dims)
    {
        Arg a;
        a.kind = Kind::Size;
        a.ints = std::move(dims);
        return a;
    }
    static Arg sliceOf(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                       std::optional<std::int64_t> step)
    {
        Arg a;
        a.kind = Kind::Slice;
        a.slice = { start, stop, step };
        return a;
    }
    static Arg none() { return Arg {}; }
    static Arg tuple(std::vector<Arg> items)
    {
        Arg a;
        a.kind = Kind::Tuple;
        a.items = std::move(items);
        return a;
    }
};

using Kwargs = std::vector<std::pair<std::string_view, Arg>>;
using Params = std::vector<std::pair<std::string_view, TensorSpec>>;

// ------------------------------------------------------------------------------------------------
// The simulated training step

struct Options
{
    std::uint64_t entries = 200000;
    std::uint64_t seed = 1;
    bool noNan = false;
    fs::path out = "gendump-out";
    int layers = 24;
};

// Model dimensions: a 7B-class decoder, so shapes have realistic digit counts.
constexpr std::int64_t kBatch = 4;
constexpr std::int64_t kSeq = 2048;
constexpr std::int64_t kHidden = 4096;
constexpr std::int64_t kHeads = 32;
constexpr std::int64_t kHeadDim = kHidden / kHeads;
constexpr std::int64_t kFfn = 11008;
constexpr std::int64_t kVocab = 32000;

/// An API call remembered for the backward pass.
struct ApiRecord
{
    std::string api; // "Functional.linear"
    std::uint32_t callIndex = 0;
    std::vector<TensorSpec> inputs; // forward tensor inputs (their grads are the backward output)
    std::vector<TensorSpec> outputs;
};

struct ModuleRecord
{
    std::string path;  // "layers.3.mlp.fc1"
    std::string cls;   // "Linear"
    std::vector<TensorSpec> inputs;
    std::vector<TensorSpec> outputs;
};

struct Event
{
    enum class Kind : std::uint8_t { Api, Enter, Exit };
    Kind kind;
    std::uint32_t index; // into apis or modules
};

class DumpGenerator
{
public:
    DumpGenerator(const Options& options, JsonWriter& dump, JsonWriter& construct, JsonWriter& stack)
        : m_opt(options)
        , m_rng(options.seed)
        , m_dump(dump)
        , m_construct(construct)
        , m_stack(stack)
    {
    }

    void run()
    {
        m_dump.beginObject();
        m_dump.key("task");
        m_dump.string("statistics");
        m_dump.key("level");
        m_dump.string("mix");
        m_dump.key("framework");
        m_dump.string("pytorch");
        m_dump.key("dump_data_dir");
        m_dump.null();
        m_dump.key("data");
        m_dump.beginObject();
        m_construct.beginObject();
        m_stack.beginObject();

        for (m_microBatch = 0; !full(); ++m_microBatch) {
            forwardPass();
            backwardPass();
        }

        m_dump.endObject();
        m_dump.endObject();
        m_construct.endObject();
        m_stack.endObject();
    }

    std::uint64_t written() const { return m_written; }

private:
    bool full() const { return m_written >= m_opt.entries; }

    // ---- tensors

    TensorSpec tensor(DType dtype, std::initializer_list<std::int64_t> dims, double scale, bool requiresGrad)
    {
        TensorSpec t;
        t.dtype = dtype;
        t.rank = static_cast<std::uint8_t>(dims.size());
        std::size_t i = 0;
        for (const auto d : dims)
            t.dims[i++] = d;
        t.scale = scale * m_rng.uniform(0.5, 2.0);
        t.requiresGrad = requiresGrad;
        t.seed = m_rng.next();
        return t;
    }
    TensorSpec act(std::initializer_list<std::int64_t> dims, double scale = 1.0)
    {
        return tensor(DType::BFloat16, dims, scale, true);
    }
    /// Parameters keep their values through the step, so their stats depend on the name only.
    TensorSpec param(std::string_view name, std::initializer_list<std::int64_t> dims, double scale)
    {
        TensorSpec t = tensor(DType::BFloat16, dims, scale, true);
        t.seed = hashString(name, m_opt.seed);
        Rng r(t.seed);
        t.scale = scale * r.uniform(0.5, 2.0);
        return t;
    }
    /// The gradient of `t`: same shape, much smaller values, no grad of its own.
    static TensorSpec gradOf(const TensorSpec& t)
    {
        TensorSpec g = t;
        g.requiresGrad = false;
        g.seed = t.seed * 0x2545f4914f6cdd1dull + 0x9e37u;
        Rng r(g.seed);
        g.scale = std::pow(10.0, r.uniform(-6.0, -2.0));
        return g;
    }

    void writeTensor(const TensorSpec& t)
    {
        Rng r(t.seed);
        const double n = t.numel();
        const double hi = t.scale * r.uniform(2.0, 6.0);
        const double lo = -t.scale * r.uniform(2.0, 6.0);
        const double mean = t.scale * r.uniform(-0.05, 0.05);
        const double norm = t.scale * std::sqrt(std::max(n, 1.0)) * r.uniform(0.3, 1.2);
        // Overflow shows up in real dumps as inf/-inf extremes and a NaN mean; drawn even with
        // --no-nan so both files hold the same values everywhere else.
        const bool unlucky = r.chance(1.0 / 4000.0);
        const bool overflow = !m_opt.noNan && t.dtype != DType::Int64 && (unlucky || t.seed == m_overflowSeed);

        m_dump.beginObject();
        m_dump.key("type");
        m_dump.string("torch.Tensor");
        m_dump.key("dtype");
        m_dump.string(dtypeName(t.dtype));
        m_dump.key("shape");
        m_dump.beginArray();
        for (int i = 0; i < t.rank; ++i)
            m_dump.integer(t.dims[std::size_t(i)]);
        m_dump.endArray();
        // msprobe 1.2 takes the statistics in the tensor's own dtype (integer tensors are converted to
        // float32 first), so bf16 tensors show short bf16 values and float32 ones long float32 values.
        const auto round = [&](double v) { return t.dtype == DType::BFloat16 ? asBFloat16(v) : asFloat32(v); };
        if (t.dtype == DType::Int64) {
            const double imax = double(kVocab - 1 - std::int64_t(r.uniform(0, 50)));
            m_dump.key("Max");
            m_dump.number(imax);
            m_dump.key("Min");
            m_dump.number(double(std::int64_t(r.uniform(0, 3))));
            m_dump.key("Mean");
            m_dump.number(round(imax * r.uniform(0.3, 0.6)));
            m_dump.key("Norm");
            m_dump.number(round(imax * std::sqrt(n) * r.uniform(0.3, 0.6)));
        } else {
            const double inf = std::numeric_limits<double>::infinity();
            m_dump.key("Max");
            m_dump.number(overflow ? inf : round(hi));
            m_dump.key("Min");
            m_dump.number(overflow ? -inf : round(lo));
            m_dump.key("Mean");
            m_dump.number(overflow ? std::numeric_limits<double>::quiet_NaN() : round(mean));
            m_dump.key("Norm");
            m_dump.number(overflow ? inf : round(norm));
        }
        m_dump.key("requires_grad");
        m_dump.boolean(t.requiresGrad);
        m_dump.endObject();
    }

    void writeArg(const Arg& a)
    {
        using K = Arg::Kind;
        switch (a.kind) {
        case K::Tensor: writeTensor(a.tensor); return;
        case K::None: m_dump.null(); return;
        case K::Tuple:
            m_dump.beginArray();
            for (const auto& item : a.items)
                writeArg(item);
            m_dump.endArray();
            return;
        default: break;
        }
        m_dump.beginObject();
        m_dump.key("type");
        switch (a.kind) {
        case K::Int:
            m_dump.string("int");
            m_dump.key("value");
            m_dump.integer(a.i);
            break;
        case K::Float:
            m_dump.string("float");
            m_dump.key("value");
            m_dump.number(a.f);
            break;
        case K::Bool:
            m_dump.string("bool");
            m_dump.key("value");
            m_dump.boolean(a.b);
            break;
        case K::Str:
            m_dump.string("str");
            m_dump.key("value");
            m_dump.string(a.s);
            break;
        case K::Dtype:
            m_dump.string("torch.dtype");
            m_dump.key("value");
            m_dump.string(a.s);
            break;
        case K::Size:
            m_dump.string("torch.Size");
            m_dump.key("value");
            m_dump.beginArray();
            for (const auto v : a.ints)
                m_dump.integer(v);
            m_dump.endArray();
            break;
        case K::Slice:
            m_dump.string("slice");
            m_dump.key("value");
            m_dump.beginArray();
            for (const auto& v : a.slice) {
                if (v)
                    m_dump.integer(*v);
                else
                    m_dump.null();
            }
            m_dump.endArray();
            break;
        default: break;
        }
        m_dump.endObject();
    }

    void writeTensorList(const std::vector<TensorSpec>& list)
    {
        m_dump.beginArray();
        for (const auto& t : list)
            writeTensor(t);
        m_dump.endArray();
    }

    // ---- construct.json and stack.json

    void construct(std::string_view key, const std::string* parent)
    {
        m_construct.key(key);
        if (parent)
            m_construct.string(*parent);
        else
            m_construct.null();
    }

    /// A plausible Python stack for a forward entry (msprobe 1.2 records stacks of forward entries only).
    void stack(std::string_view key, std::string_view site, int line)
    {
        m_stack.key(key);
        m_stack.beginArray();
        std::string frame;
        const auto add = [&](std::string_view text) { m_stack.string(text); };
        if (key.starts_with("Functional."))
            add("File /usr/local/lib/python3.10/dist-packages/msprobe/pytorch/hook_module/wrap_functional.py, "
                "line 58, in functional_op_template, \n return FunctionalOPTemplate(op_name, hook)(*args, **kwargs)");
        else if (key.starts_with("Tensor."))
            add("File /usr/local/lib/python3.10/dist-packages/msprobe/pytorch/hook_module/wrap_tensor.py, "
                "line 66, in tensor_op_template, \n return TensorOPTemplate(op_name, hook)(*args, **kwargs)");
        else if (key.starts_with("Torch."))
            add("File /usr/local/lib/python3.10/dist-packages/msprobe/pytorch/hook_module/wrap_torch.py, "
                "line 76, in torch_op_template, \n return TorchOPTemplate(op_name, hook)(*args, **kwargs)");
        frame = "File /home/user/llm/model.py, line " + std::to_string(line) + ", in forward, \n " + std::string(site);
        add(frame);
        add("File /usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py, line 1527, in _call_impl, \n "
            "return forward_call(*args, **kwargs)");
        add("File /home/user/llm/model.py, line 231, in forward, \n hidden = layer(hidden, mask)");
        add("File /home/user/llm/train.py, line 118, in train_step, \n logits = model(batch[\"input_ids\"])");
        add("File /home/user/llm/train.py, line 164, in <module>, \n train_step(model, batch, optimizer)");
        m_stack.endArray();
    }

    // ---- dump entries

    const std::string* currentModuleKey() const { return m_open.empty() ? nullptr : &m_open.back().key; }

    /// Writes a forward API entry and returns its first output.
    TensorSpec api(std::string_view prefix, std::string_view name, std::vector<Arg> args, Kwargs kwargs,
                   std::vector<TensorSpec> outputs, std::string_view site, int line, bool hasBackward = true)
    {
        if (full())
            return outputs.front();
        std::string api;
        api.reserve(prefix.size() + name.size() + 1);
        api.append(prefix).append(".").append(name);
        const std::uint32_t index = m_apiCalls[api]++;
        std::string key = api + "." + std::to_string(index) + ".forward";

        m_dump.key(key);
        m_dump.beginObject();
        m_dump.key("input_args");
        m_dump.beginArray();
        for (const auto& a : args)
            writeArg(a);
        m_dump.endArray();
        m_dump.key("input_kwargs");
        m_dump.beginObject();
        for (const auto& [k, v] : kwargs) {
            m_dump.key(k);
            writeArg(v);
        }
        m_dump.endObject();
        m_dump.key("is_recompute");
        m_dump.boolean(false);
        m_dump.key("output");
        writeTensorList(outputs);
        m_dump.endObject();
        ++m_written;

        construct(key, currentModuleKey());
        stack(key, site, line);

        if (hasBackward) {
            ApiRecord rec;
            rec.api = std::move(api);
            rec.callIndex = index;
            for (const auto& a : args)
                if (a.kind == Arg::Kind::Tensor)
                    rec.inputs.push_back(a.tensor);
            rec.outputs = outputs;
            m_events.push_back({ Event::Kind::Api, std::uint32_t(m_apis.size()) });
            m_apis.push_back(std::move(rec));
        }
        return outputs.front();
    }

    void enterModule(std::string path, std::string_view cls, std::vector<TensorSpec> inputs, Params params = {})
    {
        OpenModule m;
        m.path = std::move(path);
        m.cls = cls;
        m.inputs = std::move(inputs);
        m.params = std::move(params);
        const std::uint32_t n = m_moduleCalls[m.path]++;
        m.key = "Module." + m.path + "." + m.cls + ".forward." + std::to_string(n);
        m.parent = m_open.empty() ? std::optional<std::string>() : std::optional<std::string>(m_open.back().key);
        m.moduleIndex = std::uint32_t(m_modules.size());
        m_modules.push_back({ m.path, m.cls, m.inputs, {} });
        m_events.push_back({ Event::Kind::Enter, m.moduleIndex });
        m_open.push_back(std::move(m));
    }

    /// Writes the module's forward entry (msprobe writes it when the forward completes) and, for the
    /// first micro-batch, its parameters_grad entry right after it as msprobe 1.2 does.
    void exitModule(std::vector<TensorSpec> outputs, std::string_view site, int line)
    {
        OpenModule m = std::move(m_open.back());
        m_open.pop_back();
        m_modules[m.moduleIndex].outputs = outputs;
        m_events.push_back({ Event::Kind::Exit, m.moduleIndex });
        if (full())
            return;

        m_dump.key(m.key);
        m_dump.beginObject();
        m_dump.key("input_args");
        writeTensorList(m.inputs);
        m_dump.key("input_kwargs");
        m_dump.beginObject();
        m_dump.endObject();
        m_dump.key("output");
        writeTensorList(outputs);
        m_dump.key("parameters");
        m_dump.beginObject();
        for (const auto& [name, t] : m.params) {
            m_dump.key(name);
            writeTensor(t);
        }
        m_dump.endObject();
        m_dump.key("is_recompute");
        m_dump.boolean(false);
        m_dump.endObject();
        ++m_written;
        construct(m.key, m.parent ? &*m.parent : nullptr);
        stack(m.key, site, line);

        if (m_microBatch == 0 && !m.params.empty() && !full()) {
            m_dump.key("Module." + m.path + "." + m.cls + ".parameters_grad");
            m_dump.beginObject();
            for (const auto& [name, t] : m.params) {
                m_dump.key(name);
                m_dump.beginArray();
                writeTensor(gradOf(t));
                m_dump.endArray();
            }
            m_dump.endObject();
            ++m_written;
        }
    }

    void backwardEntry(const std::string& key, const std::vector<TensorSpec>& outputs,
                       const std::vector<TensorSpec>& inputs)
    {
        m_dump.key(key);
        m_dump.beginObject();
        // Backward "input" holds the gradients flowing in (w.r.t. the forward outputs), "output" the
        // gradients produced (w.r.t. the forward inputs); integer inputs get no gradient (null).
        m_dump.key("input");
        m_dump.beginArray();
        for (const auto& t : outputs)
            writeTensor(gradOf(t));
        m_dump.endArray();
        m_dump.key("output");
        m_dump.beginArray();
        for (const auto& t : inputs) {
            if (t.dtype == DType::Int64)
                m_dump.null();
            else
                writeTensor(gradOf(t));
        }
        m_dump.endArray();
        m_dump.endObject();
        ++m_written;
    }

    void backwardPass()
    {
        std::vector<std::string> open; // backward keys of the modules being back-propagated
        for (auto it = m_events.rbegin(); it != m_events.rend() && !full(); ++it) {
            switch (it->kind) {
            case Event::Kind::Api: {
                const auto& rec = m_apis[it->index];
                const std::string key = rec.api + "." + std::to_string(rec.callIndex) + ".backward";
                backwardEntry(key, rec.outputs, rec.inputs);
                // msprobe 1.2 leaves backward API nodes without a parent in construct.json.
                construct(key, nullptr);
                break;
            }
            case Event::Kind::Exit: { // reversed: the module's backward starts
                const auto& mod = m_modules[it->index];
                const std::uint32_t n = m_moduleBackwardCalls[mod.path]++;
                open.push_back("Module." + mod.path + "." + mod.cls + ".backward." + std::to_string(n));
                break;
            }
            case Event::Kind::Enter: { // reversed: the module's backward completes
                const auto& mod = m_modules[it->index];
                const std::string key = std::move(open.back());
                open.pop_back();
                backwardEntry(key, mod.outputs, mod.inputs);
                construct(key, open.empty() ? nullptr : &open.back());
                break;
            }
            }
        }
        m_events.clear();
        m_apis.clear();
        m_modules.clear();
    }

    // ---- the model

    /// LLaMA's RMSNorm: no functional op of its own, so it shows up as a run of small Tensor ops.
    TensorSpec rmsNorm(const std::string& path, const TensorSpec& x)
    {
        const auto w = param(path + ".weight", { kHidden }, 1.0);
        enterModule(path, "RMSNorm", { x }, { { "weight", w } });
        const auto f32 = [&](std::initializer_list<std::int64_t> dims, double scale) {
            return tensor(DType::Float32, dims, scale, true);
        };
        const auto x32 = api("Tensor", "to", { Arg::t(x), Arg::dtype(DType::Float32) }, {},
                             { f32({ kBatch, kSeq, kHidden }, 1.0) }, "hidden_states = hidden_states.to(torch.float32)", 72);
        const auto sq = api("Tensor", "pow", { Arg::t(x32), Arg::integer(2) }, {}, { f32({ kBatch, kSeq, kHidden }, 1.0) },
                            "variance = hidden_states.pow(2).mean(-1, keepdim=True)", 73);
        const auto var = api("Tensor", "mean", { Arg::t(sq), Arg::integer(-1) }, { { "keepdim", Arg::boolean(true) } },
                             { f32({ kBatch, kSeq, 1 }, 1.0) }, "variance = hidden_states.pow(2).mean(-1, keepdim=True)", 73);
        const auto eps = api("Tensor", "__add__", { Arg::t(var), Arg::real(1e-06) }, {}, { f32({ kBatch, kSeq, 1 }, 1.0) },
                             "hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", 74);
        const auto inv = api("Torch", "rsqrt", { Arg::t(eps) }, {}, { f32({ kBatch, kSeq, 1 }, 1.0) },
                             "hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", 74);
        const auto normed = api("Tensor", "__mul__", { Arg::t(x32), Arg::t(inv) }, {}, { f32({ kBatch, kSeq, kHidden }, 1.0) },
                                "hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)", 74);
        const auto back = api("Tensor", "to", { Arg::t(normed), Arg::dtype(DType::BFloat16) }, {},
                              { act({ kBatch, kSeq, kHidden }) }, "return self.weight * hidden_states.to(input_dtype)", 75);
        const auto y = api("Tensor", "__mul__", { Arg::t(w), Arg::t(back) }, {}, { act({ kBatch, kSeq, kHidden }) },
                           "return self.weight * hidden_states.to(input_dtype)", 75);
        exitModule({ y }, "h = self.norm(x)", 88);
        return y;
    }

    /// A bias-free projection (LLaMA style): F.linear(x, weight, None).
    TensorSpec linear(const std::string& path, const TensorSpec& x, std::int64_t in, std::int64_t out)
    {
        const auto w = param(path + ".weight", { out, in }, 0.02);
        enterModule(path, "Linear", { x }, { { "weight", w } });
        const auto y = api("Functional", "linear", { Arg::t(x), Arg::t(w), Arg::none() }, {},
                           { act({ kBatch, kSeq, out }) }, "return F.linear(input, self.weight, self.bias)", 114);
        exitModule({ y }, "y = self.proj(x)", 97);
        return y;
    }

    TensorSpec attention(const std::string& path, const TensorSpec& x)
    {
        enterModule(path, "SelfAttention", { x });
        const auto qkv = linear(path + ".qkv_proj", x, kHidden, 3 * kHidden);
        std::vector<TensorSpec> parts { act({ kBatch, kSeq, kHidden }), act({ kBatch, kSeq, kHidden }),
                                        act({ kBatch, kSeq, kHidden }) };
        api("Tensor", "chunk", { Arg::t(qkv), Arg::integer(3) }, { { "dim", Arg::integer(-1) } }, parts,
            "q, k, v = qkv.chunk(3, dim=-1)", 131);
        std::vector<TensorSpec> heads;
        for (const auto& p : parts) {
            const auto v = api("Tensor", "view", { Arg::t(p), Arg::size({ kBatch, kSeq, kHeads, kHeadDim }) }, {},
                               { act({ kBatch, kSeq, kHeads, kHeadDim }) }, "q = q.view(b, s, self.heads, self.head_dim)", 133);
            heads.push_back(api("Tensor", "transpose", { Arg::t(v), Arg::integer(1), Arg::integer(2) }, {},
                                { act({ kBatch, kHeads, kSeq, kHeadDim }) }, "q = q.transpose(1, 2)", 134));
        }
        const auto scoresOut = act({ kBatch, kHeads, kSeq, kSeq }, 8.0);
        // The first attention scores overflow, so even a small dump holds NaN/Infinity tokens to parse.
        if (m_overflowSeed == 0)
            m_overflowSeed = scoresOut.seed;
        const auto scores = api("Torch", "matmul", { Arg::t(heads[0]), Arg::t(heads[1]) }, {},
                                { scoresOut }, "scores = torch.matmul(q, k.transpose(-2, -1))", 137);
        const auto scaled = api("Tensor", "__truediv__", { Arg::t(scores), Arg::real(11.313708498984761) }, {},
                                { act({ kBatch, kHeads, kSeq, kSeq }) }, "scores = scores / math.sqrt(self.head_dim)", 137);
        const auto probs = api("Functional", "softmax", { Arg::t(scaled) },
                               { { "dim", Arg::integer(-1) }, { "_stacklevel", Arg::integer(3) }, { "dtype", Arg::dtype(DType::Float32) } },
                               { tensor(DType::Float32, { kBatch, kHeads, kSeq, kSeq }, 0.01, true) },
                               "probs = F.softmax(scores, dim=-1, dtype=torch.float32)", 139);
        const auto dropped = api("Functional", "dropout", { Arg::t(probs) },
                                 { { "p", Arg::real(0.1) }, { "training", Arg::boolean(true) }, { "inplace", Arg::boolean(false) } },
                                 { tensor(DType::Float32, { kBatch, kHeads, kSeq, kSeq }, 0.01, true) },
                                 "probs = self.dropout(probs)", 140);
        const auto ctx = api("Torch", "matmul", { Arg::t(dropped), Arg::t(heads[2]) }, {},
                             { act({ kBatch, kHeads, kSeq, kHeadDim }) }, "ctx = torch.matmul(probs, v)", 141);
        const auto ctxT = api("Tensor", "transpose", { Arg::t(ctx), Arg::integer(1), Arg::integer(2) }, {},
                              { act({ kBatch, kSeq, kHeads, kHeadDim }) }, "ctx = ctx.transpose(1, 2)", 142);
        const auto merged = api("Tensor", "reshape", { Arg::t(ctxT), Arg::size({ kBatch, kSeq, kHidden }) }, {},
                                { act({ kBatch, kSeq, kHidden }) }, "ctx = ctx.reshape(b, s, -1)", 142);
        const auto sliced = api("Tensor", "__getitem__",
                                { Arg::t(merged), Arg::tuple({ Arg::sliceOf({}, {}, {}), Arg::sliceOf(0, kSeq, {}) }) }, {},
                                { act({ kBatch, kSeq, kHidden }) }, "ctx = ctx[:, :s]", 143);
        const auto out = linear(path + ".o_proj", sliced, kHidden, kHidden);
        exitModule({ out }, "a = self.attn(self.input_layernorm(x))", 161);
        return out;
    }

    TensorSpec mlp(const std::string& path, const TensorSpec& x)
    {
        enterModule(path, "MLP", { x });
        const auto h = linear(path + ".fc1", x, kHidden, kFfn);
        const auto g = api("Functional", "gelu", { Arg::t(h) }, { { "approximate", Arg::str("none") } },
                           { act({ kBatch, kSeq, kFfn }) }, "h = F.gelu(self.fc1(x))", 176);
        const auto y = linear(path + ".fc2", g, kFfn, kHidden);
        exitModule({ y }, "m = self.mlp(self.post_attention_layernorm(x))", 164);
        return y;
    }

    TensorSpec transformerLayer(int i, const TensorSpec& x)
    {
        const std::string path = "layers." + std::to_string(i);
        enterModule(path, "TransformerLayer", { x });
        const auto a = attention(path + ".self_attn", rmsNorm(path + ".input_layernorm", x));
        const auto h = api("Tensor", "__add__", { Arg::t(x), Arg::t(a) }, {}, { act({ kBatch, kSeq, kHidden }) },
                           "x = x + a", 162);
        const auto m = mlp(path + ".mlp", rmsNorm(path + ".post_attention_layernorm", h));
        const auto y = api("Tensor", "__add__", { Arg::t(h), Arg::t(m) }, {}, { act({ kBatch, kSeq, kHidden }) },
                           "return x + m", 165);
        exitModule({ y }, "hidden = layer(hidden, mask)", 231);
        return y;
    }

    void forwardPass()
    {
        const auto ids = tensor(DType::Int64, { kBatch, kSeq }, 1.0, false);
        const auto table = param("embed_tokens.weight", { kVocab, kHidden }, 0.02);
        enterModule("embed_tokens", "Embedding", { ids }, { { "weight", table } });
        auto h = api("Functional", "embedding",
                     { Arg::t(ids), Arg::t(table), Arg::none(), Arg::none(), Arg::real(2.0), Arg::boolean(false), Arg::boolean(false) },
                     {}, { act({ kBatch, kSeq, kHidden }) },
                     "return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type, "
                     "self.scale_grad_by_freq, self.sparse)", 162);
        exitModule({ h }, "hidden = self.embed_tokens(input_ids)", 226);

        for (int i = 0; i < m_opt.layers && !full(); ++i)
            h = transformerLayer(i, h);

        h = rmsNorm("norm", h);
        const auto logits = linear("lm_head", h, kHidden, kVocab);
        const auto logits32 = api("Tensor", "to", { Arg::t(logits), Arg::dtype(DType::Float32) }, {},
                                  { tensor(DType::Float32, { kBatch, kSeq, kVocab }, 4.0, true) }, "logits = logits.to(torch.float32)", 240);
        const auto flat = api("Tensor", "view", { Arg::t(logits32), Arg::integer(-1), Arg::integer(kVocab) }, {},
                              { tensor(DType::Float32, { kBatch * kSeq, kVocab }, 4.0, true) }, "logits.view(-1, logits.size(-1))", 121);
        const auto labels = tensor(DType::Int64, { kBatch * kSeq }, 1.0, false);
        api("Functional", "cross_entropy", { Arg::t(flat), Arg::t(labels) },
            { { "ignore_index", Arg::integer(-100) }, { "reduction", Arg::str("mean") } },
            { tensor(DType::Float32, {}, 8.0, true) }, "loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))", 121);
    }

    struct OpenModule
    {
        std::string path;
        std::string cls;
        std::string key;
        std::optional<std::string> parent;
        std::vector<TensorSpec> inputs;
        Params params;
        std::uint32_t moduleIndex = 0;
    };

    const Options& m_opt;
    Rng m_rng;
    JsonWriter& m_dump;
    JsonWriter& m_construct;
    JsonWriter& m_stack;
    std::uint64_t m_written = 0;
    std::uint64_t m_overflowSeed = 0; // seed of the tensor forced to overflow (0: not chosen yet)
    int m_microBatch = 0;
    std::unordered_map<std::string, std::uint32_t> m_apiCalls;
    std::unordered_map<std::string, std::uint32_t> m_moduleCalls;
    std::unordered_map<std::string, std::uint32_t> m_moduleBackwardCalls;
    std::vector<OpenModule> m_open;
    std::vector<Event> m_events;
    std::vector<ApiRecord> m_apis;
    std::vector<ModuleRecord> m_modules;
};

// ------------------------------------------------------------------------------------------------

void printUsage(std::FILE* to)
{
    std::fputs("usage: probescope-gendump [--entries N] [--seed S] [--no-nan] [--layers L] [--out DIR]\n"
               "       probescope-gendump job --help   (a job of many ranks and steps, see genjob.cpp)\n"
               "Writes DIR/step0/rank0/{dump.json,construct.json,stack.json}: a synthetic msprobe\n"
               "statistics-mode dump (level mix) of N entries (default 200000, about 150 MB).\n"
               "  --seed S    same seed, same bytes (default 1)\n"
               "  --no-nan    never write NaN/Infinity tokens, so strict JSON parsers can read the file\n"
               "  --layers L  transformer layers per micro-batch (default 24)\n"
               "  --out DIR   output folder (default ./gendump-out)\n",
               to);
}

} // namespace
} // namespace probescope::bench

namespace probescope::bench {
int genJobMain(int argc, char** argv); // genjob.cpp: `probescope-gendump job ...`, many ranks and steps
}

int main(int argc, char** argv)
{
    using namespace probescope::bench;
    if (argc > 1 && std::string_view(argv[1]) == "job")
        return genJobMain(argc - 1, argv + 1);
    Options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&] { return optionValue("probescope-gendump", argc, argv, i); };
        bool ok = true;
        if (a == "--entries")
            ok = parseNumber(value(), opt.entries);
        else if (a == "--seed")
            ok = parseNumber(value(), opt.seed);
        else if (a == "--layers")
            ok = parseNumber(value(), opt.layers) && opt.layers >= 0;
        else if (a == "--no-nan")
            opt.noNan = true;
        else if (a == "--out")
            opt.out = std::string(value());
        else if (a == "-h" || a == "--help") {
            printUsage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "probescope-gendump: unknown argument '%s'\n", argv[i]);
            printUsage(stderr);
            return 2;
        }
        if (!ok) {
            std::fprintf(stderr, "probescope-gendump: bad value for %s\n", argv[i - 1]);
            return 2;
        }
    }

    const fs::path dir = opt.out / "step0" / "rank0";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        std::fprintf(stderr, "probescope-gendump: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
        return 1;
    }

    OutFile dumpFile(dir / "dump.json");
    OutFile constructFile(dir / "construct.json");
    OutFile stackFile(dir / "stack.json");
    for (const OutFile* f : { &dumpFile, &constructFile, &stackFile }) {
        if (!f->isOpen()) {
            std::fprintf(stderr, "probescope-gendump: cannot write %s\n", f->path().c_str());
            return 1;
        }
    }

    JsonWriter dump(dumpFile);
    JsonWriter construct(constructFile);
    JsonWriter stack(stackFile);
    DumpGenerator gen(opt, dump, construct, stack);
    gen.run();

    int rc = 0;
    for (OutFile* f : { &dumpFile, &constructFile, &stackFile }) {
        const auto bytes = f->bytes();
        if (!f->close()) {
            std::fprintf(stderr, "probescope-gendump: writing %s failed\n", f->path().c_str());
            rc = 1;
        }
        std::printf("%s: %llu bytes (%.1f MB)\n", f->path().c_str(), static_cast<unsigned long long>(bytes),
                    double(bytes) / 1e6);
    }
    std::printf("entries: %llu%s\n", static_cast<unsigned long long>(gen.written()),
                opt.noNan ? " (no NaN/Infinity)" : "");
    return rc;
}
