// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what `compare -da` reads (docs/msprobe26-da.md): the rank dump.json of both step folders
// (through the load step) and a compare_result_rank*.json already in the output folder (phase B reads it back).
//
// The input is up to three parts separated by a NUL byte: the NPU rank's dump.json, the bench rank's dump.json
// (the NPU one again when absent) and a stale rank table (none when absent). The last byte, when odd, asks for
// --salvage. Each run writes into a fresh output folder in the scratch folder.
#include "core/compare/msprobe26/diffanalyze.h"
#include "fuzzfile.h"

#include <cstdint>
#include <string_view>
#include <system_error>

using namespace probescope;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto parts = fuzz::splitParts(data, size, 3);
    const std::size_t count = parts.size();
    const fs::path root = fuzz::scratchDir() / "da";
    std::error_code ec;
    fs::remove_all(root, ec);
    fuzz::put(root / "npu/step0/rank0/dump.json", parts[0]);
    fuzz::put(root / "bench/step0/rank0/dump.json", count > 1 ? parts[1] : parts[0]);
    if (count > 2) // rank 1: not written by the run, so phase B reads it back as a stale table
        fuzz::put(root / "out/compare_result_rank1_19990101000000.json", parts[2]);

    compare::msprobe26::DiffAnalyzeOptions options;
    options.timestamp = "20260101000000";
    options.salvage = size > 0 && (data[size - 1] & 1) != 0;
    auto result = compare::msprobe26::runDiffAnalyze(root / "npu/step0", root / "bench/step0", root / "out", options);
    if (!result) {
        (void)result.error().format();
        return 0;
    }
    for (const Diagnostic& d : result->inputDiagnostics)
        (void)d.format();
    // The one promise checked here: a refused run writes nothing.
    if (result->refused && (!result->rankTables.empty() || result->analyzeFile))
        __builtin_trap();
    return 0;
}
