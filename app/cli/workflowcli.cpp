// SPDX-License-Identifier: Apache-2.0
// probescope-cli overflow_check / nan_analyze (and the monitor commands): argument parsing and wiring only.
#include "workflowcli.h"
#include "exitstatus.h"

#include "core/monitor/anomalyanalyse.h"
#include "core/monitor/monitordb.h"
#include "core/overflow/overflowcheck.h"
#include "core/util/outputfile.h"
#include "options.h"

#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::cli {

namespace {

using Value = std::optional<std::string_view>;
using Error = std::optional<std::string>;

auto setString(std::string& target)
{
    return [&target](std::string_view, Value v) -> Error {
        target = std::string(*v);
        return std::nullopt;
    };
}

int runOverflowCheck(int argc, char** argv, std::string_view command)
{
    std::string input;
    std::string out = "./output"; // msprobe's default
    const std::vector<Option> table = {
        { { "-i", "--input_path" }, Option::Takes::Value, "a step folder (or a dump root)", setString(input) },
        { { "-o", "--output_path" }, Option::Takes::Value, "a folder", setString(out) },
    };
    ParseRules rules;
    rules.unknownLabel = command == "nan_analyze" ? "nan_analyze option" : "overflow_check option";
    rules.positionalWords = false;
    std::vector<std::string_view> positional;
    if (auto error = parseOptions(argc, argv, 2, table, rules, positional))
        return usageError(*error);
    if (input.empty())
        return usageError(std::string(command) + " needs -i STEP_DIR");

    auto result = overflow::runOverflowCheck(input, out);
    if (!result) {
        std::cerr << result.error().format() << "\n";
        return kExitInputError;
    }
    for (const Diagnostic& d : result->inputDiagnostics)
        std::cerr << d.format() << "\n";
    if (result->refused) {
        std::cout << "not analysed: a dump has errors (above); nothing written\n";
        return kExitInputError;
    }
    for (const std::string& line : result->log)
        std::cout << "[INFO] " << line << "\n";
    if (result->analyzeFile && result->steps.size() > 1)
        std::cout << "first step with an anomaly: " << (result->step ? "step" + std::to_string(*result->step) : input)
                  << "\n";
    return kExitOk;
}

int runData2Db(int argc, char** argv)
{
    std::string data;
    std::string db;
    std::string format = "auto";
    std::string mapping;
    monitor::Data2DbOptions options;
    const std::vector<Option> table = {
        { { "--data" }, Option::Takes::Value, "the monitor output folder", setString(data) },
        { { "--db" }, Option::Takes::Value, "the db folder", setString(db) },
        { { "--format" }, Option::Takes::Value, "auto, dump or monitor",
          [&](std::string_view, Value v) -> Error {
              format = std::string(*v);
              if (format != "auto" && format != "dump" && format != "monitor")
                  return "--format takes auto, dump or monitor, not " + format;
              return std::nullopt;
          } },
        { { "--mapping" }, Option::Takes::Value, "a JSON file of name replacements", setString(mapping) },
        { { "--micro_step" }, Option::Takes::Value, "true or false",
          [&](std::string_view, Value v) -> Error {
              const std::string_view t = *v;
              if (t != "true" && t != "false" && t != "True" && t != "False")
                  return "--micro_step takes true or false, not " + std::string(t);
              options.microStep = t == "true" || t == "True";
              return std::nullopt;
          } },
        { { "--process_num" }, Option::Takes::Value, "a number of processes (1-128)",
          [](std::string_view, Value v) -> Error {
              // msprobe's worker processes; the conversion here is one pass and gives the same db.
              if (!intIn(*v, 1, 128))
                  return "--process_num needs a number of processes (1-128)";
              return std::nullopt;
          } },
    };
    ParseRules rules;
    rules.unknownLabel = "data2db option";
    rules.positionalWords = false;
    std::vector<std::string_view> positional;
    if (auto error = parseOptions(argc, argv, 2, table, rules, positional))
        return usageError(*error);
    if (data.empty() || db.empty())
        return usageError("data2db needs --data DIR and --db OUT");
    if (format == "dump")
        return usageError("data2db --format dump is not implemented; ProbeScope converts monitor data (--format monitor)");
    if (!mapping.empty()) {
        auto pairs = monitor::readNameMapping(mapping);
        if (!pairs) {
            std::cerr << pairs.error().format() << "\n";
            return kExitInputError;
        }
        options.mapping = std::move(*pairs);
    }
    std::cout << "[INFO] Importing data in 'monitor' format\n";
    auto result = monitor::monitorToDb(data, db, options);
    if (!result) {
        std::cerr << result.error().format() << "\n";
        return kExitInputError;
    }
    for (const Diagnostic& d : result->warnings)
        std::cerr << d.format() << "\n";
    for (const std::string& line : result->log)
        std::cout << "[INFO] " << line << "\n";
    std::cout << "[INFO] Monitor data import completed. DB: " << result->db.string() << "\n";
    return kExitOk;
}

int runAnomalyAnalyse(int argc, char** argv)
{
    std::string data;
    std::string out;
    std::string steps = "[]";
    monitor::AnomalyAnalyseOptions options;
    const std::vector<Option> table = {
        { { "-d", "--data_path" }, Option::Takes::Value, "the anomaly_detected folder", setString(data) },
        { { "-o", "--out_path" }, Option::Takes::Value, "a folder", setString(out) },
        { { "-k", "--topk" }, Option::Takes::Value, "a number > 0",
          [&](std::string_view, Value v) -> Error {
              const auto k = intIn(*v, 1, 1'000'000'000);
              if (!k)
                  return "The top k number must be greater than 0.";
              options.topK = static_cast<std::size_t>(*k);
              return std::nullopt;
          } },
        { { "-s", "--step" }, Option::Takes::Value, "a list of steps, e.g. \"[1, 2]\"", setString(steps) },
    };
    ParseRules rules;
    rules.unknownLabel = "anomaly_analyse option";
    rules.positionalWords = false;
    std::vector<std::string_view> positional;
    if (auto error = parseOptions(argc, argv, 2, table, rules, positional))
        return usageError(*error);
    if (data.empty())
        return usageError("anomaly_analyse needs -d DIR (the monitor's anomaly_detected folder)");
    std::string stepError;
    options.steps = monitor::parseStepList(steps, stepError);
    if (!options.steps)
        return usageError(stepError);
    auto result = monitor::analyseAnomalies(data, options);
    if (!result) {
        std::cerr << result.error().format() << "\n";
        return kExitInputError;
    }
    for (const Diagnostic& d : result->warnings)
        std::cerr << d.format() << "\n";
    const std::filesystem::path outDir = out.empty() ? std::filesystem::path(data) : std::filesystem::path(out);
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    const std::filesystem::path file = outDir / "anomaly_analyse.json";
    if (const auto failure = writeFileAtomically(file, result->json, ReplaceMode::Never)) {
        std::cerr << makeError("monitor.write", fileLocation(file),
                               failure->nameTaken ? "exists already: ProbeScope never replaces a file (msprobe deletes it)"
                                                  : failure->message)
                         .format()
                  << "\n";
        return kExitInputError;
    }
    std::cout << "[INFO] anomaly_analyse.json is at " << outDir.string() << ".\n";
    std::cout << "[INFO] Top " << options.topK << " anomalies are listed as follows:\n";
    for (std::size_t i = 0; i < result->messages.size(); ++i)
        std::cout << "[INFO] " << i << ": " << result->messages[i] << "\n";
    return kExitOk;
}

} // namespace

std::optional<int> runWorkflowCommand(int argc, char** argv)
{
    if (argc < 2)
        return std::nullopt;
    const std::string_view command = argv[1];
    if (command == "overflow_check" || command == "nan_analyze")
        return runOverflowCheck(argc, argv, command);
    if (command == "data2db")
        return runData2Db(argc, argv);
    if (command == "anomaly_analyse")
        return runAnomalyAnalyse(argc, argv);
    return std::nullopt;
}

} // namespace probescope::cli
