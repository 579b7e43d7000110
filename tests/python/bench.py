# SPDX-License-Identifier: Apache-2.0
"""Per-step time of train.py without a dump, with msprobe 1.2.2 and with ProbeScope, in one run: statistics and
tensor mode, levels L1 and mix, with the disk's own write speed beside them.

    PYTHONPATH=BUILD/python python3 tests/python/bench.py [--scratch DIR] [--size medium] [--steps 6] [--rounds 3]

The configurations take turns (round robin, --rounds times) so that the load of a shared machine spreads over
all of them; a configuration's figure is the median of its steps after the first (the first step of a process
pays imports and allocations). msprobe is found as test_reference.py finds it (MSPROBE_REFERENCE); without it
its rows are left out. "probescope-sync" is tensor mode with PROBESCOPE_WRITE_QUEUE_MB=0 (no background writer). Prints a Markdown table and the goals' verdicts.

    ... bench.py --tasks monitor [--size medium] [--steps 6] [--rounds 3]

times monitortrain.py --config all (TrainerMon on every module and parameter: activations and their gradients,
weight gradients, Adam's moments, parameters, all ops, the alert rules) without a monitor, with ProbeScope's TrainerMon and with msprobe 26's own statistics and
writers behind the same hooks (msprobecore.py; msprobe's TrainerMon needs torch >= 2), msprobe found at
MSPROBE26_REFERENCE as test_monitor_reference.py finds it. Goal: ProbeScope's overhead <= msprobe's.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_reference import msprobe_pythonpath  # noqa: E402


def disk_speed(folder, mib=256):
    """MB/s of writing `mib` MiB to a file in `folder`: into the page cache, and through to the disk (fsync)."""
    block = os.urandom(1 << 20)
    results = []
    for sync in (False, False, True):
        path = os.path.join(folder, "probescope-bench-disk")
        t0 = time.perf_counter()
        with open(path, "wb") as f:
            for _ in range(mib):
                f.write(block)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        results.append(mib * (1 << 20) / (time.perf_counter() - t0) / 1e6)
        os.remove(path)
    return results[1:]  # the first write only warms up


def folder_bytes(folder):
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    return total


def monitor_bench(args):
    """--tasks monitor: the step time of monitortrain.py without a monitor, with ProbeScope's and msprobe's."""
    from test_monitor_reference import msprobe26_pythonpath  # noqa: E402
    scratch = tempfile.mkdtemp(prefix="probescope-bench-monitor-", dir=args.scratch)
    try:
        reference = msprobe26_pythonpath()
        tools = ["none", "probescope"] + (["msprobe-core"] if reference else [])
        times = {tool: [] for tool in tools}
        for round_ in range(args.rounds):
            for tool in tools:
                out = os.path.join(scratch, f"{tool}-{round_}")
                env = dict(os.environ)
                if reference:
                    env["MSPROBE26_PYTHON"] = reference.split(os.pathsep)[-1]
                cmd = [sys.executable, os.path.join(HERE, "monitortrain.py"), "--tool", tool, "--out", out,
                       "--size", args.size, "--steps", str(args.steps), "--micro", "2", "--config", "all"]
                done = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if done.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
                total = [float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("steps 1-")]
                times[tool].append(total[0] / (args.steps - 1))
                shutil.rmtree(out, ignore_errors=True)
        base = statistics.median(times["none"])
        print(f"monitortrain.py --size {args.size} --config all (every module and parameter, all ops, alerts): "
              f"{args.rounds} rounds x {args.steps - 1} steps (2 micro steps each) per configuration")
        print()
        print("| monitor | step (median of runs) | overhead |")
        print("|---|---|---|")
        print(f"| none | {base * 1e3:.1f} ms | |")
        overhead = {}
        for tool in tools[1:]:
            t = statistics.median(times[tool])
            overhead[tool] = t - base
            print(f"| {tool} | {t * 1e3:.1f} ms | {(t - base) * 1e3:+.1f} ms ({t / base:.2f}x) |")
        if "msprobe-core" not in overhead:
            return 0
        ours, theirs = overhead["probescope"], overhead["msprobe-core"]
        passed = ours <= theirs
        print()
        print(f"monitor: ProbeScope's overhead is {ours / theirs if theirs > 0 else float('inf'):.2f} of msprobe's "
              f"(goal <= 1.0): {'met' if passed else 'NOT met'}")
        return 0 if passed else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scratch", default=None, help="where the dumps go (default: a new folder in TMPDIR)")
    parser.add_argument("--size", default="medium")
    parser.add_argument("--model", default="net")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", default="statistics,tensor")
    parser.add_argument("--levels", default="L1,mix")
    args = parser.parse_args()
    if args.tasks == "monitor":
        return monitor_bench(args)
    scratch = tempfile.mkdtemp(prefix="probescope-bench-", dir=args.scratch)
    try:
        reference = msprobe_pythonpath(scratch)
        own = os.environ.get("PYTHONPATH", "")
        configs = [("none", "-", "-")]
        tasks, levels = args.tasks.split(","), args.levels.split(",")
        for task in tasks:
            for level in levels:
                for tool in ("msprobe", "probescope", "probescope-sync"):
                    if tool == "msprobe" and reference is None or tool == "probescope-sync" and task != "tensor":
                        continue
                    configs.append((tool, task, level))
        times = {c: [] for c in configs}
        sizes = {}
        for round_ in range(args.rounds):
            for config in configs:
                tool, task, level = config
                dump = os.path.join(scratch, f"{tool}-{task}-{level}-{round_}")
                env = dict(os.environ, PYTHONPATH=reference if tool == "msprobe" else own)
                if tool == "probescope-sync":  # .pt files written by the Python thread itself, no queue
                    env["PROBESCOPE_WRITE_QUEUE_MB"] = "0"
                cmd = [sys.executable, os.path.join(HERE, "train.py"), "--tool", tool.split("-")[0], "--dump-path", dump,
                       "--size", args.size, "--model", args.model, "--steps", str(args.steps)]
                if tool != "none":
                    cmd += ["--task", task, "--level", level]
                done = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if done.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
                # Steps 1.. (the first step of a process pays imports and allocations) until every file is
                # on disk: ProbeScope's background writer may still be busy when its last step returns.
                total = [float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("steps 1-")]
                times[config].append(total[0] / (args.steps - 1))
                if tool != "none":
                    sizes[config] = folder_bytes(os.path.join(dump, "step1"))
                shutil.rmtree(dump, ignore_errors=True)
        cached, synced = disk_speed(scratch)
        base = statistics.median(times[configs[0]])
        print(f"train.py --size {args.size} --model {args.model}: {args.rounds} rounds x {args.steps - 1} steps per "
              f"configuration; dumps in {scratch}")
        print(f"disk: {cached:.0f} MB/s into the page cache, {synced:.0f} MB/s with fsync (256 MiB)")
        print()
        print("| tool | task | level | step (median of runs; files on disk) | overhead | dumped per step |")
        print("|---|---|---|---|---|---|")
        print(f"| no dump | | | {base * 1e3:.1f} ms | | |")
        overhead = {}
        for config in configs[1:]:
            tool, task, level = config
            t = statistics.median(times[config])
            overhead[config] = t - base
            print(f"| {tool} | {task} | {level} | {t * 1e3:.1f} ms | {(t - base) * 1e3:+.1f} ms ({t / base:.2f}x) "
                  f"| {sizes[config] / 1e6:.2f} MB |")
        if reference is not None:
            print()
            ok = True
            for task, goal in (("statistics", 1.0), ("tensor", 0.5)):
                if task not in tasks:
                    continue
                for level in levels:
                    ours, theirs = overhead[("probescope", task, level)], overhead[("msprobe", task, level)]
                    ratio = ours / theirs if theirs > 0 else float("inf")
                    passed = ours <= goal * theirs
                    ok = ok and passed
                    print(f"{task} {level}: ProbeScope's overhead is {ratio:.2f} of msprobe's "
                          f"(goal <= {goal}): {'met' if passed else 'NOT met'}")
            return 0 if ok else 1
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
