# SPDX-License-Identifier: Apache-2.0
"""The Python module against hostile inputs (docs/reliability.md): a rerun into a used dump_path, symlinks planted
below it, config files that are FIFOs, wrong types and huge ranges, and its leaves against msprobe 1.2.2's rules
(torch's float32 reductions, a negative 0-d tensor's Norm, *_except_inf_nan, data_name only for saved tensors).
Each case runs in its own interpreter, as a user's script would, and must end with ProbeScopeError naming the
file or key: no hang, no crash, nothing written outside dump_path, nothing of an earlier run replaced.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

import torch

SCRIPT = """
import sys, json, torch
from probescope import PrecisionDebugger, ProbeScopeError
try:
    d = PrecisionDebugger(config_path=sys.argv[1])
    x = torch.tensor([[1.0, -2.0], [3.0, {value}]], requires_grad=True)
    d.start()
    (torch.nn.functional.relu(x) * 2).sum().backward()
    d.stop()
    d.step()
except ProbeScopeError as e:
    print(e)
    sys.exit(3)
"""


def run(config_path, value="4.0", timeout=60):
    return subprocess.run([sys.executable, "-c", SCRIPT.format(value=value), config_path], capture_output=True,
                          text=True, timeout=timeout)


def snapshot(folder):
    """Every file below `folder` with its bytes and inode, symlinks as their targets."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[path] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    out[path] = (st.st_ino, f.read())
    return out


class Hostile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="probescope-hostile-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def config(self, name="config.json", **values):
        path = os.path.join(self.tmp, name)
        data = {"task": "tensor", "level": "L1", "dump_path": os.path.join(self.tmp, "dump")}
        data.update(values)
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
        return path

    def test_rerun_into_a_used_dump_path_is_refused_and_replaces_nothing(self):
        config = self.config()
        first = run(config)
        self.assertEqual(first.returncode, 0, first.stderr)
        rank = os.path.join(self.tmp, "dump", "step0", "rank")
        self.assertTrue(os.path.isfile(os.path.join(rank, "dump_tensor_data",
                                                    "Functional.relu.0.forward.output.0.pt")))
        before = snapshot(os.path.join(self.tmp, "dump"))
        for value in ("4.0", "-7.0"):  # the same model, and a changed one (other tensor values)
            again = run(config, value)
            self.assertEqual(again.returncode, 3, again.stderr)
            self.assertIn(rank, again.stdout)
            self.assertIn("already exists", again.stdout)
            self.assertEqual(snapshot(os.path.join(self.tmp, "dump")), before)

    def test_symlinks_below_dump_path_are_refused(self):
        outside = os.path.join(self.tmp, "outside")
        os.makedirs(outside)
        dump = os.path.join(self.tmp, "dump")
        os.makedirs(dump)
        os.symlink(outside, os.path.join(dump, "step0"))
        done = run(self.config())
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn(os.path.join(dump, "step0"), done.stdout)
        self.assertIn("symlink", done.stdout)
        self.assertEqual(os.listdir(outside), [])
        # A planted rank folder link (in a real step folder) is refused the same way.
        os.remove(os.path.join(dump, "step0"))
        os.makedirs(os.path.join(dump, "step0"))
        os.symlink(outside, os.path.join(dump, "step0", "rank"))
        done = run(self.config())
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn(os.path.join(dump, "step0", "rank"), done.stdout)
        self.assertEqual(os.listdir(outside), [])

    def test_a_fifo_as_config_path_is_refused_at_once(self):
        fifo = os.path.join(self.tmp, "config.json")
        os.mkfifo(fifo)
        done = run(fifo, timeout=30)  # a blocking open would hang until the timeout
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn(fifo, done.stdout)

    def test_config_values_of_the_wrong_type_name_file_line_column_and_key(self):
        cases = [
            ({"is_deterministic": "false"}, '"is_deterministic"'),
            ({"async_queue_bytes": 1e30}, '"async_queue_bytes"'),
            ({"async_queue_bytes": -1}, '"async_queue_bytes"'),
            ({"step": ["0-99999999999"]}, '"step"'),
            ({"rank": ["3-1"]}, '"rank"'),
            ({"seed": "1"}, '"seed"'),
            ({"levle": "L1"}, '"levle"'),
        ]
        for values, key in cases:
            with self.subTest(values=values):
                config = self.config(**values)
                done = run(config)
                self.assertEqual(done.returncode, 3, done.stderr)
                self.assertIn(key, done.stdout)
                # file:line:col as the C++ API's config errors (the values sit on line 2 or later)
                self.assertRegex(done.stdout, "^" + config.replace("\\", "\\\\") + r":\d+:\d+: error \[collect\.config\]")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "dump")))

    def test_wide_step_ranges_cost_nothing(self):
        # msprobe's bound (1e6) is accepted, stored as a range: steps 0 and 5 of ["0-0", "5-1000000"] are dumped.
        config = self.config(step=["0-0", "5-1000000"])
        code = ("import sys, torch, resource\nfrom probescope import PrecisionDebugger\n"
                "d = PrecisionDebugger(config_path=sys.argv[1])\n"
                "for i in range(7):\n"
                "    d.start(); torch.relu(torch.ones(2)); d.stop(); d.step()\n")
        done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "dump"))), ["step0", "step5", "step6"])

    def test_set_write_queue_bytes_refuses_what_is_no_byte_count(self):
        code = ("import sys\nfrom probescope import _C\n"
                "for bad in (1e30, -1, '1G', True, 2**64):\n"
                "    try:\n        _C.set_write_queue_bytes(bad)\n    except ValueError as e:\n"
                "        assert 'async_queue_bytes' in str(e), e\n    else:\n        sys.exit(f'accepted {bad!r}')\n"
                "_C.set_write_queue_bytes(4096)\nassert _C.write_queue_limit() == 4096\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_set_write_queue_bytes_from_threads_while_tensors_are_queued(self):
        # The writer is swapped under its own lock while other threads queue files (no GIL held there).
        dump = os.path.join(self.tmp, "threads")
        code = ("import sys, threading, torch\nfrom probescope import _C\n"
                "os_dir = sys.argv[1]\n"
                "import os\nos.makedirs(os_dir)\n"
                "def queue(k):\n"
                "    for i in range(200):\n"
                "        _C.describe(torch.full((64,), float(i)), f't{k}.{i}', os_dir)\n"
                "def limits():\n"
                "    for i in range(200):\n"
                "        _C.set_write_queue_bytes(0 if i % 2 else 1 << 16)\n"
                "threads = [threading.Thread(target=queue, args=(k,)) for k in range(3)]\n"
                "threads.append(threading.Thread(target=limits))\n"
                "[t.start() for t in threads]\n[t.join() for t in threads]\n_C.flush()\n"
                "assert len(os.listdir(os_dir)) == 600, len(os.listdir(os_dir))\n"
                "for name in os.listdir(os_dir):\n"
                "    t = torch.load(os.path.join(os_dir, name))\n"
                "    assert float(t[0]) == float(name.split('.')[1]), name\n")
        done = subprocess.run([sys.executable, "-c", code, dump], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)


class OverflowCheck(unittest.TestCase):
    """Task overflow_check from Python, as the C++ API runs it: only the entries with an inf or NaN tensor, their
    .pt files, and no more than overflow_nums of them."""

    def test_only_overflowing_apis_are_dumped(self):
        tmp = tempfile.mkdtemp(prefix="probescope-overflow-")
        try:
            code = ("import sys, json, torch\nfrom probescope import PrecisionDebugger\n"
                    "d = PrecisionDebugger(config_path=sys.argv[1])\n"
                    "x = torch.ones(3, requires_grad=True)\n"
                    "d.start()\n"
                    "a = torch.mul(x, 2)\n"              # finite
                    "b = torch.div(a, torch.zeros(3))\n"  # inf: the first overflow
                    "c = torch.add(b, 1)\n"              # inf in, inf out
                    "e = torch.sub(a, 1)\n"              # finite
                    "d.stop()\n")
            for limit, expected in ((1, ["Torch.div.0.forward"]), (-1, ["Torch.div.0.forward", "Torch.add.0.forward"])):
                with self.subTest(limit=limit):
                    dump = os.path.join(tmp, f"dump{limit}")
                    config = os.path.join(tmp, f"config{limit}.json")
                    with open(config, "w") as f:
                        json.dump({"task": "overflow_check", "level": "L1", "dump_path": dump,
                                   "overflow_check": {"overflow_nums": limit}}, f)
                    done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True,
                                          timeout=120)
                    self.assertEqual(done.returncode, 0, done.stderr)
                    rank = os.path.join(dump, "step0", "rank")
                    with open(os.path.join(rank, "dump.json")) as f:
                        head = json.load(f)
                    self.assertEqual(head["task"], "overflow_check")
                    self.assertEqual(list(head["data"]), expected)
                    div = head["data"]["Torch.div.0.forward"]
                    self.assertEqual(div["output"][0]["Max"], float("inf"))
                    names = sorted(os.listdir(os.path.join(rank, "dump_tensor_data")))
                    self.assertIn("Torch.div.0.forward.output.0.pt", names)
                    self.assertFalse([n for n in names if n.startswith(("Torch.mul", "Torch.sub"))])
                    saved = torch.load(os.path.join(rank, "dump_tensor_data", "Torch.div.0.forward.output.0.pt"))
                    self.assertTrue(torch.isinf(saved).all())
                    with open(os.path.join(rank, "stack.json")) as f:
                        self.assertEqual(sorted(json.load(f)), sorted(expected))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class Arguments(unittest.TestCase):
    """PrecisionDebugger's keyword arguments go through the C++ parser with config.json (one grammar for "step";
    the section read is the one of the task the arguments name, as msprobe 1.2.2's DebuggerConfig reads it)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="probescope-arguments-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_the_task_argument_reads_its_own_section(self):
        config = os.path.join(self.tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L1", "dump_path": os.path.join(self.tmp, "dump"),
                       "statistics": {"list": ["gelu"]}, "tensor": {"list": ["relu"]}}, f)
        code = ("import sys, torch\nfrom probescope import PrecisionDebugger\n"
                "d = PrecisionDebugger(config_path=sys.argv[1], task='tensor')\n"
                "d.start(); torch.relu(torch.ones(2)); torch.nn.functional.gelu(torch.ones(2)); d.stop()\n")
        done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        rank = os.path.join(self.tmp, "dump", "step0", "rank")
        with open(os.path.join(rank, "dump.json")) as f:
            head = json.load(f)
        self.assertEqual(head["task"], "tensor")
        self.assertEqual(list(head["data"]), ["Torch.relu.0.forward"])
        self.assertEqual(sorted(os.listdir(os.path.join(rank, "dump_tensor_data"))),
                         ["Torch.relu.0.forward.input.0.pt", "Torch.relu.0.forward.output.0.pt"])

    def test_step_items_follow_the_config_files_rules(self):
        code = ("import sys\nfrom probescope import PrecisionDebugger, ProbeScopeError\n"
                "try:\n    PrecisionDebugger(dump_path=sys.argv[1], step=eval(sys.argv[2]))\n"
                "except ProbeScopeError as e:\n    print(e); sys.exit(3)\n")
        for step in ('["0-99999999999"]', "[1000001]", "[2**70]", "[True]", '["4-2"]', "[1.5]", "(1, 2)"):
            with self.subTest(step=step):
                done = subprocess.run([sys.executable, "-c", code, os.path.join(self.tmp, "dump"), step],
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
                self.assertIn("PrecisionDebugger", done.stdout)
                self.assertIn("error [collect.config]", done.stdout)
                self.assertIn('"step"', done.stdout)
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "dump")))


class FreeBenchmark(unittest.TestCase):
    """Task free_benchmark from Python: the C++ library's engine (the C++ API's golden of
    tests/collect/tst_freebench.cpp FreeBenchRun.ChangeValueRowsGolden, from a Python script), its config rules, and
    free_benchmark.csv under the collectors' folder rule: a rerun into a used dump_path and a planted symlink are
    refused by stop(), nothing of them replaced or followed."""

    CODE = ("import sys, torch\nfrom probescope import PrecisionDebugger, ProbeScopeError\n"
            "x = torch.tensor([1.0, 2.0, 4.0]); six = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])\n"
            "try:\n"
            "    d = PrecisionDebugger(config_path=sys.argv[1])\n"
            "    d.start()\n"
            "    c = torch.cumsum(x, 0)\n"          # [1, 3, 7] vs [4, 6, 7]: ratio 4
            "    s = torch.sum(x)\n"                # 7 either way: no row
            "    parts = six.chunk(2)\n"            # ratio 6 for both parts
            "    r = torch.relu(torch.tensor(2.0))\n"  # 0-d: change_value is cancelled
            "    d.stop()\n"
            "    d.step()\n"
            "except ProbeScopeError as e:\n"
            "    print(e)\n"
            "    sys.exit(3)\n"
            "assert c.tolist() == [1.0, 3.0, 7.0] and s.item() == 7.0 and parts[0].tolist() == [1.0, 2.0, 3.0]\n"
            "assert r.item() == 2.0\n")
    HEAD = "\ufeffrank,pert_mode,stage,step,api_name,max_rel,dtype,shape,output_index\n"

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="probescope-freebench-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def config(self, section, dump="dump", **top):
        path = os.path.join(self.tmp, "config.json")
        data = {"task": "free_benchmark", "level": "L1", "dump_path": os.path.join(self.tmp, dump),
                "free_benchmark": section}
        data.update(top)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def run_code(self, config):
        return subprocess.run([sys.executable, "-c", self.CODE, config], capture_output=True, text=True, timeout=120)

    def test_change_value_rows_are_the_cpp_apis(self):
        config = self.config({"pert_mode": "change_value", "list": ["cumsum", "chunk", "sum", "relu"]})
        done = self.run_code(config)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        rank = os.path.join(self.tmp, "dump", "step0", "rank")
        self.assertEqual(os.listdir(rank), ["free_benchmark.csv"])  # no dump files
        with open(os.path.join(rank, "free_benchmark.csv"), encoding="utf-8", newline="") as f:
            text = f.read()
        self.assertEqual(text, (self.HEAD.replace("\n", "\r\n")
                                + "0,change_value,forward,0,Aten.cumsum.0.forward,3.0,torch.float32,torch.Size([3]),\r\n"
                                "0,change_value,forward,0,Aten.chunk.0.forward,5.0,torch.float32,torch.Size([3]),0\r\n"
                                "0,change_value,forward,0,Aten.chunk.0.forward,5.0,torch.float32,torch.Size([3]),1\r\n"))
        self.assertIn("[msprobe] Free benchmark: Perturbation is change_value of Aten.cumsum.0.forward.", done.stderr)
        self.assertIn("For Aten.relu.0.forward, ", done.stderr)

    def test_a_rerun_into_a_used_dump_path_is_refused_by_stop(self):
        config = self.config({"pert_mode": "change_value", "list": ["cumsum"]})
        self.assertEqual(self.run_code(config).returncode, 0)
        before = snapshot(os.path.join(self.tmp, "dump"))
        done = self.run_code(config)
        self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
        self.assertIn("already exists", done.stdout)
        self.assertIn(os.path.join(self.tmp, "dump", "step0", "rank"), done.stdout)
        self.assertEqual(snapshot(os.path.join(self.tmp, "dump")), before)

    def test_a_symlink_below_dump_path_is_not_followed(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(elsewhere)
        os.makedirs(os.path.join(self.tmp, "dump"))
        os.symlink(elsewhere, os.path.join(self.tmp, "dump", "step0"))
        done = self.run_code(self.config({"pert_mode": "change_value", "list": ["cumsum"]}))
        self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
        self.assertIn("symlink", done.stdout)
        self.assertEqual(os.listdir(elsewhere), [])

    def test_config_rules_are_the_cpp_apis(self):
        cases = (({"pert_mode": "to_cpu"}, {}, "fuzz_device"),
                 ({"pert_mode": "change_value", "handler_type": "fix"}, {}, "handler_type"),
                 ({}, {"level": "mix"}, "level"))
        for section, top, key in cases:
            with self.subTest(key=key):
                done = self.run_code(self.config(section, **top))
                self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
                self.assertIn("config.json", done.stdout)
                self.assertIn("[collect.config]", done.stdout)
                self.assertIn(key, done.stdout)
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "dump")))


class Leaves(unittest.TestCase):
    """msprobe 1.2.2's statistics (pytorch_processor.get_stat_info_sync and _analyze_tensor), bit for bit."""

    def describe(self, tensor, tensor_dir=""):
        from probescope import _C
        return _C.describe(tensor, "x", tensor_dir)

    @staticmethod
    def msprobe(data):
        """What msprobe 1.2.2 writes for a tensor (its code, restated)."""
        if data.numel() == 0:
            return [None] * 4
        if data.dtype == torch.bool:
            return [torch.any(data).item(), torch.all(data).item(), None, None]
        if not data.shape:
            return [data.item()] * 4
        if not data.is_floating_point() or data.dtype == torch.float64:
            data = data.float()
        return [torch.max(data).item(), torch.min(data).item(), torch.mean(data).item(), torch.norm(data).item()]

    def test_statistics_are_torchs_own_reductions(self):
        g = torch.Generator().manual_seed(7)
        near_zero = torch.randn(1000, generator=g)
        near_zero = near_zero - near_zero.mean()  # a mean of about 1e-9: float32 and float64 sums differ
        cases = {
            "near-zero mean": near_zero,
            "float64": torch.randn(33, 17, dtype=torch.float64, generator=g) * 1e3,
            "float16": torch.randn(257, generator=g).half(),
            "bfloat16": torch.randn(100, generator=g).bfloat16(),
            "int64": torch.randint(-50, 50, (40,), generator=g),
            "transposed": torch.randn(64, 48, generator=g).t(),
            "negative 0-d": torch.tensor(-2.5),
            "negative 0-d float64": torch.tensor(-1e-300, dtype=torch.float64),
            "0-d int": torch.tensor(-3),
            "bool": torch.tensor([True, False]),
            "inf": torch.tensor([1.0, float("inf"), -3.0]),
        }
        for name, t in cases.items():
            with self.subTest(name):
                leaf = self.describe(t)
                got = [leaf["Max"], leaf["Min"], leaf["Mean"], leaf["Norm"]]
                want = self.msprobe(t.detach())
                self.assertEqual(json.dumps(got), json.dumps(want))  # bit for bit, as json writes them
        self.assertLess(self.describe(torch.tensor(-2.5))["Norm"], 0)

    def test_except_inf_nan_where_msprobe_writes_them(self):
        leaf = self.describe(torch.tensor([1.0, float("inf"), -3.0, float("-inf")]))
        self.assertEqual((leaf["Max_except_inf_nan"], leaf["Min_except_inf_nan"]), (1.0, -3.0))
        leaf = self.describe(torch.tensor([float("nan"), 2.0]))
        self.assertEqual((leaf["Max_except_inf_nan"], leaf["Min_except_inf_nan"]), (2.0, 2.0))
        leaf = self.describe(torch.tensor([1.0, 2.0]))
        self.assertNotIn("Max_except_inf_nan", leaf)
        self.assertNotIn("Min_except_inf_nan", leaf)
        leaf = self.describe(torch.tensor([float("inf"), 2.0]))
        self.assertIn("Max_except_inf_nan", leaf)
        self.assertNotIn("Min_except_inf_nan", leaf)

    def test_data_name_only_for_saved_tensors(self):
        folder = tempfile.mkdtemp(prefix="probescope-leaves-")
        try:
            from probescope import _C
            leaf = self.describe(torch.empty(3, device="meta"), folder)
            self.assertNotIn("data_name", leaf)
            leaf = self.describe(torch.ones(3), folder)
            self.assertEqual(leaf["data_name"], "x.pt")
            _C.flush()
            self.assertEqual(os.listdir(folder), ["x.pt"])
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
