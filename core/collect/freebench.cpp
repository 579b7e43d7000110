// SPDX-License-Identifier: Apache-2.0
#include "freebench.h"
#include "core/util/csv.h"
#include "core/util/outputfile.h"
#include "dumpfolder.h"

#include "core/dump/dumpwriter.h"

#include <algorithm>
#include <cmath>

namespace fs = std::filesystem;

namespace probescope::collect::freebench {

double defaultThreshold(FloatType type)
{
    switch (type) {
    case FloatType::Half: return 1.002;
    case FloatType::BFloat16: return 1.004;
    default: return 1.0002;
    }
}

double absTolerance(FloatType type)
{
    switch (type) {
    case FloatType::BFloat16: return 1e-4;
    case FloatType::Half: return 1e-6;
    case FloatType::Float: return 1e-8;
    case FloatType::Double: return 1e-16;
    case FloatType::Other: return 1e-8;
    }
    return 1e-8;
}

std::int64_t ratioChunks(std::uint64_t bytes)
{
    const double mb = static_cast<double>(bytes) / (1024.0 * 1024.0);
    if (mb <= 0)
        return 1;
    const double chunks = std::exp2(std::floor(std::log2(mb)) - 4);
    return static_cast<std::int64_t>(std::clamp(chunks, 1.0, 128.0));
}

std::string pureName(std::string_view apiName)
{
    std::string_view s = apiName;
    for (int i = 0; i < 2; ++i) {
        const auto dot = s.rfind('.');
        if (dot == std::string_view::npos)
            break;
        s = s.substr(0, dot);
    }
    return std::string(s);
}

std::string torchSizeText(const std::vector<std::int64_t>& shape)
{
    std::string s = "torch.Size([";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            s += ", ";
        s += std::to_string(shape[i]);
    }
    s += "])";
    return s;
}

std::string maxRelText(double ratio)
{
    const double rel = ratio - 1;
    // csv writes str(float): repr, but "inf"/"nan" where json.dump writes Infinity/NaN.
    if (std::isnan(rel))
        return "nan";
    if (std::isinf(rel))
        return rel < 0 ? "-inf" : "inf";
    std::string s;
    dump::appendPyFloat(s, rel);
    return s;
}

std::string csvLine(const std::vector<std::string>& cells)
{
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i > 0)
            line += ',';
        appendCsvField(line, cells[i]);
    }
    line += "\r\n"; // csv.writer's default lineterminator
    return line;
}

std::string csvLine(const CsvRow& row)
{
    return csvLine({ std::to_string(row.rank), row.pertMode, row.stage, std::to_string(row.step), row.apiName,
                     row.maxRel, row.dtype, row.shape,
                     row.outputIndex ? std::to_string(*row.outputIndex) : std::string() });
}

// ------------------------------------------------------------------------------------------------

namespace {

Diagnostic ioError(const fs::path& path, const std::string& what)
{
    return makeError("collect.io", fileLocation(path), what);
}

} // namespace

CsvFile::CsvFile(fs::path dumpPath, std::string stepFolder, std::string rankFolder)
    : m_dumpPath(std::move(dumpPath))
    , m_stepFolder(std::move(stepFolder))
    , m_rankFolder(std::move(rankFolder))
    , m_path(m_dumpPath / m_stepFolder / m_rankFolder / "free_benchmark.csv")
{
}

std::optional<Diagnostic> CsvFile::append(const CsvRow& row)
{
    if (m_refused)
        return m_refused;
    if (!m_created) {
        // The collectors' folder rule (dumpfolder.h): a fresh rank folder below dump_path, through no symlink.
        // Before, the folder was made with create_directories (following a planted step link) and an earlier
        // run's file was removed: a rerun replaced what an earlier run found.
        if (!m_claimed) {
            if (auto problem = claimRankFolder(m_dumpPath, m_stepFolder, m_rankFolder, false)) {
                m_refused = problem;
                return problem;
            }
            m_claimed = true;
        }
        // The header and the file appear together (the one output writer, util/outputfile.h): a reader never
        // sees a file without its header, a full disk leaves no file, and a name already taken (a file or a
        // symlink planted in the folder since it was claimed) is refused, never replaced nor appended to.
        std::string head = "\xEF\xBB\xBF"; // utf-8-sig
        head += kCsvHeader;
        head += "\r\n";
        if (const auto failure = writeFileAtomically(m_path, head, ReplaceMode::Never)) {
            if (failure->nameTaken) {
                m_refused = ioError(m_path, "already exists: free_benchmark.csv is written by this run only and "
                                            "never replaces a file (" + failure->message + ")");
                return m_refused;
            }
            // A full disk: the folder is this run's, so the next row tries the header again.
            return ioError(m_path, "cannot write the header: " + failure->message);
        }
        m_created = true;
    }
    // One append of whole rows: never half a row under the name (appendToOutput cuts a failed append back).
    if (auto failure = appendToOutput(m_path, csvLine(row)))
        return ioError(m_path, "cannot append a row: " + *failure);
    return std::nullopt;
}

// ------------------------------------------------------------------------------------------------

Preheat::Preheat(std::int64_t preheatStep, std::int64_t maxSample)
    : m_preheatStep(std::max<std::int64_t>(preheatStep, 1))
    , m_maxSample(std::max<std::int64_t>(maxSample, 1))
{
}

void Preheat::enterStep(std::int64_t step)
{
    if (step == m_step)
        return;
    m_step = step;
    m_calls.clear();
    m_samples.clear();
    for (auto& [pure, dtypes] : m_dtypes) {
        for (auto& [dtype, state] : dtypes)
            state.records.clear();
    }
}

void Preheat::countTotal(const std::string& pure) { ++m_total[pure]; }

std::int64_t Preheat::total(const std::string& pure) const
{
    const auto it = m_total.find(pure);
    return it == m_total.end() ? 0 : it->second;
}

std::int64_t Preheat::samplesPerStep(const std::string& pure) const
{
    const std::int64_t t = total(pure);
    if (t == 0)
        return 0;
    const std::int64_t perStep = (t + m_preheatStep - 1) / m_preheatStep; // ceil(total / preheat_step)
    return std::min(perStep, m_maxSample);
}

std::optional<std::int64_t> Preheat::sample(const std::string& pure)
{
    if (m_step >= m_preheatStep)
        return std::nullopt;
    const std::int64_t c = ++m_calls[pure];
    const std::int64_t t = total(pure);
    const std::int64_t k = samplesPerStep(pure);
    for (std::int64_t i = 1; i <= k; ++i) {
        std::int64_t s = (m_preheatStep * (i - 1) + m_step) % t;
        if (s == 0)
            s = t;
        if (s == c)
            return c;
    }
    return std::nullopt;
}

double Preheat::threshold(const std::string& pure, const std::string& dtype) const
{
    const auto it = m_dtypes.find(pure);
    if (it == m_dtypes.end())
        return kInitialThreshold;
    const auto d = it->second.find(dtype);
    return d == it->second.end() ? kInitialThreshold : d->second.threshold;
}

bool Preheat::preheating(const std::string& pure, const std::string& dtype) const
{
    const auto it = m_dtypes.find(pure);
    if (it == m_dtypes.end())
        return true;
    const auto d = it->second.find(dtype);
    return d == it->second.end() || d->second.preheating;
}

void Preheat::addSample(const std::string& pure, const std::string& dtype, FloatType type, double ratio,
                        bool cpuConsistent)
{
    DtypeState& state = m_dtypes[pure][dtype];
    state.type = type;
    if (state.preheating)
        state.records.emplace_back(ratio, cpuConsistent);
    if (++m_samples[pure] >= samplesPerStep(pure))
        adjust(pure);
}

void Preheat::adjust(const std::string& pure)
{
    for (auto& [dtype, state] : m_dtypes[pure]) {
        if (!state.preheating || state.records.empty())
            continue;
        std::vector<double> con, incon;
        for (const auto& [ratio, consistent] : state.records)
            (consistent ? con : incon).push_back(ratio);
        const double old = state.threshold;
        double updated = old;
        if (!con.empty() && !incon.empty()) {
            const double minIncon = *std::min_element(incon.begin(), incon.end());
            if (minIncon > *std::max_element(con.begin(), con.end())) {
                updated = std::min(minIncon, old);
                state.preheating = false;
            }
        } else if (!con.empty()) {
            updated = *std::max_element(con.begin(), con.end()) > old ? 1 + (old - 1) * 2 : 1 + (old - 1) / 2;
        } else {
            updated = std::min(*std::min_element(incon.begin(), incon.end()), old);
            state.preheating = false;
        }
        state.threshold = std::max(updated, defaultThreshold(state.type));
        state.records.clear();
    }
}

} // namespace probescope::collect::freebench
