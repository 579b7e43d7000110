# SPDX-License-Identifier: Apache-2.0
"""ProbeScope's collector for Python training scripts: msprobe 1.2's `msprobe.pytorch` interface.

    from probescope import PrecisionDebugger, seed_all      # was: from msprobe.pytorch import ...

The dumps are msprobe's (dump.json, construct.json, stack.json, dump_tensor_data/*.pt); see docs/collect.md.
"""
from ._debugger import PrecisionDebugger, ProbeScopeError, module_dump, module_dump_end, seed_all
from ._compare import compare, compare_distributed
from ._configcheck import ConfigChecker

__all__ = ["ConfigChecker", "PrecisionDebugger", "ProbeScopeError", "compare", "compare_distributed", "module_dump",
           "module_dump_end", "seed_all"]
