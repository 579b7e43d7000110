# SPDX-License-Identifier: Apache-2.0
"""`from probescope.pytorch import PrecisionDebugger, seed_all`: msprobe.pytorch's import path."""
from .._debugger import PrecisionDebugger, ProbeScopeError, module_dump, module_dump_end, seed_all

__all__ = ["PrecisionDebugger", "ProbeScopeError", "module_dump", "module_dump_end", "seed_all"]
