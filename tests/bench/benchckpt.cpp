// SPDX-License-Identifier: Apache-2.0
// Checkpoint compare benchmark (docs/checkpoint-compare.md, "Speed").
//   probescope-benchckpt gen --out DIR [--gb 2] [--tp 2] [--dtype float32|bf16] [--hidden 4096]
//       writes DIR/ckptA and DIR/ckptB: Megatron-like TP checkpoints (iter_0000100/mp_rank_NN/model_optim_rng.pt,
//       torch.save's zip layout with a protocol-2 pickle holding args (argparse.Namespace) and the model's
//       OrderedDict), together about GB gigabytes. Each rank file must stay below 4 GiB (no zip64 here): raise --tp.
//   probescope-benchckpt run DIR_A DIR_B
//       reads every file of both folders once (the disk / page-cache floor), then times compareCheckpoints and
//       prints GB/s of both, the compare's share of the floor and the peak RSS.
#include "core/ckpt/ckptcompare.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/outputfile.h"
#include "machineinfo.h"
#include "procstatus.h"

#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace probescope;

namespace {

// ---- a minimal torch.save writer (only what the generator needs)

void le(std::string& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void pickleString(std::string& p, std::string_view s)
{
    p += 'X';
    le(p, s.size(), 4);
    p += s;
}

void pickleInt(std::string& p, std::int64_t v)
{
    if (v >= 0 && v < (1LL << 31)) {
        p += 'J';
        le(p, static_cast<std::uint64_t>(v), 4);
    } else {
        p += "\x8a\x08";
        le(p, static_cast<std::uint64_t>(v), 8);
    }
}

struct GenTensor
{
    std::string name;
    std::vector<std::int64_t> shape; ///< of this shard
};

std::string makePickle(const std::vector<GenTensor>& tensors, int tp, bool bf16)
{
    std::string p = "\x80\x02}(";
    pickleString(p, "args");
    p += "cargparse\nNamespace\n)\x81}(";
    const std::pair<const char*, std::int64_t> args[] = { { "tensor_model_parallel_size", tp },
                                                          { "pipeline_model_parallel_size", 1 },
                                                          { "expert_model_parallel_size", 1 } };
    for (const auto& [k, v] : args) {
        pickleString(p, k);
        pickleInt(p, v);
    }
    pickleString(p, "num_experts");
    p += 'N';
    p += "ub";
    pickleString(p, "iteration");
    pickleInt(p, 100);
    pickleString(p, "model");
    p += "ccollections\nOrderedDict\n)R(";
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        std::int64_t numel = 1;
        for (auto d : tensors[i].shape)
            numel *= d;
        pickleString(p, tensors[i].name);
        p += "ctorch._utils\n_rebuild_tensor_v2\n((";
        pickleString(p, "storage");
        p += bf16 ? "ctorch\nBFloat16Storage\n" : "ctorch\nFloatStorage\n";
        pickleString(p, std::to_string(i));
        pickleString(p, "cpu");
        pickleInt(p, numel);
        p += "tQ";
        pickleInt(p, 0);
        p += '(';
        for (auto d : tensors[i].shape)
            pickleInt(p, d);
        p += "t(";
        std::int64_t stride = 1;
        std::vector<std::int64_t> strides(tensors[i].shape.size());
        for (std::size_t k = strides.size(); k-- > 0;) {
            strides[k] = stride;
            stride *= tensors[i].shape[k];
        }
        for (auto s : strides)
            pickleInt(p, s);
        p += "t\x89" "ccollections\nOrderedDict\n)Rt" "R";
    }
    p += "uu.";
    return p;
}

struct ZipEntry
{
    std::string name;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
};

class ZipWriter
{
public:
    explicit ZipWriter(PendingFile& file)
        : m_file(file)
    {
    }
    bool begin(const std::string& name, std::uint64_t size)
    {
        // torch aligns each record's bytes to 64 with an extra field ("FB" padding)
        const std::uint64_t headerEnd = m_pos + 30 + name.size() + 4;
        const std::uint64_t pad = (64 - headerEnd % 64) % 64;
        std::string h = "PK\x03\x04";
        le(h, 20, 2);
        le(h, 0x08, 2); // sizes and CRC in a data descriptor? no: flag 8 needs one; written below
        le(h, 0, 2);
        le(h, 0, 4);
        le(h, 0, 4); // CRC (in the data descriptor)
        le(h, size, 4);
        le(h, size, 4);
        le(h, name.size(), 2);
        le(h, 4 + pad, 2);
        h += name;
        le(h, 0x4246, 2);
        le(h, pad, 2);
        h.append(pad, 'Z');
        m_entries.push_back({ name, m_pos, size, 0 });
        return put(h);
    }
    bool data(std::string_view bytes)
    {
        m_entries.back().crc = static_cast<std::uint32_t>(
            crc32(m_entries.back().crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
        return put(bytes);
    }
    bool end()
    {
        std::string d = "PK\x07\x08";
        le(d, m_entries.back().crc, 4);
        le(d, m_entries.back().size, 4);
        le(d, m_entries.back().size, 4);
        return put(d);
    }
    bool finish()
    {
        const std::uint64_t cdStart = m_pos;
        std::string cd;
        for (const ZipEntry& e : m_entries) {
            cd += "PK\x01\x02";
            le(cd, 20, 2);
            le(cd, 20, 2);
            le(cd, 0x08, 2);
            le(cd, 0, 2);
            le(cd, 0, 4);
            le(cd, e.crc, 4);
            le(cd, e.size, 4);
            le(cd, e.size, 4);
            le(cd, e.name.size(), 2);
            le(cd, 0, 2);
            le(cd, 0, 2);
            le(cd, 0, 2);
            le(cd, 0, 2);
            le(cd, 0, 4);
            le(cd, e.offset, 4);
            cd += e.name;
        }
        std::string end = "PK\x05\x06";
        le(end, 0, 4);
        le(end, m_entries.size(), 2);
        le(end, m_entries.size(), 2);
        le(end, cd.size(), 4);
        le(end, cdStart, 4);
        le(end, 0, 2);
        return put(cd) && put(end);
    }
    std::uint64_t position() const { return m_pos; }

private:
    bool put(std::string_view s)
    {
        m_pos += s.size();
        return m_file.write(s);
    }
    PendingFile& m_file;
    std::uint64_t m_pos = 0;
    std::vector<ZipEntry> m_entries;
};

/// Deterministic values in [-1, 1): xorshift64*.
struct Random
{
    std::uint64_t state;
    float next()
    {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        const std::uint64_t r = state * 0x2545F4914F6CDD1DULL;
        return static_cast<float>(static_cast<double>(r >> 40) / double(1 << 23) - 1.0);
    }
};

std::uint16_t toBf16(float f)
{
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return static_cast<std::uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

int generate(const std::filesystem::path& out, double gb, int tp, bool bf16, std::int64_t hidden)
{
    // A GPT-like layer set (at hidden 4096: ffn 11008, vocab 32000) whose size is set by the layer count.
    const std::int64_t ffn = (hidden * 11008 / 4096 + 63) / 64 * 64;
    const std::int64_t vocab = (hidden * 32000 / 4096 + 63) / 64 * 64;
    const std::size_t item = bf16 ? 2 : 4;
    const double perLayer = double(4 * hidden * hidden + 2 * hidden * ffn + 2 * hidden) * double(item);
    const double fixedBytes = double(2 * vocab * hidden + hidden) * double(item);
    const int layers = std::max(1, static_cast<int>((gb * 1e9 / 2 - fixedBytes) / perLayer));
    struct Param
    {
        std::string name;
        std::vector<std::int64_t> shape;
        int axis;
    };
    std::vector<Param> params { { "embedding.word_embeddings.weight", { vocab, hidden }, 0 } };
    for (int l = 0; l < layers; ++l) {
        const std::string p = "decoder.layers." + std::to_string(l) + ".";
        params.push_back({ p + "input_layernorm.weight", { hidden }, -1 });
        params.push_back({ p + "self_attention.linear_qkv.weight", { 3 * hidden, hidden }, 0 });
        params.push_back({ p + "self_attention.linear_proj.weight", { hidden, hidden }, 1 });
        params.push_back({ p + "mlp.linear_fc1.weight", { ffn, hidden }, 0 });
        params.push_back({ p + "mlp.linear_fc2.weight", { hidden, ffn }, 1 });
        params.push_back({ p + "pre_mlp_layernorm.weight", { hidden }, -1 });
    }
    params.push_back({ "decoder.final_layernorm.weight", { hidden }, -1 });
    params.push_back({ "output_layer.weight", { vocab, hidden }, 0 });
    std::printf("generating 2 x TP%d, %d layers, %s, about %.2f GB in all\n", tp, layers, bf16 ? "bf16" : "float32",
                2 * (fixedBytes + layers * perLayer) / 1e9);

    for (const char* side : { "ckptA", "ckptB" }) {
        const auto root = out / side;
        std::filesystem::create_directories(root / "iter_0000100");
        if (auto failure = writeFileAtomically(root / "latest_checkpointed_iteration.txt", "100"))
            return std::fprintf(stderr, "%s\n", failure->message.c_str()), 1;
        for (int rank = 0; rank < tp; ++rank) {
            char dir[32];
            std::snprintf(dir, sizeof dir, "mp_rank_%02d", rank);
            const auto file = root / "iter_0000100" / dir / "model_optim_rng.pt";
            std::filesystem::create_directories(file.parent_path());
            std::vector<GenTensor> shards;
            for (const Param& p : params) {
                GenTensor t { p.name, p.shape };
                if (p.axis >= 0)
                    t.shape[static_cast<std::size_t>(p.axis)] /= tp;
                shards.push_back(t);
            }
            std::string error;
            auto pending = PendingFile::create(file, error);
            if (!pending)
                return std::fprintf(stderr, "%s\n", error.c_str()), 1;
            ZipWriter zip(*pending);
            const std::string pickle = makePickle(shards, tp, bf16);
            zip.begin("archive/data.pkl", pickle.size());
            zip.data(pickle);
            zip.end();
            std::string buffer;
            for (std::size_t i = 0; i < shards.size(); ++i) {
                std::uint64_t numel = 1;
                for (auto d : shards[i].shape)
                    numel *= static_cast<std::uint64_t>(d);
                zip.begin("archive/data/" + std::to_string(i), numel * item);
                // Same values on both sides except every third tensor, perturbed in B.
                // Replicated parameters (layer norms) are equal on every TP rank, as in training.
                Random a { 0x9E3779B97F4A7C15ULL * (i + 1) + (params[i].axis >= 0 ? static_cast<std::uint64_t>(rank) : 0) };
                Random noise { 12345 + i };
                const bool perturb = side[4] == 'B' && i % 3 == 0;
                for (std::uint64_t done = 0; done < numel;) {
                    const std::uint64_t n = std::min<std::uint64_t>(numel - done, 1u << 20);
                    buffer.resize(n * item);
                    for (std::uint64_t k = 0; k < n; ++k) {
                        float v = a.next();
                        if (perturb)
                            v += 1e-3f * noise.next();
                        if (bf16) {
                            const std::uint16_t b = toBf16(v);
                            std::memcpy(buffer.data() + 2 * k, &b, 2);
                        } else {
                            std::memcpy(buffer.data() + 4 * k, &v, 4);
                        }
                    }
                    zip.data(buffer);
                    done += n;
                }
                zip.end();
            }
            zip.begin("archive/version", 2);
            zip.data("3\n");
            zip.end();
            zip.finish();
            if (zip.position() >= 0xFFFFFFFFULL)
                return std::fprintf(stderr, "a rank file reached 4 GiB: raise --tp\n"), 1;
            if (auto failure = pending->finish(); failure || (failure = pending->claim(file)))
                return std::fprintf(stderr, "%s\n", failure->message.c_str()), 1;
        }
    }
    return 0;
}

// ---- the measurement

std::vector<std::filesystem::path> rankFiles(const std::filesystem::path& root)
{
    std::vector<std::filesystem::path> files;
    auto iters = listFolder(root, 1u << 20, FolderOrder::ByName);
    if (!iters)
        return files;
    for (const FolderEntry& it : *iters) {
        if (it.kind != FolderEntry::Kind::Folder)
            continue;
        if (auto ranks = listFolder(root / it.name, 1u << 20, FolderOrder::ByName)) {
            for (const FolderEntry& r : *ranks)
                files.push_back(root / it.name / r.name / "model_optim_rng.pt");
        }
    }
    return files;
}

double seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int run(const std::filesystem::path& a, const std::filesystem::path& b)
{
    std::uint64_t bytes = 0;
    std::vector<char> buffer(8u << 20);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& root : { a, b }) {
        for (const auto& file : rankFiles(root)) {
            auto fd = openRegularFile(file);
            if (!fd)
                return std::fprintf(stderr, "%s\n", fd.error().format().c_str()), 1;
            for (ssize_t n; (n = ::read(*fd, buffer.data(), buffer.size())) > 0;)
                bytes += static_cast<std::uint64_t>(n);
            ::close(*fd);
        }
    }
    const double floorSeconds = seconds(t0);
    std::printf("  read floor: %.2f GB in %.2f s = %.2f GB/s (read() of every rank file once, 8 MiB buffer)\n",
                double(bytes) / 1e9, floorSeconds, double(bytes) / 1e9 / floorSeconds);

    rusage before {};
    ::getrusage(RUSAGE_SELF, &before);
    const auto t1 = std::chrono::steady_clock::now();
    std::size_t warnings = 0;
    auto result = ckpt::compareCheckpoints(a, b, {}, [&](Severity, const std::string&) { ++warnings; });
    const double compareSeconds = seconds(t1);
    rusage after {};
    ::getrusage(RUSAGE_SELF, &after);
    if (!result)
        return std::fprintf(stderr, "%s\n", result.error().format().c_str()), 1;
    // On a loaded machine the wall time says little: the CPU time is what the compare itself cost.
    const double user = bench::machine_detail::secondsOf(after.ru_utime) - bench::machine_detail::secondsOf(before.ru_utime);
    const double system = bench::machine_detail::secondsOf(after.ru_stime) - bench::machine_detail::secondsOf(before.ru_stime);
    std::printf("  compare CPU: %.2f s user + %.2f s system = %.2f GB per CPU second\n", user, system,
                double(result->bytesRead) / 1e9 / (user + system));
    std::printf("  compare: %zu parameters, %.2f GB of elements in %.2f s = %.2f GB/s (%.0f%% of the read floor), "
                "peak RSS %.0f MB\n",
                result->params.size(), double(result->bytesRead) / 1e9, compareSeconds,
                double(result->bytesRead) / 1e9 / compareSeconds,
                100.0 * (double(result->bytesRead) / compareSeconds) / (double(bytes) / floorSeconds),
                double(bench::procStatusBytes("VmHWM")) / 1e6);
    double minCos = 2;
    for (const auto& p : result->params)
        minCos = std::min(minCos, p.cos.value_or(2));
    std::printf("  lowest cos %.9g, %zu log lines\n", minCos, warnings);
    // Measured after the compare so that its 256 MB of probing does not count in the peak RSS above.
    bench::printMachine(bench::measureMachine());
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() >= 3 && args[0] == "run")
        return run(args[1], args[2]);
    if (!args.empty() && args[0] == "gen") {
        std::filesystem::path out;
        double gb = 2;
        int tp = 2;
        bool bf16 = false;
        std::int64_t hidden = 4096;
        for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
            if (args[i] == "--out")
                out = args[i + 1];
            else if (args[i] == "--gb")
                gb = std::stod(args[i + 1]);
            else if (args[i] == "--tp")
                tp = std::stoi(args[i + 1]);
            else if (args[i] == "--hidden")
                hidden = std::stoll(args[i + 1]) / 64 * 64;
            else if (args[i] == "--dtype")
                bf16 = args[i + 1] == "bf16";
        }
        if (!out.empty() && tp >= 1 && hidden >= 64 && 64 % tp == 0)
            return generate(out, gb, tp, bf16, hidden);
    }
    std::fprintf(stderr, "usage: probescope-benchckpt gen --out DIR [--gb 2] [--tp 2] [--dtype float32|bf16] [--hidden 4096]\n"
                         "       probescope-benchckpt run DIR_A DIR_B\n");
    return 2;
}
