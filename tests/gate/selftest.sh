#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The gate check must be able to fail: on a planted tree it names every raw open, folder walk and regex outside the
# gate, ignores comments, the gate's own files and allowlisted lines, and refuses an allowlist entry without a
# reason or one that matches nothing. Usage: selftest.sh SCAN_SH WORK
set -u
scan=$1 work=$2
rm -rf "$work" && mkdir -p "$work/tree/core/util" "$work/tree/core/x" "$work/tree/ui/y" "$work/tree/app/z" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
t=$work/tree
cat >"$t/core/util/fileio.cpp" <<'SRC'
int f(const char* p) { return ::open(p, 0); } // the gate itself
SRC
cat >"$t/core/x/reader.cpp" <<'SRC'
#include <fstream>
// std::ifstream in a comment is not code
void a(const std::string& p) { std::ifstream in(p); }
void b(const char* p) { FILE* f = std::fopen(p, "r"); int fd = ::open(p, O_RDONLY); }
auto c = MappedFile::open(path); // the gate's reader: fine
SRC
cat >"$t/ui/y/search.cpp" <<'SRC'
void s(const QString& text) { const QRegularExpression re(text); std::regex r(text.toStdString()); }
SRC
cat >"$t/app/z/walk.cpp" <<'SRC'
void w(const fs::path& d) { for (auto& e : fs::recursive_directory_iterator(d)) {} DIR* x = opendir("."); }
SRC
: >"$work/empty.txt"
out=$(bash "$scan" "$t" "$work/empty.txt" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "planted offenders: exit $rc, expected 1"
for expect in "core/x/reader.cpp:3: open" "core/x/reader.cpp:4: open" "ui/y/search.cpp:1: regex" "app/z/walk.cpp:1: walk"; do
    grep -qF "$expect" <<<"$out" || fail "not reported: $expect"$'\n'"$out"
done
grep -q 'core/util/fileio.cpp' <<<"$out" && fail "the gate's own file was reported"
grep -q 'reader.cpp:2:' <<<"$out" && fail "a comment was reported"
grep -q 'reader.cpp:5:' <<<"$out" && fail "MappedFile::open (the gate) was reported"

# Allowlisted: passes; an entry without a reason, or a stale one, fails.
cat >"$work/allow.txt" <<'SRC'
# comment
core/x/reader.cpp open planted for the self-test
ui/y/search.cpp regex planted for the self-test
app/z/walk.cpp walk planted for the self-test
SRC
bash "$scan" "$t" "$work/allow.txt" >/dev/null 2>&1 || fail "an allowlisted tree did not pass"
cp "$work/allow.txt" "$work/noreason.txt" && echo "core/x/reader.cpp walk" >>"$work/noreason.txt"
bash "$scan" "$t" "$work/noreason.txt" >/dev/null 2>&1 && fail "an entry without a reason passed"
cp "$work/allow.txt" "$work/stale.txt" && echo "core/x/gone.cpp open it was removed long ago" >>"$work/stale.txt"
out=$(bash "$scan" "$t" "$work/stale.txt" 2>&1) && fail "a stale entry passed"
grep -q 'gone.cpp' <<<"$out" || fail "the stale entry is not named: $out"
echo "gate self-test: the check fails where it must"
