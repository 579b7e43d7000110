#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the phase-B cases of tst_diffanalyze: random -da rank tables, analysed by msprobe 26.0.0's own
find_first code (analyzer.py, graph.py, utils.py of Ascend/msprobe 8ff00da3, read from MSPROBE_PYTHON; its
logger, file and psutil imports are stubbed in a scratch folder, nothing of it is copied here).

usage: MSPROBE_PYTHON=<msprobe 26.0.0 python/> make_cases.py SEED...   (writes ./<SEED>/)
"""
import glob, json, os, random, shutil, subprocess, sys, tempfile

STUBS = {
    "msprobe/__init__.py": "", "msprobe/core/__init__.py": "", "msprobe/core/common/__init__.py": "",
    "msprobe/core/compare/__init__.py": "", "msprobe/core/compare/find_first/__init__.py": "",
    "msprobe/core/common/const.py": """class Const:
    SEP='.'; INPUT='input'; OUTPUT='output'; DISTRIBUTED='Distributed'; MS_API_TYPE_COM='communication.comm_func'; MINT_DIST_API_TYPE_PREFIX='MintDistributed'
class CompareConst:
    NPU_NAME='NPU Name'; NPU_MAX='NPU max'; NPU_MIN='NPU min'; NPU_MEAN='NPU mean'; NPU_NORM='NPU l2norm'; NPU_P2POP_PEER='NPU P2POp peer'; STACK='NPU_Stack_Info'; NPU_MD5='NPU MD5'; N_A='N/A'
""",
    "msprobe/core/common/log.py": "class _L:\n    def __getattr__(self, n): return lambda *a: None\nlogger = _L()\n",
    "msprobe/core/common/file_utils.py": """import json, os
def save_json(p, d, indent=None):
    with open(p, 'w') as f: json.dump(d, f, indent=indent)
def create_directory(p): os.makedirs(p, exist_ok=True)
def check_file_or_directory_path(p): pass
def load_json(p):
    with open(p) as f: return json.load(f)
""",
    "msprobe/core/compare/utils.py": "def compare_distributed_inner(*a, **k): pass\n",
    "psutil/__init__.py": "class _V: available = 1 << 40\ndef virtual_memory(): return _V()\n",
}


def scratch_package():
    root = tempfile.mkdtemp()
    for rel, text in STUBS.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        open(os.path.join(root, rel), "w").write(text)
    src = os.path.join(os.environ["MSPROBE_PYTHON"], "msprobe/core/compare/find_first")
    for f in ("analyzer.py", "graph.py", "utils.py"):
        shutil.copy(os.path.join(src, f), os.path.join(root, "msprobe/core/compare/find_first", f))
    return root


def row(name, state, mx, peer="None", stack="N/A"):
    return {"NPU Name": name, "NPU max": mx, "NPU min": mx, "NPU mean": mx, "NPU l2norm": mx,
            "NPU_Stack_Info": stack, "state": state, "NPU P2POp peer": peer}


APIS = ['all_reduce', 'send', 'recv', 'broadcast', 'reduce', 'reduce_scatter', 'all_gather', 'isend', 'irecv',
        'batch_isend_irecv', 'barrier', 'gather', 'scatter', 'all_to_all', 'all_to_all_single']


def tables_for(seed):
    rng = random.Random(seed)
    ranks = sorted(rng.sample([0, 1, 2, 3, 4, 5, 6], rng.randint(1, 6)))
    bad = rng.random() < 0.3
    p_compute, p_comm = rng.choice([0.02, 0.1, 0.25]), rng.choice([0.05, 0.2, 0.4])
    tables = {}
    for r in ranks:
        ops, cnt = {}, {}
        for i in range(rng.randint(3, 25)):
            k = rng.random()
            if k < 0.45:
                api = rng.choice(['linear', 'relu', 'gelu'])
                c = cnt.get(api, 0); cnt[api] = c + 1
                name = f"Functional.{api}.{c}.forward"
                ops[name] = {"is_same": rng.random() > p_compute,
                             "op_items": [row(name + ".input.0", "input", 1.0, stack=rng.choice(["N/A", ["a", "b"]])),
                                          row(name + ".output.0", "output", 2.0)]}
            elif k < 0.5:
                name = f"Torch.empty.{i}.forward"
                ops[name] = {"is_same": rng.random() > 0.5, "op_items": [row(name + ".output.0", "output", 1.0)]}
            else:
                api = rng.choice(APIS)
                c = cnt.get(api, 0); cnt[api] = c + 1
                name = f"Distributed.{api}.{c}.forward"
                items = [row(name + ".input.0", "input", 1.0)]
                others = [x for x in ranks if x != r] or [r]
                if api in ('send', 'isend'):
                    items.append(row(name + ".input.dst", "input", str(rng.choice(others))))
                elif api in ('recv', 'irecv'):
                    items.append(row(name + ".input.src", "input", str(rng.choice(others))))
                elif api in ('broadcast', 'scatter') and rng.random() < 0.5:
                    items.append(row(name + ".input.src", "input", str(rng.choice(ranks))))
                elif api == 'gather' and rng.random() < 0.5:
                    items.append(row(name + ".input.dst", "input", str(rng.choice(ranks))))
                elif api == 'batch_isend_irecv':
                    for j in range(rng.randint(1, 2)):
                        items.append(row(name + f".input.0.{j}", "input", 1.0, peer=rng.choice(others)))
                if rng.random() < 0.5:
                    g = sorted(rng.sample(ranks, rng.randint(1, len(ranks))))
                    if bad and rng.random() < 0.1:
                        g = g + [max(ranks) + 1]
                    items.append(row(name + ".input.group", "input", str(g)))
                if bad and rng.random() < 0.05:
                    items.append(row(name + ".input.src", "input", "None"))
                items.append(row(name + ".output.0", "output", 2.0))
                ops[name] = {"is_same": rng.random() > p_comm, "op_items": items}
        tables[r] = ops
    return tables


def main():
    sys.path.insert(0, scratch_package())
    from msprobe.core.compare.find_first.analyzer import DiffAnalyzer
    from msprobe.core.compare.find_first import utils as ffu
    for seed in map(int, sys.argv[1:]):
        out = str(seed)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for r, t in tables_for(seed).items():
            json.dump(t, open(os.path.join(out, f"compare_result_rank{r}_20260101000000.json"), "w"), indent=1)
        ffu.FileCache._instance = None
        DiffAnalyzer("npu", "bench", out).analyze()
        for f in glob.glob(os.path.join(out, "diff_analyze_*.json")):
            os.replace(f, os.path.join(out, "expected_diff_analyze.json"))


if __name__ == "__main__":
    main()
