# SPDX-License-Identifier: Apache-2.0
"""msprobe 26's dynamic config_check pack for Python training scripts (docs/config-check.md, "The dynamic pack").

    from probescope import ConfigChecker                    # was: from msprobe.core.config_check import ConfigChecker
    ConfigChecker.apply_patches("pytorch")                  # before the random calls to be counted
    ConfigChecker(model, shell_path=["train.sh"], output_zip_path="./config_check_pack.zip", fmk="pytorch")

Same arguments, same zip layout as msprobe's ConfigChecker, so either tool compares the other's packs
(`probescope-cli config_check -c bench.zip cmp.zip`, `msprobe config_check -c ...`):

    env, pip, hyperparameters/hyperparameters_static.json      rank 0 (or not distributed), at construction
    dataset/step{S}/rank{R}/dataset.json                       every rank, before each forward of `model`
    weights/step{S}/rank{R}/weight.json                        every rank, before each forward of `model`
    random/rank{R}.json                                        rank 0, once, before the first forward

Entries are added through the native zip writer (core/util/ziparchive.h, one folder lock per addition, as msprobe's
create_file_in_zip locks). Unlike msprobe, an existing zip is never appended to by a new run: rank 0 (or a run
that is not distributed) refuses an existing output_zip_path, and an entry the zip already holds is refused too.
"""
import inspect
import json
import os
import random
from collections import defaultdict
from functools import wraps

from . import _C
from ._debugger import ProbeScopeError

# {random op name: [{"count": calls, "stack": [frames]}]}, as msprobe's random_op_stats.
random_op_stats = defaultdict(list)


def _log(msg):
    print(f"[config checking log] {msg}")


def _get_call_stack(frame):
    stack = []
    current_frame = frame.f_back  # the wrapper itself is not shown
    while current_frame:
        frame_info = inspect.getframeinfo(current_frame)
        filename = os.path.abspath(frame_info.filename)
        code_line = frame_info.code_context[0].strip() if frame_info.code_context else ""
        stack.append(f"File {filename}, line {frame_info.lineno}, in {frame_info.function}, {code_line}")
        current_frame = current_frame.f_back
    return stack[::-1]


def _track_random_call(func, name):
    if getattr(func, "_probescope_tracked", False):
        return func

    @wraps(func)
    def wrapper(*args, **kwargs):
        frame = inspect.currentframe()
        stack = _get_call_stack(frame)
        for entry in random_op_stats[name]:
            if entry["stack"] == stack:
                entry["count"] += 1
                break
        else:
            random_op_stats[name].append({"count": 1, "stack": stack})
        try:
            return func(*args, **kwargs)
        finally:
            del frame

    wrapper._probescope_tracked = True
    return wrapper


def _rank_id():
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0


def _distributed():
    import torch.distributed as dist
    return dist.is_available() and dist.is_initialized()


def _tensor_features(tensor):
    """msprobe's get_tensor_features (FmkAdp.process_tensor): non-float and float64 tensors in float32 first."""
    import torch
    if not tensor.is_floating_point() or tensor.dtype == torch.float64:
        tensor = tensor.float()
    return {
        "max": float(tensor.max()),
        "min": float(tensor.min()),
        "mean": float(tensor.mean()),
        "norm": float(tensor.norm()),
    }


_MAX_DEPTH = 100  # msprobe's recursion_depth_decorator bound


def _process_obj(obj, depth=0):
    import torch
    if depth > _MAX_DEPTH:
        raise ProbeScopeError("ConfigChecker: error [config-check.depth]: the forward's arguments are nested "
                              f"deeper than {_MAX_DEPTH} levels")
    if isinstance(obj, torch.Tensor):
        return _tensor_features(obj)
    if isinstance(obj, (tuple, list)):
        return {i: _process_obj(x, depth + 1) for i, x in enumerate(obj)}
    if isinstance(obj, dict):
        return {k: _process_obj(v, depth + 1) for k, v in obj.items()}
    return ""


def _collect_pip_data():
    try:
        import importlib.metadata as metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        import importlib_metadata as metadata
    result = ""
    for pkg in metadata.distributions():
        if pkg.metadata:
            result += f"{pkg.metadata.get('Name')}={pkg.version}\n"
    return result


def _torch_patches():
    import torch
    for name in ("rand", "randint", "randn", "rand_like", "randint_like", "randn_like", "manual_seed"):
        setattr(torch, name, _track_random_call(getattr(torch, name), f"torch.{name}"))
    for name in ("exponential_", "geometric_", "log_normal_", "cauchy_"):
        setattr(torch.Tensor, name, _track_random_call(getattr(torch.Tensor, name), f"torch.Tensor.{name}"))


class ConfigChecker:
    """msprobe's ConfigChecker(model=None, shell_path=None, output_zip_path="./config_check_pack.zip",
    fmk="pytorch"): packs the run into output_zip_path; with a model, every forward of it adds the step's dataset
    and weights features (and, once, the random calls counted since apply_patches)."""

    step = 0
    pre_forward_fun_list = []

    def __init__(self, model=None, shell_path=None, output_zip_path="./config_check_pack.zip", fmk="pytorch"):
        if fmk != "pytorch":
            raise ProbeScopeError(f"ConfigChecker: error [config-check.fmk]: fmk {fmk!r} is not supported "
                                  "(ProbeScope collects from PyTorch)")
        import torch
        if isinstance(model, list):
            model = model[0] if model else None
        if model is not None and not isinstance(model, torch.nn.Module):
            raise ProbeScopeError("ConfigChecker: error [config-check.model]: model is not torch.nn.Module or a "
                                  "list of modules")
        if not isinstance(output_zip_path, str) or not output_zip_path.endswith(".zip"):
            raise ProbeScopeError("ConfigChecker: error [config-check.output]: output zip path must be a string "
                                  "and end with '.zip'")
        if shell_path is not None and (not isinstance(shell_path, list)
                                       or not all(isinstance(p, str) for p in shell_path)):
            raise ProbeScopeError("ConfigChecker: error [config-check.shell-path]: shell_path must be a list of "
                                  "paths (str)")
        self.model = model
        self.shell_path = shell_path
        self.output_zip_path = output_zip_path
        self.rank = _rank_id()
        self.rank_zero = not _distributed() or self.rank == 0
        folder = os.path.dirname(output_zip_path)
        if folder and not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
        # A new run never adds to a pack left by another one (msprobe appends to it): rank 0 claims the name.
        if self.rank_zero and os.path.lexists(output_zip_path):
            raise ProbeScopeError(f"{output_zip_path}: error [config-check.output]: the pack already exists "
                                  "(nothing is replaced or added to); choose another output_zip_path")
        self._random_written = False
        self.pack()

    def _add(self, name, content):
        try:
            _C.config_check_append(self.output_zip_path, [(name, content)])
        except ValueError as e:
            raise ProbeScopeError(str(e)) from None

    @staticmethod
    def apply_patches(fmk="pytorch"):
        """Counts the calls of random functions from now on, per call stack (msprobe's RandomChecker patches)."""
        if fmk != "pytorch":
            raise ProbeScopeError(f"ConfigChecker.apply_patches: error [config-check.fmk]: fmk {fmk!r} is not "
                                  "supported (ProbeScope collects from PyTorch)")
        for name in ("random", "randint", "uniform", "choice"):
            setattr(random, name, _track_random_call(getattr(random, name), f"random.{name}"))
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None:
            for name in ("rand", "randint", "choice", "normal"):
                setattr(np.random, name, _track_random_call(getattr(np.random, name), f"np.random.{name}"))
        _torch_patches()
        # Megatron's get_args (hyperparameters_dynamic.json) is not collected (docs/config-check.md).

    def pack(self):
        _log(f"pack result zip path {os.path.realpath(self.output_zip_path)}")
        # msprobe's checker order: env, pip, dataset, weights, hyperparameters, random.
        if self.rank_zero:
            self._add("env", json.dumps(dict(os.environ), indent=4))
            _log("add env args to zip")
            self._add("pip", _collect_pip_data())
            _log("add pip info to zip")
        hooks = []
        if self.model is not None:
            hooks.append(self._collect_dataset)
            hooks.append(self._collect_weights)
        if self.shell_path and self.rank_zero:
            self._pack_hyperparameters()
        if self.model is not None:
            if self.rank_zero:  # msprobe's RandomChecker is not multi_rank: rank 0 packs it
                hooks.append(self._collect_random)
            self._register(hooks)

    def _pack_hyperparameters(self):
        try:
            text, notes = _C.config_check_hyperparameters(self.shell_path)
        except ValueError as e:
            raise ProbeScopeError(str(e)) from None
        for note in notes:
            _log(note)
        if text is not None:
            self._add("hyperparameters/hyperparameters_static.json", text)
            _log("add static hyperparameters args to zip")
        else:
            _log(f"Warning: Failed to extract hyperparameters from script {self.shell_path}")

    def _register(self, hooks):
        def run(args, kwargs):
            for collect in hooks:
                collect(args, kwargs, ConfigChecker.step)
            ConfigChecker.step += 1

        model = self.model
        try:
            model.register_forward_pre_hook(lambda module, args, kwargs: run(args, kwargs), with_kwargs=True)
        except TypeError:
            # torch < 2 has no with_kwargs: the instance's forward is wrapped instead, so keyword arguments are
            # seen too (the class's forward, and other instances, are untouched).
            forward = model.forward

            @wraps(forward)
            def forward_with_check(*args, **kwargs):
                run(args, kwargs)
                return forward(*args, **kwargs)

            model.forward = forward_with_check

    def _collect_dataset(self, args, kwargs, step):
        features = {"args": _process_obj(args), "kwargs": _process_obj(kwargs)}
        self._add(f"dataset/step{step}/rank{_rank_id()}/dataset.json", json.dumps(features, indent=4))
        _log("add first dataset input features to zip")

    def _collect_weights(self, args, kwargs, step):
        import torch
        weights = {}
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                if param.dtype != torch.float32:
                    param = param.float()
                weights[name] = _tensor_features(param)
        self._add(f"weights/step{step}/rank{_rank_id()}/weight.json", json.dumps(weights, indent=4))
        _log("add weights info to zip")

    def _collect_random(self, args, kwargs, step):
        if self._random_written:
            return
        stats = {name: entries for name, entries in random_op_stats.items()}
        self._add(f"random/rank{_rank_id()}.json", json.dumps(stats, indent=4))
        _log(f"random calls packed: random/rank{_rank_id()}.json")
        self._random_written = True
