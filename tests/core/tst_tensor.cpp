// SPDX-License-Identifier: Apache-2.0
// Tests for core/tensor: dtype conversions, statistics, the .npy and .pt readers, path safety.
// Expected values come from outside this code: tests/data/tensors/expected.txt is written by
// tests/data/gen/make_tensors.py (Python's view of each file) and the fixture stats by msprobe.
#include "core/tensor/ptnative.h"
#include "core/tensortorch/torchpt.h"
#include "core/tensor/ptnative.h"
#include "core/tensor/resolver.h"
#include "core/tensor/tensor.h"
#include "fixtureguard.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

// LibTorch's zip reader leaks a few blocks when it refuses a damaged archive; the cross-check tests feed
// it thousands. The leaks are inside libtorch_cpu (every frame of LeakSanitizer's report), not ours.
extern "C" const char* __lsan_default_suppressions()
{
    return "leak:libtorch_cpu.so\n";
}

using namespace probescope;
using namespace probescope::tensor;
namespace fs = std::filesystem;

namespace {

fs::path tensorDataDir()
{
    return probescope::testing::testDataDir() / "tensors";
}

fs::path fixtureTensorDir()
{
    return probescope::testing::fixturesDir() / "modelA_tensor_mix/npu/step0/rank";
}

std::string readBytes(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void writeBytes(const fs::path& path, std::string_view bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> split(const std::string& text, char separator)
{
    std::vector<std::string> parts;
    std::string current;
    for (char c : text) {
        if (c == separator) {
            parts.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    parts.push_back(current);
    return parts;
}

std::string toHex(const std::vector<std::byte>& data)
{
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (std::byte b : data) {
        hex += digits[static_cast<unsigned>(b) >> 4];
        hex += digits[static_cast<unsigned>(b) & 0xF];
    }
    return hex;
}

/// A folder under the system temp dir, removed again when the test ends.
class TempDir
{
public:
    TempDir()
    {
        static int counter = 0;
        m_path = fs::temp_directory_path()
            / ("probescope_tst_tensor_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

struct Expected
{
    std::string name;
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::string hex;
    std::vector<std::string> values;
};

std::vector<Expected> readExpected()
{
    std::vector<Expected> all;
    std::ifstream in(tensorDataDir() / "expected.txt");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty())
            continue;
        const auto fields = split(line, '|');
        if (fields.size() != 5) {
            ADD_FAILURE() << "bad expected.txt line: " << line;
            continue;
        }
        Expected e;
        e.name = fields[0];
        e.dtype = fields[1];
        if (!fields[2].empty()) {
            for (const auto& d : split(fields[2], ','))
                e.shape.push_back(std::stoll(d));
        }
        e.hex = fields[3];
        if (!fields[4].empty())
            e.values = split(fields[4], ',');
        all.push_back(e);
    }
    return all;
}

std::string errorId(const Result<Tensor>& r)
{
    return r.ok() ? std::string("<ok>") : r.error().id;
}

/// Builds a .npy file from a header dict text, padding it the way numpy does.
std::string makeNpy(const std::string& dict, std::string_view data, int major = 1)
{
    std::string header = dict;
    const std::size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    const std::size_t n = header.size();
    out += static_cast<char>(n & 0xFF);
    out += static_cast<char>((n >> 8) & 0xFF);
    if (major != 1) {
        out += static_cast<char>((n >> 16) & 0xFF);
        out += static_cast<char>((n >> 24) & 0xFF);
    }
    return out + header + std::string(data);
}

Result<Tensor> loadNpyBytes(const TempDir& dir, std::string_view bytes)
{
    const fs::path path = dir.path() / "t.npy";
    writeBytes(path, bytes);
    return loadNpy(path);
}

Tensor makeFloat32(std::vector<float> values, std::vector<std::int64_t> shape = {})
{
    Tensor t;
    t.dtype = DType::Float32;
    t.shape = shape.empty() ? std::vector<std::int64_t> { static_cast<std::int64_t>(values.size()) } : shape;
    t.data.resize(values.size() * sizeof(float));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}

bool sameDouble(double a, double b)
{
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// dtype

TEST(DType, ParsesTorchMindSporeAndNumpySpellings)
{
    EXPECT_EQ(parseDType("torch.float32"), DType::Float32);
    EXPECT_EQ(parseDType("torch.float"), DType::Float32);
    EXPECT_EQ(parseDType("torch.half"), DType::Float16);
    EXPECT_EQ(parseDType("torch.float16"), DType::Float16);
    EXPECT_EQ(parseDType("torch.bfloat16"), DType::BFloat16);
    EXPECT_EQ(parseDType("torch.double"), DType::Float64);
    EXPECT_EQ(parseDType("torch.long"), DType::Int64);
    EXPECT_EQ(parseDType("torch.int"), DType::Int32);
    EXPECT_EQ(parseDType("torch.short"), DType::Int16);
    EXPECT_EQ(parseDType("torch.bool"), DType::Bool);
    EXPECT_EQ(parseDType("torch.uint8"), DType::UInt8);
    EXPECT_EQ(parseDType("torch.int8"), DType::Int8);
    EXPECT_EQ(parseDType("Float32"), DType::Float32);
    EXPECT_EQ(parseDType("Float16"), DType::Float16);
    EXPECT_EQ(parseDType("BFloat16"), DType::BFloat16);
    EXPECT_EQ(parseDType("Int64"), DType::Int64);
    EXPECT_EQ(parseDType("Bool"), DType::Bool);
    EXPECT_EQ(parseDType("UInt8"), DType::UInt8);
    EXPECT_EQ(parseDType("float32"), DType::Float32);
    EXPECT_EQ(parseDType("int64"), DType::Int64);
    EXPECT_EQ(parseDType("bool"), DType::Bool);
    EXPECT_EQ(parseDType("float64"), DType::Float64);

    // numpy's "float" and "int" mean 64-bit, torch's 32-bit: only the torch spelling is accepted.
    EXPECT_FALSE(parseDType("float").has_value());
    EXPECT_FALSE(parseDType("int").has_value());
    EXPECT_FALSE(parseDType("").has_value());
    EXPECT_FALSE(parseDType("torch.complex64").has_value());
    EXPECT_FALSE(parseDType("torch.").has_value());
    EXPECT_FALSE(parseDType("float32x").has_value());
}

TEST(DType, SizesNamesAndKinds)
{
    const std::pair<DType, std::size_t> sizes[] = { { DType::Bool, 1 },    { DType::UInt8, 1 },    { DType::Int8, 1 },
                                                   { DType::Int16, 2 },   { DType::Int32, 4 },    { DType::Int64, 8 },
                                                   { DType::Float16, 2 }, { DType::BFloat16, 2 }, { DType::Float32, 4 },
                                                   { DType::Float64, 8 } };
    for (const auto& [dtype, size] : sizes) {
        EXPECT_EQ(dtypeSize(dtype), size) << torchName(dtype);
        // torchName must round-trip through parseDType, since dump.json comparisons rely on it.
        EXPECT_EQ(parseDType(torchName(dtype)), dtype) << torchName(dtype);
    }
    EXPECT_STREQ(torchName(DType::Float32), "torch.float32");
    EXPECT_STREQ(torchName(DType::BFloat16), "torch.bfloat16");
    EXPECT_TRUE(isFloating(DType::Float16));
    EXPECT_TRUE(isFloating(DType::BFloat16));
    EXPECT_TRUE(isFloating(DType::Float64));
    EXPECT_FALSE(isFloating(DType::Int64));
    EXPECT_FALSE(isFloating(DType::Bool));
}

TEST(HalfConversion, KnownBitPatterns)
{
    EXPECT_EQ(std::bit_cast<std::uint32_t>(halfToFloat(0x0000)), 0x00000000u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(halfToFloat(0x8000)), 0x80000000u); // -0 keeps its sign
    EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));                    // smallest subnormal
    EXPECT_EQ(halfToFloat(0x03FF), std::ldexp(1023.0f, -24));                 // largest subnormal
    EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));                    // smallest normal
    EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
    EXPECT_EQ(halfToFloat(0xC000), -2.0f);
    EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
    EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
    EXPECT_EQ(halfToFloat(0x7C00), std::numeric_limits<float>::infinity());
    EXPECT_EQ(halfToFloat(0xFC00), -std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
    EXPECT_TRUE(std::isnan(halfToFloat(0x7C01))); // signalling NaN must not turn into infinity
    EXPECT_TRUE(std::isnan(halfToFloat(0xFFFF)));

    EXPECT_EQ(floatToHalf(0.0f), 0x0000);
    EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
    EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
    EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
    EXPECT_EQ(floatToHalf(65519.99f), 0x7BFF);
    EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // halfway to 65536 rounds to even, which overflows
    EXPECT_EQ(floatToHalf(1e10f), 0x7C00);
    EXPECT_EQ(floatToHalf(-1e10f), 0xFC00);
    EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
    EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);     // tie, even stays
    EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02); // tie, odd rounds up
    EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);            // tie between 0 and 2^-24
    EXPECT_EQ(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
    EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);            // 1.5 units: tie, even is 2
    EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400);         // 1023.5 units carries into normal
    EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
    EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
    const std::uint16_t nanBits = floatToHalf(std::numeric_limits<float>::quiet_NaN());
    EXPECT_EQ(nanBits & 0x7C00, 0x7C00);
    EXPECT_NE(nanBits & 0x03FF, 0);
    // A float NaN whose payload lives only in the low bits must stay NaN.
    const std::uint16_t lowPayload = floatToHalf(std::bit_cast<float>(0x7F800001u));
    EXPECT_EQ(lowPayload & 0x7C00, 0x7C00);
    EXPECT_NE(lowPayload & 0x03FF, 0);
}

TEST(HalfConversion, EveryBitPatternRoundTrips)
{
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        const float f = halfToFloat(h);
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f)))) << std::hex << bits;
            continue;
        }
        ASSERT_EQ(floatToHalf(f), h) << std::hex << bits;
    }
}

TEST(HalfConversion, RoundsToNearestEvenAtEveryMidpoint)
{
    // Midpoints between neighbouring halves need 12 significant bits, so they are exact floats.
    for (std::uint16_t h = 0; h < 0x7BFF; ++h) {
        const float lo = halfToFloat(h);
        const float hi = halfToFloat(static_cast<std::uint16_t>(h + 1));
        const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
        ASSERT_EQ(floatToHalf(mid), (h & 1) ? h + 1 : h) << std::hex << h;
        ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.0f)), h) << std::hex << h;
        ASSERT_EQ(floatToHalf(std::nextafter(mid, std::numeric_limits<float>::infinity())), h + 1) << std::hex << h;
        ASSERT_EQ(floatToHalf(-mid), 0x8000 | ((h & 1) ? h + 1 : h)) << std::hex << h;
    }
}

TEST(BFloat16Conversion, KnownBitPatterns)
{
    EXPECT_EQ(std::bit_cast<std::uint32_t>(bfloat16ToFloat(0x8000)), 0x80000000u);
    EXPECT_EQ(bfloat16ToFloat(0x3F80), 1.0f);
    EXPECT_EQ(bfloat16ToFloat(0xC000), -2.0f);
    EXPECT_EQ(bfloat16ToFloat(0x0001), std::bit_cast<float>(0x00010000u)); // subnormal
    EXPECT_EQ(bfloat16ToFloat(0x7F7F), std::bit_cast<float>(0x7F7F0000u)); // largest finite
    EXPECT_EQ(bfloat16ToFloat(0x7F80), std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7FC0)));
    EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7F81)));

    EXPECT_EQ(floatToBfloat16(1.0f), 0x3F80);
    EXPECT_EQ(floatToBfloat16(-0.0f), 0x8000);
    EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x3F808000u)), 0x3F80); // tie, even stays
    EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x3F818000u)), 0x3F82); // tie, odd rounds up
    EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
    EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7F80); // rounds up to infinity
    EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::infinity()), 0x7F80);
    EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x00008000u)), 0x0000); // subnormal tie to even 0
    EXPECT_EQ(floatToBfloat16(std::bit_cast<float>(0x00018000u)), 0x0002);
    // A NaN whose payload is only in the dropped low half must not become infinity.
    const std::uint16_t nan = floatToBfloat16(std::bit_cast<float>(0x7F800001u));
    EXPECT_EQ(nan & 0x7F80, 0x7F80);
    EXPECT_NE(nan & 0x007F, 0);
    EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(BFloat16Conversion, EveryBitPatternRoundTripsAndMidpointsRoundToEven)
{
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const auto b = static_cast<std::uint16_t>(bits);
        const float f = bfloat16ToFloat(b);
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(f)))) << std::hex << bits;
            continue;
        }
        ASSERT_EQ(floatToBfloat16(f), b) << std::hex << bits;
    }
    for (std::uint16_t b = 0; b < 0x7F7F; ++b) {
        const float lo = bfloat16ToFloat(b);
        const float hi = bfloat16ToFloat(static_cast<std::uint16_t>(b + 1));
        const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
        ASSERT_EQ(floatToBfloat16(mid), (b & 1) ? b + 1 : b) << std::hex << b;
        ASSERT_EQ(floatToBfloat16(std::nextafter(mid, 0.0f)), b) << std::hex << b;
        ASSERT_EQ(floatToBfloat16(std::nextafter(mid, std::numeric_limits<float>::infinity())), b + 1) << std::hex << b;
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips against Python's view of each checked-in file

TEST(TensorFiles, EveryCheckedInFileMatchesPython)
{
    const std::vector<Expected> all = readExpected();
    ASSERT_GE(all.size(), 30u) << "expected.txt missing or short; rerun tests/data/gen/make_tensors.py";
    std::set<DType> ptTypes;
    std::set<DType> npyTypes;
    for (const Expected& e : all) {
        SCOPED_TRACE(e.name);
        const auto loaded = loadTensorFile(tensorDataDir(), e.name);
        ASSERT_TRUE(loaded.ok()) << loaded.error().format();
        const Tensor& t = *loaded;
        const auto dtype = parseDType(e.dtype);
        ASSERT_TRUE(dtype.has_value()) << e.dtype;
        EXPECT_EQ(t.dtype, *dtype);
        EXPECT_EQ(t.shape, e.shape);
        EXPECT_EQ(toHex(t.data), e.hex);
        EXPECT_EQ(static_cast<std::size_t>(t.numel()), e.values.size());
        ASSERT_EQ(t.data.size(), static_cast<std::size_t>(t.numel()) * dtypeSize(t.dtype));
        for (std::size_t i = 0; i < e.values.size(); ++i) {
            const double want = std::strtod(e.values[i].c_str(), nullptr);
            EXPECT_TRUE(sameDouble(t.valueAt(static_cast<std::int64_t>(i)), want))
                << "element " << i << ": got " << t.valueAt(static_cast<std::int64_t>(i)) << ", Python says "
                << e.values[i];
        }
        EXPECT_TRUE(checkAgainstMetadata(t, e.dtype, e.shape, e.name).empty());
        (e.name.ends_with(".pt") ? ptTypes : npyTypes).insert(t.dtype);
    }
    EXPECT_EQ(ptTypes.size(), 10u) << "every dtype should come through a .pt file";
    EXPECT_EQ(npyTypes.size(), 9u) << "every dtype numpy has should come through a .npy file";
}

TEST(TensorFiles, SpecialLayoutsLoadInCOrder)
{
    // Python's view already covers these through expected.txt; this pins the intent down explicitly.
    const auto transposed = loadPt(tensorDataDir() / "transposed.pt");
    ASSERT_TRUE(transposed.ok()) << transposed.error().format();
    EXPECT_EQ(transposed->shape, (std::vector<std::int64_t> { 3, 2 }));
    const double wantTransposed[] = { 0, 3, 1, 4, 2, 5 };
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(transposed->valueAt(i), wantTransposed[i]);

    const auto fortran = loadNpy(tensorDataDir() / "fortran.npy");
    ASSERT_TRUE(fortran.ok()) << fortran.error().format();
    EXPECT_EQ(fortran->shape, (std::vector<std::int64_t> { 2, 3, 4 }));
    for (int i = 0; i < 24; ++i)
        EXPECT_EQ(fortran->valueAt(i), i);

    const auto scalar = loadPt(tensorDataDir() / "scalar.pt");
    ASSERT_TRUE(scalar.ok());
    EXPECT_TRUE(scalar->shape.empty());
    EXPECT_EQ(scalar->numel(), 1);
    EXPECT_EQ(scalar->valueAt(0), 2.5);

    const auto empty = loadNpy(tensorDataDir() / "empty.npy");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty->shape, (std::vector<std::int64_t> { 2, 0 }));
    EXPECT_EQ(empty->numel(), 0);
    EXPECT_TRUE(empty->data.empty());

    const auto bigEndian = loadNpy(tensorDataDir() / "i64_be.npy");
    ASSERT_TRUE(bigEndian.ok());
    EXPECT_EQ(bigEndian->valueAt(2), 1099511627776.0);
}

// ---------------------------------------------------------------------------------------------
// Statistics

TEST(TensorStats, KnownValues)
{
    const TensorStats s = computeStats(makeFloat32({ 1.0f, -2.0f, 3.0f, 4.0f }));
    EXPECT_EQ(s.count, 4);
    EXPECT_EQ(s.max, 4.0);
    EXPECT_EQ(s.min, -2.0);
    EXPECT_DOUBLE_EQ(s.mean, 1.5);
    EXPECT_DOUBLE_EQ(s.norm, std::sqrt(30.0));
    EXPECT_EQ(s.nanCount, 0);
    EXPECT_EQ(s.infCount, 0);
}

TEST(TensorStats, NanPoisonsEverythingLikeTorch)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const TensorStats s = computeStats(makeFloat32({ 1.0f, nan, 3.0f, nan }));
    EXPECT_EQ(s.nanCount, 2);
    EXPECT_TRUE(std::isnan(s.max));
    EXPECT_TRUE(std::isnan(s.min));
    EXPECT_TRUE(std::isnan(s.mean));
    EXPECT_TRUE(std::isnan(s.norm));
}

TEST(TensorStats, InfinitiesCountAndPropagate)
{
    const float inf = std::numeric_limits<float>::infinity();
    TensorStats s = computeStats(makeFloat32({ 1.0f, inf, -3.0f }));
    EXPECT_EQ(s.infCount, 1);
    EXPECT_EQ(s.max, inf);
    EXPECT_EQ(s.min, -3.0);
    EXPECT_EQ(s.mean, inf);
    EXPECT_EQ(s.norm, inf);
    s = computeStats(makeFloat32({ inf, -inf }));
    EXPECT_EQ(s.infCount, 2);
    EXPECT_TRUE(std::isnan(s.mean)); // inf + -inf, as torch.mean gives
    EXPECT_EQ(s.norm, inf);
}

TEST(TensorStats, EmptyTensorHasNoValues)
{
    Tensor t;
    t.shape = { 0, 3 };
    const TensorStats s = computeStats(t);
    EXPECT_EQ(s.count, 0);
    EXPECT_TRUE(std::isnan(s.max));
    EXPECT_TRUE(std::isnan(s.min));
    EXPECT_TRUE(std::isnan(s.mean));
    EXPECT_TRUE(std::isnan(s.norm));
}

TEST(TensorStats, IntegerBoolAndHalfTensors)
{
    Tensor b;
    b.dtype = DType::Bool;
    b.shape = { 4 };
    b.data = { std::byte { 1 }, std::byte { 0 }, std::byte { 1 }, std::byte { 1 } };
    TensorStats s = computeStats(b);
    EXPECT_EQ(s.max, 1.0);
    EXPECT_EQ(s.min, 0.0);
    EXPECT_DOUBLE_EQ(s.mean, 0.75);
    EXPECT_DOUBLE_EQ(s.norm, std::sqrt(3.0));

    const auto i64 = loadPt(tensorDataDir() / "i64.pt");
    ASSERT_TRUE(i64.ok());
    s = computeStats(*i64);
    EXPECT_EQ(s.max, 9007199254740992.0);
    EXPECT_EQ(s.min, -9223372036854775808.0);

    const auto f16 = loadPt(tensorDataDir() / "f16.pt");
    ASSERT_TRUE(f16.ok());
    s = computeStats(*f16);
    EXPECT_EQ(s.nanCount, 2);
    EXPECT_EQ(s.infCount, 2);
    EXPECT_TRUE(std::isnan(s.max));

    EXPECT_TRUE(std::isnan(i64->valueAt(-1)));
    EXPECT_TRUE(std::isnan(i64->valueAt(i64->numel())));
}

namespace {

/// The stats msprobe recorded for one tensor in dump.json, found with a plain text search.
struct RecordedStats
{
    std::string dtype;
    std::vector<std::int64_t> shape;
    double max = 0, min = 0, mean = 0, norm = 0;
};

std::optional<RecordedStats> recordedStats(const std::string& json, const std::string& dataName)
{
    const std::string key = "\"data_name\": \"" + dataName + "\"";
    const auto at = json.find(key);
    if (at == std::string::npos)
        return std::nullopt;
    const auto open = json.rfind('{', at);
    const std::string object = json.substr(open, at - open);
    auto field = [&](const std::string& name) -> std::string {
        const auto p = object.find("\"" + name + "\":");
        if (p == std::string::npos)
            return {};
        return object.substr(p + name.size() + 3);
    };
    RecordedStats r;
    const std::string dtype = field("dtype");
    const auto q1 = dtype.find('"');
    r.dtype = dtype.substr(q1 + 1, dtype.find('"', q1 + 1) - q1 - 1);
    const std::string shape = field("shape");
    const std::string dims = shape.substr(shape.find('[') + 1, shape.find(']') - shape.find('[') - 1);
    for (const auto& d : split(dims, ',')) {
        if (d.find_first_of("0123456789") != std::string::npos)
            r.shape.push_back(std::stoll(d));
    }
    r.max = std::strtod(field("Max").c_str(), nullptr);
    r.min = std::strtod(field("Min").c_str(), nullptr);
    r.mean = std::strtod(field("Mean").c_str(), nullptr);
    r.norm = std::strtod(field("Norm").c_str(), nullptr);
    return r;
}

} // namespace

TEST(TensorStats, Conv2dInputMatchesMsprobe)
{
    const fs::path dir = fixtureTensorDir();
    PROBESCOPE_REQUIRE_FIXTURE(dir / "dump.json");
    const auto t = loadTensorFile(dir / "dump_tensor_data", "Functional.conv2d.0.forward.input.0.pt");
    ASSERT_TRUE(t.ok()) << t.error().format();
    EXPECT_EQ(t->dtype, DType::Float32);
    EXPECT_EQ(t->shape, (std::vector<std::int64_t> { 4, 3, 8, 8 }));
    const TensorStats s = computeStats(*t);
    // Numbers msprobe wrote for this tensor in modelA_tensor_mix/npu/step0/rank/dump.json.
    EXPECT_EQ(s.max, 3.029174327850342);
    EXPECT_EQ(s.min, -2.926689624786377);
    EXPECT_NEAR(s.mean, -0.07415903359651566, 1e-6 * 3.03);
    EXPECT_NEAR(s.norm, 27.407075881958008, 27.41 * 1e-6);
    EXPECT_EQ(s.count, 768);
}

TEST(TensorStats, EveryFixtureTensorMatchesItsDumpJsonEntry)
{
    const fs::path dir = fixtureTensorDir();
    PROBESCOPE_REQUIRE_FIXTURE(dir / "dump.json");
    const std::string json = readBytes(dir / "dump.json");
    int checked = 0;
    for (const auto& entry : fs::directory_iterator(dir / "dump_tensor_data")) {
        const std::string name = entry.path().filename().string();
        SCOPED_TRACE(name);
        const auto recorded = recordedStats(json, name);
        ASSERT_TRUE(recorded.has_value()) << "not named in dump.json";
        const auto t = loadTensorFile(dir / "dump_tensor_data", name);
        ASSERT_TRUE(t.ok()) << t.error().format();
        const Diagnostics problems = checkAgainstMetadata(*t, recorded->dtype, recorded->shape, name);
        EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front().format());
        const TensorStats s = computeStats(*t);
        // torch reduces in the tensor's own dtype; we accumulate in double, so allow float32 rounding.
        const double scale = std::max(std::abs(recorded->max), std::abs(recorded->min));
        EXPECT_EQ(s.max, recorded->max);
        EXPECT_EQ(s.min, recorded->min);
        EXPECT_NEAR(s.mean, recorded->mean, 1e-6 * scale + 1e-6 * std::abs(recorded->mean));
        EXPECT_NEAR(s.norm, recorded->norm, 2e-6 * recorded->norm);
        ++checked;
    }
    EXPECT_GE(checked, 300);
}

// ---------------------------------------------------------------------------------------------
// Malformed .npy

TEST(NpyMalformed, TruncatedAtEveryOffset)
{
    TempDir dir;
    const std::string good = readBytes(tensorDataDir() / "f32.npy");
    ASSERT_GT(good.size(), 100u);
    for (std::size_t n = 0; n < good.size(); ++n) {
        const auto r = loadNpyBytes(dir, std::string_view(good).substr(0, n));
        ASSERT_FALSE(r.ok()) << "loaded a file cut at " << n;
        EXPECT_EQ(r.error().id, n < 6 ? "tensor.npy-format" : "tensor.truncated") << "cut at " << n;
    }
    const auto cut = loadNpyBytes(dir, std::string_view(good).substr(0, good.size() - 3));
    EXPECT_NE(cut.error().message.find("needs 24 bytes of data, but the file has 21"), std::string::npos)
        << cut.error().message;
}

TEST(NpyMalformed, EveryByteFlipIsHandled)
{
    TempDir dir;
    const std::string good = readBytes(tensorDataDir() / "fortran.npy");
    for (std::size_t i = 0; i < good.size(); ++i) {
        for (unsigned char mask : { 0xFF, 0x01, 0x20 }) {
            std::string bad = good;
            bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
            const auto r = loadNpyBytes(dir, bad);
            if (!r.ok())
                EXPECT_TRUE(r.error().id.starts_with("tensor.")) << r.error().format();
            else
                EXPECT_EQ(r->data.size(), static_cast<std::size_t>(r->numel()) * dtypeSize(r->dtype));
        }
    }
}

TEST(NpyMalformed, SpecificErrors)
{
    TempDir dir;
    const std::string data4(4, '\0');
    EXPECT_EQ(errorId(loadNpyBytes(dir, "")), "tensor.npy-format");
    EXPECT_EQ(errorId(loadNpyBytes(dir, "PK\x03\x04 this is a zip")), "tensor.npy-format");
    std::string badVersion = makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", data4);
    badVersion[6] = 4;
    EXPECT_EQ(errorId(loadNpyBytes(dir, badVersion)), "tensor.npy-version");

    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("hello world", data4))), "tensor.npy-header");
    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'shape': (1,), }", data4))), "tensor.npy-header");
    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", data4))),
              "tensor.npy-header");
    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", data4))),
              "tensor.npy-header");
    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,", data4))),
              "tensor.npy-header");
    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", data4))),
              "tensor.npy-header");
    EXPECT_EQ(errorId(loadNpyBytes(
                  dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", data4))),
              "tensor.npy-header");
    // Overflows 64 bits when multiplied out.
    const auto overflow
        = loadNpyBytes(dir, makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", data4));
    EXPECT_EQ(errorId(overflow), "tensor.npy-header");
    // Fits in 64 bits but is absurd: refused by comparing with the file size, never allocated.
    const auto absurd
        = loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000)}", data4));
    ASSERT_EQ(errorId(absurd), "tensor.truncated");
    EXPECT_NE(absurd.error().message.find("(1000000000000, 1000000) which needs 4.0e+18 bytes of data, but the file has 4"),
              std::string::npos)
        << absurd.error().message;
    // A zero dimension makes any other dimension harmless.
    const auto zero
        = loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775807)}", ""));
    EXPECT_TRUE(zero.ok()) << zero.error().format();

    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data4 + data4 + "x"))),
              "tensor.npy-trailing");
    EXPECT_EQ(errorId(loadNpyBytes(dir, makeNpy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", "abcdefghijkl"))),
              "tensor.dtype-unsupported");
    EXPECT_EQ(errorId(loadNpyBytes(
                  dir, makeNpy("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,)}", data4 + data4))),
              "tensor.dtype-unsupported");
    EXPECT_EQ(errorId(loadNpy(tensorDataDir() / "complex.npy")), "tensor.dtype-unsupported");
    EXPECT_EQ(errorId(loadNpy(dir.path() / "nope.npy")), "tensor.missing");

    // Things numpy itself accepts: version 2 headers, key order, extra spaces, list-style shapes, 'L' suffixes.
    const auto v2 = loadNpyBytes(dir, makeNpy("{ 'shape' : [ 1L ] , 'fortran_order':False,'descr':'>i4' }", "\x01\x02\x03\x04", 2));
    ASSERT_TRUE(v2.ok()) << v2.error().format();
    EXPECT_EQ(v2->valueAt(0), 0x01020304);
}

// ---------------------------------------------------------------------------------------------
// Malformed .pt

TEST(PtMalformed, NotTorchZipFiles)
{
    TempDir dir;
    writeBytes(dir.path() / "empty.pt", "");
    writeBytes(dir.path() / "text.pt", "just some text, not a zip archive");
    writeBytes(dir.path() / "short.pt", "PK");
    const auto empty = loadPt(dir.path() / "empty.pt");
    EXPECT_EQ(errorId(empty), "tensor.pt-format");
    EXPECT_EQ(errorId(loadPt(dir.path() / "text.pt")), "tensor.pt-format");
    EXPECT_EQ(errorId(loadPt(dir.path() / "short.pt")), "tensor.pt-format");
    const auto legacy = loadPt(tensorDataDir() / "legacy.pt");
    ASSERT_EQ(errorId(legacy), "tensor.pt-format");
    EXPECT_NE(legacy.error().message.find("legacy"), std::string::npos);
    EXPECT_EQ(errorId(loadPt(dir.path() / "missing.pt")), "tensor.missing");
    EXPECT_EQ(errorId(loadPt(tensorDataDir() / "f32.npy")), "tensor.pt-format");

    // A zip archive that torch.save did not write.
    writeBytes(dir.path() / "zip.pt", std::string("PK\x03\x04", 4) + std::string(200, 'z'));
    EXPECT_EQ(errorId(loadPt(dir.path() / "zip.pt")), "tensor.pt-corrupt");
}

TEST(PtMalformed, DictIsNotATensor)
{
    const auto r = loadPt(tensorDataDir() / "dict.pt");
    ASSERT_EQ(errorId(r), "tensor.pt-not-tensor");
    EXPECT_NE(r.error().message.find("dict"), std::string::npos) << r.error().message;
}

TEST(PtMalformed, TruncatedAtEveryOffset)
{
    TempDir dir;
    const fs::path path = dir.path() / "t.pt";
    for (const char* name : { "f32.pt", "transposed.pt" }) {
        const std::string good = readBytes(tensorDataDir() / name);
        for (std::size_t n = 0; n < good.size(); ++n) {
            writeBytes(path, std::string_view(good).substr(0, n));
            const auto r = loadPt(path);
            ASSERT_FALSE(r.ok()) << name << " cut at " << n;
            EXPECT_EQ(r.error().id, n < 4 ? "tensor.pt-format" : "tensor.pt-corrupt") << name << " cut at " << n;
        }
    }
}

TEST(PtMalformed, TruncatedFixtureFile)
{
    const fs::path source = fixtureTensorDir() / "dump_tensor_data/Functional.conv2d.0.forward.input.0.pt";
    PROBESCOPE_REQUIRE_FIXTURE(source);
    TempDir dir;
    const fs::path path = dir.path() / "t.pt";
    const std::string good = readBytes(source);
    for (std::size_t n = 0; n < good.size(); n += 37) {
        writeBytes(path, std::string_view(good).substr(0, n));
        const auto r = loadPt(path);
        ASSERT_FALSE(r.ok()) << "cut at " << n;
        EXPECT_EQ(r.error().id, n < 4 ? "tensor.pt-format" : "tensor.pt-corrupt") << "cut at " << n;
    }
}

TEST(PtMalformed, EveryByteFlipIsHandled)
{
    // Nothing may crash; a flip inside the raw tensor bytes legitimately still loads.
    const std::set<std::string> allowed { "tensor.pt-format", "tensor.pt-corrupt", "tensor.pt-not-tensor",
                                          "tensor.dtype-unsupported" };
    TempDir dir;
    const fs::path path = dir.path() / "t.pt";
    int loaded = 0;
    int refused = 0;
    for (const char* name : { "sliced.pt", "bf16.pt" }) {
        const std::string good = readBytes(tensorDataDir() / name);
        for (std::size_t i = 0; i < good.size(); ++i) {
            for (unsigned char mask : { 0xFF, 0x01, 0x10 }) {
                std::string bad = good;
                bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
                writeBytes(path, bad);
                const auto r = loadPt(path);
                if (r.ok()) {
                    ++loaded;
                    EXPECT_EQ(r->data.size(), static_cast<std::size_t>(r->numel()) * dtypeSize(r->dtype));
                } else {
                    ++refused;
                    EXPECT_TRUE(allowed.count(r.error().id)) << name << " byte " << i << ": " << r.error().format();
                }
            }
        }
    }
    EXPECT_GT(refused, 0);
    EXPECT_GT(loaded, 0);
}

TEST(PtMalformed, PickleCheckRefusesWhatWouldCrashLibTorch)
{
    using namespace std::string_literals;
    // A minimal well-formed stream: PROTO 2, EMPTY_DICT, STOP.
    EXPECT_FALSE(checkTorchPickle("\x80\x02}."s).has_value());
    // The header of a real torch.save pickle, cut short before STOP.
    EXPECT_TRUE(checkTorchPickle("\x80\x02}"s).has_value());
    EXPECT_TRUE(checkTorchPickle(""s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x04}."s).has_value()); // protocol 4
    // BUILD / REDUCE / NEWOBJ / TUPLE2 / BINPUT on a stack that is too short (LibTorch pops blindly).
    EXPECT_TRUE(checkTorchPickle("\x80\x02}b."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02}R."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02\x81N."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02N\x86."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02q\x00N."s).has_value());
    // Popping below a MARK, and containers built without one.
    EXPECT_TRUE(checkTorchPickle("\x80\x02N(\x85t."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02Nt."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02Nl."s).has_value());
    // DICT with an odd item count (LibTorch would read one past the stack).
    EXPECT_TRUE(checkTorchPickle("\x80\x02(NNNd."s).has_value());
    EXPECT_FALSE(checkTorchPickle("\x80\x02(NNd."s).has_value());
    // A memo slot billions away (LibTorch would grow its memo table to it), and GET of an empty slot.
    EXPECT_TRUE(checkTorchPickle("\x80\x02Nr\xff\xff\xff\x7f."s).has_value());
    EXPECT_TRUE(checkTorchPickle("\x80\x02h\x05."s).has_value());
    // A string length beyond the stream (LibTorch would allocate it first).
    EXPECT_TRUE(checkTorchPickle("\x80\x02X\xff\xff\xff\xff" "abc."s).has_value());
    // Leftover values at STOP.
    EXPECT_TRUE(checkTorchPickle("\x80\x02NN."s).has_value());
    // A storage reference whose type is a plain integer (LibTorch would index its type tables with it).
    EXPECT_TRUE(checkTorchPickle("\x80\x02(X\x07\x00\x00\x00" "storageK\xc8X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x01tQ."s)
                    .has_value());
    EXPECT_FALSE(checkTorchPickle(
                     "\x80\x02(X\x07\x00\x00\x00" "storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x01tQ."s)
                     .has_value());
    // Python objects other than tensors are refused as such, not as damage.
    const auto other = checkTorchPickle("\x80\x02" "cos\nsystem\n."s);
    ASSERT_TRUE(other.has_value());
    EXPECT_TRUE(other->notATensor);
}

// ---------------------------------------------------------------------------------------------
// Native .pt reader against LibTorch

namespace {

/// Whether two results agree: both fail, or both hold the same dtype, shape and bytes.
::testing::AssertionResult sameTensor(const Result<Tensor>& a, const Result<Tensor>& b)
{
    if (!a.ok() || !b.ok())
        return ::testing::AssertionFailure() << "native " << errorId(a) << ", LibTorch " << errorId(b);
    if (a->dtype != b->dtype || a->shape != b->shape || a->data != b->data)
        return ::testing::AssertionFailure() << "the tensors differ";
    return ::testing::AssertionSuccess();
}

/// Loads a file both ways and demands that whatever the native reader accepts, LibTorch reads alike.
struct CrossCheck
{
    int bothAccept = 0;
    int bothRefuse = 0;
    int onlyTorchAccepts = 0; ///< the native reader is stricter on purpose

    void check(const fs::path& path, const std::string& what)
    {
        const auto native = loadPt(path);
        const auto viaPread = loadPtNative(path, 0);
        const auto torch = loadPtWithTorch(path);
        if (native.ok()) {
            EXPECT_TRUE(sameTensor(native, torch)) << what;
            EXPECT_EQ(native->data.size(), static_cast<std::size_t>(native->numel()) * dtypeSize(native->dtype)) << what;
            ++bothAccept;
        } else {
            static const std::set<std::string> allowed { "tensor.pt-format", "tensor.pt-corrupt", "tensor.pt-not-tensor",
                                                         "tensor.dtype-unsupported", "tensor.missing" };
            EXPECT_TRUE(allowed.count(native.error().id)) << what << ": " << native.error().format();
            if (torch.ok())
                ++onlyTorchAccepts;
            else
                ++bothRefuse;
        }
        // Reading with pread instead of one read must not change anything.
        EXPECT_EQ(errorId(viaPread), errorId(native)) << what;
        if (native.ok() && viaPread.ok()) {
            EXPECT_TRUE(sameTensor(native, viaPread)) << what;
        }
    }
};

std::uint32_t crc32Of(std::string_view bytes)
{
    std::uint32_t crc = 0xFFFFFFFFu;
    for (const char ch : bytes) {
        crc ^= static_cast<std::uint8_t>(ch);
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

void put16(std::string& out, std::uint64_t v)
{
    for (int i = 0; i < 2; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put32(std::string& out, std::uint64_t v)
{
    for (int i = 0; i < 4; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put64(std::string& out, std::uint64_t v)
{
    for (int i = 0; i < 8; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

struct ZipOptions
{
    std::uint16_t method = 0;
    bool zip64End = true;       ///< torch's writer always adds the zip64 end records
    bool zip64Extra = false;    ///< sizes and offsets through zip64 extra fields
    std::string comment {};
};

/// A zip written the way torch.save's writer lays it out (stored records, no data descriptors).
std::string makeZip(const std::vector<std::pair<std::string, std::string>>& records, const ZipOptions& options = {})
{
    std::string out;
    std::string central;
    for (const auto& [name, data] : records) {
        const std::uint64_t offset = out.size();
        out += "PK\x03\x04";
        put16(out, 20);
        put16(out, 0);
        put16(out, options.method);
        put32(out, 0);
        put32(out, crc32Of(data));
        put32(out, data.size());
        put32(out, data.size());
        put16(out, name.size());
        put16(out, 0);
        out += name;
        out += data;

        central += "PK\x01\x02";
        put16(central, 45);
        put16(central, 20);
        put16(central, 0);
        put16(central, options.method);
        put32(central, 0);
        put32(central, crc32Of(data));
        put32(central, options.zip64Extra ? 0xFFFFFFFF : data.size());
        put32(central, options.zip64Extra ? 0xFFFFFFFF : data.size());
        put16(central, name.size());
        put16(central, options.zip64Extra ? 28 : 0);
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put32(central, 0);
        put32(central, options.zip64Extra ? 0xFFFFFFFF : offset);
        central += name;
        if (options.zip64Extra) {
            put16(central, 1);
            put16(central, 24);
            put64(central, data.size());
            put64(central, data.size());
            put64(central, offset);
        }
    }
    const std::uint64_t cdOffset = out.size();
    out += central;
    if (options.zip64End) {
        const std::uint64_t zip64Offset = out.size();
        out += "PK\x06\x06";
        put64(out, 44);
        put16(out, 45);
        put16(out, 45);
        put32(out, 0);
        put32(out, 0);
        put64(out, records.size());
        put64(out, records.size());
        put64(out, central.size());
        put64(out, cdOffset);
        out += "PK\x06\x07";
        put32(out, 0);
        put64(out, zip64Offset);
        put32(out, 1);
    }
    out += "PK\x05\x06";
    put16(out, 0);
    put16(out, 0);
    put16(out, records.size());
    put16(out, records.size());
    put32(out, central.size());
    put32(out, cdOffset);
    put16(out, options.comment.size());
    out += options.comment;
    return out;
}

std::string binUnicode(std::string_view text)
{
    std::string out = "X";
    put32(out, text.size());
    return out + std::string(text);
}

std::string pickleInt(std::int64_t v)
{
    std::string out;
    if (v >= 0 && v < 256) {
        out = "K";
        out += static_cast<char>(v);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        out = "J";
        put32(out, static_cast<std::uint32_t>(v));
    } else {
        out = "\x8a\x08";
        put64(out, static_cast<std::uint64_t>(v));
    }
    return out;
}

std::string pickleIntTuple(const std::vector<std::int64_t>& values)
{
    std::string out = values.empty() ? std::string(")") : std::string("(");
    for (const std::int64_t v : values)
        out += pickleInt(v);
    return values.empty() ? out : out + "t";
}

struct TensorPickle
{
    std::string storageType = "FloatStorage";
    std::string key = "0";
    std::string location = "cpu";
    std::int64_t numel = 6;
    std::int64_t offset = 0;
    std::vector<std::int64_t> sizes { 2, 3 };
    std::vector<std::int64_t> strides { 3, 1 };
    bool requiresGrad = false;
    std::string rebuild = "torch._utils\n_rebuild_tensor_v2\n";
};

/// The pickle torch.save writes for one tensor (without the memo PUTs, which change nothing).
std::string makeTensorPickle(const TensorPickle& t)
{
    std::string p = "\x80\x02";
    p += "c" + t.rebuild;
    p += "((" + binUnicode("storage") + "ctorch\n" + t.storageType + "\n" + binUnicode(t.key) + binUnicode(t.location)
        + pickleInt(t.numel) + "tQ";
    p += pickleInt(t.offset) + pickleIntTuple(t.sizes) + pickleIntTuple(t.strides);
    p += t.requiresGrad ? "\x88" : "\x89";
    p += "ccollections\nOrderedDict\n)Rt";
    p += "R.";
    return p;
}

std::string floatBytes(int count)
{
    std::string out;
    for (int i = 0; i < count; ++i) {
        const float v = static_cast<float>(i) + 0.5f;
        char b[4];
        std::memcpy(b, &v, 4);
        out.append(b, 4);
    }
    return out;
}

std::string makeTensorPt(const TensorPickle& t, const std::string& storage, const ZipOptions& options = {})
{
    return makeZip({ { "archive/data.pkl", makeTensorPickle(t) }, { "archive/data/" + t.key, storage },
                     { "archive/version", "3\n" } },
                   options);
}

} // namespace

TEST(NativePt, AgreesWithLibTorchOnEveryCheckedInFile)
{
    CrossCheck check;
    int files = 0;
    for (const auto& entry : fs::directory_iterator(tensorDataDir())) {
        if (entry.path().extension() != ".pt")
            continue;
        ++files;
        const auto native = loadPt(entry.path());
        const auto torch = loadPtWithTorch(entry.path());
        EXPECT_EQ(errorId(native), errorId(torch)) << entry.path().filename();
        check.check(entry.path(), entry.path().filename().string());
    }
    EXPECT_GE(files, 15);
    EXPECT_EQ(check.onlyTorchAccepts, 0);
}

TEST(NativePt, AgreesWithLibTorchOnEveryFixtureFile)
{
    const fs::path dir = fixtureTensorDir() / "dump_tensor_data";
    PROBESCOPE_REQUIRE_FIXTURE(dir);
    CrossCheck check;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() == ".pt")
            check.check(entry.path(), entry.path().filename().string());
    }
    EXPECT_GE(check.bothAccept, 300);
    EXPECT_EQ(check.onlyTorchAccepts, 0);
    EXPECT_EQ(check.bothRefuse, 0);
}

TEST(NativePt, DamagedFilesNeverLoadDifferentlyFromLibTorch)
{
    TempDir dir;
    const fs::path path = dir.path() / "t.pt";
    CrossCheck check;
    std::vector<std::pair<std::string, std::string>> sources;
    for (const char* name : { "f32.pt", "transposed.pt", "sliced.pt", "bf16.pt", "scalar.pt", "empty.pt" })
        sources.emplace_back(name, readBytes(tensorDataDir() / name));
    const fs::path fixture = fixtureTensorDir() / "dump_tensor_data/Functional.conv2d.0.forward.input.0.pt";
    if (fs::exists(fixture))
        sources.emplace_back("conv2d input", readBytes(fixture));

    for (const auto& [name, good] : sources) {
        const bool small = good.size() < 2048;
        for (std::size_t n = 0; n < good.size(); n += small ? 1 : 29) {
            writeBytes(path, std::string_view(good).substr(0, n));
            check.check(path, name + " cut at " + std::to_string(n));
            EXPECT_FALSE(loadPt(path).ok()) << name << " cut at " << n;
        }
        for (std::size_t i = 0; i < good.size(); i += small ? 1 : 7) {
            for (unsigned char mask : { 0xFF, 0x01, 0x10, 0x80 }) {
                std::string bad = good;
                bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
                writeBytes(path, bad);
                check.check(path, name + " byte " + std::to_string(i) + " ^ " + std::to_string(mask));
            }
        }
    }
    EXPECT_GT(check.bothAccept, 0);
    EXPECT_GT(check.bothRefuse, 0);
    std::cout << "damaged files: " << check.bothAccept << " accepted by both, " << check.bothRefuse
              << " refused by both, " << check.onlyTorchAccepts << " accepted only by LibTorch\n";
}

TEST(NativePt, RandomDamageInMemoryNeverCrashes)
{
    // Several flips at once reach states single flips cannot; the reader must only ever refuse them.
    const std::string good = readBytes(tensorDataDir() / "sliced.pt");
    std::uint64_t state = 12345;
    const auto next = [&state] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::uint32_t>(state >> 33);
    };
    int accepted = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string bad = good;
        const int flips = 1 + static_cast<int>(next() % 4);
        for (int f = 0; f < flips; ++f)
            bad[next() % bad.size()] = static_cast<char>(next() & 0xFF);
        const auto r = parsePtArchive(bad, "mem.pt");
        if (r.ok()) {
            ++accepted;
            EXPECT_EQ(r->data.size(), static_cast<std::size_t>(r->numel()) * dtypeSize(r->dtype));
        }
    }
    EXPECT_GT(accepted, 0);
}

TEST(NativePt, HandBuiltArchives)
{
    TempDir dir;
    const fs::path path = dir.path() / "t.pt";
    CrossCheck check;
    const auto load = [&](const std::string& bytes, const std::string& what) {
        writeBytes(path, bytes);
        check.check(path, what);
        return loadPt(path);
    };

    // The plain pattern, also with zip64 extra fields, an archive comment, requires_grad, a CUDA location.
    const auto plain = load(makeTensorPt({}, floatBytes(6)), "plain");
    ASSERT_TRUE(plain.ok()) << plain.error().format();
    EXPECT_EQ(plain->shape, (std::vector<std::int64_t> { 2, 3 }));
    EXPECT_EQ(plain->valueAt(5), 5.5);
    EXPECT_TRUE(load(makeTensorPt({}, floatBytes(6), { .zip64Extra = true }), "zip64 extra").ok());
    EXPECT_TRUE(load(makeTensorPt({}, floatBytes(6), { .zip64End = false }), "no zip64 end").ok());
    EXPECT_TRUE(load(makeTensorPt({}, floatBytes(6), { .comment = "hello" }), "comment").ok());
    EXPECT_TRUE(load(makeTensorPt({ .requiresGrad = true }, floatBytes(6)), "requires_grad").ok());
    EXPECT_TRUE(load(makeTensorPt({ .location = "cuda:0" }, floatBytes(6)), "cuda").ok());

    // Views: a column slice gathered in C order, a stride-0 broadcast, an empty tensor.
    TensorPickle column;
    column.offset = 1;
    column.sizes = { 3 };
    column.strides = { 2 };
    const auto sliced = load(makeTensorPt(column, floatBytes(6)), "column");
    ASSERT_TRUE(sliced.ok()) << sliced.error().format();
    EXPECT_EQ(sliced->valueAt(0), 1.5);
    EXPECT_EQ(sliced->valueAt(2), 5.5);
    TensorPickle broadcast;
    broadcast.numel = 2;
    broadcast.sizes = { 3, 2 };
    broadcast.strides = { 0, 1 };
    const auto expanded = load(makeTensorPt(broadcast, floatBytes(2)), "broadcast");
    ASSERT_TRUE(expanded.ok()) << expanded.error().format();
    EXPECT_EQ(expanded->valueAt(4), 0.5);
    EXPECT_EQ(expanded->valueAt(5), 1.5);
    TensorPickle empty;
    empty.numel = 0;
    empty.sizes = { 0, 4 };
    empty.strides = { 4, 1 };
    EXPECT_TRUE(load(makeTensorPt(empty, ""), "empty").ok());

    // Refused: views past the storage, negative strides, a numel that disagrees with the record.
    TensorPickle far = column;
    far.offset = 2;
    EXPECT_EQ(errorId(load(makeTensorPt(far, floatBytes(6)), "past the end")), "tensor.pt-corrupt");
    TensorPickle negative;
    negative.strides = { 3, -1 };
    EXPECT_EQ(errorId(load(makeTensorPt(negative, floatBytes(6)), "negative stride")), "tensor.pt-corrupt");
    TensorPickle wrongNumel;
    wrongNumel.numel = 7;
    EXPECT_EQ(errorId(load(makeTensorPt(wrongNumel, floatBytes(6)), "numel")), "tensor.pt-corrupt");
    TensorPickle huge = broadcast;
    huge.sizes = { 1LL << 40, 2 };
    // Not cross-checked: LibTorch would try to allocate the 8 TiB (which ASan aborts on).
    writeBytes(path, makeTensorPt(huge, floatBytes(2)));
    EXPECT_EQ(errorId(loadPt(path)), "tensor.pt-corrupt");
    TensorPickle overflow;
    overflow.sizes = { 1LL << 62, 1LL << 62 };
    EXPECT_EQ(errorId(load(makeTensorPt(overflow, floatBytes(6)), "overflow")), "tensor.pt-corrupt");

    // Refused: storage types, objects and layouts torch.save does not write for one plain tensor.
    EXPECT_EQ(errorId(load(makeTensorPt({ .storageType = "ComplexFloatStorage", .numel = 3 }, floatBytes(6)), "complex")),
              "tensor.dtype-unsupported");
    EXPECT_EQ(errorId(load(makeTensorPt({ .storageType = "NopeStorage" }, floatBytes(6)), "unknown storage")),
              "tensor.pt-corrupt");
    EXPECT_EQ(errorId(load(makeTensorPt({ .rebuild = "torch._utils\n_rebuild_parameter\n" }, floatBytes(6)), "parameter")),
              "tensor.pt-not-tensor");
    EXPECT_EQ(errorId(load(makeTensorPt({ .location = "npu:0" }, floatBytes(6)), "npu")), "tensor.pt-corrupt");
    EXPECT_EQ(errorId(load(makeTensorPt({}, floatBytes(6), { .method = 8 }), "deflate")), "tensor.pt-corrupt");
    EXPECT_EQ(errorId(load(makeZip({ { "archive/data.pkl", makeTensorPickle({}) }, { "archive/data/0", floatBytes(6) },
                                     { "archive/data/1", floatBytes(6) }, { "archive/version", "3\n" } }),
                           "extra storage")),
              "tensor.pt-corrupt");
    EXPECT_EQ(errorId(load(makeZip({ { "archive/data.pkl", makeTensorPickle({}) }, { "archive/data/0", floatBytes(6) },
                                     { "archive/version", "11\n" } }),
                           "version 11")),
              "tensor.pt-corrupt");
    EXPECT_EQ(errorId(load(makeZip({ { "archive/data.pkl", makeTensorPickle({}) }, { "archive/data/0", floatBytes(6) } }),
                           "no version")),
              "tensor.pt-corrupt");
    EXPECT_EQ(errorId(load(makeZip({ { "archive/data.pkl", makeTensorPickle({}) }, { "ARCHIVE/DATA.PKL", "x" },
                                     { "archive/data/0", floatBytes(6) }, { "archive/version", "3\n" } }),
                           "twins")),
              "tensor.pt-corrupt");
    const std::string dictPickle = std::string("\x80\x02}q\x00(", 6) + binUnicode("a") + "K\x01u.";
    EXPECT_EQ(errorId(load(makeZip({ { "archive/data.pkl", dictPickle }, { "archive/version", "3\n" } }), "dict")),
              "tensor.pt-not-tensor");
    // LONG1 in any length but 8 is refused by LibTorch, so by this reader too.
    std::string long5 = makeTensorPickle({});
    long5.replace(long5.find("K\x06tQ"), 2, std::string("\x8a\x05\x06\x00\x00\x00\x00", 7));
    EXPECT_EQ(errorId(load(makeZip({ { "archive/data.pkl", long5 }, { "archive/data/0", floatBytes(6) },
                                     { "archive/version", "3\n" } }),
                           "long1")),
              "tensor.pt-corrupt");
    // LibTorch reads some of the refused archives anyway (a numel that disagrees with the record, an
    // unused storage record, ...); the native reader is stricter there on purpose.
    std::cout << "hand-built archives: " << check.bothAccept << " accepted by both, " << check.bothRefuse
              << " refused by both, " << check.onlyTorchAccepts << " accepted only by LibTorch\n";
}

TEST(NativePt, PreadPathReadsLargeFiles)
{
    // 3 MiB of float32 in a transposed view, read once whole and once through pread.
    TempDir dir;
    const fs::path path = dir.path() / "big.pt";
    TensorPickle t;
    t.numel = 768 * 1024;
    t.sizes = { 1024, 768 };
    t.strides = { 1, 1024 };
    writeBytes(path, makeTensorPt(t, floatBytes(768 * 1024)));
    const auto whole = loadPtNative(path, 64ULL << 20);
    const auto pread = loadPtNative(path, 0);
    ASSERT_TRUE(whole.ok()) << whole.error().format();
    EXPECT_TRUE(sameTensor(whole, pread));
    EXPECT_TRUE(sameTensor(whole, loadPtWithTorch(path)));
    EXPECT_EQ(whole->valueAt(1), 1024.5);
}

// ---------------------------------------------------------------------------------------------
// data_name resolution

TEST(DataFile, RefusesNamesThatLeaveTheFolder)
{
    TempDir dir;
    const fs::path tensors = dir.path() / "dump_tensor_data";
    fs::create_directories(tensors / "sub");
    fs::copy_file(tensorDataDir() / "f32.pt", tensors / "a.pt");
    fs::copy_file(tensorDataDir() / "f32.npy", tensors / "sub" / "b.npy");
    fs::copy_file(tensorDataDir() / "f32.pt", dir.path() / "outside.pt");
    writeBytes(tensors / "notes.txt", "hello");
    fs::create_symlink(dir.path() / "outside.pt", tensors / "link_out.pt");
    fs::create_symlink("../outside.pt", tensors / "rel_link_out.pt");
    fs::create_symlink(dir.path() / "gone.pt", tensors / "dangling_out.pt");
    fs::create_symlink("a.pt", tensors / "link_in.pt");
    fs::create_directory_symlink(dir.path(), tensors / "up");
    fs::create_symlink("gone_inside.pt", tensors / "dangling_in.pt");
    fs::create_symlink("loop_b.pt", tensors / "loop_a.pt");
    fs::create_symlink("loop_a.pt", tensors / "loop_b.pt");
    fs::create_directory_symlink("sub/../sub", tensors / "subalias");

    EXPECT_TRUE(loadTensorFile(tensors, "a.pt").ok());
    EXPECT_TRUE(loadTensorFile(tensors, "sub/b.npy").ok());
    EXPECT_TRUE(loadTensorFile(tensors, "./a.pt").ok());
    EXPECT_TRUE(loadTensorFile(tensors, "link_in.pt").ok()) << "a link that stays inside is fine";
    EXPECT_TRUE(loadTensorFile(tensors, "subalias/b.npy").ok()) << "\"..\" inside a link target is fine";

    EXPECT_EQ(resolveDataFile(tensors, "../outside.pt").error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, "sub/../a.pt").error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, "sub/..").error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, (dir.path() / "outside.pt").string()).error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, "link_out.pt").error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, "rel_link_out.pt").error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, "dangling_out.pt").error().id, "tensor.path-escape");
    EXPECT_EQ(resolveDataFile(tensors, "up/outside.pt").error().id, "tensor.path-escape");
    EXPECT_EQ(loadTensorFile(tensors, "link_out.pt").error().id, "tensor.path-escape");

    EXPECT_EQ(resolveDataFile(tensors, "").error().id, "tensor.path-invalid");
    EXPECT_EQ(resolveDataFile(tensors, std::string_view("a.pt\0x", 6)).error().id, "tensor.path-invalid");
    EXPECT_EQ(resolveDataFile(tensors, "missing.pt").error().id, "tensor.missing");
    EXPECT_EQ(resolveDataFile(tensors, "dangling_in.pt").error().id, "tensor.missing");
    EXPECT_EQ(resolveDataFile(tensors, "loop_a.pt").error().id, "tensor.path-invalid");
    EXPECT_EQ(resolveDataFile(tensors, "sub").error().id, "tensor.missing");
    EXPECT_EQ(resolveDataFile(dir.path() / "no_such_folder", "a.pt").error().id, "tensor.missing");
    EXPECT_EQ(loadTensorFile(tensors, "notes.txt").error().id, "tensor.format-unknown");

    const auto escaped = resolveDataFile(tensors, "link_out.pt");
    EXPECT_NE(escaped.error().message.find("outside the tensor folder"), std::string::npos);
}

TEST(DataFile, OpenGivesWhatResolveGivesForEveryName)
{
    // TensorFolder::open (openat relative to the held folder, O_NOFOLLOW, fstat) must keep every rule of resolve():
    // the same verdict, error id and message for every name, and when it opens, the very file resolve() names.
    TempDir dir;
    const fs::path tensors = dir.path() / "dump_tensor_data";
    fs::create_directories(tensors / "sub");
    fs::copy_file(tensorDataDir() / "f32.pt", tensors / "a.pt");
    fs::copy_file(tensorDataDir() / "f32.npy", tensors / "sub" / "b.npy");
    fs::copy_file(tensorDataDir() / "f32.pt", dir.path() / "outside.pt");
    fs::create_symlink(dir.path() / "outside.pt", tensors / "link_out.pt");
    fs::create_symlink("a.pt", tensors / "link_in.pt");
    fs::create_symlink("gone_inside.pt", tensors / "dangling_in.pt");
    fs::create_symlink("loop_b.pt", tensors / "loop_a.pt");
    fs::create_symlink("loop_a.pt", tensors / "loop_b.pt");
    fs::create_directory_symlink(dir.path(), tensors / "up");
    ASSERT_EQ(::mkfifo((tensors / "pipe.pt").c_str(), 0600), 0); // must be refused, never block the open
    const TensorFolder folder(tensors);
    for (const std::string_view name :
         { std::string_view("a.pt"), std::string_view("sub/b.npy"), std::string_view("./a.pt"), std::string_view("link_in.pt"),
           std::string_view("link_out.pt"), std::string_view("dangling_in.pt"), std::string_view("loop_a.pt"),
           std::string_view("up/outside.pt"), std::string_view("../outside.pt"), std::string_view("missing.pt"),
           std::string_view("sub"), std::string_view("pipe.pt"), std::string_view(""), std::string_view("a.pt\0x", 6),
           std::string_view("."), std::string_view(".."), std::string_view("/etc/passwd") }) {
        SCOPED_TRACE(std::string(name));
        const auto resolved = folder.resolve(name);
        auto opened = folder.open(name);
        ASSERT_EQ(resolved.ok(), opened.ok());
        if (!resolved.ok()) {
            EXPECT_EQ(opened.error().id, resolved.error().id);
            EXPECT_EQ(opened.error().format(), resolved.error().format());
            continue;
        }
        EXPECT_EQ(opened->file().path, resolved->path);
        EXPECT_EQ(opened->file().size, resolved->size);
        const int fd = opened->release();
        struct stat viaFd {};
        struct stat viaPath {};
        ASSERT_EQ(::fstat(fd, &viaFd), 0);
        ::close(fd);
        ASSERT_EQ(::stat(resolved->path.c_str(), &viaPath), 0);
        EXPECT_EQ(viaFd.st_ino, viaPath.st_ino);
        EXPECT_EQ(viaFd.st_dev, viaPath.st_dev);
    }
    EXPECT_EQ(TensorFolder(dir.path() / "no_such_folder").open("a.pt").error().id, "tensor.missing");
}

TEST(DataFile, OpenWithReadGivesWhatOpenGivesAndTheWholeSmallFile)
{
    // TensorFolder::open with a buffer reads a small file in the same call and skips the fstat: a short pread is the
    // whole file. Every name must still get open()'s verdict, error and file; what was read must be the file.
    TempDir dir;
    const fs::path tensors = dir.path() / "dump_tensor_data";
    fs::create_directories(tensors / "sub");
    fs::copy_file(tensorDataDir() / "f32.pt", tensors / "a.pt");
    fs::copy_file(tensorDataDir() / "f32.pt", dir.path() / "outside.pt");
    fs::create_symlink(dir.path() / "outside.pt", tensors / "link_out.pt");
    fs::create_symlink("a.pt", tensors / "link_in.pt");
    std::ofstream(tensors / "empty.pt").flush();
    const std::string probe(TensorFolder::kProbeBytes, 'p');
    std::ofstream(tensors / "probe.pt", std::ios::binary) << probe;        // exactly one probe: fstat decides
    std::ofstream(tensors / "probe_less.pt", std::ios::binary) << probe.substr(1);
    std::ofstream(tensors / "big.pt", std::ios::binary) << probe << probe << "tail";
    ASSERT_EQ(::mkfifo((tensors / "pipe.pt").c_str(), 0600), 0); // pread refuses it (ESPIPE), never blocks
    std::vector<std::string> names { "a.pt",       "link_in.pt", "link_out.pt", "empty.pt", "probe.pt", "probe_less.pt",
                                     "big.pt",     "pipe.pt",    "sub",         "missing.pt", "../outside.pt", "." };
    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0); // a socket cannot be opened (ENXIO)
    sockaddr_un address {};
    address.sun_family = AF_UNIX;
    const std::string sockPath = (tensors / "sock.pt").string();
    if (sock >= 0 && sockPath.size() < sizeof(address.sun_path)) {
        std::memcpy(address.sun_path, sockPath.c_str(), sockPath.size() + 1);
        if (::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0)
            names.push_back("sock.pt");
    }
    // Device nodes (root only): /dev/null's answer is empty, /dev/zero's fills the probe; both go to fstat.
    if (::mknod((tensors / "null.pt").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0)
        names.push_back("null.pt");
    if (::mknod((tensors / "zero.pt").c_str(), S_IFCHR | 0600, makedev(1, 5)) == 0)
        names.push_back("zero.pt");

    const TensorFolder folder(tensors);
    ReadBuffer buffer;
    std::size_t readWhole = 0;
    for (const std::string& name : names) {
        SCOPED_TRACE(name);
        auto plain = folder.open(name);
        auto reading = folder.open(name, buffer, std::uint64_t { 1 } << 20);
        ASSERT_EQ(plain.ok(), reading.ok());
        if (!plain.ok()) {
            EXPECT_EQ(reading.error().id, plain.error().id);
            EXPECT_EQ(reading.error().format(), plain.error().format());
            continue;
        }
        EXPECT_EQ(reading->file().path, plain->file().path);
        EXPECT_EQ(reading->size(), plain->size());
        EXPECT_EQ(reading->pathLength(), plain->file().path.native().size());
        const std::uint64_t size = plain->size();
        // Read in the open: a plain name of a regular file, not empty, shorter than the probe (a link takes the walk).
        EXPECT_EQ(reading->readWhole() != nullptr, name == "a.pt" || name == "probe_less.pt");
        if (reading->readWhole()) {
            ++readWhole;
            std::ifstream in(plain->file().path, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            EXPECT_EQ(std::string(reinterpret_cast<const char*>(reading->readWhole()), size), bytes);
        }
    }
    EXPECT_EQ(readWhole, 2u);
    if (sock >= 0)
        ::close(sock);

    // Through the resolver, as the compare reads: the same tensor as loadPt, its elements where they were read.
    const TensorResolver resolver(dir.path(), tensors);
    ReadBuffer streamBuffer;
    auto stream = resolver.openPt("a.pt", streamBuffer);
    ASSERT_TRUE(stream.ok()) << stream.error().format();
    const auto loaded = loadPt(tensors / "a.pt");
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(stream->dtype(), loaded->dtype);
    EXPECT_EQ(stream->shape(), loaded->shape);
    ASSERT_NE(stream->memory(), nullptr);
    EXPECT_EQ(std::memcmp(stream->memory(), loaded->data.data(), loaded->data.size()), 0);
    EXPECT_EQ(resolver.openPt("empty.pt", streamBuffer).error().format(), loadPt(tensors / "empty.pt").error().format());
}

// ---------------------------------------------------------------------------------------------
// Metadata checks

TEST(Metadata, ComparesDtypeAndShapeWithDumpJson)
{
    const Tensor t = makeFloat32({ 1, 2, 3, 4, 5, 6 }, { 2, 3 });
    EXPECT_TRUE(checkAgainstMetadata(t, "torch.float32", { 2, 3 }, "x.pt").empty());
    EXPECT_TRUE(checkAgainstMetadata(t, "Float32", { 2, 3 }, "x.npy").empty());

    Diagnostics d = checkAgainstMetadata(t, "torch.float16", { 2, 3 }, "x.pt");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].id, "tensor.dtype-mismatch");
    EXPECT_EQ(d[0].location.file, "x.pt");
    EXPECT_NE(d[0].message.find("torch.float16"), std::string::npos);
    EXPECT_NE(d[0].message.find("torch.float32"), std::string::npos);

    d = checkAgainstMetadata(t, "torch.float32", { 3, 2 }, "x.pt");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].id, "tensor.shape-mismatch");
    EXPECT_NE(d[0].message.find("[3, 2]"), std::string::npos) << d[0].message;
    EXPECT_NE(d[0].message.find("[2, 3]"), std::string::npos) << d[0].message;

    d = checkAgainstMetadata(t, "torch.complex64", {}, "x.pt");
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].id, "tensor.dtype-unknown");
    EXPECT_EQ(d[1].id, "tensor.shape-mismatch");

    // MindSpore saves bfloat16 tensors as float32 .npy (numpy has no bfloat16): a warning, not an error.
    d = checkAgainstMetadata(t, "BFloat16", { 2, 3 }, "x.npy");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].id, "tensor.dtype-widened");
    EXPECT_EQ(d[0].severity, Severity::Warning);
    EXPECT_FALSE(hasErrors(d));
}
