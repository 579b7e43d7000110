// SPDX-License-Identifier: Apache-2.0
// Issue 35: msprobe 26's config_check (pack compare, static pack) and merge_result against the real msprobe outputs
// of ../shared/fixtures/msprobe26_workflow (README there: which rows are set-ordered), and the hostile-zip refusals.
#include "core/compare/msprobe26/mergeresult.h"
#include "core/setupcheck/configcompare.h"
#include "core/setupcheck/configpack.h"
#include "core/setupcheck/hyperparams.h"
#include "core/setupcheck/sequencematcher.h"
#include "core/util/csv.h"
#include "core/util/fileio.h"
#include "core/util/xlsxreader.h"
#include "core/util/ziparchive.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

using namespace probescope;
using probescope::testing::fixturesDir;
using probescope::testing::testDataDir;
using probescope::testing::TempDir;

namespace {

std::filesystem::path workflow()
{
    return fixturesDir() / "msprobe26_workflow";
}

using probescope::testing::readAll;

using Records = std::vector<std::vector<std::string>>;

Records csvRecords(const std::string& text)
{
    Records out;
    for (auto& r : splitCsvRecords(text, false))
        out.push_back(std::move(r.fields));
    return out;
}

/// Rows (header kept first) with the set-ordered ones sorted by the given key columns, as the fixtures' README says
/// to compare them.
Records keyed(Records rows, const std::vector<std::size_t>& key)
{
    if (rows.empty() || key.empty())
        return rows;
    std::stable_sort(rows.begin() + 1, rows.end(), [&](const auto& a, const auto& b) {
        for (const std::size_t k : key) {
            if (a.at(k) != b.at(k))
                return a.at(k) < b.at(k);
        }
        return false;
    });
    return rows;
}

std::vector<std::size_t> keyOfSheet(const std::string& sheet)
{
    if (sheet == "weights")
        return { 0, 1, 2 }; // (step, rank, weight_name)
    if (sheet == "random")
        return { 0, 1, 2, 3 }; // (op, rank) and the stacks that tell an op's rows apart
    return {};
}

/// A cell as a comparable value: numbers by value (openpyxl writes %.16g, libxlsxwriter %.16G).
std::string normalized(const XlsxValue* v)
{
    if (!v || v->kind == XlsxValue::Kind::Empty)
        return "<empty>";
    switch (v->kind) {
    case XlsxValue::Kind::Number: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "n:%.17g", std::strtod(v->text.c_str(), nullptr) + 0.0);
        return buf;
    }
    case XlsxValue::Kind::Bool:
        return "b:" + v->text;
    case XlsxValue::Kind::Text:
        return v->text.empty() ? "<empty>" : "s:" + v->text;
    default:
        return "e:" + v->text;
    }
}

std::map<std::string, Records> workbookCells(const std::filesystem::path& xlsx, std::vector<std::string>* order)
{
    auto sheets = readXlsxSheets(xlsx);
    EXPECT_TRUE(sheets.ok()) << (sheets.ok() ? "" : sheets.error().format());
    std::map<std::string, Records> out;
    if (!sheets)
        return out;
    for (const auto& sheet : *sheets) {
        if (order)
            order->push_back(sheet.name);
        std::uint32_t width = 0;
        for (const auto& row : sheet.rows)
            for (const auto& [c, v] : row.cells)
                width = std::max(width, c + 1);
        Records rows;
        for (const auto& row : sheet.rows) {
            std::vector<std::string> cells;
            for (std::uint32_t c = 0; c < width; ++c)
                cells.push_back(normalized(row.at(c)));
            rows.push_back(std::move(cells));
        }
        out[sheet.name] = keyed(std::move(rows), keyOfSheet(sheet.name));
    }
    return out;
}

class ConfigCheckFixture : public ::testing::TestWithParam<std::string>
{
};

} // namespace

TEST_P(ConfigCheckFixture, ResultWorkbookAndSheetCsvsEqualMsprobes)
{
    const auto caseDir = workflow() / "config_check" / GetParam();
    if (!std::filesystem::exists(caseDir))
        GTEST_SKIP() << "fixtures missing: " << caseDir;
    TempDir tmp;
    const auto out = tmp.path() / "out";
    auto outcome = setupcheck::compareConfigPacks(caseDir / "inputs/bench.zip", caseDir / "inputs/cmp.zip", out);
    ASSERT_TRUE(outcome.ok()) << outcome.error().format();

    // Cells, sheet by sheet, in msprobe's sheet order.
    std::vector<std::string> expectedOrder, ourOrder;
    const auto expected = workbookCells(caseDir / "expected/result.xlsx", &expectedOrder);
    const auto ours = workbookCells(out / "result.xlsx", &ourOrder);
    EXPECT_EQ(ourOrder, expectedOrder);
    for (const auto& [sheet, rows] : expected) {
        ASSERT_TRUE(ours.count(sheet)) << sheet;
        EXPECT_EQ(ours.at(sheet), rows) << "sheet " << sheet;
    }

    // The CSV per sheet, text for text (set-ordered rows keyed).
    std::size_t csvs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(caseDir / "expected")) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("result.", 0) != 0 || entry.path().extension() != ".csv")
            continue;
        const std::string sheet = name.substr(7, name.size() - 11);
        ++csvs;
        ASSERT_TRUE(std::filesystem::exists(out / name)) << name;
        EXPECT_EQ(keyed(csvRecords(readAll(out / name)), keyOfSheet(sheet)),
                  keyed(csvRecords(readAll(entry.path())), keyOfSheet(sheet)))
            << name;
        if (keyOfSheet(sheet).empty()) {
            EXPECT_EQ(readAll(out / name), readAll(entry.path())) << name << " byte for byte";
        }
    }
    EXPECT_EQ(csvs, outcome->files.size() - 1);
    // The packs were extracted where msprobe extracts them.
    EXPECT_TRUE(std::filesystem::is_regular_file(out / "bench/env"));
    EXPECT_TRUE(std::filesystem::is_regular_file(out / "cmp/pip"));

    // Never replacing: the same output folder again is refused, and the first result is kept.
    const std::string before = readAll(out / "result.xlsx");
    auto again = setupcheck::compareConfigPacks(caseDir / "inputs/bench.zip", caseDir / "inputs/cmp.zip", out);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().id, "config-check.output");
    EXPECT_EQ(readAll(out / "result.xlsx"), before);
}

INSTANTIATE_TEST_SUITE_P(Msprobe26, ConfigCheckFixture,
                         ::testing::Values("static_gpu_vs_npu", "static_identical", "dynamic_weights_dataset_random"));

TEST(ConfigCheck, StaticPackHyperparametersEqualMsprobesPack)
{
    // Our pack of the same launch script and YAML holds msprobe's hyperparameters_static.json byte for byte.
    for (const char* c : { "static_gpu_vs_npu", "static_identical", "dynamic_weights_dataset_random" }) {
        for (const char* side : { "bench", "cmp" }) {
            const auto dir = workflow() / "config_check" / c / "inputs" / side;
            if (!std::filesystem::exists(dir))
                GTEST_SKIP() << "fixtures missing";
            std::vector<std::filesystem::path> scripts { dir / "train.sh" };
            if (std::filesystem::exists(dir / "train_config.yaml"))
                scripts.push_back(dir / "train_config.yaml");
            std::vector<std::string> notes;
            auto hyper = setupcheck::collectHyperparameters(scripts, notes);
            ASSERT_TRUE(hyper.ok()) << hyper.error().format();
            auto zip = ZipReader::open(workflow() / "config_check" / c / "inputs" / (std::string(side) + ".zip"));
            ASSERT_TRUE(zip.ok());
            const auto* entry = (*zip)->find("hyperparameters/hyperparameters_static.json");
            ASSERT_NE(entry, nullptr);
            auto theirs = (*zip)->read(*entry);
            ASSERT_TRUE(theirs.ok());
            EXPECT_EQ(setupcheck::pyJsonDumps(*hyper), *theirs) << c << "/" << side;
        }
    }
}

TEST(ConfigCheck, OurPackComparedWithMsprobesPackOfTheSameInputs)
{
    const auto caseDir = workflow() / "config_check/static_gpu_vs_npu";
    if (!std::filesystem::exists(caseDir))
        GTEST_SKIP() << "fixtures missing";
    // The environment and pip list msprobe recorded (pack_spec.json's synthetic ones), packed by us.
    auto theirs = ZipReader::open(caseDir / "inputs/bench.zip");
    ASSERT_TRUE(theirs.ok());
    auto env = setupcheck::parsePyJson(*(*theirs)->read(*(*theirs)->find("env")), "env");
    ASSERT_TRUE(env.ok());
    setupcheck::PackInputs inputs;
    for (const auto& [k, v] : env->items())
        inputs.environ.push_back(k + "=" + v.get<std::string>());
    inputs.pip = *(*theirs)->read(*(*theirs)->find("pip"));
    inputs.scripts = { caseDir / "inputs/bench/train.sh", caseDir / "inputs/bench/train_config.yaml" };
    TempDir tmp;
    auto pack = setupcheck::writeStaticPack(inputs, tmp.path() / "ours.zip");
    ASSERT_TRUE(pack.ok()) << pack.error().format();
    EXPECT_EQ(pack->entries,
              (std::vector<std::string> { "env", "pip", "hyperparameters/hyperparameters_static.json" }));
    // Every entry equals msprobe's, byte for byte.
    auto ours = ZipReader::open(tmp.path() / "ours.zip");
    ASSERT_TRUE(ours.ok());
    for (const auto& entry : (*theirs)->entries())
        EXPECT_EQ(*(*ours)->read(*(*ours)->find(entry.name)), *(*theirs)->read(entry)) << entry.name;
    // Our pack against msprobe's cmp pack gives msprobe's result for its own bench pack.
    auto outcome = setupcheck::compareConfigPacks(tmp.path() / "ours.zip", caseDir / "inputs/cmp.zip", tmp.path() / "out");
    ASSERT_TRUE(outcome.ok()) << outcome.error().format();
    for (const char* sheet : { "summary", "env", "pip", "hyperparameters" })
        EXPECT_EQ(readAll(tmp.path() / "out" / ("result." + std::string(sheet) + ".csv")),
                  readAll(caseDir / ("expected/result." + std::string(sheet) + ".csv")))
            << sheet;
    // A pack is never replaced.
    auto again = setupcheck::writeStaticPack(inputs, tmp.path() / "ours.zip");
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().id, "zip.write");
}

TEST(ConfigCheck, PipListFromSiteFoldersWithoutRunningPython)
{
    TempDir tmp;
    const auto prefix = tmp.path() / "py";
    tmp.write("py/bin/python3.11", "#!/bin/false\n");
    std::filesystem::permissions(prefix / "bin/python3.11", std::filesystem::perms::owner_all);
    std::filesystem::create_symlink("python3.11", prefix / "bin/python3");
    tmp.write("py/lib/python3.11/site-packages/numpy-1.26.4.dist-info/METADATA",
              "Metadata-Version: 2.1\nName: numpy\nVersion: 1.26.4\n\nName: not-a-header\n");
    tmp.write("py/lib/python3.11/site-packages/old_pkg.egg-info/PKG-INFO", "Name: old-pkg\nVersion: 0.1\n");
    tmp.write("py/lib/python3.11/site-packages/empty-1.0.dist-info/METADATA", "");
    tmp.write("py/lib/python3.11/site-packages/numpy/__init__.py", "");
    const auto listing = setupcheck::listPythonPackages((prefix / "bin").string() + ":/nonexistent", "");
    EXPECT_EQ(listing.python, prefix / "bin/python3");
    EXPECT_EQ(listing.text, "numpy=1.26.4\nold-pkg=0.1\n");
    EXPECT_EQ(setupcheck::listPythonPackages("/nonexistent", "").text, "");
}

TEST(ConfigCheck, ShellAndYamlParsersFollowMsprobesRules)
{
    const std::string script = "LR=1e-4\n"
                               "# --commented 1\n"
                               "MODEL_ARGS=\"--num-layers 2 \\\n --flag\"\n"
                               "torchrun --nproc_per_node 8 pretrain.py \\\n    $MODEL_ARGS \\\n"
                               "    --lr $LR --x ${LR} --seed 7 # tail\n";
    // Expected: what msprobe 26's ShellParser().parse() gives for this script (json.dumps(indent=4)).
    const auto h = setupcheck::parseShellHyperparameters(script);
    EXPECT_EQ(setupcheck::pyJsonDumps(h), "{\n    \"nproc_per_node\": \"8\",\n    \"num-layers\": \"2\",\n"
                                          "    \"flag\": true,\n    \"lr\": \"1e-4\",\n    \"x\": \"1e-4\",\n"
                                          "    \"seed\": \"7\"\n}");
    // PyYAML's YAML 1.1 typing: 1.25e-6 is a float (signed exponent), 3e-4 a string, yes a bool, 0o7 a string;
    // expected = msprobe 26's YamlParser().parse() of the same text.
    setupcheck::PyJson into = setupcheck::PyJson::object();
    ASSERT_FALSE(setupcheck::parseYamlHyperparameters(
        "a:\n  lr: 1.25e-6\n  wd: 3e-4\n  b: yes\n  oct: 010\n  o: 0o7\n  n: ~\n  l: [1, 2]\n  m: [{x: 1}]\n", "t.yaml",
        into));
    EXPECT_EQ(setupcheck::pyJsonDumps(into),
              "{\n    \"a.lr\": 1.25e-06,\n    \"a.wd\": \"3e-4\",\n    \"a.b\": true,\n    \"a.oct\": 8,\n"
              "    \"a.o\": \"0o7\",\n    \"a.l\": [\n        1,\n        2\n    ],\n    \"a.m.0.x\": 1\n}");
    EXPECT_TRUE(setupcheck::parseYamlHyperparameters("a: [", "bad.yaml", into).has_value());
}

TEST(ConfigCheck, SequenceMatcherRatioEqualsPythonsDifflib)
{
    // Values printed by Python 3.11's difflib.SequenceMatcher(None, a, b).ratio().
    using setupcheck::sequenceMatcherRatio;
    EXPECT_EQ(sequenceMatcherRatio("global_batch_size", "micro_batch_size"), 0.7272727272727273);
    EXPECT_EQ(sequenceMatcherRatio("lr", "min_lr"), 0.5);
    EXPECT_EQ(sequenceMatcherRatio("hidden_dropout", "attention_dropout"), 0.6451612903225806);
    EXPECT_EQ(sequenceMatcherRatio("seq_length", "seq_len"), 0.8235294117647058);
    EXPECT_EQ(sequenceMatcherRatio("abcd", "bcda"), 0.75);
    EXPECT_EQ(sequenceMatcherRatio("", "x"), 0.0);
    EXPECT_EQ(sequenceMatcherRatio("", ""), 1.0);
    std::string longA, longB;
    for (int i = 0; i < 150; ++i)
        longA += "ab";
    longA += "xyz";
    for (int i = 0; i < 120; ++i)
        longB += "ba";
    longB += std::string(90, 'q') + "xyz";
    // len(b) >= 200: autojunk drops the popular 'a', 'b' and 'q' from b's index.
    EXPECT_EQ(sequenceMatcherRatio(longA, longB), 0.009433962264150943);
    EXPECT_EQ(sequenceMatcherRatio(longB, longA), 0.009433962264150943);
    EXPECT_EQ(sequenceMatcherRatio("tokens = torch.randint(0, vocab, (2, 6))", "tokens = torch.randint(0, vocab, (2, 8))"),
              0.975);
    EXPECT_EQ(sequenceMatcherRatio("größe_ä", "grosse_a"), 0.5333333333333333); // code points, not bytes
}

namespace {

struct HostileCase
{
    const char* zip;
    const char* id;
    const char* entry;
};

class HostileZip : public ::testing::TestWithParam<HostileCase>
{
};

} // namespace

TEST_P(HostileZip, RefusedNamingTheZipAndEntryWithNothingWritten)
{
    const auto& c = GetParam();
    const auto evil = testDataDir() / "configcheck" / c.zip;
    TempDir tmp;
    const auto out = tmp.path() / "out";
    const auto good = workflow() / "config_check/static_identical/inputs/cmp.zip";
    for (const bool evilFirst : { true, false }) {
        auto outcome = evilFirst ? setupcheck::compareConfigPacks(evil, evil, out)
                                 : setupcheck::compareConfigPacks(good, evil, out);
        ASSERT_FALSE(outcome.ok());
        EXPECT_EQ(outcome.error().id, c.id);
        EXPECT_NE(outcome.error().message.find(evil.string()), std::string::npos) << outcome.error().message;
        EXPECT_NE(outcome.error().message.find(c.entry), std::string::npos) << outcome.error().message;
        // Refused before anything is created: no OUT, nothing beside it.
        EXPECT_FALSE(std::filesystem::exists(out));
        EXPECT_FALSE(std::filesystem::exists(tmp.path() / "escaped.txt"));
        if (!std::filesystem::exists(good))
            break;
    }
    EXPECT_FALSE(std::filesystem::exists("/tmp/probescope-absolute-entry.txt"));
}

INSTANTIATE_TEST_SUITE_P(Zips, HostileZip,
                         ::testing::Values(HostileCase { "evil_dotdot.zip", "zip.entry-path", "'../escaped.txt'" },
                                           HostileCase { "evil_absolute.zip", "zip.entry-path",
                                                         "'/tmp/probescope-absolute-entry.txt'" },
                                           HostileCase { "evil_symlink.zip", "zip.symlink", "'env'" },
                                           HostileCase { "bomb.zip", "zip.bomb",
                                                         "'hyperparameters/hyperparameters_static.json'" }));

TEST(ZipArchive, LimitsOnCountSizeAndTotal)
{
    TempDir tmp;
    std::vector<std::pair<std::string, std::string>> entries;
    for (int i = 0; i < 5; ++i)
        entries.emplace_back("d/f" + std::to_string(i), std::string(1000, static_cast<char>('a' + i)));
    ASSERT_TRUE(writeZip(tmp.path() / "z.zip", entries).ok());
    ZipLimits few;
    few.maxEntries = 4;
    EXPECT_EQ(ZipReader::open(tmp.path() / "z.zip", few).error().id, "zip.too-many");
    ZipLimits small;
    small.maxEntryBytes = 999;
    EXPECT_EQ(ZipReader::open(tmp.path() / "z.zip", small).error().id, "zip.bomb");
    ZipLimits total;
    total.maxTotalBytes = 4500;
    EXPECT_EQ(ZipReader::open(tmp.path() / "z.zip", total).error().id, "zip.bomb");
    auto ok = ZipReader::open(tmp.path() / "z.zip");
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*(*ok)->read(*(*ok)->find("d/f3")), std::string(1000, 'd'));
    // Extraction never replaces: a planted file (or symlink) at an entry's name stops it.
    std::filesystem::create_directories(tmp.path() / "x/d");
    std::filesystem::create_symlink("/etc/passwd", tmp.path() / "x/d/f2");
    auto extracted = extractZip(**ok, tmp.path() / "x");
    ASSERT_FALSE(extracted.ok());
    EXPECT_EQ(extracted.error().id, "zip.extract");
    EXPECT_TRUE(std::filesystem::is_symlink(tmp.path() / "x/d/f2"));
    // A folder in the way that is a symlink is refused too.
    std::filesystem::create_directories(tmp.path() / "y");
    std::filesystem::create_directory_symlink(tmp.path() / "x", tmp.path() / "y/d");
    EXPECT_FALSE(extractZip(**ok, tmp.path() / "y").ok());
    // Not a zip at all.
    tmp.write("not.zip", "hello");
    EXPECT_EQ(ZipReader::open(tmp.path() / "not.zip").error().id, "zip.open");
}

namespace {

struct MergeCase
{
    const char* caseName;
    const char* config;
};

class MergeFixture : public ::testing::TestWithParam<MergeCase>
{
};

} // namespace

TEST_P(MergeFixture, MergedWorkbookAndCsvsEqualMsprobes)
{
    const auto& c = GetParam();
    const auto caseDir = workflow() / "merge_result" / c.caseName;
    if (!std::filesystem::exists(caseDir))
        GTEST_SKIP() << "fixtures missing";
    TempDir tmp;
    auto outcome = compare::msprobe26::mergeResult(caseDir / "inputs/compare_out", tmp.path() / "out",
                                                   caseDir / "inputs" / (std::string(c.config) + ".yaml"));
    ASSERT_TRUE(outcome.ok()) << outcome.error().format();
    std::filesystem::path expectedXlsx;
    for (const auto& e : std::filesystem::directory_iterator(caseDir / "expected" / c.config)) {
        if (e.path().extension() == ".xlsx")
            expectedXlsx = e.path();
    }
    ASSERT_FALSE(expectedXlsx.empty());
    const std::string ourName = outcome->files.front().filename().string();
    EXPECT_EQ(ourName.rfind("multi_ranks_compare_merge_", 0), 0u);
    std::vector<std::string> expectedOrder, ourOrder;
    const auto expected = workbookCells(expectedXlsx, &expectedOrder);
    const auto ours = workbookCells(outcome->files.front(), &ourOrder);
    EXPECT_EQ(ourOrder, expectedOrder);
    EXPECT_EQ(ours, expected);
    const std::string expectedBase = expectedXlsx.stem().string();
    const std::string ourBase = outcome->files.front().stem().string();
    for (const auto& sheet : expectedOrder) {
        EXPECT_EQ(readAll(tmp.path() / "out" / (ourBase + "." + sheet + ".csv")),
                  readAll(expectedXlsx.parent_path() / (expectedBase + "." + sheet + ".csv")))
            << sheet;
    }
    // A second run in the same second gets a free name; the first workbook is kept.
    auto again = compare::msprobe26::mergeResult(caseDir / "inputs/compare_out", tmp.path() / "out",
                                                 caseDir / "inputs" / (std::string(c.config) + ".yaml"));
    ASSERT_TRUE(again.ok());
    EXPECT_NE(again->files.front(), outcome->files.front());
}

INSTANTIATE_TEST_SUITE_P(Msprobe26, MergeFixture,
                         ::testing::Values(MergeCase { "summary_3ranks", "merge_selected" },
                                           MergeCase { "summary_3ranks", "merge_all_indexes" },
                                           MergeCase { "all_mode_3ranks", "merge_cos" }));

TEST(MergeResult, BadInputsAreClearErrors)
{
    TempDir tmp;
    tmp.write("cfg/empty.yaml", "");
    tmp.write("cfg/noapi.yaml", "compare_index:\n  - Cosine\n");
    tmp.write("cfg/ok.yaml", "api:\n  - all_reduce\n");
    EXPECT_EQ(compare::msprobe26::loadMergeConfig(tmp.path() / "cfg/empty.yaml").error().id, "merge.config");
    EXPECT_EQ(compare::msprobe26::loadMergeConfig(tmp.path() / "cfg/noapi.yaml").error().id, "merge.config");
    tmp.write("in/compare_result_rank0_20260101000000.xlsx", "not a zip");
    tmp.write("in/compare_result_rank1_20260101000000.xlsx", "not a zip");
    auto bad = compare::msprobe26::mergeResult(tmp.path() / "in", tmp.path() / "out", tmp.path() / "cfg/ok.yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().id, "zip.open");
    EXPECT_NE(bad.error().message.find("compare_result_rank0_20260101000000.xlsx"), std::string::npos);
    tmp.write("in2/result.xlsx", "x");
    tmp.write("in2/compare_result_rank1_20260101000000.xlsx", "x");
    auto name = compare::msprobe26::mergeResult(tmp.path() / "in2", tmp.path() / "out", tmp.path() / "cfg/ok.yaml");
    ASSERT_FALSE(name.ok());
    EXPECT_NE(name.error().message.find("Wrong compare result name: result.xlsx"), std::string::npos);
}

TEST(XlsxReader, HostileWorkbooksAreClearErrors)
{
    TempDir tmp;
    const std::string contentTypes = "<?xml version=\"1.0\"?><Types/>";
    const std::string workbook = "<workbook><sheets><sheet name=\"S\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";
    const std::string rels = "<Relationships><Relationship Id=\"rId1\" Target=\"worksheets/sheet1.xml\"/></Relationships>";
    auto book = [&](const std::string& name, const std::string& sheet, const std::string& shared) {
        std::vector<std::pair<std::string, std::string>> parts { { "[Content_Types].xml", contentTypes },
                                                                 { "xl/workbook.xml", workbook },
                                                                 { "xl/_rels/workbook.xml.rels", rels },
                                                                 { "xl/worksheets/sheet1.xml", sheet } };
        if (!shared.empty())
            parts.emplace_back("xl/sharedStrings.xml", shared);
        EXPECT_TRUE(writeZip(tmp.path() / name, parts).ok());
        return tmp.path() / name;
    };
    // A well-formed sheet: shared, inline, number, bool, rich text with a phonetic run, entities.
    auto good = readXlsxSheets(book("good.xlsx",
                                    "<worksheet><sheetData><row r=\"1\"><c r=\"A1\" t=\"s\"><v>1</v></c>"
                                    "<c r=\"C1\" t=\"inlineStr\"><is><t>a&amp;b&#x4e2d;</t></is></c></row>"
                                    "<row r=\"3\"><c r=\"A3\"><v>-0.5E-3</v></c><c r=\"B3\" t=\"b\"><v>1</v></c></row>"
                                    "</sheetData></worksheet>",
                                    "<sst><si><t>x</t></si><si><r><t>y</t></r><r><t>z</t></r><rPh><t>P</t></rPh></si></sst>"));
    ASSERT_TRUE(good.ok()) << good.error().format();
    ASSERT_EQ(good->size(), 1u);
    const auto& rows = good->front().rows;
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].at(0)->text, "yz");
    EXPECT_EQ(rows[0].at(2)->text, "a&b\xe4\xb8\xad");
    EXPECT_EQ(rows[1].row, 2u);
    EXPECT_EQ(rows[1].at(0)->kind, XlsxValue::Kind::Number);
    EXPECT_EQ(rows[1].at(0)->text, "-0.5E-3");
    EXPECT_EQ(rows[1].at(1)->kind, XlsxValue::Kind::Bool);
    // Broken parts: each an error naming the file, never a crash.
    for (const auto& [name, sheet] : std::vector<std::pair<std::string, std::string>> {
             { "badref.xlsx", "<worksheet><sheetData><row r=\"1\"><c r=\"ZZZZ1\"><v>1</v></c></row></sheetData></worksheet>" },
             { "badrow.xlsx", "<worksheet><sheetData><row r=\"99999999\"><c><v>1</v></c></row></sheetData></worksheet>" },
             { "badshared.xlsx", "<worksheet><sheetData><row><c t=\"s\"><v>7</v></c></row></sheetData></worksheet>" },
             { "orphan.xlsx", "<worksheet><sheetData><c><v>1</v></c></sheetData></worksheet>" },
             { "cut.xlsx", "<worksheet><sheetData><row><c><v>1" } }) {
        auto bad = readXlsxSheets(book(name, sheet, ""));
        ASSERT_FALSE(bad.ok()) << name;
        EXPECT_EQ(bad.error().id, "xlsx.read") << name;
        EXPECT_NE(bad.error().message.find(name), std::string::npos) << bad.error().message;
    }
    // A missing part.
    ASSERT_TRUE(writeZip(tmp.path() / "nobook.xlsx", { { "x", "y" } }).ok());
    EXPECT_EQ(readXlsxSheets(tmp.path() / "nobook.xlsx").error().id, "xlsx.read");
    // Bounded in cells.
    XlsxReadLimits few;
    few.maxCells = 2;
    EXPECT_EQ(readXlsxSheets(tmp.path() / "good.xlsx", few).error().id, "xlsx.read");
}
