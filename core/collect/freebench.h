// SPDX-License-Identifier: Apache-2.0
// Free benchmark (msprobe's 无标杆比对, run-ut-spec §11): the LibTorch-free parts — per-dtype tables,
// names, free_benchmark.csv, the preheat state machine — and the engine's interface, whose LibTorch
// half (dispatcher interception, perturbations, checks) is freebenchtorch.cpp. See docs/free-benchmark.md.
#pragma once

#include "probescope/collect/config.h"
#include "core/util/diagnostic.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probescope::collect::freebench {

/// The floating types the spec's tables distinguish; everything else is Other.
enum class FloatType : std::uint8_t { Half, BFloat16, Float, Double, Other };

/// §11.4: the consistency threshold of an output dtype (fp16 1.002, bf16 1.004, fp32/other 1.0002).
double defaultThreshold(FloatType type);
/// §11.3/§11.4 table: bf16 1e-4, fp16 1e-6, fp32 1e-8, fp64 1e-16, other 1e-8. add_noise's ε and
/// pre-check bound, and the check's abs_tol (forward takes its square root).
double absTolerance(FloatType type);
/// §11.4 step 3: chunks = clamp(2^(floor(log2(MB)) - 4), 1, 128) for a tensor of `bytes`.
std::int64_t ratioChunks(std::uint64_t bytes);

/// "Aten.matmul.40.forward" -> "Aten.matmul" (§11.6: the last two dot-separated parts removed).
std::string pureName(std::string_view apiName);
/// Python's str(torch.Size): "torch.Size([4, 8])", "torch.Size([])".
std::string torchSizeText(const std::vector<std::int64_t>& shape);
/// The max_rel cell: Python's str() of the float ratio - 1 ("0.0025", "inf").
std::string maxRelText(double ratio);

/// One row of free_benchmark.csv (§11.8). Empty optional cells are written empty, as csv does for None.
struct CsvRow
{
    std::int64_t rank = 0;
    std::string pertMode;
    std::string stage = "forward";
    std::int64_t step = 0;
    std::string apiName;
    std::string maxRel; ///< maxRelText(), "symbol_flipping", or "" (to_cpu and int elements)
    std::string dtype;  ///< str(dtype) of the original output element, e.g. "torch.float16"
    std::string shape;  ///< torchSizeText() of it
    std::optional<std::int64_t> outputIndex;
};

/// msprobe's header line.
inline constexpr std::string_view kCsvHeader = "rank,pert_mode,stage,step,api_name,max_rel,dtype,shape,output_index";
/// One line as Python's csv.writer writes it (QUOTE_MINIMAL, "\r\n").
std::string csvLine(const std::vector<std::string>& cells);
std::string csvLine(const CsvRow& row);

/**
 * @brief free_benchmark.csv of one step and rank folder, written as msprobe writes it.
 *
 * UTF-8 with BOM, header first. The rank folder `dump_path/step{N}/rank{R}` is claimed as every collector
 * folder is (dumpfolder.h: created fresh by this run, nothing below dump_path reached through a symlink; an
 * earlier run's folder is refused, never reused), when the first row is written: a step with no finding has
 * neither folder nor file. The file appears with its header through the one output writer
 * (util/outputfile.h, ReplaceMode::Never: a name already taken, a symlink included, is refused, never
 * replaced or followed), then each row is one append write(): a killed run leaves every complete row.
 */
class CsvFile
{
public:
    CsvFile(std::filesystem::path dumpPath, std::string stepFolder, std::string rankFolder);
    /// dump_path/stepFolder/rankFolder/free_benchmark.csv
    const std::filesystem::path& path() const { return m_path; }
    /// Appends a row (the first one claims the folder and creates the file). After a refused claim or header
    /// every later call returns the same error: nothing is retried into a folder that is not this run's.
    std::optional<Diagnostic> append(const CsvRow& row);

private:
    std::filesystem::path m_dumpPath;
    std::string m_stepFolder, m_rankFolder;
    std::filesystem::path m_path;
    bool m_claimed = false; ///< the rank folder is this run's
    bool m_created = false; ///< the file with its header is there
    std::optional<Diagnostic> m_refused;
};

/**
 * @brief The preheat state machine of §11.6 (if_preheat): per-API, per-dtype adaptive thresholds.
 *
 * Driven by the engine per in-scope call; kept free of LibTorch so that tests can feed it ratios.
 */
class Preheat
{
public:
    static constexpr double kInitialThreshold = 2.05;

    Preheat(std::int64_t preheatStep, std::int64_t maxSample);

    /// Call first for every in-scope call: a new step clears the per-step counters and records.
    void enterStep(std::int64_t step);
    /// Step 0: counts the call of `pure` (its `total`); no comparison is made in step 0.
    void countTotal(const std::string& pure);
    /// Steps >= 1: counts the call and says whether it is sampled; its 1-based sequence number if so.
    std::optional<std::int64_t> sample(const std::string& pure);
    /// §11.6's k for `pure`: min(ceil(total / preheat_step), max_sample).
    std::int64_t samplesPerStep(const std::string& pure) const;
    std::int64_t total(const std::string& pure) const;
    /// The threshold the self-comparison uses now (2.05 until adjusted; never below the dtype default).
    double threshold(const std::string& pure, const std::string& dtype) const;
    bool preheating(const std::string& pure, const std::string& dtype) const;
    /// A sampled call's result: its max ratio and whether the CPU comparison agreed. When this step's
    /// samples of `pure` reach k, every dtype recorded for it is adjusted.
    void addSample(const std::string& pure, const std::string& dtype, FloatType type, double ratio, bool cpuConsistent);

private:
    struct DtypeState
    {
        double threshold = kInitialThreshold;
        bool preheating = true;
        FloatType type = FloatType::Other;
        std::vector<std::pair<double, bool>> records; ///< this step's (ratio, cpu consistent)
    };
    void adjust(const std::string& pure);

    std::int64_t m_preheatStep;
    std::int64_t m_maxSample;
    std::int64_t m_step = -1;
    std::map<std::string, std::int64_t, std::less<>> m_total;   ///< calls in step 0
    std::map<std::string, std::int64_t, std::less<>> m_calls;   ///< calls this step
    std::map<std::string, std::int64_t, std::less<>> m_samples; ///< samples this step
    std::map<std::string, std::map<std::string, DtypeState>, std::less<>> m_dtypes;
};

using LogSink = std::function<void(const std::string&)>;

/**
 * @brief One debugger's free benchmark: intercepts the in-scope aten ops of the training thread between
 * start() and stop(), re-executes them perturbed, and checks, fixes or preheats (freebenchtorch.cpp).
 */
class Engine
{
public:
    /// Throws CollectError("collect.freebench") when the interception cannot be installed.
    Engine(const Config& config, std::optional<std::int64_t> rank, LogSink log);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /// Intercepts the calling thread's ops from now on; `rankDir` (dump_path/step{N}/rank{R}) is the folder of
    /// free_benchmark.csv, claimed at its first row (CsvFile).
    void start(const std::filesystem::path& rankDir, std::int64_t step);
    void stop();
    /// The step ended: call counters restart.
    void nextStep();
    /// The first write error met since the last call.
    std::optional<Diagnostic> takeProblem();

    struct State;

private:
    std::unique_ptr<State> m_state;
};

} // namespace probescope::collect::freebench
