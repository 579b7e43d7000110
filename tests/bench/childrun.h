// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the bench programs that time a ProbeScope executable as a user runs it: a fresh process, so
// start-up, reading, the work and the output all count; its peak RSS is the child's own ru_maxrss.

#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace probescope::bench {

struct ChildRun
{
    double wall = 0;   ///< seconds
    double cpu = 0;    ///< user + system seconds of the child
    double rssMiB = 0; ///< the child's peak resident set (ru_maxrss)
    double user = 0;   ///< user seconds of the child
    double system = 0; ///< system seconds of the child (page faults, reads and writes)
    double minorFaults = 0; ///< the child's minor page faults (ru_minflt): about one per fresh 4 KiB page
    int status = 0;    ///< as waitpid reports it
    bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
    int exitCode() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

/// Runs argv[0] with argv (no shell), its standard output into `stdoutFile` (empty: /dev/null). `environment`:
/// NAME=value entries added to the child's environment; `quiet`: its standard error to /dev/null too.
inline ChildRun runChild(const std::vector<std::string>& argv, const std::filesystem::path& stdoutFile = {},
                         const std::vector<std::string>& environment = {}, bool quiet = false)
{
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = stdoutFile.empty() ? ::open("/dev/null", O_WRONLY)
                                           : ::open(stdoutFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out >= 0)
            ::dup2(out, 1);
        if (quiet) {
            const int null = ::open("/dev/null", O_WRONLY);
            if (null >= 0)
                ::dup2(null, 2);
        }
        for (const std::string& entry : environment)
            ::putenv(const_cast<char*>(entry.c_str()));
        ::execv(args[0], args.data());
        std::_Exit(127);
    }
    ChildRun run;
    struct rusage usage {};
    ::wait4(pid, &run.status, 0, &usage);
    run.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    run.rssMiB = static_cast<double>(usage.ru_maxrss) / 1024.0;
    run.user = static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
    run.system = static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
    run.minorFaults = static_cast<double>(usage.ru_minflt);
    return run;
}

} // namespace probescope::bench
