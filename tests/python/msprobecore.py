# SPDX-License-Identifier: Apache-2.0
"""msprobe 26's own monitor writer behind ProbeScope's TrainerMon hooks, for the reference test and the benchmark.

msprobe's TrainerMon needs torch >= 2 and does not import on this machine's torch 1.13 (the fixtures' README says the
same). What decides the files is not the hooks but msprobe's get_metrics, CSVWriterWithAD, AnomalyScanner,
AnomalyDataFactory and AnomalyDataWriter: MsprobeCore runs exactly those, with the interface of
probescope._monitor_c.MonitorCore, so ProbeScope's TrainerMon can drive either. `install(reference_path)` makes
probescope._monitor use it. msprobe.pytorch's __init__ (the whole dumper, which needs torch >= 2) and tensorboard
(only its SummaryWriter writer needs it) are bypassed; nothing of the code that writes is changed.
"""
import json
import os
import sys
import types
import uuid
from datetime import datetime, timedelta, timezone


def _import_msprobe(reference_dir):
    if "msprobe.pytorch" not in sys.modules:
        package = types.ModuleType("msprobe.pytorch")
        package.__path__ = [os.path.join(reference_dir, "msprobe", "pytorch")]
        sys.modules["msprobe.pytorch"] = package
    if "torch.utils.tensorboard" not in sys.modules:
        board = types.ModuleType("torch.utils.tensorboard")
        board.SummaryWriter = type("SummaryWriter", (), {})
        sys.modules["torch.utils.tensorboard"] = board
    from msprobe.core.monitor.anomaly_processor import AnomalyDataFactory, AnomalyDataWriter, AnomalyScanner
    from msprobe.core.monitor.utils import validate_config
    from msprobe.pytorch.monitor.data_writers import CSVWriterWithAD, WriterInput
    from msprobe.pytorch.monitor.module_metric import get_metrics
    return types.SimpleNamespace(**locals())


class MsprobeCore:
    msprobe = None

    def __init__(self, config_path, rank, pp_stage, group_mates, output_dir):
        m = self.msprobe
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
        m.validate_config(config)
        self.ops, self.eps = config["ops"], config.get("eps", 1e-8)
        self.mbs = config["monitor_mbs_grad"]
        alert = config.get("alert", {"rules": []})
        rules = m.AnomalyScanner.load_rules(alert.get("rules"))
        self.factory = m.AnomalyDataFactory(rank, pp_stage, group_mates) if alert.get("dump", False) else None
        stamp = (datetime.now(timezone.utc) + timedelta(hours=8)).strftime("%b%d_%H-%M-%S")
        uid = str(uuid.uuid4())[:8]
        self.run_dir = os.path.join(output_dir, f"{stamp}-rank{rank}-{uid}")
        ranks = config.get("module_ranks", [])
        self.has_writer = not ranks or rank in ranks
        self.writer = m.CSVWriterWithAD(m.WriterInput(self.run_dir, rules, uid, self.factory,
                                                      config.get("ndigits", 6), config.get("step_count_per_record", 1)))
        if self.factory:
            self.anomaly_writer = m.AnomalyDataWriter(os.path.join(output_dir, "anomaly_detected"), rank)
            self.anomaly_writer.init_detected_json()
        self.config = {"targets": list(config["targets"].keys()), "ops": self.ops, "eps": self.eps,
                       "module_ranks": ranks, "warnings": [], "monitor_mbs_grad": self.mbs,
                       "all_xy": config.get("all_xy", False),
                       "start_step": config["start_step"], "collect_times": config["collect_times"],
                       "step_interval": config["step_interval"],
                       "step_count_per_record": config.get("step_count_per_record", 1)}
        for key in ("xy_distribution", "forward_only", "backward_only", "wg_distribution", "mv_distribution",
                    "param_distribution", "squash_name"):
            self.config[key] = config.get(key, False)
        self.buckets, self.actv_order, self.call_ids, self.call_id = {}, [], {}, 0
        self.messages = []

    def put(self, bucket, tag, value):
        if bucket.startswith("actv:") and bucket not in self.buckets:
            self.actv_order.append(bucket)
        self.msprobe.get_metrics(self.ops, {tag: value}, self.eps, self.buckets.setdefault(bucket, {}))

    def register(self, tag):
        self.call_ids[tag] = self.call_id
        self.call_id += 1

    def clear(self, bucket):
        self.buckets[bucket] = {}

    def write_step(self, step):
        write, b = self.writer.write_metrics, self.buckets
        if self.factory:
            self.factory.set_call_id(self.call_ids)
        for name in self.actv_order:
            write(self.ops, b[name], step, "actv")
            b[name].clear()
        write(self.ops, b.get("actv_grad", {}), step, "actv_grad")
        write(self.ops, b.get("grad_unreduced", {}), step, "grad_unreduced", use_micro_step=self.mbs)
        write(self.ops, b.get("grad_reduced", {}), step, "grad_reduced")
        for name in ("exp_avg", "exp_avg_sq", "param_origin", "param_updated"):
            write(self.ops, b.get(name, {}), step, name)
        if self.factory:
            self.anomaly_writer.write_detected_json(self.writer.get_anomalies())
        self.writer.clear_anomalies()
        self.call_ids.clear()
        self.call_id = 0


def install(reference_dir):
    """probescope._monitor's TrainerMon writes through msprobe's code from now on."""
    MsprobeCore.msprobe = _import_msprobe(reference_dir)
    import probescope._monitor as monitor
    monitor._monitor_c = types.SimpleNamespace(MonitorCore=MsprobeCore)
