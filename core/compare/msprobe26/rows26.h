// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rows of an msprobe 26 compare before they become a table (internal to msprobe26/): a dump flattened into
// msprobe's ParseData rows (flatten26.cpp) and the NPU rows paired with bench rows (match26.cpp); compare.cpp lays
// the pairs out as the table.

#include "core/compare/table/cell.h"
#include "core/compare/table/comparetable.h"
#include "core/compare/match/mapping.h"
#include "core/dump/dumpfile.h"
#include "core/util/diagnostic.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace probescope::compare::msprobe26::detail {

inline constexpr const char* kNA = "N/A";

/// One flattened leaf (a row of msprobe's ParseData frame).
struct Row26
{
    std::string name;
    std::string dtype; ///< astype(str): "None" for a null leaf
    std::string shape;
    std::array<Cell, 4> stats;
    std::string md5;
    std::string dataName = "-1";
    std::optional<std::string> requiresGrad;
    std::string state;
    std::uint32_t entry = 0;
    std::string apiOrigin;
    std::optional<std::string> stack; ///< first row of an entry in stack mode (None → N/A)
    std::string direction;
    std::string callDirection;
    std::string opNoNumber;
    int forwardOrder = 0;
    int backwardOrder = 0;
    std::string suffix;
    std::string key; ///< compare key (renumbered name)
    std::optional<std::vector<std::string>> stackFrames; ///< the same stack as a list (-da writes it as JSON)
    Cell p2pOp = Cell::text("None");   ///< a torch.distributed.P2POp leaf's "op" (-da only)
    Cell p2pPeer = Cell::text("None"); ///< its "peer"
};

/// Rows of one entry in Era C order (empty when the entry is skipped); the error names the entry.
Result<std::vector<Row26>> flattenEntry26(const dump::Entry& entry);
/// Flattens a whole dump (gen_data_df): derived fields, call counters and the stack of each entry.
Result<std::vector<Row26>> flattenDump26(const dump::DumpFile& file, const CompareOptions& options);
/// update_backward_call: the call index of backward rows becomes the per-API backward count.
void renumberBackward(std::vector<Row26>& rows);

/// An NPU row and its bench row, if any (indices into the two row lists).
struct Pair
{
    std::size_t npu;
    std::optional<std::size_t> bench;
};

/// §3.2: equal, or both in the fp16/fp32/bf16 group of one spelling; MindSpore NPU vs PyTorch bench compare
/// dtype classes (int, float, bool, complex) instead of names.
bool dtypeCompatible(std::string a, std::string b, bool crossFramework);
/// Rows paired by compare key: each NPU row with every bench row of its key, or alone.
std::vector<Pair> matchExact(const std::vector<Row26>& npu, const std::vector<Row26>& bench);
/// -fm: msprobe 26's queue matching by renamed API; `lost` gets the NPU rows the walk never reached.
std::vector<Pair> matchFuzzy(const std::vector<Row26>& npu, const std::vector<Row26>& bench, std::uint32_t* lost);
/// --match-file: the rows of each manually matched entry paired with the bench entry's row of the same tail.
void applyManualMatches(const ManualMatches& manual, const std::vector<Row26>& npu, const std::vector<Row26>& bench,
                        std::vector<Pair>& pairs, std::uint32_t* lost);
/// The NPU compare keys under the mappings (§3.6, precedence api > cell > data).
void assignMappedKeys(std::vector<Row26>& npu, const std::vector<Row26>& bench, const NameMappings& m);

} // namespace probescope::compare::msprobe26::detail
