#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 35 through probescope-cli: config_check -c / -d and merge_result on the msprobe26_workflow fixtures, and every
# hostile zip of tests/data/configcheck refused with exit 1 naming the zip and the entry, nothing written outside OUT
# (nor OUT itself), and no output replaced.
#
# usage: configcheck.sh CLI FIXTURES DATA WORKDIR
set -u
cli=$1 fixtures=$2 data=$3 work=$4
W=$fixtures/msprobe26_workflow
rm -rf "$work" && mkdir -p "$work"
work=$(cd "$work" && pwd)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The hostile zips, as bench and as cmp.
good=$W/config_check/static_identical/inputs/cmp.zip
for spec in "evil_dotdot.zip:zip.entry-path:../escaped.txt" "evil_absolute.zip:zip.entry-path:/tmp/probescope-absolute-entry.txt" \
            "evil_symlink.zip:zip.symlink:'env'" "bomb.zip:zip.bomb:hyperparameters/hyperparameters_static.json"; do
    IFS=: read -r zip id entry <<<"$spec"
    for order in first second; do
        dir=$work/hostile-${zip%.zip}-$order
        mkdir -p "$dir"
        if [ $order = first ]; then a=$data/configcheck/$zip b=$good; else a=$good b=$data/configcheck/$zip; fi
        "$cli" config_check -c "$a" "$b" -o "$dir/out" >"$dir/stdout" 2>"$dir/stderr"
        rc=$?
        [ $rc -eq 1 ] || fail "$zip ($order): exit $rc, expected 1"
        grep -qF "$data/configcheck/$zip" "$dir/stderr" || fail "$zip ($order): the zip is not named: $(cat "$dir/stderr")"
        grep -qF "[$id]" "$dir/stderr" || fail "$zip ($order): not $id: $(cat "$dir/stderr")"
        grep -qF "$entry" "$dir/stderr" || fail "$zip ($order): the entry $entry is not named"
        [ -e "$dir/out" ] && fail "$zip ($order): OUT was created"
        [ -e "$dir/escaped.txt" ] || [ -e "$work/escaped.txt" ] && fail "$zip ($order): a file escaped OUT"
        [ -e /tmp/probescope-absolute-entry.txt ] && fail "$zip ($order): the absolute entry was written"
    done
done

# The fixture cases: result.xlsx and the sheet CSVs (the CSVs without set-ordered rows byte for byte).
for c in static_gpu_vs_npu static_identical dynamic_weights_dataset_random; do
    out=$work/cc-$c
    "$cli" config_check -c "$W/config_check/$c/inputs/bench.zip" "$W/config_check/$c/inputs/cmp.zip" -o "$out" >"$out.log" 2>&1 \
        || fail "$c: exit $?: $(cat "$out.log")"
    [ -f "$out/result.xlsx" ] || fail "$c: no result.xlsx"
    for f in "$W/config_check/$c/expected"/result.*.csv; do
        name=$(basename "$f")
        case $name in result.weights.csv|result.random.csv) continue ;; esac
        cmp -s "$f" "$out/$name" || fail "$c: $name differs"
    done
    # Again into the same OUT: refused, nothing replaced.
    sum=$(md5sum <"$out/result.xlsx")
    "$cli" config_check -c "$W/config_check/$c/inputs/bench.zip" "$W/config_check/$c/inputs/cmp.zip" -o "$out" >/dev/null 2>"$out.err"
    rc=$?
    [ $rc -eq 1 ] || fail "$c again: exit $rc, expected 1"
    grep -q "already exists" "$out.err" || fail "$c again: $(cat "$out.err")"
    [ "$(md5sum <"$out/result.xlsx")" = "$sum" ] || fail "$c again: result.xlsx was replaced"
done

# The static pack: msprobe's hyperparameters entry byte for byte; an existing pack is never replaced.
bench=$W/config_check/static_gpu_vs_npu/inputs/bench
(cd "$bench" && "$cli" config_check -d train.sh train_config.yaml -o "$work/pack.zip") >"$work/pack.log" 2>&1 || fail "pack: $(cat "$work/pack.log")"
# Compared with msprobe's pack of the same inputs: the extracted hyperparameters are the same bytes.
"$cli" config_check -c "$work/pack.zip" "$W/config_check/static_gpu_vs_npu/inputs/bench.zip" -o "$work/pack-vs-msprobe" \
    >"$work/pack-vs.log" 2>&1 || fail "pack vs msprobe's pack: $(cat "$work/pack-vs.log")"
cmp -s "$work/pack-vs-msprobe/bench/hyperparameters/hyperparameters_static.json" \
    "$work/pack-vs-msprobe/cmp/hyperparameters/hyperparameters_static.json" || fail "pack: hyperparameters differ from msprobe's"
sum=$(md5sum <"$work/pack.zip")
(cd "$bench" && "$cli" config_check -d train.sh -o "$work/pack.zip") >/dev/null 2>"$work/pack.err"
[ $? -eq 1 ] || fail "pack again: not exit 1"
[ "$(md5sum <"$work/pack.zip")" = "$sum" ] || fail "pack again: replaced"
"$cli" config_check -d -o "$work/pack.tar" >/dev/null 2>&1
[ $? -eq 2 ] || fail "pack -o without .zip: not a usage error"
"$cli" config_check -c only-one.zip >/dev/null 2>&1
[ $? -eq 2 ] || fail "-c with one argument: not a usage error"
"$cli" config_check -c "$work/no-such.zip" "$good" -o "$work/missing-out" >/dev/null 2>"$work/missing.err"
[ $? -eq 1 ] && grep -qF "no-such.zip" "$work/missing.err" || fail "a missing zip: not exit 1 naming it"

# merge_result on both fixture cases.
for spec in summary_3ranks:merge_selected summary_3ranks:merge_all_indexes all_mode_3ranks:merge_cos; do
    c=${spec%%:*} cfg=${spec##*:}
    out=$work/merge-$cfg
    "$cli" merge_result -i "$W/merge_result/$c/inputs/compare_out" -o "$out" -config "$W/merge_result/$c/inputs/$cfg.yaml" \
        >"$out.log" 2>&1 || fail "merge $cfg: $(cat "$out.log")"
    n=0
    for f in "$W/merge_result/$c/expected/$cfg"/*.csv; do
        sheet=${f##*/multi_ranks_compare_merge_}
        sheet=${sheet#*.}
        ours=$(ls "$out"/multi_ranks_compare_merge_*."$sheet" 2>/dev/null | head -1)
        cmp -s "$f" "$ours" || fail "merge $cfg: sheet $sheet differs"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || fail "merge $cfg: no expected sheets"
done
# merge_result also reads ProbeScope's own compare workbooks (--profile msprobe-26 --xlsx): the same merged sheets.
M=$W/merge_result/summary_3ranks
"$cli" compare --profile msprobe-26 --npu "$M/inputs/dump/npu/step0" --bench "$M/inputs/dump/bench/step0" -o "$work/own-compare" --xlsx \
    >"$work/own-compare.log" 2>&1 || fail "own compare: $(cat "$work/own-compare.log")"
"$cli" merge_result -i "$work/own-compare" -o "$work/own-merge" -config "$M/inputs/merge_all_indexes.yaml" >"$work/own-merge.log" 2>&1 \
    || fail "merge of our own compare: $(cat "$work/own-merge.log")"
for f in "$M/expected/merge_all_indexes"/*.csv; do
    sheet=${f##*/multi_ranks_compare_merge_}
    sheet=${sheet#*.}
    cmp -s "$f" "$(ls "$work/own-merge"/multi_ranks_compare_merge_*."$sheet" 2>/dev/null | head -1)" \
        || fail "merge of our own compare: sheet $sheet differs"
done
"$cli" merge_result -i "$W/merge_result/summary_3ranks/inputs/compare_out" -o "$work/m" >/dev/null 2>&1
[ $? -eq 2 ] || fail "merge_result without -config: not a usage error"

[ $failures -eq 0 ] && echo "configcheck: all passed"
exit $((failures > 0))
