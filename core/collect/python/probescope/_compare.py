# SPDX-License-Identifier: Apache-2.0
"""msprobe.pytorch's compare() and compare_distributed(), run by ProbeScope's own compare (probescope-cli).

A training script that compares its dumps at the end keeps working with only the import changed; the CSVs
and advisor files are msprobe 1.2's (docs/compare.md).
"""
import json
import os
import shutil
import subprocess
import tempfile


def _cli():
    """probescope-cli: PROBESCOPE_CLI, else the build tree this module was built in, else PATH."""
    explicit = os.environ.get("PROBESCOPE_CLI")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    in_tree = os.path.join(os.path.dirname(os.path.dirname(here)), "app", "cli", "probescope-cli")
    if os.access(in_tree, os.X_OK):
        return in_tree
    found = shutil.which("probescope-cli")
    if not found:
        raise RuntimeError("probescope-cli not found: install the probescope package or set PROBESCOPE_CLI")
    return found


def _run(args):
    from . import _C
    _C.flush()  # the dumps of this process are complete on disk before they are read
    done = subprocess.run([_cli()] + args)
    if done.returncode != 0:
        raise RuntimeError(f"probescope-cli {' '.join(args)} failed (exit status {done.returncode})")


def _options(kwargs):
    args = []
    if kwargs.get("stack_mode"):
        args.append("-s")
    if kwargs.get("fuzzy_match"):
        args.append("-f")
    if kwargs.get("auto_analyze", True) is False:
        args.append("-c")
    return args


def compare(input_param, output_path, **kwargs):
    """msprobe's compare(input_param={"npu_json_path", "bench_json_path"[, "stack_json_path"]}, output_path,
    stack_mode=False, auto_analyze=True, fuzzy_match=False)."""
    if not isinstance(input_param, dict):
        raise ValueError("compare: input_param must be a dict with npu_json_path and bench_json_path")
    if not isinstance(output_path, str):
        raise ValueError("compare: output_path must be a str")
    spec = {"npu_path": input_param.get("npu_json_path"), "bench_path": input_param.get("bench_json_path")}
    if input_param.get("stack_json_path"):
        spec["stack_path"] = input_param["stack_json_path"]
    os.makedirs(output_path, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    try:
        _run(["compare", "-i", f.name, "-o", output_path] + _options(kwargs))
    finally:
        os.remove(f.name)


def compare_distributed(npu_dump_dir, bench_dump_dir, output_path, **kwargs):
    """msprobe's compare_distributed(npu_dump_dir, bench_dump_dir, output_path): every rank of one step."""
    os.makedirs(output_path, exist_ok=True)
    _run(["compare", "--npu", npu_dump_dir, "--bench", bench_dump_dir, "-o", output_path] + _options(kwargs))
