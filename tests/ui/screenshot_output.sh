#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `probescope --screenshot FILE` writes FILE through the one output writer (issue 33): a name already taken (a file,
# a symlink, even dangling) is exit 1 with the file kept byte for byte and nothing written through the link; a full
# disk is exit 1 with nothing under FILE and no temporary file left; a free name gets a complete PNG.
# Usage: screenshot_output.sh PROBESCOPE NPU BENCH WORK
set -u
gui=$1 npu=$2 bench=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
export QT_QPA_PLATFORM=offscreen
fail() { echo "FAIL: $*" >&2; exit 1; }
shot() { timeout 120 "$gui" --screenshot "$1" "$npu" "$bench" >"$work/out.txt" 2>"$work/err.txt"; }

# An existing file: refused at once, kept.
printf 'precious' >"$work/taken.png"
shot "$work/taken.png"; rc=$?
[ $rc -eq 1 ] || fail "existing file: exit $rc, expected 1: $(cat "$work/err.txt")"
grep -q 'taken.png already exists' "$work/err.txt" || fail "existing file: no clear message: $(cat "$work/err.txt")"
[ "$(cat "$work/taken.png")" = precious ] || fail "the existing file was replaced"

# A symlink at FILE (to a file, and dangling): never followed, never replaced.
printf 'target' >"$work/target.png"
ln -s "$work/target.png" "$work/link.png"
ln -s "$work/nowhere.png" "$work/dangling.png"
for name in link dangling; do
    shot "$work/$name.png"; rc=$?
    [ $rc -eq 1 ] || fail "$name: exit $rc, expected 1: $(cat "$work/err.txt")"
    [ -L "$work/$name.png" ] || fail "$name: the symlink was replaced"
done
[ "$(cat "$work/target.png")" = target ] || fail "written through the symlink"
[ ! -e "$work/nowhere.png" ] || fail "written through the dangling symlink"

# A full disk (the output writer's test seam): nothing under FILE, no temporary file, exit 1.
PROBESCOPE_TEST_ENOSPC=write:all shot "$work/full.png"; rc=$?
[ $rc -eq 1 ] || fail "full disk: exit $rc, expected 1: $(cat "$work/err.txt")"
grep -q 'full.png' "$work/err.txt" || fail "full disk: the message does not name FILE: $(cat "$work/err.txt")"
grep -q 'No space left' "$work/err.txt" || fail "full disk: the reason is not given: $(cat "$work/err.txt")"
[ ! -e "$work/full.png" ] || fail "full disk: a partial PNG was left under FILE"

# A free name: a complete PNG.
shot "$work/free.png"; rc=$?
[ $rc -eq 0 ] || fail "free name: exit $rc: $(cat "$work/err.txt")"
[ "$(head -c 8 "$work/free.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "free name: not a PNG"

# No temporary file left beside the outputs.
left=$(find "$work" -name '*.tmp*' -o -name '.*probescope*' | head -n 3)
[ -z "$left" ] || fail "temporary files left: $left"
echo "screenshot output: all cases pass"
