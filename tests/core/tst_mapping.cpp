// SPDX-License-Identifier: Apache-2.0
// The mapping options of compare-spec §3.6 (-cm, -am, -dm, -lm) in both profiles. The expected values are
// derived by hand in tests/data/mapping/README.md; each test repeats the step it checks.
#include "core/compare/pipeline/comparerun.h"
#include "core/compare/match/mapping.h"
#include "core/compare/table/pytext.h"
#include "tempdir.h"
#include "testconfig.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace probescope;
using namespace probescope::compare;
using probescope::testing::readAll;
using probescope::testing::TempDir;
using probescope::testing::testDataDir;

namespace {

std::filesystem::path mappingData()
{
    return testDataDir() / "mapping";
}

struct PairRun
{
    std::shared_ptr<const CompareTable> table;
    PairResult pair;
};

/// Runs the job on one of the hand-made pairs (ms_pt or layer) and returns its single table.
PairRun runPair(const std::string& set, JobOptions options, const TempDir& dir)
{
    CompareInput input;
    input.npuPath = mappingData() / set / "npu/dump.json";
    input.benchPath = mappingData() / set / "bench/dump.json";
    options.advisor = false;
    options.timestamp = "20000101000000";
    auto results = runCompareJob(input, dir.path() / "out", options);
    EXPECT_TRUE(results.ok()) << (results.ok() ? "" : results.error().format());
    if (!results.ok() || results->size() != 1)
        return {};
    return { results->front().table, results->front() };
}

std::size_t matchedRows(const CompareTable& t)
{
    return static_cast<std::size_t>(std::count(t.matched.begin(), t.matched.end(), true));
}

/// Bench Name of the row whose NPU Name is `npu` ("" when there is no such row).
std::string benchOf(const CompareTable& t, const std::string& npu)
{
    for (const auto& row : t.rows) {
        if (row[0].isString() && row[0].asString() == npu)
            return excelText(row[1]);
    }
    return {};
}

std::filesystem::path yaml(const std::string& set, const std::string& name)
{
    return mappingData() / set / name;
}

} // namespace

// ---------------------------------------------------------------------------------------------------------
// Name rules (§3.6)

TEST(MappingNames, CellMapping)
{
    const CellMapping none;
    CellMapping file;
    file.pairs = { { "fc1.Dense", "fc1.Linear" }, { "Dense", "Linear" } };
    // Neither .forward./.backward. nor a parameters_grad segment: N/A.
    EXPECT_EQ(cellMappedName("Cell.fc1.Dense.debug", none, true), "N/A");
    EXPECT_EQ(cellMappedName("", none, true), "N/A");
    // Without a file only the first "Cell" becomes "Module".
    EXPECT_EQ(cellMappedName("Cell.fc1.Dense.forward.0.input.0", none, true), "Module.fc1.Dense.forward.0.input.0");
    // The cell path (after the first '.', before .forward.) is a key: replaced once.
    EXPECT_EQ(cellMappedName("Cell.fc1.Dense.forward.0.input.0", file, false), "Module.fc1.Linear.forward.0.input.0");
    EXPECT_EQ(cellMappedName("Cell.fc1.Dense.parameters_grad.weight", file, false),
              "Module.fc1.Linear.parameters_grad.weight");
    EXPECT_EQ(cellMappedName("Cell.fc1.Dense.backward.0.output.0", file, false), "Module.fc1.Linear.backward.0.output.0");
    // Not a key: msprobe 26 tries each pair as a substring of the cell path ("fc2.Dense" contains "Dense");
    // the msprobe-1.2 profile does not.
    EXPECT_EQ(cellMappedName("Cell.fc2.Dense.forward.0.input.0", file, true), "Module.fc2.Linear.forward.0.input.0");
    EXPECT_EQ(cellMappedName("Cell.fc2.Dense.forward.0.input.0", file, false), "Module.fc2.Dense.forward.0.input.0");
    // PyTorch names (msprobe 26 allows -cm there): the first "Cell" anywhere is replaced, even inside a class.
    EXPECT_EQ(cellMappedName("Module.rnn.LSTMCell.forward.0.input.0", none, true), "Module.rnn.LSTMModule.forward.0.input.0");
}

TEST(MappingNames, ApiPrefixRules)
{
    EXPECT_EQ(apiPrefixMapped("Mint.add.0.forward.input.0"), "Torch.add.0.forward.input.0");
    EXPECT_EQ(apiPrefixMapped("MintFunctional.relu.0.backward.output.0"), "Functional.relu.0.backward.output.0");
    // Every occurrence, as Python's str.replace.
    EXPECT_EQ(apiPrefixMapped("Mint.Mintx.0.forward.input.0"), "Torch.Torchx.0.forward.input.0");
    // The built-in ms_to_pt_api.yaml table is not shipped: other prefixes stay.
    EXPECT_EQ(apiPrefixMapped("Functional.dense.0.forward.input.0"), "Functional.dense.0.forward.input.0");
    EXPECT_EQ(apiPrefixMapped("Cell.fc1.Dense.forward.0.input.0"), "Cell.fc1.Dense.forward.0.input.0");
    EXPECT_EQ(apiNameOf("Functional.dense.0.forward.input.0"), "Functional.dense");
    EXPECT_EQ(apiNameOf("Tensor"), "Tensor");
}

TEST(MappingNames, UserRuleKeys)
{
    ApiMappingRule rule;
    rule.msApi = "Functional.dense";
    rule.ptApi = "Functional.linear";
    rule.ms[0] = { "0", "1" };
    rule.pt[0] = { "1", "0" };
    rule.ms[1] = { "0" };
    rule.pt[1] = { "0" };
    const std::string entry = "Functional.linear.0.forward";
    EXPECT_EQ(userRuleKey(rule, ApiPart::Args, entry + ".input.0", entry), entry + ".input.1");
    EXPECT_EQ(userRuleKey(rule, ApiPart::Args, entry + ".input.1", entry), entry + ".input.0");
    EXPECT_FALSE(userRuleKey(rule, ApiPart::Args, entry + ".input.2", entry)); // listed nowhere: abandoned
    EXPECT_FALSE(userRuleKey(rule, ApiPart::Args, entry + ".input.0.1", entry)); // a nested element is not "0"
    EXPECT_EQ(userRuleKey(rule, ApiPart::Outputs, entry + ".output.0", entry), entry + ".output.0");
    EXPECT_FALSE(userRuleKey(rule, ApiPart::Parameters, entry + ".parameters.weight", entry));
}

TEST(MappingNames, DtypeHelpers)
{
    EXPECT_EQ(dtypeClass("Int32"), "int");
    EXPECT_EQ(dtypeClass("torch.int64"), "int");
    EXPECT_EQ(dtypeClass("BFloat16"), "float");
    EXPECT_EQ(dtypeClass("torch.bool"), "bool");
    EXPECT_EQ(dtypeClass("Complex64"), "complex");
    EXPECT_EQ(dtypeClass("<class 'int'>"), "<class 'int'>");
    EXPECT_EQ(torchDtypeName("Float32"), "torch.float32");
    EXPECT_EQ(torchDtypeName("BFloat16"), "torch.bfloat16");
    EXPECT_EQ(torchDtypeName("UInt8"), "torch.uint8");
    EXPECT_EQ(torchDtypeName("torch.float16"), "torch.float16");
    EXPECT_EQ(torchDtypeName("<class 'float'>"), "<class 'float'>");
}

TEST(MappingNames, EntryMappingExpandsBySuffix)
{
    // Rows pair by the text after the entry key; a suffix the bench entry lacks maps to N/A, and so does
    // every row of an entry mapped to N/A.
    const RowNamesOf rows = [](bool bench, std::string_view key) -> std::vector<std::string> {
        const std::string k(key);
        if (!bench && k == "Cell.n.LayerNorm.forward.0")
            return { k + ".input.0", k + ".parameters.gamma", k + ".output.0" };
        if (bench && k == "Module.n.LayerNorm.forward.0")
            return { k + ".input.0", k + ".parameters.weight", k + ".output.0" };
        if (!bench && k == "Mint.zeros.0.forward")
            return { k + ".output.0" };
        return {};
    };
    const auto mapping = expandEntryMapping(
        { { "Cell.n.LayerNorm.forward.0", "Module.n.LayerNorm.forward.0" }, { "Mint.zeros.0.forward", "N/A" } }, rows, "x");
    const std::vector<std::pair<std::string, std::string>> expected = {
        { "Cell.n.LayerNorm.forward.0.input.0", "Module.n.LayerNorm.forward.0.input.0" },
        { "Cell.n.LayerNorm.forward.0.parameters.gamma", "N/A" },
        { "Cell.n.LayerNorm.forward.0.output.0", "Module.n.LayerNorm.forward.0.output.0" },
        { "Mint.zeros.0.forward.output.0", "N/A" },
    };
    EXPECT_EQ(mapping.pairs, expected);
    EXPECT_EQ(dataMappingYaml(mapping).rfind("Cell.n.LayerNorm.forward.0.input.0: Module.n.LayerNorm.forward.0.input.0\n"
                                             "Cell.n.LayerNorm.forward.0.parameters.gamma: N/A\n",
                                             0),
              0u);
}

// ---------------------------------------------------------------------------------------------------------
// Mapping files

TEST(MappingFiles, ReadTheShippedExamples)
{
    auto cell = readCellMapping(yaml("ms_pt", "cell_mapping.yaml"));
    ASSERT_TRUE(cell.ok()) << cell.error().format();
    ASSERT_EQ(cell->pairs.size(), 1u);
    EXPECT_EQ(cell->pairs[0].second, "fc1.Linear");

    Diagnostics warnings;
    auto api = readApiMapping(yaml("ms_pt", "api_mapping.yaml"), &warnings);
    ASSERT_TRUE(api.ok()) << api.error().format();
    ASSERT_EQ(api->rules.size(), 2u);
    EXPECT_TRUE(api->rules[0].usable);
    EXPECT_EQ(api->rules[0].pt[0], (std::vector<std::string> { "1", "0" }));
    // Second item: ms_args has two entries, pt_args one -> ignored, with a warning at the item.
    EXPECT_FALSE(api->rules[1].usable);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].id, "compare.mapping-ignored");
    EXPECT_EQ(warnings[0].location.line, 9u);

    auto layer = readLayerMapping(yaml("layer", "layer_mapping.yaml"));
    ASSERT_TRUE(layer.ok()) << layer.error().format();
    ASSERT_EQ(layer->classes.size(), 2u);
    EXPECT_EQ(layer->classes[0].first, "TopLayer"); // "Cell" is the old name
    EXPECT_EQ(layer->classes[0].second[0].levels, 2u);
    EXPECT_EQ(layer->classes[1].second[0].target, "act"); // "(GELU)" dropped
}

TEST(MappingFiles, SpellingsAndOrder)
{
    TempDir dir;
    // "ms_output" (what msprobe 26's code reads) is accepted beside the documented "ms_outputs".
    auto api = readApiMapping(dir.write("api.yaml", "- {ms_api: A.x, pt_api: B.y, ms_output: [1], pt_output: [0]}\n"));
    ASSERT_TRUE(api.ok()) << api.error().format();
    EXPECT_EQ(api->rules[0].ms[1], (std::vector<std::string> { "1" }));
    // Layer rules: longest first, file order among equals; a later TopLayer item replaces "Cell".
    auto layer = readLayerMapping(dir.write("layer.yaml", "Cell: {a: b}\nX: {p: q, p.r.s: t, p.r: u}\nTopLayer: {c: d}\n"));
    ASSERT_TRUE(layer.ok()) << layer.error().format();
    ASSERT_EQ(layer->classes.size(), 2u);
    EXPECT_EQ(layer->classes[0].second[0].origin, "c");
    const auto& x = layer->classes[1].second;
    EXPECT_EQ(x[0].origin, "p.r.s");
    EXPECT_EQ(x[1].origin, "p.r");
    EXPECT_EQ(x[2].origin, "p");
    // An empty file is an empty mapping (the option without a file).
    auto empty = readCellMapping(dir.write("empty.yaml", "# nothing\n"));
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->pairs.empty());
}

TEST(MappingFiles, BadFilesNameFileAndPosition)
{
    TempDir dir;
    auto broken = readCellMapping(dir.write("broken.yaml", "a: b\nc: [d\n"));
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().id, "compare.mapping");
    EXPECT_NE(broken.error().location.file.find("broken.yaml"), std::string::npos);
    EXPECT_GE(broken.error().location.line, 2u);

    auto list = readCellMapping(dir.write("list.yaml", "- a\n"));
    ASSERT_FALSE(list.ok());
    EXPECT_EQ(list.error().location.line, 1u);

    auto noPt = readApiMapping(dir.write("nopt.yaml", "- ms_api: A.x\n  ms_args: [0]\n"));
    ASSERT_FALSE(noPt.ok());
    EXPECT_NE(noPt.error().message.find("pt_api"), std::string::npos);
    EXPECT_EQ(noPt.error().location.line, 1u);

    auto notList = readApiMapping(dir.write("notlist.yaml", "- ms_api: A.x\n  pt_api: B.y\n  ms_args: 0\n"));
    ASSERT_FALSE(notList.ok());
    EXPECT_EQ(notList.error().location.line, 3u);
    EXPECT_EQ(notList.error().location.column, 12u);

    auto nested = readLayerMapping(dir.write("nested.yaml", "Block:\n  a: [b, c]\n"));
    ASSERT_FALSE(nested.ok());
    EXPECT_EQ(nested.error().location.line, 2u);

    auto missing = readApiMapping(dir.path() / "none.yaml");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("cannot open the api mapping file"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------
// msprobe-26 profile on ms_pt/ (22 NPU rows; README.md)

class Mapping26 : public ::testing::Test
{
protected:
    TempDir m_dir;

    PairRun run(JobOptions options)
    {
        options.profile = Profile::Msprobe26;
        return runPair("ms_pt", std::move(options), m_dir);
    }
};

TEST_F(Mapping26, WithoutMappingNothingMatches)
{
    const PairRun r = run({});
    ASSERT_TRUE(r.table);
    EXPECT_EQ(r.table->rows.size(), 22u);
    EXPECT_EQ(matchedRows(*r.table), 0u);
}

TEST_F(Mapping26, CellMapping)
{
    JobOptions options;
    options.cellMapping = std::filesystem::path(); // -cm alone: Cell -> Module only
    PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 0u);

    options.cellMapping = yaml("ms_pt", "cell_mapping.yaml");
    r = run(options);
    ASSERT_TRUE(r.table);
    // e1 (4 rows), e5 backward (2), e6 parameters_grad (2).
    EXPECT_EQ(matchedRows(*r.table), 8u);
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.forward.0.parameters.bias"), "Module.fc1.Linear.forward.0.parameters.bias");
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.backward.0.output.0"), "Module.fc1.Linear.backward.0.output.0");
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.parameters_grad.weight"), "Module.fc1.Linear.parameters_grad.weight");
    EXPECT_EQ(benchOf(*r.table, "Mint.add.0.forward.input.0"), "N/A");
}

TEST_F(Mapping26, ApiMappingPrefixRulesAndDtypeClasses)
{
    JobOptions options;
    options.apiMapping = std::filesystem::path();
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    // e2 3 + e3 2 + e7 3 (Float16 vs torch.float32: both float) + e8 2 (Int32 vs torch.int64: both int).
    EXPECT_EQ(matchedRows(*r.table), 10u);
    EXPECT_EQ(benchOf(*r.table, "MintFunctional.relu.0.forward.output.0"), "Functional.relu.0.forward.output.0");
    EXPECT_EQ(benchOf(*r.table, "Mint.argmax.0.forward.output.0"), "Torch.argmax.0.forward.output.0");
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.0"), "N/A");
}

TEST_F(Mapping26, ApiMappingUserFile)
{
    JobOptions options;
    options.apiMapping = yaml("ms_pt", "api_mapping.yaml");
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 13u);
    // ms_args [0, 1] -> pt_args [1, 0]: the NPU's x (input.0) is the bench's input.1.
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.0"), "Functional.linear.0.forward.input.1");
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.1"), "Functional.linear.0.forward.input.0");
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.2"), "N/A"); // abandoned
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.output.0"), "Functional.linear.0.forward.output.0");
    // The item with unequal lists is reported and skipped; Mint.add still has its prefix rule.
    ASSERT_EQ(r.pair.diagnostics.size(), 1u);
    EXPECT_EQ(r.pair.diagnostics[0].id, "compare.mapping-ignored");
    EXPECT_EQ(benchOf(*r.table, "Mint.add.0.forward.input.1"), "Torch.add.0.forward.input.1");
}

TEST_F(Mapping26, PrecedenceApiOverCellOverData)
{
    JobOptions options;
    options.apiMapping = std::filesystem::path();
    options.cellMapping = yaml("ms_pt", "cell_mapping.yaml");
    PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 10u); // api_mapping wins: the Cell rows keep their names
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.forward.0.input.0"), "N/A");

    JobOptions data;
    data.dataMapping = yaml("ms_pt", "data_mapping.yaml");
    r = run(data);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 2u);
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.forward.0.input.0"), "Module.fc1.Linear.forward.0.input.0");

    data.cellMapping = yaml("ms_pt", "cell_mapping.yaml");
    r = run(data);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 8u); // keys from the cell mapping; the data mapping only drops the dtype test
}

TEST_F(Mapping26, DataMappingSkipsTheDtypeTest)
{
    // Map the Int32 argmax output onto a float32 bench row: kept, although no dtype rule allows it.
    const auto file = m_dir.write("dm.yaml", "Mint.argmax.0.forward.output.0: Torch.argmax.0.forward.input.0\n");
    JobOptions options;
    options.dataMapping = file;
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(benchOf(*r.table, "Mint.argmax.0.forward.output.0"), "Torch.argmax.0.forward.input.0");
    // With -fm as well the mapping still decides, with a warning.
    options.fuzzy = true;
    const PairRun f = run(options);
    ASSERT_TRUE(f.table);
    EXPECT_EQ(benchOf(*f.table, "Mint.argmax.0.forward.output.0"), "Torch.argmax.0.forward.input.0");
    ASSERT_FALSE(f.table->diagnostics.empty());
    EXPECT_EQ(f.table->diagnostics[0].id, "compare.mapping-fuzzy");
}

// ---------------------------------------------------------------------------------------------------------
// msprobe-1.2 profile on ms_pt/

class Mapping12 : public ::testing::Test
{
protected:
    TempDir m_dir;

    PairRun run(JobOptions options) { return runPair("ms_pt", std::move(options), m_dir); }
};

TEST_F(Mapping12, CellMappingMatchesWholeEntries)
{
    JobOptions options;
    options.cellMapping = yaml("ms_pt", "cell_mapping.yaml");
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(r.table->rows.size(), 22u);
    EXPECT_EQ(matchedRows(*r.table), 8u);
    // The table shows the original names; the statistics are compared as usual.
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.forward.0.output.0"), "Module.fc1.Linear.forward.0.output.0");
    EXPECT_EQ(benchOf(*r.table, "Cell.fc1.Dense.parameters_grad.bias"), "Module.fc1.Linear.parameters_grad.bias");
}

TEST_F(Mapping12, ApiMappingWithoutDtypeClasses)
{
    JobOptions options;
    options.apiMapping = std::filesystem::path();
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    // e2, e3, e7 (torch.float16 vs torch.float32 tolerated); e8 not: torch.int32 vs torch.int64.
    EXPECT_EQ(matchedRows(*r.table), 8u);
    EXPECT_EQ(benchOf(*r.table, "Mint.matmul.0.forward.input.1"), "Torch.matmul.0.forward.input.1");
    EXPECT_EQ(benchOf(*r.table, "Mint.argmax.0.forward.output.0"), "N/A");
}

TEST_F(Mapping12, ApiMappingUserFilePairsByIndex)
{
    JobOptions options;
    options.apiMapping = yaml("ms_pt", "api_mapping.yaml");
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 11u);
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.0"), "Functional.linear.0.forward.input.1");
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.1"), "Functional.linear.0.forward.input.0");
    EXPECT_EQ(benchOf(*r.table, "Functional.dense.0.forward.input.2"), "N/A");
    // The abandoned row sits in its entry, in NPU order, without bench data.
    const int result = r.table->column("Err_message");
    for (std::size_t i = 0; i < r.table->rows.size(); ++i) {
        if (excelText(r.table->rows[i][0]) == "Functional.dense.0.forward.input.2") {
            EXPECT_FALSE(r.table->matched[i]);
            EXPECT_EQ(excelText(r.table->rows[i][static_cast<std::size_t>(result)]), "No bench data matched.");
            EXPECT_EQ(excelText(r.table->rows[i - 1][0]), "Functional.dense.0.forward.input.1");
        }
    }
}

TEST_F(Mapping12, CellAndApiTogether)
{
    JobOptions options;
    options.apiMapping = std::filesystem::path();
    options.cellMapping = yaml("ms_pt", "cell_mapping.yaml");
    const PairRun r = run(options);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(matchedRows(*r.table), 16u); // only e4 (dense) and e8 (argmax) stay unmatched
}

TEST(MappingPyTorch, Msprobe12RefusesCmAmAndIgnoresLm)
{
    TempDir dir;
    CompareInput input;
    input.npuPath = probescope::testing::sourceDir() / "resources/demo/npu/step0/rank/dump.json";
    input.benchPath = probescope::testing::sourceDir() / "resources/demo/bench/step0/rank/dump.json";
    JobOptions options;
    options.advisor = false;
    options.cellMapping = std::filesystem::path();
    auto refused = runCompareJob(input, dir.path() / "out", options);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().id, "compare.option");
    EXPECT_EQ(refused.error().message, "Argument -cm or -am is not supported in PyTorch framework");
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out" / "compare_result_20000101000000.csv"));

    options.cellMapping.reset();
    options.layerMapping = std::filesystem::path();
    options.timestamp = "20000101000000";
    auto ignored = runCompareJob(input, dir.path() / "out", options);
    ASSERT_TRUE(ignored.ok()) << ignored.error().format();
    ASSERT_EQ(ignored->front().diagnostics.size(), 1u);
    EXPECT_EQ(ignored->front().diagnostics[0].id, "compare.mapping-ignored");
    // Exactly the table without -lm.
    options.layerMapping.reset();
    options.timestamp = "20000101000001";
    auto plain = runCompareJob(input, dir.path() / "out", options);
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(tableCsv(*ignored->front().table), tableCsv(*plain->front().table));
}

TEST(MappingPyTorch, Msprobe26AllowsCmRefusesAm)
{
    TempDir dir;
    CompareInput input;
    input.npuPath = probescope::testing::sourceDir() / "resources/demo/npu/step0/rank/dump.json";
    input.benchPath = probescope::testing::sourceDir() / "resources/demo/bench/step0/rank/dump.json";
    JobOptions options;
    options.profile = Profile::Msprobe26;
    options.apiMapping = std::filesystem::path();
    auto refused = runCompareJob(input, dir.path() / "out", options);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, "Argument -am is not supported in PyTorch framework");

    // -cm on PyTorch names: the NPU keys are the original names (not backward-renumbered, as msprobe 26
    // does under any mapping), the bench keys are renumbered.
    options.apiMapping.reset();
    options.cellMapping = std::filesystem::path();
    auto cm = runCompareJob(input, dir.path() / "out", options);
    ASSERT_TRUE(cm.ok()) << cm.error().format();
    EXPECT_EQ(cm->front().table->rows.size(), 410u);
}

// ---------------------------------------------------------------------------------------------------------
// layer_mapping on layer/ (README.md)

namespace {

std::shared_ptr<const dump::RankDump> loadSide(const std::filesystem::path& dir)
{
    dump::RankLocation location;
    location.dir = dir;
    location.dumpFile = dir / "dump.json";
    auto rank = dump::loadRank(location);
    EXPECT_TRUE(rank.ok()) << (rank.ok() ? "" : rank.error().format());
    return rank.ok() ? *rank : nullptr;
}

} // namespace

TEST(LayerMapping, EntriesPairByPlaceInTheModel)
{
    const auto npu = loadSide(mappingData() / "layer/npu");
    const auto bench = loadSide(mappingData() / "layer/bench");
    auto rules = readLayerMapping(yaml("layer", "layer_mapping.yaml"));
    ASSERT_TRUE(npu && bench && rules.ok());
    auto entries = layerEntryMapping(*npu, *bench, *rules);
    ASSERT_TRUE(entries.ok()) << entries.error().format();
    const std::vector<std::pair<std::string, std::string>> expected = {
        { "Mint.matmul.0.forward", "Torch.matmul.0.forward" },
        { "MintFunctional.gelu.0.forward", "Functional.gelu.0.forward" },
        { "Cell.network.block.activation.GELU.forward.0", "Module.block.act.GELU.forward.0" },
        // Called from the block directly: the block's add #0 is the bench's Torch.add.1.
        { "Mint.add.0.forward", "Torch.add.1.forward" },
        // Called inside the framework's addmm on both sides: scope block.addmm.
        { "Mint.add.1.forward", "Torch.add.0.forward" },
        { "Mint.zeros_like.0.forward", "N/A" },
        { "Cell.network.block.norm.LayerNorm.forward.0", "Module.block.norm.LayerNorm.forward.0" },
        { "Cell.network.block.Block.forward.0", "Module.block.Block.forward.0" },
        // Backward entries take the scope of their forward.
        { "Mint.add.0.backward", "Torch.add.1.backward" },
        { "Cell.network.block.Block.backward.0", "Module.block.Block.backward.0" },
        { "Cell.network.block.Block.parameters_grad", "Module.block.Block.parameters_grad" },
    };
    EXPECT_EQ(*entries, expected);

    // Without the rules the renamed scopes do not exist on the bench side (network.block, activation).
    auto bare = layerEntryMapping(*npu, *bench, LayerMapping {});
    ASSERT_TRUE(bare.ok());
    for (const auto& [from, to] : *bare)
        EXPECT_EQ(to, "N/A") << from;
}

TEST(LayerMapping, Msprobe26ComparesTheMappedRows)
{
    TempDir dir;
    JobOptions options;
    options.profile = Profile::Msprobe26;
    options.layerMapping = yaml("layer", "layer_mapping.yaml");
    const PairRun r = runPair("layer", options, dir);
    ASSERT_TRUE(r.table);
    EXPECT_EQ(r.table->rows.size(), 28u);
    // 24 rows have a bench target; msprobe 26 still renumbers the bench's backward calls (Torch.add.1.backward
    // is keyed Torch.add.0.backward), so the 3 rows mapped to Torch.add.1.backward find nothing (§14 item 15).
    EXPECT_EQ(matchedRows(*r.table), 21u);
    EXPECT_EQ(benchOf(*r.table, "Mint.add.0.forward.input.1"), "Torch.add.1.forward.input.1");
    EXPECT_EQ(benchOf(*r.table, "Mint.add.0.backward.output.1"), "N/A");
    EXPECT_EQ(benchOf(*r.table, "Cell.network.block.Block.backward.0.input.0"), "Module.block.Block.backward.0.input.0");
    EXPECT_EQ(benchOf(*r.table, "Cell.network.block.norm.LayerNorm.forward.0.parameters.gamma"), "N/A");
    EXPECT_EQ(benchOf(*r.table, "Cell.network.block.Block.parameters_grad.weight"), "Module.block.Block.parameters_grad.weight");
    // The generated mapping is saved next to the result, one line per NPU row.
    ASSERT_FALSE(r.pair.mappingFile.empty());
    EXPECT_EQ(r.pair.mappingFile.filename(), "data_mapping_20000101000000.yaml");
    const std::string text = readAll(r.pair.mappingFile);
    EXPECT_NE(text.find("Mint.zeros_like.0.forward.output.0: N/A\n"), std::string::npos);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 28);
    auto reread = readDataMapping(r.pair.mappingFile);
    ASSERT_TRUE(reread.ok());
    EXPECT_EQ(reread->pairs.size(), 28u);
}

TEST(LayerMapping, Msprobe12UsesTheDataMappingMode)
{
    TempDir dir;
    JobOptions options;
    options.layerMapping = yaml("layer", "layer_mapping.yaml");
    const PairRun r = runPair("layer", options, dir);
    ASSERT_TRUE(r.table);
    // A.13: one row per mapping item, in NPU order; the N/A targets show the N/A pseudo-row.
    ASSERT_EQ(r.table->rows.size(), 28u);
    EXPECT_EQ(excelText(r.table->rows[0][0]), "Mint.matmul.0.forward.input.0");
    std::size_t na = 0;
    for (const auto& row : r.table->rows)
        na += excelText(row[1]) == "N/A";
    EXPECT_EQ(na, 4u);
    EXPECT_EQ(benchOf(*r.table, "Mint.add.1.forward.output.0"), "Torch.add.0.forward.output.0");
}

TEST(LayerMapping, WithoutConstructJsonComparesByName)
{
    TempDir dir;
    std::filesystem::copy_file(mappingData() / "layer/npu/dump.json", dir.path() / "dump.json");
    CompareInput input;
    input.npuPath = dir.path() / "dump.json";
    input.benchPath = mappingData() / "layer/bench/dump.json";
    JobOptions options;
    options.profile = Profile::Msprobe26;
    options.layerMapping = std::filesystem::path();
    auto results = runCompareJob(input, dir.path() / "out", options);
    ASSERT_TRUE(results.ok()) << results.error().format();
    ASSERT_EQ(results->front().diagnostics.size(), 1u);
    EXPECT_EQ(results->front().diagnostics[0].id, "compare.layer-mapping-empty");
    EXPECT_TRUE(results->front().mappingFile.empty());
    EXPECT_EQ(matchedRows(*results->front().table), 0u);
}

TEST(LayerMapping, ParallelTransformerLayersAreRenumbered)
{
    // MindSpore numbers the layers of a pipeline stage globally (4, 5), PyTorch per stage (0, 1).
    TempDir dir;
    const std::string ms = R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1})";
    const std::string pt = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1})";
    auto entry = [](const std::string& key, const std::string& leaf) {
        return "\"" + key + "\": {\"input_args\": [" + leaf + "], \"output\": [" + leaf + "]}";
    };
    const std::string msT = "Cell.network.transformer.ParallelTransformer.forward.0";
    const std::string msL4 = "Cell.network.transformer.layers.4.ParallelTransformerLayer.forward.0";
    const std::string msL5 = "Cell.network.transformer.layers.5.ParallelTransformerLayer.forward.0";
    dir.write("npu/dump.json", "{\"task\": \"statistics\", \"framework\": \"mindspore\", \"data\": {" + entry("Mint.add.0.forward", ms)
                                   + ", " + entry(msL4, ms) + ", " + entry("Mint.add.1.forward", ms) + ", " + entry(msL5, ms)
                                   + ", " + entry(msT, ms) + "}}");
    dir.write("npu/construct.json", "{\"Mint.add.0.forward\": \"" + msL4 + "\", \"" + msL4 + "\": \"" + msT
                                        + "\", \"Mint.add.1.forward\": \"" + msL5 + "\", \"" + msL5 + "\": \"" + msT
                                        + "\", \"" + msT + "\": null}");
    dir.write("npu/stack.json", "{\"Mint.add.0.forward\": [\"File a.py, line 1, in f, \\n x\"]}");
    const std::string ptT = "Module.transformer.ParallelTransformer.forward.0";
    const std::string ptL0 = "Module.transformer.layers.0.ParallelTransformerLayer.forward.0";
    const std::string ptL1 = "Module.transformer.layers.1.ParallelTransformerLayer.forward.0";
    dir.write("bench/dump.json", "{\"task\": \"statistics\", \"framework\": \"pytorch\", \"data\": {" + entry("Torch.add.0.forward", pt)
                                     + ", " + entry(ptL0, pt) + ", " + entry("Torch.add.1.forward", pt) + ", " + entry(ptL1, pt)
                                     + ", " + entry(ptT, pt) + "}}");
    dir.write("bench/construct.json", "{\"Torch.add.0.forward\": \"" + ptL0 + "\", \"" + ptL0 + "\": \"" + ptT
                                          + "\", \"Torch.add.1.forward\": \"" + ptL1 + "\", \"" + ptL1 + "\": \"" + ptT
                                          + "\", \"" + ptT + "\": null}");
    dir.write("bench/stack.json", "{\"Torch.add.0.forward\": [\"File a.py, line 1, in f, \\n x\"]}");
    const auto npu = loadSide(dir.path() / "npu");
    const auto bench = loadSide(dir.path() / "bench");
    auto rules = readLayerMapping(dir.write("lm.yaml", "TopLayer: {network.transformer: transformer}\n"));
    ASSERT_TRUE(npu && bench && rules.ok());
    auto entries = layerEntryMapping(*npu, *bench, *rules);
    ASSERT_TRUE(entries.ok()) << entries.error().format();
    const std::vector<std::pair<std::string, std::string>> expected = {
        { "Mint.add.0.forward", "Torch.add.0.forward" }, // layers.4 -> layers.0
        { msL4, ptL0 },
        { "Mint.add.1.forward", "Torch.add.1.forward" }, // layers.5 -> layers.1
        { msL5, ptL1 },
        { msT, ptT },
    };
    EXPECT_EQ(*entries, expected);
}

TEST(LayerMapping, ShortKeysAreErrorsWithTheirLine)
{
    TempDir dir;
    dir.write("npu/dump.json", "{\"task\": \"statistics\", \"framework\": \"mindspore\", \"data\": {\n"
                               "\"Mint.add.0.forward\": {},\n\"odd.key\": {}}}");
    dir.write("npu/construct.json", "{\"Mint.add.0.forward\": null}");
    dir.write("npu/stack.json", "{\"Mint.add.0.forward\": [\"File a.py, line 1, in f, \\n x\"]}");
    const auto npu = loadSide(dir.path() / "npu");
    ASSERT_TRUE(npu);
    auto entries = layerEntryMapping(*npu, *npu, LayerMapping {});
    ASSERT_FALSE(entries.ok());
    EXPECT_EQ(entries.error().id, "compare.layer-mapping");
    EXPECT_EQ(entries.error().location.line, 3u);
    EXPECT_NE(entries.error().message.find("odd.key"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------
// Tensor task: MindSpore writes .npy files, a PyTorch bench .pt files.

TEST(MappingTensors, MindSporeNpyAgainstPyTorchPt)
{
    TempDir dir;
    const auto tensors = testDataDir() / "tensors";
    auto leaf = [](const std::string& type, const std::string& dtype, const std::string& name) {
        return "{\"type\": \"" + type + "\", \"dtype\": \"" + dtype
            + "\", \"shape\": [2, 3], \"Max\": 1.5, \"Min\": -2.25, \"Mean\": 0.0, \"Norm\": 1.0, \"data_name\": \"" + name + "\"}";
    };
    dir.write("npu/dump.json", "{\"task\": \"tensor\", \"framework\": \"mindspore\", \"data\": {\"Mint.abs.0.forward\": "
                                   "{\"input_args\": [" + leaf("mindspore.Tensor", "Float32", "Mint.abs.0.forward.input.0.npy")
                                   + "], \"output\": [" + leaf("mindspore.Tensor", "Float32", "Mint.abs.0.forward.output.0.npy") + "]}}}");
    dir.write("bench/dump.json", "{\"task\": \"tensor\", \"framework\": \"pytorch\", \"data\": {\"Torch.abs.0.forward\": "
                                     "{\"input_args\": [" + leaf("torch.Tensor", "torch.float32", "Torch.abs.0.forward.input.0.pt")
                                     + "], \"output\": [" + leaf("torch.Tensor", "torch.float32", "Torch.abs.0.forward.output.0.pt") + "]}}}");
    for (const char* io : { "input", "output" }) {
        std::filesystem::create_directories(dir.path() / "npu/dump_tensor_data");
        std::filesystem::create_directories(dir.path() / "bench/dump_tensor_data");
        std::filesystem::copy_file(tensors / "f32.npy", dir.path() / "npu/dump_tensor_data" / (std::string("Mint.abs.0.forward.") + io + ".0.npy"));
        std::filesystem::copy_file(tensors / "f32.pt", dir.path() / "bench/dump_tensor_data" / (std::string("Torch.abs.0.forward.") + io + ".0.pt"));
    }
    CompareInput input;
    input.npuPath = dir.path() / "npu/dump.json";
    input.benchPath = dir.path() / "bench/dump.json";
    for (const Profile profile : { Profile::Msprobe12, Profile::Msprobe26 }) {
        JobOptions options;
        options.profile = profile;
        options.advisor = false;
        options.apiMapping = std::filesystem::path();
        auto results = runCompareJob(input, dir.path() / "out", options);
        ASSERT_TRUE(results.ok()) << results.error().format();
        const CompareTable& t = *results->front().table;
        ASSERT_EQ(t.rows.size(), 2u);
        EXPECT_EQ(matchedRows(t), 2u);
        // Both files were read: f32.npy holds a NaN where f32.pt holds 123456.79, the rest is equal.
        const int cosine = t.column("Cosine");
        if (profile == Profile::Msprobe12) {
            const std::string message = excelText(t.rows[0][static_cast<std::size_t>(t.column("Err_message"))]);
            EXPECT_EQ(message.find("not found"), std::string::npos) << message;
            EXPECT_NE(message.find("The position of inf or nan in NPU and bench Tensor do not match."), std::string::npos)
                << message;
        } else {
            EXPECT_EQ(excelText(t.rows[0][static_cast<std::size_t>(cosine)]), "N/A"); // inf/nan masks differ (§5.2)
        }
    }
}
