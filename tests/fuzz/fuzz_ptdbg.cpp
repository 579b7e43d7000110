// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ptdbg's compare of two .pkl files (issue 25). The input is split at its first 0xFF byte (a
// byte no UTF-8 text holds) into the NPU and the bench pkl; without one both sides are the input. Each pair is
// compared as ptdbg does (statistics/md5 from the rows, real data through the resolver of a small .npy folder
// beside each pkl), with and without stack mode and fuzzy matching, then parsed (ptdbg's parse) and read by the
// legacy reader the load step uses.
#include "core/compare/ptdbg/ptdbgcompare.h"
#include "core/dump/dumpfile.h"
#include "fuzzfile.h"

#include <cstdint>
#include <cstring>
#include <string_view>

using namespace probescope;
namespace ptdbg = probescope::compare::ptdbg;

namespace {

/// A 3-float .npy, the same for every row name the fuzzer might reach by luck ("Torch.add.0.forward.input.0").
void writeNpyFolders()
{
    static bool written = false;
    if (written)
        return;
    written = true;
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string npy = "\x93NUMPY";
    npy += '\x01';
    npy += '\x00';
    npy += static_cast<char>(header.size() & 0xff);
    npy += static_cast<char>(header.size() >> 8);
    npy += header;
    const float values[3] = { 1, 2, 3 };
    npy.append(reinterpret_cast<const char*>(values), sizeof values);
    for (const char* side : { "npu", "bench" }) {
        std::filesystem::create_directories(fuzz::scratchDir() / side);
        for (const char* name : { "Torch.add.0.forward.input.0.npy", "Torch.add.0.forward.output.npy",
                                  "Functional.relu.0.forward.input.0.npy", "Functional.relu.0.forward.output.npy" })
            fuzz::writeInput(std::string(side) + "/" + name, reinterpret_cast<const std::uint8_t*>(npy.data()), npy.size());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    writeNpyFolders();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::size_t cut = text.find('\xff');
    const std::string_view npu = cut == std::string_view::npos ? text : text.substr(0, cut);
    const std::string_view bench = cut == std::string_view::npos ? text : text.substr(cut + 1);
    ptdbg::PtdbgInput input;
    input.npuPkl = fuzz::writeInput("npu.pkl", reinterpret_cast<const std::uint8_t*>(npu.data()), npu.size());
    input.benchPkl = fuzz::writeInput("bench.pkl", reinterpret_cast<const std::uint8_t*>(bench.data()), bench.size());
    for (const bool realData : { false, true }) {
        input.npuDataDir = realData ? fuzz::scratchDir() / "npu" : std::filesystem::path();
        input.benchDataDir = realData ? fuzz::scratchDir() / "bench" : std::filesystem::path();
        for (const bool stack : { false, true }) {
            ptdbg::PtdbgOptions options;
            options.stackMode = stack;
            options.fuzzy = !stack;
            options.threads = 1;
            options.salvage = realData;
            auto table = ptdbg::comparePkl(input, options);
            if (table) {
                (void)ptdbg::advisorText(**table);
                (void)ptdbg::firstFailingRow(**table);
            } else {
                (void)table.error().format();
            }
        }
    }
    (void)ptdbg::parsePkl(input.npuPkl, "Torch");
    auto dump = dump::readLegacyPkl(input.npuPkl);
    if (dump) {
        for (const auto& d : (*dump)->diagnostics)
            (void)d.format();
    }
    return 0;
}
