// SPDX-License-Identifier: Apache-2.0
#include "jobcli.h"
#include "exitstatus.h"

#include "core/job/jobcompare.h"
#include "core/util/fileio.h"

#include <chrono>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <unistd.h>

namespace probescope::cli {

namespace {

/// The whole job's progress line on stderr (issue 37: a job of thousands of ranks printed nothing until its
/// end): on a terminal one line rewritten at most 5 times a second; otherwise (a log file) a line every 10 s,
/// so a short job's stderr stays as it was. Counted on the coordinator as pairs are done; the pairs themselves are
/// printed from another thread as they are consumed (clearLine), hence the lock.
class JobProgress final : public ProgressSink
{
public:
    JobProgress()
        : m_tty(::isatty(2) != 0)
        , m_stdoutTty(::isatty(1) != 0)
    {
    }
    void setRange(std::uint64_t total) override { m_total = total; }
    void advance(std::uint64_t done) override
    {
        const std::lock_guard lock(m_mutex);
        const auto now = std::chrono::steady_clock::now();
        const auto every = m_tty ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10000);
        if (now - m_last < every && !(m_tty && m_printed && done == m_total))
            return;
        m_last = now;
        const double seconds = std::chrono::duration<double>(now - m_start).count();
        const double left = done ? seconds * double(m_total - done) / double(done) : 0.0;
        std::fprintf(stderr, "%scompared %llu/%llu pairs (%.0f%%) in %.0f s, about %.0f s left%s",
                     m_tty ? "\r" : "", static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(m_total), m_total ? 100.0 * double(done) / double(m_total) : 100.0,
                     seconds, left, m_tty ? "\x1b[K" : "\n");
        m_printed = true;
        m_shown = m_tty;
        if (m_tty && done == m_total) {
            std::fputc('\n', stderr);
            m_finished = true;
        }
    }
    bool isCancelled() const override { return false; }
    /// Takes the line off the terminal before a pair is printed to the same terminal (the next advance due draws
    /// it again), so that the pair's lines do not start after the progress text.
    void clearLine()
    {
        const std::lock_guard lock(m_mutex);
        if (m_shown && !m_finished && m_stdoutTty) {
            std::fputs("\r\x1b[K", stderr);
            m_shown = false;
        }
    }

private:
    std::mutex m_mutex;
    bool m_tty;
    bool m_stdoutTty;
    bool m_printed = false;
    bool m_shown = false; ///< the line is on the terminal now
    bool m_finished = false; ///< the last line stays on the terminal
    std::uint64_t m_total = 0;
    const std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point m_last = m_start;
};

/// One pair as the step-level compare prints it (a place on one side only: the side that has it).
void printPair(const job::PairSummary& s, const std::filesystem::path& outDir)
{
    if (!s.onlyIn.empty()) {
        // A place on one side only: listed with the side that has it; the plan's warning says why.
        std::cout << (s.npuDump.empty() ? std::string("(no NPU dump)") : s.npuDump) << "  vs  "
                  << (s.benchDump.empty() ? std::string("(no bench dump)") : s.benchDump) << "\n";
        std::cout << "  not compared: only the " << (s.onlyIn == "npu" ? "NPU" : "bench") << " dump has this step\n";
        return;
    }
    std::cout << s.npuDump << "  vs  " << s.benchDump << "\n";
    if (!s.compared) {
        std::cout << "  failed to compare: " << s.error << "\n";
        std::cerr << s.error << "\n";
        return;
    }
    if (s.resumed)
        std::cout << "  complete in an earlier run (--resume): not compared again\n";
    if (s.rows == 0) {
        std::cout << "  no entry could be matched; nothing written (as msprobe does)\n";
        return;
    }
    std::cout << "  rows: " << s.rows << ", failing: " << s.failingRows << "\n";
    for (const std::string& f : s.files)
        std::cout << "  written: " << (outDir / f).string() << "\n";
    if (!s.firstFailureSummary.empty())
        std::cout << "  " << s.firstFailureSummary << "\n";
    else
        std::cout << "  no failing node\n";
}

} // namespace

std::optional<std::vector<std::int64_t>> parseNumberList(std::string_view text)
{
    std::vector<std::int64_t> out;
    while (true) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 0)
            return std::nullopt;
        out.push_back(v);
        if (comma == std::string_view::npos)
            return out;
        text.remove_prefix(comma + 1);
    }
}

bool isWholeJob(const compare::CompareInput& input, const compare::JobOptions& options, const JobCliArgs& args)
{
    // Under mpirun every process runs this command: only the job spreads pairs instead of repeating them.
    if (!args.steps.empty() || !args.ranks.empty() || args.resume || launchedByMpi())
        return true;
    compare::PlanOptions planOptions;
    planOptions.profile = options.profile;
    planOptions.stackFlag = options.stackFlag;
    // The small plan (issue 37): this question planned the whole job of PlannedPairs once more before the job.
    const auto plan = compare::planPairsCompact(input, planOptions);
    if (!plan)
        return false; // the ordinary compare reports the error as it always did
    return plan->writesStepFolders();
}

int runJobCompare(const compare::CompareInput& input, const std::string& out, const compare::JobOptions& options,
                  const JobCliArgs& args)
{
    job::WholeJobOptions jobOptions;
    if (!args.steps.empty()) {
        const auto steps = parseNumberList(args.steps);
        if (!steps) {
            std::cerr << "probescope-cli: --step needs step numbers (0 or 0,2)\n";
            return kExitUsage;
        }
        jobOptions.steps = *steps;
    }
    if (!args.ranks.empty()) {
        const auto ranks = parseNumberList(args.ranks);
        if (!ranks) {
            std::cerr << "probescope-cli: --rank needs rank numbers (1 or 1,3)\n";
            return kExitUsage;
        }
        jobOptions.ranks = *ranks;
    }
    jobOptions.resume = args.resume;
    job::LocalThreadScheduler local(args.pairThreads);
    std::unique_ptr<job::PairScheduler> mpi;
    if (launchedByMpi()) {
        std::string error;
        if (!(mpi = loadMpiScheduler(error))) {
            std::cerr << "probescope-cli: " << error << "\n";
            return kExitInputError;
        }
    }
    jobOptions.scheduler = mpi ? mpi.get() : &local;
    compare::JobOptions pairOptions = options;
    pairOptions.pairsInParallel = !mpi && args.pairThreads > 1; // each pair on its own thread, no side threads
    if (pairOptions.timestamp.empty())
        pairOptions.timestamp = localTimestamp(); // one stamp for every pair of the job
    JobProgress progress;
    jobOptions.progress = &progress;
    // Each pair is printed as it comes, in plan order (issue 37: a job of 10,000 ranks keeps no list of its pairs);
    // the plan's notes go first, as before.
    const std::filesystem::path outDir(out);
    jobOptions.onPlanned = [&](const Diagnostics& diagnostics) {
        for (const Diagnostic& d : diagnostics)
            std::cout << d.format() << "\n";
    };
    jobOptions.onPair = [&](const job::PairSummary& s) {
        progress.clearLine();
        printPair(s, outDir);
    };
    auto result = job::runWholeJob(input, out, pairOptions, jobOptions);
    if (!result) {
        std::cerr << result.error().format() << "\n";
        return result.error().id == "compare.option" ? kExitUsage : kExitInputError;
    }
    if (!result->coordinator)
        return kExitOk; // an MPI worker: rank 0 prints and writes the summary
    // One line per step on one side only on stderr too: the job is not complete, and the exit status says so.
    for (const Diagnostic& d : result->diagnostics) {
        if (d.id == "session.step-unpaired" && result->oneSidedPlaces())
            std::cerr << d.format() << "\n";
    }
    const std::size_t failing = result->failingPairs();
    std::cout << "job: " << result->comparedOrFailed() << " pair(s), " << failing << " failing, "
              << result->failedPairs() << " failed to compare";
    if (result->oneSidedPlaces())
        std::cout << ", " << result->oneSidedPlaces() << " not compared (on one side only)";
    if (result->summaryError)
        std::cout << "; the job summary could not be written\n";
    else
        std::cout << "; written: " << result->summaryCsv.string() << ", " << result->summaryJson.string() << "\n";
    for (const job::CommLink& l : result->origin.chain)
        std::cout << "  communication: " << (l.rankLabel.empty() ? "rank" : l.rankLabel) << " " << l.key
                  << " (execution index " << l.executionIndex << ", " << l.role << ")\n";
    std::cout << job::originLine(*result) << "\n";
    if (result->summaryError)
        std::cerr << result->summaryError->format() << "\n";
    return result->failedPairs() || result->oneSidedPlaces() || result->summaryError ? kExitInputError : kExitOk;
}

} // namespace probescope::cli
