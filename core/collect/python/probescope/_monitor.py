# SPDX-License-Identifier: Apache-2.0
"""msprobe 26's monitor for Python training scripts: `from probescope.pytorch import TrainerMon`.

    monitor = TrainerMon("monitor_config.json", process_group=None, params_have_main_grad=False)
    monitor.set_monitor(model, optimizer, grad_acc_steps=1)     # then train as before

The hooks here are msprobe's (module_hook.py: forward and full backward hooks on the target modules, a hook on each
target parameter's gradient accumulator, optimizer.step wrapped); the statistics, the alert rules and the files
are the collection library's C++ (probescope._monitor_c, the code the C++ TrainerMon runs), written in msprobe's
v1 layout: MONITOR_OUTPUT_DIR/<time>-rank<R>-<uid>/<metric>_<a>-<b>.csv and anomaly_detected/rank<R>/anomaly.json.
docs/monitor.md, "Collecting monitor data", lists what is collected and where ProbeScope differs.
"""
import os
import sys
from functools import partial

import torch

from . import _monitor_c
from ._debugger import ProbeScopeError

__all__ = ["TrainerMon"]


def _log(message):
    sys.stderr.write(f"[probescope] monitor: {message}\n")


def _tag(name, rank, kind):
    return f"{name}/rank{rank}/{kind}"


def _squash(name, enable):
    # msprobe's squash_param_name without a regex: from the last ".layer(s).", else ".embedding(s).", ".final",
    # ".output", ".norm" on.
    if not enable:
        return name
    for starts in (("layer.", "layers."), ("embedding.", "embeddings."), ("final",), ("output",), ("norm",)):
        p = len(name)
        while True:
            p = name.rfind(".", 0, p)
            if p < 0:
                break
            if name.startswith(starts, p + 1):
                return name[p + 1:]
    return name


class _ModuleContext:
    __slots__ = ("name", "micro_step")

    def __init__(self, name):
        self.name = name
        self.micro_step = 0


class TrainerMon:
    """msprobe's TrainerMon (msprobe.pytorch.TrainerMon): the same constructor, set_monitor and config.json."""

    def __init__(self, config_file_path, process_group=None, params_have_main_grad=True, opt_ty=None):
        dist = torch.distributed
        self._distributed = dist.is_available() and dist.is_initialized()
        if self._distributed:
            self.rank = dist.get_rank()
            group = process_group if process_group is not None else dist.group.WORLD
            try:
                self.pp_stage = dist.get_group_rank(group, self.rank)
                group_mates = dist.get_process_group_ranks(group)
            except AttributeError:  # torch < 2
                self.pp_stage = dist.get_rank(group)
                group_mates = list(range(dist.get_world_size(group)))
        else:
            self.rank, self.pp_stage, group_mates = 0, 0, [0]
        if os.getenv("DYNAMIC_MONITOR", "False").lower() == "true":
            _log("DYNAMIC_MONITOR is not supported; the config is read once, at start")
        self.params_have_main_grad = params_have_main_grad
        output_dir = os.getenv("MONITOR_OUTPUT_DIR", "./monitor_output")
        try:
            self._core = _monitor_c.MonitorCore(os.fspath(config_file_path), self.rank, self.pp_stage,
                                                [int(r) for r in group_mates], output_dir)
        except ValueError as error:
            raise ProbeScopeError(str(error)) from None
        self.config = self._core.config
        for warning in self.config["warnings"]:
            _log(warning)
        self.ops = self.config["ops"]
        self.start_step = self.config["start_step"]
        self.step_interval = self.config["step_interval"]
        self.collect_times = self.config["collect_times"]
        self.module_rank_list = self.config["module_ranks"]
        self.monitoring = self.collect_times > 0
        self.has_collect_times = 0
        self.step = 0
        self.micro_batch_number = 1
        self.model = None
        self.optimizer_trans = None
        self.param2name = {}
        self.name2param = {}
        self.duplicate_param = set()
        self._handles = []
        self._grad_accs = []
        self._fwd = {}
        self._bwd = {}
        self._hooked_optimizer = None
        self._original_step = None

    @property
    def output_dir(self):
        """The run folder, <MONITOR_OUTPUT_DIR>/<time>-rank<R>-<uid> ('' on a rank module_ranks leaves out)."""
        return self._core.run_dir

    # msprobe's older spellings.
    def set_wrapped_optimizer(self, optimizer):
        self.optimizer_trans = optimizer

    def monitor_gnorm_with_ad(self, model, optimizer=None, grad_acc_steps=1, tp_group=None, dp_group=None,
                              start_iteration=0):
        optimizer = optimizer if optimizer is not None else self.optimizer_trans
        if optimizer is None:
            raise ProbeScopeError("monitor_gnorm_with_ad: call set_wrapped_optimizer first or pass an optimizer")
        self.set_monitor(model, optimizer, grad_acc_steps, tp_group, dp_group, start_iteration)

    def set_monitor(self, model, optimizer, grad_acc_steps=1, tp_group=None, dp_group=None, start_iteration=0):
        """Hooks `model` (a module, or a list of VPP chunks) and wraps optimizer.step; call once, before training."""
        if self.model is not None:
            raise ProbeScopeError("set_monitor was called before: one TrainerMon monitors one model")
        self.micro_batch_number = grad_acc_steps if isinstance(grad_acc_steps, int) and grad_acc_steps >= 1 else 1
        self.step = start_iteration if isinstance(start_iteration, int) and start_iteration >= 0 else 0
        self.model = list(model) if isinstance(model, (list, tuple)) else [model]
        self._register_params(tp_group, dp_group)
        self._wrap_step(optimizer)
        if self.config["wg_distribution"] and self._core.has_writer:
            self._hook_weights()
        self._hook_modules()

    # ---- msprobe's bookkeeping --------------------------------------------------------------------------------
    def _collecting(self):
        return (self.monitoring and self._core.has_writer and self.step >= self.start_step
                and (self.step - self.start_step) % self.step_interval == 0)

    def _register_params(self, tp_group, dp_group):
        targets = self.config["targets"]
        squash = self.config["squash_name"]
        for vpp, chunk in enumerate(self.model):
            prefix = f"{vpp}:"
            for param_name, param in chunk.named_parameters():
                if not param.requires_grad:
                    continue
                squashed = prefix + _squash(param_name, squash)
                if not any(param_name.startswith(t) or squashed.startswith(t) or (prefix + param_name).startswith(t)
                           for t in targets):
                    continue
                name = squashed if squashed not in self.name2param else prefix + param_name
                self.param2name[param] = name
                self.name2param[name] = param
                dist = torch.distributed
                if tp_group is not None and not (getattr(param, "tensor_model_parallel", False)
                                                 or dist.get_rank(group=tp_group) == 0):
                    self.duplicate_param.add(name)
                if dp_group is not None and dist.get_rank(group=dp_group) != 0:
                    self.duplicate_param.add(name)

    def _put_map(self, bucket, name, suffix, kind, value, collect):
        # build_tbtag_tensor_map: one tensor -> "<name><suffix>", several -> "<name>_<i><suffix>"; each key's call id.
        if isinstance(value, torch.Tensor):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return
        core = self._core
        single = len(value) == 1
        for i, item in enumerate(value):
            key = _tag(name + suffix if single else f"{name}_{i}{suffix}", self.rank, kind)
            core.register(key)
            if collect:
                core.put(bucket, key, item)

    def _hook_modules(self):
        config = self.config
        if not config["xy_distribution"] or not self._core.has_writer:
            return
        if self.module_rank_list and self.rank not in self.module_rank_list:
            return
        targets = []
        for key in config["targets"]:
            if ":" in key:
                targets.append(key)
            else:
                targets.extend(f"{vpp}:{key}" for vpp in range(len(self.model)))
        targets = set(targets)
        squash = config["squash_name"]
        for vpp, chunk in enumerate(self.model):
            prefix = f"{vpp}:"
            for module_name, module in chunk.named_modules():
                squashed = prefix + _squash(module_name, squash)
                if config["all_xy"]:
                    name = squashed
                else:
                    name = next((p for p in (squashed, prefix + module_name) if p in targets), "")
                if not name or module.__class__.__name__ == "FullyShardedDataParallel":
                    continue
                if not config["backward_only"]:
                    hook = partial(self._forward_hook, name=name)
                    try:
                        handle = module.register_forward_hook(hook, with_kwargs=True)
                    except TypeError:  # torch < 2: no keyword arguments reach a hook
                        handle = module.register_forward_hook(
                            lambda m, args, output, hook=hook: hook(m, args, {}, output))
                    self._handles.append(handle)
                if not config["forward_only"]:
                    if getattr(module, "_backward_hooks", None) and getattr(module, "_is_full_backward_hook", None) is False:
                        _log(f"{name} has a register_backward_hook (deprecated): its actv_grad is skipped")
                        continue
                    self._bwd[module] = _ModuleContext(name)
                    self._handles.append(module.register_full_backward_hook(self._backward_hook))

    def _forward_hook(self, module, args, kwargs, output, name):
        if not module.training:
            return
        context = self._fwd.get(module)
        if context is None:
            context = self._fwd[module] = _ModuleContext(name)
        inputs = [t for t in args if torch.is_tensor(t)]
        if kwargs:
            inputs.extend(t for t in kwargs.values() if torch.is_tensor(t))
        collect = self._collecting()
        suffix = f":{context.micro_step}"
        bucket = "actv:" + name
        self._put_map(bucket, f"{name}.input", suffix, "actv", inputs, collect)
        self._put_map(bucket, f"{name}.output", suffix, "actv", output, collect)
        context.micro_step = (context.micro_step + 1) % self.micro_batch_number

    def _backward_hook(self, module, input_grad, output_grad):
        context = self._bwd[module]
        collect = self._collecting()
        suffix = f":{context.micro_step}"
        self._put_map("actv_grad", f"{context.name}.input", suffix, "actv_grad", input_grad, collect)
        self._put_map("actv_grad", f"{context.name}.output", suffix, "actv_grad", output_grad, collect)
        context.micro_step = (context.micro_step + 1) % self.micro_batch_number

    def _grad_of(self, param):
        if self.params_have_main_grad and getattr(param, "main_grad", None) is not None:
            return param.main_grad
        return param.grad

    def _hook_weights(self):
        mbs = self.config["monitor_mbs_grad"]

        @torch.no_grad()
        def param_hook(*_, param, name):
            key = f"{name}:{param.micro_step}" if mbs else name
            key = _tag(key, self.rank, "acc_grad")
            self._core.register(key)
            if (mbs or param.micro_step + 1 == self.micro_batch_number) and self._collecting():
                grad = self._grad_of(param)
                if grad is not None:
                    self._core.put("grad_unreduced", key, grad)
            param.micro_step = (param.micro_step + 1) % self.micro_batch_number

        for param, name in self.param2name.items():
            param.micro_step = 0
            grad_acc = param.expand_as(param).grad_fn.next_functions[0][0]
            self._handles.append(grad_acc.register_hook(partial(param_hook, param=param, name=name)))
            self._grad_accs.append(grad_acc)

    def _pre_step(self, optimizer):
        if not self._collecting():
            return
        core, config = self._core, self.config
        if config["wg_distribution"]:
            for param, name in self.param2name.items():
                if name in self.duplicate_param:
                    continue
                grad = self._grad_of(param)
                if grad is None:
                    _log(f"grad is None: {name}")
                    continue
                tag = _tag(name, self.rank, "post_grad")
                core.register(tag)
                core.put("grad_reduced", tag, grad)
        if config["mv_distribution"]:
            core.clear("exp_avg")
            core.clear("exp_avg_sq")
            state = getattr(optimizer, "state", {})
            for kind in ("exp_avg", "exp_avg_sq"):
                for param, name in self.param2name.items():
                    tag = _tag(name, self.rank, kind)
                    core.register(tag)
                    moment = state.get(param, {}).get(kind) if param in state else None
                    if moment is not None:
                        core.put(kind, tag, moment)
        if config["param_distribution"]:
            for name, param in self.name2param.items():
                if param.numel() != 0:
                    core.put("param_origin", _tag(name, self.rank, "param_origin"), param)

    def _post_step(self):
        if self.config["param_distribution"] and self._collecting():
            for name, param in self.name2param.items():
                if param.numel() != 0:
                    self._core.put("param_updated", _tag(name, self.rank, "param_updated"), param)

    def _final_step(self):
        if self.monitoring:
            rank_valid = not self.module_rank_list or (self._distributed and self.rank in self.module_rank_list)
            step_valid = self.step >= self.start_step and (self.step - self.start_step) % self.step_interval == 0
            if rank_valid and step_valid and self._core.has_writer:
                self.has_collect_times += 1
                try:
                    self._core.write_step(self.step)
                except ValueError as error:
                    raise ProbeScopeError(str(error)) from None
                if self.has_collect_times >= self.collect_times:
                    self._remove_hooks()
        self.step += 1

    def _wrap_step(self, optimizer):
        original = optimizer.step

        def step(*args, **kwargs):
            self._pre_step(optimizer)
            out = original(*args, **kwargs)
            self._post_step()
            self._final_step()
            return out

        self._hooked_optimizer, self._original_step = optimizer, original
        optimizer.step = step

    def _remove_hooks(self):
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._grad_accs.clear()
        self.monitoring = False
