// SPDX-License-Identifier: Apache-2.0
#include "configcheckcli.h"
#include "exitstatus.h"
#include "ckptcli.h"

#include "core/compare/msprobe26/mergeresult.h"
#include "core/setupcheck/configcompare.h"
#include "core/setupcheck/configpack.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

extern char** environ;

namespace probescope::cli {

namespace {

int inputError(const Diagnostic& error)
{
    std::cerr << error.format() << "\n";
    return kExitInputError;
}

void log(const std::string& message)
{
    std::cout << "[INFO] [config checking log] " << message << "\n";
}

bool isFolder(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

/// `config_check -c CKPT_A CKPT_B [-o out.json]`: the checkpoint compare (issue 35, item 3) is built separately.
/// THE ONE DISPATCH POINT: replace this body with runCheckpointCompare(...) from app/cli/ckptcli.h when it is merged.
int runCheckpointCompareDispatch(const std::string& ckptA, const std::string& ckptB, const std::string& output)
{
    return runCheckpointCompare(CheckpointCompareArgs { ckptA, ckptB, output });
}

int runPack(const std::vector<std::string>& scripts, std::string output)
{
    if (output.empty())
        output = "./config_check_pack.zip";
    if (!endsWith(output, ".zip"))
        return usageError("config_check -d: the output must end with '.zip' (got " + output + ")");
    const auto parent = std::filesystem::path(output).parent_path();
    if (!parent.empty() && !isFolder(parent.string()))
        return inputError(makeError("config-check.output", fileLocation(parent),
                                    "the folder of " + output + " does not exist"));
    log("pack result zip path " + output);
    const char* path = std::getenv("PATH");
    const char* home = std::getenv("HOME");
    const auto pip = setupcheck::listPythonPackages(path ? path : "", home ? home : "");
    if (pip.python.empty())
        log("no python3 on PATH: the pip list is empty");
    else
        log("pip list of " + pip.python.string() + " from " + std::to_string(pip.paths.size()) + " site folder(s)");
    setupcheck::PackInputs inputs;
    for (const auto& s : scripts)
        inputs.scripts.emplace_back(s);
    for (char** e = environ; e && *e; ++e)
        inputs.environ.emplace_back(*e);
    inputs.pip = pip.text;
    auto outcome = setupcheck::writeStaticPack(inputs, output);
    if (!outcome)
        return inputError(outcome.error());
    for (const auto& note : outcome->notes)
        log(note);
    std::cout << "written: " << output << " (" << outcome->entries.size() << " entries)\n";
    return kExitOk;
}

int runComparePacks(const std::string& bench, const std::string& cmp, std::string output)
{
    if (output.empty())
        output = "./config_check_result";
    std::cout << "[INFO] The input paths is zip files, comparing packed config.\n";
    auto outcome = setupcheck::compareConfigPacks(bench, cmp, output);
    if (!outcome)
        return inputError(outcome.error());
    log("extract zip file " + bench + " to " + outcome->benchDir.string());
    log("extract zip file " + cmp + " to " + outcome->cmpDir.string());
    log("config checking result save to " + output);
    for (const auto& [checker, pass] : outcome->summary)
        std::cout << "  " << checker << ": " << pass << "\n";
    for (const auto& file : outcome->files)
        std::cout << "written: " << file.string() << "\n";
    return kExitOk;
}

int runConfigCheck(int argc, char** argv)
{
    bool dump = false;
    std::vector<std::string> dumpArgs;
    std::vector<std::string> compareArgs;
    std::string output;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-d" || a == "--dump") {
            if (dump || !compareArgs.empty())
                return usageError("config_check: give one of -d and -c");
            dump = true;
            while (i + 1 < argc && argv[i + 1][0] != '-')
                dumpArgs.emplace_back(argv[++i]);
        } else if (a == "-c" || a == "--compare") {
            if (dump || !compareArgs.empty())
                return usageError("config_check: give one of -d and -c");
            if (i + 2 >= argc)
                return usageError("config_check -c needs two arguments: bench.zip cmp.zip (or two checkpoint folders)");
            compareArgs = { argv[i + 1], argv[i + 2] };
            i += 2;
        } else if (a == "-o" || a == "--output") {
            if (i + 1 >= argc)
                return usageError("config_check -o needs a path");
            output = argv[++i];
        } else if (a == "-vc" || a == "--verl-compare" || a == "-vv" || a == "--verl-verify") {
            return usageError("config_check " + std::string(a) + ": msprobe's verl log checks are not built");
        } else {
            return usageError("config_check: unknown argument \"" + std::string(a) + "\"");
        }
    }
    if (dump)
        return runPack(dumpArgs, output);
    if (compareArgs.empty())
        return usageError("config_check: give -d [train.sh] [config.yaml] to pack, or -c bench.zip cmp.zip to compare");
    if (isFolder(compareArgs[0]) && isFolder(compareArgs[1]))
        return runCheckpointCompareDispatch(compareArgs[0], compareArgs[1],
                                            output.empty() ? "./ckpt_similarity.json" : output);
    if (!endsWith(compareArgs[0], "zip"))
        return inputError(makeError("config-check.input", SourceLocation { compareArgs[0], std::nullopt, 0, 0 },
                                    compareArgs[0] + " is neither a config_check pack (.zip) nor, with "
                                        + compareArgs[1] + ", a pair of checkpoint folders"));
    return runComparePacks(compareArgs[0], compareArgs[1], output);
}

int runMergeResult(int argc, char** argv)
{
    std::string input, output, config;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        std::string* target = a == "-i" || a == "--input_dir"       ? &input
                              : a == "-o" || a == "--output_dir"    ? &output
                              : a == "-config" || a == "--config-path" ? &config
                                                                       : nullptr;
        if (!target)
            return usageError("merge_result: unknown argument \"" + std::string(a) + "\"");
        if (i + 1 >= argc)
            return usageError("merge_result " + std::string(a) + " needs a value");
        *target = argv[++i];
    }
    if (input.empty() || output.empty() || config.empty())
        return usageError("merge_result needs -i DIR -o OUT -config merge.yaml");
    auto outcome = compare::msprobe26::mergeResult(input, output, config);
    if (!outcome)
        return inputError(outcome.error());
    for (const auto& note : outcome->notes)
        std::cout << "[WARNING] " << note << "\n";
    if (!outcome->files.empty())
        std::cout << "[INFO] The compare results of the multi-ranks are merged and saved in: "
                  << outcome->files.front().string() << ".\n";
    for (const auto& file : outcome->files)
        std::cout << "written: " << file.string() << "\n";
    return kExitOk;
}

} // namespace

std::optional<int> runConfigCheckCommand(int argc, char** argv)
{
    if (argc < 2)
        return std::nullopt;
    const std::string_view command = argv[1];
    if (command != "config_check" && command != "merge_result")
        return std::nullopt;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-h" || a == "--help")
            return std::nullopt; // the usage text of main.cpp
    }
    return command == "config_check" ? runConfigCheck(argc, argv) : runMergeResult(argc, argv);
}

} // namespace probescope::cli
