// SPDX-License-Identifier: Apache-2.0
// Malformed dump files: every case must give its specific diagnostic, never a crash or silently wrong data.
#include "core/dump/dumpfile.h"
#include "core/dump/dumplayout.h"
#include "core/dump/rankdump.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace probescope;
using namespace probescope::dump;
using probescope::testing::TempDir;

namespace {

std::filesystem::path fixtureDump()
{
    return probescope::testing::fixturesDir() / "modelA_tensor_mix/npu/step0/rank/dump.json";
}

bool deepEqual(JsonValue a, JsonValue b)
{
    if (a.type() != b.type())
        return false;
    switch (a.type()) {
    case JsonType::Null:
        return true;
    case JsonType::Bool:
        return a.asBool() == b.asBool();
    case JsonType::Int:
        return a.asInt() == b.asInt();
    case JsonType::Double:
        return a.asDouble() == b.asDouble() || (std::isnan(a.asDouble()) && std::isnan(b.asDouble()));
    case JsonType::String:
        return a.asString() == b.asString();
    case JsonType::Array:
    case JsonType::Object:
        if (a.size() != b.size())
            return false;
        for (std::uint32_t i = 0; i < a.size(); ++i) {
            if (a.isObject() && a.keyAt(i) != b.keyAt(i))
                return false;
            if (!deepEqual(a.at(i), b.at(i)))
                return false;
        }
        return true;
    }
    return false;
}

} // namespace

TEST(Malformed, RealDumpTruncatedAtManyOffsetsKeepsExactlyTheCompleteEntries)
{
    const std::string text = probescope::testing::readAll(fixtureDump());
    ASSERT_GT(text.size(), 10000u) << "fixture missing: " << fixtureDump();
    auto full = parseDumpJson(text, fixtureDump());
    ASSERT_TRUE(full.ok());
    const auto& entries = (*full)->entries;

    // Where each entry's value ends: the entry is complete only if the cut comes after it.
    std::vector<std::size_t> cuts;
    for (std::size_t c = 0; c < text.size(); c += 613)
        cuts.push_back(c);
    for (const Entry& e : entries) { // around entry starts, where salvage decisions flip
        for (std::size_t d : { 0, 1, 2, 3 })
            cuts.push_back(static_cast<std::size_t>(e.offset) + d);
    }
    std::size_t salvaged = 0;
    for (std::size_t cut : cuts) {
        if (cut >= text.size())
            continue;
        auto r = parseDumpJson(std::string_view(text).substr(0, cut), fixtureDump());
        if (!r.ok()) {
            EXPECT_EQ(r.error().id, "dump.truncated") << "cut " << cut;
            EXPECT_LT(cut, text.find("\"data\"") + 12) << "only a cut before the data object is unsalvageable";
            continue;
        }
        ++salvaged;
        const DumpFile& dump = **r;
        EXPECT_TRUE(dump.truncated);
        ASSERT_LE(dump.entries.size(), entries.size());
        for (std::size_t i = 0; i < dump.entries.size(); ++i) {
            ASSERT_EQ(dump.entries[i].key, entries[i].key) << "cut " << cut;
            ASSERT_TRUE(deepEqual(dump.entries[i].value, entries[i].value)) << "entry " << i << " cut " << cut;
        }
        // Nothing complete was dropped: the next entry must have started before the cut but not finished.
        if (dump.entries.size() < entries.size()) {
            const std::size_t nextStart = entries[dump.entries.size()].offset;
            const std::size_t nextKeyEnd = nextStart; // the value starts here; its key precedes it
            EXPECT_GE(cut + 64, nextKeyEnd) << "an entry that ended well before the cut was lost (cut " << cut << ")";
        }
        const auto it = std::find_if(dump.diagnostics.begin(), dump.diagnostics.end(),
                                     [](const Diagnostic& d) { return d.id == "dump.truncated"; });
        ASSERT_NE(it, dump.diagnostics.end());
        EXPECT_EQ(it->location.offset, cut);
        EXPECT_NE(it->message.find(std::to_string(dump.entries.size()) + " complete entries"), std::string::npos);
    }
    EXPECT_GT(salvaged, 100u);
}

TEST(Malformed, TrailingZeroBytesFromACrashAreReportedNotSwallowed)
{
    // A file system may leave zeroed blocks after a crash; that is not valid JSON and must be said so.
    const std::string text = std::string(R"({"task": "tensor", "level": "L1", "data": {"Functional.relu.0.forward": {}, )")
        + std::string(16, '\0');
    auto r = parseDumpJson(text, "/z/dump.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().id, "json.syntax");
    EXPECT_NE(r.error().message.find("byte 0x00"), std::string::npos) << r.error().message;
}

TEST(Malformed, WrongTypesAtEveryLevel)
{
    struct Case
    {
        std::string text;
        std::string id;
        bool fatal;
    };
    const Case cases[] = {
        { R"("just a string")", "dump.not-object", true },
        { R"({"task": 3, "level": "L1", "data": {}})", "dump.header-type", false },
        { R"({"task": "tensor", "level": ["L1"], "data": {}})", "dump.header-type", false },
        { R"({"task": "tensor", "data": null})", "dump.data-type", true },
        { R"({"task": "tensor", "data": {"weird key": {}}})", "dump.entry-name", false },
        { R"({"task": "tensor", "data": {"Functional.a.0.forward": {"output": [{"type": "torch.Tensor", "shape": {}}]}}})",
          "dump.leaf-type", false },
        { R"({"task": "tensor", "data": {"Functional.a.0.forward": {"output": [{"type": "torch.Tensor", "requires_grad": "yes"}]}}})",
          "dump.leaf-type", false },
        { R"({"task": "tensor", "data": {"Functional.a.0.forward": {"output": [{"type": "torch.Tensor", "md5": 12}]}}})",
          "dump.leaf-type", false },
        { R"({"task": "tensor", "data": {"Functional.a.0.forward": {"output": [{"type": "torch.Tensor", "Norm": {"a": 1}}]}}})",
          "dump.leaf-type", false },
    };
    for (const Case& c : cases) {
        auto r = parseDumpJson(c.text, "/w/dump.json");
        if (c.fatal) {
            ASSERT_FALSE(r.ok()) << c.text;
            EXPECT_EQ(r.error().id, c.id) << c.text;
            continue;
        }
        ASSERT_TRUE(r.ok()) << c.text << " -> " << r.error().format();
        ASSERT_FALSE((*r)->diagnostics.empty()) << c.text;
        EXPECT_EQ((*r)->diagnostics.front().id, c.id) << c.text;
        EXPECT_EQ((*r)->diagnostics.front().location.file, "/w/dump.json");
        EXPECT_GT((*r)->diagnostics.front().location.line, 0u);
    }
}

TEST(Malformed, RandomByteCorruptionNeverCrashes)
{
    const std::string original = probescope::testing::readAll(fixtureDump());
    ASSERT_FALSE(original.empty());
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    const char junk[] = { '{', '}', '[', ']', '"', ',', ':', '\\', '\0', 'N', '-', '9', '\n', static_cast<char>(0xff) };
    int parsed = 0;
    for (int round = 0; round < 300; ++round) {
        std::string text = original;
        for (int k = 0; k < 3; ++k)
            text[next() % text.size()] = junk[next() % sizeof junk];
        auto r = parseDumpJson(text, "/c/dump.json");
        if (r.ok()) {
            ++parsed;
            continue;
        }
        EXPECT_FALSE(r.error().id.empty());
        EXPECT_GT(r.error().location.line, 0u);
    }
    SUCCEED() << parsed << " of 300 corrupted files still parsed";
}

TEST(Malformed, UnreadableFilesAreIoErrorsNamingTheFile)
{
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "dump.json"); // a folder where a file should be
    auto r = readDumpJson(dir.path() / "dump.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().id, "io.read");
    EXPECT_EQ(r.error().location.file, (dir.path() / "dump.json").string());

    const auto empty = dir.write("e/dump.json", "");
    auto e = readDumpJson(empty);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().id, "dump.truncated");
    EXPECT_EQ(e.error().message, "the file is empty");
}
