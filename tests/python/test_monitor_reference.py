# SPDX-License-Identifier: Apache-2.0
"""ProbeScope's monitor output read by msprobe 26 itself: monitortrain.py collects with ProbeScope's TrainerMon (two
runs: all ops with alerts, NaN from step 2, and norm only with one step per file), then msprobe 26's own
`msprobe data2db --format monitor` (--micro_step false and true) must accept it and give the db that
`probescope-cli data2db` gives (compared table by table, joined by name as the fixtures' README says), and
msprobe's anomaly_processor must rank ProbeScope's anomaly.json as `probescope-cli anomaly_analyse` does. And the
same run with msprobe's own statistics and writers behind the same hooks (msprobecore.py: msprobe's TrainerMon needs
torch >= 2) must give the same files, byte for byte (run folder names aside).

msprobe 26 is a reference, never a dependency: without it this test exits 77 (ctest: skipped). It is found at
MSPROBE26_REFERENCE (default ${TMPDIR:-/tmp}/msprobe26), made by
    MSPROBE26_REPO=<Ascend/msprobe clone> bash ../shared/tools/msprobe26-reference/setup.sh /tmp/msprobe26
PROBESCOPE_CLI names probescope-cli (ctest sets it).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def msprobe26_pythonpath():
    dest = os.environ.get("MSPROBE26_REFERENCE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "msprobe26"))
    stubs = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools", "msprobe-reference", "stubs"))
    if not os.path.isfile(os.path.join(dest, "python", "msprobe", "__init__.py")):
        return None
    path = os.pathsep.join([stubs, os.path.join(dest, "python")])
    probe = subprocess.run([sys.executable, "-c", "import msprobe.core.monitor.csv2db"], capture_output=True,
                           env=dict(os.environ, PYTHONPATH=path))
    return path if probe.returncode == 0 else None


def db_by_name(path):
    """The trend db keyed by names (ids depend on listing order): the comparison the fixtures' README gives."""
    db = sqlite3.connect(path)
    stats = [c[1] for c in db.execute("PRAGMA table_info(trend_data)")][4:]
    data = {}
    query = (f"SELECT d.rank, d.step, t.target_name, t.vpp_stage, t.micro_step, m.metric_name, "
             f"{', '.join('d.' + s for s in stats)} FROM trend_data d JOIN monitoring_targets t ON "
             f"d.target_id = t.target_id JOIN monitoring_metrics m ON d.metric_id = m.metric_id")
    for row in db.execute(query):
        data[row[:6]] = dict(zip(stats, row[6:]))
    tags = set(db.execute("SELECT g.tag_name, g.category, m.metric_name FROM monitoring_tags g JOIN "
                          "monitoring_metrics m ON g.metric_id = m.metric_id"))
    mapping = set(db.execute("SELECT g.tag_name, t.target_name FROM tag_target_mapping p JOIN monitoring_tags g ON "
                             "p.tag_id = g.tag_id JOIN monitoring_targets t ON p.target_id = t.target_id"))
    columns = [c[1] for c in db.execute("PRAGMA table_info(global_stats)")]
    row = db.execute("SELECT * FROM global_stats").fetchone()
    global_stats = {c: (set(v.split(",")) if isinstance(v, str) else v) for c, v in zip(columns, row)}
    return {"stats": sorted(stats), "data": data, "tags": tags, "mapping": mapping, "global": global_stats}


def files_of(out):
    """{relative path: text} of a monitor output, the run folder's time and uid replaced by "RUN"."""
    result = {}
    for root, _, names in os.walk(out):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, out).split(os.sep)
            if rel[0] != "anomaly_detected":
                rel[0] = "RUN"
            with open(path, encoding="utf-8") as f:
                result["/".join(rel)] = f.read()
    return result


def run(cmd, env=None):
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return done


def main():
    reference = msprobe26_pythonpath()
    if reference is None:
        print("msprobe 26 reference not found (MSPROBE26_REFERENCE): skipped")
        return 77
    cli = os.environ.get("PROBESCOPE_CLI")
    if not cli:
        print("PROBESCOPE_CLI not set: skipped")
        return 77
    scratch = tempfile.mkdtemp(prefix="probescope-monref-")
    failures = []
    try:
        norm_only = os.path.join(scratch, "norm.json")
        with open(norm_only, "w", encoding="utf-8") as f:
            json.dump({"targets": {}, "xy_distribution": True, "wg_distribution": True, "param_distribution": True,
                       "ops": ["norm"], "squash_name": True}, f)
        runs = {"all_ops": ["--nan-at", "2"], "norm_only": ["--config", norm_only, "--steps", "3", "--micro", "1"]}
        ref_env = dict(os.environ, PYTHONPATH=reference, PYTHONHASHSEED="0")
        for name, extra in runs.items():
            out = os.path.join(scratch, name, "monitor_output")
            os.makedirs(os.path.dirname(out))
            run([sys.executable, os.path.join(HERE, "monitortrain.py"), "--out", out] + extra)
            theirs_out = os.path.join(scratch, name, "msprobe_output")
            run([sys.executable, os.path.join(HERE, "monitortrain.py"), "--tool", "msprobe-core", "--out", theirs_out]
                + extra, env=dict(os.environ, MSPROBE26_PYTHON=reference.split(os.pathsep)[-1]))
            ours_files, theirs_files = files_of(out), files_of(theirs_out)
            same = [k for k in theirs_files if ours_files.get(k) == theirs_files[k]]
            print(f"{name}: msprobe's writer behind the same hooks wrote {len(theirs_files)} files; "
                  f"{len(same)} equal byte for byte")
            if sorted(ours_files) != sorted(theirs_files) or len(same) != len(theirs_files):
                differing = sorted(set(ours_files) ^ set(theirs_files)) + [k for k in theirs_files if k not in same]
                failures.append(f"{name}: files differ from msprobe's writer: {differing[:6]}")
            for micro in ("false", "true"):
                theirs = os.path.join(scratch, name, f"msprobe_db_{micro}")
                ours = os.path.join(scratch, name, f"probescope_db_{micro}")
                run([sys.executable, "-m", "msprobe.msprobe", "data2db", "--data", out, "--db", theirs, "--format",
                     "monitor", "--micro_step", micro], env=ref_env)
                run([cli, "data2db", "--data", out, "--db", ours, "--format", "monitor", "--micro_step", micro])
                a = db_by_name(os.path.join(theirs, "monitor_data.trend.db"))
                b = db_by_name(os.path.join(ours, "monitor_data.trend.db"))
                if not a["data"]:
                    failures.append(f"{name} micro_step {micro}: msprobe's db has no trend rows")
                for part in a:
                    if a[part] != b[part]:
                        failures.append(f"{name} micro_step {micro}: {part} differs")
                print(f"{name} --micro_step {micro}: msprobe's data2db read {len(a['data'])} trend rows "
                      f"({', '.join(a['stats'])}); probescope-cli's db {'equal' if a == b else 'DIFFERS'}")
            anomalies = os.path.join(out, "anomaly_detected")
            if os.path.isdir(anomalies):
                theirs = os.path.join(scratch, name, "msprobe_top")
                ours = os.path.join(scratch, name, "probescope_top")
                os.makedirs(theirs)  # msprobe's anomaly_processor wants the output folder to exist
                run([sys.executable, "-m", "msprobe.core.monitor.anomaly_processor", "-d", anomalies, "-o", theirs,
                     "-k", "8"], env=ref_env)
                run([cli, "anomaly_analyse", "-d", anomalies, "-o", ours, "-k", "8"])
                with open(os.path.join(theirs, "anomaly_analyse.json"), encoding="utf-8") as f:
                    top_a = f.read()
                with open(os.path.join(ours, "anomaly_analyse.json"), encoding="utf-8") as f:
                    top_b = f.read()
                if top_a != top_b or len(json.loads(top_a)) != 8:
                    failures.append(f"{name}: anomaly_analyse.json differs or has not 8 entries")
                print(f"{name}: msprobe's anomaly_processor ranked ProbeScope's anomaly.json; "
                      f"probescope-cli's top 8 {'equal' if top_a == top_b else 'DIFFERS'}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
