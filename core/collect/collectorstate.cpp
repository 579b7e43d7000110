// SPDX-License-Identifier: Apache-2.0
#include "collectorstate.h"

#include "dumpfolder.h"

#include <algorithm>
#include <system_error>

namespace fs = std::filesystem;

namespace probescope::collect {

namespace {

bool contains(const std::vector<std::string>& values, std::string_view v)
{
    return std::find(values.begin(), values.end(), v) != values.end();
}

std::string frameText(const CallSite& site, std::string_view code)
{
    // msprobe's frame form ("File f, line n, in function, \n code"), so its readers and ours parse it.
    std::string s = "File " + (site.file.empty() ? std::string("<unknown>") : site.file) + ", line "
        + std::to_string(site.line) + ", in " + (site.function.empty() ? std::string("<unknown>") : site.function)
        + ", \n ";
    s += code;
    return s;
}

/// "Module.a.B.forward.3" -> "Module.a.B.backward.3".
std::string backwardOf(const std::string& forwardKey)
{
    std::string k = forwardKey;
    if (const auto pos = k.rfind(".forward"); pos != std::string::npos)
        k.replace(pos, 8, ".backward");
    return k;
}

} // namespace

Session::Session(Config config, std::optional<std::int64_t> rank)
    : m_config(std::move(config))
    , m_rank(rank)
{
    // A range must be expressed in the names the level records.
    for (const std::string& item : m_config.scope) {
        const bool moduleName = item.starts_with("Module.");
        if (m_config.level == Level::L1 && moduleName)
            throw CollectError("collect.config", "scope entry \"" + item
                                                     + "\" names a module, but level L1 records APIs only "
                                                       "(use level L0 or mix, or an API name such as Aten.gelu.0)");
        if (m_config.level == Level::L0 && !moduleName)
            throw CollectError("collect.config", "scope entry \"" + item
                                                     + "\" is not a module name, but level L0 records modules "
                                                       "only (use e.g. Module.fc1.Linear.forward.0)");
    }
}

Session::~Session() = default;

fs::path Session::rankDir() const
{
    const std::string rankName = m_rank ? "rank" + std::to_string(*m_rank) : std::string("rank");
    return fs::path(m_config.dumpPath) / ("step" + std::to_string(m_step)) / rankName;
}

fs::path Session::tensorDir() const { return rankDir() / "dump_tensor_data"; }

bool Session::stepSelected() const
{
    return (m_config.steps.empty() && m_config.stepRanges.empty())
        || selects(m_config.steps, m_config.stepRanges, m_step);
}

bool Session::rankSelected() const
{
    if (m_config.ranks.empty() && m_config.rankRanges.empty())
        return true;
    // As msprobe: a rank filter selects nothing in a run that has no rank.
    return m_rank && selects(m_config.ranks, m_config.rankRanges, *m_rank);
}

bool Session::selected() const { return m_started && stepSelected() && rankSelected(); }

bool Session::forwardOn() const { return backwardOn() && !m_forwardEnded; }

bool Session::backwardOn() const
{
    return m_started && m_writer && !m_writer->isFinished() && !m_overflowDone && !m_writeFailed;
}

std::optional<Diagnostic> Session::openWriter()
{
    if (m_writer)
        return m_writer->isFinished() ? m_writer->resume() : std::nullopt;
    dump::DumpWriterHeader header;
    header.task = toString(m_config.task);
    header.level = toString(m_config.level);
    // A fresh rank folder, reached through no symlink (dumpfolder.h): a rerun never mixes with or rewrites
    // an earlier run's files, and no planted link sends the dump outside dump_path.
    if (auto problem = claimRankFolder(m_config.dumpPath, rankDir().parent_path().filename().string(),
                                       rankDir().filename().string(), m_config.task != Task::Statistics))
        return problem;
    if (m_config.task != Task::Statistics)
        header.dumpDataDir = tensorDir().string();
    if (m_config.level == Level::Debug) {
        header.dumpFileName = "debug.json";
        header.withConstruct = false;
        header.withStack = false;
    }
    auto writer = dump::DumpWriter::create(rankDir(), header);
    if (!writer)
        return writer.error();
    m_writer = std::move(*writer);
    return std::nullopt;
}

std::optional<Diagnostic> Session::start(const CallSite& site)
{
    if (m_started)
        return std::nullopt; // msprobe ignores a second start()
    m_started = true;
    m_forwardEnded = false;
    m_startSite = site;
    if (!stepSelected() || !rankSelected() || m_overflowDone || m_config.task == Task::FreeBenchmark)
        return std::nullopt; // free_benchmark writes free_benchmark.csv only (freebench.h)
    if (m_writeFailed)
        return std::nullopt; // this step's dump.json was left cut at its failure; the next step starts afresh
    return openWriter();
}

std::optional<Diagnostic> Session::stop()
{
    if (!m_started)
        return std::nullopt;
    m_started = false;
    m_modules.clear();
    return closeWriter();
}

std::optional<Diagnostic> Session::closeWriter()
{
    if (!m_writer)
        return std::nullopt;
    return m_writeFailed ? m_writer->abandon() : m_writer->finish();
}

std::optional<Diagnostic> Session::nextStep()
{
    std::optional<Diagnostic> problem;
    if (m_started)
        problem = stop();
    else
        problem = closeWriter();
    m_writer.reset();
    m_writeFailed = false;
    m_apiCounts.clear();
    m_moduleCounts.clear();
    m_debugCounts.clear();
    m_inRange = false;
    m_rangeDone = false;
    ++m_step;
    return problem;
}

bool Session::listAllows(std::string_view key) const
{
    if (m_config.list.empty())
        return true;
    // msprobe's list: full names, or any part of one ("relu" selects every relu call).
    return std::any_of(m_config.list.begin(), m_config.list.end(),
                       [&](const std::string& item) { return key.find(item) != std::string_view::npos; });
}

bool Session::directionAllowed(bool forward) const
{
    const auto& m = m_config.dataMode;
    if (contains(m, "all") || (!contains(m, "forward") && !contains(m, "backward")))
        return true;
    return contains(m, forward ? "forward" : "backward");
}

bool Session::partAllowed(bool input) const
{
    const auto& m = m_config.dataMode;
    if (contains(m, "all") || (!contains(m, "input") && !contains(m, "output")))
        return true;
    return contains(m, input ? "input" : "output");
}

bool Session::matchesScope(std::string_view key, const std::string& item) const
{
    if (key == item)
        return true;
    // APIs may be named without direction ("Aten.gelu.0"), modules without direction and call index.
    if (key.ends_with(".forward") && key.substr(0, key.size() - 8) == item)
        return true;
    if (const auto pos = key.find(".forward."); pos != std::string_view::npos && key.substr(0, pos) == item)
        return true;
    return false;
}

bool Session::enterRange(std::string_view key)
{
    if (m_config.scope.empty())
        return true;
    if (!m_inRange && !m_rangeDone && matchesScope(key, m_config.scope.front()))
        m_inRange = true;
    return m_inRange;
}

void Session::leaveRange(std::string_view key)
{
    if (m_inRange && matchesScope(key, m_config.scope.back())) {
        m_inRange = false;
        m_rangeDone = true;
    }
}

std::string Session::currentParent() const
{
    for (auto it = m_modules.rbegin(); it != m_modules.rend(); ++it) {
        if (it->record)
            return it->key;
    }
    return {};
}

std::vector<std::string> Session::stackFrames(const std::string& key, const CallSite* own) const
{
    // LibTorch records no call site for an aten op, so the chain of marked module calls stands in for
    // the Python stack msprobe writes: innermost first, then the start() call.
    std::vector<std::string> frames;
    if (own)
        frames.push_back(frameText(*own, key));
    for (auto it = m_modules.rbegin(); it != m_modules.rend(); ++it)
        frames.push_back(frameText(it->site, it->key));
    frames.push_back(frameText(m_startSite, "PrecisionDebugger::start()"));
    return frames;
}

void Session::fillForward(EntryPlan& plan, bool inRange)
{
    plan.inRange = inRange;
    plan.record = inRange && listAllows(plan.key) && directionAllowed(true);
    plan.inputs = partAllowed(true);
    plan.outputs = partAllowed(false);
    plan.saveTensors = m_config.task != Task::Statistics;
    plan.parent = currentParent();
    plan.backwardRecord = inRange && listAllows(plan.backwardKey) && directionAllowed(false);
}

EntryPlan Session::planApi(std::string_view prefix, std::string_view op)
{
    std::string name(prefix);
    name += '.';
    name += op;
    const std::int64_t index = m_apiCounts[name]++;
    EntryPlan plan;
    const std::string base = name + "." + std::to_string(index);
    plan.key = base + ".forward";
    plan.backwardKey = base + ".backward";
    fillForward(plan, enterRange(plan.key));
    if (plan.record)
        plan.stack = stackFrames(plan.key, nullptr);
    return plan;
}

void Session::apiDone(const EntryPlan& plan) { leaveRange(plan.key); }

EntryPlan Session::beginModule(std::string_view path, std::string_view className, const CallSite& site)
{
    std::string stem = "Module.";
    stem += path;
    stem += '.';
    stem += className;
    const std::int64_t index = m_moduleCounts[stem]++;
    EntryPlan plan;
    plan.isModule = true;
    plan.key = stem + ".forward." + std::to_string(index);
    plan.backwardKey = stem + ".backward." + std::to_string(index);
    fillForward(plan, enterRange(plan.key));
    const std::string parent = currentParent();
    plan.backwardParent = parent.empty() ? std::string() : backwardOf(parent);
    if (plan.record)
        plan.stack = stackFrames(plan.key, &site);
    m_modules.push_back({ plan.key, site, plan.record });
    return plan;
}

void Session::endModule(const EntryPlan& plan)
{
    // Pops up to and including this call, so a module left by an exception cannot stay a parent.
    const auto it = std::find_if(m_modules.rbegin(), m_modules.rend(),
                                 [&](const Frame& f) { return f.key == plan.key; });
    if (it != m_modules.rend())
        m_modules.erase(std::prev(it.base()), m_modules.end());
    leaveRange(plan.key);
}

EntryPlan Session::planBackward(const EntryPlan& forward) const
{
    EntryPlan plan;
    plan.isModule = forward.isModule;
    plan.key = forward.backwardKey;
    plan.record = forward.backwardRecord;
    plan.inputs = partAllowed(true);
    plan.outputs = partAllowed(false);
    plan.saveTensors = m_config.task != Task::Statistics;
    plan.parent = forward.backwardParent; // msprobe 1.2 leaves the parent of backward APIs null
    return plan;
}

EntryPlan Session::planParametersGrad(std::string_view moduleStem, bool forwardRecorded) const
{
    EntryPlan plan;
    plan.isModule = true;
    plan.construct = false; // msprobe lists parameters_grad in dump.json only
    plan.key = std::string(moduleStem) + ".parameters_grad";
    // Parameter gradients count as backward outputs for data_mode.
    plan.record = forwardRecorded && listAllows(plan.key) && directionAllowed(false) && partAllowed(false);
    plan.outputs = true;
    plan.saveTensors = m_config.task != Task::Statistics;
    return plan;
}

EntryPlan Session::planDebug(std::string_view name, bool grad)
{
    std::string variable(name);
    if (grad)
        variable += "_grad";
    const std::int64_t index = m_debugCounts[variable]++;
    EntryPlan plan;
    plan.key = variable + "." + std::to_string(index) + ".debug";
    plan.record = stepSelected() && rankSelected();
    plan.inputs = plan.outputs = true;
    plan.saveTensors = m_config.task == Task::Tensor;
    plan.construct = false;
    return plan;
}

std::optional<Diagnostic> Session::openForDebug()
{
    if (m_config.level != Level::Debug || !stepSelected() || !rankSelected())
        return std::nullopt;
    if (m_writer && !m_writer->isFinished())
        return std::nullopt;
    if (m_writeFailed)
        return std::nullopt;
    return openWriter();
}

std::optional<Diagnostic> Session::write(const EntryPlan& plan, std::string_view valueText, bool overflow,
                                         bool forward)
{
    Admission admission = admit(plan, overflow);
    if (!admission.writer)
        return admission.problem;
    return publish(*admission.writer, plan, valueText, forward);
}

Session::Admission Session::admit(const EntryPlan& plan, bool overflow)
{
    Admission admission;
    if (!plan.record || m_writeFailed)
        return admission;
    if (m_config.task == Task::OverflowCheck) {
        if (!overflow || m_overflowDone)
            return admission;
        ++m_overflows;
        if (m_config.overflowNums > 0 && m_overflows >= m_config.overflowNums)
            m_overflowDone = true; // this one is still written
    }
    if (!m_writer || m_writer->isFinished()) {
        if (m_config.level != Level::Debug)
            return admission;
        if ((admission.problem = openWriter()))
            return admission;
    }
    admission.writer = m_writer.get();
    return admission;
}

std::optional<Diagnostic> Session::publish(dump::DumpWriter& writer, const EntryPlan& plan, std::string_view valueText,
                                           bool forward) const
{
    if (auto problem = writer.addEntry(plan.key, valueText))
        return problem;
    const bool hierarchy = m_config.level == Level::L0 || m_config.level == Level::Mix;
    if (hierarchy && plan.construct) {
        if (auto problem = writer.addConstruct(plan.key, plan.parent))
            return problem;
    }
    if (forward && !plan.stack.empty())
        return writer.addStack(plan.key, plan.stack);
    return std::nullopt;
}

std::string Session::dataName(std::string_view key, std::string_view suffix)
{
    std::string name(key);
    if (!suffix.empty()) {
        name += '.';
        name += suffix;
    }
    name += ".pt";
    return name;
}

} // namespace probescope::collect
