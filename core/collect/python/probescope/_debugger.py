# SPDX-License-Identifier: Apache-2.0
"""msprobe 1.2's PrecisionDebugger for Python training scripts, on ProbeScope's collector.

Python observes the calls as msprobe 1.2.2 does (its module hooks for L0, wrappers of the torch APIs it
hooks for L1) and hands names, values and frames to the collector core in C++: the call counters,
construct.json parents, stack.json frames, the entries and the files' JSON text are probescope._C.Book's
(core/collect/msprobebook.h), the leaves (statistics, md5, .pt files) probescope._C.describe_text's. See
docs/collect.md, "The Python module".
"""
import atexit
import linecache
import os
import random
import sys
import threading

import torch

from . import _C
from . import _apis

TASKS = ("statistics", "tensor", "overflow_check", "free_benchmark", "run_ut", "grad_probe", "structure")
LEVELS = ("L0", "L1", "L2", "mix", "debug")
SUPPORTED_TASKS = ("statistics", "tensor", "overflow_check", "free_benchmark")
SUPPORTED_LEVELS = ("L0", "L1", "mix", "debug")


class ProbeScopeError(ValueError):
    """A bad argument or config.json value; the message names the key (and the file)."""


class _Busy(threading.local):
    # True while a recorded API runs or a hook of ours works: calls made then are not user calls (msprobe:
    # HOOKModule.inner_stop_hook and Service.inner_switch).
    value = False


_busy = _Busy()
# Entry-part texts that need no value: is_recompute, and parameters_grad's placeholder [null] (filled later).
_FALSE = "false"
_NULL_IN_LIST = _C.describe_text(None, "", "", False, 3, True)
_service = None  # the live _Service: API wrappers look it up per call


# ----------------------------------------------------------------------------------------------------
# config.json

def _fail(where, message):
    raise ProbeScopeError(f"{where}: error [collect.config]: {message}")


class _Selection:
    """A "step" or "rank" selection: integers and (first, last) ranges, never expanded; empty = all."""

    def __init__(self, values, ranges):
        self.values = frozenset(values)
        self.ranges = list(ranges)

    def __bool__(self):
        return bool(self.values or self.ranges)

    def __contains__(self, index):
        return index in self.values or any(first <= index <= last for first, last in self.ranges)

    def last(self):
        return max(list(self.values) + [last for _, last in self.ranges])


class _Config:
    """config.json as the C++ API reads it (_C.load_config: core/collect/config.cpp, the one parser; errors name
    file:line:col and the key), then the keyword arguments of PrecisionDebugger."""

    def __init__(self, config_path, task, dump_path, level, step):
        where = config_path if isinstance(config_path, str) else "PrecisionDebugger()"
        self.where = where
        self.config_path = config_path
        # The names only the Python module knows of, and its own limits, are told first; everything else (the
        # file, the arguments over it, the step items and ranges, the task's section) is the C++ parser's.
        if task is not None and task not in TASKS:
            _fail(where, f"task must be one of {list(TASKS)}")
        if task is not None and task not in SUPPORTED_TASKS:
            _fail(where, f'task "{task}" is not supported by the Python module yet (supported: '
                         f'{", ".join(SUPPORTED_TASKS)})')
        if level is not None and level not in LEVELS:
            _fail(where, f"level must be one of {list(LEVELS)}")
        if level is not None and level not in SUPPORTED_LEVELS:
            _fail(where, f'"level" must be one of {list(SUPPORTED_LEVELS)} (L2 needs Ascend\'s kernel dump)')
        if dump_path is not None and not isinstance(dump_path, str):
            _fail(where, "dump_path must be a string")
        try:
            data = _C.load_config(config_path, task, dump_path or None, level, step)
        except ValueError as e:
            raise ProbeScopeError(str(e)) from None
        self.task = data["task"]
        if self.task not in SUPPORTED_TASKS:
            _fail(where, f'task "{self.task}" is not supported by the Python module yet (supported: '
                         f'{", ".join(SUPPORTED_TASKS)})')
        self.level = data["level"]
        # msprobe's default config (used when there is no config_path) has "./dump_path".
        self.dump_path = data["dump_path"] or ("./dump_path" if config_path is None else None)
        if not self.dump_path:
            _fail(where, '"dump_path" is required (config.json or the dump_path argument)')
        self.rank = _Selection(data["rank"], data["rank_ranges"])
        self.step = _Selection(data["step"], data["step_ranges"])
        self.seed = data["seed"] if data["seed_configured"] else None
        self.is_deterministic = data["is_deterministic"]
        # ProbeScope's own key (as in the C++ library's config.json): bytes of tensors that may wait for the disk.
        self.async_queue_bytes = data["async_queue_bytes"]
        self.scope = data["scope"]
        self.list = data["list"]
        self.overflow_nums = data["overflow_nums"]
        self.free_benchmark = data["free_benchmark"]
        data_mode = data["data_mode"]
        if "all" in data_mode:
            self.data_mode = {"forward", "backward", "input", "output"}
        else:
            self.data_mode = set(data_mode)
            if not self.data_mode & {"forward", "backward"}:
                self.data_mode |= {"forward", "backward"}
            if not self.data_mode & {"input", "output"}:
                self.data_mode |= {"input", "output"}
        self.summary_mode = data["summary_mode"]

    def wants(self, direction, part):
        return direction in self.data_mode and part in self.data_mode


# ----------------------------------------------------------------------------------------------------
# The collector

def _as_tuple(value):
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _first_tensor(value):
    """The tensor whose grad_fn carries an API's backward hook (msprobe: torch 1.13's non-full hooks)."""
    while not isinstance(value, torch.Tensor):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, torch.Tensor)), None)
            if value is None:
                return None
        elif isinstance(value, (list, tuple)) and value:
            value = value[0]
        else:
            return None
    return value


def _dist_rank():
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return None


class _Service:
    def __init__(self, config):
        self.config = config
        self.pid = os.getpid()
        self.switch = False
        self.first_start = True
        self.stopped_for_good = False
        self.current_iter = 0
        self.current_rank = None
        self.model = None
        self.rank_dir = None
        self.tensor_dir = ""
        self.md5 = config.summary_mode == "md5"
        self.param_hook_handles = {}
        self.claimed = set()
        self.records_apis = config.level in ("L1", "mix")
        self.records_modules = config.level in ("L0", "mix")
        # Counters, construct.json parents, stack.json frames, the entries and their JSON text: the C++ core's.
        self.book = _C.Book(config.level in ("L0", "mix"))
        self._reset()
        # overflow_check (the C++ API's task): only entries with an inf or NaN tensor are written, with their .pt
        # files, until overflow_nums of them (-1: no limit).
        self.overflow_task = config.task == "overflow_check"
        # free_benchmark (the C++ library's engine, _C.free_benchmark_*): no dump, only free_benchmark.csv.
        self.free_benchmark = config.task == "free_benchmark"
        self.free_benchmark_on = False
        # msprobe's scope and list (its ScopeFactory), in C++: core/collect/msprobescope.h.
        self.filter = None
        if config.scope or config.list:
            try:
                self.filter = _C.Scope(config.where, config.level, config.scope, config.list)
            except ValueError as e:
                raise ProbeScopeError(str(e)) from None

    def _check(self, name):
        return self.filter is None or self.filter.check(name)

    def _reset(self):
        self.book.reset()
        self.params_grad_done = set()
        self.backward_modules = set()
        self.files_open = False

    # -- folders and files -----------------------------------------------------------------------------

    def _claim(self, step_folder, rank_folder):
        """This run's rank folder: created fresh, below dump_path through no symlink (_C.claim_rank_folder, the
        C++ API's rule); one an earlier run left is refused, nothing of it replaced. Claimed once per run."""
        rank_dir = os.path.join(self.config.dump_path, step_folder, rank_folder)
        if rank_dir not in self.claimed:
            try:
                _C.claim_rank_folder(self.config.dump_path, step_folder, rank_folder, self.config.task != "statistics")
            except ValueError as e:
                raise ProbeScopeError(str(e)) from None
            self.claimed.add(rank_dir)
        self.rank_dir = rank_dir
        self.tensor_dir = os.path.join(rank_dir, "dump_tensor_data") if self.config.task != "statistics" else ""

    def _open_files(self):
        rank = "" if self.current_rank is None else str(self.current_rank)
        self._claim(f"step{self.current_iter}", f"rank{rank}")
        self.files_open = True
        self.write_json()

    def write_json(self):
        if not self.files_open:
            return
        # Snapshotted now, written whole (temporary file, rename) by the C++ writer after every .pt file queued
        # before them: stop() does not wait for the disk, and a dump.json never names a missing file.
        self.book.write_files(self.rank_dir, self.config.task, self.config.level, self.tensor_dir or None)

    def finish(self):
        """At exit (as msprobe): the files of the current step, and everything queued on disk."""
        self.write_json()
        _C.flush()

    # -- start / stop / step ---------------------------------------------------------------------------

    def start(self, model):
        if self.config.level == "debug" or self.stopped_for_good:
            return
        if self.config.step and self.current_iter > self.config.step.last():
            self.switch = False
            self.stopped_for_good = True
            return
        if self.config.step and self.current_iter not in self.config.step:
            return
        if model is not None:
            self.model = model
        if self.free_benchmark:
            self._start_free_benchmark()
            return
        if self.first_start:
            self.current_rank = _dist_rank()
            if self.config.rank and self.current_rank not in self.config.rank:
                return
            if self.records_modules:
                if self.model is None:
                    _fail("PrecisionDebugger", f'level "{self.config.level}" needs the model: '
                                               "PrecisionDebugger(model=...) or start(model)")
                self._register_module_hooks(self.model)
            self.first_start = False
        self.switch = True
        self._open_files()

    def _start_free_benchmark(self):
        """Task free_benchmark: the C++ engine intercepts this thread's aten ops until stop(), as in the C++ API
        (entries Aten.<op>.<n>.forward, docs/free-benchmark.md "From Python")."""
        if self.first_start:
            self.current_rank = _dist_rank()
            if self.config.rank and self.current_rank not in self.config.rank:
                return
            _C.free_benchmark_open(self.config.config_path, self.config.dump_path, self.config.level,
                                   self.current_rank)
            self.first_start = False
        if self.free_benchmark_on:
            return
        rank = "" if self.current_rank is None else str(self.current_rank)
        _C.free_benchmark_start(os.path.join(self.config.dump_path, f"step{self.current_iter}", f"rank{rank}"),
                                self.current_iter)
        self.free_benchmark_on = True

    def stop(self):
        if self.config.level == "debug" or self.stopped_for_good:
            return
        if self.free_benchmark:
            if self.free_benchmark_on:
                self.free_benchmark_on = False
                try:
                    _C.free_benchmark_stop()
                except ValueError as e:
                    raise ProbeScopeError(str(e)) from None
            return
        if self.config.step and self.current_iter not in self.config.step:
            return
        if self.config.rank and self.current_rank not in self.config.rank:
            return
        self.switch = False
        self.write_json()

    def step(self):
        if self.config.level == "debug" or self.stopped_for_good:
            return
        if self.free_benchmark:
            self.stop()
            _C.free_benchmark_next_step()
        self.write_json()
        self.current_iter += 1
        self._reset()

    # -- entries -------------------------------------------------------------------------------------

    def _describe(self, value, prefix):
        # JSON text at depth 3 (an entry part of dump.json), kept by the Book until the files are written.
        return _C.describe_text(value, prefix, self.tensor_dir, self.md5)

    def _stack_of(self, name):
        # msprobe's stack.json: the Python frames of the call, outermost last, as "File f, line n, in fn, \n code".
        frames = []
        frame = sys._getframe(3)
        while frame is not None:
            code = frame.f_code
            text = linecache.getline(code.co_filename, frame.f_lineno).strip()
            if text:
                frames.append(f"File {code.co_filename}, line {frame.f_lineno}, in {code.co_name}, \n {text}")
            frame = frame.f_back
        self.book.set_stack(name, frames)

    def _begin(self):
        if self.overflow_task:
            _C.begin_entry()

    def _admit(self):
        """Whether the entry begun by _begin() is written: always, except in overflow_check, where it must
        overflow (its .pt files are written or dropped with it) and the limit must not have been reached."""
        if not self.overflow_task:
            return True
        keep = self.book.admit_overflow(_C.entry_overflow(), self.config.overflow_nums)
        _C.end_entry(keep)
        return keep

    def _put(self, name, info):
        self.book.put(name, info)

    def call_api(self, stem, original, args, kwargs):
        """One call of a hooked API, stem "Functional.linear.": its forward entry and backward hook."""
        count = self.book.count_api(stem)
        forward_name = f"{stem}{count}.forward"
        _busy.value = True
        try:
            # msprobe asks its scope twice, before the call (inputs) and after it (output).
            info = {}
            self._begin()
            if self._check(forward_name) and self.config.wants("forward", "input"):
                info["input_args"] = self._describe(args, forward_name + ".input")
                info["input_kwargs"] = self._describe(kwargs, forward_name + ".kwargs")
                info["is_recompute"] = _FALSE
            output = original(*args, **kwargs)
            self.book.update_construct(forward_name)
            keep = True
            if self._check(forward_name):
                if self.config.wants("forward", "output"):
                    info["output"] = self._describe(_as_tuple(output), forward_name + ".output")
                    info["is_recompute"] = _FALSE
                keep = self._admit()
                if keep:
                    self._stack_of(forward_name)
            elif self.overflow_task:
                keep = self._admit()
            if info and keep:
                self._put(forward_name, info)
            tensor = _first_tensor(output)
            if tensor is not None and tensor.grad_fn is not None:
                tensor.grad_fn.register_hook(self._api_backward_hook(f"{stem}{count}.backward"))
            return output
        finally:
            _busy.value = False

    def _api_backward_hook(self, name):
        def hook(grad_inputs, grad_outputs):
            if _busy.value or _service is not self:
                return None
            _busy.value = True
            try:
                self.book.update_construct(name)
                if self._check(name):
                    self._backward_entry(name, grad_outputs, grad_inputs)
            finally:
                _busy.value = False
            return None
        return hook

    def _backward_entry(self, name, grads_of_outputs, grads_of_inputs):
        info = {}
        self._begin()
        if self.config.wants("backward", "input"):
            info["input"] = self._describe(_as_tuple(grads_of_outputs), name + ".input")
        if self.config.wants("backward", "output"):
            info["output"] = self._describe(_as_tuple(grads_of_inputs), name + ".output")
        if not self._admit():
            return False
        if info:
            self._put(name, info)
        return bool(info)

    # -- L0: module hooks, in msprobe 1.2.2's order for torch < 2 ---------------------------------------

    def _register_module_hooks(self, models):
        if isinstance(models, (list, tuple)):
            groups = [(f"{i}.", m) for i, m in enumerate(models)]
        else:
            groups = [("", models)]
        for index, model in groups:
            for name, module in model.named_modules():
                if module is model:
                    continue
                prefix = f"Module.{index}{name}.{module.__class__.__name__}."
                legacy = bool(module._backward_hooks) and module._is_full_backward_hook is False
                if not legacy:
                    module.register_full_backward_hook(self._node_backward(prefix + "backward"))
                module.register_forward_hook(self._module_forward(prefix))
                if not legacy:
                    module.register_full_backward_hook(self._module_backward())
                module.register_forward_pre_hook(self._node_begin(prefix + "forward"))
                module.register_forward_hook(self._node_end())

    def _node_begin(self, key):
        def hook(module, args):
            name = f"{key}.{self.book.count_module(key)}"
            names = module.__dict__.setdefault("_probescope_names", [])
            names.append(name)
            self.book.begin_module(name)
            if self.filter is not None:
                self.filter.begin_module(name)
        return hook

    def _node_end(self):
        def hook(module, args, output):
            self.book.end_module()
            names = module.__dict__.get("_probescope_names")
            if names:
                current = names.pop()
                if self.filter is not None:
                    self.filter.end_module(current)
        return hook

    def _node_backward(self, key):
        def hook(module, grad_input, grad_output):
            name = f"{key}.{self.book.count_module(key)}"
            module.__dict__.setdefault("_probescope_names", []).append(name)
            self.book.begin_module_backward(name)
            if self.filter is not None:
                self.filter.begin_module(name)
        return hook

    def _module_forward(self, prefix):
        def hook(module, args, output):
            if not self.switch or _busy.value or os.getpid() != self.pid:
                return None
            _busy.value = True
            try:
                name = module.__dict__["_probescope_names"][-1]
                self.book.update_construct(name)
                params = {k.split(".")[-1]: v for k, v in module.named_parameters(recurse=False)}
                if self._check(name):
                    info = {}
                    self._begin()
                    if self.config.wants("forward", "input"):
                        info["input_args"] = self._describe(_as_tuple(args), name + ".input")
                        info["input_kwargs"] = "{}"
                    if self.config.wants("forward", "output"):
                        info["output"] = self._describe(_as_tuple(output), name + ".output")
                    if info:
                        info["parameters"] = self._describe(params, name + ".parameters")
                        info["is_recompute"] = _FALSE
                    if self._admit():
                        if info:
                            self._put(name, info)
                        self._stack_of(name)
                if params:
                    stem = name.rsplit(".", 2)[0]
                    grad_name = stem + ".parameters_grad"
                    backward_wanted = not ("forward" in self.config.data_mode
                                           and "backward" not in self.config.data_mode)
                    if backward_wanted:
                        for pname, param in params.items():
                            if not param.requires_grad:
                                continue
                            key = stem + "." + pname
                            old = self.param_hook_handles.get(key)
                            if old is not None:
                                old.remove()
                            self.param_hook_handles[key] = param.register_hook(
                                self._param_grad_hook(stem, grad_name, pname))
                        if grad_name not in self.params_grad_done and not self.overflow_task:
                            placeholder = {k: _NULL_IN_LIST for k, v in params.items() if v.requires_grad}
                            if placeholder:
                                self._put(grad_name, placeholder)
                            self.params_grad_done.add(grad_name)
            finally:
                _busy.value = False
            return None
        return hook

    def _module_backward(self):
        def hook(module, grad_input, grad_output):
            if not self.switch or _busy.value:
                return None
            _busy.value = True
            try:
                name = module.__dict__["_probescope_names"][-1]
                self.book.update_construct(name)
                if self._check(name):
                    if self._backward_entry(name, grad_output, grad_input):
                        self.backward_modules.add(name.rsplit(".", 2)[0])
            finally:
                _busy.value = False
            return None
        return hook

    def _param_grad_hook(self, stem, grad_name, pname):
        def hook(grad):
            if not self.switch or _busy.value:
                return grad
            _busy.value = True
            try:
                if not self._check(stem) and stem not in self.backward_modules:
                    self.book.drop(grad_name)
                    return grad
                self._begin()
                leaf = _C.describe_text(grad, f"{grad_name}.{pname}", self.tensor_dir, self.md5, 3, True)
                if self._admit():
                    self._put(grad_name, {pname: leaf})
            finally:
                _busy.value = False
            return grad
        return hook

    # -- level debug: save() -------------------------------------------------------------------------

    def save(self, variable, name, save_backward):
        if not self.files_open:
            rank = _dist_rank()
            self._claim("", "rank" + ("" if rank is None else str(rank)))
            self.files_open = True
        count = self.book.count_debug(name)
        key = f"{name}.{count}"
        _busy.value = True
        try:
            self.book.put_value(key + ".debug", self._describe_entry(variable, key + ".debug"))
            if save_backward and isinstance(variable, torch.Tensor) and variable.requires_grad:
                grad_key = f"{name}_grad.{count}.debug"
                self.book.put_value(grad_key, "null")

                def hook(grad):
                    self.book.put_value(grad_key, self._describe_entry(grad, grad_key))
                    self._write_debug()
                    return grad
                variable.register_hook(hook)
        finally:
            _busy.value = False
        self._write_debug()

    def _describe_entry(self, value, prefix):
        # A whole entry of debug.json: its value at depth 2.
        return _C.describe_text(value, prefix, self.tensor_dir, self.md5, 2)

    def _write_debug(self):
        self.book.write_files(self.rank_dir, self.config.task, "debug", self.tensor_dir or None, True)


# ----------------------------------------------------------------------------------------------------
# The API wrappers (levels L1 and mix), installed once per process when the first L1/mix debugger is made

_wrapped = False


def _make_wrapper(stem, original):
    def wrapper(*args, **kwargs):
        service = _service
        if service is None or not service.switch or _busy.value or os.getpid() != service.pid:
            # Calls in DataLoader workers forked from the training process are not its calls (msprobe
            # checks the pid too), and their queued files would never be written.
            return original(*args, **kwargs)
        return service.call_api(stem, original, args, kwargs)
    wrapper.__name__ = getattr(original, "__name__", stem)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    return wrapper


def _originals(namespace, names):
    found = []
    for name in sorted(names):
        holder, attr = namespace, name
        if "." in name:
            sub, attr = name.rsplit(".", 1)
            holder = getattr(namespace, sub, None)
            if holder is None:
                continue
        original = getattr(holder, attr, None)
        if original is not None and callable(original):
            found.append((holder, attr, name, original))
    return found


# The functions the wrappers call are taken when probescope is imported, as msprobe 1.2.2 takes them when
# msprobe.pytorch is imported: a later replacement (seed_all's dropout with p = 0) is overwritten by the
# wrapper of an L1/mix debugger made after it and never called, in both tools alike.
_ORIGINALS = (
    [("Tensor",) + o for o in _originals(torch.Tensor, [n for n in _apis.TENSOR if n in dir(torch.Tensor)])]
    + [("Torch",) + o for o in _originals(torch, _apis.TORCH)]
    + [("Functional",) + o for o in _originals(torch.nn.functional,
                                                [n for n in _apis.FUNCTIONAL if n in dir(torch.nn.functional)])]
    + [("VF",) + o for o in _originals(torch._VF, _apis.VF)]
)


def _install_api_wrappers():
    global _wrapped
    if _wrapped:
        return
    for prefix, holder, attr, name, original in _ORIGINALS:
        try:
            setattr(holder, attr, _make_wrapper(f"{prefix}.{name}.", original))
        except (AttributeError, TypeError):
            pass
    _wrapped = True


# ----------------------------------------------------------------------------------------------------
# Full backward hooks hand a module views made by a custom autograd Function (BackwardHookFunction): an
# in-place op on them (ReLU(inplace=True) on a hooked module's input) is refused by autograd. msprobe 1.2.2
# therefore clones what BackwardHook's setup_input_hook and setup_output_hook return; so does ProbeScope, so
# that the same models run, with the same graph (Tensor.clone is no recorded API).

_backward_hook_patched = False


def _clone_tensors(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if type(value) is tuple:
        return tuple(_clone_tensors(v) for v in value)
    if type(value) is list:
        return [_clone_tensors(v) for v in value]
    if type(value) is dict:
        return {k: _clone_tensors(v) for k, v in value.items()}
    return value


def _patch_backward_hook():
    global _backward_hook_patched
    if _backward_hook_patched:
        return
    from torch.utils.hooks import BackwardHook
    for attr in ("setup_input_hook", "setup_output_hook"):
        original = getattr(BackwardHook, attr)

        def cloned(*args, _original=original, **kwargs):
            return _clone_tensors(_original(*args, **kwargs))
        cloned.__name__ = attr
        cloned.__wrapped__ = original
        setattr(BackwardHook, attr, cloned)
    _backward_hook_patched = True


# ----------------------------------------------------------------------------------------------------
# The public API: msprobe.pytorch's names and arguments

class PrecisionDebugger:
    """msprobe 1.2's PrecisionDebugger: one per process (a second construction returns the first)."""
    _instance = None

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance.config = None
        return cls._instance

    def __init__(self, config_path=None, task=None, dump_path=None, level=None, model=None, step=None):
        global _service
        if getattr(self, "initialized", False):
            return
        if step is not None and not isinstance(step, list):
            step = [step] if isinstance(step, int) else step
        self.config = _Config(config_path, task, dump_path, level, step)
        if self.config.async_queue_bytes is not None:
            _C.set_write_queue_bytes(self.config.async_queue_bytes)
        self.task = self.config.task
        self.model = model
        self.service = _Service(self.config)
        self.service.model = model
        _service = self.service
        atexit.register(self.service.finish)  # msprobe writes its files at exit too (a run without stop())
        _patch_backward_hook()
        if self.config.seed is not None:
            seed_all(self.config.seed, self.config.is_deterministic)
        if self.config.level in ("L1", "mix") and self.config.task != "free_benchmark":
            _install_api_wrappers()
        self.initialized = True

    @property
    def instance(self):
        return self._instance

    @classmethod
    def _get(cls):
        if cls._instance is None or not getattr(cls._instance, "initialized", False):
            raise RuntimeError("PrecisionDebugger has not been created: call PrecisionDebugger(...) first")
        return cls._instance

    @classmethod
    def start(cls, model=None):
        instance = cls._get()
        instance.service.start(model if model is not None else instance.model)

    @classmethod
    def stop(cls):
        cls._get().service.stop()

    @classmethod
    def step(cls):
        cls._get().service.step()

    @classmethod
    def forward_backward_dump_end(cls):
        # msprobe 1.2.2: the same as stop().
        cls._get().service.stop()

    @classmethod
    def monitor(cls, model):
        cls._get()  # grad_probe's monitor: not collected by ProbeScope (task grad_probe is refused)

    @classmethod
    def save(cls, variable, name, save_backward=True):
        instance = cls._get()
        if instance.config.level != "debug":
            return
        if not isinstance(name, str) or not isinstance(save_backward, bool):
            return
        instance.service.save(variable, name, save_backward)


def module_dump(module, dump_name):
    if not isinstance(module, torch.nn.Module):
        raise ProbeScopeError("module_dump: module must be a torch.nn.Module")
    if not isinstance(dump_name, str):
        raise ProbeScopeError("module_dump: dump_name must be a str")
    raise ProbeScopeError("module_dump is not supported by ProbeScope's Python module yet; use level L0 or mix")


def module_dump_end():
    PrecisionDebugger._get()


def _dropout_p0(feature, dims):
    from torch import _VF
    from torch.overrides import has_torch_function_unary, handle_torch_function

    def dropout(input, p=0.5, training=True, inplace=False):
        if has_torch_function_unary(input):
            return handle_torch_function(dropout, (input,), input, p=0.0, training=training, inplace=inplace)
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        if feature:
            return _VF.feature_dropout_(input, 0.0, training) if inplace else _VF.feature_dropout(input, 0.0, training)
        return _VF.dropout_(input, 0.0, training) if inplace else _VF.dropout(input, 0.0, training)
    dropout.__name__ = "dropout" if not feature else f"dropout{dims}d"
    return dropout


def seed_all(seed=1234, mode=False, rm_dropout=True):
    """msprobe's seed_all: Python, numpy and torch seeds, deterministic algorithms, and (rm_dropout, with
    msprobe's version test) the dropout functions of torch.nn.functional replaced by ones with p = 0."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - 1:
        raise ProbeScopeError("seed_all: seed must be an integer in [0, 2**32 - 1]")
    if not isinstance(mode, bool) or not isinstance(rm_dropout, bool):
        raise ProbeScopeError("seed_all: mode and rm_dropout must be bool")
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)
    os.environ["HCCL_DETERMINISTIC"] = str(mode)
    torch.use_deterministic_algorithms(mode)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.enabled = False
    torch.backends.cudnn.benchmark = False
    # msprobe 1.2.2 tests `torch.__version__ > "1.8"` as strings, so with torch 1.10-1.19 ("1.13.0" < "1.8") it
    # leaves dropout alone; the same test here keeps both tools' runs identical.
    if rm_dropout and torch.__version__ > "1.8":
        F = torch.nn.functional
        F.dropout = _dropout_p0(False, 1)
        F.dropout2d = _dropout_p0(True, 2)
        F.dropout3d = _dropout_p0(True, 3)
