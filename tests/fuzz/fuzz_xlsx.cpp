// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the xlsx reader (config_check and merge_result goldens, compare workbooks): the zip, then
// workbook, rels, sharedStrings and sheet XML scanned forward.
#include "fuzzfile.h"
#include "core/util/xlsxreader.h"

#include <cstdint>

using namespace probescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto path = fuzz::writeInput("fuzz.xlsx", data, size);
    XlsxReadLimits limits;
    limits.zip.maxEntryBytes = 1 << 20;
    limits.zip.maxTotalBytes = 4 << 20;
    limits.maxCells = 100000;
    auto sheets = readXlsxSheets(path, limits);
    if (sheets) {
        std::size_t rows = 0;
        for (const auto& sheet : *sheets)
            rows += sheet.rows.size();
        (void)rows;
    }
    return 0;
}
