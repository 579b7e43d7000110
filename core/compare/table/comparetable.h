// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/compare/table/cellrows.h"
#include "core/compare/table/flatten.h"
#include "core/dump/dumpfile.h"
#include "core/dump/rankdump.h"
#include "core/util/diagnostic.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace probescope::tensor {
class TensorResolver; // tensor/resolver.h
}

namespace probescope::compare {

enum class RowColor : std::uint8_t { None, Yellow, Red };

struct NameMappings; // compare/match/mapping.h

struct CompareOptions
{
    bool fuzzy = false;     ///< -f
    bool stackMode = false; ///< add NPU_Stack_Info (resolved by the caller, see resolveStackMode)
    const dump::StackMap* stack = nullptr; ///< the NPU stack.json used in stack mode
    unsigned threads = 0; ///< tensor pairs compared at once (0 = one per hardware thread); never changes results
    /// Whether the bench side may be flattened on a thread of its own beside the NPU side (with threads above 1).
    /// Off for a small pair or when the caller runs pairs in parallel: the thread costs more than it saves
    /// (JobOptions::pairsInParallel). The tensor pairs still use `threads`. Never changes results.
    bool sideThreads = true;
    /// Called from worker threads as each real-data row's metrics are filled in (row index, in any order),
    /// so a viewer can colour rows while the compare runs. Must be thread-safe; may be empty.
    std::function<void(std::size_t row, const std::vector<Cell>& cells)> rowReady;
    /// Called once from the calling thread when every row is laid out (names, matched, npuEntry; the
    /// statistics/md5 cells final; real-data metric cells still empty), before any rowReady. The table is
    /// being built: copy what is needed, keep no reference.
    std::function<void(const struct CompareTable& layout)> layoutReady;
    /// -cm / -am / -dm / -lm in force (compare/match/mapping.h); the caller has checked that the dumps allow them.
    /// msprobe 1.2 profile: compareDumps applies cell and api mapping (data mapping is compareWithDataMapping);
    /// msprobe 26 profile: msprobe26::compareDumps applies all of them. Not owned; may be null.
    const NameMappings* mappings = nullptr;
    /// Each side's tensor files, the only way a profile reads them (tensor/resolver.h): the pipeline hands in
    /// tensorResolverOf(dump) of both sides. When null the profile takes that same resolver itself (callers that
    /// compare two files directly).
    std::shared_ptr<const tensor::TensorResolver> npuTensors;
    std::shared_ptr<const tensor::TensorResolver> benchTensors;
};

/// A finished compare of one NPU/bench dump pair (msprobe 1.2.2 layout). Immutable once built.
struct CompareTable
{
    CompareMode mode = CompareMode::RealData;
    bool stackMode = false;
    std::vector<std::string> header;
    CellRows rows;                           ///< compact; cells are read as Cell or CellView
    std::vector<RowColor> colors;            ///< msprobe's red/yellow highlight per row
    std::vector<std::uint32_t> npuEntry;     ///< NPU dump entry index of each row
    std::vector<bool> matched;               ///< whether the row's entry found a bench entry
    std::uint32_t npuOpsLost = 0;            ///< NPU entries msprobe's matching loop never reached
    Diagnostics diagnostics;

    int column(std::string_view name) const; ///< -1 if absent
};

/// The mode of a pair (tensor / statistics / md5), or the reason they cannot be compared.
Result<CompareMode> detectMode(const dump::DumpFile& npu, const dump::DumpFile& bench);

/// A data_mapping file (msprobe's -dm): NPU row name -> bench row name ("N/A" allowed), in file order.
struct DataMapping
{
    std::filesystem::path path;
    std::vector<std::pair<std::string, std::string>> pairs;
};

/// Column names of a mode (A.5).
std::vector<std::string> headerFor(CompareMode mode, bool stackMode);

} // namespace probescope::compare
