// SPDX-License-Identifier: Apache-2.0
#pragma once
// msprobe 26's `config_check -c bench.zip cmp.zip -o OUT` (ConfigChecker.compare): both packs extracted into OUT/bench
// and OUT/cmp, every checker whose entry is in both (env, pip, dataset, weights, hyperparameters, random, in
// msprobe's registration order) compared, and OUT/result.xlsx written with a summary sheet first and one sheet per
// checker; one CSV per sheet beside it. The rules and quirks kept are listed in docs/config-check.md.

#include "core/compare/output/xlsxwriter.h"
#include "core/util/diagnostic.h"
#include "core/util/ziparchive.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace probescope::setupcheck {

/// The sheets of result.xlsx for two extracted packs (summary first). Errors name the file that could not be
/// compared (id `config-check.*`).
Result<std::vector<compare::XlsxSheet>> comparePackFolders(const std::filesystem::path& benchDir,
                                                           const std::filesystem::path& cmpDir);

/// The two packs of a comparison, each opened and checked whole (ZipLimits), bench first: what both ways of comparing
/// packs (compareConfigPacks, comparePackZips) do before anything is created.
struct PackZips
{
    std::shared_ptr<ZipReader> bench;
    std::shared_ptr<ZipReader> cmp;
};
Result<PackZips> openPackZips(const std::filesystem::path& benchZip, const std::filesystem::path& cmpZip,
                              const ZipLimits& limits);

struct ConfigCompareOutcome
{
    std::filesystem::path benchDir;
    std::filesystem::path cmpDir;
    std::vector<std::filesystem::path> files;                 ///< result.xlsx, then the sheet CSVs
    std::vector<std::pair<std::string, std::string>> summary; ///< (checker, pass/warning/error)
};

/**
 * @brief The whole command: `outDir` is created if missing (its parent must exist); OUT/bench, OUT/cmp and
 * OUT/result.xlsx must not exist yet (nothing is replaced). Every zip is checked (ZipLimits) before anything is
 * extracted from it.
 */
Result<ConfigCompareOutcome> compareConfigPacks(const std::filesystem::path& benchZip,
                                                const std::filesystem::path& cmpZip,
                                                const std::filesystem::path& outDir, const ZipLimits& limits = {});

} // namespace probescope::setupcheck
