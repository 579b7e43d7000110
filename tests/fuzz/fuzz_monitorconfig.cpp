// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the monitor's config.json (TrainerMon, issue 34), the C++ API's and the Python module's alike
// (both read it through core/collect/monitorconfig.cpp). Every input ends in a MonitorConfig or a CollectError
// naming the file, never a crash; and whatever is accepted keeps msprobe's bounds (ops known, shape and dtype among them; step_count_per_record 1..1e6; ndigits 0..20; start_step >= 0, step_interval >= 1; rules with thresholds
// where AnomalyTurbulence needs one). squashParamName runs over every target name.
#include "probescope/collect/config.h"
#include "probescope/collect/monitorconfig.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace probescope::collect;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const MonitorConfig c = parseMonitorConfigText(text, "fuzz.json");
        bool shape = false, dtype = false;
        for (const auto& op : c.ops) {
            shape = shape || op == "shape";
            dtype = dtype || op == "dtype";
        }
        if (!shape || !dtype)
            std::abort();
        if (c.stepCountPerRecord < 1 || c.stepCountPerRecord > 1000000 || c.ndigits < 0 || c.ndigits > 20
            || c.startStep < 0 || c.stepInterval < 1 || c.collectTimes < 0 || c.targets.empty())
            std::abort();
        for (const auto& rule : c.alertRules) {
            if (rule.kind == MonitorAlertRule::Kind::Turbulence && (!rule.threshold || *rule.threshold < 0))
                std::abort();
        }
        for (const auto& target : c.targets) {
            const std::string squashed = squashParamName(target);
            if (squashed.size() > target.size())
                std::abort();
        }
    } catch (const CollectError& e) {
        if (std::string_view(e.what()).find("fuzz.json") == std::string_view::npos)
            std::abort(); // every error names the file
    }
    return 0;
}
