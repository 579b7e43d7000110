// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/comparetable.h"
#include "core/compare/output/csvwriter.h"
#include "core/dump/dumpfile.h"
#include "core/util/diagnostic.h"
#include "core/util/profile.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::compare {

/**
 * @brief The seam between the one compare pipeline (compare/pipeline/pipeline.h) and what differs per tool.
 *
 * Each profile (msprobe 1.2 in compare/msprobe12/, msprobe 26 in compare/msprobe26/, ptdbg 6.0 in
 * compare/ptdbg/) implements this once; the pipeline plans, loads, maps, compares, judges and writes
 * through it and never asks which profile it runs. The metric kernels underneath are shared by all.
 */
class ProfileRules
{
public:
    virtual ~ProfileRules() = default;

    virtual Profile profile() const = 0;

    /// The table of one pair. `options.mappings` holds the mappings in force (the pipeline has checked that
    /// the dumps allow them).
    virtual Result<std::shared_ptr<const CompareTable>> compare(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                                const CompareOptions& options,
                                                                ProgressSink* progress) const = 0;

    /// The CSV text of a table, as this tool writes it, streamed to `sink`; false if the sink failed.
    virtual bool writeCsv(const CompareTable& table, const TextSink& sink) const = 0;

    /// writeCsv's text as one string (for small tables: a 1M-entry pair gives over 1 GB).
    std::string csv(const CompareTable& table) const
    {
        return collectText([&](const TextSink& sink) { return writeCsv(table, sink); });
    }

    /// The advisor_{suffix}_{ts}.txt text the tool writes beside the result, or none (msprobe 26 has no advisor).
    virtual std::optional<std::string> advisor(const CompareTable& table) const = 0;

    /// The file-name suffix of a rank pair in directory mode ("_rank0-rank0" in msprobe 1.2, "_rank0" in 26).
    virtual std::string pairSuffix(std::string_view npuRankFolder, std::string_view benchRankFolder) const = 0;

    /// Whether compare.json's stack_path (with -s) decides stack mode, as in msprobe 1.2; else stack.json beside
    /// the NPU dump.json does.
    virtual bool usesStackPath() const = 0;

    /// The row names this profile's flattener makes for one entry (the -lm data mapping is expanded with them).
    virtual std::vector<std::string> rowNames(const dump::Entry& entry) const = 0;

    /// Whether a dump counts as MindSpore for the mapping options (-cm/-am/-lm; compare-spec §10.3).
    virtual bool isMindSpore(const dump::DumpFile& dump) const = 0;
};

} // namespace probescope::compare
