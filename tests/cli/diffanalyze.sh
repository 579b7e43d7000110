#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 25: `compare -da` through the load step, the one output writer and its own option table (docs/msprobe26-da.md).
# One case per ctest (cli.da.CASE). usage: diffanalyze.sh CLI FIXTURES WORKDIR CASE
set -u
cli=$1 fixtures=$2 work=$3 case=$4
S=$fixtures/modelA_statistics_mix
source "$(dirname "${BASH_SOURCE[0]}")/caselib.sh"
# A copy of the statistics pair's step0 (rank folder "rank" on each side).
pair() { mkdir -p npu bench && cp -r "$S/npu/step0" npu/ && cp -r "$S/bench/step0" bench/; }
da() { run "$1" "$cli" compare --profile msprobe-26 -da --npu npu/step0 --bench bench/step0 -o OUT "${@:2}"; }
files() { ls OUT 2>/dev/null | wc -l; }

case $case in
cut)
    pair
    head -c 20000 "$S/bench/step0/rank/dump.json" >bench/step0/rank/dump.json
    da 1
    has err.txt "bench/step0/rank/dump.json:[0-9]+:[0-9]+: error \[dump\.truncated\]: the file was cut short after 20000 bytes"
    has out.txt "not analysed: rank dumps have errors"
    lacks out.txt "diff_analyze|Saving json"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
mistyped)
    pair
    sed -i '0,/"Max": 3.029174327850342/s//"Max": "abc"/' npu/step0/rank/dump.json
    da 1
    has err.txt "npu/step0/rank/dump.json:[0-9]+:[0-9]+: error \[dump\.leaf-type\]"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
entry_x)
    pair
    sed -i '0,/"data": {/s//"data": {"Functional.relu.9.forward": "x",/' bench/step0/rank/dump.json
    da 1
    has err.txt "bench/step0/rank/dump.json:[0-9]+:[0-9]+: error \[dump\.entry-type\]"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
utf8)
    pair
    sed -i '0,/"torch.float32"/s//"torch.\xff\xfe"/' bench/step0/rank/dump.json
    da 1
    has err.txt "bench/step0/rank/dump.json:[0-9]+:[0-9]+: error \[json\.utf8\]"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
empty_dump)
    pair
    printf '{"task": "statistics", "level": "mix", "data": {}}' >bench/step0/rank/dump.json
    da 1
    has err.txt "bench/step0/rank/dump.json: error \[compare\.empty-dump\]: the bench dump has no entries"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
syntax)
    pair
    sed -i '0,/"level": "mix",/s//"level" "mix",/' npu/step0/rank/dump.json
    da 1
    has err.txt "npu/step0/rank/dump.json:[0-9]+:[0-9]+: error \[json\.syntax\]"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
salvage)
    pair
    size=$(stat -c %s "$S/bench/step0/rank/dump.json")
    head -c $((size * 3 / 4)) "$S/bench/step0/rank/dump.json" >bench/step0/rank/dump.json
    da 1 --salvage
    has out.txt "SALVAGED, the result is partial: [^ ]*bench/step0/rank/dump.json: cut after [0-9]+ bytes"
    has err.txt "error \[dump\.truncated\]"
    has out.txt "Saving json file to disk: .*compare_result_rank_[0-9]+\.json"
    ls OUT/compare_result_rank_*.json >/dev/null 2>&1 || fail "--salvage wrote no rank table"
    ;;
empty_ranks)
    mkdir -p npu/step0 bench/step0
    (cd npu/step0 && seq -f 'rank%.0f' 0 9999 | xargs mkdir)
    (cd bench/step0 && seq -f 'rank%.0f' 0 9999 | xargs mkdir)
    start=$(date +%s)
    da 1
    [ $(($(date +%s) - start)) -le 30 ] || fail "10,000 empty rank folders took more than 30 s"
    has err.txt "npu/step0/rank0: error \[compare\.da-no-dump\]: rank folder without dump.json"
    has err.txt "20000 in all"
    [ "$(wc -l <err.txt)" -le 30 ] || fail "the report is not readable: $(wc -l <err.txt) lines"
    [ "$(files)" = 0 ] || fail "a refused -da wrote files"
    ;;
stale_table)
    pair
    mkdir OUT
    t=$(ls "$fixtures"/msprobe26_da/modelA_md5_mix/stripped/compare_result_rank.json)
    head -c 3000 "$t" >OUT/compare_result_rank7_19990101000000.json
    da 1
    has err.txt "OUT/compare_result_rank7_19990101000000.json:[0-9]+:[0-9]+: error \[json\.truncated\]"
    [ "$(files)" = 1 ] || fail "-da wrote files although a rank table in OUT is damaged"
    ;;
options)
    pair
    for opt in "--resume" "--step 0" "--rank 0" "--pair-threads 2" "-s" "-f" "-c" "--xlsx" "-dm map.yaml" "-cm" "-lm" "--verify"; do
        # shellcheck disable=SC2086
        da 2 $opt
        has err.txt "${opt%% *} does not apply to -da \(msprobe 26's first-divergence analysis\)"
        [ "$(files)" = 0 ] || fail "$opt: files written"
    done
    da 2 --resume
    has err.txt "--resume does not apply to -da \(msprobe 26's first-divergence analysis\): -da is not a whole-job compare"
    printf '{"npu_path": "npu/step0", "bench_path": "bench/step0", "stack_path": "npu/step0/rank/stack.json"}' >c.json
    run 2 "$cli" compare --profile msprobe-26 -da -i c.json -o OUT
    has err.txt "stack_path does not apply to -da"
    da 0 --salvage # -da's own options still work
    # -j N: rank pairs compared at once (issue 37); 0 is no number of threads; the output never depends on it.
    da 2 -j 0
    has err.txt "-j needs a number of threads"
    mkdir -p four/npu four/bench
    for r in 0 1 2 3; do cp -r npu/step0/rank four/npu/rank$r && cp -r bench/step0/rank four/bench/rank$r; done
    for j in 1 2; do
        run 0 "$cli" compare --profile msprobe-26 -da --npu four/npu --bench four/bench -o OUT$j -j $j
        # The tables' names carry the second of the run, the analysis its nanosecond.
        same() { sed -e "s#OUT$j/##" -e 's/diff_analyze_[0-9]*/diff_analyze_NS/' -e 's/_[0-9]\{14\}\.json/_TS.json/'; }
        same <out.txt >said$j.txt
        (cd OUT$j && for f in *; do echo "== $f"; cat "$f"; done) | same >files$j.txt
    done
    cmp -s said1.txt said2.txt || fail "-j 1 and -j 2 print different text"
    cmp -s files1.txt files2.txt || fail "-j 1 and -j 2 write different files"
    grep -q 'compare_result_rank3_' files2.txt || fail "-j 2 wrote no table of rank3"
    ;;
nan_tokens)
    # The same statistics as the tokens json.dump writes and as text: identical -da output.
    for kind in tokens text; do
        mkdir -p $kind && (cd $kind && pair)
        if [ $kind = tokens ]; then nan=NaN inf=Infinity ninf=-Infinity; else nan='"nan"' inf='"inf"' ninf='"-inf"'; fi
        sed -i -e "0,/\"Max\": 3.029174327850342/s//\"Max\": $nan/" -e "0,/\"Min\": -2.926689624786377/s//\"Min\": $ninf/" \
            -e "0,/\"Norm\": 27.407075881958008/s//\"Norm\": $inf/" $kind/npu/step0/rank/dump.json
        (cd $kind && da 0) || exit 1
    done
    grep -q 'Infinity' tokens/OUT/compare_result_rank_*.json || fail "the non-finite statistics are not in the table"
    cmp tokens/OUT/compare_result_rank_*.json text/OUT/compare_result_rank_*.json || fail "rank tables differ"
    cmp tokens/OUT/diff_analyze_*.json text/OUT/diff_analyze_*.json || fail "diff_analyze files differ"
    ;;
*) fail "unknown case" ;;
esac
echo "ok [$case]"
