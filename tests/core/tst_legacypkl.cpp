// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumpfile.h"
#include "fixtureguard.h"
#include "testconfig.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace probescope;
using namespace probescope::dump;

namespace {

const std::filesystem::path kLegacyDir = probescope::testing::testDataDir() / "legacy";
const std::filesystem::path kTensorPkl = kLegacyDir / "tensor/ptdbg_dump_v4.0/rank0/npu_dump.pkl";
const std::filesystem::path kStackPkl = kLegacyDir / "api_stack/ptdbg_dump_v4.0/rank0/api_stack_npu_dump.pkl";
const std::filesystem::path kScalarPkl = kLegacyDir / "scalars/ptdbg_dump_v3.2/rank1/npu_dump.pkl";

using probescope::testing::readAll;

/// A scratch folder removed with the test (pid in the name: ctest runs tests in parallel processes).
class TempDir
{
public:
    TempDir()
    {
        static int counter = 0;
        m_path = std::filesystem::temp_directory_path()
            / ("probescope-pkl-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path write(const std::string& name, std::string_view text) const
    {
        const auto file = m_path / name;
        // A new file each time: ext4 flushes a file truncated and rewritten in place, which made the
        // every-offset test I/O-bound.
        std::filesystem::remove(file);
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        return file;
    }

private:
    std::filesystem::path m_path;
};

/// Canonical text of a value, to compare converted documents structurally.
std::string toText(JsonValue v)
{
    switch (v.type()) {
    case JsonType::Null:
        return "null";
    case JsonType::Bool:
        return v.asBool() ? "true" : "false";
    case JsonType::Int:
        return std::to_string(v.asInt());
    case JsonType::Double: {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", v.asDouble());
        return std::string(buf) + "d";
    }
    case JsonType::String:
        return "\"" + std::string(v.asString()) + "\"";
    case JsonType::Array: {
        std::string out = "[";
        for (std::uint32_t i = 0; i < v.size(); ++i)
            out += (i ? "," : "") + toText(v.at(i));
        return out + "]";
    }
    case JsonType::Object: {
        std::string out = "{";
        for (std::uint32_t i = 0; i < v.size(); ++i)
            out += (i ? "," : "") + std::string(v.keyAt(i)) + ":" + toText(v.at(i));
        return out + "}";
    }
    }
    return "?";
}

std::vector<std::string> keysOf(JsonValue object)
{
    std::vector<std::string> keys;
    for (std::uint32_t i = 0; i < object.size(); ++i)
        keys.emplace_back(object.keyAt(i));
    return keys;
}

std::vector<std::string> entryKeys(const DumpFile& dump)
{
    std::vector<std::string> keys;
    for (const Entry& e : dump.entries)
        keys.emplace_back(e.key);
    return keys;
}

JsonValue field(const Entry* entry, std::string_view name)
{
    EXPECT_NE(entry, nullptr);
    const auto v = entry->value.find(name);
    EXPECT_TRUE(v.has_value()) << name;
    return *v;
}

std::string member(JsonValue object, std::string_view name)
{
    const auto v = object.find(name);
    return v ? toText(*v) : "<absent>";
}

std::vector<std::string> idsOf(const Diagnostics& diagnostics)
{
    std::vector<std::string> ids;
    for (const Diagnostic& d : diagnostics)
        ids.push_back(d.id);
    return ids;
}

std::shared_ptr<const DumpFile> readOk(const std::filesystem::path& path, const ReadOptions& options = {})
{
    auto result = readLegacyPkl(path, options);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().format());
    return result.ok() ? *result : nullptr;
}

} // namespace

TEST(LegacyPkl, TensorDumpBecomesDumpJsonShapedDocument)
{
    const auto dump = readOk(kTensorPkl);
    ASSERT_TRUE(dump);
    EXPECT_EQ(dump->format, DumpFormat::LegacyPkl);
    EXPECT_TRUE(dump->diagnostics.empty()) << dump->diagnostics.front().format();
    EXPECT_FALSE(dump->truncated);
    EXPECT_EQ(entryKeys(*dump),
        (std::vector<std::string> { "Functional_conv2d_0_forward", "Functional_batch_norm_0_forward",
            "Tensor___add___1_forward", "Functional_conv2d_0_backward" }));
    // The line of each API's first row, for jumping to the source.
    EXPECT_EQ(dump->entries[0].line, 1u);
    EXPECT_EQ(dump->entries[1].line, 5u);
    EXPECT_EQ(dump->entries[2].line, 8u);
    EXPECT_EQ(dump->entries[3].line, 11u);

    const std::filesystem::path folder = kTensorPkl.parent_path() / "npu_dump";
    EXPECT_EQ(dump->tensorDir, folder);
    EXPECT_EQ(dump->header.task, "tensor");
    EXPECT_EQ(dump->header.level, "L1");
    EXPECT_EQ(dump->header.framework, "pytorch");
    ASSERT_TRUE(dump->header.dumpDataDir.has_value());
    EXPECT_EQ(*dump->header.dumpDataDir, folder.string());

    const JsonValue root = dump->document->root();
    EXPECT_EQ(keysOf(root), (std::vector<std::string> { "task", "level", "framework", "dump_data_dir", "data" }));
    EXPECT_EQ(member(root, "dump_data_dir"), "\"" + folder.string() + "\"");

    const Entry* conv = dump->find("Functional_conv2d_0_forward");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->name.kind, EntryKind::Legacy);
    EXPECT_EQ(conv->name.direction, Direction::Forward);
    EXPECT_EQ(conv->name.prefix, "Functional");
    EXPECT_EQ(conv->name.opName, "conv2d");
    EXPECT_EQ(conv->name.callIndex, 0);
    EXPECT_EQ(keysOf(conv->value), (std::vector<std::string> { "input_args", "input_kwargs", "output" }));
    EXPECT_EQ(field(conv, "input_args").size(), 3u);
    EXPECT_EQ(toText(field(conv, "input_kwargs")), "{}");
    EXPECT_EQ(toText(field(conv, "input_args").at(0)),
        "{type:\"torch.Tensor\",dtype:\"torch.float32\",shape:[1,3,4,4],Max:2.6400000000000001d,"
        "Min:-2.1099999999999999d,Mean:0.0011999999999999999d,"
        "data_name:\"Functional_conv2d_0_forward_input.0.npy\"}");
    // "..._forward_output" (no index) is the single output, element 0 as msprobe lists it.
    ASSERT_EQ(field(conv, "output").size(), 1u);
    EXPECT_EQ(member(field(conv, "output").at(0), "data_name"), "\"Functional_conv2d_0_forward_output.npy\"");
    EXPECT_EQ(member(field(conv, "output").at(0), "shape"), "[1,2,2,2]");

    const Entry* bn = dump->find("Functional_batch_norm_0_forward");
    ASSERT_NE(bn, nullptr);
    EXPECT_EQ(bn->name.opName, "batch_norm");
    const JsonValue bnWeight = field(bn, "input_args").at(1);
    EXPECT_EQ(member(bnWeight, "Norm"), "1.4142135381698608d");
    EXPECT_EQ(member(bnWeight, "data_name"), "<absent>") << "no .npy file for this row";
    EXPECT_EQ(member(field(bn, "input_args").at(0), "dtype"), "\"torch.float16\"");
    EXPECT_EQ(member(field(bn, "input_args").at(0), "Max"), "139.625d");

    const Entry* add = dump->find("Tensor___add___1_forward");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(add->name.prefix, "Tensor");
    EXPECT_EQ(add->name.opName, "__add__");
    EXPECT_EQ(add->name.callIndex, 1);
    // A Python int argument is a msprobe scalar leaf; its .npy (ptdbg saved one) is not a tensor file.
    EXPECT_EQ(toText(field(add, "input_args").at(1)), "{type:\"int\",value:3}");

    const Entry* back = dump->find("Functional_conv2d_0_backward");
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->name.direction, Direction::Backward);
    EXPECT_EQ(keysOf(back->value), (std::vector<std::string> { "input", "output" }));
    EXPECT_EQ(field(back, "input").size(), 1u);
    ASSERT_EQ(field(back, "output").size(), 3u);
    EXPECT_EQ(member(field(back, "output").at(1), "data_name"), "\"Functional_conv2d_0_backward_output.1.npy\"");
    EXPECT_EQ(member(field(back, "output").at(2), "data_name"), "<absent>");
    EXPECT_EQ(member(field(back, "output").at(2), "Norm"), "<absent>") << "3-element summaries have no norm";
}

TEST(LegacyPkl, ApiStackRowsBecomeStackMember)
{
    const auto dump = readOk(kStackPkl);
    ASSERT_TRUE(dump);
    EXPECT_TRUE(dump->diagnostics.empty()) << dump->diagnostics.front().format();
    EXPECT_EQ(entryKeys(*dump),
        (std::vector<std::string> {
            "Torch_matmul_0_forward", "Functional_relu_0_forward", "Functional_relu_0_backward" }));
    // No api_stack_npu_dump/ folder next to the .pkl: a statistics dump.
    EXPECT_EQ(dump->header.task, "statistics");
    EXPECT_FALSE(dump->header.dumpDataDir.has_value());
    EXPECT_EQ(dump->tensorDir, kStackPkl.parent_path() / "api_stack_npu_dump");

    const JsonValue root = dump->document->root();
    EXPECT_EQ(
        keysOf(root), (std::vector<std::string> { "task", "level", "framework", "dump_data_dir", "stack", "data" }));
    EXPECT_EQ(member(root, "dump_data_dir"), "null");
    const JsonValue stack = *root.find("stack");
    EXPECT_EQ(keysOf(stack),
        (std::vector<std::string> {
            "Torch_matmul_0_forward", "Functional_relu_0_forward", "Functional_relu_0_backward" }));
    const JsonValue matmul = *stack.find("Torch_matmul_0_forward");
    ASSERT_EQ(matmul.size(), 3u);
    EXPECT_EQ(matmul.at(0).asString(), "File /home/user/train.py, line 61, in forward, \n y = torch.matmul(a, b)");
    EXPECT_EQ(matmul.at(1).asString(),
        "File /usr/lib/python3.8/site-packages/torch/nn/modules/module.py, line 1194, "
        "in _call_impl, \n return forward_call(*input, **kwargs)");
    EXPECT_EQ(matmul.at(2).asString(), "File <stdin>, line 3, in <module>, \n None");
    // Frames already written as text are kept verbatim; ptdbg's [""] (stack unavailable) is no frame.
    EXPECT_EQ(toText(*stack.find("Functional_relu_0_forward")),
        "[\"File /home/user/train.py, line 62, in forward, \n y = F.relu(y)\"]");
    EXPECT_EQ(toText(*stack.find("Functional_relu_0_backward")), "[]");

    // Statistics dumps carry no data_name at all.
    for (const Entry& e : dump->entries)
        EXPECT_EQ(toText(e.value).find("data_name"), std::string::npos) << e.key;
    const Entry* relu = dump->find("Functional_relu_0_backward");
    ASSERT_NE(relu, nullptr);
    EXPECT_EQ(toText(relu->value),
        "{input:[{type:\"torch.Tensor\",dtype:\"torch.float32\",shape:[2,2],Max:1d,Min:-1d,Mean:0d}],"
        "output:[{type:\"torch.Tensor\",dtype:\"torch.float32\",shape:[2,2],Max:1d,Min:0d,Mean:0.25d}]}");
}

TEST(LegacyPkl, ScalarsNestedIndexesKwargsAndMd5)
{
    const auto dump = readOk(kScalarPkl);
    ASSERT_TRUE(dump);
    EXPECT_TRUE(dump->diagnostics.empty()) << dump->diagnostics.front().format();
    EXPECT_EQ(entryKeys(*dump),
        (std::vector<std::string> { "Torch_cat_0_forward", "Tensor___getitem___0_forward",
            "Functional_dropout_0_forward", "NPU_npu_fusion_attention_0_forward" }));
    EXPECT_EQ(dump->entries[2].line, 9u) << "the blank line 8 still counts";

    // input.0.0 / input.0.1: the first argument is a list of two tensors.
    const Entry* cat = dump->find("Torch_cat_0_forward");
    const JsonValue catArgs = field(cat, "input_args");
    ASSERT_EQ(catArgs.size(), 2u);
    ASSERT_TRUE(catArgs.at(0).isArray());
    ASSERT_EQ(catArgs.at(0).size(), 2u);
    EXPECT_EQ(member(catArgs.at(0).at(1), "Max"), "4d");
    EXPECT_EQ(toText(catArgs.at(1)), "{type:\"int\",value:0}");

    // Missing index 1 (an argument ptdbg did not dump) is null; "Nan" / [] stats are "not computed" = null.
    const Entry* getitem = dump->find("Tensor___getitem___0_forward");
    EXPECT_EQ(toText(field(getitem, "input_args")),
        "[{type:\"torch.Tensor\",dtype:\"torch.int64\",shape:[3],Max:7,Min:1,Mean:4d,Norm:null},null,"
        "{type:\"bool\",value:true}]");
    EXPECT_EQ(toText(field(getitem, "output")),
        "[{type:\"torch.Tensor\",dtype:\"torch.bool\",shape:[0],Max:null,Min:null,Mean:null,Norm:null}]");

    // Real NaN / -Infinity statistics stay numbers; a keyword index goes to input_kwargs; md5 rows have no stats.
    const Entry* dropout = dump->find("Functional_dropout_0_forward");
    const JsonValue in0 = field(dropout, "input_args").at(0);
    EXPECT_TRUE(std::isnan(in0.find("Max")->asDouble()));
    EXPECT_EQ(in0.find("Min")->asDouble(), -HUGE_VAL);
    EXPECT_EQ(toText(field(dropout, "input_kwargs")), "{p:{type:\"float\",value:0.10000000000000001d}}");
    EXPECT_EQ(toText(field(dropout, "output")),
        "[{type:\"torch.Tensor\",dtype:\"torch.float16\",shape:[2],md5:\"a1b2c3d4\"}]");

    const Entry* fa = dump->find("NPU_npu_fusion_attention_0_forward");
    const JsonValue out = field(fa, "output");
    ASSERT_EQ(out.size(), 4u);
    EXPECT_TRUE(out.at(1).isNull());
    EXPECT_TRUE(out.at(2).isNull());
    EXPECT_EQ(toText(out.at(3)), "{type:\"int\",value:5}");
    EXPECT_EQ(toText(field(fa, "input_args")), "[]");
}

TEST(LegacyPkl, AtenNamesWithDotsAndCrlf)
{
    TempDir dir;
    const auto path = dir.write("aten.pkl",
        "[\"Aten__native_batch_norm_legit_functional.default_0_forward_input.0\", 1, [], \"torch.float16\", [2], "
        "[1.0, 0.0, 0.5]]\r\n"
        "[\"Aten__native_batch_norm_legit_functional.default_0_forward_output.4\", 1, [], \"torch.float32\", [2], "
        "[2.0, 1.0, 1.5]]\r\n");
    const auto dump = readOk(path);
    ASSERT_TRUE(dump);
    EXPECT_EQ(
        entryKeys(*dump), (std::vector<std::string> { "Aten__native_batch_norm_legit_functional.default_0_forward" }));
    EXPECT_EQ(field(&dump->entries[0], "output").size(), 5u);
    EXPECT_FALSE(hasErrors(dump->diagnostics));
}

TEST(LegacyPkl, MalformedLinesAreReportedWithExactPositionsAndSkipped)
{
    const std::vector<std::string> lines {
        /* 1 */ R"(["Functional_relu_0_forward_input.0", 1, [], "torch.float32", [2], [1.0, 0.0, 0.5]])",
        /* 2 */ R"(this is not json)",
        /* 3 */ R"({"name": "x"})",
        /* 4 */ R"(["Functional_relu_0_forward_output", 1, [], "torch.float32", "[2]x", [1.0, 0.0, 0.5]])",
        /* 5 */ "",
        /* 6 */ R"(["Functional_relu_0_forward_output", 1, [], "torch.float32", [2], [1.0, 0.0, 0.5]])",
        /* 7 */ R"(["Functional_relu_0_forward_output", 1, [], "torch.float32", [2], [9.0, 0.0, 0.5]])",
        /* 8 */ R"(["relu_input.0", 1, [], "torch.float32", [2], [1.0, 0.0, 0.5]])",
        /* 9 */ R"(["Functional_relu_0_forward_input.0.1", 1, [], "torch.float32", [2], [1.0, 0.0, 0.5]])",
        /* 10 */ R"(["Torch_add_0_forward_input.0", 1, [], "torch.float32", [2], [1.0, 0.0, 0.5])",
        /* 11 */ R"(["Torch_add_0_forward_input.1", "one", [], "torch.float32", [2], [1.0, 0.0, 0.5]])",
        /* 12 */ R"(["Torch_add_0_forward_input.1", 1, [], "torch.float32", [2], [1.0, 0.0, 0.5]])",
        /* 13 */ R"(["Torch_add_0_forward_stack_info", [["a.py", "1", "f"]]])",
        /* 14 */ R"([1, 2])",
        /* 15 */ R"(["Torch_add_0_forward_input.2", 1, [], "torch.float32", [2], [{"a": 1}, 0, 0]])",
        /* 16 */ R"(["Torch_add_0_forward_input.3", 1, [], "torch.float32", [2]])",
    };
    std::string text;
    for (const auto& l : lines)
        text += l + "\n";
    TempDir dir;
    const auto path = dir.write("bad.pkl", text);
    const auto dump = readOk(path);
    ASSERT_TRUE(dump);

    struct Expected
    {
        std::string id;
        Severity severity;
        std::uint32_t line;
        std::uint32_t column;
    };
    auto col = [&](std::size_t line, std::string_view needle) {
        const auto at = lines[line - 1].find(needle);
        EXPECT_NE(at, std::string::npos) << needle;
        return static_cast<std::uint32_t>(at + 1);
    };
    const std::vector<Expected> expected {
        { "pkl.syntax", Severity::Error, 2, 1 },
        { "pkl.row", Severity::Error, 3, 1 },
        { "pkl.row", Severity::Error, 4, col(4, "\"[2]x\"") },
        { "pkl.duplicate", Severity::Warning, 7, 2 },
        { "pkl.name", Severity::Error, 8, 2 },
        { "pkl.conflict", Severity::Error, 9, 2 },
        { "pkl.syntax", Severity::Error, 10, static_cast<std::uint32_t>(lines[9].size() + 1) },
        { "pkl.row", Severity::Error, 11, col(11, "\"one\"") },
        { "pkl.row", Severity::Error, 13, col(13, "[\"a.py\"") },
        { "pkl.row", Severity::Error, 14, 2 },
        { "pkl.row", Severity::Error, 15, col(15, "{\"a\"") },
        { "pkl.row", Severity::Error, 16, 1 },
    };
    ASSERT_EQ(dump->diagnostics.size(), expected.size()) << ::testing::PrintToString(idsOf(dump->diagnostics));
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const Diagnostic& d = dump->diagnostics[i];
        SCOPED_TRACE(d.format());
        EXPECT_EQ(d.id, expected[i].id);
        EXPECT_EQ(d.severity, expected[i].severity);
        EXPECT_EQ(d.location.file, path.string());
        EXPECT_EQ(d.location.line, expected[i].line);
        EXPECT_EQ(d.location.column, expected[i].column);
        ASSERT_TRUE(d.location.offset.has_value());
        std::uint64_t lineStart = 0;
        for (std::uint32_t l = 1; l < expected[i].line; ++l)
            lineStart += lines[l - 1].size() + 1;
        EXPECT_EQ(*d.location.offset, lineStart + expected[i].column - 1);
    }

    // Every good row is kept; the duplicate keeps the first row's values.
    EXPECT_EQ(entryKeys(*dump), (std::vector<std::string> { "Functional_relu_0_forward", "Torch_add_0_forward" }));
    EXPECT_EQ(member(field(dump->find("Functional_relu_0_forward"), "output").at(0), "Max"), "1d");
    EXPECT_EQ(toText(field(dump->find("Torch_add_0_forward"), "input_args").at(0)), "null");
    EXPECT_EQ(field(dump->find("Torch_add_0_forward"), "input_args").size(), 2u);
    EXPECT_FALSE(dump->document->root().find("stack").has_value());
}

TEST(LegacyPkl, EmptyUnreadableAndForeignFilesAreErrors)
{
    TempDir dir;
    auto expectError = [](const std::filesystem::path& path, const std::string& id) {
        const auto result = readLegacyPkl(path);
        ASSERT_FALSE(result.ok()) << path;
        EXPECT_EQ(result.error().id, id) << result.error().format();
        EXPECT_EQ(result.error().location.file, path.string());
    };
    expectError(dir.write("empty.pkl", ""), "pkl.empty");
    expectError(dir.write("blank.pkl", "\n  \r\n\n"), "pkl.empty");
    expectError(dir.path() / "missing.pkl", "io.read");
    expectError(dir.write("pickle.pkl", std::string("\x80\x04\x95\x10\x00\x00", 6)), "pkl.format");
    expectError(dir.write("text.pkl", "hello\nworld\n"), "pkl.format");
    const auto folder = dir.path() / "folder.pkl";
    std::filesystem::create_directory(folder);
    expectError(folder, "io.read");

    const auto garbage = readLegacyPkl(dir.write("garbage.pkl", "\n{\"a\": 1}\n"));
    ASSERT_FALSE(garbage.ok());
    EXPECT_EQ(garbage.error().location.line, 2u) << "points at the first bad line";
}

TEST(LegacyPkl, CutLastRowDropsOnlyItsApi)
{
    const std::string text = readAll(kTensorPkl);
    // Cut inside line 12, the second row of Functional_conv2d_0_backward.
    const std::size_t line12 = [&] {
        std::size_t pos = 0;
        for (int i = 1; i < 12; ++i)
            pos = text.find('\n', pos) + 1;
        return pos;
    }();
    TempDir dir;
    const auto path = dir.write("npu_dump.pkl", text.substr(0, line12 + 50));
    const auto dump = readOk(path);
    ASSERT_TRUE(dump);
    EXPECT_TRUE(dump->truncated);
    EXPECT_EQ(entryKeys(*dump),
        (std::vector<std::string> {
            "Functional_conv2d_0_forward", "Functional_batch_norm_0_forward", "Tensor___add___1_forward" }));
    ASSERT_EQ(dump->diagnostics.size(), 1u);
    const Diagnostic& d = dump->diagnostics.front();
    EXPECT_EQ(d.id, "pkl.truncated");
    EXPECT_EQ(d.severity, Severity::Error);
    EXPECT_EQ(d.location.line, 12u);
    EXPECT_EQ(d.location.column, 51u);
    EXPECT_NE(d.message.find("Functional_conv2d_0_backward"), std::string::npos) << d.message;
    // The document says it is incomplete, as a salvaged dump.json does.
    EXPECT_TRUE(dump->document->root().isTruncated());
    EXPECT_TRUE(dump->document->root().find("data")->isTruncated());
    EXPECT_FALSE(dump->entries.back().value.isTruncated());

    ReadOptions strict;
    strict.salvageTruncated = false;
    const auto refused = readLegacyPkl(path, strict);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().id, "pkl.truncated");

    // A last row without its newline is complete JSON, but ptdbg ends every row with one: the file was cut right
    // after that row (issue 25: the rows after it would be lost without a word). Salvaged, every row is kept.
    const auto whole = readOk(dir.write("whole.pkl", text.substr(0, text.size() - 1)));
    ASSERT_TRUE(whole);
    EXPECT_TRUE(whole->truncated);
    EXPECT_EQ(whole->entries.size(), 4u);
    ASSERT_FALSE(whole->diagnostics.empty());
    EXPECT_EQ(whole->diagnostics.back().id, "pkl.truncated");
    EXPECT_NE(whole->diagnostics.back().message.find("without the line break"), std::string::npos);
}

TEST(LegacyPkl, TruncatedAtEveryOffsetKeepsEveryCompleteApi)
{
    for (const auto& sample : { kTensorPkl, kStackPkl, kScalarPkl }) {
        SCOPED_TRACE(sample.string());
        const std::string text = readAll(sample);
        const auto full = readOk(sample);
        ASSERT_TRUE(full);
        ASSERT_FALSE(full->truncated);

        // Where each API's (and each stack's) last row ends in the full file.
        std::map<std::string, std::size_t> lastRowEnd;
        std::map<std::string, std::string> stackKeyOfRow;
        for (std::size_t pos = 0; pos < text.size();) {
            const std::size_t nl = std::min(text.find('\n', pos), text.size());
            const std::string line = text.substr(pos, nl - pos);
            for (const Entry& e : full->entries) {
                if (line.rfind("[\"" + std::string(e.key) + "_", 0) == 0)
                    lastRowEnd[std::string(e.key)] = nl;
            }
            pos = nl + 1;
        }
        const auto fullStack = full->document->root().find("stack");

        TempDir dir;
        // Same stem as the sample, with the sample's .npy folder beside it, so data_name is comparable.
        const auto prefixPath = dir.path() / sample.filename();
        const auto folder = sample.parent_path() / sample.stem();
        if (std::filesystem::is_directory(folder))
            std::filesystem::create_directory_symlink(folder, dir.path() / sample.stem());

        for (std::size_t cut = 0; cut <= text.size(); ++cut) {
            SCOPED_TRACE("cut at byte " + std::to_string(cut));
            dir.write(sample.filename().string(), std::string_view(text).substr(0, cut));
            const auto result = readLegacyPkl(prefixPath);
            if (cut == 0) {
                EXPECT_FALSE(result.ok());
                continue;
            }
            ASSERT_TRUE(result.ok()) << result.error().format();
            const DumpFile& part = **result;
            // A cut just before a line break leaves a complete last row without its break: ptdbg ends every row
            // with one, so that is a cut too (issue 25), only a cut right after a break is not.
            const bool atLineEnd = text[cut - 1] == '\n' || cut == text.size();
            const std::size_t previousNewline = text.rfind('\n', cut - 1);
            const std::size_t lineStart = previousNewline == std::string::npos ? 0 : previousNewline + 1;
            const bool blankSoFar = text.substr(lineStart, cut - lineStart).find_first_not_of(" ") == std::string::npos;
            EXPECT_EQ(part.truncated, !atLineEnd && !blankSoFar);
            EXPECT_EQ(hasErrors(part.diagnostics), part.truncated);
            EXPECT_EQ(part.header.task, full->header.task);
            EXPECT_LE(part.entries.size(), full->entries.size());
            for (const Entry& e : full->entries) {
                if (lastRowEnd[std::string(e.key)] > cut)
                    continue;
                const Entry* kept = part.find(e.key);
                ASSERT_NE(kept, nullptr) << e.key;
                EXPECT_EQ(toText(kept->value), toText(e.value)) << e.key;
                EXPECT_EQ(kept->line, e.line);
            }
            // Entries are the file's APIs in order, whatever survived.
            std::size_t next = 0;
            for (const Entry& e : part.entries) {
                while (next < full->entries.size() && full->entries[next].key != e.key)
                    ++next;
                ASSERT_LT(next, full->entries.size()) << e.key << " is not an API of the full file, or out of order";
            }
            if (fullStack) {
                const auto partStack = part.document->root().find("stack");
                for (std::uint32_t i = 0; i < fullStack->size(); ++i) {
                    const std::string key = std::string(fullStack->keyAt(i)) + "_stack_info\"";
                    const std::size_t rowAt = text.find("[\"" + key);
                    const std::size_t rowEnd = std::min(text.find('\n', rowAt), text.size());
                    if (rowEnd > cut)
                        continue;
                    ASSERT_TRUE(partStack.has_value());
                    const auto frames = partStack->find(fullStack->keyAt(i));
                    ASSERT_TRUE(frames.has_value()) << key;
                    EXPECT_EQ(toText(*frames), toText(fullStack->at(i)));
                }
            }
        }
    }
}

TEST(LegacyPkl, CorruptedBytesNeverCrash)
{
    const std::string text = readAll(kScalarPkl) + readAll(kStackPkl);
    TempDir dir;
    const auto path = dir.path() / "fuzz.pkl";
    std::size_t readable = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        for (const char c : { '"', ']', '[', '\n', '.', '9' }) {
            if (text[i] == c)
                continue;
            std::string mutated = text;
            mutated[i] = c;
            dir.write("fuzz.pkl", mutated);
            const auto result = readLegacyPkl(path);
            if (!result.ok())
                continue;
            ++readable;
            const DumpFile& dump = **result;
            // Whatever was accepted must still be a well-formed dump.json-shaped document.
            for (const Entry& e : dump.entries) {
                ASSERT_TRUE(e.value.isObject());
                EXPECT_EQ(dump.find(e.key), &e);
                EXPECT_GE(e.line, 1u);
            }
        }
    }
    EXPECT_GT(readable, text.size()) << "most single-byte changes leave a readable dump";
}

// ---- ptdbg_ascend 6.0: dot names, 4 statistics, md5, ptdbg_dump_v6.0/step{S}/rank{R}/ (docs/ptdbg-compare.md) ----

TEST(LegacyPkl, Ptdbg60DotNamesBecomeMsprobeKeys)
{
    const auto pair = probescope::testing::fixturesDir() / "legacy_ptdbg";
    const auto pkl = pair / "all_mode/npu/ptdbg_dump_v6.0/step0/rank0/dump.pkl";
    PROBESCOPE_REQUIRE_FIXTURE(pkl);
    const auto dump = readOk(pkl);
    ASSERT_TRUE(dump);
    EXPECT_TRUE(dump->diagnostics.empty()) << dump->diagnostics.front().format();
    ASSERT_EQ(dump->entries.size(), 21u);
    EXPECT_EQ(dump->entries.front().key, "Functional.conv2d.0.forward");
    EXPECT_EQ(dump->entries.back().key, "Functional.conv2d.0.backward");
    // msprobe's own name kinds, not the underscore "legacy" kind.
    EXPECT_EQ(dump->entries.front().name.kind, parseEntryName("Functional.conv2d.0.forward").kind);
    EXPECT_EQ(dump->header.task, "tensor");
    const Entry* gelu = dump->find("Functional.gelu.0.forward");
    ASSERT_NE(gelu, nullptr);
    // A lone output has no index in 6.0: it is element 0, with the .npy named like the row.
    EXPECT_EQ(toText(gelu->value),
        "{input_args:[{type:\"torch.Tensor\",dtype:\"torch.float32\",shape:[2,8],Max:0.20135369896888733d,"
        "Min:-0.42605584859848022d,Mean:-0.09273742139339447d,Norm:0.88113951683044434d,"
        "data_name:\"Functional.gelu.0.forward.input.0.npy\"}],input_kwargs:{},"
        "output:[{type:\"torch.Tensor\",dtype:\"torch.float32\",shape:[2,8],Max:1.2385420799255371d,"
        "Min:-1.3367526531219482d,Mean:0.004778686910867691d,Norm:2.5224344730377197d,"
        "data_name:\"Functional.gelu.0.forward.output.npy\"}]}");

    // md5 mode: the CRC32 is kept, no statistics, no .npy folder.
    const auto md5 = readOk(pair / "md5_mode/npu/ptdbg_dump_v6.0/step0/rank0/dump.pkl");
    ASSERT_TRUE(md5);
    EXPECT_EQ(md5->header.task, "statistics");
    const Entry* md5Gelu = md5->find("Functional.gelu.0.forward");
    ASSERT_NE(md5Gelu, nullptr);
    EXPECT_NE(toText(md5Gelu->value).find("md5:\"7d7469dc\""), std::string::npos) << toText(md5Gelu->value);
    EXPECT_EQ(toText(md5Gelu->value).find("Max"), std::string::npos);
}

TEST(LegacyPkl, Ptdbg60StackRowsAfterTheirApi)
{
    TempDir dir;
    const auto pkl = dir.write("api_stack_dump.pkl",
        "[\"Functional.relu.0.forward.input.0\", 0, [], \"torch.float32\", [2], [1.0, 0.0, 0.5, 1.0]]\n"
        "[\"Functional.relu.0.forward.output\", 0, [], \"torch.float32\", [2], [1.0, 0.0, 0.5, 1.0]]\n"
        "[\"Functional.relu.0.forward.stack_info\", [[\"/x/a.py\", \"3\", \"f\", \"y = relu(x)\"]]]\n");
    const auto dump = readOk(pkl);
    ASSERT_TRUE(dump);
    EXPECT_TRUE(dump->diagnostics.empty()) << dump->diagnostics.front().format();
    EXPECT_EQ(entryKeys(*dump), (std::vector<std::string> { "Functional.relu.0.forward" }));
    const JsonValue stack = *dump->document->root().find("stack");
    EXPECT_EQ(toText(stack), "{Functional.relu.0.forward:[\"File /x/a.py, line 3, in f, \n y = relu(x)\"]}");
}

// Issue 25: index paths ("input.9999.9999") turned 20 KB of pkl into millions of argument slots and gigabytes.
// The slots of a file are capped (65,536 plus one per byte): the row that would pass the cap is an error naming
// file and line, and the memory stays proportional to the file.
TEST(LegacyPkl, IndexPathsCannotAmplifyAFileBeyondItsSize)
{
    std::string text;
    int lines = 0;
    for (int i = 0; i < 200; ++i) {
        text += "[\"Torch_add_" + std::to_string(i) + "_forward_input.9999.9999\", 1, [], \"torch.float32\", [2], [1.0, 0.0, 0.5]]\n";
        ++lines;
    }
    ASSERT_LT(text.size(), 20000u);
    TempDir dir;
    const auto file = dir.write("amplified.pkl", text);
    auto dump = readLegacyPkl(file);
    ASSERT_TRUE(dump.ok()) << dump.error().format();
    const Diagnostic* cap = nullptr;
    std::size_t capped = 0;
    for (const Diagnostic& d : (*dump)->diagnostics) {
        if (d.id == "pkl.amplification") {
            cap = cap ? cap : &d;
            ++capped;
        }
    }
    ASSERT_NE(cap, nullptr);
    EXPECT_EQ(cap->severity, Severity::Error);
    EXPECT_EQ(cap->location.file, file.string());
    // Each row asks for 20,000 slots: the budget (65,536 + the file's bytes) holds the first few.
    const std::size_t fit = (65536 + text.size()) / 20000;
    EXPECT_EQ(cap->location.line, fit + 1);
    EXPECT_GT(cap->location.column, 0u);
    EXPECT_NE(cap->message.find("Torch_add_" + std::to_string(fit) + "_forward_input.9999.9999"), std::string::npos)
        << cap->message;
    EXPECT_EQ(capped, std::min<std::size_t>(200 - fit, 200));
    EXPECT_EQ((*dump)->entries.size(), fit);
    // The document is what those rows describe (~20,000 nulls each), not gigabytes.
    EXPECT_LT((*dump)->document->nodeCount(), (fit + 1) * 20100);
    (void)lines;

    // An ordinary list argument of many tensors is untouched by the cap.
    std::string many;
    for (int i = 0; i < 3000; ++i)
        many += "[\"Torch_cat_0_forward_input.0." + std::to_string(i) + "\", 1, [], \"torch.float32\", [2], [1.0, 0.0, 0.5]]\n";
    auto cat = readLegacyPkl(dir.write("many.pkl", many));
    ASSERT_TRUE(cat.ok());
    for (const Diagnostic& d : (*cat)->diagnostics)
        EXPECT_NE(d.id, "pkl.amplification");
}
