#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# gate.layers_catches: layers.sh fails on a planted cycle, on an include the table does not list, and passes on the
# table it printed itself.
set -u
layers=${1:?usage: layersselftest.sh LAYERS_SH WORKDIR}
work=${2:?usage: layersselftest.sh LAYERS_SH WORKDIR}
rm -rf "$work"
mkdir -p "$work/core/low" "$work/core/high" "$work/ui/x" "$work/app/y" "$work/docs"
printf '#pragma once\n' >"$work/core/low/low.h"
printf '#include "core/low/low.h"\n' >"$work/core/high/high.h"
printf '#include "core/high/high.h"\n' >"$work/ui/x/x.cpp"
printf 'int main() {}\n' >"$work/app/y/main.cpp"
fail=0
table=$(bash "$layers" "$work" --print) || { echo "--print failed on an acyclic tree" >&2; fail=1; }
printf '# doc\n<!-- layers:begin -->\n```\n%s\n```\n<!-- layers:end -->\n' "$table" >"$work/docs/architecture.md"
bash "$layers" "$work" >/dev/null || { echo "the table --print gave does not pass" >&2; fail=1; }
# A new dependency (low uses ui/x: upward) changes the table: the check fails.
printf '#include "ui/x/x.h"\n' >"$work/core/low/low.cpp"
printf '#pragma once\n' >"$work/ui/x/x.h"
if bash "$layers" "$work" >/dev/null 2>&1; then echo "an upward include passed the check" >&2; fail=1; fi
# A cycle: high uses low and low uses high.
printf '#include "core/high/high.h"\n' >"$work/core/low/low.cpp"
out=$(bash "$layers" "$work" --print 2>&1)
if [[ $? -eq 0 || $out != *cycle* ]]; then echo "a cycle was not reported: $out" >&2; fail=1; fi
[[ $fail -eq 0 ]] && echo "layers.sh catches a cycle and an undocumented dependency"
exit $fail
