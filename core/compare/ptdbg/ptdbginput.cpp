// SPDX-License-Identifier: Apache-2.0
// What the ptdbg profile takes and gives besides the table: input_param (compare.json), the rank pairs of
// compare_distributed, and the Advisor's verdict.
#include "core/compare/ptdbg/ptdbgcompare.h"

#include "core/compare/input/jsoninput.h"
#include "core/dump/dumplayout.h"

#include "core/util/fileio.h"
#include "core/util/textposition.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

namespace probescope::compare::ptdbg {

namespace fs = std::filesystem;

namespace {

bool has(std::string_view s, std::string_view what)
{
    return s.find(what) != std::string_view::npos;
}

/// Advisor.gen_advisor_message
std::string adviceFor(const std::string& node)
{
    static constexpr const char* kForwardInput
        = "1. Analyze the model to view the input source.\n"
          "2. Check whether an inplace API causes the output result to overwrite the input result. That is, the "
          "fault is actually caused by a computation error.\n"
          "3. The fault may be caused by memory corruption and further analysis is required.";
    static constexpr const char* kForwardOutput
        = "This is a forward API computation error. Check the computation implementation.";
    static constexpr const char* kBackwardInput = "Check whether the forward computation result is affected.";
    static constexpr const char* kBackwardOutput
        = "This is a backward API computation error. Check the computation implementation.";
    static constexpr const char* kDeterministic = "This torch api may be uncertainty in the calculation, "
                                                  "can seed_all(mode=True) to enable deterministic computing.";
    static constexpr const char* kBatchNorm
        = "Torch API batch_norm input not fixed, the following suggestions may fix it:\n"
          "1. If use torch.nn.functional.batch_norm, you can set parameter training=False.\n"
          "2. If use torch.nn.BatchNormXXX, you can set parameter affine=False.\n"
          "3. Use seed_all(mode=True) to enable deterministic computing.";
    auto deterministic = [&](const char* message) -> std::string {
        for (const char* api : { "conv2d", "conv3d", "matmul", "nll_loss", "layer_norm", "lstm" }) {
            if (has(node, api))
                return kDeterministic;
        }
        return message;
    };
    std::string message;
    if (has(node, "forward"))
        message = has(node, "input") ? std::string(kForwardInput) : deterministic(kForwardOutput);
    else
        message = has(node, "input") ? std::string(kBackwardInput) : deterministic(kBackwardOutput);
    // ptdbg still tests the underscore spelling of ptdbg <= 5 names here, so 6.0 names never get this.
    if (has(node, "Functional_batch_norm") && has(node, "forward_input.1"))
        message = kBatchNorm;
    return message;
}

} // namespace

bool isPtdbgCompareJson(const fs::path& path)
{
    auto text = readTextFile(path);
    if (!text)
        return false;
    try {
        const nlohmann::json j = nlohmann::json::parse(*text);
        return j.is_object() && j.contains("npu_pkl_path");
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

Result<PtdbgInput> readPtdbgCompareJson(const fs::path& path)
{
    auto json = readJsonObjectFile(path, " (ptdbg's input_param)");
    if (!json)
        return json.error();
    const nlohmann::json& j = *json;
    PtdbgInput input;
    for (const char* key : { "npu_pkl_path", "bench_pkl_path" }) {
        if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty())
            return makeError("compare.input", fileLocation(path),
                             std::string("\"") + key + "\" (a .pkl path) is required");
    }
    input.npuPkl = j["npu_pkl_path"].get<std::string>();
    input.benchPkl = j["bench_pkl_path"].get<std::string>();
    for (const char* key : { "npu_dump_data_dir", "bench_dump_data_dir" }) {
        if (!j.contains(key) || j[key].is_null())
            continue;
        if (!j[key].is_string())
            return makeError("compare.input", fileLocation(path), std::string("\"") + key + "\" must be a folder path");
        (std::string_view(key) == "npu_dump_data_dir" ? input.npuDataDir : input.benchDataDir)
            = j[key].get<std::string>();
    }
    return input;
}

Result<std::vector<RankPair>> distributedPairs(const fs::path& npuStepDir, const fs::path& benchStepDir)
{
    // The rank folders of a step folder as the one discovery of dumps finds them (dump::discoverDump, issue 33),
    // held to compare_distributed's rules: only rank{N} folders, each holding one .pkl.
    auto ranks = [](const fs::path& dir) -> Result<std::vector<dump::RankLocation>> {
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            return makeError("compare.input", fileLocation(dir),
                             "no such folder (compare_distributed takes a step folder)");
        auto layout = dump::discoverDump(dir);
        if (!layout)
            return layout.error();
        // A folder discovery left out (not named rank{N}, holding no .pkl, unreadable) is ptdbg's refusal too.
        for (const Diagnostic& d : layout->diagnostics)
            return makeError("compare.input", d.location,
                             d.message + "; ptdbg refuses a step folder holding anything but rank{N} folders with a "
                                         ".pkl: remove it or compare the ranks one by one with -i");
        const fs::path base = dir.has_filename() ? dir : dir.parent_path();
        std::vector<dump::RankLocation> found;
        for (const dump::RankLocation& loc : layout->ranks) {
            const std::string name = loc.dir.filename().string();
            const bool rank = loc.dir.parent_path() == base && name.size() > 4 && name.compare(0, 4, "rank") == 0
                && std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (!rank || loc.format != dump::DumpFormat::LegacyPkl)
                return makeError("compare.input", fileLocation(loc.dumpFile),
                                 "the step folder holds this dump, which is not a ptdbg rank folder (rank{N} with a "
                                 ".pkl); ptdbg refuses it too: compare the ranks one by one with -i");
            found.push_back(loc);
        }
        // Python's sorted(): by name, so rank10 comes before rank2.
        std::sort(found.begin(), found.end(), [](const dump::RankLocation& a, const dump::RankLocation& b) {
            return a.dir.filename().string() < b.dir.filename().string();
        });
        return found;
    };
    auto npuRanks = ranks(npuStepDir);
    if (!npuRanks)
        return npuRanks.error();
    auto benchRanks = ranks(benchStepDir);
    if (!benchRanks)
        return benchRanks.error();
    if (npuRanks->size() != benchRanks->size())
        return makeError("compare.input", fileLocation(npuStepDir),
                         "the two runs have different numbers of ranks (" + std::to_string(npuRanks->size()) + " and "
                             + std::to_string(benchRanks->size())
                             + "); compare the ranks one by one with -i");
    // extract_pkl_and_data_dir: the .pkl of the rank folder and the folder named like it (the folder the load
    // step reads the .npy files from).
    auto extract = [](const dump::RankLocation& loc, fs::path& pkl, fs::path& data) {
        pkl = loc.dumpFile;
        std::error_code ec;
        if (fs::is_directory(pkl.parent_path() / pkl.stem(), ec))
            data = pkl.parent_path() / pkl.stem();
    };
    std::vector<RankPair> pairs;
    for (std::size_t i = 0; i < npuRanks->size(); ++i) {
        RankPair pair;
        pair.suffix = "_" + (*npuRanks)[i].dir.filename().string() + "-" + (*benchRanks)[i].dir.filename().string();
        extract((*npuRanks)[i], pair.input.npuPkl, pair.input.npuDataDir);
        extract((*benchRanks)[i], pair.input.benchPkl, pair.input.benchDataDir);
        pairs.push_back(std::move(pair));
    }
    return pairs;
}

long firstFailingRow(const CompareTable& table)
{
    const int accuracy = table.column("Accuracy Reached or Not");
    const int result = table.column("Result");
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& row = table.rows[i];
        std::optional<Cell> c;
        std::string_view failing;
        if (table.mode == CompareMode::RealData && accuracy >= 0) {
            c = row[static_cast<std::size_t>(accuracy)];
            failing = "No";
        } else if (result >= 0) {
            c = row[static_cast<std::size_t>(result)];
            failing = table.mode == CompareMode::Md5 ? "Different" : "Warning";
        }
        if (c && c->isString() && c->asString() == failing)
            return static_cast<long>(i);
    }
    return -1;
}

std::string advisorText(const CompareTable& table)
{
    const long row = firstFailingRow(table);
    if (row < 0)
        return "Line: NA\nSuspect Nodes: NA\nExpert Advice: All data in comparison result meets the accuracy "
               "requirements.\n";
    const std::string node = table.rows[static_cast<std::size_t>(row)][0].asString();
    return "Line: " + std::to_string(row) + "\nSuspect Nodes: " + node + "\nExpert Advice: " + adviceFor(node) + "\n";
}

} // namespace probescope::compare::ptdbg
