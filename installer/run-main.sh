#!/usr/bin/env bash
# The main job: install what is missing, build, and inspect a dump pair with probescope-cli.
# With no arguments it inspects the bundled demo pair (resources/demo/npu and resources/demo/bench).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

probescope_build release -DPROBESCOPE_BUILD_TESTS=OFF
cli="$PROBESCOPE_ROOT/build/release/app/cli/probescope-cli"

if [[ $# -eq 0 ]]; then
    set -- "$PROBESCOPE_ROOT/resources/demo/npu" "$PROBESCOPE_ROOT/resources/demo/bench"
fi
status=0
for dir in "$@"; do
    echo "== probescope-cli info $dir"
    "$cli" info "$dir" || status=$?
    echo
done
exit "$status"
