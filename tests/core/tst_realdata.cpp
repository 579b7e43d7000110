// SPDX-License-Identifier: Apache-2.0
// Tests for core/compare/realdata: msprobe 1.2.2's tensor-mode metrics (compare-spec Appendix A.6).
// The synthetic expectations were produced with numpy 1.24 (/usr/bin/python3) running msprobe's formulas;
// the reference function `compare(n, b)` is msprobe's get_error_flag_and_msg + compare_ops_apply:
//
//   EPS = np.finfo(float).eps; fmt = lambda x: float('{:.12f}'.format(x))
//   validation: size 0 -> 0 x5; 0-d -> message, skip; shape; inf/nan masks (zero them when equal); dtype
//   if b.dtype not in (float16, float32, float64): n, b = n.astype(float), b.astype(float)
//   nc, bc = n.copy(), b.copy(); z = bc == 0; bc[z] += EPS; nc[z] += EPS; re = abs((nc - bc) / bc)
//   n, b = flattened .astype(float) (0-d: kept, bool 0-d -> float)
//   cosine = n.dot(b) / (norm(n) * norm(b)) -> fmt, round(c, 6) above 0.9999; maxabs = fmt(max|n - b|)
//   maxrel = fmt(max(re)); ratios = fmt(sum(re < 0.001 / 0.005) / size(re))
//
// Each expectation below names the numpy inputs it came from.
#include "core/compare/metrics/realdata.h"
#include "core/tensor/dtype.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"
#include "csvread.h"
#include "maketensor.h"
#include "tempdir.h"
#include "fixtureguard.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace probescope;
using namespace probescope::compare;
using probescope::tensor::DType;
using probescope::tensor::Tensor;
using probescope::testing::makeTensor;
namespace fs = std::filesystem;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

const std::string kZeroDMessage =
    "This is type of 0-d tensor, can not calculate 'Cosine', 'One Thousandth Err Ratio' and 'Five Thousandths Err Ratio'. ";
const std::string kMaxAbsNan = "Cannot compare by MaxAbsError, the data contains nan/inf/-inf in dump data.";
const std::string kMaxRelNan = "Cannot compare by MaxRelativeError, the data contains nan/inf/-inf in dump data.";
const std::string kDtypeMessage = "Dtype of NPU and bench tensor do not match.";

Tensor vec(DType dtype, const std::vector<double>& values)
{
    return makeTensor(dtype, { static_cast<std::int64_t>(values.size()) }, values);
}

Tensor scalar(DType dtype, double value)
{
    return makeTensor(dtype, {}, { value });
}

Cell u()
{
    return Cell::text("unsupported");
}

Cell num(double v)
{
    return Cell::number(v);
}

/// Exact comparison of the five cells (NaN never appears as a number: msprobe writes "Nan").
void expectCells(const RealDataMetrics& m, const std::vector<Cell>& expected)
{
    ASSERT_EQ(expected.size(), 5U);
    EXPECT_EQ(m.cosine, expected[0]) << "Cosine";
    EXPECT_EQ(m.maxAbsErr, expected[1]) << "MaxAbsErr";
    EXPECT_EQ(m.maxRelativeErr, expected[2]) << "MaxRelativeErr";
    EXPECT_EQ(m.oneThousandthErrRatio, expected[3]) << "One Thousandth Err Ratio";
    EXPECT_EQ(m.fiveThousandthsErrRatio, expected[4]) << "Five Thousandths Err Ratio";
}

} // namespace

// ---------------------------------------------------------------------------------------------
// compareTensors: validation chain

TEST(RealDataTensors, IdenticalFloat32)
{
    // compare(np.array([1,2,3],f32), np.array([1,2,3],f32)) -> [1.0, 0.0, 0.0, 1.0, 1.0], ''
    const auto m = compareTensors(vec(DType::Float32, { 1, 2, 3 }), vec(DType::Float32, { 1, 2, 3 }));
    expectCells(m, { num(1), num(0), num(0), num(1), num(1) });
    EXPECT_EQ(m.message, "");
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "Yes");
}

TEST(RealDataTensors, EmptyNpuGivesIntegerZeros)
{
    // msprobe's error_value_process returns the Python int 0 for every metric of an empty NPU array.
    const auto m = compareTensors(makeTensor(DType::Float32, { 0, 3 }, {}), vec(DType::Float32, { 1, 2 }));
    expectCells(m, { Cell::integer(0), Cell::integer(0), Cell::integer(0), Cell::integer(0), Cell::integer(0) });
    EXPECT_EQ(m.message, "This is empty data, can not compare.");
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "No");
}

TEST(RealDataTensors, ShapeMismatch)
{
    const auto m = compareTensors(vec(DType::Float32, { 1, 2 }), vec(DType::Float32, { 1, 2, 3 }));
    const Cell s = Cell::text("shape unmatched");
    expectCells(m, { s, s, s, s, s });
    EXPECT_EQ(m.message, "Shape of NPU and bench tensor do not match. Skipped.");
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "Unmatched");

    // Same element count, different shape: still a mismatch.
    const auto m2 = compareTensors(makeTensor(DType::Float32, { 2, 1 }, { 1, 2 }), vec(DType::Float32, { 1, 2 }));
    EXPECT_EQ(m2.cosine, s);
}

TEST(RealDataTensors, ZeroDFloat32)
{
    // compare(np.array(1.5,f32), np.array(1.25,f32)) -> ['unsupported', 0.25, 0.20000000298, 'unsupported'x2]
    const auto m = compareTensors(scalar(DType::Float32, 1.5), scalar(DType::Float32, 1.25));
    expectCells(m, { u(), num(0.25), num(0.20000000298), u(), u() });
    EXPECT_EQ(m.message, kZeroDMessage);
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "None");
}

TEST(RealDataTensors, ZeroDKeepsItsDtypeForMaxAbsErr)
{
    // compare(np.array(3,f32), np.array(1e-8,f32)) -> MaxAbsErr 3.0 (float32 subtraction), MaxRel 300000000.0
    // (float64 arithmetic would give 2.99999999).
    auto m = compareTensors(scalar(DType::Float32, 3), scalar(DType::Float32, 1e-8));
    expectCells(m, { u(), num(3.0), num(300000000.0), u(), u() });

    // compare(np.array(2048,f16), np.array(0.5,f16)) -> MaxAbsErr 2048.0, MaxRel 4096.0 (float16 rounding)
    m = compareTensors(scalar(DType::Float16, 2048), scalar(DType::Float16, 0.5));
    expectCells(m, { u(), num(2048.0), num(4096.0), u(), u() });

    // compare(np.array(5,np.int64), np.array(7,np.int64)) -> 2.0, 0.285714285714
    m = compareTensors(scalar(DType::Int64, 5), scalar(DType::Int64, 7));
    expectCells(m, { u(), num(2.0), num(0.285714285714), u(), u() });

    // compare(np.array(1,np.uint8), np.array(2,np.uint8)) -> 255.0 (uint8 wraps), 0.5
    m = compareTensors(scalar(DType::UInt8, 1), scalar(DType::UInt8, 2));
    expectCells(m, { u(), num(255.0), num(0.5), u(), u() });
    EXPECT_EQ(m.message, kZeroDMessage);
}

TEST(RealDataTensors, ZeroDBoolAndNan)
{
    // compare(np.array(True), np.array(False)) -> 1.0, 4503599627370496.0
    auto m = compareTensors(scalar(DType::Bool, 1), scalar(DType::Bool, 0));
    expectCells(m, { u(), num(1.0), num(4503599627370496.0), u(), u() });

    // compare(np.array(np.nan,f32), np.array(1,f32)): no inf/nan step for 0-d, both errors are Nan.
    m = compareTensors(scalar(DType::Float32, kNan), scalar(DType::Float32, 1));
    const Cell nan = Cell::text("Nan");
    expectCells(m, { u(), nan, nan, u(), u() });
    EXPECT_EQ(m.message, kZeroDMessage + kMaxAbsNan + kMaxRelNan);
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "None");
}

TEST(RealDataTensors, LengthOne)
{
    // compare(np.array([2.0],f32), np.array([1.0],f32)) -> ['unsupported', 1.0, 1.0, 0.0, 0.0]
    const auto m = compareTensors(vec(DType::Float32, { 2 }), vec(DType::Float32, { 1 }));
    expectCells(m, { u(), num(1), num(1), num(0), num(0) });
    EXPECT_EQ(m.message, "This is a 1-d tensor of length 1.");
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "None");
}

TEST(RealDataTensors, AllZeroTensors)
{
    const Cell nan = Cell::text("Nan");
    // compare(np.array([0,0],f32), np.array([1,2],f32)) -> ['Nan', 2.0, 1.0, 0.0, 0.0]
    auto m = compareTensors(vec(DType::Float32, { 0, 0 }), vec(DType::Float32, { 1, 2 }));
    expectCells(m, { nan, num(2), num(1), num(0), num(0) });
    EXPECT_EQ(m.message, "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.");
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "No"); // MaxAbsErr > 1

    // compare(np.array([1,2],f32), np.array([0,0],f32)) -> ['Nan', 2.0, 9007199254740992.0, 0.0, 0.0]
    // (float32 keeps eps = 2^-52, so 2 vs 0 gives 2 / 2^-52)
    m = compareTensors(vec(DType::Float32, { 1, 2 }), vec(DType::Float32, { 0, 0 }));
    expectCells(m, { nan, num(2), num(9007199254740992.0), num(0), num(0) });
    EXPECT_EQ(m.message, "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data.");

    // compare(np.array([0,0],f32), np.array([0,0],f32)) -> [1.0, 0.0, 0.0, 1.0, 1.0]
    m = compareTensors(vec(DType::Float32, { 0, 0 }), vec(DType::Float32, { 0, 0 }));
    expectCells(m, { num(1), num(0), num(0), num(1), num(1) });
    EXPECT_EQ(m.message, "");

    // A small NPU tensor (0.25 vs 0.5, |n - b| <= 1) with a zero bench norm: "Nan" cosine still reads Yes.
    m = compareTensors(vec(DType::Float32, { 0.25, 0.25 }), vec(DType::Float32, { 0, 0 }));
    EXPECT_EQ(m.cosine, nan);
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "Yes");
}

TEST(RealDataTensors, InfNanSamePositionsAreZeroed)
{
    // compare(np.array([1,nan,inf,2],f32), np.array([1.1,nan,-inf,2],f32))
    //   -> [0.999231950373, 0.100000023842, 0.09090910852, 0.75, 0.75]
    const auto m = compareTensors(vec(DType::Float32, { 1, kNan, kInf, 2 }), vec(DType::Float32, { 1.1, kNan, -kInf, 2 }));
    expectCells(m, { num(0.999231950373), num(0.100000023842), num(0.09090910852), num(0.75), num(0.75) });
    EXPECT_EQ(m.message, "");
}

TEST(RealDataTensors, InfNanDifferentPositions)
{
    const auto m = compareTensors(vec(DType::Float32, { 1, kNan }), vec(DType::Float32, { kNan, 1 }));
    const Cell na = Cell::text("N/A");
    expectCells(m, { na, na, na, na, na });
    EXPECT_EQ(m.message, "The position of inf or nan in NPU and bench Tensor do not match.");
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "No");

    // inf against NaN at the same place: the inf masks differ.
    const auto m2 = compareTensors(vec(DType::Float32, { 1, kInf }), vec(DType::Float32, { 1, kNan }));
    EXPECT_EQ(m2.cosine, na);
}

TEST(RealDataTensors, Float16ZerosInBench)
{
    // compare(np.array([0,1,2],f16), np.array([0,0,2],f16)) -> [0.894427191, 1.0, 'Nan', 0.333333333333 x2]
    // eps vanishes in float16: 0 vs 0 is 0/0 = NaN, 1 vs 0 is inf.
    const auto m = compareTensors(vec(DType::Float16, { 0, 1, 2 }), vec(DType::Float16, { 0, 0, 2 }));
    expectCells(m, { num(0.894427191), num(1), Cell::text("Nan"), num(0.333333333333), num(0.333333333333) });
    EXPECT_EQ(m.message, kMaxRelNan);
}

TEST(RealDataTensors, Float16RatiosUseFloat16Thresholds)
{
    // compare(np.array([1.001,2,3,4.02],f16), np.array([1,2,3,4],f16))
    //   -> [0.999997, 0.01953125, 0.0048828125, 0.75, 1.0]
    // (float16 RE 0.0048828125 is below float16(0.005) = 0.005001068115234375)
    const auto m = compareTensors(vec(DType::Float16, { 1.001, 2, 3, 4.02 }), vec(DType::Float16, { 1, 2, 3, 4 }));
    expectCells(m, { num(0.999997), num(0.01953125), num(0.0048828125), num(0.75), num(1.0) });
}

TEST(RealDataTensors, IntegerAndBoolPairs)
{
    // compare(np.array([1,0,3],np.int64), np.array([0,0,3],np.int64))
    //   -> [0.948683298051, 1.0, 4503599627370496.0, 0.666666666667 x2]
    auto m = compareTensors(vec(DType::Int64, { 1, 0, 3 }), vec(DType::Int64, { 0, 0, 3 }));
    expectCells(m, { num(0.948683298051), num(1), num(4503599627370496.0), num(0.666666666667), num(0.666666666667) });
    EXPECT_EQ(m.message, "");

    // compare(np.array([True,False,True]), np.array([False,False,True]))
    //   -> [0.707106781187, 1.0, 4503599627370496.0, 0.666666666667 x2]
    m = compareTensors(vec(DType::Bool, { 1, 0, 1 }), vec(DType::Bool, { 0, 0, 1 }));
    expectCells(m, { num(0.707106781187), num(1), num(4503599627370496.0), num(0.666666666667), num(0.666666666667) });
}

TEST(RealDataTensors, Float32ThresholdIsComparedInFloat32)
{
    // compare(np.array([201,1],f32), np.array([200,1],f32)) -> [1.0, 1.0, 0.004999999888, 0.5, 0.5]
    // float32 RE 1/200 == float32(0.005): not below it, although it is below the float64 0.005.
    const auto m = compareTensors(vec(DType::Float32, { 201, 1 }), vec(DType::Float32, { 200, 1 }));
    expectCells(m, { num(1), num(1), num(0.004999999888), num(0.5), num(0.5) });

    // compare(np.array([201,1],f64), np.array([200,1],f64)) -> [1.0, 1.0, 0.005, 0.5, 0.5]
    const auto m64 = compareTensors(vec(DType::Float64, { 201, 1 }), vec(DType::Float64, { 200, 1 }));
    expectCells(m64, { num(1), num(1), num(0.005), num(0.5), num(0.5) });
}

TEST(RealDataTensors, DtypeMismatch)
{
    // compare(np.array([0,1.5],f16), np.array([0,1.25],f32)) -> [1.0, 0.25, 1.0, 0.0, 0.0]
    // (eps vanishes in the float16 NPU copy but not in the float32 bench copy: (0 - 2^-52) / 2^-52)
    auto m = compareTensors(vec(DType::Float16, { 0, 1.5 }), vec(DType::Float32, { 0, 1.25 }));
    expectCells(m, { num(1), num(0.25), num(1), num(0), num(0) });
    EXPECT_EQ(m.message, kDtypeMessage);

    // compare(np.array([0,1,2],f32), np.array([0,0,2],f16)) -> [0.894427191, 1.0, inf, 0.333333333333 x2]
    m = compareTensors(vec(DType::Float32, { 0, 1, 2 }), vec(DType::Float16, { 0, 0, 2 }));
    expectCells(m, { num(0.894427191), num(1), num(kInf), num(0.333333333333), num(0.333333333333) });
    EXPECT_EQ(m.message, kDtypeMessage);

    // compare(np.array([1.5,0,2],f32), np.array([1,0,3],np.int64)) -> [0.948683298051, 1.0, 0.5, 0.333333333333 x2]
    m = compareTensors(vec(DType::Float32, { 1.5, 0, 2 }), vec(DType::Int64, { 1, 0, 3 }));
    expectCells(m, { num(0.948683298051), num(1), num(0.5), num(0.333333333333), num(0.333333333333) });
    EXPECT_EQ(m.message, kDtypeMessage);
}

TEST(RealDataTensors, Bfloat16CountsAsFloat32)
{
    // msprobe converts bfloat16 to float32 on loading: no dtype message against a float32 bench.
    // compare(np.array([1.5,2.5],f32), np.array([1.5,2.0],f32)) -> [0.994691793827, 0.5, 0.25, 0.5, 0.5]
    const auto m = compareTensors(vec(DType::BFloat16, { 1.5, 2.5 }), vec(DType::Float32, { 1.5, 2.0 }));
    expectCells(m, { num(0.994691793827), num(0.5), num(0.25), num(0.5), num(0.5) });
    EXPECT_EQ(m.message, "");
}

TEST(RealDataTensors, CosineRounding)
{
    // compare(np.array([1,2,3],f32), np.array([1,2,3.05],f32))
    //   -> [0.999969, 0.049999952316, 0.016393426806, 0.666666666667 x2]; cosine > 0.9999 gets round(c, 6)
    auto m = compareTensors(vec(DType::Float32, { 1, 2, 3 }), vec(DType::Float32, { 1, 2, 3.05 }));
    expectCells(m, { num(0.999969), num(0.049999952316), num(0.016393426806), num(0.666666666667),
                     num(0.666666666667) });

    // compare(np.array([1,2],f32), np.array([2,1],f32)) -> [0.8, 1.0, 1.0, 0.0, 0.0]
    m = compareTensors(vec(DType::Float32, { 1, 2 }), vec(DType::Float32, { 2, 1 }));
    expectCells(m, { num(0.8), num(1), num(1), num(0), num(0) });
    EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), "No");
}

TEST(RealDataTensors, TwelveDecimalRoundingIsHalfEven)
{
    // n = zeros(8192, f32); n[0] = 1; b = ones(8192, f32)
    //   -> [0.011048543456, 1.0, 1.0, 0.000122070312, 0.000122070312]; 1/8192 = 0.0001220703125 exactly
    std::vector<double> n(8192, 0.0);
    n[0] = 1;
    const std::vector<double> b(8192, 1.0);
    const auto m = compareTensors(vec(DType::Float32, n), vec(DType::Float32, b));
    expectCells(m, { num(0.011048543456), num(1), num(1), num(0.000122070312), num(0.000122070312) });
}

TEST(RealDataTensors, OverflowingDotProduct)
{
    // compare(np.array([1e200,1e200]), np.array([1e200,1e200])) -> ['Nan', 0.0, 0.0, 1.0, 1.0]: inf / inf
    auto m = compareTensors(vec(DType::Float64, { 1e200, 1e200 }), vec(DType::Float64, { 1e200, 1e200 }));
    expectCells(m, { Cell::text("Nan"), num(0), num(0), num(1), num(1) });
    EXPECT_EQ(m.message, "Cannot compare by Cosine Similarity, the dump data has NaN.");

    // compare(np.array([1e200,1e-200]), np.array([1e-200,1e200])) -> [0.0, 1e+200, inf, 0.0, 0.0]
    m = compareTensors(vec(DType::Float64, { 1e200, 1e-200 }), vec(DType::Float64, { 1e-200, 1e200 }));
    expectCells(m, { num(0), num(1e200), num(kInf), num(0), num(0) });
}

TEST(RealDataTensors, InconsistentTensorIsUnreadable)
{
    Tensor t = vec(DType::Float32, { 1, 2 });
    t.data.pop_back();
    const auto m = compareTensors(t, vec(DType::Float32, { 1, 2 }));
    EXPECT_EQ(m.cosine, u());
    EXPECT_EQ(m.message, "Data is unreadable.");
}

// ---------------------------------------------------------------------------------------------
// accuracyReached

TEST(RealDataAccuracy, Rules)
{
    EXPECT_EQ(accuracyReached(Cell::text("shape unmatched"), Cell::text("shape unmatched")), "Unmatched");
    EXPECT_EQ(accuracyReached(Cell::text("None"), num(0)), "None");
    EXPECT_EQ(accuracyReached(num(1), Cell::text("None")), "None");
    EXPECT_EQ(accuracyReached(Cell::text("N/A"), num(0)), "No");
    EXPECT_EQ(accuracyReached(num(1), Cell::text("N/A")), "No");
    EXPECT_EQ(accuracyReached(u(), u()), "None");
    EXPECT_EQ(accuracyReached(u(), num(0.5)), "None");
    EXPECT_EQ(accuracyReached(Cell::text("Nan"), num(0.5)), "Yes"); // float('Nan') is NaN: compares false
    EXPECT_EQ(accuracyReached(Cell::text("Nan"), Cell::text("Nan")), "Yes");
    EXPECT_EQ(accuracyReached(Cell::text(" 0.5 "), num(0)), "No"); // float() strips whitespace
    EXPECT_EQ(accuracyReached(Cell::text("0x1p0"), num(0)), "None"); // Python refuses hex text
    EXPECT_EQ(accuracyReached(num(0.98), num(0.002)), "No");         // cos < 0.99 and maxabs > 0.001
    EXPECT_EQ(accuracyReached(num(0.98), num(0.001)), "Yes");
    EXPECT_EQ(accuracyReached(num(0.89), num(0)), "No"); // cos < 0.9
    EXPECT_EQ(accuracyReached(num(1), num(1.5)), "No");  // maxabs > 1
    EXPECT_EQ(accuracyReached(num(1), num(1)), "Yes");
    EXPECT_EQ(accuracyReached(Cell::integer(1), Cell::integer(0)), "Yes");
    EXPECT_EQ(accuracyReached(Cell::integer(0), Cell::integer(0)), "No");
    EXPECT_EQ(accuracyReached(num(kInf), num(0)), "Yes");
}

// ---------------------------------------------------------------------------------------------
// compareRealDataRow

namespace {

fs::path fixtureDir()
{
    return probescope::testing::fixturesDir() / "modelA_tensor_mix";
}

fs::path tensorDir(const char* side, const std::string& step)
{
    return fixtureDir() / side / step / "rank/dump_tensor_data";
}

/// The resolver a dump's rows get (its tensor folder bound to the dump folder above it).
std::shared_ptr<const tensor::TensorResolver> tensorsIn(const fs::path& folder)
{
    return tensor::makeTensorResolver(folder.parent_path(), folder);
}

} // namespace

TEST(RealDataRow, EarlyFailures)
{
    RealDataRow row;
    row.npuName = "Functional.conv2d.0.forward.input.0";
    row.benchName = row.npuName;
    row.dataNameCell = "-1";
    row.benchDataName = "Functional.conv2d.0.forward.input.0.pt";
    row.npuTensors = tensorsIn(tensorDir("npu", "step0"));
    row.benchTensors = tensorsIn(tensorDir("bench", "step0"));
    auto m = compareRealDataRow(row);
    expectCells(m, { u(), u(), u(), u(), u() });
    EXPECT_EQ(m.message, "No bench data matched.");

    row.dataNameCell = "Functional.conv2d.0.forward.input.0.pt";
    row.benchDataName.clear();
    m = compareRealDataRow(row);
    expectCells(m, { u(), u(), u(), u(), u() });
    EXPECT_EQ(m.message, "Bench does not have data file.");

    // A missing bench file is reported with the NPU Data_name cell.
    row.benchDataName = "Functional.conv2d.0.forward.input.99.pt";
    m = compareRealDataRow(row);
    expectCells(m, { u(), u(), u(), u(), u() });
    EXPECT_EQ(m.message, "Dump file: Functional.conv2d.0.forward.input.0.pt not found.");

    // A name that would leave the folder is read nowhere and is an error of the input (issue 25: the run reports
    // tensor.path-escape), not "not found"; names msprobe's file check refuses count as not found.
    row.benchDataName = "../../../bench/step0/rank/dump_tensor_data/Functional.conv2d.0.forward.input.0.pt";
    const std::string escape = compareRealDataRow(row).message;
    EXPECT_EQ(escape.rfind("Dump file: Functional.conv2d.0.forward.input.0.pt unreadable: ", 0), 0u) << escape;
    EXPECT_NE(escape.find("[tensor.path-escape]"), std::string::npos) << escape;
    row.benchDataName = "Functional.conv2d.0.forward.input.0";
    EXPECT_EQ(compareRealDataRow(row).message, "Dump file: Functional.conv2d.0.forward.input.0.pt not found.");

    row.benchDataName = "Functional.conv2d.0.forward.input.0.pt";
    m = compareRealDataRow(row);
    expectCells(m, { num(1), num(0), num(0), num(1), num(1) });
    EXPECT_EQ(m.message, "");
}

TEST(RealDataRow, RefusedFileNames)
{
    probescope::testing::TempDir dir;
    const fs::path source = tensorDir("npu", "step0") / "Functional.conv2d.0.forward.input.2.pt";
    fs::copy_file(source, dir.path() / "a b.pt");
    fs::copy_file(source, dir.path() / "ok.pt");
    fs::copy_file(source, dir.path() / "ok.npy.pt.PT");

    RealDataRow row;
    row.npuName = "ok";
    row.benchName = "ok";
    row.dataNameCell = "ok.pt";
    row.npuTensors = tensorsIn(dir.path());
    row.benchTensors = tensorsIn(dir.path());
    row.benchDataName = "ok.pt";
    EXPECT_EQ(compareRealDataRow(row).message, "");
    row.benchDataName = "a b.pt"; // msprobe allows only letters, digits and _.:/-
    EXPECT_EQ(compareRealDataRow(row).message, "Dump file: ok.pt not found.");
    row.benchDataName = "ok.npy.pt.PT"; // the .pt suffix test is case-sensitive
    EXPECT_EQ(compareRealDataRow(row).message, "Dump file: ok.pt not found.");
    row.benchDataName = "ok.pt";
    row.npuName = "a b";
    EXPECT_EQ(compareRealDataRow(row).message, "Dump file: ok.pt not found.");
}

// The next row's read-ahead: while a streamed row is computed, before the files are opened once this thread's
// previous row was streamed, never twice for one row, never for a row of small files after one of small files.
TEST(RealDataRow, NextRowIsReadAheadOnceEarlyAfterAStreamedRow)
{
    std::vector<int> calls;
    std::thread([&] { // a fresh thread: no previous row
        int ran = 0;
        const std::function<void()> next = [&] { ++ran; };
        const auto row = [&](bool streamed) {
            ran = 0;
            NextRowReadAhead readAhead(next);
            const int early = ran;
            readAhead.opened(streamed);
            calls.push_back(early * 10 + ran);
        };
        row(false); // small after nothing: none
        row(true);  // streamed: while it is computed
        row(true);  // after a streamed row: before the open, not again after it
        row(false); // early (the previous was streamed), then nothing
        row(false); // small after small: none
        const std::function<void()> none;
        NextRowReadAhead last(none); // the last row: nothing to read, whatever came before
        last.opened(true);
    }).join();
    EXPECT_EQ(calls, (std::vector<int> { 0, 1, 11, 11, 0 }));
}

TEST(RealDataRow, FuzzyNote)
{
    const std::string note = " Fuzzy matching data, the comparison accuracy may be affected.";
    RealDataRow row;
    row.npuName = "Functional.conv2d.0.forward.input.0";
    row.benchName = "Functional.conv2d.1.forward.input.0";
    row.dataNameCell = "-1";
    row.fuzzy = true;
    EXPECT_EQ(compareRealDataRow(row).message, "No bench data matched." + note);

    row.benchName = "N/A";
    EXPECT_EQ(compareRealDataRow(row).message, "No bench data matched.");
    row.benchName = row.npuName;
    EXPECT_EQ(compareRealDataRow(row).message, "No bench data matched.");

    // Renamed pair with identical data: the note alone, with its leading space.
    row.benchName = "Functional.conv2d.1.forward.input.0";
    row.dataNameCell = "Functional.conv2d.0.forward.input.0.pt";
    row.benchDataName = "Functional.conv2d.0.forward.input.0.pt";
    row.npuTensors = tensorsIn(tensorDir("npu", "step0"));
    row.benchTensors = tensorsIn(tensorDir("bench", "step0"));
    EXPECT_EQ(compareRealDataRow(row).message, note);
    row.fuzzy = false;
    EXPECT_EQ(compareRealDataRow(row).message, "");
}

// ---------------------------------------------------------------------------------------------
// Golden rows written by msprobe 1.2.2

namespace {

using probescope::testing::readCsv;

bool isHighlightMessage(const std::string& text)
{
    static const char* const messages[] = {
        "maximum or minimum is nan, -inf, or inf",
        "maximum absolute error exceeds 1e+10",
        "maximum absolute error of both input/parameters and output exceed 1, with the output larger by an order of "
        "magnitude",
        "The input/parameters's one thousandth err ratio exceeds 0.9, while the output's is below 0.6",
        "The output's one thousandth err ratio decreases by more than 0.1 compared to the input/parameters's",
        "The output's cosine decreases by more than 0.1 compared to the input/parameters's",
        "maximum relative error exceeds 0.5",
        "The output's maximum relative error exceeds 0.1, while the input/parameters's is below 0.01",
    };
    for (const char* m : messages) {
        if (text == m)
            return true;
    }
    return false;
}

/// The golden CSV shows numbers as pandas re-read them from the xlsx; strings verbatim (inf gets a TAB).
::testing::AssertionResult cellMatches(const Cell& cell, const std::string& golden)
{
    if (cell.isString()) {
        if (cell.asString() == golden)
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "text '" << cell.asString() << "' vs golden '" << golden << "'";
    }
    double value = 0;
    if (const auto* d = std::get_if<double>(&cell.value))
        value = *d;
    else if (const auto* i = std::get_if<std::int64_t>(&cell.value))
        value = static_cast<double>(*i);
    else
        return ::testing::AssertionFailure() << "unexpected cell type vs golden '" << golden << "'";
    if (std::isinf(value)) {
        const std::string text = value > 0 ? "inf\t" : "-inf\t";
        if (golden == text)
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "inf vs golden '" << golden << "'";
    }
    char* end = nullptr;
    const double expected = std::strtod(golden.c_str(), &end);
    if (golden.empty() || *end != '\0')
        return ::testing::AssertionFailure() << "number " << value << " vs golden text '" << golden << "'";
    if (std::fabs(value - expected) <= 1e-9 * std::fabs(expected))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::setprecision(17) << value << " vs golden " << golden;
}

int checkGoldenStep(const std::string& step)
{
    const auto records = readCsv(fixtureDir() / "expected/nostack" / step / "compare_result.csv");
    EXPECT_GT(records.size(), 1U);
    if (records.size() < 2)
        return 0;
    std::map<std::string, std::size_t> column;
    for (std::size_t i = 0; i < records[0].size(); ++i)
        column[records[0][i]] = i;
    const char* metricColumns[] = { "Cosine", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                                    "Five Thousandths Err Ratio" };
    int checked = 0;
    for (std::size_t r = 1; r < records.size(); ++r) {
        const auto& rec = records[r];
        if (rec.size() != records[0].size())
            continue; // the trailing empty line
        auto get = [&](const char* name) { return rec.at(column.at(name)); };
        RealDataRow row;
        row.npuName = get("NPU Name");
        row.benchName = get("Bench Name");
        row.dataNameCell = get("Data_name");
        // In this fixture every bench leaf's data_name is its row name + ".pt".
        row.benchDataName = row.benchName == "N/A" ? "" : row.benchName + ".pt";
        row.npuTensors = tensorsIn(tensorDir("npu", step));
        row.benchTensors = tensorsIn(tensorDir("bench", step));
        const RealDataMetrics m = compareRealDataRow(row);
        SCOPED_TRACE(step + " row " + std::to_string(r) + ": " + row.npuName);

        const Cell* cells[] = { &m.cosine, &m.maxAbsErr, &m.maxRelativeErr, &m.oneThousandthErrRatio,
                                &m.fiveThousandthsErrRatio };
        for (int i = 0; i < 5; ++i)
            EXPECT_TRUE(cellMatches(*cells[i], get(metricColumns[i]))) << metricColumns[i];
        EXPECT_EQ(accuracyReached(m.cosine, m.maxAbsErr), get("Accuracy Reached or Not"));

        // A later stage appends highlight messages after a newline (or alone when the cell was empty).
        std::string message = get("Err_message");
        message = message.substr(0, message.find('\n'));
        if (isHighlightMessage(message))
            message.clear();
        EXPECT_EQ(m.message, message);
        ++checked;
    }
    return checked;
}

} // namespace

TEST(RealDataGolden, ModelATensorMixNostack)
{
    PROBESCOPE_REQUIRE_FIXTURE(fixtureDir());
    const int step0 = checkGoldenStep("step0");
    const int step1 = checkGoldenStep("step1");
    EXPECT_EQ(step0, 370);
    EXPECT_EQ(step1, 370);
}
