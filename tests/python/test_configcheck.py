# SPDX-License-Identifier: Apache-2.0
"""probescope.ConfigChecker, msprobe 26's dynamic config_check pack (docs/config-check.md, "The dynamic pack").

The fixture's own driver (msprobe26_workflow/config_check/dynamic_weights_dataset_random/inputs/<side>/
pretrain_gpt.py, which made bench.zip and cmp.zip with msprobe 26's ConfigChecker) is run again with ProbeScope's
ConfigChecker in msprobe's place (a stub `msprobe.core.config_check` that re-exports it) and the same synthetic
environment: every entry must equal msprobe's byte for byte (env: the same variables but PYTHONPATH), and
`probescope-cli config_check -c` of the two ProbeScope packs must give the fixture's expected sheets. Then the
refusals: an existing pack, an entry a pack already holds.
Run by ctest with PYTHONPATH=BUILD/python and PROBESCOPE_CLI set.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.environ.get("PROBESCOPE_FIXTURES", os.path.join(HERE, "..", "..", "..", "shared", "fixtures"))
CASE = os.path.join(FIXTURES, "msprobe26_workflow", "config_check", "dynamic_weights_dataset_random")
# The fixture's command (cmd.txt): env -i PATH HOME, the synthetic variables of pack_spec.json, run in
# /data/user/train (PYTHONPATH, which names the module, is left out of the env entry's comparison). The recorded
# env entry lists them in this order.
FIXTURE_CWD = "/data/user/train"


def fixture_env(spec, pythonpath):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/data/user", "LANG": "C.UTF-8", "USER": "user", "PWD": FIXTURE_CWD,
           "SHELL": "/bin/bash"}
    env.update(spec["env"])
    env["PYTHONPATH"] = pythonpath
    return env


def csv_rows(text):
    return sorted(tuple(row) for row in csv.reader(io.StringIO(text)))


@unittest.skipUnless(os.path.isdir(CASE) or os.environ.get("PROBESCOPE_ALLOW_MISSING_FIXTURES") != "1",
                     "fixtures missing (PROBESCOPE_ALLOW_MISSING_FIXTURES=1)")
class DynamicPack(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(CASE):
            raise AssertionError(f"missing fixture {CASE}")
        cls.tmp = tempfile.mkdtemp(prefix="probescope-configcheck-")
        stub = os.path.join(cls.tmp, "stub", "msprobe", "core", "config_check")
        os.makedirs(stub)
        for folder in (os.path.join(cls.tmp, "stub", "msprobe"), os.path.join(cls.tmp, "stub", "msprobe", "core")):
            open(os.path.join(folder, "__init__.py"), "w").close()
        with open(os.path.join(stub, "__init__.py"), "w") as f:
            f.write("from probescope import ConfigChecker  # ProbeScope's in msprobe's place\n")
        cls.packs = {}
        cls.runs = {}
        for side in ("bench", "cmp"):
            run_dir = os.path.join(cls.tmp, "run_" + side)
            shutil.copytree(os.path.join(CASE, "inputs", side), run_dir)
            with open(os.path.join(run_dir, "pack_spec.json")) as f:
                spec = json.load(f)
            env = fixture_env(spec, os.environ["PYTHONPATH"])
            stub_root = os.path.join(cls.tmp, "stub")
            done = subprocess.run([sys.executable, "pretrain_gpt.py", stub_root, stub_root, "pack_spec.json"],
                                  cwd=run_dir, env=env, capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                raise AssertionError(f"pretrain_gpt.py ({side}) failed:\n{done.stdout}\n{done.stderr}")
            cls.packs[side] = os.path.join(run_dir, spec["out"])
            cls.runs[side] = run_dir

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_entries_equal_msprobes_pack(self):
        for side in ("bench", "cmp"):
            with zipfile.ZipFile(os.path.join(CASE, "inputs", side + ".zip")) as ref, \
                    zipfile.ZipFile(self.packs[side]) as ours:
                self.assertEqual(ours.namelist(), ref.namelist(), side)
                for name in ref.namelist():
                    mine = ours.read(name)
                    if name == "env":
                        got, want = json.loads(mine), json.loads(ref.read(name))
                        got.pop("PYTHONPATH"), want.pop("PYTHONPATH", None)
                        got.pop("LC_CTYPE", None)  # set by the interpreter when LANG is C.UTF-8 (both sides)
                        want.pop("LC_CTYPE", None)
                        self.assertEqual(list(got.items()), list(want.items()), f"{side}: env")
                        continue
                    if name.startswith("random/"):  # stacks name the driver's folder
                        mine = mine.replace(self.runs[side].encode(), FIXTURE_CWD.encode())
                    self.assertEqual(mine.decode(), ref.read(name).decode(), f"{side}: {name}")

    def test_probescope_compares_its_packs_as_msprobe_compared_msprobes(self):
        out = os.path.join(self.tmp, "compare")
        done = subprocess.run([os.environ["PROBESCOPE_CLI"], "config_check", "-c", self.packs["bench"],
                               self.packs["cmp"], "-o", out], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        sheets = [n for n in os.listdir(os.path.join(CASE, "expected")) if n.endswith(".csv")]
        self.assertEqual(sorted(sheets), sorted(n for n in os.listdir(out) if n.endswith(".csv")))
        for sheet in sheets:
            with open(os.path.join(CASE, "expected", sheet)) as f:
                want = f.read()
            with open(os.path.join(out, sheet)) as f:
                got = f.read()
            if sheet == "result.random.csv":
                for side in ("bench", "cmp"):
                    got = got.replace(self.runs[side], FIXTURE_CWD)
            # Rows in Python set order in msprobe (weights, random): compared as multisets (docs/config-check.md).
            self.assertEqual(csv_rows(got), csv_rows(want), sheet)
            self.assertEqual(got.splitlines()[0], want.splitlines()[0], sheet)


SCRIPT = """
import sys, torch
from probescope import ConfigChecker, ProbeScopeError
try:
    model = torch.nn.Linear(2, 2)
    ConfigChecker(model, output_zip_path=sys.argv[1])
    model(torch.ones(1, 2))
except ProbeScopeError as e:
    print(e)
    sys.exit(3)
"""


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="probescope-configcheck-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_script(self, zip_path):
        return subprocess.run([sys.executable, "-c", SCRIPT, zip_path], capture_output=True, text=True, timeout=120)

    def test_a_pack_is_written_and_an_existing_one_never_added_to(self):
        pack = os.path.join(self.tmp, "pack.zip")
        done = self.run_script(pack)
        self.assertEqual(done.returncode, 0, done.stderr)
        with zipfile.ZipFile(pack) as z:
            self.assertEqual(z.namelist(), ["env", "pip", "dataset/step0/rank0/dataset.json",
                                            "weights/step0/rank0/weight.json", "random/rank0.json"])
            weights = json.loads(z.read("weights/step0/rank0/weight.json"))
            self.assertEqual(sorted(weights), ["bias", "weight"])
            self.assertEqual(sorted(weights["weight"]), ["max", "mean", "min", "norm"])
        with open(pack, "rb") as f:
            before = f.read()
        again = self.run_script(pack)
        self.assertEqual(again.returncode, 3, again.stdout + again.stderr)
        self.assertIn(pack, again.stdout)
        self.assertIn("already exists", again.stdout)
        with open(pack, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_an_entry_the_pack_holds_is_never_replaced(self):
        from probescope import _C
        pack = os.path.join(self.tmp, "pack.zip")
        _C.config_check_append(pack, [("weights/step0/rank1/weight.json", "{}")])
        _C.config_check_append(pack, [("weights/step0/rank2/weight.json", "{\"a\": 1}")])
        with open(pack, "rb") as f:
            before = f.read()
        with self.assertRaises(ValueError) as caught:
            _C.config_check_append(pack, [("weights/step0/rank1/weight.json", "[]")])
        self.assertIn(pack, str(caught.exception))
        self.assertIn("weights/step0/rank1/weight.json", str(caught.exception))
        with open(pack, "rb") as f:
            self.assertEqual(f.read(), before)
        with zipfile.ZipFile(pack) as z:
            self.assertEqual(z.namelist(), ["weights/step0/rank1/weight.json", "weights/step0/rank2/weight.json"])
            self.assertEqual(z.read("weights/step0/rank2/weight.json"), b"{\"a\": 1}")

    def test_a_symlink_at_the_pack_name_is_refused(self):
        target = os.path.join(self.tmp, "elsewhere.zip")
        pack = os.path.join(self.tmp, "pack.zip")
        os.symlink(target, pack)
        done = self.run_script(pack)
        self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
        self.assertFalse(os.path.exists(target))


if __name__ == "__main__":
    unittest.main()
