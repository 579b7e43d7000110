#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 25, discovery and the whole job: one discovery that refuses duplicates and says what it skipped, one-sided
# steps said, a job summary never replaced, odd bytes in paths, --resume after a changed dump. One case per ctest
# (cli.discovery.CASE). usage: discovery.sh CLI DEMO WORKDIR CASE
set -u
cli=$1 demo=$2 work=$3 case=$4
source "$(dirname "${BASH_SOURCE[0]}")/caselib.sh"
# roots DEST: a copy of the demo's npu and bench roots (copied, not linked: a tensor folder must be inside its dump).
roots() {
    for side in npu bench; do
        for step in step0 step1; do
            mkdir -p "$1/$side/$step/rank"
            cp -r "$demo/$side/$step/rank/"{dump.json,construct.json,stack.json,dump_tensor_data} "$1/$side/$step/rank/"
        done
    done
}
# The files of an output folder with the 14-digit timestamps taken out of names and contents, markers left out.
snapshot() {
    (cd "$1" && find . -type f ! -path '*/.probescope/*' ! -name 'job_summary*' | sort | while read -r f; do
        echo "== $(echo "$f" | sed -E 's/_[0-9]{14}/_TS/')"
        sed -E 's/_[0-9]{14}/_TS/g' "$f"
    done)
}
# For cases that create thousands of entries: work on tmpfs when there is one (creating and removing 10,000
# folders there takes a fraction of a second, half a minute on an overlay disk).
on_tmpfs() {
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        scratch=/dev/shm/probescope-discovery-$case-$$
        rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 2
        trap 'rm -rf "$scratch"' EXIT
    fi
}
valid_json() { python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$1" || fail "$1 is not UTF-8 JSON"; }

dup='error \[dump\.duplicate-place\]: two dumps at the same place \(step 0, rank folder "rank"\): [^ ]*demo/bench/step0/rank/dump\.json and [^ ]*demo/npu/step0/rank/dump\.json'

case $case in
demo_root_as_npu)
    # The folder holding npu/ and bench/ given as the NPU side: was a segfault in planPairs (exit 139).
    run 1 "$cli" compare --npu "$demo" --bench "$demo/bench" -o out -c
    has err.txt "$dup"
    run 1 "$cli" compare --npu "$demo/bench" --bench "$demo" -o out -c
    has err.txt "$dup"
    [ ! -e out ] || [ -z "$(ls -A out)" ] || fail "a refused compare wrote outputs"
    ;;
info_demo_root)
    # Was "rank dumps: 4" for two (step, rank) places, exit 0.
    run 1 "$cli" info "$demo"
    has err.txt "$dup"
    lacks out.txt "rank dumps"
    run 1 "$cli" tree "$demo"
    has err.txt "$dup"
    ;;
empty_ranks)
    on_tmpfs
    mkdir -p empty/step0
    (cd empty/step0 && seq -f 'rank%.0f' 0 9999 | xargs mkdir)
    start=$(date +%s%N)
    run 1 "$cli" info empty
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    has err.txt "error \[layout\.empty\]: no dump found under empty: .*skipped 10000 folders without a dump .*: step0/rank0, step0/rank1, step0/rank10, .*… and 9990 more"
    [ "$(wc -c <err.txt)" -lt 2000 ] || fail "the error is not bounded: $(wc -c <err.txt) bytes"
    [ "$ms" -lt 5000 ] || fail "info of 10,000 empty rank folders took $ms ms"
    run 1 "$cli" compare --npu empty --bench "$demo/bench" -o out -c
    has err.txt "no dump found under empty"
    # One real rank among them: it is read, and the skipped ones are one warning line.
    mkdir -p empty/step0/rank5000 && cp -r "$demo/npu/step0/rank/"{dump.json,construct.json,dump_tensor_data} empty/step0/rank5000/
    run 0 "$cli" info empty
    has out.txt "rank dumps: 1"
    has out.txt "warning \[layout\.no-dump-file\]: skipped 9999 folders without a dump"
    [ "$(grep -c 'layout.no-dump-file' out.txt)" = 1 ] || fail "more than one line for the skipped folders"
    ;;
one_sided_step)
    # The NPU has step0 and step1, the bench only step0: step1 is said, listed as not compared, exit 1.
    roots job
    rm -r job/bench/step1
    run 1 "$cli" compare --npu job/npu --bench job/bench -o out -c
    has err.txt "warning \[session\.step-unpaired\]: the bench dump has no step 1"
    has out.txt "job/npu/step1/rank/dump\.json  vs  \(no bench dump\)"
    has out.txt "not compared: only the NPU dump has this step"
    has out.txt "job: 1 pair\(s\), [0-9]+ failing, 0 failed to compare, 1 not compared \(on one side only\)"
    has out/job_summary.csv "^1,rank,,npu-only,"
    python3 - out/job_summary.json <<'EOF' || fail "summary: the one-sided step is not listed"
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s["pairs"]) == 2 and len(s["pairs_not_compared"]) == 1, s
assert s["pairs_not_compared"][0]["only_in"] == "npu" and s["pairs_not_compared"][0]["step"] == 1
EOF
    [ -e out/step0 ] && [ ! -e out/step1 ] || fail "expected outputs for step0 only"
    ;;
summary_never_replaced)
    roots job
    run 0 "$cli" compare --npu job/npu --bench job/bench -o out -c
    has out.txt "written: out/job_summary\.csv, out/job_summary\.json"
    cp out/job_summary.json first.json
    run 0 "$cli" compare --npu job/npu --bench job/bench -o out -c
    has out.txt "written: out/job_summary_1\.csv, out/job_summary_1\.json"
    cmp -s first.json out/job_summary.json || fail "the first summary was replaced"
    # A symlink at the next name is a taken name: never followed.
    ln -s "$w/target.csv" out/job_summary_2.csv
    run 0 "$cli" compare --npu job/npu --bench job/bench -o out -c --resume
    has out.txt "written: out/job_summary_3\.csv, out/job_summary_3\.json"
    [ ! -e target.csv ] || fail "the summary was written through a symlink"
    ;;
summary_unwritable)
    # Every summary name taken (1,000 earlier runs): the per-pair results are still printed, the message names the
    # final file, never a temporary one, and the exit status is 1.
    on_tmpfs
    roots job
    printf '{"task": "tensor", "data": {"x": [}' >job/npu/step1/rank/dump.json
    mkdir out && touch out/job_summary.csv && (cd out && seq -f 'job_summary_%.0f.csv' 1 999 | xargs touch)
    run 1 "$cli" compare --npu job/npu --bench job/bench -o out -c
    has out.txt "job/npu/step0/rank/dump\.json  vs  .*"
    has out.txt "failed to compare: [^ ]*job/npu/step1/rank/dump\.json:1:[0-9]+: error \[json\.syntax\]"
    has err.txt "out/job_summary\.csv: error \[job\.output\]: no free name for the job summary"
    has out.txt "the job summary could not be written"
    lacks err.txt "\.tmp"
    [ ! -e out/job_summary.json ] || fail "a json without its csv"
    ;;
non_utf8_path)
    # A byte that is not UTF-8 in the dump path: was an uncaught nlohmann::type_error (abort) from the summary.
    odd=$(printf 'job\377\376')
    roots "$odd"
    run 0 "$cli" compare --npu "$odd/npu" --bench "$odd/bench" -o out -c
    has out.txt "job: 2 pair\(s\)"
    valid_json out/job_summary.json
    iconv -f UTF-8 -t UTF-8 out/job_summary.csv >/dev/null || fail "job_summary.csv is not UTF-8"
    python3 - out/job_summary.json <<'EOF' || fail "the odd bytes are not written as \\xNN"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["pairs"][0]["npu_dump"].endswith("job\\xff\\xfe/npu/step0/rank/dump.json"), s["pairs"][0]["npu_dump"]
EOF
    run 0 "$cli" compare --npu "$odd/npu" --bench "$odd/bench" -o out -c --resume
    [ "$(grep -c 'complete in an earlier run' out.txt)" = 2 ] || { cat out.txt; fail "--resume did not keep both pairs"; }
    cmp -s out/job_summary.json out/job_summary_1.json || fail "the resumed summary differs"
    run 0 "$cli" info "$odd/npu"
    ;;
resume_changed_dump)
    # --resume after one rank's dump changed (same size, mtime set back) equals a fresh run of the changed job.
    roots job
    run 0 "$cli" compare --npu job/npu --bench job/bench -o resumed -c
    f=job/npu/step1/rank/dump.json
    touch -r "$f" stamp
    sleep 0.05
    python3 - "$f" <<'EOF' || fail "cannot change the dump"
import re, sys
p = sys.argv[1]
t = open(p, encoding="utf-8").read()
# the first Max statistic's first digit, changed in place: same size, another value
m = re.search(r'"Max": -?(\d)', t)
d = str((int(m.group(1)) + 1) % 10)
open(p, "w", encoding="utf-8").write(t[:m.start(1)] + d + t[m.end(1):])
EOF
    touch -r stamp "$f"
    run 0 "$cli" compare --npu job/npu --bench job/bench -o resumed -c --resume
    [ "$(grep -c 'complete in an earlier run' out.txt)" = 1 ] || { cat out.txt; fail "--resume must redo exactly the changed pair"; }
    run 0 "$cli" compare --npu job/npu --bench job/bench -o fresh -c
    [ "$(snapshot resumed)" = "$(snapshot fresh)" ] || { diff <(snapshot resumed) <(snapshot fresh) | head; fail "the resumed outputs differ from a fresh run"; }
    [ "$(sed -E 's/_[0-9]{14}/_TS/g; s/resumed/OUT/g' resumed/job_summary_1.json)" = "$(sed -E 's/_[0-9]{14}/_TS/g; s/fresh/OUT/g' fresh/job_summary.json)" ] \
        || fail "the resumed summary differs from a fresh run's"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok [$case]"
