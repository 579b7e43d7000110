// SPDX-License-Identifier: Apache-2.0
#include "ckptcli.h"
#include "exitstatus.h"

#include "core/ckpt/ckptcompare.h"
#include "core/util/fileio.h"
#include "core/util/folderlist.h"
#include "core/util/outputfile.h"

#include <iostream>
#include <string_view>

namespace probescope::cli {

namespace {

const char* const kUsage = "usage: probescope-cli config_check -c CKPT_A CKPT_B [-o OUT.json]\n";

void logLine(Severity severity, const std::string& message)
{
    std::cout << (severity == Severity::Warning ? "[WARNING] " : severity == Severity::Error ? "[ERROR] " : "[INFO] ")
              << message << "\n";
}

int inputError(const Diagnostic& d)
{
    std::cout.flush();
    std::cerr << "[ERROR] " << d.format() << "\n";
    return kExitInputError;
}

bool isFolder(const std::string& path)
{
    return listFolder(path, 1u << 20).ok();
}

} // namespace

int runCheckpointCompare(const CheckpointCompareArgs& args)
{
    logLine(Severity::Info, "Comparing model checkpoint.");
    for (const std::string& input : { args.first, args.second }) {
        if (!isFolder(input))
            return inputError(makeError("ckpt.not-a-folder", SourceLocation { input, std::nullopt, 0, 0 },
                                        "not a readable folder: a checkpoint compare takes two checkpoint folders"));
    }
    std::error_code ec;
    if (std::filesystem::symlink_status(args.out, ec).type() != std::filesystem::file_type::not_found)
        return inputError(makeError("output.exists", SourceLocation { args.out, std::nullopt, 0, 0 },
                                    "the output already exists; msprobe refuses it too (check_path_not_exists), and "
                                    "ProbeScope never replaces a file"));
    const ckpt::LogSink log = logLine;
    auto result = ckpt::compareCheckpoints(args.first, args.second, ckpt::CompareOptions {}, log);
    if (!result)
        return inputError(result.error());
    if (auto failure = writeFileAtomically(args.out, ckpt::toJson(*result)))
        return inputError(makeError(failure->nameTaken ? "output.exists" : "output.write",
                                    SourceLocation { args.out, std::nullopt, 0, 0 }, failure->message));
    logLine(Severity::Info, "Comparison results written to " + args.out);
    return kExitOk;
}

std::optional<int> runCheckpointCommand(int argc, char** argv)
{
    if (argc < 2 || std::string_view(argv[1]) != "config_check")
        return std::nullopt;
    CheckpointCompareArgs args;
    bool compare = false;
    bool output = false;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "-c" || a == "--compare") {
            if (i + 2 >= argc)
                return std::nullopt; // let the config_check parser report it
            args.first = argv[++i];
            args.second = argv[++i];
            compare = true;
        } else if (a == "-o" || a == "--output") {
            if (i + 1 >= argc)
                return std::nullopt;
            args.out = argv[++i];
            output = true;
        } else {
            return std::nullopt; // -d, -vc, -vv, help: the packed-config command's options
        }
    }
    // msprobe: args.compare[0].endswith('zip') selects the packed-config compare.
    if (!compare || std::string_view(args.first).ends_with("zip"))
        return std::nullopt;
    if (output && args.out.empty()) {
        std::cerr << kUsage << "error: -o needs a file name\n";
        return kExitUsage;
    }
    return runCheckpointCompare(args);
}

} // namespace probescope::cli
