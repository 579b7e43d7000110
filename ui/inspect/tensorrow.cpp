// SPDX-License-Identifier: Apache-2.0
#include "ui/inspect/tensorrow.h"

#include "core/compare/table/flatten.h"
#include "core/compare/metrics/realdata.h"

namespace probescope::ui {

namespace {

std::optional<double> numberCell(const compare::CompareTable& table, std::size_t row, const char* column)
{
    const int c = table.column(column);
    if (c < 0 || static_cast<std::size_t>(c) >= table.rows[row].size())
        return std::nullopt;
    const compare::Cell& cell = table.rows[row][static_cast<std::size_t>(c)];
    if (!cell.isNumber())
        return std::nullopt;
    return cell.asDouble();
}

std::string textCell(const compare::CompareTable& table, std::size_t row, const char* column)
{
    const int c = table.column(column);
    if (c < 0 || static_cast<std::size_t>(c) >= table.rows[row].size())
        return {};
    const compare::Cell& cell = table.rows[row][static_cast<std::size_t>(c)];
    return cell.isString() ? cell.asString() : std::string();
}

/// The data_name of the leaf whose row name is `rowName`, found as the compare flattens entries.
std::string dataNameOf(const dump::DumpFile& dump, const std::string& rowName, compare::CompareMode mode)
{
    const dump::Entry* entry = dump.find(session::entryKeyOfRow(rowName));
    if (!entry)
        return {};
    const auto index = static_cast<std::uint32_t>(entry - dump.entries.data());
    auto op = compare::flattenEntry(*entry, index, mode);
    if (!op)
        return {};
    for (const compare::FlatRow& r : op->rows) {
        if (r.nameText() == rowName)
            return r.dataName() == "-1" ? std::string() : std::string(r.dataName());
    }
    return {};
}

} // namespace

TensorRowFiles resolveTensorRow(const session::PairAnalysis& analysis, std::size_t row)
{
    TensorRowFiles files;
    if (!analysis.table || !analysis.skeleton || !analysis.skeleton->npu || !analysis.skeleton->bench) {
        files.message = "No compare result to read tensors from.";
        return files;
    }
    const compare::CompareTable& table = *analysis.table;
    if (row >= table.rows.size()) {
        files.message = "Row " + std::to_string(row) + " does not exist (the table has " + std::to_string(table.rows.size())
            + " rows).";
        return files;
    }
    files.npuName = textCell(table, row, "NPU Name");
    files.benchName = textCell(table, row, "Bench Name");
    if (table.mode != compare::CompareMode::RealData) {
        files.kind = TensorRowFiles::Kind::NotTensorMode;
        files.message = table.mode == compare::CompareMode::Md5
            ? "md5-mode dump: no tensors. These dumps were written with task \"statistics\" and summary_mode md5, so "
              "only checksums and statistics were saved; dump with task \"tensor\" to inspect values."
            : "Statistics-mode dump: no tensors. These dumps were written with task \"statistics\", so only the four "
              "statistics of each tensor were saved; dump with task \"tensor\" to inspect values.";
        return files;
    }
    files.tableCosine = numberCell(table, row, "Cosine");
    files.tableMaxAbsErr = numberCell(table, row, "MaxAbsErr");

    const dump::DumpFile& npu = *analysis.skeleton->npu->dump;
    const dump::DumpFile& bench = *analysis.skeleton->bench->dump;
    files.npuDir = npu.tensorDir;
    files.npuTensors = compare::tensorResolverOf(npu);
    files.npuDataName = dataNameOf(npu, files.npuName, table.mode);
    if (files.npuDataName.empty()) {
        files.kind = TensorRowFiles::Kind::NoTensor;
        files.message = "\"" + files.npuName + "\" is not a tensor (a scalar, a None argument or a leaf without "
            "data_name): there is no file to inspect.";
        return files;
    }
    files.kind = TensorRowFiles::Kind::Tensors;
    files.benchDir = bench.tensorDir;
    files.benchTensors = compare::tensorResolverOf(bench);
    const bool matched = row < table.matched.size() ? table.matched[row] : true;
    if (!matched || files.benchName.empty() || files.benchName == "N/A") {
        files.benchNote = "No bench counterpart: only the NPU tensor is shown.";
    } else {
        files.benchDataName = dataNameOf(bench, files.benchName, table.mode);
        if (files.benchDataName.empty())
            files.benchNote = "The bench leaf \"" + files.benchName + "\" has no data file: only the NPU tensor is shown.";
    }
    return files;
}

} // namespace probescope::ui
