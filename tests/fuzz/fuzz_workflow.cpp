// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what the run-alone workflow of issue 34 reads (docs/overflow-check.md, docs/monitor.md):
// two ranks' dump.json for overflow_check (through the load step), an anomaly.json for anomaly_analyse and a
// monitor CSV for data2db --format monitor.
//
// The input is up to four parts separated by a NUL byte: rank 0's dump.json, rank 1's dump.json (rank 0's again when
// absent), an anomaly.json and a v1 monitor actv CSV. Each run works in a fresh scratch folder.
#include "core/monitor/anomalyanalyse.h"
#include "core/monitor/monitordb.h"
#include "core/overflow/overflowcheck.h"
#include "fuzzfile.h"

#include <cstdint>
#include <string_view>
#include <system_error>

using namespace probescope;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto parts = fuzz::splitParts(data, size, 4);
    const std::size_t count = parts.size();
    const fs::path root = fuzz::scratchDir() / "workflow";
    std::error_code ec;
    fs::remove_all(root, ec);
    fuzz::put(root / "step0/rank0/dump.json", parts[0]);
    fuzz::put(root / "step0/rank1/dump.json", count > 1 ? parts[1] : parts[0]);
    auto checked = overflow::runOverflowCheck(root / "step0", root / "out");
    if (checked) {
        // The promise checked here: a refused run writes nothing.
        if (checked->refused && (checked->analyzeFile || fs::exists(root / "out")))
            __builtin_trap();
    } else {
        (void)checked.error().format();
    }
    if (count > 2) {
        fuzz::put(root / "ad/rank0/anomaly.json", parts[2]);
        monitor::AnomalyAnalyseOptions options;
        options.topK = 3;
        auto top = monitor::analyseAnomalies(root / "ad", options);
        if (!top)
            (void)top.error().format();
    }
    if (count > 3) {
        fuzz::put(root / "mon/Nov28_10-00-00-rank0-f/actv_0-1.csv", parts[3]);
        auto db = monitor::monitorToDb(root / "mon", root / "db", {});
        if (!db)
            (void)db.error().format();
    }
    return 0;
}
