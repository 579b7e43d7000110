# SPDX-License-Identifier: Apache-2.0
# Sourced by the case scripts of tests/cli (reliability.sh, discovery.sh, diffanalyze.sh): each sets `case` and
# `work`, then gets a fresh folder $w (the current folder) and the checks below.
w=$work/$case
rm -rf "$w" && mkdir -p "$w"
cd "$w" || exit 2

fail() { echo "FAIL [$case]: $*" >&2; exit 1; }
# run EXPECTED_RC CMD...: a 60 s limit (a hang is exit 124), output in out.txt / err.txt; a crash (a signal, exit
# 128 and above) is never an expected outcome.
run() {
    local want=$1; shift
    timeout 60 "$@" >out.txt 2>err.txt
    local rc=$?
    [ "$rc" = 124 ] && fail "hangs: $*"
    [ "$rc" -ge 128 ] && { cat out.txt err.txt >&2; fail "crashed (exit $rc): $*"; }
    [ "$rc" = "$want" ] || { cat out.txt err.txt >&2; fail "exit $rc, expected $want: $*"; }
}
has() { grep -qE -- "$2" "$1" || { cat "$1" >&2; fail "$1 lacks /$2/"; }; }
lacks() { ! grep -qE -- "$2" "$1" || { cat "$1" >&2; fail "$1 has /$2/"; }; }
