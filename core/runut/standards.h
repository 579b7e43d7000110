// SPDX-License-Identifier: Apache-2.0
#pragma once
// run_ut's judge: msprobe's Comparator.compare_output (run-ut-spec §5) on replayed outputs, the
// precision standards that fill the new-standard columns (§5.3-5.5), and the cells of
// accuracy_checking_details (§6.2). Pure C++ on tensor::Tensor: no LibTorch, no Qt.

#include "core/runut/replayer.h"

#include <array>
#include "core/util/profile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::runut {

/// msprobe12: msprobe 1.2 (MSTT tree): per-API standard lists of api_precision_standard.yaml, cosine NaN = error,
/// empty tensor = error, MSTT benchmark thresholds (§8.3). msprobe26: current msprobe (CUR): benchmark for all floats,
/// cosine NaN = ok, empty = SKIP, quantization_api_list, protection-level thresholds L0/L1/L2. (ptdbg has no run_ut.)
using probescope::Profile;

struct CompareContext
{
    std::string apiName;  ///< "gelu", "linalg.inv" (dispatch and special cases: dropout, quantization)
    std::string fullName; ///< "Functional.gelu.0" (dropout is detected on it, as msprobe does)
    bool inputWasFp8 = false;
    Profile profile = Profile::Msprobe12;
    /// Msprobe26 only: config.yaml's quantization_api_list; null = its default
    /// (npu_rms_norm_dynamic_quant, npu_dynamic_quant, npu_quant_lightning_indexer).
    const std::vector<std::string>* quantizationApis = nullptr;
};

/// The Python type a metric had in msprobe, which decides how its cell is written (§6.2): a Python
/// float or numpy float64 goes through "{:.14f}", a numpy float32 scalar through str(), and a Python
/// int (the `0` several metrics return when their mask is empty) prints as an integer.
enum class NumberKind : std::uint8_t { Float64, Float32, Int };

/// Metric columns of a details row, in header order (cells 4..20).
enum class Metric : std::uint8_t {
    Cosine,
    MaxAbsErr,
    Ratio100,
    Ratio1000,
    Ratio10000,
    BinaryErrRate,
    Eb,
    Rmse,
    SmallValueErrRatio,
    MaxRelErr,
    MeanRelErr,
    InfNanErrRate,
    RelErrRate,
    AbsErrRate,
    UlpMax,
    UlpMean,
    UlpOverRatio,
};
inline constexpr std::size_t kMetricCount = 17;

/// One row of accuracy_checking_details (§6.2); std::nullopt = SPACE cell. NaN/inf are values.
struct DetailRow
{
    std::string name;
    std::string benchDtype, deviceDtype, shape;
    std::optional<double> cosine, maxAbsErr, ratio100, ratio1000, ratio10000, binaryErrRate, eb, rmse,
        smallValueErrRatio, maxRelErr, meanRelErr, infNanErrRate, relErrRate, absErrRate, ulpMax, ulpMean,
        ulpOverRatio;
    std::string status; ///< "pass" | "warning" | "error" | "SKIP"
    std::string message;
    /// How each metric is written, indexed by Metric (default: the 14-decimal form).
    std::array<NumberKind, kMetricCount> kinds {};

    std::optional<double>& metric(Metric m);
    const std::optional<double>& metric(Metric m) const;
};

struct CompareOutcome
{
    std::string status; ///< aggregate: pass | warning | error | SKIP; "" = SPACE (nothing compared)
    std::vector<DetailRow> rows;
};

/// msprobe's Comparator.compare_output for one side (§5.1-5.3): `rowPrefix` is e.g.
/// "Functional.gelu.0.forward.output" and rows are named rowPrefix + "." + i.
/// For backward pass the gradients as one Kind::List value each: an empty list on either side (msprobe's
/// `not (bench_grad and device_grad)`) gives status "" and no rows; a backward message is the caller's
/// skipRow. A top-level Kind::None bench output is a SKIP row ("Bench output is None, skip this test.").
/// Dropout APIs (fullName contains "dropout") give a status and no rows.
CompareOutcome compareOutput(const Value& bench, const Value& device, const CompareContext& ctx,
                             std::string_view rowPrefix);

/// The 23 cells of a details row exactly as msprobe writes them (SPACE = " ", floats "{:.{precision}f}",
/// NaN as "nan", inf as "inf", numpy float32 metrics as numpy's str(), Python ints as integers).
std::vector<std::string> detailCells(const DetailRow& row, int precision = 14);
const std::vector<std::string>& detailsHeader(); ///< the 23 column names, in order

/// A SKIP row for a whole API (all SPACE but Status=SKIP and Message).
DetailRow skipRow(std::string name, std::string message);

// ---- Building blocks, public for the tests and for api_precision_compare ----

/// The precision standards (§5.3) with their internal ids and the names api_precision_compare writes.
enum class Standard : std::uint8_t { Benchmark, AbsoluteThreshold, Binary, Ulp, Thousandth, Accumulative };
const char* standardCsvName(Standard s); ///< 标杆比对法, 绝对阈值法, 二进制一致法, ULP误差比对法, 双千指标法, 累积误差比对法

/// The api_precision_standard.yaml list an API is on (MSTT), or Benchmark when it is on none.
Standard yamlStandard(std::string_view apiName);

/**
 * @brief The standard that fills the new-standard columns of a float output (§5.3 dispatch).
 *
 * `outDtype` is the device dtype as torch names it ("torch.float16", "torch.float8_e4m3fn", ...).
 * Outputs are never fp8 in this port (LibTorch 1.13 has no fp8 type), but api_precision_compare
 * reads msprobe CSVs that may hold fp8 rows, so the string form is the input.
 */
Standard dispatchStandard(std::string_view apiName, std::string_view outDtype, bool inputWasFp8, Profile profile);

/// numpy's str() of a float32 scalar: shortest round-trip digits, positional for 1e-4 <= |x| < 1e16
/// ("0.001", "3.0"), scientific otherwise ("1e-05", "1.5e-07"), "nan", "inf".
std::string numpyFloat32Str(float value);

/// Python's "{:.{precision}f}" of a float ("nan", "inf", "-inf" for the non-finite values).
std::string pythonFixed(double value, int precision);

} // namespace probescope::runut
