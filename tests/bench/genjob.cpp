// SPDX-License-Identifier: Apache-2.0
//
// `probescope-gendump job`: a whole training job of many ranks and steps, NPU and bench side, with msprobe's
// Distributed.* communication entries and one bug on one rank that spreads through communication.
//
// Every rank of a step runs the same program (as data + pipeline parallel training does):
//   Distributed.broadcast.0      parameters from rank 0 (all ranks)
//   stage 0 (ranks [0, R/2)):    layers 0..L-1 (Functional.linear.l, Functional.gelu.l), then
//                                Distributed.send.0 to rank r + R/2
//   stage 1 (ranks [R/2, R)):    Distributed.recv.0 from rank r - R/2, then layers L..2L-1
//   Distributed.all_reduce.0     gradients within the stage group
//   Distributed.all_reduce.1     the gradient norm over all ranks
// The bug: on --bug-rank in --bug-step, Functional.gelu.{--bug-layer} computes a wrong output from right inputs.
// From there that rank's data differs; the send carries it to its stage-1 peer (whose recv output differs),
// the all_reduces to everyone else. So the origin is (bug-step, bug-rank, gelu) and the chain send -> recv ->
// all_reduce.0 -> ... is what a cross-rank analysis must recover. DIR/injected.json names the bug.
//
// Leaves are statistics (Max/Min/Mean/Norm), or md5 values with --md5, or with --tensors statistics plus a small
// .pt tensor per leaf (task "tensor", data_name, dump_tensor_data/) whose statistics they are.
//
// At 10,000 ranks world-sized groups make every dump.json carry 10,000-rank lists (two world collectives: 120 KB
// per rank, 5 GB per job); --group-size G instead runs the collectives in blocks, as 3D-parallel training does:
// broadcast.0 from the block's first rank and all_reduce.0 within the block of G consecutive ranks of a stage,
// all_reduce.1 over that block and its pipeline peer block (2G ranks). The bug then spreads to those 2G ranks.
// Same arguments, same bytes.

#include "benchargs.h"

#include "core/collect/ptwriter.h"
#include "core/util/outputfile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace probescope::bench {

namespace {

struct JobSpec
{
    std::int64_t ranks = 16;
    std::int64_t steps = 2;
    std::int64_t layers = 4;      ///< layers per pipeline stage
    std::int64_t bugRank = 3;
    std::int64_t bugStep = 1;
    std::int64_t bugLayer = 1;
    std::int64_t width = 1;       ///< extra linear calls per layer (to make big dumps for the benchmark)
    std::int64_t groupSize = 0;   ///< 0: groups span the world/stage (as before); G: blocks of G ranks (issue 37)
    bool md5 = false;
    bool tensors = false;         ///< tensor mode: every leaf also gets a .pt file in dump_tensor_data/
    fs::path out = "genjob-out";
};

std::uint64_t mix(std::uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// Writes one rank's dump.json. `bad` decides, per tensor, whether the NPU value differs from the bench one.
class RankWriter
{
public:
    RankWriter(const JobSpec& spec, std::uint64_t seed, bool npu)
        : m_spec(spec)
        , m_seed(seed)
        , m_npu(npu)
    {
        m_text = std::string("{\n \"task\": \"") + (spec.tensors ? "tensor" : "statistics")
            + "\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n"
              " \"dump_data_dir\": null,\n \"data\": {";
    }

    /// kwargs: already formatted JSON members (e.g. "\"dst\": {...}"), or "".
    void entry(const std::string& key, const std::vector<bool>& inputsBad, const std::string& kwargs,
               const std::vector<bool>& outputsBad)
    {
        m_text += m_first ? "\n" : ",\n";
        m_first = false;
        m_text += "  \"" + key + "\": {\n   \"input_args\": [";
        for (std::size_t i = 0; i < inputsBad.size(); ++i)
            m_text += (i ? "," : "") + leaf(key, "in" + std::to_string(i), inputsBad[i]);
        m_text += inputsBad.empty() ? "],\n" : "\n   ],\n";
        m_text += "   \"input_kwargs\": {" + kwargs + "},\n   \"output\": [";
        for (std::size_t i = 0; i < outputsBad.size(); ++i)
            m_text += (i ? "," : "") + leaf(key, "out" + std::to_string(i), outputsBad[i]);
        m_text += outputsBad.empty() ? "]\n  }" : "\n   ]\n  }";
    }

    std::string finish() { return m_text + "\n }\n}\n"; }

    /// --tensors: the .pt files the leaves name (file name, float32 values of shape [8, 16]).
    const std::vector<std::pair<std::string, std::vector<float>>>& tensorFiles() const { return m_files; }

private:
    std::string leaf(const std::string& key, const std::string& slot, bool bad)
    {
        std::uint64_t h = m_seed;
        for (char c : key + "/" + slot)
            h = mix(h ^ static_cast<unsigned char>(c));
        const bool differs = m_npu && bad;
        if (m_spec.tensors)
            return tensorLeaf(key, slot, h, differs);
        std::string s = "\n    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float32\",\n"
                        "     \"shape\": [\n      64,\n      32\n     ],\n";
        if (m_spec.md5) {
            char buf[16];
            std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>((differs ? mix(h) : h) >> 32));
            s += "     \"md5\": \"" + std::string(buf) + "\",\n";
        } else {
            const double base = 0.5 + double(h % 1000) / 1000.0;
            const double scale = differs ? 2.5 : 1.0; // far beyond every statistics threshold
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "     \"Max\": %.6f,\n     \"Min\": %.6f,\n     \"Mean\": %.6f,\n     \"Norm\": %.6f,\n",
                          base * 3 * scale, -base * 2 * scale, base * 0.1 * scale, base * 40 * scale);
            s += buf;
        }
        return s + "     \"requires_grad\": false\n    }";
    }

    /// A [8, 16] float32 tensor (saved as torch.save does, core/collect's writer) and its statistics: a differing NPU tensor is another
    /// wave, 2.5 times larger (cosine far from 1, every relative error far above its threshold).
    std::string tensorLeaf(const std::string& key, const std::string& slot, std::uint64_t h, bool differs)
    {
        constexpr int kRows = 8, kCols = 16;
        const double phase = double(h % 6283) / 1000.0;
        std::vector<float> v(kRows * kCols);
        double mx = -1e300, mn = 1e300, sum = 0, sq = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = differs ? float(2.5 * std::cos(phase + 0.91 * double(i))) : float(std::sin(phase + 0.37 * double(i)));
            mx = std::max(mx, double(v[i]));
            mn = std::min(mn, double(v[i]));
            sum += v[i];
            sq += double(v[i]) * double(v[i]);
        }
        const std::string io = slot.rfind("in", 0) == 0 ? ".input." + slot.substr(2) : ".output." + slot.substr(3);
        const std::string name = key + io + ".pt";
        m_files.emplace_back(name, std::move(v));
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "     \"Max\": %.9g,\n     \"Min\": %.9g,\n     \"Mean\": %.9g,\n     \"Norm\": %.9g,\n", mx, mn,
                      sum / double(kRows * kCols), std::sqrt(sq));
        return "\n    {\n     \"type\": \"torch.Tensor\",\n     \"dtype\": \"torch.float32\",\n"
               "     \"shape\": [\n      8,\n      16\n     ],\n"
            + std::string(buf) + "     \"requires_grad\": false,\n     \"data_name\": \"" + name + "\"\n    }";
    }

    const JobSpec& m_spec;
    std::uint64_t m_seed;
    bool m_npu;
    bool m_first = true;
    std::string m_text;
    std::vector<std::pair<std::string, std::vector<float>>> m_files;
};

/// A rank argument as msprobe dumps an int: {"type": "int", "value": N}. (A bare number, as this generator wrote
/// before issue 37, is no rank to msprobe 26's -da: each send then matched against every later rank, quadratic.)
std::string rankKwarg(const char* name, std::int64_t rank)
{
    return "\n    \"" + std::string(name) + "\": {\n     \"type\": \"int\",\n     \"value\": " + std::to_string(rank)
        + "\n    }";
}

std::string groupKwargs(const std::vector<std::int64_t>& ranks)
{
    std::string s = "\n    \"group\": {\n     \"type\": \"torch.ProcessGroup\",\n     \"group_ranks\": [";
    for (std::size_t i = 0; i < ranks.size(); ++i)
        s += (i ? ", " : "") + std::to_string(ranks[i]);
    return s + "],\n     \"group_id\": \"g" + std::to_string(ranks.size()) + "_" + std::to_string(ranks.front())
        + "\"\n    }\n   ";
}

bool writeFile(const fs::path& path, const std::string& text)
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return false;
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && ok;
}

/// Rank r's collective groups. Without --group-size: the world (broadcast.0 from rank 0, all_reduce.1) and r's
/// pipeline stage (all_reduce.0). With G: r's block of G consecutive ranks of its stage (broadcast.0 from the
/// block's first rank, all_reduce.0), and that block with its pipeline peer block (all_reduce.1).
struct Groups
{
    std::int64_t ar0Id = 0; ///< one number per all_reduce.0 group
    std::int64_t ar1Id = 0; ///< one number per all_reduce.1 group
};

Groups groupIds(const JobSpec& spec, std::int64_t rank)
{
    const std::int64_t half = spec.ranks / 2;
    const bool stage0 = rank < half;
    if (spec.groupSize == 0)
        return { stage0 ? 0 : 1, 0 };
    const std::int64_t block = (rank % half) / spec.groupSize;
    return { block * 2 + (stage0 ? 0 : 1), block };
}

std::vector<std::int64_t> ranksOf(const JobSpec& spec, std::int64_t rank, bool ar1)
{
    const std::int64_t half = spec.ranks / 2;
    std::vector<std::int64_t> out;
    const Groups mine = groupIds(spec, rank);
    if (spec.groupSize == 0) {
        for (std::int64_t r = 0; r < spec.ranks; ++r) {
            if (ar1 || groupIds(spec, r).ar0Id == mine.ar0Id)
                out.push_back(r);
        }
        return out;
    }
    const std::int64_t start = (rank % half) / spec.groupSize * spec.groupSize;
    const std::int64_t end = std::min(start + spec.groupSize, half);
    for (const std::int64_t base : { std::int64_t(0), half }) {
        if (!ar1 && base != (rank < half ? 0 : half))
            continue;
        for (std::int64_t r = start; r < end; ++r)
            out.push_back(base + r);
    }
    return out;
}

/// Which ranks hold differing data after each phase of one step (the taint the bug spreads).
struct Taint
{
    std::vector<bool> afterStage0; ///< stage-0 ranks after their layers (the bug rank only)
    std::vector<bool> afterRecv;   ///< stage-1 ranks after recv
    std::vector<bool> afterAr0;    ///< after the all_reduce.0 of the rank's group
    std::vector<bool> afterAr1;    ///< after all_reduce.1
};

Taint spread(const JobSpec& spec, std::int64_t step)
{
    const std::int64_t half = spec.ranks / 2;
    Taint t;
    t.afterStage0.assign(spec.ranks, false);
    t.afterRecv.assign(spec.ranks, false);
    t.afterAr0.assign(spec.ranks, false);
    t.afterAr1.assign(spec.ranks, false);
    if (step == spec.bugStep)
        t.afterStage0[spec.bugRank] = true;
    for (std::int64_t r = half; r < spec.ranks; ++r)
        t.afterRecv[r] = t.afterStage0[r - half];
    std::vector<bool> ar0Tainted(std::size_t(spec.ranks) + 2, false), ar1Tainted(std::size_t(spec.ranks) + 2, false);
    for (std::int64_t r = 0; r < spec.ranks; ++r) {
        if (t.afterStage0[r] || t.afterRecv[r])
            ar0Tainted[std::size_t(groupIds(spec, r).ar0Id)] = true;
    }
    for (std::int64_t r = 0; r < spec.ranks; ++r) {
        t.afterAr0[r] = ar0Tainted[std::size_t(groupIds(spec, r).ar0Id)];
        if (t.afterAr0[r])
            ar1Tainted[std::size_t(groupIds(spec, r).ar1Id)] = true;
    }
    for (std::int64_t r = 0; r < spec.ranks; ++r)
        t.afterAr1[r] = ar1Tainted[std::size_t(groupIds(spec, r).ar1Id)];
    return t;
}

/// One rank's dump.json, and with --tensors its tensor files.
std::pair<std::string, std::vector<std::pair<std::string, std::vector<float>>>>
rankDump(const JobSpec& spec, const Taint& t, std::int64_t step, std::int64_t rank, bool npu)
{
    const std::int64_t half = spec.ranks / 2;
    const bool stage0 = rank < half;
    RankWriter w(spec, mix(std::uint64_t(step) * 1000003 + std::uint64_t(rank)), npu);
    const std::vector<std::int64_t> group = ranksOf(spec, rank, false);
    const std::vector<std::int64_t> all = ranksOf(spec, rank, true);
    const std::vector<std::int64_t>& bcastGroup = spec.groupSize == 0 ? all : group;
    w.entry("Distributed.broadcast.0.forward", { false },
            rankKwarg("src", bcastGroup.front()) + "," + groupKwargs(bcastGroup), { false });
    bool bad = stage0 ? false : t.afterRecv[rank];
    if (!stage0)
        w.entry("Distributed.recv.0.forward", { false }, rankKwarg("src", rank - half) + "\n   ", { bad });
    const std::int64_t first = stage0 ? 0 : spec.layers;
    std::int64_t linearCall = 0;
    for (std::int64_t l = first; l < first + spec.layers; ++l) {
        for (std::int64_t k = 0; k < spec.width; ++k) {
            const std::string key = "Functional.linear." + std::to_string(linearCall++) + ".forward";
            w.entry(key, { bad, false, false }, "", { bad });
        }
        const bool bugHere = stage0 && step == spec.bugStep && rank == spec.bugRank && l == spec.bugLayer;
        const bool out = bad || bugHere;
        w.entry("Functional.gelu." + std::to_string(l - first) + ".forward", { bad }, "", { out });
        bad = out;
    }
    if (stage0)
        w.entry("Distributed.send.0.forward", { bad }, rankKwarg("dst", rank + half) + "\n   ", {});
    w.entry("Distributed.all_reduce.0.forward", { bad }, groupKwargs(group), { t.afterAr0[rank] });
    w.entry("Distributed.all_reduce.1.forward", { t.afterAr0[rank] }, groupKwargs(all), { t.afterAr1[rank] });
    std::string text = w.finish();
    return { std::move(text), w.tensorFiles() };
}

void printJobUsage(std::FILE* to)
{
    std::fputs("usage: probescope-gendump job [--ranks R] [--steps S] [--layers L] [--width W] [--md5 | --tensors]\n"
               "                              [--group-size G] [--bug-rank B] [--bug-step T] [--bug-layer K] [--out DIR]\n"
               "Writes DIR/npu and DIR/bench (step{N}/rank{R}/dump.json, construct.json) of a data + pipeline\n"
               "parallel job with Distributed.* entries, and DIR/injected.json naming the bug: on rank B of step T\n"
               "Functional.gelu.K is wrong, and communication spreads it (defaults: 16 ranks, 2 steps, 4 layers\n"
               "per stage, W=1 linear call per layer, B=3, T=1, K=1; B must be a stage-0 rank, below R/2).\n"
               "--group-size G: collectives in blocks of G ranks (and 2G across the stages), not the whole world:\n"
               "what keeps 10,000-rank dumps small. --tensors: tensor mode, a [8, 16] float32 .pt file per leaf.\n",
               to);
}

} // namespace

int genJobMain(int argc, char** argv)
{
    JobSpec spec;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&] { return optionValue("probescope-gendump job", argc, argv, i); };
        bool ok = true;
        if (a == "--ranks")
            ok = parseNumber(value(), spec.ranks) && spec.ranks >= 2 && spec.ranks % 2 == 0;
        else if (a == "--steps")
            ok = parseNumber(value(), spec.steps) && spec.steps >= 1;
        else if (a == "--layers")
            ok = parseNumber(value(), spec.layers) && spec.layers >= 1;
        else if (a == "--width")
            ok = parseNumber(value(), spec.width) && spec.width >= 1;
        else if (a == "--bug-rank")
            ok = parseNumber(value(), spec.bugRank);
        else if (a == "--bug-step")
            ok = parseNumber(value(), spec.bugStep);
        else if (a == "--bug-layer")
            ok = parseNumber(value(), spec.bugLayer) && spec.bugLayer >= 0;
        else if (a == "--group-size")
            ok = parseNumber(value(), spec.groupSize) && spec.groupSize >= 1;
        else if (a == "--md5")
            spec.md5 = true;
        else if (a == "--tensors")
            spec.tensors = true;
        else if (a == "--out")
            spec.out = std::string(value());
        else if (a == "-h" || a == "--help") {
            printJobUsage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "probescope-gendump job: unknown argument '%s'\n", argv[i]);
            printJobUsage(stderr);
            return 2;
        }
        if (!ok) {
            std::fprintf(stderr, "probescope-gendump job: bad value for %s\n", argv[i - 1]);
            return 2;
        }
    }
    if (spec.bugRank < 0 || spec.bugRank >= spec.ranks / 2 || spec.bugLayer >= spec.layers) {
        std::fprintf(stderr, "probescope-gendump job: --bug-rank must be below R/2 and --bug-layer below L\n");
        return 2;
    }
    if (spec.md5 && spec.tensors) {
        std::fprintf(stderr, "probescope-gendump job: --md5 and --tensors exclude each other\n");
        return 2;
    }
    std::error_code made;
    fs::create_directories(spec.out, made);
    // Tens of thousands of .pt files: one syncfs at the end, not an fsync per file (util/outputfile).
    DeferredSync durable(spec.out);
    for (std::int64_t s = 0; s < spec.steps; ++s) {
        const Taint taint = spread(spec, s); // once per step: linear in the ranks
        for (const char* side : { "npu", "bench" }) {
            for (std::int64_t r = 0; r < spec.ranks; ++r) {
                const fs::path dir = spec.out / side / ("step" + std::to_string(s)) / ("rank" + std::to_string(r));
                std::error_code ec;
                fs::create_directories(spec.tensors ? dir / "dump_tensor_data" : dir, ec);
                const auto [dump, tensors] = rankDump(spec, taint, s, r, std::string_view(side) == "npu");
                bool ok = !ec && writeFile(dir / "dump.json", dump) && writeFile(dir / "construct.json", "{}");
                for (const auto& [name, values] : tensors) {
                    const collect::PtTensorBytes t { "FloatStorage", { 8, 16 }, values.data(),
                                                     values.size() * sizeof(float), sizeof(float) };
                    ok = ok && !collect::writePt(dir / "dump_tensor_data" / name, t);
                }
                if (!ok) {
                    std::fprintf(stderr, "probescope-gendump job: cannot write %s\n", dir.c_str());
                    return 1;
                }
            }
        }
    }
    if (auto failure = durable.barrier()) {
        std::fprintf(stderr, "probescope-gendump job: %s\n", failure->c_str());
        return 1;
    }
    const std::string injected = "{\"step\": " + std::to_string(spec.bugStep)
        + ", \"rank\": " + std::to_string(spec.bugRank) + ", \"node\": \"Functional.gelu."
        + std::to_string(spec.bugLayer) + ".forward\"}\n";
    if (!writeFile(spec.out / "injected.json", injected)) {
        std::fprintf(stderr, "probescope-gendump job: cannot write %s\n", (spec.out / "injected.json").c_str());
        return 1;
    }
    return 0;
}

} // namespace probescope::bench
