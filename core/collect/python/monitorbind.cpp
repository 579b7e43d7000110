// SPDX-License-Identifier: Apache-2.0
// probescope._monitor_c: the C++ half of the Python module's TrainerMon (probescope/_monitor.py). Python's hooks
// keep msprobe's bookkeeping (which module, which micro step, which call id); the statistics of each tensor, the
// alert rules and the files are the collection library's (core/collect/monitorsession.h, monitortorch.h), the
// same code the C++ TrainerMon runs. A separate extension from _C so that the monitor and the dumper evolve apart.
//
// Built with NDEBUG like monitortorch.cpp: LibTorch's headers must see the layout LibTorch was built with.
#include "core/collect/monitorsession.h"
#include "core/collect/monitortorch.h"
#include "probescope/collect/config.h"
#include "probescope/collect/trainermon.h"

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
namespace collect = probescope::collect;
namespace monitor = probescope::collect::monitor;

namespace {

/// One process's monitor: the checked config and, on a rank "module_ranks" includes, its writer.
class MonitorCore
{
public:
    MonitorCore(const std::string& configPath, std::int64_t rank, std::int64_t ppStage,
                std::vector<std::int64_t> groupMates, const std::string& outputDir)
    {
        try {
            m_config = collect::loadMonitorConfig(configPath);
            collect::MonitorOptions options;
            options.rank = rank;
            options.outputDir = outputDir;
            options.ppStage = ppStage;
            options.groupMates = std::move(groupMates);
            if (monitor::rankMonitored(m_config, rank))
                m_session = std::make_unique<monitor::Session>(m_config, monitor::runInfoFrom(options));
        } catch (const collect::CollectError& e) {
            throw py::value_error(e.what());
        }
    }

    py::dict config() const
    {
        py::dict d;
        d["targets"] = m_config.targets;
        d["ops"] = m_config.ops;
        d["eps"] = m_config.eps;
        d["module_ranks"] = m_config.moduleRanks;
        d["xy_distribution"] = m_config.xyDistribution;
        d["all_xy"] = m_config.allXy;
        d["forward_only"] = m_config.forwardOnly;
        d["backward_only"] = m_config.backwardOnly;
        d["wg_distribution"] = m_config.wgDistribution;
        d["mv_distribution"] = m_config.mvDistribution;
        d["param_distribution"] = m_config.paramDistribution;
        d["squash_name"] = m_config.squashName;
        d["monitor_mbs_grad"] = m_config.monitorMbsGrad;
        d["start_step"] = m_config.startStep;
        d["collect_times"] = m_config.collectTimes;
        d["step_interval"] = m_config.stepInterval;
        d["step_count_per_record"] = m_config.stepCountPerRecord;
        d["warnings"] = m_config.warnings;
        return d;
    }

    bool hasWriter() const { return m_session != nullptr; }
    std::string runDir() const { return m_session ? m_session->runDir().string() : std::string(); }

    /// get_metrics of one value into a bucket: a tensor's statistics, NaN for anything else.
    void put(const std::string& bucket, const std::string& tag, py::handle value)
    {
        monitor::Session& s = session();
        monitor::Row row = THPVariable_Check(value.ptr())
                               ? monitor::stats(THPVariable_Unpack(value.ptr()), m_config.ops, m_config.eps)
                               : monitor::missingRow(m_config.ops.size());
        bucketOf(s, bucket).put(tag, std::move(row));
    }

    void registerCallId(const std::string& tag) { session().registerCallId(tag); }
    void clear(const std::string& bucket) { bucketOf(session(), bucket).clear(); }
    void writeStep(std::int64_t step)
    {
        try {
            session().writeStep(step);
        } catch (const collect::CollectError& e) {
            throw py::value_error(e.what());
        }
    }
    std::vector<std::string> messages() const
    {
        return m_session ? m_session->messages() : std::vector<std::string>();
    }

private:
    monitor::Session& session()
    {
        if (!m_session)
            throw py::value_error("this rank is not in the monitor's \"module_ranks\": nothing is written");
        return *m_session;
    }
    static monitor::Bucket& bucketOf(monitor::Session& s, const std::string& name)
    {
        try {
            return s.bucket(name);
        } catch (const std::out_of_range& e) {
            throw py::value_error(e.what());
        }
    }

    collect::MonitorConfig m_config;
    std::unique_ptr<monitor::Session> m_session;
};

} // namespace

PYBIND11_MODULE(_monitor_c, m)
{
    m.doc() = "ProbeScope's monitor (TrainerMon): statistics, alert rules and msprobe's v1 monitor files in C++";
    py::module_::import("torch");
    py::class_<MonitorCore>(m, "MonitorCore")
        .def(py::init<const std::string&, std::int64_t, std::int64_t, std::vector<std::int64_t>, const std::string&>(),
             py::arg("config_path"), py::arg("rank"), py::arg("pp_stage"), py::arg("group_mates"),
             py::arg("output_dir"),
             "Reads and checks the config (ValueError naming the file and position) and, on a monitored rank, claims "
             "output_dir/<time>-rank<R>-<uid> (and anomaly_detected/rank<R> with alert dump).")
        .def_property_readonly("config", &MonitorCore::config)
        .def_property_readonly("has_writer", &MonitorCore::hasWriter)
        .def_property_readonly("run_dir", &MonitorCore::runDir)
        .def_property_readonly("messages", &MonitorCore::messages)
        .def("put", &MonitorCore::put, py::arg("bucket"), py::arg("tag"), py::arg("value"))
        .def("register", &MonitorCore::registerCallId, py::arg("tag"))
        .def("clear", &MonitorCore::clear, py::arg("bucket"))
        .def("write_step", &MonitorCore::writeStep, py::arg("step"));
}
