#!/usr/bin/env bash
# The whole test suite: install what is missing, then build and run every test in the dev preset,
# and everything but the Qt UI again under AddressSanitizer + UndefinedBehaviorSanitizer (dev-asan).
# Golden tests read the real msprobe fixtures from ../shared/fixtures (set PROBESCOPE_FIXTURES to move them).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

jobs="$(nproc 2>/dev/null || echo 2)"
for preset in dev dev-asan; do
    echo "== build and test: $preset"
    probescope_build "$preset"
    ctest --preset "$preset" --test-dir "$PROBESCOPE_ROOT/build/$preset" --parallel "$jobs"
done
