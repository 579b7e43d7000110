# SPDX-License-Identifier: Apache-2.0
"""`from probescope.pytorch import PrecisionDebugger, TrainerMon, seed_all`: msprobe.pytorch's import path."""
from .._debugger import PrecisionDebugger, ProbeScopeError, module_dump, module_dump_end, seed_all
from .._compare import compare, compare_distributed
from .._monitor import TrainerMon

__all__ = ["PrecisionDebugger", "ProbeScopeError", "compare", "compare_distributed", "module_dump", "module_dump_end",
           "seed_all", "TrainerMon"]
