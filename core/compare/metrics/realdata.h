// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/table/cell.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"
#include "core/util/workgroup.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace probescope::dump {
class DumpFile;
}

namespace probescope::compare {

/// The five metric cells of a real-data (task tensor) row and the messages they produce.
struct RealDataMetrics
{
    Cell cosine;
    Cell maxAbsErr;
    Cell maxRelativeErr;
    Cell oneThousandthErrRatio;
    Cell fiveThousandthsErrRatio;
    std::string message; ///< concatenated in msprobe's order (validation, Cosine, MaxAbsErr, MaxRelativeErr)
};

/// Err_message of a row whose tensor file exists but cannot be read: "Dump file: NAME unreadable: REASON"
/// (msprobe says "not found" for both; ProbeScope tells them apart, see docs/reliability.md). A data name that
/// leaves its dump folder (REASON holds [tensor.path-escape]) is reported the same way: nothing is read.
inline constexpr std::string_view kUnreadableMark = "unreadable:";

/// The one resolver of a dump's tensor files (its tensor folder bound to the dump's folder, tensor/resolver.h):
/// what the pipeline hands each profile for each side.
std::shared_ptr<const tensor::TensorResolver> tensorResolverOf(const dump::DumpFile& dump);

/// What one row of a real-data compare needs (msprobe 1.2.2, compare-spec Appendix A.6).
struct RealDataRow
{
    std::string npuName;       ///< NPU row name; the NPU file is npuName + ".pt" in npuTensors
    std::string benchName;     ///< "N/A" for unmatched rows
    std::string dataNameCell;  ///< the row's Data_name cell ("-1" for non-tensor / unmatched rows)
    std::string benchDataName; ///< the bench leaf's data_name found from benchName; "" when none
    /// Each side's tensor files: the only way a row reaches them (never null when a file is to be read).
    std::shared_ptr<const tensor::TensorResolver> npuTensors;
    std::shared_ptr<const tensor::TensorResolver> benchTensors;
    bool fuzzy = false; ///< -f: append the fuzzy note when benchName differs from npuName
};

/// Validation chain + metrics + messages of A.6 steps 2-5 for one row, loading the two tensor files.
RealDataMetrics compareRealDataRow(const RealDataRow& row);

/**
 * compareRealDataRow with a large pair split into chunks that `splitter` hands to idle threads. The files
 * are streamed (small ones read whole into per-thread buffers, large ones a chunk at a time), never
 * loaded as Tensors; the result does not depend on the splitter's thread count. When this pair is large
 * (its files are streamed), the files of `next` are read ahead in the background (readAheadInBackground) while it
 * is computed;
 * small pairs skip that, as it would cost more system calls than it saves.
 */
RealDataMetrics compareRealDataRow(const RealDataRow& row, Splitter& splitter, const RealDataRow* next = nullptr);

/**
 * @brief When a row loop (msprobe's rows, ptdbg's) reads the next row's files ahead: while a row whose files are
 * streamed (large) is computed, and already before the row's files are opened when this thread's previous row was
 * streamed (its next is likely large too; on a cold disk the background read then runs beside this row's first
 * reads). `next` runs at most once per row; an empty one (the last row) never.
 */
class NextRowReadAhead
{
public:
    /// Before the row's files are opened.
    explicit NextRowReadAhead(const std::function<void()>& next);
    /// The row's files are open; `streamed`: either is read a chunk at a time.
    void opened(bool streamed);

private:
    const std::function<void()>& m_next;
    bool m_ran = false;
};

/// Metrics of two loaded tensors (A.6 steps 2.4-4): used by compareRealDataRow and by tests.
RealDataMetrics compareTensors(const tensor::Tensor& npu, const tensor::Tensor& bench);
/// compareTensors with the pair's chunks spread by `splitter` (same result for any thread count).
RealDataMetrics compareTensors(const tensor::Tensor& npu, const tensor::Tensor& bench, Splitter& splitter);

/// "Accuracy Reached or Not" from the Cosine and MaxAbsErr cells (A.6 step 6): Yes, No, Unmatched, None.
std::string accuracyReached(const Cell& cosine, const Cell& maxAbsErr);

} // namespace probescope::compare
