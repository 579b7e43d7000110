// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading a reference CSV in tests (msprobe's golden files, pandas' to_csv) through the product's reader
// (core/util/csv.h), as pandas reads it: quoted fields may hold commas, quotes and line breaks; blank lines are
// skipped. Shared by tst_realdata (core) and tst_setupcheck_ui (ui).

#include "core/util/csv.h"
#include "tempdir.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace probescope::testing {

/// The records of the CSV file at `path`, each as its fields; none when the file cannot be read.
inline std::vector<std::vector<std::string>> readCsv(const std::filesystem::path& path)
{
    std::vector<std::vector<std::string>> records;
    for (CsvRecord& record : splitCsvRecords(readAll(path), false))
        records.push_back(std::move(record.fields));
    return records;
}

} // namespace probescope::testing
