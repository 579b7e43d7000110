// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: run_ut's CSVs (result/details as -csv_path resumes them, api_precision_compare's
// inputs) and the resume check.
#include "fuzzfile.h"
#include "core/runut/csvio.h"
#include "core/runut/resumecheck.h"

#include <cstdint>
#include <string_view>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto table = runut::parseCsvText(text, "fuzz.csv");
    if (table) {
        for (const char* name : { "API name", "Forward Test Success", "Message" })
            (void)table->column(name);
    }
    const auto path = fuzz::writeInput("accuracy_checking_result_20260101000000.csv", data, size);
    (void)runut::checkResumableCsv(path, 3);
    return 0;
}
