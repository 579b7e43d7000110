# SPDX-License-Identifier: Apache-2.0
"""A tiny Megatron-like training run under a monitor, for test_monitor.py, test_monitor_reference.py and bench.py:

    python3 monitortrain.py --tool probescope|msprobe-core|none --out DIR [--steps 4] [--micro 2] [--nan-at STEP]
                            [--config FILE] [--size tiny|medium]

Model: module.decoder.layers.N.{self_attention.linear_qkv, mlp.linear_fc1, mlp.linear_fc2}, input_layernorm,
embedding.word_embeddings (names squash to layers.N... as msprobe's Megatron runs do), Adam. --tool msprobe-core
runs ProbeScope's TrainerMon hooks with msprobe 26's own statistics and writers (msprobecore.py; msprobe's python/
folder in MSPROBE26_PYTHON): msprobe's TrainerMon itself needs torch >= 2. With --nan-at S the
input of step S's last micro step is NaN from there on. MONITOR_OUTPUT_DIR is --out. Prints "steps 1-N: SECONDS"
(the steps after the first) as train.py does.
"""
import argparse
import json
import os
import sys
import time

import torch

SIZES = {"tiny": (16, 8, 16, 2, 4, 2), "small": (64, 64, 256, 4, 32, 4), "medium": (512, 256, 1024, 4, 64, 8)}  # vocab, hidden, ffn, layers, seq, batch


class Attention(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.linear_qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.linear_proj = torch.nn.Linear(hidden, hidden)

    def forward(self, x):
        q, k, v = self.linear_qkv(x).chunk(3, dim=-1)
        scores = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.linear_proj(scores @ v)


class Mlp(torch.nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.linear_fc1 = torch.nn.Linear(hidden, ffn)
        self.linear_fc2 = torch.nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.linear_fc2(torch.nn.functional.gelu(self.linear_fc1(x)))


class Layer(torch.nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.input_layernorm = torch.nn.LayerNorm(hidden)
        self.self_attention = Attention(hidden)
        self.mlp = Mlp(hidden, ffn)

    def forward(self, x):
        x = x + self.self_attention(self.input_layernorm(x))
        return x + self.mlp(x)


class Decoder(torch.nn.Module):
    def __init__(self, hidden, ffn, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(hidden, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Embedding(torch.nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(vocab, hidden)

    def forward(self, tokens):
        return self.word_embeddings(tokens)


class Gpt(torch.nn.Module):
    def __init__(self, vocab, hidden, ffn, layers):
        super().__init__()
        self.embedding = Embedding(vocab, hidden)
        self.decoder = Decoder(hidden, ffn, layers)

    def forward(self, tokens, poison=None):
        x = self.embedding(tokens)
        if poison is not None:
            x = x * poison
        return self.decoder(x)


class Wrapper(torch.nn.Module):
    """Megatron's module.module nesting, so that squash_param_name has something to squash."""

    def __init__(self, inner):
        super().__init__()
        self.module = inner

    def forward(self, *args):
        return self.module(*args)


DEFAULT_CONFIG = {
    # Full module names: msprobe matches parameters by prefix of their unsquashed (or "<vpp>:"-prefixed squashed)
    # names, and modules by "<vpp>:" + name, squashed or not.
    "targets": {"module.decoder.layers.0.mlp.linear_fc1": {}, "module.decoder.layers.0.self_attention": {}},
    "xy_distribution": True,
    "wg_distribution": True,
    "mv_distribution": True,
    "param_distribution": True,
    "ops": ["min", "max", "norm", "zeros", "nans", "mean"],
    "squash_name": True,
    "step_count_per_record": 2,
    "alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 3.0}},
                        {"rule_name": "AnomalyNan", "args": {}}], "dump": True},
}


# Everything (bench.py --tasks monitor): every module's activations and gradients, every parameter.
ALL_CONFIG = dict(DEFAULT_CONFIG, targets={})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default="probescope", choices=["probescope", "msprobe-core", "none"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--config", default=None, help="a file, or 'all' (ALL_CONFIG); default: DEFAULT_CONFIG")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--micro", type=int, default=2)
    parser.add_argument("--nan-at", type=int, default=-1)
    parser.add_argument("--size", default="tiny", choices=sorted(SIZES))
    args = parser.parse_args()
    torch.manual_seed(1234)
    vocab, hidden, ffn, layers, seq, batch = SIZES[args.size]
    model = Wrapper(Gpt(vocab, hidden, ffn, layers))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    os.environ["MONITOR_OUTPUT_DIR"] = args.out
    if args.tool != "none":
        config = args.config
        if config is None or config == "all":
            content = ALL_CONFIG if config == "all" else DEFAULT_CONFIG
            config = args.out.rstrip("/") + ".config.json"
            os.makedirs(os.path.dirname(os.path.abspath(config)), exist_ok=True)
            with open(config, "w", encoding="utf-8") as f:
                json.dump(content, f)
        if args.tool == "msprobe-core":
            reference = os.environ["MSPROBE26_PYTHON"]
            sys.path.insert(0, reference)
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import msprobecore
            msprobecore.install(reference)
        from probescope.pytorch import TrainerMon
        monitor = TrainerMon(config, params_have_main_grad=False)
        monitor.set_monitor(model, optimizer, grad_acc_steps=args.micro)
    generator = torch.Generator().manual_seed(99)
    started = None
    for step in range(args.steps):
        if step == 1:
            started = time.perf_counter()
        optimizer.zero_grad()
        for micro in range(args.micro):
            tokens = torch.randint(0, vocab, (batch, seq), generator=generator)
            poison = None
            if args.nan_at >= 0 and (step > args.nan_at or (step == args.nan_at and micro == args.micro - 1)):
                poison = torch.full((1,), float("nan"))
            loss = model(tokens, poison).float().pow(2).mean() / args.micro
            loss.backward()
        optimizer.step()
    if started is not None:
        print(f"steps 1-{args.steps - 1}: {time.perf_counter() - started:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
