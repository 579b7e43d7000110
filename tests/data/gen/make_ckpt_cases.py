#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the Megatron-style checkpoints under tests/data/ckpt used by tst_ckpt (docs/checkpoint-compare.md).

Run with Debian's /usr/bin/python3 (torch 1.13) and the real msprobe 26.0.0 on PYTHONPATH
(/work/shared/tools/msprobe26-reference/setup.sh) plus a folder holding an empty megatron/__init__.py:
    env PYTHONHASHSEED=0 PYTHONPATH=<megatron stub>:<einops stub>:<msprobe python/> /usr/bin/python3 tests/data/gen/make_ckpt_cases.py

Each compare case gets expected/ckpt_similarity.json and expected/log.txt written by msprobe's own
compare_checkpoints, so tst_ckpt checks ProbeScope against msprobe, not against itself. The hostile/ files are
torch.save-shaped zips whose data.pkl is damaged or malicious (none of them is ever unpickled by Python here).
"""
import argparse
import enum
import io
import logging
import os
import pickle
import shutil
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ckpt")


class AttnBackend(enum.Enum):  # stands for Megatron's enums inside args
    flash = 1
    local = 2


def make_args(tp, pp, ep, num_experts):
    return argparse.Namespace(tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp,
                              expert_model_parallel_size=ep, num_experts=num_experts, params_dtype=torch.bfloat16,
                              lr=1.5e-4, seq_length=4096, attention_backend=AttnBackend.flash, data_path=["a", "b"],
                              load=None, fp16=False)


def save(state, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(state, path)


def extra_state():
    rng = np.random.RandomState(3)
    return {"random_rng_state": (3, tuple(range(5)), None), "np_rng_state": rng.get_state(),
            "torch_rng_state": torch.get_rng_state(), "cuda_rng_state": None, "rng_tracker_states": {}}


def full_model(gen, layers, hidden, ffn, vocab, dtype, experts=0, legacy=False):
    """Global (unsharded) weights by mcore name."""
    w = OrderedDict()
    w["embedding.word_embeddings.weight"] = torch.randn(vocab, hidden, generator=gen)
    for i in range(layers):
        p = f"decoder.layers.{i}."
        w[p + "input_layernorm.weight"] = torch.ones(hidden) + 0.1 * torch.randn(hidden, generator=gen)
        w[p + "input_layernorm.bias"] = torch.zeros(hidden)
        w[p + "self_attention.linear_qkv.weight"] = torch.randn(3 * hidden, hidden, generator=gen)
        w[p + "self_attention.linear_qkv.bias"] = torch.randn(3 * hidden, generator=gen)
        w[p + "self_attention.linear_proj.weight"] = torch.randn(hidden, hidden, generator=gen)
        w[p + "self_attention.linear_proj.bias"] = torch.randn(hidden, generator=gen)
        w[p + "pre_mlp_layernorm.weight"] = torch.ones(hidden)
        if experts:
            w[p + "mlp.router.weight"] = torch.randn(experts, hidden, generator=gen)
            for e in range(experts):
                q = p + f"mlp.experts.local_experts.{e}."
                w[q + "linear_fc1.weight"] = torch.randn(ffn, hidden, generator=gen)
                w[q + "linear_fc2.weight"] = torch.randn(hidden, ffn, generator=gen)
        else:
            w[p + "mlp.linear_fc1.weight"] = torch.randn(ffn, hidden, generator=gen)
            w[p + "mlp.linear_fc2.weight"] = torch.randn(hidden, ffn, generator=gen)
    w["decoder.final_layernorm.weight"] = torch.ones(hidden)
    w["output_layer.weight"] = torch.randn(vocab, hidden, generator=gen)
    return OrderedDict((k, v.to(dtype)) for k, v in w.items())


COLUMN = ['linear_qkv', 'linear_fc1', 'word_embeddings.weight', 'output_layer.weight']
ROW = ['linear_fc2.weight', 'linear_proj.weight']


def shard(name, t, tp, rank):
    if any(c in name for c in COLUMN):
        return t.chunk(tp, 0)[rank].clone()
    if any(r in name for r in ROW):
        return t.chunk(tp, 1)[rank].clone()
    return t.clone()


def write_ckpt(root, weights, tp, pp, vpp, ep, experts, layers, iteration, tracker=True, legacy=False,
               as_parameter=False):
    """Megatron's layout: mp_rank_TT[_PPP][_EEE]/model_optim_rng.pt, model or model0.. per VPP chunk."""
    chunks = pp * vpp
    per_chunk = layers // chunks
    it = os.path.join(root, f"iter_{iteration:07d}")
    for e in range(ep):
        for p in range(pp):
            for t in range(tp):
                state = {"args": make_args(tp, pp, ep, experts if experts else None), "iteration": iteration,
                         "checkpoint_version": 3.0, "rng_state": [extra_state()],
                         "optimizer": {"state": {0: {"step": torch.tensor(5.0)}}, "param_groups": [{"lr": 1e-4}]}}
                models = []
                for v in range(vpp):
                    chunk = v * pp + p
                    m = OrderedDict()
                    for name, tensor in weights.items():
                        local = name
                        if ".layers." in name:
                            li = int(name.split(".layers.")[1].split(".")[0])
                            if li // per_chunk != chunk:
                                continue
                            local = name.replace(f"layers.{li}.", f"layers.{li - chunk * per_chunk}.", 1)
                        elif name.startswith("embedding.") and chunk != 0:
                            continue
                        elif (name.startswith("output_layer") or name.startswith("decoder.final")) and chunk != chunks - 1:
                            continue
                        if ".experts.local_experts." in local:
                            ei = int(local.split(".local_experts.")[1].split(".")[0])
                            per_rank = experts // ep
                            if ei // per_rank != e:
                                continue
                            local = local.replace(f"local_experts.{ei}.", f"local_experts.{ei - e * per_rank}.", 1)
                        value = shard(name, tensor, tp, t)
                        if as_parameter:
                            value = torch.nn.Parameter(value, requires_grad=False)
                        m[local] = value
                        m[local.rsplit(".", 1)[0] + "._extra_state"] = None
                    if legacy:
                        m = legacy_layout(m)
                    models.append(m)
                if vpp == 1:
                    state["model"] = models[0]
                else:
                    for v, m in enumerate(models):
                        state[f"model{v}"] = m
                rank = f"mp_rank_{t:02d}" if pp == 1 else f"mp_rank_{t:02d}_{p:03d}"
                if ep > 1:
                    rank += f"_{e:03d}"
                save(state, os.path.join(it, rank, "model_optim_rng.pt"))
    if tracker:
        with open(os.path.join(root, "latest_checkpointed_iteration.txt"), "w") as f:
            f.write(f"{iteration}\n")


def legacy_layout(m):
    """Megatron-LM's legacy names, nested as language_model -> encoder / embedding dicts."""
    out = OrderedDict()
    lm = OrderedDict()
    enc = OrderedDict()
    for k, v in m.items():
        k2 = (k.replace("decoder.", "").replace("self_attention.linear_qkv", "self_attention.query_key_value")
              .replace("self_attention.linear_proj", "self_attention.dense").replace("mlp.linear_fc1", "mlp.dense_h_to_4h")
              .replace("mlp.linear_fc2", "mlp.dense_4h_to_h").replace("input_layernorm", "input_norm")
              .replace("pre_mlp_layernorm", "post_attention_norm").replace("final_layernorm", "final_norm"))
        if k.startswith("decoder."):
            enc[k2] = v
        elif k.startswith("embedding."):
            lm.setdefault("embedding", OrderedDict())[k2[len("embedding."):]] = v
        else:
            out[k] = v
    lm["encoder"] = enc
    out["language_model"] = lm
    return out


def run_msprobe(case, a, b):
    from msprobe.core.config_check.ckpt_compare.ckpt_comparator import compare_checkpoints
    from msprobe.core.common.log import logger
    exp = os.path.join(OUT, case, "expected")
    os.makedirs(exp, exist_ok=True)
    log = io.StringIO()
    out = os.path.join(exp, "ckpt_similarity.json")
    if os.path.exists(out):
        os.remove(out)
    real_stdout = sys.stdout
    sys.stdout = log
    try:
        compare_checkpoints(a, b, out)
        rc = 0
    except Exception as e:  # noqa: BLE001 - msprobe's failure is the expected result of some cases
        print(f"[EXCEPTION] {type(e).__name__}: {e}")
        rc = 1
    finally:
        sys.stdout = real_stdout
    lines = []
    for line in log.getvalue().splitlines():
        if "[" in line and "]" in line:
            lines.append(line[line.index("["):])
    with open(os.path.join(exp, "log.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(exp, "exit_code.txt"), "w") as f:
        f.write(f"{rc}\n")


def case_vpp_ep_bf16():
    case = os.path.join(OUT, "vpp_ep_bf16")
    shutil.rmtree(case, ignore_errors=True)
    gen = torch.Generator().manual_seed(7)
    wa = full_model(gen, layers=4, hidden=8, ffn=16, vocab=32, dtype=torch.bfloat16, experts=4)
    wb = OrderedDict((k, v.clone()) for k, v in wa.items())
    wb["decoder.layers.3.mlp.experts.local_experts.3.linear_fc2.weight"] += 0.05
    wb["decoder.layers.1.mlp.router.weight"] *= -1
    wb["decoder.layers.2.self_attention.linear_qkv.weight"][5] = 0
    write_ckpt(os.path.join(case, "inputs/ckptA"), wa, tp=2, pp=2, vpp=2, ep=2, experts=4, layers=4, iteration=30,
               as_parameter=True)
    write_ckpt(os.path.join(case, "inputs/ckptB"), wb, tp=2, pp=2, vpp=2, ep=2, experts=4, layers=4, iteration=30)
    run_msprobe("vpp_ep_bf16", os.path.join(case, "inputs/ckptA"), os.path.join(case, "inputs/ckptB"))


def case_tp_change_shapes():
    """A in TP2 (bf16, legacy names), B in TP1 (fp32): the merged tensors pair element by element; one parameter
    has another shape in B, a large bf16-sized matrix crosses the compare's block boundaries."""
    case = os.path.join(OUT, "tp_change_shapes")
    shutil.rmtree(case, ignore_errors=True)
    gen = torch.Generator().manual_seed(11)
    wb = full_model(gen, layers=1, hidden=64, ffn=1088, vocab=16, dtype=torch.float32)
    wa = OrderedDict((k, (v + 1e-2 * torch.randn(v.shape, generator=gen)).to(torch.bfloat16)) for k, v in wb.items())
    wb["decoder.layers.0.self_attention.linear_proj.bias"] = torch.zeros(32)
    wa["decoder.layers.0.input_layernorm.bias"] = torch.zeros(64, dtype=torch.bfloat16)
    wb["decoder.layers.0.input_layernorm.bias"] = torch.full((64,), float("nan"))
    write_ckpt(os.path.join(case, "inputs/ckptA"), wa, tp=2, pp=1, vpp=1, ep=1, experts=0, layers=1, iteration=5,
               legacy=True)
    write_ckpt(os.path.join(case, "inputs/ckptB"), wb, tp=1, pp=1, vpp=1, ep=1, experts=0, layers=1, iteration=5,
               tracker=False)
    run_msprobe("tp_change_shapes", os.path.join(case, "inputs/ckptA"), os.path.join(case, "inputs/ckptB/iter_0000005"))


def case_shape_mismatch():
    """TP shards of linear_qkv that cannot be concatenated (msprobe: numpy's ValueError)."""
    case = os.path.join(OUT, "shard_shape_mismatch")
    shutil.rmtree(case, ignore_errors=True)
    gen = torch.Generator().manual_seed(3)
    w = full_model(gen, layers=1, hidden=8, ffn=16, vocab=32, dtype=torch.float32)
    write_ckpt(os.path.join(case, "ckpt"), w, tp=2, pp=1, vpp=1, ep=1, experts=0, layers=1, iteration=1)
    path = os.path.join(case, "ckpt/iter_0000001/mp_rank_01/model_optim_rng.pt")
    state = torch.load(path)
    state["model"]["decoder.layers.0.self_attention.linear_qkv.weight"] = torch.randn(12, 4, generator=gen)
    torch.save(state, path)


# ---- hostile archives

def zip_with(pkl, records=None, patch=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        for name, data in (records or {}).items():
            z.writestr("archive/" + name, data)
        z.writestr("archive/version", "3\n")
    data = buf.getvalue()
    return patch(data) if patch else data


class Storage:
    def __init__(self, key, numel):
        self.key, self.numel = key, numel


class FakeTensor:
    def __init__(self, storage, size, stride):
        self.storage, self.size, self.stride = storage, size, stride

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, (self.storage, 0, self.size, self.stride, False, OrderedDict()))


class TorchLikePickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", torch.FloatStorage, obj.key, "cpu", obj.numel)
        return None


def fake_checkpoint_pickle(numel=4, key="0"):
    buf = io.BytesIO()
    t = FakeTensor(Storage(key, numel), (2, 2), (2, 1))
    state = {"args": make_args(1, 1, 1, None), "model": OrderedDict([("decoder.final_layernorm.weight", t)])}
    TorchLikePickler(buf, protocol=2).dump(state)
    return buf.getvalue()


def write_hostile(name, archive):
    folder = os.path.join(OUT, "hostile", name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "iter_0000001/mp_rank_00"))
    with open(os.path.join(folder, "iter_0000001/mp_rank_00/model_optim_rng.pt"), "wb") as f:
        f.write(archive)
    with open(os.path.join(folder, "latest_checkpointed_iteration.txt"), "w") as f:
        f.write("1\n")


def hostile():
    four = struct.pack("<4f", 1, 2, 3, 4)
    good = fake_checkpoint_pickle()
    write_hostile("valid", zip_with(good, {"data/0": four}))
    write_hostile("reduce_os_system", zip_with(b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00echoq\x01\x85q\x02Rq\x03.",
                                               {"data/0": four}))
    write_hostile("deep_nesting", zip_with(b"\x80\x02" + b"(" * 100000 + b"N.", {"data/0": four}))
    write_hostile("huge_length", zip_with(b"\x80\x02X\xff\xff\xff\x7fabc.", {"data/0": four}))
    write_hostile("truncated_pickle", zip_with(good[: len(good) // 2], {"data/0": four}))
    write_hostile("absurd_storage", zip_with(fake_checkpoint_pickle(numel=10 ** 15), {"data/0": four}))
    write_hostile("missing_storage", zip_with(fake_checkpoint_pickle(key="7"), {"data/0": four}))

    def outside(data):
        # the central directory entry of data/0 points its local header far past the end of the file
        cd = data.rindex(b"PK\x01\x02archive/data/0"[:4], 0, data.index(b"PK\x05\x06"))
        pos = data.index(b"archive/data/0", data.index(b"PK\x01\x02")) - 46
        return data[: pos + 42] + struct.pack("<I", 0x7FFFFFF0) + data[pos + 46:] if cd else data
    write_hostile("storage_outside_zip", zip_with(good, {"data/0": four}, patch=outside))


if __name__ == "__main__":
    logging.disable(logging.NOTSET)
    hostile()
    case_shape_mismatch()
    case_vpp_ep_bf16()
    case_tp_change_shapes()
