# SPDX-License-Identifier: Apache-2.0
"""ProbeScope's TrainerMon (`from probescope.pytorch import TrainerMon`): msprobe 26's v1 monitor layout, the values
against torch's own reductions done the msprobe way, the alert rules' anomaly.json, config errors, and ProbeScope's
own readers (probescope-cli data2db --format monitor, anomaly_analyse) over what it wrote."""
import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import numpy
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import monitortrain  # noqa: E402
from probescope import ProbeScopeError  # noqa: E402
from probescope.pytorch import TrainerMon  # noqa: E402

FOLDER = re.compile(r"^[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}-rank0-[0-9a-f]{8}$")


def cell(value, ndigits=6):
    """What pandas writes for a float after DataFrame.round(ndigits)."""
    return repr(float(numpy.round(value, ndigits)))


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def run_folder(out):
    folders = [d for d in os.listdir(out) if d != "anomaly_detected"]
    assert len(folders) == 1, folders
    return os.path.join(out, folders[0])


class MonitorRun(unittest.TestCase):
    """One training run (4 steps x 2 micro steps, NaN from step 2's last micro step) shared by the tests."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="probescope-monitor-")
        cls.out = os.path.join(cls.scratch, "monitor_output")
        done = subprocess.run([sys.executable, os.path.join(HERE, "monitortrain.py"), "--out", cls.out,
                               "--steps", "4", "--micro", "2", "--nan-at", "2"], capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(done.stderr[-3000:])
        cls.run_dir = run_folder(cls.out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def test_v1_layout(self):
        self.assertRegex(os.path.basename(self.run_dir), FOLDER)
        expected = {f"{metric}_{a}-{b}.csv" for metric in ("actv", "actv_grad", "grad_unreduced", "grad_reduced",
                                                           "exp_avg", "exp_avg_sq", "param_origin", "param_updated")
                    for a, b in ((0, 1), (2, 3))}
        self.assertEqual(set(os.listdir(self.run_dir)), expected)
        ops = ["min", "max", "norm", "zeros", "nans", "mean", "shape", "dtype"]
        header, rows = read_csv(os.path.join(self.run_dir, "actv_0-1.csv"))
        self.assertEqual(header, ["vpp_stage", "name", "step", "micro_step"] + ops)
        names = {(r[1], r[2], r[3]) for r in rows}
        for step in ("0", "1"):
            for micro in ("0", "1"):
                for name in ("module.decoder.layers.0.self_attention.input",
                             "module.decoder.layers.0.self_attention.output",
                             "module.decoder.layers.0.mlp.linear_fc1.input",
                             "module.decoder.layers.0.mlp.linear_fc1.output"):
                    self.assertIn((name, step, micro), names)
        header, rows = read_csv(os.path.join(self.run_dir, "grad_reduced_2-3.csv"))
        self.assertEqual(header, ["vpp_stage", "name", "step"] + ops)
        # Only the targets' parameters, squashed ("module.decoder.layers.0..." -> "layers.0...").
        self.assertEqual({r[1] for r in rows}, {"layers.0.mlp.linear_fc1.weight", "layers.0.mlp.linear_fc1.bias",
                                                "layers.0.self_attention.linear_qkv.weight",
                                                "layers.0.self_attention.linear_qkv.bias",
                                                "layers.0.self_attention.linear_proj.weight",
                                                "layers.0.self_attention.linear_proj.bias"})
        self.assertEqual({r[2] for r in rows}, {"2", "3"})
        weight = [r for r in rows if r[1] == "layers.0.mlp.linear_fc1.weight" and r[2] == "3"][0]
        self.assertEqual(weight[0], "0")
        self.assertEqual(weight[3:5], ["nan", "nan"])  # min, max of a NaN gradient
        self.assertEqual(weight[9:], ["[16, 8]", "torch.float32"])
        self.assertEqual(weight[7], "128")  # nans: an int count

    def test_anomaly_json(self):
        path = os.path.join(self.out, "anomaly_detected", "rank0", "anomaly.json")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        anomalies = json.loads(text)
        self.assertEqual(text, json.dumps(anomalies, indent=1))
        nan = [a for a in anomalies.values() if a["message"].startswith("Rule AnomalyNan")]
        self.assertTrue(nan)
        self.assertEqual(min(a["step"] for a in nan), 2)
        for key, a in anomalies.items():
            self.assertEqual(key, f"{a['tag_name']}_step_{a['step']}_call_{a['call_id']}")
            self.assertEqual((a["rank"], a["micro_step"], a["pp_stage"], a["group_mates"]), (0, 0, 0, [0]))
            self.assertRegex(a["message"], r"^Rule Anomaly(Nan|Turbulence) reports anomaly signal in \('[^']+/rank0/"
                                           r"[a-z_]+', '[a-z]+'\) at step \d+, current value \S+, history mean \S+\.$")
            # msprobe registers call ids for hooked tensors, gradients and moments, not for parameters.
            if a["tag_name"].endswith(("/param_origin", "/param_updated")):
                self.assertEqual(a["call_id"], -1)
            else:
                self.assertGreaterEqual(a["call_id"], 0)
            if "Turbulence" in a["message"]:
                self.assertRegex(a["message"], r"'(norm|mean)'\)")

    def test_probescope_readers(self):
        cli = os.environ.get("PROBESCOPE_CLI")
        if not cli:
            self.skipTest("PROBESCOPE_CLI not set")
        db_dir = os.path.join(self.scratch, "db")
        done = subprocess.run([cli, "data2db", "--data", self.out, "--db", db_dir, "--format", "monitor",
                               "--micro_step", "false"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        db = sqlite3.connect(os.path.join(db_dir, "monitor_data.trend.db"))
        metrics = {name for (name,) in db.execute("SELECT metric_name FROM monitoring_metrics")}
        self.assertEqual(metrics, {"actv", "actv_grad", "grad_unreduced", "grad_reduced", "exp_avg", "exp_avg_sq",
                                   "param_origin", "param_updated"})
        (steps,) = db.execute("SELECT COUNT(DISTINCT step) FROM trend_data").fetchone()
        self.assertEqual(steps, 4)
        norm = db.execute("SELECT d.norm FROM trend_data d JOIN monitoring_targets t ON d.target_id = t.target_id "
                          "JOIN monitoring_metrics m ON d.metric_id = m.metric_id WHERE t.target_name = "
                          "'layers.0.mlp.linear_fc1.weight' AND m.metric_name = 'exp_avg' AND d.step = 1").fetchone()
        _, rows = read_csv(os.path.join(self.run_dir, "exp_avg_0-1.csv"))
        # Adam has moments from its first step on: step 0 has none (msprobe's pre-step hook finds none either).
        self.assertEqual({r[2] for r in rows}, {"1"})
        csv_norm = [r[5] for r in rows if r[1] == "layers.0.mlp.linear_fc1.weight" and r[2] == "1"][0]
        self.assertAlmostEqual(norm[0], float(csv_norm), places=12)
        top = os.path.join(self.scratch, "top")
        done = subprocess.run([cli, "anomaly_analyse", "-d", os.path.join(self.out, "anomaly_detected"), "-o", top,
                               "-k", "3"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(top, "anomaly_analyse.json"), encoding="utf-8") as f:
            self.assertEqual(len(json.load(f)), 3)


class MonitorValues(unittest.TestCase):
    """The statistics against torch's reductions done as msprobe's metrics do them."""

    def test_cells_match_torch(self):
        scratch = tempfile.mkdtemp(prefix="probescope-monitor-values-")
        try:
            out = os.path.join(scratch, "out")
            os.environ["MONITOR_OUTPUT_DIR"] = out
            config = os.path.join(scratch, "config.json")
            with open(config, "w", encoding="utf-8") as f:
                json.dump(dict(monitortrain.DEFAULT_CONFIG, alert={}), f)
            torch.manual_seed(7)
            model = monitortrain.Wrapper(monitortrain.Gpt(16, 8, 16, 2))
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
            monitor = TrainerMon(config, params_have_main_grad=False)
            monitor.set_monitor(model, optimizer, grad_acc_steps=1)
            seen = {}
            attention = model.module.decoder.layers[0].self_attention
            attention.register_forward_hook(lambda m, a, o: seen.__setitem__("out", o.detach().clone()))
            fc1 = model.module.decoder.layers[0].mlp.linear_fc1
            for step in range(2):  # step 1: Adam's moments exist (from step 0's update)
                optimizer.zero_grad()
                tokens = torch.randint(0, 16, (2, 4))
                tokens[0, 0] = 3
                model(tokens).pow(2).mean().backward()
                grad = fc1.weight.grad.clone()
                if step == 1:
                    exp_avg_sq = optimizer.state[fc1.weight]["exp_avg_sq"].clone()
                optimizer.step()
            run_dir = run_folder(out)

            def row(metric, name):
                _, rows = read_csv(os.path.join(run_dir, f"{metric}_0-1.csv"))
                return [r for r in rows if r[1] == name and r[2] == "1"][0]

            def expected(x):
                return [cell(x.min().item()), cell(x.max().item()), cell(torch.norm(x.double(), p=2).item()),
                        cell((torch.sum(torch.abs(x) < 1e-8) / x.numel()).item()), str(torch.isnan(x).sum().item()),
                        cell(torch.mean(x.double()).item()), str(list(x.shape)).replace("'", ""), str(x.dtype)]

            self.assertEqual(row("actv", "module.decoder.layers.0.self_attention.output")[4:], expected(seen["out"]))
            self.assertEqual(row("grad_reduced", "layers.0.mlp.linear_fc1.weight")[3:], expected(grad))
            self.assertEqual(row("exp_avg_sq", "layers.0.mlp.linear_fc1.weight")[3:], expected(exp_avg_sq))
            self.assertEqual(row("param_updated", "layers.0.mlp.linear_fc1.weight")[3:], expected(fc1.weight.detach()))
        finally:
            os.environ.pop("MONITOR_OUTPUT_DIR", None)
            shutil.rmtree(scratch, ignore_errors=True)


class MonitorErrors(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="probescope-monitor-err-")
        os.environ["MONITOR_OUTPUT_DIR"] = os.path.join(self.scratch, "out")

    def tearDown(self):
        os.environ.pop("MONITOR_OUTPUT_DIR", None)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def config(self, text):
        path = os.path.join(self.scratch, "config.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_bad_config_names_file_and_position(self):
        path = self.config('{\n "ops": ["norm"],\n "step_count_per_record": 0\n}')
        with self.assertRaisesRegex(ProbeScopeError, re.escape(path) + r":3:\d+: error \[collect.monitor-config\]: "
                                    r"\"step_count_per_record\" must be from 1 to 1000000"):
            TrainerMon(path)
        path = self.config('{"alert": {"rules": [{"rule_name": "AnomalyBig"}]}}')
        with self.assertRaisesRegex(ProbeScopeError, "must be AnomalyTurbulence or AnomalyNan"):
            TrainerMon(path)
        path = self.config('{"ops": "norm"')
        with self.assertRaisesRegex(ProbeScopeError, "not valid JSON"):
            TrainerMon(path)

    def test_rerun_does_not_replace_anomaly_json(self):
        path = self.config('{"alert": {"rules": [{"rule_name": "AnomalyNan"}], "dump": true}}')
        TrainerMon(path)
        marker = os.path.join(self.scratch, "out", "anomaly_detected", "rank0", "anomaly.json")
        self.assertTrue(os.path.isfile(marker))
        with self.assertRaisesRegex(ProbeScopeError, "rank0.*already exists"):
            TrainerMon(path)


if __name__ == "__main__":
    unittest.main()
