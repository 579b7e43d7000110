// SPDX-License-Identifier: Apache-2.0
//
// probescope-gencomparelarge: writes an msprobe 1.2.2 tensor-mode pair (level "mix") of user-sized
// tensors, OUT/{npu,bench}/step0/rank/{dump.json,dump_tensor_data/*.pt} and OUT/compare.json:
//
//   --kind real   shaped like the 4-block transformer dump of issue 14 (width 384, FFN 1536, batch 8,
//                 sequence 128): 704 float32 tensors of 0.4-6 MB, about 1.1 GB per side;
//   --kind large  54 tensors of 1-64 MB in float32, bfloat16 and float16, about 1.1 GB per side;
//   --kind split  two API calls whose float32 outputs have 5,000,192 elements (77 chunks of 65,536, past the 64 from
//                 which a pair's chunks are shared with idle threads): 40 MB per side, for tests of that path.
//
// The .pt files are the zip layout torch.save writes (STORED records data.pkl, data/0, version, the
// storage aligned to 64 bytes as PyTorchStreamWriter does), written without LibTorch so that a GB of
// data takes seconds. The bench side equals the NPU side except for a relative noise of 1e-6..1e-3 on
// every third tensor and a large error injected into one tensor in the middle.
//
// With --ptdbg the same tensors are also written as a ptdbg_ascend 6.0 pair, OUT/ptdbg/{npu,bench}/dump.pkl and
// dump/{name}.npy (float32 and float16 as they are; bfloat16 widened to float32, as ptdbg saved it: numpy has no
// bfloat16), with OUT/ptdbg/compare.json (ptdbg's input_param), for `compare --profile ptdbg`.

#include "benchargs.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

enum class Kind { Float32, BFloat16, Float16 };

struct Spec
{
    std::string name; // data_name without .pt
    std::vector<std::int64_t> shape;
    Kind kind = Kind::Float32;
};

std::uint64_t numel(const std::vector<std::int64_t>& s)
{
    std::uint64_t n = 1;
    for (auto d : s)
        n *= static_cast<std::uint64_t>(d);
    return n;
}

std::size_t itemSize(Kind k)
{
    return k == Kind::Float32 ? 4 : 2;
}

void le(std::string& out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void pickleInt(std::string& p, std::int64_t v)
{
    if (v >= 0 && v <= 0xff) {
        p += 'K';
        le(p, static_cast<std::uint64_t>(v), 1);
    } else if (v >= 0 && v <= 0xffff) {
        p += 'M';
        le(p, static_cast<std::uint64_t>(v), 2);
    } else {
        p += 'J';
        le(p, static_cast<std::uint32_t>(v), 4);
    }
}

/// The protocol-2 data.pkl of torch.save for a contiguous tensor (as gencomparepair writes it).
std::string tensorPickle(const char* storage, const std::vector<std::int64_t>& shape)
{
    int memo = 0;
    auto put = [&](std::string& p) {
        p += 'q';
        p += static_cast<char>(memo++);
    };
    auto str = [&](std::string& p, const std::string& s) {
        p += 'X';
        le(p, s.size(), 4);
        p += s;
        put(p);
    };
    auto tuple = [&](std::string& p, const std::vector<std::int64_t>& v) {
        if (v.empty()) {
            p += ')';
            return;
        }
        if (v.size() > 3)
            p += '(';
        for (auto x : v)
            pickleInt(p, x);
        static const char kTupleN[] = { 0, '\x85', '\x86', '\x87' };
        p += v.size() > 3 ? 't' : kTupleN[v.size()];
        put(p);
    };
    std::vector<std::int64_t> stride(shape.size());
    std::int64_t n = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        stride[i] = n;
        n *= shape[i];
    }
    std::string p = "\x80\x02";
    p += "ctorch._utils\n_rebuild_tensor_v2\n";
    put(p);
    p += "((";
    str(p, "storage");
    p += "ctorch\n";
    p += storage;
    p += '\n';
    put(p);
    str(p, "0");
    str(p, "cpu");
    pickleInt(p, n);
    p += 't';
    put(p);
    p += 'Q';
    pickleInt(p, 0);
    tuple(p, shape);
    tuple(p, stride);
    p += '\x89';
    p += "ccollections\nOrderedDict\n";
    put(p);
    p += ")R";
    put(p);
    p += 't';
    put(p);
    p += 'R';
    put(p);
    p += '.';
    return p;
}

std::uint32_t crc32(const char* data, std::size_t n)
{
    static std::uint32_t table[256];
    static bool ready = false;
    if (!ready) {
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = true;
    }
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i)
        c = table[(c ^ static_cast<unsigned char>(data[i])) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/// A stored zip of the records, each record's data aligned to 64 bytes with an extra field.
void writeZip(const fs::path& path, const std::string& folder, const std::vector<std::pair<std::string, std::string>>& records)
{
    std::string out;
    std::string central;
    for (const auto& [name, data] : records) {
        const std::string full = folder + "/" + name;
        const std::uint64_t offset = out.size();
        const std::size_t headerEnd = out.size() + 30 + full.size() + 4;
        const std::size_t pad = (64 - headerEnd % 64) % 64;
        const std::uint32_t crc = crc32(data.data(), data.size());
        out += "PK\x03\x04";
        le(out, 20, 2); le(out, 0, 2); le(out, 0, 2); le(out, 0, 2); le(out, 0, 2);
        le(out, crc, 4); le(out, data.size(), 4); le(out, data.size(), 4);
        le(out, full.size(), 2); le(out, 4 + pad, 2);
        out += full;
        le(out, 0x4b46, 2); le(out, pad, 2); // "FK" padding field, as PyTorchStreamWriter
        out.append(pad, 'Z');
        out += data;
        central += "PK\x01\x02";
        le(central, 20, 2); le(central, 20, 2); le(central, 0, 2); le(central, 0, 2); le(central, 0, 2); le(central, 0, 2);
        le(central, crc, 4); le(central, data.size(), 4); le(central, data.size(), 4);
        le(central, full.size(), 2); le(central, 0, 2); le(central, 0, 2); le(central, 0, 2); le(central, 0, 2);
        le(central, 0, 4); le(central, offset, 4);
        central += full;
    }
    const std::uint64_t cdOffset = out.size();
    out += central;
    out += "PK\x05\x06";
    le(out, 0, 2); le(out, 0, 2); le(out, records.size(), 2); le(out, records.size(), 2);
    le(out, central.size(), 4); le(out, cdOffset, 4); le(out, 0, 2);
    std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
}

std::uint16_t toBf16(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>(x >> 16);
}

std::uint16_t toHalf(float f) // values here are normal and well inside the half range
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const int exp = static_cast<int>((x >> 23) & 0xFF) - 127 + 15;
    if (exp <= 0)
        return static_cast<std::uint16_t>(sign);
    std::uint32_t mant = x & 0x7FFFFFu;
    std::uint32_t h = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h;
    return static_cast<std::uint16_t>(sign | h);
}

struct Stats
{
    double max = -1e300, min = 1e300, sum = 0, sq = 0;
};

/// A .npy file (format 1.0, C order) of `descr` elements with `shape`.
void writeNpy(const fs::path& path, const char* descr, const std::vector<std::int64_t>& shape, const std::string& data)
{
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i)
        dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "") + (i + 1 < shape.size() ? " " : "");
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string head = "\x93NUMPY";
    head += '\x01';
    head += '\x00';
    le(head, header.size(), 2);
    head += header;
    std::ofstream out(path, std::ios::binary);
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

/// One side's file: values v (NPU) or v with noise/error (bench), stored as `kind`; returns its statistics.
/// With `npyDir` the same values are also written as ptdbg's {name}.npy there.
Stats writeTensor(const fs::path& dir, const Spec& spec, std::uint64_t seed, int perturb, const fs::path* npyDir = nullptr)
{
    const std::uint64_t n = numel(spec.shape);
    std::string data(n * itemSize(spec.kind), '\0');
    std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    std::uint64_t t = seed ^ 0xD1B54A32D192ED03ull;
    Stats st;
    for (std::uint64_t i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        // A sum of two uniforms: a bell-shaped activation without a transcendental per element.
        const double u1 = static_cast<double>(s >> 40) / 16777216.0;
        const double u2 = static_cast<double>((s >> 16) & 0xFFFFFF) / 16777216.0;
        double v = (u1 + u2 - 1.0) * 2.0;
        if ((s & 0xF) == 0)
            v = 0; // ReLU-like zeros: bench zeros exercise the eps rule
        if (perturb == 1) {
            t = t * 6364136223846793005ull + 1442695040888963407ull;
            v *= 1.0 + (static_cast<double>(t >> 40) / 16777216.0 - 0.5) * 2e-3;
        } else if (perturb == 2) {
            t = t * 6364136223846793005ull + 1442695040888963407ull;
            v += (static_cast<double>(t >> 40) / 16777216.0 - 0.5);
        }
        const auto f = static_cast<float>(v);
        float stored = f;
        char* p = data.data() + i * itemSize(spec.kind);
        if (spec.kind == Kind::Float32) {
            std::memcpy(p, &f, 4);
        } else {
            const std::uint16_t h = spec.kind == Kind::BFloat16 ? toBf16(f) : toHalf(f);
            std::memcpy(p, &h, 2);
            if (spec.kind == Kind::BFloat16) {
                const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
                std::memcpy(&stored, &w, 4);
            }
        }
        st.max = std::max(st.max, static_cast<double>(stored));
        st.min = std::min(st.min, static_cast<double>(stored));
        st.sum += stored;
        st.sq += static_cast<double>(stored) * stored;
    }
    const char* storage = spec.kind == Kind::Float32 ? "FloatStorage" : spec.kind == Kind::BFloat16 ? "BFloat16Storage" : "HalfStorage";
    const std::string file = spec.name + ".pt";
    writeZip(dir / file, spec.name, { { "data.pkl", tensorPickle(storage, spec.shape) }, { "data/0", data }, { "version", "3\n" } });
    if (npyDir) {
        const fs::path npy = *npyDir / (spec.name + ".npy");
        if (spec.kind == Kind::Float32) {
            writeNpy(npy, "<f4", spec.shape, data);
        } else if (spec.kind == Kind::Float16) {
            writeNpy(npy, "<f2", spec.shape, data);
        } else {
            std::string widened(n * 4, '\0');
            for (std::uint64_t i = 0; i < n; ++i) {
                std::uint16_t h;
                std::memcpy(&h, data.data() + i * 2, 2);
                const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
                std::memcpy(widened.data() + i * 4, &w, 4);
            }
            writeNpy(npy, "<f4", spec.shape, widened);
        }
    }
    return st;
}

/// One row of ptdbg's .pkl: [name, dump_step, md5, dtype, shape, [max, min, mean, norm]].
std::string pklRow(const Spec& spec, const Stats& st)
{
    const char* dtype = spec.kind == Kind::Float32 ? "torch.float32" : spec.kind == Kind::BFloat16 ? "torch.bfloat16" : "torch.float16";
    std::string shape;
    for (std::size_t i = 0; i < spec.shape.size(); ++i)
        shape += (i ? ", " : "") + std::to_string(spec.shape[i]);
    char numbers[256];
    std::snprintf(numbers, sizeof numbers, "%.17g, %.17g, %.17g, %.17g", st.max, st.min,
                  st.sum / static_cast<double>(numel(spec.shape)), std::sqrt(st.sq));
    return "[\"" + spec.name + "\", 0, [], \"" + dtype + "\", [" + shape + "], [" + numbers + "]]\n";
}

std::string leafJson(const Spec& spec, const Stats& st)
{
    const char* dtype = spec.kind == Kind::Float32 ? "torch.float32" : spec.kind == Kind::BFloat16 ? "torch.bfloat16" : "torch.float16";
    std::string shape;
    for (std::size_t i = 0; i < spec.shape.size(); ++i)
        shape += (i ? ", " : "") + std::to_string(spec.shape[i]);
    char numbers[256];
    std::snprintf(numbers, sizeof numbers, "\"Max\": %.17g, \"Min\": %.17g, \"Mean\": %.17g, \"Norm\": %.17g", st.max, st.min,
                  st.sum / static_cast<double>(numel(spec.shape)), std::sqrt(st.sq));
    return std::string("{\"type\": \"torch.Tensor\", \"dtype\": \"") + dtype + "\", \"shape\": [" + shape + "], " + numbers
        + ", \"requires_grad\": false, \"data_name\": \"" + spec.name + ".pt\"}";
}

} // namespace

int main(int argc, char** argv)
{
    std::string kind = "real";
    fs::path out = "comparelarge";
    double scale = 1.0;
    bool ptdbg = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--ptdbg")
            ptdbg = true;
        else if (a == "--kind")
            kind = probescope::bench::optionValue(argv[0], argc, argv, i);
        else if (a == "--out")
            out = std::string(probescope::bench::optionValue(argv[0], argc, argv, i));
        else if (a == "--scale") {
            if (!probescope::bench::parseNumber(probescope::bench::optionValue(argv[0], argc, argv, i), scale) || scale <= 0) {
                std::fprintf(stderr, "%s: --scale needs a positive number\n", argv[0]);
                return 2;
            }
        } else {
            std::fprintf(stderr, "usage: %s [--kind real|large|split] [--scale F] [--out DIR] [--ptdbg]\n", argv[0]);
            return 2;
        }
    }
    // Each API call has one input and one output tensor, so two files per entry.
    std::vector<std::pair<std::string, std::vector<Spec>>> apis;
    if (kind == "real") {
        const std::vector<std::vector<std::int64_t>> shapes = {
            { 8, 128, 384 }, { 384, 384 }, { 8, 128, 1536 }, { 8, 128, 384 }, { 384, 768 }, { 8, 128, 96 },
            { 8, 128, 384 }, { 8, 128, 192 }, { 8, 12, 128, 32 }, { 8, 128, 384 }, { 8, 128, 100 },
        };
        const auto count = static_cast<int>(352 * scale);
        for (int e = 0; e < count; ++e) {
            const std::string api = "Functional.op" + std::to_string(e % 11) + "." + std::to_string(e) + ".forward";
            apis.push_back({ api, { { api + ".input.0", shapes[static_cast<std::size_t>(e) % shapes.size()], Kind::Float32 },
                                    { api + ".output.0", shapes[static_cast<std::size_t>(e + 3) % shapes.size()], Kind::Float32 } } });
        }
    } else if (kind == "large") {
        const std::vector<std::int64_t> mib = { 1, 4, 16, 64, 32, 8 };
        const auto count = static_cast<int>(27 * scale);
        for (int e = 0; e < count; ++e) {
            const std::string api = "Functional.big" + std::to_string(e % 6) + "." + std::to_string(e) + ".forward";
            std::vector<Spec> leaves;
            for (int k = 0; k < 2; ++k) {
                const Kind dk = static_cast<Kind>((e + k) % 3);
                const std::int64_t elements = mib[static_cast<std::size_t>(e * 2 + k) % mib.size()] * (1 << 20) / static_cast<std::int64_t>(itemSize(dk));
                leaves.push_back({ api + (k ? ".output.0" : ".input.0"), { elements / 1024, 1024 }, dk });
            }
            apis.push_back({ api, leaves });
        }
    } else if (kind == "split") {
        // Past kLeftToRightSplitChunks (64) chunks of kChunkElements (65,536): the parallel path of every profile.
        for (int e = 0; e < 2; ++e) {
            const std::string api = "Functional.split" + std::to_string(e) + "." + std::to_string(e) + ".forward";
            apis.push_back({ api, { { api + ".input.0", { 1024 }, Kind::Float32 },
                                    { api + ".output.0", { 4883, 1024 }, Kind::Float32 } } });
        }
    } else {
        std::fprintf(stderr, "%s: --kind is real, large or split\n", argv[0]);
        return 2;
    }

    std::uint64_t bytes = 0;
    std::uint64_t npyBytes = 0;
    std::size_t files = 0;
    for (const char* side : { "npu", "bench" }) {
        const fs::path rank = out / side / "step0" / "rank";
        const fs::path data = rank / "dump_tensor_data";
        fs::create_directories(data);
        const fs::path npyDir = out / "ptdbg" / side / "dump";
        std::string pkl;
        if (ptdbg)
            fs::create_directories(npyDir);
        std::string json = "{\n \"task\": \"tensor\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": \""
            + data.string() + "\",\n \"data\": {";
        for (std::size_t e = 0; e < apis.size(); ++e) {
            const auto& [api, leaves] = apis[e];
            json += (e ? ",\n  \"" : "\n  \"") + api + "\": {";
            for (std::size_t k = 0; k < leaves.size(); ++k) {
                const bool bench = std::string_view(side) == "bench";
                const int perturb = !bench ? 0 : (e == apis.size() / 2 && k == 1) ? 2 : (e % 3 == 0 ? 1 : 0);
                const Stats st = writeTensor(data, leaves[k], e * 2 + k + 1, perturb, ptdbg ? &npyDir : nullptr);
                bytes += fs::file_size(data / (leaves[k].name + ".pt"));
                if (ptdbg) {
                    npyBytes += fs::file_size(npyDir / (leaves[k].name + ".npy"));
                    pkl += pklRow(leaves[k], st);
                }
                ++files;
                json += std::string(k ? ", " : "") + (k ? "\"output\": [" : "\"input_args\": [") + leafJson(leaves[k], st) + "]";
            }
            json += ", \"input_kwargs\": {}}";
        }
        json += "\n }\n}";
        std::ofstream(rank / "dump.json") << json;
        if (ptdbg)
            std::ofstream(out / "ptdbg" / side / "dump.pkl", std::ios::binary) << pkl;
    }
    if (ptdbg) {
        const fs::path root = fs::absolute(out / "ptdbg");
        std::ofstream(root / "compare.json") << "{\"npu_pkl_path\": \"" << (root / "npu/dump.pkl").string()
                                             << "\", \"bench_pkl_path\": \"" << (root / "bench/dump.pkl").string()
                                             << "\", \"npu_dump_data_dir\": \"" << (root / "npu/dump").string()
                                             << "\", \"bench_dump_data_dir\": \"" << (root / "bench/dump").string()
                                             << "\", \"is_print_compare_log\": true}\n";
        std::printf("%s ptdbg pair: %zu .npy files, %.3f GB of .npy in all (both sides) in %s\n", kind.c_str(), files,
                    static_cast<double>(npyBytes) / 1e9, root.string().c_str());
    }
    const fs::path npu = fs::absolute(out / "npu/step0/rank/dump.json");
    const fs::path bench = fs::absolute(out / "bench/step0/rank/dump.json");
    std::ofstream(out / "compare.json") << "{\"npu_path\": \"" << npu.string() << "\", \"bench_path\": \"" << bench.string()
                                        << "\", \"is_print_compare_log\": true}\n";
    std::printf("%s pair: %zu entries, %zu .pt files, %.3f GB of .pt in all (both sides) in %s\n", kind.c_str(), apis.size(),
                files, static_cast<double>(bytes) / 1e9, out.string().c_str());
    return 0;
}
