# SPDX-License-Identifier: Apache-2.0
"""Compares two msprobe dump folders entry by entry: dump.json entries (names, order, every field; statistics
within float rounding), construct.json exactly, stack.json keys. Exit 0 when they agree, 1 with the
differences listed otherwise.

    python3 dumpdiff.py REFERENCE_DIR CANDIDATE_DIR [--rel 1e-5]     # e.g. .../step0/rank; --rel 0: bit for bit
"""
import json
import math
import os
import sys

STAT_KEYS = {"Max", "Min", "Mean", "Norm", "Max_except_inf_nan", "Min_except_inf_nan"}


def close(a, b, rel):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b) or rel == 0:
        return a == b and type(a) is type(b)  # rel 0: bit for bit (an int 3 is not a float 3.0 in the JSON)
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-6


def walk(a, b, path, rel, problems):
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a.keys()) != list(b.keys()):
            problems.append(f"{path}: keys {list(a.keys())} != {list(b.keys())}")
            return
        for k in a:
            if k in STAT_KEYS:
                if not close(a[k], b[k], rel):
                    problems.append(f"{path}.{k}: {a[k]!r} != {b[k]!r}")
            else:
                walk(a[k], b[k], f"{path}.{k}", rel, problems)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            problems.append(f"{path}: {len(a)} items != {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", rel, problems)
    elif isinstance(a, float) or isinstance(b, float):
        if not close(a, b, rel):
            problems.append(f"{path}: {a!r} != {b!r}")
    elif a != b:
        problems.append(f"{path}: {a!r} != {b!r}")


def compare(ref_dir, cand_dir, rel=1e-5):
    problems = []
    load = lambda d, n: json.load(open(os.path.join(d, n)))
    ref, cand = load(ref_dir, "dump.json"), load(cand_dir, "dump.json")
    for k in ("task", "level", "framework"):
        if ref.get(k) != cand.get(k):
            problems.append(f"dump.json {k}: {ref.get(k)!r} != {cand.get(k)!r}")
    rd, cd = ref["data"], cand["data"]
    missing = [k for k in rd if k not in cd]
    extra = [k for k in cd if k not in rd]
    if missing:
        problems.append(f"{len(missing)} entries missing: {missing[:8]}")
    if extra:
        problems.append(f"{len(extra)} entries extra: {extra[:8]}")
    common = [k for k in rd if k in cd]
    if [k for k in cd if k in rd] != common:
        problems.append("entry order differs")
    for k in common:
        walk(rd[k], cd[k], k, rel, problems)
    rc, cc = load(ref_dir, "construct.json"), load(cand_dir, "construct.json")
    if rc != cc:
        diff = [k for k in set(rc) | set(cc) if rc.get(k, "<absent>") != cc.get(k, "<absent>")]
        problems.append(f"construct.json differs in {len(diff)} keys: "
                        + "; ".join(f"{k}: {rc.get(k, '<absent>')!r} != {cc.get(k, '<absent>')!r}" for k in sorted(diff)[:6]))
    rs, cs = load(ref_dir, "stack.json"), load(cand_dir, "stack.json")
    if sorted(rs) != sorted(cs):
        problems.append(f"stack.json keys differ: {sorted(set(rs) ^ set(cs))[:8]}")
    rt, ct = os.path.join(ref_dir, "dump_tensor_data"), os.path.join(cand_dir, "dump_tensor_data")
    if os.path.isdir(rt) or os.path.isdir(ct):
        rf = set(os.listdir(rt)) if os.path.isdir(rt) else set()
        cf = set(os.listdir(ct)) if os.path.isdir(ct) else set()
        if rf != cf:
            problems.append(f"dump_tensor_data differs: {len(rf - cf)} missing {sorted(rf - cf)[:4]}, "
                            f"{len(cf - rf)} extra {sorted(cf - rf)[:4]}")
        import torch
        for name in sorted(rf & cf):
            a, b = torch.load(os.path.join(rt, name)), torch.load(os.path.join(ct, name))
            if a.dtype != b.dtype or a.shape != b.shape or not torch.equal(a, b):
                problems.append(f"dump_tensor_data/{name}: the tensors differ")
    return problems, len(rd)


if __name__ == "__main__":
    rel = 1e-5
    argv = sys.argv[1:]
    if "--rel" in argv:
        i = argv.index("--rel")
        rel = float(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    problems, n = compare(argv[0], argv[1], rel)
    for p in problems[:40]:
        print(p)
    print(f"{n} reference entries, {len(problems)} differences")
    sys.exit(1 if problems else 0)
