# SPDX-License-Identifier: Apache-2.0
"""Side by side with the real msprobe 1.2.2: train.py dumped by msprobe and by ProbeScope (only the import
differs) must give the same dump.json entries (statistics bit for bit: ProbeScope computes them as msprobe does,
with torch's own float32 reductions), construct.json, stack.json keys and .pt tensors, in every configuration
below. `--model edge` holds the cases where a float64 reduction would differ: means near zero, float64 and
float16 tensors, negative 0-d tensors (msprobe's signed Norm), integer tensors and infinities.

msprobe is a reference, never a dependency: without it this test exits 77 (ctest: skipped). It is found at
MSPROBE_REFERENCE (default ${TMPDIR:-/tmp}/msprobe122), made by
    MSTT_REPO=<Ascend mstt clone> bash ../shared/tools/msprobe-reference/setup.sh /tmp/msprobe122
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dumpdiff  # noqa: E402

CONFIGS = [
    ("statistics", "L0", []),
    ("statistics", "L1", []),
    ("statistics", "mix", []),
    ("statistics", "mix", ["--summary-mode", "md5"]),
    ("tensor", "L1", []),
    ("tensor", "mix", []),
    ("statistics", "mix", ["--list", "ffn"]),
    ("statistics", "L1", ["--scope", "Functional.linear.1.forward,Functional.gelu.0.forward"]),
    ("statistics", "mix", ["--scope", "Module.block.attn.Attention.forward.0,Module.block.ffn.FFN.forward.0"]),
    ("statistics", "L1", ["--data-mode", "backward,input"]),
    ("statistics", "mix", ["--model", "zoo"]),
    ("tensor", "L1", ["--model", "zoo"]),
    ("statistics", "mix", ["--model", "edge"]),
    ("tensor", "L1", ["--model", "edge"]),
]


def msprobe_pythonpath(scratch):
    """PYTHONPATH that imports msprobe 1.2.2, or None when it is not here."""
    dest = os.environ.get("MSPROBE_REFERENCE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "msprobe122"))
    stubs = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools", "msprobe-reference", "stubs"))
    if not os.path.isfile(os.path.join(dest, "msprobe", "__init__.py")):
        return None
    path = os.pathsep.join([stubs, dest])
    # msprobe.pytorch imports matplotlib (for grad_probe's plots only); a stub stands in when there is none.
    if subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        extra = os.path.join(scratch, "stubs")
        os.makedirs(os.path.join(extra, "matplotlib"), exist_ok=True)
        for name in ("__init__.py", "pyplot.py"):
            open(os.path.join(extra, "matplotlib", name), "w").close()
        path = os.pathsep.join([path, extra])
    probe = subprocess.run([sys.executable, "-c", "import msprobe.pytorch"], capture_output=True,
                           env=dict(os.environ, PYTHONPATH=path))
    return path if probe.returncode == 0 else None


def main():
    scratch = tempfile.mkdtemp(prefix="probescope-ref-")
    try:
        reference = msprobe_pythonpath(scratch)
        if reference is None:
            print("msprobe 1.2.2 reference not found (MSPROBE_REFERENCE): skipped")
            return 77
        failures = 0
        for index, (task, level, extra) in enumerate(CONFIGS):
            name = " ".join([task, level] + extra)
            runs = {}
            for tool, pythonpath in (("msprobe", reference), ("probescope", os.environ.get("PYTHONPATH", ""))):
                dump = os.path.join(scratch, f"config{index}", tool)  # msprobe refuses paths with "+", ","
                args = [sys.executable, os.path.join(HERE, "train.py"), "--tool", tool, "--dump-path", dump,
                        "--task", task, "--level", level, "--steps", "2"] + extra
                done = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=pythonpath))
                if done.returncode != 0:
                    print(f"{name}: {tool} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
                    failures += 1
                    break
                runs[tool] = dump
            if len(runs) != 2:
                continue
            for step in (0, 1):
                problems, entries = dumpdiff.compare(os.path.join(runs["msprobe"], f"step{step}", "rank"),
                                                     os.path.join(runs["probescope"], f"step{step}", "rank"), rel=0)
                status = "same" if not problems else f"{len(problems)} differences"
                print(f"{name} step{step}: {entries} msprobe entries, {status}")
                for p in problems[:20]:
                    print("   ", p)
                failures += bool(problems)
        return 1 if failures else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
