// SPDX-License-Identifier: Apache-2.0
#include "core/dump/jsondocument.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

using namespace probescope;
using namespace probescope::dump;

namespace {

JsonDocument::ParseOutcome parse(std::string_view text, bool salvage = false)
{
    JsonParseOptions options;
    options.salvageTruncated = salvage;
    return JsonDocument::parse(text, "test.json", options);
}

} // namespace

TEST(JsonDocument, ParsesScalarsKeepingIntAndFloatApart)
{
    const auto r = parse(R"({"i": 2, "f": 2.0, "neg": -7, "e": 1e-05, "t": true, "n": null, "s": "x"})");
    ASSERT_TRUE(r.document);
    const JsonValue root = r.document->root();
    ASSERT_EQ(root.size(), 7u);
    EXPECT_EQ(root.find("i")->type(), JsonType::Int);
    EXPECT_EQ(root.find("i")->asInt(), 2);
    EXPECT_EQ(root.find("f")->type(), JsonType::Double);
    EXPECT_EQ(root.find("neg")->asInt(), -7);
    EXPECT_DOUBLE_EQ(root.find("e")->asDouble(), 1e-05);
    EXPECT_TRUE(root.find("t")->asBool());
    EXPECT_TRUE(root.find("n")->isNull());
    EXPECT_EQ(root.find("s")->asString(), "x");
    EXPECT_FALSE(root.find("missing"));
}

TEST(JsonDocument, AcceptsPythonNanAndInfinityTokens)
{
    const auto r = parse(R"({"Max": NaN, "Min": -Infinity, "Mean": Infinity, "list": [NaN, 1]})");
    ASSERT_TRUE(r.document) << r.diagnostics.front().format();
    const JsonValue root = r.document->root();
    EXPECT_TRUE(std::isnan(root.find("Max")->asDouble()));
    EXPECT_EQ(root.find("Min")->asDouble(), -INFINITY);
    EXPECT_EQ(root.find("Mean")->asDouble(), INFINITY);
    EXPECT_TRUE(std::isnan(root.find("list")->at(0).asDouble()));
}

TEST(JsonDocument, KeepsMemberOrderAndLastDuplicateWins)
{
    const auto r = parse(R"({"z": 1, "a": 2, "m": 3, "a": 4})");
    ASSERT_TRUE(r.document);
    const JsonValue root = r.document->root();
    ASSERT_EQ(root.size(), 4u);
    EXPECT_EQ(root.keyAt(0), "z");
    EXPECT_EQ(root.keyAt(1), "a");
    EXPECT_EQ(root.keyAt(2), "m");
    EXPECT_EQ(root.find("a")->asInt(), 4);
}

TEST(JsonDocument, NestedContainersAreContiguousAndNavigable)
{
    const auto r = parse(R"({"a": [[1, 2], {"k": [3]}, []], "b": {}})");
    ASSERT_TRUE(r.document);
    const JsonValue a = *r.document->root().find("a");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a.at(0).at(1).asInt(), 2);
    EXPECT_EQ(a.at(1).find("k")->at(0).asInt(), 3);
    EXPECT_EQ(a.at(2).size(), 0u);
    EXPECT_TRUE(r.document->root().find("b")->isObject());
    EXPECT_EQ(r.document->root().find("b")->size(), 0u);
}

TEST(JsonDocument, DecodesEscapesAndSurrogatePairs)
{
    const auto r = parse(R"(["a\"b\\c\/\n\t", "\u00e9\u4e2d", "\ud83d\ude00", "\ud800x"])");
    ASSERT_TRUE(r.document);
    const JsonValue root = r.document->root();
    EXPECT_EQ(root.at(0).asString(), "a\"b\\c/\n\t");
    EXPECT_EQ(root.at(1).asString(), "\xc3\xa9\xe4\xb8\xad");
    EXPECT_EQ(root.at(2).asString(), "\xf0\x9f\x98\x80");
    EXPECT_EQ(root.at(3).asString(), "\xef\xbf\xbdx"); // lone surrogate -> U+FFFD
}

TEST(JsonDocument, LargeIntegersBecomeDoubles)
{
    const auto r = parse(R"([9223372036854775807, -9223372036854775808, 18446744073709551616, 1e400, -1e400, 1e-400])");
    ASSERT_TRUE(r.document);
    const JsonValue root = r.document->root();
    EXPECT_EQ(root.at(0).asInt(), INT64_MAX);
    EXPECT_EQ(root.at(1).asInt(), INT64_MIN);
    EXPECT_EQ(root.at(2).type(), JsonType::Double);
    EXPECT_EQ(root.at(3).asDouble(), INFINITY);
    EXPECT_EQ(root.at(4).asDouble(), -INFINITY);
    EXPECT_EQ(root.at(5).asDouble(), 0.0);
}

TEST(JsonDocument, ReportsSyntaxErrorsWithLineAndColumn)
{
    const auto r = parse("{\n \"a\": 1,\n \"b\": tru\n}");
    ASSERT_FALSE(r.document);
    ASSERT_EQ(r.diagnostics.size(), 1u);
    const Diagnostic& d = r.diagnostics.front();
    EXPECT_EQ(d.id, "json.syntax");
    EXPECT_EQ(d.location.file, "test.json");
    EXPECT_EQ(d.location.line, 3u);
    EXPECT_EQ(d.location.column, 7u);
    EXPECT_EQ(d.format().rfind("test.json:3:7: error [json.syntax]: ", 0), 0u) << d.format();
}

TEST(JsonDocument, SpecificMessagesForCommonMistakes)
{
    struct Case
    {
        const char* text;
        const char* id;
        const char* fragment;
    };
    const Case cases[] = {
        { R"({"a" 1})", "json.syntax", "expected ':'" },
        { R"({"a": 1,})", "json.syntax", "expected a string key" },
        { R"([1 2])", "json.syntax", "expected ',' or ']'" },
        { R"({"a": 01})", "json.syntax", "leading zero" },
        { "[\"a\tb\"]", "json.syntax", "control character" },
        { R"(["\x"])", "json.syntax", "invalid escape" },
        { R"({} {})", "json.syntax", "after the end of the document" },
        { "", "json.truncated", "before any value" },
        { R"({"a": [1, 2)", "json.truncated", "unexpected end of file" },
    };
    for (const Case& c : cases) {
        const auto r = parse(c.text);
        ASSERT_FALSE(r.document) << c.text;
        EXPECT_EQ(r.diagnostics.front().id, c.id) << c.text;
        EXPECT_NE(r.diagnostics.front().message.find(c.fragment), std::string::npos)
            << c.text << " -> " << r.diagnostics.front().message;
    }
}

TEST(JsonDocument, RejectsNestingBeyondTheLimit)
{
    std::string deep(2000, '[');
    deep += std::string(2000, ']');
    const auto r = parse(deep);
    ASSERT_FALSE(r.document);
    EXPECT_EQ(r.diagnostics.front().id, "json.too-deep");
}

TEST(JsonDocument, SalvagesCompleteMembersOfATruncatedDocument)
{
    const std::string text = R"({"data": {"a": {"x": [1, 2]}, "b": {"x": [3, 4]}, "c": {"x": [5, 6)";
    const auto r = parse(text, true);
    ASSERT_TRUE(r.document);
    EXPECT_TRUE(r.truncated);
    const JsonValue data = *r.document->root().find("data");
    EXPECT_TRUE(data.isTruncated());
    ASSERT_EQ(data.size(), 3u);
    EXPECT_FALSE(data.at(0).isTruncated());
    EXPECT_FALSE(data.at(1).isTruncated());
    EXPECT_TRUE(data.at(2).isTruncated()); // "c" was being written
    // The number 6 touched the end of the file: it may have been cut ("6" of "60"), so it is not kept.
    EXPECT_EQ(data.at(2).find("x")->size(), 1u);
}

TEST(JsonDocument, TruncationAtEveryOffsetNeverYieldsAPartialScalar)
{
    const std::string text = R"({"k": [123.5, "text", true, null, -Infinity, {"n": 42}], "z": 7})";
    for (std::size_t cut = 0; cut < text.size(); ++cut) {
        const auto r = parse(std::string_view(text).substr(0, cut), true);
        if (!r.document) {
            EXPECT_EQ(r.diagnostics.front().id, "json.truncated") << cut;
            continue;
        }
        const auto k = r.document->root().find("k");
        if (!k)
            continue;
        // Every element kept must equal the full document's element.
        const double expectedNumbers[] = { 123.5 };
        if (k->size() >= 1) {
            EXPECT_EQ(k->at(0).asDouble(), expectedNumbers[0]) << "cut at " << cut;
        }
        if (k->size() >= 2) {
            EXPECT_EQ(k->at(1).asString(), "text") << "cut at " << cut;
        }
        if (k->size() >= 3) {
            EXPECT_TRUE(k->at(2).asBool()) << "cut at " << cut;
        }
        if (k->size() >= 5) {
            EXPECT_EQ(k->at(4).asDouble(), -INFINITY) << "cut at " << cut;
        }
    }
}

TEST(JsonDocument, BareScalarAndEmptyContainerDocuments)
{
    const auto number = parse("5");
    ASSERT_TRUE(number.document);
    EXPECT_EQ(number.document->root().asInt(), 5);
    const auto negative = parse(" -2.5e3 ");
    ASSERT_TRUE(negative.document);
    EXPECT_EQ(negative.document->root().asDouble(), -2500.0);
    const auto object = parse("{}");
    ASSERT_TRUE(object.document);
    EXPECT_TRUE(object.document->root().isObject());
    const auto array = parse("[]");
    ASSERT_TRUE(array.document);
    EXPECT_EQ(array.document->root().size(), 0u);
    const auto nan = parse("NaN");
    ASSERT_TRUE(nan.document);
    EXPECT_TRUE(std::isnan(nan.document->root().asDouble()));
}

TEST(JsonDocument, SkipsAUtf8ByteOrderMark)
{
    const auto r = parse("\xEF\xBB\xBF{\"a\": 1}");
    ASSERT_TRUE(r.document);
    EXPECT_EQ(r.document->root().find("a")->asInt(), 1);
}

TEST(JsonDocument, RecordsValueOffsets)
{
    const std::string text = R"({"a": [10, "x"]})";
    const auto r = parse(text);
    ASSERT_TRUE(r.document);
    const JsonValue a = *r.document->root().find("a");
    EXPECT_EQ(a.offset(), text.find('['));
    EXPECT_EQ(a.at(1).offset(), text.find("\"x\""));
}

TEST(JsonBuilder, BuildsTheSameShapeAsTheParser)
{
    JsonBuilder b;
    b.beginObject();
    b.key("list");
    b.beginArray();
    b.integer(1);
    b.number(2.5);
    b.string("s");
    b.null();
    b.end();
    b.key("flag");
    b.boolean(false);
    b.end();
    const auto doc = b.finish();
    const JsonValue root = doc->root();
    ASSERT_TRUE(root.isObject());
    EXPECT_EQ(root.find("list")->size(), 4u);
    EXPECT_EQ(root.find("list")->at(1).asDouble(), 2.5);
    EXPECT_EQ(root.find("list")->at(2).asString(), "s");
    EXPECT_FALSE(root.find("flag")->asBool());
}

namespace {

/// The number the parser reads for `token`, as the only element of an array.
JsonValue parsedNumber(std::shared_ptr<const JsonDocument>& keep, const std::string& token)
{
    auto r = JsonDocument::parse("[" + token + "]", "test.json");
    EXPECT_TRUE(r.document) << token;
    keep = r.document;
    return keep ? keep->root().at(0) : JsonValue();
}

/// What std::from_chars reads (the reference the fast path must match bit for bit).
double reference(const std::string& token)
{
    double v = 0;
    std::from_chars(token.data(), token.data() + token.size(), v);
    return v;
}

} // namespace

TEST(JsonDocument, NumbersAtTheEdgesReadExactlyAsFromChars)
{
    std::shared_ptr<const JsonDocument> keep;
    // Decimals the exact fast path takes, and ones it must leave to from_chars (too many digits, large
    // exponents, denormals): every result is the correctly rounded double.
    const char* tokens[] = { "0.1", "11052.138671875", "0.0245361328125", "-0.0419921875", "1.5e-05", "3.4028234663852886e+38",
                             "9007199254740993.0", "0.30000000000000004", "123456789012345678901234.5", "1e22", "1e23",
                             "1e308", "1.7976931348623157e308", "4.9e-324", "2.2250738585072014e-308",
                             "2.2250738585072011e-308", "1e-400", "0.000000000000000000000000001",
                             "1.00000000000000000000000000000000000001", "5e-1", "9.999999999999999e22" };
    for (const char* token : tokens) {
        const JsonValue v = parsedNumber(keep, token);
        ASSERT_EQ(v.type(), JsonType::Double) << token;
        const double got = v.asDouble();
        const double want = reference(token);
        EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << token << ": " << got << " vs " << want;
    }
    EXPECT_TRUE(std::isinf(parsedNumber(keep, "1e400").asDouble()));
    EXPECT_GT(parsedNumber(keep, "1e400").asDouble(), 0);
    EXPECT_LT(parsedNumber(keep, "-1e400").asDouble(), 0);

    // -0.0 keeps its sign; -0 is the integer 0.
    const JsonValue negativeZero = parsedNumber(keep, "-0.0");
    EXPECT_EQ(negativeZero.type(), JsonType::Double);
    EXPECT_TRUE(std::signbit(negativeZero.asDouble()));
    EXPECT_EQ(parsedNumber(keep, "-0").type(), JsonType::Int);

    // 2 and 2.0 stay apart; int64 limits stay integers, one past them becomes a double.
    EXPECT_EQ(parsedNumber(keep, "2").type(), JsonType::Int);
    EXPECT_EQ(parsedNumber(keep, "2.0").type(), JsonType::Double);
    EXPECT_EQ(parsedNumber(keep, "2e0").type(), JsonType::Double);
    EXPECT_EQ(parsedNumber(keep, "9223372036854775807").asInt(), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(parsedNumber(keep, "-9223372036854775808").asInt(), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(parsedNumber(keep, "9223372036854775808").type(), JsonType::Double);
    EXPECT_EQ(parsedNumber(keep, "9223372036854775808").asDouble(), 9223372036854775808.0);
    EXPECT_EQ(parsedNumber(keep, "-9223372036854775809").type(), JsonType::Double);

    // Python's tokens.
    EXPECT_TRUE(std::isnan(parsedNumber(keep, "NaN").asDouble()));
    EXPECT_EQ(parsedNumber(keep, "Infinity").asDouble(), HUGE_VAL);
    EXPECT_EQ(parsedNumber(keep, "-Infinity").asDouble(), -HUGE_VAL);
}

TEST(JsonDocument, StringsWithEscapesAndLongPlainRunsAcrossScanBlocks)
{
    // Plain runs longer than the 16-byte scan block, with the quote, an escape or a control byte at
    // every position of a block.
    for (std::size_t prefix = 0; prefix < 40; ++prefix) {
        const std::string plain(prefix, 'a');
        auto r = JsonDocument::parse("[\"" + plain + "\\n" + plain + "\", \"" + plain + "\"]", "test.json");
        ASSERT_TRUE(r.document) << prefix;
        EXPECT_EQ(r.document->root().at(0).asString(), plain + "\n" + plain);
        EXPECT_EQ(r.document->root().at(1).asString(), plain);
        auto bad = JsonDocument::parse("[\"" + plain + "\x01\"]", "test.json");
        ASSERT_FALSE(bad.document);
        EXPECT_EQ(bad.diagnostics.front().id, "json.syntax");
        EXPECT_EQ(bad.diagnostics.front().location.column, prefix + 3) << prefix;
        auto utf8 = JsonDocument::parse("[\"" + plain + "\xff" + plain + "\"]", "test.json");
        ASSERT_TRUE(utf8.document);
        ASSERT_EQ(utf8.diagnostics.size(), 1u) << prefix;
        EXPECT_EQ(utf8.diagnostics.front().id, "json.utf8");
    }
}

TEST(JsonDocument, FindInSmallAndLargeObjectsTakesTheLastDuplicate)
{
    std::string text = "{";
    for (int i = 0; i < 40; ++i)
        text += "\"k" + std::to_string(i % 20) + "\": " + std::to_string(i) + (i + 1 < 40 ? ", " : "");
    text += ", \"small\": {\"a\": 1, \"b\": 2, \"a\": 3}}";
    auto r = JsonDocument::parse(text, "test.json");
    ASSERT_TRUE(r.document);
    const JsonValue root = r.document->root();
    EXPECT_EQ(root.find("k3")->asInt(), 23);
    EXPECT_FALSE(root.find("k20"));
    EXPECT_EQ(root.find("small")->find("a")->asInt(), 3);
    EXPECT_EQ(root.find("small")->find("b")->asInt(), 2);
    EXPECT_FALSE(root.find("small")->find("c"));
    EXPECT_EQ(root.find("small")->findId(r.document->keyId("a"))->asInt(), 3);
}

TEST(JsonDocument, OffsetsStayExactFarFromTheirGroupsBase)
{
    // Values far apart (long strings between them) and containers closed late, so stored neighbours lie
    // more than 32 KiB apart in the text: every offset must still be the value's first byte.
    std::string text = "{\"a\": [";
    std::vector<std::pair<std::string, std::size_t>> expected; // token, offset
    for (int i = 0; i < 40; ++i) {
        if (i)
            text += ", ";
        if (i % 3 == 0) {
            expected.emplace_back("\"", text.size());
            text += "\"" + std::string(static_cast<std::size_t>(i) * 3000, 'x') + "\"";
        } else if (i % 3 == 1) {
            expected.emplace_back("{", text.size());
            text += "{\"k\": [1, 2], \"s\": \"" + std::string(40000, 'y') + "\"}";
        } else {
            expected.emplace_back(std::to_string(i), text.size());
            text += std::to_string(i);
        }
    }
    text += "]}";
    auto r = JsonDocument::parse(text, "test.json");
    ASSERT_TRUE(r.document);
    const JsonValue a = *r.document->root().find("a");
    ASSERT_EQ(a.size(), 40u);
    EXPECT_EQ(a.offset(), 6u);
    for (std::uint32_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a.at(i).offset(), expected[i].second) << i;
        EXPECT_EQ(text.compare(a.at(i).offset(), expected[i].first.size(), expected[i].first), 0) << i;
        if (a.at(i).isObject()) {
            const JsonValue k = *a.at(i).find("k");
            EXPECT_EQ(text[k.offset()], '[');
            EXPECT_EQ(text[k.at(1).offset()], '2');
            EXPECT_EQ(text[a.at(i).find("s")->offset()], '"');
        }
    }
    // Every value of a generated document: its offset points at a character that starts such a value.
    for (std::uint32_t n = 0; n < r.document->nodeCount(); ++n) {
        const JsonValue v(r.document.get(), n);
        const char c = text[v.offset()];
        switch (v.type()) {
        case JsonType::Object: EXPECT_EQ(c, '{') << n; break;
        case JsonType::Array: EXPECT_EQ(c, '[') << n; break;
        case JsonType::String: EXPECT_EQ(c, '"') << n; break;
        default: EXPECT_TRUE(c >= '0' && c <= '9') << n; break;
        }
    }
}

// JsonParseOptions::readPast: the parser says how far it has read for good, at container ends, going forward.
TEST(JsonDocument, ReadPastReportsOffsetsItNeverGoesBackBefore)
{
    std::string text = "[";
    std::uint32_t items = 0;
    while (text.size() < (std::size_t { 70 } << 20)) {
        text += "{\"Max\": 1.5, \"shape\": [4096, 4096], \"dtype\": \"torch.bfloat16\"},\n";
        ++items;
    }
    text += "{}]";
    std::vector<std::size_t> offsets;
    probescope::dump::JsonParseOptions options;
    options.readPast = [&](std::size_t offset) { offsets.push_back(offset); };
    const auto parsed = probescope::dump::JsonDocument::parse(text, "big.json", options);
    ASSERT_TRUE(parsed.document);
    ASSERT_GE(offsets.size(), 2u);
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        ASSERT_LE(offsets[i], text.size());
        EXPECT_TRUE(text[offsets[i] - 1] == '}' || text[offsets[i] - 1] == ']');
        if (i > 0) {
            EXPECT_GE(offsets[i] - offsets[i - 1], std::size_t { 32 } << 20);
        }
    }
    EXPECT_EQ(parsed.document->root().size(), items + 1);
}
