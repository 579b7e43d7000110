// SPDX-License-Identifier: Apache-2.0
// api_precision_compare (run-ut-spec §8) and the CSV reader/writer it shares with the runner.
#include "runut/csvio.h"

#include "tempdir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace probescope;
using namespace probescope::runut;

namespace {

std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

TEST(RunutCsv, LineQuotesLikePythonCsv)
{
    EXPECT_EQ(csvLine({ "a", " ", "" }), "a, ,\r\n");
    EXPECT_EQ(csvLine({ "x,y", "say \"hi\"", "two\nlines", "cr\r" }),
              "\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\"\r\n");
    EXPECT_EQ(csvLine({ "" }), "\"\"\r\n");
    EXPECT_EQ(csvLine({}), "\r\n");
}

TEST(RunutCsv, ParsesBomQuotesLineEndsAndLineNumbers)
{
    const std::string text = std::string(kUtf8Bom) + "h1,h2\r\n"
                                                     "a,\"b,\"\"c\"\"\"\r\n"
                                                     "\r\n"
                                                     "\"multi\nline\",x\n"
                                                     "last, \r";
    auto t = parseCsvText(text, "f.csv");
    ASSERT_TRUE(t) << t.error().format();
    EXPECT_EQ(t->header, (std::vector<std::string> { "h1", "h2" }));
    ASSERT_EQ(t->rows.size(), 3u);
    EXPECT_EQ(t->rows[0].cells, (std::vector<std::string> { "a", "b,\"c\"" }));
    EXPECT_EQ(t->rows[0].line, 2u);
    EXPECT_EQ(t->rows[1].cells, (std::vector<std::string> { "multi\nline", "x" }));
    EXPECT_EQ(t->rows[1].line, 4u);
    EXPECT_EQ(t->rows[2].cells, (std::vector<std::string> { "last", " " }));
    EXPECT_EQ(t->rows[2].line, 6u);
    EXPECT_EQ(t->column("h2"), 1u);
    EXPECT_FALSE(t->column("H2"));
}

TEST(RunutCsv, RoundTripsWhatItWrites)
{
    const std::vector<std::vector<std::string>> rows {
        { "API Name", "Message" }, { "a.b.0", "x, \"y\"\nz" }, { "", " " }, { "" }
    };
    std::string text(kUtf8Bom);
    for (const auto& r : rows)
        text += csvLine(r);
    auto t = parseCsvText(text, "mem");
    ASSERT_TRUE(t) << t.error().format();
    EXPECT_EQ(t->header, rows[0]);
    ASSERT_EQ(t->rows.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(t->rows[i].cells, rows[i + 1]);
}

TEST(RunutCsv, MalformedInputNamesFileAndLine)
{
    auto unterminated = parseCsvText("a,b\r\nx,\"open\r\nmore\r\n", "bad.csv");
    ASSERT_FALSE(unterminated);
    EXPECT_EQ(unterminated.error().id, "csv.malformed");
    EXPECT_EQ(unterminated.error().location.file, "bad.csv");
    EXPECT_EQ(unterminated.error().location.line, 2u);
    EXPECT_EQ(unterminated.error().location.column, 3u);

    auto afterQuote = parseCsvText("a,b\n1,2\n\"x\"y,z\n", "bad.csv");
    ASSERT_FALSE(afterQuote);
    EXPECT_EQ(afterQuote.error().location.line, 3u);
    EXPECT_EQ(afterQuote.error().location.column, 4u);

    auto nul = parseCsvText(std::string("a\nb\0c\n", 6), "nul.csv");
    ASSERT_FALSE(nul);
    EXPECT_EQ(nul.error().location.line, 2u);

    auto empty = parseCsvText(kUtf8Bom, "e.csv");
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().id, "csv.empty");
}

TEST(RunutCsv, CreateWritesBomAndRefusesToOverwrite)
{
    probescope::testing::TempDir dir;
    const auto p = dir.path() / "out.csv";
    ASSERT_FALSE(createCsv(p, { "API name", "Message" }));
    ASSERT_FALSE(appendCsv(p, csvLine({ "x", "y" })));
    EXPECT_EQ(slurp(p), std::string(kUtf8Bom) + "API name,Message\r\nx,y\r\n");
    auto again = createCsv(p, { "other" });
    ASSERT_TRUE(again);
    EXPECT_EQ(again->id, "csv.exists");
    EXPECT_EQ(slurp(p), std::string(kUtf8Bom) + "API name,Message\r\nx,y\r\n");
    auto missing = appendCsv(dir.path() / "none" / "x.csv", "a\r\n");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->id, "io.write");
    auto read = readCsv(p);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->rows.at(0).cells, (std::vector<std::string> { "x", "y" }));
    EXPECT_FALSE(readCsv(dir.path() / "absent.csv"));
}
