#!/usr/bin/env bash
# The main job: install what is missing, build, and open a dump pair in the ProbeScope window.
# With no arguments it opens the bundled demo pair (resources/demo/npu and resources/demo/bench) with the
# first failing node selected. Without a display (no DISPLAY / WAYLAND_DISPLAY) it falls back to the
# command line: probescope-cli compares the pair and prints the first failing node.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

probescope_build release -DPROBESCOPE_BUILD_TESTS=OFF
gui="$PROBESCOPE_ROOT/build/release/app/gui/probescope"
cli="$PROBESCOPE_ROOT/build/release/app/cli/probescope-cli"

if [[ $# -eq 0 ]]; then
    set -- "$PROBESCOPE_ROOT/resources/demo/npu" "$PROBESCOPE_ROOT/resources/demo/bench"
fi
if [[ $# -ne 2 ]]; then
    echo "usage: $0 [NPU_DIR BENCH_DIR]" >&2
    exit 2
fi

if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" || "${QT_QPA_PLATFORM:-}" == offscreen ]]; then
    exec "$gui" "$@"
fi

echo "No display found: running the command-line compare instead (set DISPLAY to open the window)."
out="$PROBESCOPE_ROOT/build/release/main-output"
mkdir -p "$out"
echo "== probescope-cli info $1"
"$cli" info "$1"
echo
echo "== probescope-cli compare --npu $1 --bench $2 -o $out"
exec "$cli" compare --npu "$1" --bench "$2" -o "$out"
