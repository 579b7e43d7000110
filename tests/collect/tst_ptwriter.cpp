// SPDX-License-Identifier: Apache-2.0
// The .pt writer: the pickle is byte for byte what Python's torch.save (torch 1.13) writes (goldens
// made with it), and ProbeScope's native reader and LibTorch's reader load the files identically.
#include "collecttest.h"

#include "../../core/collect/ptwriter.h"
#include "core/tensor/tensor.h"
#include "core/util/outputfile.h"
#include "core/tensortorch/torchpt.h"

#include <cstring>

using namespace probescope;
using namespace probescope::testing;
namespace fs = std::filesystem;

namespace {

std::string hex(std::string_view bytes)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (const char c : bytes) {
        out += kDigits[(static_cast<unsigned char>(c) >> 4) & 0xf];
        out += kDigits[static_cast<unsigned char>(c) & 0xf];
    }
    return out;
}

std::uint32_t le(std::string_view b, std::size_t at, int bytes)
{
    std::uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
    return v;
}

/// The first record of the archive (data.pkl), read through its local header.
std::string firstRecord(const std::string& file)
{
    const std::uint32_t size = le(file, 22, 4);
    const std::uint32_t name = le(file, 26, 2);
    const std::uint32_t extra = le(file, 28, 2);
    return file.substr(30 + name + extra, size);
}

struct Case
{
    const char* name;
    const char* storage;
    tensor::DType dtype;
    std::vector<std::int64_t> shape;
    std::size_t elementSize;
    const char* pickleHex; // Python: torch.save(t) of the same dtype and shape
};

const Case kCases[] = {
    { "f32_2x3", "FloatStorage", tensor::DType::Float32, { 2, 3 }, 4,
      "800263746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f76320a71002828580700000073746f72616765710163"
      "746f7263680a466c6f617453746f726167650a71025801000000307103580300000063707571044b06747105514b004b024b0386710"
      "64b034b018671078963636f6c6c656374696f6e730a4f726465726564446963740a71082952710974710a52710b2e" },
    { "i64_0d", "LongStorage", tensor::DType::Int64, {}, 8,
      "800263746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f76320a71002828580700000073746f72616765710163"
      "746f7263680a4c6f6e6753746f726167650a71025801000000307103580300000063707571044b01747105514b0029298963636f6c6"
      "c656374696f6e730a4f726465726564446963740a7106295271077471085271092e" },
    { "bool_5d", "BoolStorage", tensor::DType::Bool, { 1, 2, 1, 2, 1 }, 1,
      "800263746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f76320a71002828580700000073746f72616765710163"
      "746f7263680a426f6f6c53746f726167650a71025801000000307103580300000063707571044b04747105514b00284b014b024b014b"
      "024b01747106284b044b024b024b014b017471078963636f6c6c656374696f6e730a4f726465726564446963740a71082952710974"
      "710a52710b2e" },
    { "f64_big", "DoubleStorage", tensor::DType::Float64, { 70000 }, 8,
      "800263746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f76320a71002828580700000073746f72616765710163"
      "746f7263680a446f75626c6553746f726167650a71025801000000307103580300000063707571044a70110100747105514b004a70"
      "1101008571064b018571078963636f6c6c656374696f6e730a4f726465726564446963740a71082952710974710a52710b2e" },
};

} // namespace

TEST(PtWriter, PickleIsWhatTorchSaveWrites)
{
    TempDir temp;
    const fs::path dir = temp.path();
    for (const Case& c : kCases) {
        std::int64_t numel = 1;
        for (const std::int64_t d : c.shape)
            numel *= d;
        std::vector<std::byte> data(static_cast<std::size_t>(numel) * c.elementSize);
        for (std::size_t i = 0; i < data.size(); ++i)
            data[i] = static_cast<std::byte>(c.dtype == tensor::DType::Bool ? (i % 2) : (i * 7 + 3) % 251);

        collect::PtTensorBytes t;
        t.storageType = c.storage;
        t.shape = c.shape;
        t.data = data.data();
        t.bytes = data.size();
        t.elementSize = c.elementSize;
        const fs::path file = dir / (std::string(c.name) + ".pt");
        ASSERT_FALSE(collect::writePt(file, t));

        EXPECT_EQ(hex(firstRecord(readAll(file))), c.pickleHex) << c.name;

        auto native = tensor::loadPt(file);
        ASSERT_TRUE(native) << c.name << ": " << native.error().format();
        EXPECT_EQ(native->dtype, c.dtype) << c.name;
        EXPECT_EQ(native->shape, c.shape) << c.name;
        EXPECT_TRUE(native->data == data) << c.name;

        auto viaTorch = tensor::loadPtWithTorch(file);
        ASSERT_TRUE(viaTorch) << c.name << ": " << viaTorch.error().format();
        EXPECT_EQ(viaTorch->dtype, c.dtype) << c.name;
        EXPECT_EQ(viaTorch->shape, c.shape) << c.name;
        EXPECT_TRUE(viaTorch->data == data) << c.name;
    }
}

TEST(PtWriter, RecordDataIsAlignedLikeTorch)
{
    TempDir temp;
    const fs::path dir = temp.path();
    const float values[3] = { 1.0f, -2.5f, 3.25f };
    collect::PtTensorBytes t { "FloatStorage", { 3 }, values, sizeof values, 4 };
    const fs::path file = dir / "Aten.relu.0.forward.output.0.pt";
    ASSERT_FALSE(collect::writePt(file, t));
    const std::string bytes = readAll(file);
    const auto at = bytes.find(std::string_view(reinterpret_cast<const char*>(values), sizeof values));
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(at % 64, 0u); // torch mmaps storages; it aligns them to 64 bytes
    EXPECT_NE(bytes.find("Aten.relu.0.forward.output.0/version"), std::string::npos);
}

TEST(PtWriter, Crc32IsZlibs)
{
    EXPECT_EQ(collect::crc32Of("", 0), 0u);
    EXPECT_EQ(collect::crc32Of("123456789", 9), 0xcbf43926u); // the CRC-32 check value
}

TEST(PtWriter, ErrorNamesTheFile)
{
    const float v = 1;
    collect::PtTensorBytes t { "FloatStorage", {}, &v, 4, 4 };
    const auto problem = collect::writePt("/nonexistent-folder/x.pt", t);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->id, "collect.io");
    EXPECT_NE(problem->format().find("/nonexistent-folder/x.pt"), std::string::npos);
}

// Issue 25: a .pt the writer could not finish (a full disk) is removed, never left cut short under its name, and a
// symlink planted at the name is not followed.
TEST(PtWriter, AFullDiskLeavesNoCutFileAndASymlinkIsNotFollowed)
{
    TempDir temp;
    const float values[3] = { 1.0f, -2.5f, 3.25f };
    collect::PtTensorBytes t { "FloatStorage", { 3 }, values, sizeof values, 4 };
    const fs::path file = temp.path() / "Aten.relu.0.forward.output.0.pt";
    for (const char* spec : { "write:1", "close:1" }) {
        setTestFullDisk(spec);
        const auto problem = collect::writePt(file, t);
        setTestFullDisk("");
        ASSERT_TRUE(problem) << spec;
        EXPECT_NE(problem->message.find(std::strerror(ENOSPC)), std::string::npos) << problem->message;
        EXPECT_FALSE(fs::exists(file)) << spec;
    }
    const fs::path victim = temp.path() / "victim.txt";
    writeFile(victim, "not yours\n");
    fs::create_symlink(victim, file);
    EXPECT_TRUE(collect::writePt(file, t));
    EXPECT_EQ(readAll(victim), "not yours\n");
}
