#!/usr/bin/env bash
# Shared by run-main.sh and run-tests.sh: install dependencies, then configure and build a preset.
set -euo pipefail

PROBESCOPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$PROBESCOPE_ROOT" # presets are read from the current folder

probescope_build() {
    local preset="$1"
    shift
    "$PROBESCOPE_ROOT/installer/install-deps.sh"
    local jobs
    jobs="$(nproc 2>/dev/null || echo 2)"
    cmake --preset "$preset" -S "$PROBESCOPE_ROOT" "$@" >/dev/null
    cmake --build "$PROBESCOPE_ROOT/build/$preset" --parallel "$jobs"
}
