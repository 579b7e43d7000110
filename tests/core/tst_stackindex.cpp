// SPDX-License-Identifier: Apache-2.0
// stack.json as an index: keys and frame ranges from one scan, frames read from the file when asked for.
#include "core/dump/rankdump.h"
#include "tempdir.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

using namespace probescope;
using namespace probescope::dump;
using probescope::testing::TempDir;

namespace {

Result<StackMap> readStack(TempDir& dir, const std::string& text)
{
    dir.write("stack.json", text);
    return readStackJson(dir.path() / "stack.json");
}

} // namespace

TEST(StackIndex, OldFormKeysFramesAndAnAbsentKey)
{
    TempDir dir;
    auto stack = readStack(dir, R"({
 "Functional.relu.0.forward": ["File a.py, line 1, in f, \n x", "File b.py, line 2, in g, \n y"],
 "Module.a.A.forward.0": [],
 "Tensor.add.0.forward": [["File c.py", 3, "h"]],
 "Torch.odd.0.forward": "not a list"
})");
    ASSERT_TRUE(stack.ok()) << stack.error().format();
    EXPECT_TRUE(stack->present);
    EXPECT_FALSE(stack->newForm);
    EXPECT_EQ(stack->framesOf.size(), 3u) << "a value that is not a list is no stack";
    const auto* relu = stack->frames("Functional.relu.0.forward");
    ASSERT_NE(relu, nullptr);
    ASSERT_EQ(relu->size(), 2u);
    EXPECT_EQ(relu->at(0), "File a.py, line 1, in f, \n x");
    EXPECT_EQ(relu->at(1), "File b.py, line 2, in g, \n y");
    EXPECT_EQ(stack->frames("Functional.relu.0.forward"), relu) << "read once, then kept";
    ASSERT_NE(stack->frames("Module.a.A.forward.0"), nullptr);
    EXPECT_TRUE(stack->frames("Module.a.A.forward.0")->empty());
    ASSERT_NE(stack->frames("Tensor.add.0.forward"), nullptr);
    EXPECT_EQ(stack->frames("Tensor.add.0.forward")->at(0), "File c.py, 3, h");
    EXPECT_EQ(stack->frames("Torch.odd.0.forward"), nullptr);
    EXPECT_EQ(stack->frames("Functional.relu.1.forward"), nullptr);
    EXPECT_EQ(stack->frames(""), nullptr);
    EXPECT_EQ(stack->frames("Functional.relu.0.forward "), nullptr);
    // Sorted keys.
    EXPECT_EQ(stack->framesOf.keyAt(0), "Functional.relu.0.forward");
    EXPECT_EQ(stack->framesOf.keyAt(2), "Tensor.add.0.forward");
}

TEST(StackIndex, NewFormSharesOneStackBetweenKeys)
{
    TempDir dir;
    auto stack = readStack(dir, R"({"0": [["Functional.relu.0.forward", "Functional.relu.1.forward", 7], ["File a.py, line 1, in f, \n x"]],
"1": [["Module.a.A.forward.0"], ["File c.py, line 9, in h, \n z", "File d.py, line 1, in k, \n w"]],
"2": "bad", "3": [["x"]], "4": [{"k": 1}, ["y"]]})");
    ASSERT_TRUE(stack.ok()) << stack.error().format();
    EXPECT_TRUE(stack->newForm);
    EXPECT_EQ(stack->framesOf.size(), 3u);
    const auto* a = stack->frames("Functional.relu.0.forward");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(*a, std::vector<std::string> { "File a.py, line 1, in f, \n x" });
    EXPECT_EQ(stack->frames("Functional.relu.1.forward"), a) << "one stack, read once for both keys";
    ASSERT_NE(stack->frames("Module.a.A.forward.0"), nullptr);
    EXPECT_EQ(stack->frames("Module.a.A.forward.0")->size(), 2u);
    EXPECT_EQ(stack->frames("x"), nullptr);
    EXPECT_EQ(stack->frames("7"), nullptr);
}

TEST(StackIndex, DuplicateKeysTheLastOneWins)
{
    TempDir dir;
    auto old = readStack(dir, R"({"k": ["first"], "j": ["j"], "k": ["second"]})");
    ASSERT_TRUE(old.ok());
    EXPECT_EQ(old->framesOf.size(), 2u);
    EXPECT_EQ(old->frames("k")->at(0), "second");

    auto form = readStack(dir, R"({"0": [["k", "j"], ["first"]], "1": [["k"], ["second"]]})");
    ASSERT_TRUE(form.ok());
    EXPECT_EQ(form->framesOf.size(), 2u);
    EXPECT_EQ(form->frames("k")->at(0), "second");
    EXPECT_EQ(form->frames("j")->at(0), "first");
}

TEST(StackIndex, EscapedKeysAndEmptyFiles)
{
    TempDir dir;
    auto stack = readStack(dir, "\xEF\xBB\xBF{\"a\\\"b\": [\"q\"], \"\\u0041\": [\"A\"], \"t\\tab\": [\"T\"]}");
    ASSERT_TRUE(stack.ok()) << stack.error().format();
    ASSERT_NE(stack->frames("a\"b"), nullptr);
    EXPECT_EQ(stack->frames("a\"b")->at(0), "q");
    ASSERT_NE(stack->frames("A"), nullptr);
    ASSERT_NE(stack->frames("t\tab"), nullptr);

    auto empty = readStack(dir, " {} ");
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->present);
    EXPECT_TRUE(empty->framesOf.empty());
    EXPECT_EQ(empty->frames("a"), nullptr);
}

TEST(StackIndex, MalformedFilesNameTheFileAndThePosition)
{
    TempDir dir;
    const std::string file = (dir.path() / "stack.json").string();
    auto truncated = readStack(dir, "{\"Functional.relu.0.forward\": [\"File");
    ASSERT_FALSE(truncated.ok());
    EXPECT_EQ(truncated.error().id, "json.truncated");
    EXPECT_EQ(truncated.error().location.file, file);

    auto syntax = readStack(dir, "{\"a\": [\"x\"],\n \"b\": [\"y\",, \"z\"]}");
    ASSERT_FALSE(syntax.ok());
    EXPECT_EQ(syntax.error().id, "json.syntax");
    EXPECT_EQ(syntax.error().location.file, file);
    EXPECT_EQ(syntax.error().location.line, 2u);
    EXPECT_EQ(syntax.error().location.column, 12u); // the second comma

    for (const char* bad : { "{\"a\": [tru]}", "{\"a\": [01]}", "{\"a\": [\"\\x\"]}", "{\"a\": [1.]}", "{\"a\": [\"x\"]} x",
                             "{\"a\": [\"x\"}", "{\"a\" [\"x\"]}", "{\"a\": [\"x\n\"]}", "", "   " }) {
        auto r = readStack(dir, bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().location.file, file) << bad;
        EXPECT_TRUE(r.error().id == "json.syntax" || r.error().id == "json.truncated") << bad << ": " << r.error().id;
        EXPECT_GT(r.error().location.line, 0u) << bad;
    }

    auto list = readStack(dir, "\n [1, 2]");
    ASSERT_FALSE(list.ok());
    EXPECT_EQ(list.error().id, "stack.type");
    EXPECT_EQ(list.error().location.line, 2u);
    EXPECT_EQ(list.error().location.column, 2u);

    // Values the parser accepts are accepted by the index too.
    auto lenient = readStack(dir, R"({"n": [NaN, -Infinity, 1e5, -0.5, null, true, false, {"x": [[]]}], "s": "x"})");
    ASSERT_TRUE(lenient.ok()) << lenient.error().format();
    EXPECT_EQ(lenient->framesOf.size(), 1u);
}

TEST(StackIndex, CopiesShareTheFileAndAreSafeAcrossThreads)
{
    TempDir dir;
    std::string text = "{";
    for (int i = 0; i < 2000; ++i)
        text += std::string(i ? ",\n" : "") + "\"Functional.op." + std::to_string(i) + ".forward\": [\"File m.py, line "
            + std::to_string(i) + ", in f, \\n return op(x)\"]";
    text += "}";
    auto stack = readStack(dir, text);
    ASSERT_TRUE(stack.ok());
    EXPECT_EQ(stack->framesOf.size(), 2000u);
    EXPECT_LT(stack->framesOf.memoryBytes(), text.size());
    const StackMap copy = *stack;
    std::thread other([&] {
        for (int i = 0; i < 2000; i += 2)
            EXPECT_EQ(copy.frames("Functional.op." + std::to_string(i) + ".forward")->size(), 1u);
    });
    for (int i = 1999; i >= 0; i -= 1)
        EXPECT_EQ(stack->frames("Functional.op." + std::to_string(i) + ".forward")->at(0),
                  "File m.py, line " + std::to_string(i) + ", in f, \n return op(x)");
    other.join();
    EXPECT_EQ(copy.frames("Functional.op.7.forward"), stack->frames("Functional.op.7.forward"));
}

// A compare reads the ops' stacks in file order (readJson): the reads come from a read-ahead window of the open file.
// Every text must be its own range whatever the order, across two files read by turns, and a file cut short on disk
// after the index was made fails the read (false), never gives another op's text.
TEST(StackIndex, ReadJsonInFileOrderBackwardsAndFromTwoFiles)
{
    auto makeText = [](int count, const std::string& tag) {
        std::string text = "{";
        for (int i = 0; i < count; ++i)
            text += std::string(i ? ",\n" : "") + "\"Functional.op." + std::to_string(i) + ".forward\": [\"File "
                + tag + ".py, line " + std::to_string(i) + ", in f, \\n " + std::string(std::size_t(i % 97), 'x') + "\"]";
        return text + "}";
    };
    auto expected = [](int i, const std::string& tag) {
        return "[\"File " + tag + ".py, line " + std::to_string(i) + ", in f, \\n " + std::string(std::size_t(i % 97), 'x')
            + "\"]";
    };
    TempDir dir; // one per test: the two files go to two folders in it
    const int count = 6000; // about 600 KB: more than one window
    auto first = readStackJson(dir.write("a/stack.json", makeText(count, "a")));
    auto second = readStackJson(dir.write("b/stack.json", makeText(count, "b")));
    ASSERT_TRUE(first.ok() && second.ok());
    std::string json;
    for (int i = 0; i < count; i += (i % 5 == 0 ? 3 : 1)) { // forward, with gaps, the two files by turns
        ASSERT_TRUE(first->framesOf.readJson("Functional.op." + std::to_string(i) + ".forward", json)) << i;
        EXPECT_EQ(json, expected(i, "a")) << i;
        ASSERT_TRUE(second->framesOf.readJson("Functional.op." + std::to_string(i) + ".forward", json)) << i;
        EXPECT_EQ(json, expected(i, "b")) << i;
    }
    for (int i = count - 1; i >= 0; i -= 7) { // backwards
        ASSERT_TRUE(first->framesOf.readJson("Functional.op." + std::to_string(i) + ".forward", json)) << i;
        EXPECT_EQ(json, expected(i, "a")) << i;
    }
    EXPECT_FALSE(first->framesOf.readJson("Functional.op.absent.forward", json));

    // The file cut short on disk: the ops past the cut cannot be read any more.
    std::filesystem::resize_file(dir.path() / "a" / "stack.json", 1000);
    bool failed = false;
    for (int i = 0; i < count; i += 50) {
        if (!first->framesOf.readJson("Functional.op." + std::to_string(i) + ".forward", json))
            failed = true;
        else
            EXPECT_EQ(json, expected(i, "a")) << i << ": read from a window made before the cut, or before the cut";
    }
    EXPECT_TRUE(failed);
}
