// SPDX-License-Identifier: Apache-2.0
// core/dump/dumpwriter: Python's json.dump layout (goldens made with Python 3.11's json module) and
// the crash-safety properties: every prefix of dump.json is salvageable, construct.json / stack.json
// are valid after every write, finish() gives msprobe's exact files.
#include "collecttest.h"

#include "core/dump/dumpfile.h"
#include "core/dump/dumpwriter.h"
#include "core/dump/jsondocument.h"
#include "core/dump/rankdump.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

namespace fs = std::filesystem;
using namespace probescope;
using namespace probescope::dump;
using probescope::testing::readAll;
using probescope::testing::TempDir;

namespace {

std::string pyFloat(double v)
{
    std::string s;
    appendPyFloat(s, v);
    return s;
}

/// The value of "Aten.relu.0.forward" in the golden below, written at depth 2.
std::string reluEntry()
{
    std::string text;
    PyJsonWriter j(text, 2);
    j.beginObject();
    j.key("input_args");
    j.beginArray();
    j.beginObject();
    j.key("type");
    j.string("torch.Tensor");
    j.key("dtype");
    j.string("torch.float32");
    j.key("shape");
    j.beginArray();
    j.integer(2);
    j.integer(3);
    j.endArray();
    j.key("Max");
    j.number(1.5);
    j.key("Min");
    j.number(-0.25);
    j.key("Mean");
    j.number(0.1);
    j.key("Norm");
    j.number(2.0);
    j.key("requires_grad");
    j.boolean(false);
    j.endObject();
    j.endArray();
    j.key("input_kwargs");
    j.beginObject();
    j.endObject();
    j.key("is_recompute");
    j.boolean(false);
    j.key("output");
    j.beginArray();
    j.beginObject();
    j.key("type");
    j.string("int");
    j.key("value");
    j.integer(3);
    j.endObject();
    j.null();
    j.endArray();
    j.endObject();
    return text;
}

std::string sumEntry()
{
    std::string text;
    PyJsonWriter j(text, 2);
    j.beginObject();
    j.key("input_args");
    j.beginArray();
    j.endArray();
    j.key("output");
    j.beginArray();
    j.endArray();
    j.endObject();
    return text;
}

// json.dump({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None,
//            "data": {"Aten.relu.0.forward": {...}, "Aten.sum.0.forward": {...}}}, f, indent=1)
const char* const kGoldenDump =
    "{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n"
    " \"data\": {\n  \"Aten.relu.0.forward\": {\n   \"input_args\": [\n    {\n     \"type\": \"torch.Tensor\",\n"
    "     \"dtype\": \"torch.float32\",\n     \"shape\": [\n      2,\n      3\n     ],\n     \"Max\": 1.5,\n"
    "     \"Min\": -0.25,\n     \"Mean\": 0.1,\n     \"Norm\": 2.0,\n     \"requires_grad\": false\n    }\n   ],\n"
    "   \"input_kwargs\": {},\n   \"is_recompute\": false,\n   \"output\": [\n    {\n     \"type\": \"int\",\n"
    "     \"value\": 3\n    },\n    null\n   ]\n  },\n  \"Aten.sum.0.forward\": {\n   \"input_args\": [],\n"
    "   \"output\": []\n  }\n }\n}";

DumpWriterHeader statisticsHeader()
{
    DumpWriterHeader h;
    h.task = "statistics";
    h.level = "L1";
    return h;
}

} // namespace

TEST(PyJson, FloatsAsPythonRepr)
{
    const std::pair<double, const char*> cases[] = {
        { 0.0, "0.0" },
        { -0.0, "-0.0" },
        { 1.0, "1.0" },
        { 0.1, "0.1" },
        { 1e-05, "1e-05" },
        { 0.0001, "0.0001" },
        { 0.00012345, "0.00012345" },
        { 1e16, "1e+16" },
        { 1e15, "1000000000000000.0" },
        { 123456789012345680.0, "1.2345678901234568e+17" },
        { 3.029174327850342, "3.029174327850342" },
        { 5.684341886080801e-13, "5.684341886080801e-13" },
        { 1.5e300, "1.5e+300" },
        { -2.5e-308, "-2.5e-308" },
        { 5e-324, "5e-324" },
        { 1.7976931348623157e308, "1.7976931348623157e+308" },
        { 100.0, "100.0" },
        { 1234.5, "1234.5" },
        { -0.07415903359651566, "-0.07415903359651566" },
        { 9007199254740992.0, "9007199254740992.0" },
        { 0.30000000000000004, "0.30000000000000004" },
        { std::numeric_limits<double>::quiet_NaN(), "NaN" },
        { std::numeric_limits<double>::infinity(), "Infinity" },
        { -std::numeric_limits<double>::infinity(), "-Infinity" },
    };
    for (const auto& [value, text] : cases)
        EXPECT_EQ(pyFloat(value), text) << text;
}

TEST(PyJson, StringsAsEnsureAscii)
{
    std::string s;
    appendPyString(s, "a\"b\\c\n\t\x01\x1f\x7f\xc3\xa9\xf0\x9f\x98\x80/");
    EXPECT_EQ(s, R"("a\"b\\c\n\t\u0001\u001f\u007f\u00e9\ud83d\ude00/")");
    s.clear();
    appendPyString(s, "bad \xff byte, cut \xe2\x82");
    EXPECT_EQ(s, R"("bad \ufffd byte, cut \ufffd\ufffd")");
}

TEST(PyJson, LayoutOfIndentOne)
{
    std::string text;
    PyJsonWriter j(text);
    j.beginObject();
    j.key("a");
    j.beginArray();
    j.integer(1);
    j.number(2.5);
    j.beginObject();
    j.key("b");
    j.null();
    j.key("c");
    j.beginArray();
    j.endArray();
    j.endObject();
    j.beginArray();
    j.endArray();
    j.endArray();
    j.key("d");
    j.beginObject();
    j.endObject();
    j.key("e");
    j.string("x");
    j.key("f");
    j.boolean(true);
    j.key("g");
    j.number(std::numeric_limits<double>::quiet_NaN());
    j.key("h");
    j.number(-std::numeric_limits<double>::infinity());
    j.endObject();
    EXPECT_EQ(text, "{\n \"a\": [\n  1,\n  2.5,\n  {\n   \"b\": null,\n   \"c\": []\n  },\n  []\n ],\n \"d\": {},\n"
                    " \"e\": \"x\",\n \"f\": true,\n \"g\": NaN,\n \"h\": -Infinity\n}");
}

TEST(DumpWriter, FilesAreExactlyWhatPythonWrites)
{
    TempDir dir;
    auto w = DumpWriter::create(dir.path() / "step0" / "rank", statisticsHeader());
    ASSERT_TRUE(w) << w.error().format();
    ASSERT_FALSE((*w)->addEntry("Aten.relu.0.forward", reluEntry()));
    ASSERT_FALSE((*w)->addEntry("Aten.sum.0.forward", sumEntry()));
    ASSERT_FALSE((*w)->addConstruct("M.a.forward.0", ""));
    ASSERT_FALSE((*w)->addConstruct("Aten.x.0.forward", "M.a.forward.0"));
    ASSERT_FALSE((*w)->addStack("k", { "File a.cpp, line 3, in f, \n code", "File b" }));
    ASSERT_FALSE((*w)->finish());
    const fs::path rank = dir.path() / "step0" / "rank";
    EXPECT_EQ(readAll(rank / "dump.json"), kGoldenDump);
    EXPECT_EQ(readAll(rank / "construct.json"), "{\n \"M.a.forward.0\": null,\n \"Aten.x.0.forward\": \"M.a.forward.0\"\n}");
    EXPECT_EQ(readAll(rank / "stack.json"), "{\n \"k\": [\n  \"File a.cpp, line 3, in f, \\n code\",\n  \"File b\"\n ]\n}");
    EXPECT_FALSE(fs::exists(rank / ".construct.json.tmp"));
}

TEST(DumpWriter, EmptyDumpIsValid)
{
    TempDir dir;
    DumpWriterHeader h;
    h.task = "tensor";
    h.level = "mix";
    h.dumpDataDir = "d/dump_tensor_data";
    auto w = DumpWriter::create(dir.path(), h);
    ASSERT_TRUE(w);
    ASSERT_FALSE((*w)->finish());
    EXPECT_EQ(readAll(dir.path() / "dump.json"), "{\n \"task\": \"tensor\",\n \"level\": \"mix\",\n \"framework\": "
                                                 "\"pytorch\",\n \"dump_data_dir\": \"d/dump_tensor_data\",\n \"data\": {}\n}");
    EXPECT_EQ(readAll(dir.path() / "construct.json"), "{}");
    EXPECT_EQ(readAll(dir.path() / "stack.json"), "{}");
}

TEST(DumpWriter, EveryPrefixOfDumpJsonIsSalvageable)
{
    TempDir dir;
    auto w = DumpWriter::create(dir.path(), statisticsHeader());
    ASSERT_TRUE(w);
    std::vector<std::size_t> entryEnds; // file size after each complete entry
    for (int i = 0; i < 4; ++i) {
        ASSERT_FALSE((*w)->addEntry("Aten.relu." + std::to_string(i) + ".forward", reluEntry()));
        entryEnds.push_back(static_cast<std::size_t>(fs::file_size(dir.path() / "dump.json")));
        // A process killed now leaves this file: ProbeScope reads every entry written so far.
        auto dump = readDumpJson(dir.path() / "dump.json");
        ASSERT_TRUE(dump) << dump.error().format();
        EXPECT_EQ((*dump)->entries.size(), static_cast<std::size_t>(i + 1));
        EXPECT_TRUE((*dump)->truncated);
    }
    ASSERT_FALSE((*w)->finish());
    const std::string full = readAll(dir.path() / "dump.json");

    // A kill in the middle of any write leaves some prefix of the final file.
    const std::size_t headerEnd = full.find("\"data\": {") + 9;
    for (std::size_t cut = headerEnd; cut <= full.size(); ++cut) {
        auto dump = parseDumpJson(std::string_view(full).substr(0, cut), "dump.json");
        ASSERT_TRUE(dump) << "cut at " << cut << ": " << dump.error().format();
        std::size_t complete = 0;
        for (const std::size_t end : entryEnds)
            complete += end <= cut ? 1 : 0;
        EXPECT_EQ((*dump)->entries.size(), complete) << "cut at " << cut;
        for (std::size_t e = 0; e < (*dump)->entries.size(); ++e)
            EXPECT_EQ((*dump)->entries[e].key, "Aten.relu." + std::to_string(e) + ".forward");
    }
}

TEST(DumpWriter, ConstructAndStackStayValidBetweenWrites)
{
    TempDir dir;
    auto w = DumpWriter::create(dir.path(), statisticsHeader());
    ASSERT_TRUE(w);
    for (int i = 0; i < 5; ++i) {
        const std::string key = "Module.m" + std::to_string(i) + ".Linear.forward.0";
        ASSERT_FALSE((*w)->addConstruct(key, i == 0 ? "" : "Module.m0.Linear.forward.0"));
        ASSERT_FALSE((*w)->addStack(key, { "File x.cpp, line " + std::to_string(i) + ", in f, \n " + key }));
        for (const char* file : { "construct.json", "stack.json" }) {
            const std::string text = readAll(dir.path() / file);
            const auto parsed = JsonDocument::parse(text, file);
            ASSERT_TRUE(parsed.document) << file << " after member " << i << ":\n" << text;
            EXPECT_EQ(parsed.document->root().size(), static_cast<std::uint32_t>(i + 1));
        }
        auto construct = readConstructJson(dir.path() / "construct.json");
        ASSERT_TRUE(construct);
        EXPECT_EQ(construct->links.size(), static_cast<std::size_t>(i + 1));
    }
    ASSERT_FALSE((*w)->finish());
    const std::string construct = readAll(dir.path() / "construct.json");
    EXPECT_TRUE(construct.ends_with("\"Module.m0.Linear.forward.0\"\n}"));
}

TEST(DumpWriter, ResumeAfterFinishContinuesTheSameFiles)
{
    TempDir dir;
    const fs::path one = dir.path() / "one";
    const fs::path two = dir.path() / "two";
    {
        auto w = DumpWriter::create(one, statisticsHeader());
        ASSERT_TRUE(w);
        ASSERT_FALSE((*w)->addEntry("Aten.relu.0.forward", reluEntry()));
        ASSERT_FALSE((*w)->addConstruct("a", ""));
        ASSERT_FALSE((*w)->addEntry("Aten.sum.0.forward", sumEntry()));
        ASSERT_FALSE((*w)->addConstruct("b", "a"));
        ASSERT_FALSE((*w)->finish());
    }
    {
        auto w = DumpWriter::create(two, statisticsHeader());
        ASSERT_TRUE(w);
        ASSERT_FALSE((*w)->addEntry("Aten.relu.0.forward", reluEntry()));
        ASSERT_FALSE((*w)->addConstruct("a", ""));
        ASSERT_FALSE((*w)->finish()); // stop()
        EXPECT_TRUE(JsonDocument::parse(readAll(two / "dump.json"), "dump.json").document);
        ASSERT_FALSE((*w)->resume()); // start() again in the same step
        ASSERT_FALSE((*w)->addEntry("Aten.sum.0.forward", sumEntry()));
        ASSERT_FALSE((*w)->addConstruct("b", "a"));
        ASSERT_FALSE((*w)->finish());
    }
    for (const char* file : { "dump.json", "construct.json", "stack.json" })
        EXPECT_EQ(readAll(one / file), readAll(two / file)) << file;
}

TEST(DumpWriter, ErrorsNameTheFile)
{
    TempDir dir;
    const fs::path blocker = dir.path() / "file";
    std::ofstream(blocker) << "x";
    auto w = DumpWriter::create(blocker / "rank", statisticsHeader()); // a file where a folder should be
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().id, "dumpwriter.io");
    EXPECT_NE(w.error().format().find("file/rank"), std::string::npos);

    auto ok = DumpWriter::create(dir.path() / "r", statisticsHeader());
    ASSERT_TRUE(ok);
    ASSERT_FALSE((*ok)->finish());
    const auto late = (*ok)->addEntry("x", "{}");
    ASSERT_TRUE(late);
    EXPECT_EQ(late->id, "dumpwriter.finished");
}

TEST(DumpWriter, FinishAndResumeAtAPageBoundary)
{
    // Members are sized so that the closing text sits right before a 4 KiB boundary, where the
    // writer must not overwrite two bytes in place (a cut write could mix them with new ones).
    TempDir dir;
    auto w = DumpWriter::create(dir.path(), statisticsHeader());
    ASSERT_TRUE(w);
    const fs::path construct = dir.path() / "construct.json";
    std::vector<std::string> keys;
    auto expected = [&] {
        std::string text;
        PyJsonWriter j(text);
        j.beginObject();
        for (const std::string& k : keys) {
            j.key(k);
            j.null();
        }
        j.endObject();
        return text;
    };
    auto add = [&](const std::string& key) {
        keys.push_back(key);
        ASSERT_FALSE((*w)->addConstruct(key, ""));
        ASSERT_TRUE(JsonDocument::parse(readAll(construct), "construct.json").document);
    };
    while (fs::file_size(construct) < 4096 - 100)
        add("Module.m" + std::to_string(keys.size()) + ".Linear.forward.0");
    // The file is "...}" with "}" at closeAt = size - 1; one more member ",\n \"K\": null" of
    // 3 + (len + 2) + 6 bytes puts the next closeAt at 4095, just before the boundary.
    const std::uintmax_t closeAt = fs::file_size(construct) - 1;
    add(std::string(static_cast<std::size_t>(4095 - closeAt - 11), 'k'));
    EXPECT_EQ(fs::file_size(construct), 4096u);

    ASSERT_FALSE((*w)->finish()); // "}" -> "\n}" astride the boundary: through rename()
    EXPECT_EQ(readAll(construct), expected());
    ASSERT_FALSE((*w)->resume());
    add("after"); // "\n}" astride the boundary is replaced first
    ASSERT_FALSE((*w)->finish());
    EXPECT_EQ(readAll(construct), expected());
    ASSERT_FALSE((*w)->resume());
    add("again"); // in place now
    ASSERT_FALSE((*w)->finish());
    EXPECT_EQ(readAll(construct), expected());
}

TEST(DumpWriter, AbandonLeavesDumpJsonCutAfterItsLastCompleteEntry)
{
    TempDir dir;
    std::uintmax_t afterRelu = 0;
    {
        auto w = DumpWriter::create(dir.path(), statisticsHeader());
        ASSERT_TRUE(w);
        ASSERT_FALSE((*w)->addEntry("Aten.relu.0.forward", reluEntry()));
        ASSERT_FALSE((*w)->addConstruct("a", ""));
        ASSERT_FALSE((*w)->addStack("a", { "File x.cpp, line 1, in f, \n a" }));
        afterRelu = fs::file_size(dir.path() / "dump.json");
        // A failed entry write leaves part of its text behind the last complete entry.
        std::ofstream(dir.path() / "dump.json", std::ios::binary | std::ios::app) << ",\n  \"Aten.sum.0.forward\": {\n   \"inp";
        ASSERT_FALSE((*w)->abandon());
        EXPECT_TRUE((*w)->isFinished());
    } // the destructor does not close it after all
    EXPECT_EQ(fs::file_size(dir.path() / "dump.json"), afterRelu);
    for (const char* file : { "construct.json", "stack.json" })
        EXPECT_TRUE(JsonDocument::parse(readAll(dir.path() / file), file).document) << file;

    // Every reader reports it as cut, with the complete entry read.
    auto dump = readDumpJson(dir.path() / "dump.json");
    ASSERT_TRUE(dump) << dump.error().format();
    ASSERT_EQ((*dump)->entries.size(), 1u);
    EXPECT_EQ((*dump)->entries.front().key, "Aten.relu.0.forward");
    ASSERT_FALSE((*dump)->diagnostics.empty());
    EXPECT_EQ((*dump)->diagnostics.front().id, "dump.truncated");
}
