# SPDX-License-Identifier: Apache-2.0
"""A small training script dumped by msprobe 1.2.2 or by ProbeScope: only the import differs.

    python3 train.py --tool probescope|msprobe|none --dump-path DIR [--task statistics|tensor]
                     [--level L0|L1|mix] [--steps N] [--perturb] [--summary-mode md5] [--size small|medium|large]

Model: conv + attention + MLP (LayerNorm, GELU, softmax, residuals), SGD with momentum, fixed data.
--perturb adds noise to the output of the GELU of block.ffn (an injected culprit for compare).
Prints one line per step: "step N TIME_S", and the time of steps 1.. until every file is on disk.
"""
import argparse
import json
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--tool", choices=["probescope", "msprobe", "none"], default="probescope")
parser.add_argument("--dump-path", default="")
parser.add_argument("--task", default="statistics")
parser.add_argument("--level", default="mix")
parser.add_argument("--steps", type=int, default=2)
parser.add_argument("--summary-mode", default="statistics")
parser.add_argument("--perturb", action="store_true")
parser.add_argument("--list", default="", help="config.json's list, comma-separated")
parser.add_argument("--scope", default="", help="config.json's scope: two names, comma-separated")
parser.add_argument("--data-mode", default="all", help="config.json's data_mode, comma-separated")
parser.add_argument("--size", choices=["small", "medium", "large"], default="small")
parser.add_argument("--model", choices=["net", "zoo", "edge"], default="net",
                    help="net: conv + attention + MLP; zoo: embedding, LSTM, BatchNorm, in-place ReLU, a shared "
                         "module called twice, tuple outputs, keyword arguments, Adam; edge: statistics where "
                         "float32 and float64 differ (means near zero, float64 and float16 tensors), negative "
                         "0-d tensors, integer tensors and infinities (*_except_inf_nan)")
parser.add_argument("--grads-json", default="", help="write each step's parameter gradients' norms here")
args = parser.parse_args()

if args.tool == "msprobe":
    from msprobe.pytorch import PrecisionDebugger, seed_all
elif args.tool == "probescope":
    from probescope import PrecisionDebugger, seed_all
else:
    PrecisionDebugger = None

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
if args.tool != "none":
    seed_all(seed=1234, mode=False)
else:
    torch.manual_seed(1234)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        k = k.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        v = v.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (d // self.heads) ** 0.5)
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, n, d)
        return self.proj(y)


class Noisy(nn.Module):
    """GELU, or (--perturb) GELU with noise on its output: the culprit of an NPU/bench pair."""
    def __init__(self, perturb):
        super().__init__()
        self.perturb = perturb
        self.gen = torch.Generator().manual_seed(7)

    def forward(self, x):
        y = F.gelu(x)
        if self.perturb:
            with torch.no_grad():
                noise = torch.randn(y.shape, generator=self.gen) * 0.5 * float(y.std())
            y = y + noise
        return y


class FFN(nn.Module):
    def __init__(self, dim, hidden, perturb):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = Noisy(perturb)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden, perturb):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = FFN(dim, hidden, perturb)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class Net(nn.Module):
    def __init__(self, channels, dim, heads, hidden, classes, perturb):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.embed = nn.Linear(channels, dim)
        self.block = Block(dim, heads, hidden, perturb)
        self.head = nn.Linear(dim, classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = self.pool(self.relu(self.conv(x)))           # b, c, h/2, w/2
        x = x.flatten(2).transpose(1, 2)                  # b, tokens, c
        x = self.block(self.embed(x))
        x = self.dropout(x.mean(dim=1))
        return self.head(x)


class Zoo(nn.Module):
    def __init__(self, vocab=50, dim=16, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.norm = nn.BatchNorm1d(dim)
        self.shared = nn.Linear(dim, dim)
        self.act = nn.ReLU(inplace=True)
        self.heads = nn.ModuleList([nn.Linear(dim, classes), nn.Linear(dim, classes)])
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, tokens):
        x = self.embed(tokens)
        x, (h, c) = self.lstm(x)
        x = self.norm(x.permute(0, 2, 1)).permute(0, 2, 1)
        x = self.act(self.shared(x))
        x = self.shared(x) * self.scale
        pooled = torch.cat([x.max(dim=1).values, h[-1]], dim=-1).view(x.shape[0], 2, -1).sum(dim=1)
        logits = [head(pooled) for head in self.heads]
        return torch.stack(logits, dim=0).mean(dim=0)


class Edge(nn.Module):
    """Tensors whose msprobe statistics a float64 reduction would not reproduce bit for bit."""
    def __init__(self, dim=64):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        x = self.fc(x)
        centred = x - x.mean()                                 # a mean of about 1e-9
        wide = centred.double() * 3.0                          # float64: msprobe reduces it in float32
        half = torch.tanh(centred.half().float())              # a float16 round trip
        neg = -(centred * centred).sum()                       # a negative 0-d tensor
        ints = torch.argmax(centred, dim=-1)                   # an integer tensor
        edge = torch.log(F.relu(centred) + (ints.sum() > -1))  # log(0 + 1) and log(>1): finite
        inf = torch.exp(centred * 1e4)                         # overflows to inf in float32
        return (wide.float() + half + edge).sum() + neg + 0.0 * inf.isinf().sum()


if args.model == "edge":
    model = Edge()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    data = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    label = None
elif args.model == "zoo":
    model = Zoo()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    data = torch.randint(0, 50, (4, 6), generator=torch.Generator().manual_seed(1))
    label = torch.randint(0, 10, (4,), generator=torch.Generator().manual_seed(2))
elif args.size == "small":
    batch, image, channels, dim, heads, hidden = 4, 8, 8, 16, 2, 32
elif args.size == "medium":
    batch, image, channels, dim, heads, hidden = 16, 16, 16, 64, 4, 256
else:
    batch, image, channels, dim, heads, hidden = 32, 32, 32, 128, 4, 512
if args.model == "net":
    model = Net(channels, dim, heads, hidden, 10, args.perturb)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(batch, 3, image, image, generator=torch.Generator().manual_seed(1))
    label = torch.randint(0, 10, (batch,), generator=torch.Generator().manual_seed(2))

debugger = None
if PrecisionDebugger is not None:
    config = {"task": args.task, "dump_path": args.dump_path, "rank": [], "step": [], "level": args.level,
              "enable_dataloader": False, args.task: {"scope": [x for x in args.scope.split(",") if x], "list": [x for x in args.list.split(",") if x],
                           "data_mode": args.data_mode.split(",")}}
    if args.task == "statistics":
        config["statistics"]["summary_mode"] = args.summary_mode
    os.makedirs(args.dump_path, exist_ok=True)
    config_path = os.path.join(args.dump_path, "config.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    debugger = PrecisionDebugger(config_path=config_path)

first = None
for step in range(args.steps):
    t0 = time.perf_counter()
    if step == 1:
        first = t0
    if debugger:
        debugger.start(model=model)
    out = model(data)
    loss = out if label is None else F.cross_entropy(out, label)
    loss.backward()
    if debugger:
        debugger.stop()
    if args.grads_json:
        with open(f"{args.grads_json}.step{step}", "w") as f:
            json.dump({n: float(p.grad.norm()) for n, p in model.named_parameters()}, f)
    optimizer.step()
    optimizer.zero_grad()
    if debugger:
        debugger.step()
    print(f"step {step} {time.perf_counter() - t0:.6f}", flush=True)
# ProbeScope writes files in the background: a fair figure waits until they are all on disk (msprobe's are
# written by the time its step ends).
if args.tool == "probescope":
    from probescope import _C
    _C.flush()
if first is not None:
    print(f"steps 1-{args.steps - 1} with the files on disk {time.perf_counter() - first:.6f}", flush=True)
