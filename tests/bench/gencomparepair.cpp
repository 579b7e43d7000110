// SPDX-License-Identifier: Apache-2.0
//
// probescope-gencomparepair: writes a synthetic msprobe 1.2.2 tensor-mode dump pair (level "mix"),
// OUT/npu/step0/rank and OUT/bench/step0/rank, each with dump.json, stack.json, construct.json and a
// dump_tensor_data folder holding one .pt file per tensor leaf, so the real-data compare can be
// benchmarked on realistic input: thousands of small files, where the per-file cost decides.
//
// The JSON files are laid out as Python's json.dump(indent=1) writes them (the writer is shared in
// spirit with probescope-gendump). The .pt files are what torch.save(t, path) writes with torch 1.13:
// the same zip writer (PyTorchStreamWriter, archive folder named after the file) and a data.pkl that
// reproduces Python's pickler byte for byte, so a reader tuned on these files is tuned on real ones.
//
// The simulated run is a stack of residual MLP blocks (LayerNorm -> Linear -> relu -> Linear -> add),
// one forward and one backward pass. The bench side equals the NPU side except for tiny perturbations
// in about one tensor in five and one API (a relu in the middle layer) with a large injected error.

#include "benchargs.h"
#include "benchjson.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace probescope::bench {
namespace {


std::uint64_t hashString(std::string_view s, std::uint64_t seed)
{
    std::uint64_t h = 1469598103934665603ull ^ (seed * 0x9e3779b97f4a7c15ull);
    for (const char c : s)
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

/// Standard normal numbers from splitMix (Box-Muller), so the data does not depend on torch's generators.
class Normal
{
public:
    explicit Normal(std::uint64_t seed)
        : m_state(seed)
    {
    }
    double next()
    {
        if (m_hasSpare) {
            m_hasSpare = false;
            return m_spare;
        }
        const double u1 = (double(splitMix(m_state) >> 11) + 1.0) * 0x1p-53; // (0, 1]: log stays finite
        const double u2 = double(splitMix(m_state) >> 11) * 0x1p-53;
        const double r = std::sqrt(-2.0 * std::log(u1));
        m_spare = r * std::sin(2.0 * std::numbers::pi * u2);
        m_hasSpare = true;
        return r * std::cos(2.0 * std::numbers::pi * u2);
    }
    double uniform() { return double(splitMix(m_state) >> 11) * 0x1p-53; }

private:
    std::uint64_t m_state;
    double m_spare = 0; // Box-Muller makes two numbers at a time
    bool m_hasSpare = false;
};

// ------------------------------------------------------------------------------------------------
// torch.save

void appendLe(std::string& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += char((v >> (8 * i)) & 0xff);
}

/// Python's pickle int opcodes (protocol 2): BININT1, BININT2, BININT, else LONG1.
void pickleInt(std::string& p, std::int64_t v)
{
    if (v >= 0 && v <= 0xff) {
        p += 'K';
        appendLe(p, std::uint64_t(v), 1);
    } else if (v >= 0 && v <= 0xffff) {
        p += 'M';
        appendLe(p, std::uint64_t(v), 2);
    } else if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max()) {
        p += 'J';
        appendLe(p, std::uint64_t(std::uint32_t(std::int32_t(v))), 4);
    } else {
        // Minimal two's complement, little endian, as pickle.encode_long.
        std::string bytes;
        std::int64_t x = v;
        do {
            bytes += char(x & 0xff);
            x >>= 8;
        } while (!((x == 0 && !(bytes.back() & 0x80)) || (x == -1 && (bytes.back() & 0x80))));
        p += '\x8a';
        p += char(bytes.size());
        p += bytes;
    }
}

/// Python's pickler memoizes every tuple, string and global it writes (BINPUT n, n counting up).
class PickleMemo
{
public:
    void put(std::string& p)
    {
        p += 'q';
        p += char(m_next++); // fewer than 256 memo entries in a tensor pickle
    }

private:
    int m_next = 0;
};

void pickleString(std::string& p, PickleMemo& memo, std::string_view s)
{
    p += 'X';
    appendLe(p, s.size(), 4);
    p += s;
    memo.put(p);
}

/// A tuple of ints as Python's save_tuple writes it: EMPTY_TUPLE (not memoized), TUPLE1-3, or MARK ... TUPLE.
void pickleIntTuple(std::string& p, PickleMemo& memo, const std::vector<std::int64_t>& values)
{
    if (values.empty()) {
        p += ')';
        return;
    }
    if (values.size() > 3)
        p += '(';
    for (const std::int64_t v : values)
        pickleInt(p, v);
    static constexpr std::array<char, 4> kTupleN = { 0, '\x85', '\x86', '\x87' };
    p += values.size() > 3 ? 't' : kTupleN[values.size()];
    memo.put(p);
}

/**
 * The data.pkl torch.save (torch 1.13, protocol 2) writes for a contiguous, detached CPU tensor:
 * _rebuild_tensor_v2(persistent storage ('storage', torch.XStorage, '0', 'cpu', numel), 0, size, stride,
 * False, OrderedDict()). msprobe saves detached tensors, so requires_grad is always False in the file.
 */
std::string tensorPickle(std::string_view storageType, const std::vector<std::int64_t>& shape)
{
    std::vector<std::int64_t> stride(shape.size());
    std::int64_t numel = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        stride[i] = numel;
        numel *= shape[i];
    }
    std::string p;
    PickleMemo memo;
    p += "\x80\x02";
    p += "ctorch._utils\n_rebuild_tensor_v2\n";
    memo.put(p);
    p += '(';
    p += '(';
    pickleString(p, memo, "storage");
    p += "ctorch\n";
    p += storageType;
    p += '\n';
    memo.put(p);
    pickleString(p, memo, "0");
    pickleString(p, memo, "cpu");
    pickleInt(p, numel);
    p += 't';
    memo.put(p);
    p += 'Q'; // BINPERSID
    pickleInt(p, 0);
    pickleIntTuple(p, memo, shape);
    pickleIntTuple(p, memo, stride);
    p += '\x89'; // NEWFALSE
    p += "ccollections\nOrderedDict\n";
    memo.put(p);
    p += ')';
    p += 'R';
    memo.put(p);
    p += 't';
    memo.put(p);
    p += 'R';
    memo.put(p);
    p += '.';
    return p;
}

/// torch.save(t, path) for a float32 tensor: the file-name writer names the archive folder after the file.
void savePt(const fs::path& path, const std::vector<std::int64_t>& shape, const std::vector<float>& values)
{
    const std::string pickle = tensorPickle("FloatStorage", shape);
    caffe2::serialize::PyTorchStreamWriter writer(path.string());
    writer.writeRecord("data.pkl", pickle.data(), pickle.size());
    writer.writeRecord("data/0", values.data(), values.size() * sizeof(float));
    writer.writeEndOfFile();
}

// ------------------------------------------------------------------------------------------------
// The simulated run

struct Options
{
    std::uint64_t entries = 4000;
    std::uint64_t seed = 1;
    fs::path out = "gencomparepair-out";
};

// Sizes: small on purpose (at most 2048 elements, 8 KiB of data per file) so the compare is dominated by
// the per-file cost, as with the many small tensors of a real mix-level dump.
constexpr std::int64_t kTokens = 8;
constexpr std::int64_t kHidden = 32;
constexpr std::int64_t kFfn = 64;
constexpr int kEntriesPerLayer = 21; // 12 forward (incl. 3 parameters_grad) + 9 backward

/// What a tensor holds: decides its magnitude and sign.
enum class Role : std::uint8_t { Activation, Positive, Weight, Bias, Gamma, Beta, Grad };

struct Stats
{
    double max = 0, min = 0, mean = 0, norm = 0;
};

/// One rank folder being written: its JSON writers and tensor folder.
struct Side
{
    fs::path dir;
    fs::path tensorDir;
    std::unique_ptr<OutFile> dumpFile, constructFile, stackFile;
    std::unique_ptr<JsonWriter> dump, construct, stack;
    std::uint64_t ptFiles = 0;
    std::uint64_t ptBytes = 0;
};

class PairGenerator
{
public:
    PairGenerator(const Options& options, Side& npu, Side& bench)
        : m_opt(options)
        , m_npu(npu)
        , m_bench(bench)
        , m_layers(int((options.entries + kEntriesPerLayer - 1) / kEntriesPerLayer))
        , m_errorLayer(m_layers / 2)
    {
    }

    void run()
    {
        for (Side* s : { &m_npu, &m_bench }) {
            s->dump->beginObject();
            s->dump->key("task");
            s->dump->string("tensor");
            s->dump->key("level");
            s->dump->string("mix");
            s->dump->key("framework");
            s->dump->string("pytorch");
            s->dump->key("dump_data_dir");
            s->dump->string(std::string(s == &m_npu ? "npu" : "bench") + "/step0/rank/dump_tensor_data");
            s->dump->key("data");
            s->dump->beginObject();
            s->construct->beginObject();
            s->stack->beginObject();
        }
        for (int layer = 0; layer < m_layers; ++layer)
            forwardLayer(layer);
        for (int layer = m_layers - 1; layer >= 0; --layer)
            backwardLayer(layer);
        for (Side* s : { &m_npu, &m_bench }) {
            s->dump->endObject();
            s->dump->endObject();
            s->construct->endObject();
            s->stack->endObject();
        }
    }

    std::uint64_t entries() const { return m_entries; }
    std::uint64_t leaves() const { return m_leaves; }
    std::uint64_t tensors() const { return m_tensors; }
    std::uint64_t perturbed() const { return m_perturbed; }
    const std::string& errorApi() const { return m_errorApi; }

private:
    // ---- JSON helpers writing the same structure to both sides
    template<typename F>
    void both(F&& f)
    {
        f(*m_npu.dump);
        f(*m_bench.dump);
    }

    void beginEntry(const std::string& key)
    {
        ++m_entries;
        both([&](JsonWriter& w) {
            w.key(key);
            w.beginObject();
        });
    }
    void endEntry()
    {
        both([](JsonWriter& w) { w.endObject(); });
    }
    void key(std::string_view k)
    {
        both([&](JsonWriter& w) { w.key(k); });
    }
    void beginArray()
    {
        both([](JsonWriter& w) { w.beginArray(); });
    }
    void endArray()
    {
        both([](JsonWriter& w) { w.endArray(); });
    }
    void beginObject()
    {
        both([](JsonWriter& w) { w.beginObject(); });
    }
    void endObject()
    {
        both([](JsonWriter& w) { w.endObject(); });
    }
    void emptyObject(std::string_view k)
    {
        key(k);
        beginObject();
        endObject();
    }
    void isRecompute()
    {
        key("is_recompute");
        both([](JsonWriter& w) { w.boolean(false); });
    }
    void intLeaf(std::int64_t v)
    {
        ++m_leaves;
        both([&](JsonWriter& w) {
            w.beginObject();
            w.key("type");
            w.string("int");
            w.key("value");
            w.integer(v);
            w.endObject();
        });
    }
    void floatLeaf(double v)
    {
        ++m_leaves;
        both([&](JsonWriter& w) {
            w.beginObject();
            w.key("type");
            w.string("float");
            w.key("value");
            w.number(v);
            w.endObject();
        });
    }

    // ---- tensors

    /// Element values of a tensor: a function of its name and the seed only, so a rerun gives the same bytes.
    std::vector<float> values(const std::string& name, const std::vector<std::int64_t>& shape, Role role) const
    {
        std::int64_t numel = 1;
        for (const auto d : shape)
            numel *= d;
        Normal rng(hashString(name, m_opt.seed));
        std::vector<float> v(static_cast<std::size_t>(numel));
        for (float& x : v) {
            const double n = rng.next();
            switch (role) {
            case Role::Activation: x = float(n); break;
            case Role::Positive: x = float(std::max(0.0, n)); break;
            case Role::Weight: x = float(n * 0.1); break;
            case Role::Bias: x = float(n * 0.02); break;
            case Role::Gamma: x = float(1.0 + n * 0.01); break;
            case Role::Beta: x = float(n * 0.01); break;
            case Role::Grad: x = float(n * 1e-3); break;
            }
        }
        return v;
    }

    /// What the bench run would hold: mostly the same bits; sometimes float noise of a different kernel;
    /// once, the clearly wrong result of a broken API.
    std::vector<float> benchValues(const std::string& name, const std::vector<float>& npu, bool injectError)
    {
        Normal rng(hashString(name, m_opt.seed ^ 0xbe9c4u));
        std::vector<float> v = npu;
        if (injectError) {
            for (float& x : v)
                x = float(double(x) + 0.5 * rng.next());
            return v;
        }
        if (rng.uniform() >= 0.2)
            return v;
        ++m_perturbed;
        // Relative noise of a few float32 ulps to 1e-3 on some elements: the error ratios land between 0 and 1.
        const double level = std::pow(10.0, -3.0 - 3.0 * rng.uniform());
        for (float& x : v)
            if (rng.uniform() < 0.5)
                x = float(double(x) * (1.0 + level * rng.next()));
        return v;
    }

    /// The statistics msprobe writes: torch's float32 max/min/mean/norm, widened by Python's float().
    static Stats statsOf(const std::vector<std::int64_t>& shape, std::vector<float>& values)
    {
        const at::Tensor t = at::from_blob(values.data(), at::IntArrayRef(shape), at::kFloat);
        Stats s;
        s.max = double(t.max().item<float>());
        s.min = double(t.min().item<float>());
        s.mean = double(t.mean().item<float>());
        s.norm = double(t.norm().item<float>());
        return s;
    }

    void writeLeaf(Side& side, const std::vector<std::int64_t>& shape, const Stats& s, bool requiresGrad,
                   const std::string& dataName)
    {
        JsonWriter& w = *side.dump;
        w.beginObject();
        w.key("type");
        w.string("torch.Tensor");
        w.key("dtype");
        w.string("torch.float32");
        w.key("shape");
        w.beginArray();
        for (const auto d : shape)
            w.integer(d);
        w.endArray();
        w.key("Max");
        w.number(s.max);
        w.key("Min");
        w.number(s.min);
        w.key("Mean");
        w.number(s.mean);
        w.key("Norm");
        w.number(s.norm);
        w.key("requires_grad");
        w.boolean(requiresGrad);
        w.key("data_name");
        w.string(dataName);
        w.endObject();
    }

    void savePtCounted(Side& side, const std::string& dataName, const std::vector<std::int64_t>& shape,
                       const std::vector<float>& v)
    {
        const fs::path path = side.tensorDir / dataName;
        savePt(path, shape, v);
        ++side.ptFiles;
        std::error_code ec;
        side.ptBytes += fs::file_size(path, ec);
    }

    /// A tensor leaf named `name` (its row name; the file is name + ".pt"), written to both sides.
    void tensor(const std::string& name, std::vector<std::int64_t> shape, Role role, bool requiresGrad)
    {
        ++m_leaves;
        ++m_tensors;
        const std::string dataName = name + ".pt";
        std::vector<float> npu = values(name, shape, role);
        const bool inject = !m_errorApi.empty() && name.compare(0, m_errorApi.size(), m_errorApi) == 0
            && name.size() > m_errorApi.size() && name[m_errorApi.size()] == '.';
        std::vector<float> bench = benchValues(name, npu, inject);
        writeLeaf(m_npu, shape, statsOf(shape, npu), requiresGrad, dataName);
        writeLeaf(m_bench, shape, statsOf(shape, bench), requiresGrad, dataName);
        savePtCounted(m_npu, dataName, shape, npu);
        savePtCounted(m_bench, dataName, shape, bench);
    }

    // ---- construct.json / stack.json (written identically on both sides)

    void construct(const std::string& key, const std::string* parent)
    {
        for (Side* s : { &m_npu, &m_bench }) {
            s->construct->key(key);
            if (parent)
                s->construct->string(*parent);
            else
                s->construct->null();
        }
    }

    /// msprobe 1.2.2 records stacks of forward entries only; frames are short but shaped like real ones.
    void stack(const std::string& key, std::string_view hookFrame, int modelLine, std::string_view code)
    {
        for (Side* s : { &m_npu, &m_bench }) {
            JsonWriter& w = *s->stack;
            w.key(key);
            w.beginArray();
            if (!hookFrame.empty())
                w.string(hookFrame);
            w.string("File /home/user/train/model.py, line " + std::to_string(modelLine) + ", in forward, \n "
                     + std::string(code));
            w.string("File /usr/lib/python3/dist-packages/torch/nn/modules/module.py, line 1194, in _call_impl, \n "
                     "return forward_call(*input, **kwargs)");
            w.string("File /home/user/train/model.py, line 71, in forward, \n for block in self.layers: x = block(x)");
            w.string("File /usr/lib/python3/dist-packages/torch/nn/modules/module.py, line 1194, in _call_impl, \n "
                     "return forward_call(*input, **kwargs)");
            w.string("File /home/user/train/run_dump.py, line 66, in main, \n out = model(x)");
            w.string("File /home/user/train/run_dump.py, line 81, in <module>, \n main()");
            w.endArray();
        }
    }

    static constexpr std::string_view kFunctionalFrame =
        "File /usr/local/lib/python3.11/dist-packages/msprobe/pytorch/hook_module/wrap_functional.py, line 58, in "
        "functional_op_template, \n return FunctionalOPTemplate(op_name, hook)(*args, **kwargs)";
    static constexpr std::string_view kTensorFrame =
        "File /usr/local/lib/python3.11/dist-packages/msprobe/pytorch/hook_module/wrap_tensor.py, line 57, in "
        "tensor_op_template, \n return TensorOPTemplate(op_name, hook)(*args, **kwargs)";

    // ---- entries

    static std::string moduleKey(int layer, std::string_view path, std::string_view cls, std::string_view dir)
    {
        return "Module.layers." + std::to_string(layer) + (path.empty() ? "" : ".") + std::string(path) + "."
            + std::string(cls) + "." + std::string(dir) + ".0";
    }

    /// A module's forward entry: msprobe writes it when its forward returns, after the APIs inside it.
    void moduleForward(const std::string& entry, const std::vector<std::int64_t>& inShape,
                       const std::vector<std::int64_t>& outShape, Role outRole,
                       const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& params,
                       const std::vector<Role>& paramRoles)
    {
        beginEntry(entry);
        key("input_args");
        beginArray();
        tensor(entry + ".input.0", inShape, Role::Activation, true);
        endArray();
        emptyObject("input_kwargs");
        key("output");
        beginArray();
        tensor(entry + ".output.0", outShape, outRole, true);
        endArray();
        key("parameters");
        beginObject();
        for (std::size_t i = 0; i < params.size(); ++i) {
            key(params[i].first);
            tensor(entry + ".parameters." + params[i].first, params[i].second, paramRoles[i], true);
        }
        endObject();
        isRecompute();
        endEntry();
    }

    /// parameters_grad follows its module's forward entry in the file (msprobe 1.2.2 reserves it there).
    void parametersGrad(const std::string& prefix, const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& params)
    {
        const std::string entry = prefix + ".parameters_grad";
        beginEntry(entry);
        for (const auto& [name, shape] : params) {
            key(name);
            beginArray();
            tensor(entry + "." + name, shape, Role::Grad, false);
            endArray();
        }
        endEntry();
    }

    void backwardEntry(const std::string& entry, const std::vector<std::vector<std::int64_t>>& in,
                       const std::vector<std::vector<std::int64_t>>& out)
    {
        beginEntry(entry);
        key("input");
        beginArray();
        for (std::size_t i = 0; i < in.size(); ++i)
            tensor(entry + ".input." + std::to_string(i), in[i], Role::Grad, false);
        endArray();
        key("output");
        beginArray();
        for (std::size_t i = 0; i < out.size(); ++i)
            tensor(entry + ".output." + std::to_string(i), out[i], Role::Grad, false);
        endArray();
        endEntry();
    }

    struct LayerApis
    {
        int layerNorm, linear1, relu, linear2, add;
    };

    static LayerApis apisOf(int layer) { return { layer, 2 * layer, layer, 2 * layer + 1, layer }; }

    using Params = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

    void forwardLayer(int layer)
    {
        const LayerApis api = apisOf(layer);
        const std::vector<std::int64_t> x = { kTokens, kHidden };
        const std::vector<std::int64_t> h = { kTokens, kFfn };
        const std::string block = moduleKey(layer, "", "Block", "forward");
        const std::string ln = moduleKey(layer, "ln", "LayerNorm", "forward");
        const std::string fc1 = moduleKey(layer, "fc1", "Linear", "forward");
        const std::string fc2 = moduleKey(layer, "fc2", "Linear", "forward");
        const std::string layerPrefix = "Module.layers." + std::to_string(layer);
        const Params lnParams = { { "weight", { kHidden } }, { "bias", { kHidden } } };
        const Params fc1Params = { { "weight", { kFfn, kHidden } }, { "bias", { kFfn } } };
        const Params fc2Params = { { "weight", { kHidden, kFfn } }, { "bias", { kHidden } } };
        const int line = 40 + layer % 7; // varies a little so stacks are not all alike

        // F.layer_norm(x, (32,), weight, bias, 1e-05)
        std::string k = "Functional.layer_norm." + std::to_string(api.layerNorm) + ".forward";
        beginEntry(k);
        key("input_args");
        beginArray();
        tensor(k + ".input.0", x, Role::Activation, true);
        beginArray();
        intLeaf(kHidden);
        endArray();
        tensor(k + ".input.2", { kHidden }, Role::Gamma, true);
        tensor(k + ".input.3", { kHidden }, Role::Beta, true);
        floatLeaf(1e-05);
        endArray();
        emptyObject("input_kwargs");
        isRecompute();
        key("output");
        beginArray();
        tensor(k + ".output.0", x, Role::Activation, true);
        endArray();
        endEntry();
        construct(k, &ln);
        stack(k, kFunctionalFrame, line, "h = self.fc1(self.ln(x))");

        moduleForward(ln, x, x, Role::Activation, lnParams, { Role::Gamma, Role::Beta });
        construct(ln, &block);
        stack(ln, {}, line, "h = self.fc1(self.ln(x))");
        parametersGrad(layerPrefix + ".ln.LayerNorm", lnParams);

        linearForward(api.linear1, x, h, { kFfn, kHidden }, fc1, line, "h = self.fc1(self.ln(x))", Role::Activation);
        moduleForward(fc1, x, h, Role::Activation, fc1Params, { Role::Weight, Role::Bias });
        construct(fc1, &block);
        stack(fc1, {}, line, "h = self.fc1(self.ln(x))");
        parametersGrad(layerPrefix + ".fc1.Linear", fc1Params);

        k = "Functional.relu." + std::to_string(api.relu) + ".forward";
        if (layer == m_errorLayer)
            m_errorApi = k; // set before its leaves are written: the injection keys on this prefix
        beginEntry(k);
        key("input_args");
        beginArray();
        tensor(k + ".input.0", h, Role::Activation, true);
        endArray();
        emptyObject("input_kwargs");
        isRecompute();
        key("output");
        beginArray();
        tensor(k + ".output.0", h, Role::Positive, true);
        endArray();
        endEntry();
        construct(k, &block);
        stack(k, kFunctionalFrame, line + 1, "h = F.relu(h)");

        linearForward(api.linear2, h, x, { kHidden, kFfn }, fc2, line + 2, "return x + self.fc2(h)", Role::Activation);
        moduleForward(fc2, h, x, Role::Activation, fc2Params, { Role::Weight, Role::Bias });
        construct(fc2, &block);
        stack(fc2, {}, line + 2, "return x + self.fc2(h)");
        parametersGrad(layerPrefix + ".fc2.Linear", fc2Params);

        k = "Tensor.__add__." + std::to_string(api.add) + ".forward";
        beginEntry(k);
        key("input_args");
        beginArray();
        tensor(k + ".input.0", x, Role::Activation, true);
        tensor(k + ".input.1", x, Role::Activation, true);
        endArray();
        emptyObject("input_kwargs");
        isRecompute();
        key("output");
        beginArray();
        tensor(k + ".output.0", x, Role::Activation, true);
        endArray();
        endEntry();
        construct(k, &block);
        stack(k, kTensorFrame, line + 2, "return x + self.fc2(h)");

        moduleForward(block, x, x, Role::Activation, {}, {});
        construct(block, nullptr);
        stack(block, {}, 71, "for block in self.layers: x = block(x)");
    }

    void linearForward(int index, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                       const std::vector<std::int64_t>& weight, const std::string& module, int line,
                       std::string_view code, Role outRole)
    {
        const std::string k = "Functional.linear." + std::to_string(index) + ".forward";
        beginEntry(k);
        key("input_args");
        beginArray();
        tensor(k + ".input.0", in, Role::Activation, true);
        tensor(k + ".input.1", weight, Role::Weight, true);
        tensor(k + ".input.2", { weight[0] }, Role::Bias, true);
        endArray();
        emptyObject("input_kwargs");
        isRecompute();
        key("output");
        beginArray();
        tensor(k + ".output.0", out, outRole, true);
        endArray();
        endEntry();
        construct(k, &module);
        stack(k, kFunctionalFrame, line, code);
    }

    /// Backward entries in the order autograd finishes them: each module after the APIs inside it.
    void backwardLayer(int layer)
    {
        const LayerApis api = apisOf(layer);
        const std::vector<std::int64_t> x = { kTokens, kHidden };
        const std::vector<std::int64_t> h = { kTokens, kFfn };
        const std::string block = moduleKey(layer, "", "Block", "backward");

        auto apiBackward = [&](const std::string& name, int index, const std::vector<std::vector<std::int64_t>>& in,
                               const std::vector<std::vector<std::int64_t>>& out) {
            const std::string k = name + "." + std::to_string(index) + ".backward";
            backwardEntry(k, in, out);
            construct(k, nullptr); // msprobe 1.2.2 leaves backward API nodes without a parent
        };
        auto moduleBackward = [&](const std::string& entry, const std::vector<std::int64_t>& in,
                                  const std::vector<std::int64_t>& out, const std::string* parent) {
            backwardEntry(entry, { in }, { out });
            construct(entry, parent);
        };

        apiBackward("Tensor.__add__", api.add, { x }, { x, x });
        apiBackward("Functional.linear", api.linear2, { x }, { h, { kHidden, kFfn }, { kHidden } });
        moduleBackward(moduleKey(layer, "fc2", "Linear", "backward"), x, h, &block);
        apiBackward("Functional.relu", api.relu, { h }, { h });
        apiBackward("Functional.linear", api.linear1, { h }, { x, { kFfn, kHidden }, { kFfn } });
        moduleBackward(moduleKey(layer, "fc1", "Linear", "backward"), h, x, &block);
        apiBackward("Functional.layer_norm", api.layerNorm, { x }, { x, { kHidden }, { kHidden } });
        moduleBackward(moduleKey(layer, "ln", "LayerNorm", "backward"), x, x, &block);
        moduleBackward(block, x, x, nullptr);
    }

    const Options& m_opt;
    Side& m_npu;
    Side& m_bench;
    int m_layers;
    int m_errorLayer;
    std::string m_errorApi;
    std::uint64_t m_entries = 0;
    std::uint64_t m_leaves = 0;
    std::uint64_t m_tensors = 0;
    std::uint64_t m_perturbed = 0;
};

// ------------------------------------------------------------------------------------------------

void printUsage(std::FILE* to)
{
    std::fputs("usage: probescope-gencomparepair [--entries N] [--seed S] [--out DIR]\n"
               "Writes DIR/{npu,bench}/step0/rank/{dump.json,stack.json,construct.json,dump_tensor_data/*.pt}:\n"
               "a synthetic msprobe 1.2.2 tensor-mode dump pair (level mix) of at least N entries per side\n"
               "(default 4000; whole layers of 21 entries and 62 .pt files each).\n"
               "  --seed S    same seed, same bytes (default 1)\n"
               "  --out DIR   output folder (default ./gencomparepair-out); an existing pair there is replaced\n",
               to);
}

std::optional<std::string> openSide(Side& side, const fs::path& dir)
{
    side.dir = dir;
    side.tensorDir = dir / "dump_tensor_data";
    std::error_code ec;
    // Stale .pt files from a bigger run would be picked up by nothing, but would skew file counts.
    fs::remove_all(side.tensorDir, ec);
    fs::create_directories(side.tensorDir, ec);
    if (ec)
        return "cannot create " + side.tensorDir.string() + ": " + ec.message();
    side.dumpFile = std::make_unique<OutFile>(dir / "dump.json");
    side.constructFile = std::make_unique<OutFile>(dir / "construct.json");
    side.stackFile = std::make_unique<OutFile>(dir / "stack.json");
    for (const OutFile* f : { side.dumpFile.get(), side.constructFile.get(), side.stackFile.get() })
        if (!f->isOpen())
            return "cannot write " + f->path().string();
    side.dump = std::make_unique<JsonWriter>(*side.dumpFile);
    side.construct = std::make_unique<JsonWriter>(*side.constructFile);
    side.stack = std::make_unique<JsonWriter>(*side.stackFile);
    return std::nullopt;
}

} // namespace
} // namespace probescope::bench

int main(int argc, char** argv)
{
    using namespace probescope::bench;
    Options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&] { return optionValue("probescope-gencomparepair", argc, argv, i); };
        bool ok = true;
        if (a == "--entries")
            ok = parseNumber(value(), opt.entries) && opt.entries > 0 && opt.entries <= 10'000'000;
        else if (a == "--seed")
            ok = parseNumber(value(), opt.seed);
        else if (a == "--out")
            opt.out = std::string(value());
        else if (a == "-h" || a == "--help") {
            printUsage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "probescope-gencomparepair: unknown argument '%s'\n", argv[i]);
            printUsage(stderr);
            return 2;
        }
        if (!ok) {
            std::fprintf(stderr, "probescope-gencomparepair: bad value for %s\n", argv[i - 1]);
            return 2;
        }
    }

    const auto start = std::chrono::steady_clock::now();
    Side npu;
    Side bench;
    for (auto [side, name] : { std::pair { &npu, "npu" }, std::pair { &bench, "bench" } }) {
        if (auto error = openSide(*side, opt.out / name / "step0" / "rank")) {
            std::fprintf(stderr, "probescope-gencomparepair: %s\n", error->c_str());
            return 1;
        }
    }

    // Statistics are tiny reductions: one intra-op thread avoids pool hand-offs that cost more than the work.
    at::set_num_threads(1);
    PairGenerator gen(opt, npu, bench);
    try {
        gen.run();
    } catch (const c10::Error& e) {
        std::fprintf(stderr, "probescope-gencomparepair: torch failed: %s\n", e.what_without_backtrace());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "probescope-gencomparepair: %s\n", e.what());
        return 1;
    }

    int rc = 0;
    for (Side* side : { &npu, &bench }) {
        std::uint64_t jsonBytes = 0;
        for (OutFile* f : { side->dumpFile.get(), side->constructFile.get(), side->stackFile.get() }) {
            jsonBytes += f->bytes();
            if (!f->close()) {
                std::fprintf(stderr, "probescope-gencomparepair: writing %s failed\n", f->path().c_str());
                rc = 1;
            }
        }
        std::printf("%s: dump.json %.2f MB, JSON total %.2f MB, %llu .pt files, %.2f MB of .pt\n",
                    side->dir.c_str(), double(side->dumpFile->bytes()) / 1e6, double(jsonBytes) / 1e6,
                    static_cast<unsigned long long>(side->ptFiles), double(side->ptBytes) / 1e6);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("entries per side: %llu\n", static_cast<unsigned long long>(gen.entries()));
    std::printf("tensor leaves per side: %llu (perturbed on the bench side: %llu, large error injected in %s)\n",
                static_cast<unsigned long long>(gen.tensors()), static_cast<unsigned long long>(gen.perturbed()),
                gen.errorApi().c_str());
    std::printf("rows the compare should produce: %llu\n", static_cast<unsigned long long>(gen.leaves()));
    std::printf("generated in %.2f s\n", seconds);
    return rc;
}
