// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tensor inspector's worker data (private to ui/inspect): one row's two sides as read and summarised on the pool,
// a heatmap slice asked for and computed, and the texts both the loading/slicing part (tensorinspector.cpp) and the
// plots part (tensorinspectorplots.cpp) show.

#include "ui/inspect/tensorinspector.h"

#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace probescope::ui::inspect {

using tensor::ElementKind;

/// One side as read by the worker.
struct Side
{
    std::optional<tensor::Tensor> tensor;
    QString file;  ///< data name, as people know the file
    QString error; ///< why it could not be read ("" when it was, or was not asked for)
};

/// Everything computed once per row, on the worker. Immutable once published.
struct Loaded
{
    TensorRowFiles files;
    Side npu;
    Side bench;
    QString note; ///< why there is no difference (shapes differ, …)
    std::optional<tensor::DiffSummary> summary;
    std::vector<tensor::WorstElement> worstAbs;
    std::vector<tensor::WorstElement> worstRel;
    std::optional<tensor::Histogram> npuHist;
    std::optional<tensor::Histogram> benchHist;
    std::optional<tensor::Histogram> absHist; ///< log10
    std::optional<tensor::Histogram> relHist; ///< log10
    double valueMagnitude = 1; ///< max |finite value| over both sides: one colour scale for NPU and bench

    bool hasDiff() const { return summary.has_value(); }
    const tensor::Tensor* tensorFor(ElementKind kind) const
    {
        if (kind == ElementKind::Bench)
            return bench.tensor ? &*bench.tensor : nullptr;
        if (kind == ElementKind::Npu || hasDiff())
            return npu.tensor ? &*npu.tensor : nullptr;
        return nullptr;
    }
};

struct SliceRequest
{
    std::shared_ptr<const Loaded> loaded;
    ElementKind kind = ElementKind::Npu;
    tensor::SliceSpec spec;
    std::uint64_t generation = 0;
};

struct SliceResult
{
    std::uint64_t generation = 0;
    ElementKind kind = ElementKind::Npu;
    tensor::SliceSpec spec;
    tensor::Slice2D shown; ///< block-reduced to at most kHeatmapCells per axis
    std::int64_t rows = 0; ///< full slice size
    std::int64_t cols = 0;
    std::int64_t rowFactor = 1;
    std::int64_t colFactor = 1;
    double maxFinite = 0;   ///< largest finite value (differences) or magnitude (values) in `shown`
    double minPositive = 0; ///< smallest value > 0 in `shown` (for a log colour scale), 0 when none
    std::optional<tensor::DiffSummary> summary;
    QString error;
};

bool isDiff(ElementKind kind);
/// numpy-style text of a slice: "[0, :, :]".
QString sliceText(const tensor::SliceSpec& spec, std::size_t rank);
QString indexText(const std::vector<std::int64_t>& index);
/// The views' names on screen, in the language in force.
QString viewName(ElementKind kind);

} // namespace probescope::ui::inspect
