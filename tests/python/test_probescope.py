# SPDX-License-Identifier: Apache-2.0
"""ProbeScope's Python module on its own: train.py (tests/python) dumped by `probescope`, checked against
values torch computes. Run by ctest (tests/python/CMakeLists.txt) with PYTHONPATH=BUILD/python and
PROBESCOPE_CLI set; `python3 -m unittest test_probescope` runs it by hand the same way.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train.py")


def train(dump_path, *options, tool="probescope"):
    args = [sys.executable, TRAIN, "--tool", tool, "--dump-path", dump_path] + list(options)
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def load(path):
    with open(path) as f:
        return json.load(f)


def leaves(value, out):
    """Every tensor leaf of an entry part."""
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            out.append(value)
        else:
            for v in value.values():
                leaves(v, out)
    elif isinstance(value, list):
        for v in value:
            leaves(v, out)
    return out


def close(a, b, rel=1e-5):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-7


class ProbeScopeModule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="probescope-py-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_import_paths(self):
        import probescope
        from probescope import PrecisionDebugger, seed_all  # noqa: F401
        from probescope.pytorch import PrecisionDebugger as P2, seed_all as s2  # noqa: F401
        self.assertIs(P2, probescope.PrecisionDebugger)
        self.assertIs(s2, probescope.seed_all)
        from probescope import _C
        described = _C.describe(torch.tensor([[1.0, -3.0], [2.0, 4.0]]), "x")
        self.assertEqual(described["Max"], 4.0)
        self.assertEqual(described["Min"], -3.0)
        self.assertEqual(described["Mean"], 1.0)
        self.assertTrue(close(described["Norm"], math.sqrt(30.0)))

    def test_statistics_mix(self):
        dump = os.path.join(self.tmp, "stat-mix")
        train(dump, "--task", "statistics", "--level", "mix", "--steps", "2",
              "--grads-json", os.path.join(self.tmp, "grads"))
        for step in (0, 1):
            rank = os.path.join(dump, f"step{step}", "rank")
            head = load(os.path.join(rank, "dump.json"))
            self.assertEqual(list(head), ["task", "level", "framework", "dump_data_dir", "data"])
            self.assertEqual((head["task"], head["level"], head["framework"], head["dump_data_dir"]),
                             ("statistics", "mix", "pytorch", None))
            data = head["data"]
            keys = list(data)
            # msprobe's names and order: the API inside a module comes first, then the module's entry, then
            # its parameters_grad placeholder (filled by the backward).
            for name in ("Functional.conv2d.0.forward", "Module.conv.Conv2d.forward.0",
                         "Module.conv.Conv2d.parameters_grad", "Functional.gelu.0.forward",
                         "Module.block.ffn.act.Noisy.forward.0", "Tensor.__add__.0.forward",
                         "Functional.softmax.0.forward", "Torch.matmul.1.forward",
                         "Functional.cross_entropy.0.forward", "Functional.cross_entropy.0.backward",
                         "Functional.gelu.0.backward", "Module.block.ffn.FFN.backward.0"):
                self.assertIn(name, data)
            self.assertLess(keys.index("Functional.conv2d.0.forward"), keys.index("Module.conv.Conv2d.forward.0"))
            self.assertEqual(keys.index("Module.conv.Conv2d.parameters_grad"),
                             keys.index("Module.conv.Conv2d.forward.0") + 1)
            entry = data["Module.block.ffn.fc1.Linear.forward.0"]
            self.assertEqual(list(entry), ["input_args", "input_kwargs", "output", "parameters", "is_recompute"])
            self.assertEqual(list(entry["parameters"]), ["weight", "bias"])
            api = data["Functional.linear.0.forward"]
            self.assertEqual(list(api), ["input_args", "input_kwargs", "is_recompute", "output"])
            self.assertEqual(list(data["Functional.gelu.0.backward"]), ["input", "output"])
            # construct.json: modules under their parent module, APIs under the module they ran in.
            construct = load(os.path.join(rank, "construct.json"))
            self.assertEqual(construct["Module.block.ffn.fc1.Linear.forward.0"], "Module.block.ffn.FFN.forward.0")
            self.assertEqual(construct["Module.block.Block.forward.0"], None)
            self.assertEqual(construct["Functional.gelu.0.forward"], "Module.block.ffn.act.Noisy.forward.0")
            self.assertEqual(construct["Module.block.ffn.fc1.Linear.backward.0"], "Module.block.ffn.FFN.backward.0")
            self.assertIn("Functional.gelu.0.forward", load(os.path.join(rank, "stack.json")))
            # parameters_grad: the gradients torch computed (their norms, written by train.py after backward).
            grads = load(os.path.join(self.tmp, f"grads.step{step}"))
            for stem, module in (("Module.conv.Conv2d", "conv"), ("Module.block.ffn.fc2.Linear", "block.ffn.fc2")):
                for param in ("weight", "bias"):
                    norm = data[f"{stem}.parameters_grad"][param][0]["Norm"]
                    self.assertTrue(close(norm, grads[f"{module}.{param}"]), (stem, param, norm))
        # The model's input, as train.py makes it: the first conv2d's input_args[0].
        x = torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1))
        leaf = load(os.path.join(dump, "step0", "rank", "dump.json"))["data"]["Functional.conv2d.0.forward"]["input_args"][0]
        self.assertEqual((leaf["dtype"], leaf["shape"]), ("torch.float32", [4, 3, 8, 8]))
        for key, value in (("Max", x.max()), ("Min", x.min()), ("Mean", x.double().mean()), ("Norm", x.double().norm())):
            self.assertTrue(close(leaf[key], float(value), 1e-6), (key, leaf[key], float(value)))

    def test_tensor_files_match_statistics(self):
        # Every .pt file holds the tensor its entry describes, also where files are links to a tensor seen
        # before and where in-place ops (the zoo model's ReLU(inplace=True)) change a tensor between entries.
        self.check_tensor_files("tensor-l1", "L1", "net", 100)
        self.check_tensor_files("tensor-zoo-mix", "mix", "zoo", 60)

    def check_tensor_files(self, folder, level, model, at_least):
        dump = os.path.join(self.tmp, folder)
        train(dump, "--task", "tensor", "--level", level, "--model", model, "--steps", "1")
        rank = os.path.join(dump, "step0", "rank")
        head = load(os.path.join(rank, "dump.json"))
        self.assertEqual(head["dump_data_dir"], os.path.join(rank, "dump_tensor_data"))
        if level == "L1":
            self.assertEqual(load(os.path.join(rank, "construct.json")), {})
        checked = exact = 0
        for name, entry in head["data"].items():
            for leaf in leaves(entry, []):
                self.assertIn("data_name", leaf, name)
                self.assertTrue(leaf["data_name"].startswith(name + "."), leaf["data_name"])
                t = torch.load(os.path.join(rank, "dump_tensor_data", leaf["data_name"]))
                self.assertEqual(str(t.dtype), leaf["dtype"])
                self.assertEqual(list(t.shape), leaf["shape"])
                if t.numel() == 0 or t.dtype == torch.bool:
                    continue
                if t.dim() == 0:
                    self.assertEqual(leaf["Max"], t.item())
                    continue
                # msprobe 1.2.2's statistics: torch's own reductions, float32 for integer and float64 tensors.
                # The file holds a contiguous copy; a reduction over the model's layout may round differently.
                f = t.float() if not t.is_floating_point() or t.dtype == torch.float64 else t
                for key, value in (("Max", f.max()), ("Min", f.min()), ("Mean", f.mean()), ("Norm", f.norm())):
                    if leaf[key] == value.item():
                        exact += 1
                    self.assertTrue(close(leaf[key], value.item(), 1e-6), (name, key, leaf[key], value.item()))
                checked += 1
        self.assertGreater(checked, at_least)
        self.assertGreater(exact, 4 * checked * 0.9)  # bit for bit but where the layout changes the order (93%)
        self.assertIn("Functional.linear.0.forward.input.0.pt", os.listdir(os.path.join(rank, "dump_tensor_data")))
        if model == "zoo":
            relu = head["data"]["Functional.relu.0.forward"]
            self.assertLess(relu["input_args"][0]["Min"], 0.0)  # before the in-place ReLU
            self.assertEqual(relu["output"][0]["Min"], 0.0)

    def test_md5_is_crc32_of_the_tensor(self):
        md5_dump, tensor_dump = os.path.join(self.tmp, "md5"), os.path.join(self.tmp, "tensor-for-md5")
        train(md5_dump, "--task", "statistics", "--summary-mode", "md5", "--level", "L1", "--steps", "1")
        train(tensor_dump, "--task", "tensor", "--level", "L1", "--steps", "1")
        md5 = load(os.path.join(md5_dump, "step0", "rank", "dump.json"))["data"]
        tensors = load(os.path.join(tensor_dump, "step0", "rank", "dump.json"))["data"]
        checked = 0
        for name in ("Functional.linear.0.forward", "Functional.gelu.0.forward", "Functional.gelu.0.backward"):
            for a, b in zip(leaves(md5[name], []), leaves(tensors[name], [])):
                t = torch.load(os.path.join(tensor_dump, "step0", "rank", "dump_tensor_data", b["data_name"]))
                self.assertEqual(a["md5"], f"{zlib.crc32(t.numpy().tobytes()):08x}")
                checked += 1
        self.assertGreater(checked, 4)

    def test_config_errors_name_the_key(self):
        config = os.path.join(self.tmp, "bad.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L7", "dump_path": self.tmp}, f)
        code = ("import sys; from probescope import PrecisionDebugger, ProbeScopeError\n"
                "try:\n    PrecisionDebugger(config_path=sys.argv[1])\n"
                "except ProbeScopeError as e:\n    print(e); sys.exit(3)\n")
        done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn(config, done.stdout)
        self.assertIn('"level"', done.stdout)
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L1"}, f)
        done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn('"dump_path" is required', done.stdout)
        with open(config, "w") as f:
            json.dump({"task": "statistics", "dump_path": self.tmp, "step": [0, "2-x"]}, f)
        done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True)
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertIn('"step"', done.stdout)

    def test_async_queue_bytes_sets_the_library_writers_bound(self):
        # config.json's async_queue_bytes (the C++ library's key) bounds the bytes waiting for the disk.
        config = os.path.join(self.tmp, "queue.json")
        code = ("import sys; from probescope import PrecisionDebugger, ProbeScopeError, _C\n"
                "try:\n    PrecisionDebugger(config_path=sys.argv[1])\n"
                "except ProbeScopeError as e:\n    print(e); sys.exit(3)\n"
                "print(_C.write_queue_limit())\n")
        with open(config, "w") as f:
            json.dump({"task": "tensor", "level": "L1", "dump_path": self.tmp, "async_queue_bytes": 12345}, f)
        done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "12345")
        for bad in (-1, "1G", True):
            with open(config, "w") as f:
                json.dump({"task": "tensor", "dump_path": self.tmp, "async_queue_bytes": bad}, f)
            done = subprocess.run([sys.executable, "-c", code, config], capture_output=True, text=True)
            self.assertEqual(done.returncode, 3, done.stderr)
            self.assertIn('"async_queue_bytes"', done.stdout)
        # A dump written with a bound smaller than one tensor (each goes alone) equals one written at once.
        small, direct = os.path.join(self.tmp, "queue-small"), os.path.join(self.tmp, "queue-none")
        env = dict(os.environ)
        env["PROBESCOPE_WRITE_QUEUE_MB"] = "0"
        args = ["--task", "tensor", "--level", "L1", "--steps", "1"]
        subprocess.run([sys.executable, TRAIN, "--tool", "probescope", "--dump-path", direct] + args,
                       check=True, capture_output=True, env=env)
        env["PROBESCOPE_WRITE_QUEUE_MB"] = "1"
        subprocess.run([sys.executable, TRAIN, "--tool", "probescope", "--dump-path", small] + args,
                       check=True, capture_output=True, env=env)
        self.assertEqual(load(os.path.join(small, "step0", "rank", "dump.json"))["data"],
                         load(os.path.join(direct, "step0", "rank", "dump.json"))["data"])
        a = sorted(os.listdir(os.path.join(small, "step0", "rank", "dump_tensor_data")))
        self.assertEqual(a, sorted(os.listdir(os.path.join(direct, "step0", "rank", "dump_tensor_data"))))
        self.assertGreater(len(a), 50)

    def test_steps_and_keyword_arguments(self):
        # No config file: msprobe's defaults, the keyword arguments and step=["1-2"] (a range) decide.
        dump = os.path.join(self.tmp, "kwargs")
        code = ("import torch, sys\n"
                "from probescope.pytorch import PrecisionDebugger\n"
                "model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())\n"
                "d = PrecisionDebugger(dump_path=sys.argv[1], task='statistics', level='L0', step=['1-2'])\n"
                "for _ in range(4):\n"
                "    d.start(model=model); model(torch.ones(1, 3)).sum().backward(); d.stop(); d.step()\n")
        done = subprocess.run([sys.executable, "-c", code, dump], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(sorted(os.listdir(dump)), ["step1", "step2"])
        data = load(os.path.join(dump, "step1", "rank", "dump.json"))["data"]
        self.assertEqual(list(data), ["Module.0.Linear.forward.0", "Module.0.Linear.parameters_grad",
                                      "Module.1.ReLU.forward.0", "Module.1.ReLU.backward.0",
                                      "Module.0.Linear.backward.0"])

    @unittest.skipUnless(os.environ.get("PROBESCOPE_CLI"), "PROBESCOPE_CLI not set")
    def test_compare_names_the_injected_culprit(self):
        for task in ("tensor", "statistics"):
            with self.subTest(task=task):
                pair = os.path.join(self.tmp, f"pair-{task}")
                train(os.path.join(pair, "bench"), "--task", task, "--level", "mix", "--steps", "1")
                train(os.path.join(pair, "npu"), "--task", task, "--level", "mix", "--steps", "1", "--perturb")
                done = subprocess.run([os.environ["PROBESCOPE_CLI"], "compare",
                                       "--npu", os.path.join(pair, "npu", "step0"),
                                       "--bench", os.path.join(pair, "bench", "step0"),
                                       "-o", os.path.join(pair, "out")], capture_output=True, text=True)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("first failing node: Module.block.ffn.act.Noisy.forward.0 ", done.stdout)
                # msprobe.pytorch's compare(), which a script may call at its end, through the same CLI.
                from probescope.pytorch import compare
                out = os.path.join(pair, "out-api")
                compare({"npu_json_path": os.path.join(pair, "npu", "step0", "rank", "dump.json"),
                         "bench_json_path": os.path.join(pair, "bench", "step0", "rank", "dump.json")}, out)
                results = [f for f in os.listdir(out) if f.startswith("compare_result") and f.endswith(".csv")]
                self.assertEqual(len(results), 1, os.listdir(out))
                with open(os.path.join(out, results[0])) as f:
                    self.assertIn("Module.block.ffn.act.Noisy.forward.0.output.0", f.read())


def _at_depth3(value):
    """json.dump(indent=1)'s text of `value` as an entry part of dump.json lays it out (depth 3)."""
    prefix = '{\n "d": {\n  "e": {\n   "p": '
    suffix = '\n  }\n }\n}'
    text = json.dumps({"d": {"e": {"p": value}}}, indent=1)
    assert text.startswith(prefix) and text.endswith(suffix)
    return text[len(prefix):-len(suffix)]


class _MsprobeDicts:
    """msprobe 1.2.2's Python dumper's bookkeeping as the module kept it in Python before the collector core took
    it (dicts, dict.update, json.dumps(indent=1)): the model probescope._C.Book is held to."""

    def __init__(self):
        self.data, self.stack, self.construct, self.module_node = {}, {}, {}, {}
        self.module_stack, self.api_parent_node, self.counts = [], "", {}

    def count(self, key):
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        return n

    @staticmethod
    def replace_last(text, old, new):
        if text is None:
            return None
        i = text.rfind(old)
        return text if i < 0 else text[:i] + text[i:].replace(old, new, 1)

    def begin_module(self, name):
        self.module_node[name] = self.module_stack[-1] if self.module_stack else None
        self.module_stack.append(name)
        self.api_parent_node = name

    def end_module(self):
        if self.module_stack:
            self.module_stack.pop()
        self.api_parent_node = self.module_stack[-1] if self.module_stack else None

    def begin_module_backward(self, name):
        forward = self.replace_last(name, "backward", "forward")
        self.module_node[name] = self.replace_last(self.module_node.get(forward), "forward", "backward")
        self.api_parent_node = None

    def update_construct(self, name):
        self.construct[name] = self.api_parent_node
        self.construct.update(self.module_node)

    def put(self, name, info):
        if name in self.data and isinstance(self.data[name], dict):
            self.data[name].update(info)
        else:
            self.data[name] = dict(info)


class CollectorCoreBook(unittest.TestCase):
    """The bookkeeping the Python module hands to the collector core (core/collect/msprobebook.h): counters,
    construct.json parents, stack.json frames, entries and the files' text, against msprobe's dicts."""

    def test_random_calls_give_msprobes_files(self):
        import random
        from probescope import _C
        values = [None, True, 0, -7, 2 ** 70, 1.5, float("nan"), float("-inf"), "x\u00e9\u2603\n", [], {},
                  [1, [2.25, None]], {"a": {"b": []}, "c": "d"}]
        for seed in range(40):
            rng = random.Random(seed)
            book, ref = _C.Book(True), _MsprobeDicts()
            names = []
            for _ in range(rng.randrange(1, 120)):
                op = rng.randrange(9)
                if op in (0, 2):  # a module's forward or backward begins
                    direction = "forward" if op == 0 else "backward"
                    key = f"{rng.choice(['Module.a.Linear', 'Module.b.ReLU', 'Module.a.b.Conv'])}.{direction}"
                    name = f"{key}.{book.count_module(key)}"
                    self.assertEqual(name, f"{key}.{ref.count('M' + key)}")
                    getattr(book, "begin_module" if op == 0 else "begin_module_backward")(name)
                    getattr(ref, "begin_module" if op == 0 else "begin_module_backward")(name)
                    names.append(name)
                elif op == 1:
                    book.end_module()
                    ref.end_module()
                elif op == 3:
                    stem = rng.choice(["Torch.add.", "Functional.linear.", "Tensor.__mul__."])
                    n = book.count_api(stem)
                    self.assertEqual(n, ref.count("A" + stem))
                    name = f"{stem}{n}.{rng.choice(['forward', 'backward'])}"
                    names.append(name)
                    book.update_construct(name)
                    ref.update_construct(name)
                elif op == 4 and names:
                    name = rng.choice(names)
                    book.update_construct(name)
                    ref.update_construct(name)
                elif op == 5 and names:
                    name = rng.choice(names)
                    info = {rng.choice(["input_args", "input_kwargs", "output", "is_recompute", "w"]):
                            rng.choice(values) for _ in range(rng.randrange(1, 4))}
                    book.put(name, {k: _at_depth3(v) for k, v in info.items()})
                    ref.put(name, info)
                elif op == 6 and names:
                    name = rng.choice(names)
                    book.drop(name)
                    ref.data.pop(name, None)
                elif op == 7 and names:
                    name = rng.choice(names)
                    frames = [f"File f.py, line {i}, in g, \n x = {i}" for i in range(rng.randrange(3))]
                    book.set_stack(name, frames)
                    ref.stack[name] = frames
                elif op == 8 and names:
                    name = rng.choice(names) + ".debug"
                    value = rng.choice(values)
                    text = json.dumps({"d": {"e": value}}, indent=1)[len('{\n "d": {\n  "e": '):-len('\n }\n}')]
                    book.put_value(name, text)
                    ref.data[name] = value
            head = {"task": "tensor", "level": "mix", "framework": "pytorch", "dump_data_dir": "/d/\u00e9",
                    "data": ref.data}
            self.assertEqual(book.dump_text("tensor", "mix", "/d/\u00e9"), json.dumps(head, indent=1), seed)
            head["dump_data_dir"] = None
            self.assertEqual(book.dump_text("tensor", "mix", None), json.dumps(head, indent=1), seed)
            self.assertEqual(book.construct_text(), json.dumps(ref.construct, indent=1), seed)
            self.assertEqual(book.stack_text(), json.dumps(ref.stack, indent=1), seed)
            book.reset()
            self.assertEqual(book.construct_text(), "{}")
            self.assertEqual(book.count_api("Torch.add."), 0)

    def test_overflow_count_runs_over_steps_and_stops_at_the_limit(self):
        from probescope import _C
        book = _C.Book(False)
        self.assertFalse(book.admit_overflow(False, 2))  # no inf or NaN: not written, not counted
        self.assertTrue(book.admit_overflow(True, 2))
        book.reset()  # a new step keeps the run's count
        self.assertTrue(book.admit_overflow(True, 2))  # the second reaches overflow_nums and is still written
        self.assertFalse(book.admit_overflow(True, 2))
        self.assertEqual(book.overflow_count, 2)
        unlimited = _C.Book(False)
        self.assertTrue(all(unlimited.admit_overflow(True, -1) for _ in range(5)))

    def test_level_debug_entries_in_save_order_with_gradients_filled(self):
        script = (
            "import sys, torch\nfrom probescope import PrecisionDebugger\n"
            "PrecisionDebugger(dump_path=sys.argv[1], task='statistics', level='debug')\n"
            "x = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)\ny = (x * 2).sum()\n"
            "PrecisionDebugger.save(x, 'x')\n"
            "PrecisionDebugger.save({'a': [1, 2.5, None], 'b': x.detach()}, 'd', save_backward=False)\n"
            "PrecisionDebugger.save(x, 'x')\ny.backward()\nPrecisionDebugger.save(torch.tensor(-2.0), 's')\n")
        with tempfile.TemporaryDirectory(prefix="probescope-debug-") as folder:
            done = subprocess.run([sys.executable, "-c", script, os.path.join(folder, "d")], capture_output=True,
                                  text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            path = os.path.join(folder, "d", "rank", "debug.json")
            with open(path) as f:
                text = f.read()
            debug = json.loads(text)
        self.assertEqual(text, json.dumps(debug, indent=1))
        self.assertEqual(debug["level"], "debug")
        data = debug["data"]
        self.assertEqual(list(data), ["x.0.debug", "x_grad.0.debug", "d.0.debug", "x.1.debug", "x_grad.1.debug",
                                      "s.0.debug"])
        self.assertEqual(data["x.0.debug"]["Max"], 3.0)
        for grad in ("x_grad.0.debug", "x_grad.1.debug"):  # null placeholders until backward, then the gradient
            self.assertEqual((data[grad]["Max"], data[grad]["Min"]), (2.0, 2.0))
        self.assertEqual(data["d.0.debug"]["a"], [{"type": "int", "value": 1}, {"type": "float", "value": 2.5}, None])
        self.assertEqual(data["d.0.debug"]["b"]["Min"], -2.0)
        self.assertEqual(data["s.0.debug"]["Norm"], -2.0)

    def test_construct_is_empty_at_L1(self):
        from probescope import _C
        book = _C.Book(False)
        book.begin_module("Module.a.Linear.forward.0")
        book.update_construct("Torch.add.0.forward")
        self.assertEqual(book.construct_text(), "{}")

    def test_leaf_text_is_json_dumps_of_msprobes_leaves(self):
        import enum
        from probescope import _C

        class Color(enum.IntEnum):
            RED = 3

        class Ratio(float):
            pass

        value = {"n": 2 ** 70, "e": Color.RED, "r": Ratio(0.1), "s": "\u00e9\u2603\x01", "sl": slice(1, None, 2),
                 "el": ..., "size": torch.Size([2, 3]), "dtype": torch.float16, "device": torch.device("cpu", 1),
                 "keys": {1: True, 2.5: None, None: 0, False: -1.0}, "nan": float("nan"),
                 "t": torch.tensor([1.0, float("inf")]), "mf": torch.channels_last}
        for depth in (0, 2, 3):
            text = _C.describe_text(value, "x", "", False, depth)
            loaded = json.loads(text)
            if depth == 0:
                self.assertEqual(text, json.dumps(loaded, indent=1))
        self.assertEqual(loaded["n"], {"type": "int", "value": 2 ** 70})
        self.assertEqual(loaded["e"], {"type": "Color", "value": 3})
        self.assertEqual(loaded["r"], {"type": "Ratio", "value": 0.1})
        self.assertEqual(loaded["s"], {"type": "str", "value": "\u00e9\u2603\x01"})
        self.assertEqual(loaded["sl"], {"type": "slice", "value": [1, None, 2]})
        self.assertEqual(loaded["el"], {"type": "ellipsis", "value": "..."})
        self.assertEqual(loaded["size"], {"type": "torch.Size", "value": [2, 3]})
        self.assertEqual(loaded["dtype"], {"type": "torch.dtype", "value": "torch.float16"})
        self.assertEqual(loaded["device"], {"type": "torch.device", "value": "cpu:1"})
        self.assertEqual(list(loaded["keys"]), ["1", "2.5", "null", "false"])
        self.assertTrue(math.isnan(loaded["nan"]["value"]))
        self.assertEqual(loaded["t"]["Max"], float("inf"))
        self.assertEqual(loaded["t"]["Max_except_inf_nan"], 1.0)
        self.assertEqual(loaded["mf"], {"type": "torch.memory_format", "format": "channels_last"})
        # parameters_grad's [leaf] and its placeholder [null], at an entry part's depth.
        self.assertEqual(_C.describe_text(None, "", "", False, 3, True), _at_depth3([None]))
        grad = torch.tensor([3.0, -4.0])
        self.assertEqual(_C.describe_text(grad, "g", "", False, 3, True),
                         _at_depth3([json.loads(_C.describe_text(grad, "g", "", False, 0))]))


if __name__ == "__main__":
    unittest.main()
