#!/usr/bin/env bash
# tests/cli/identical.sh BUILD_DIR BASELINE_DIR [OUT_DIR]
# "Outputs byte-identical before and after" as a command (issue 38): runs probescope-cli of BUILD_DIR over the
# fixtures (../shared/fixtures beside the source tree) and the demo pair: compare in every profile and mode, -da,
# ptdbg, graph, overflow_check, data2db, anomaly_analyse, config_check -c, merge_result, info, tree, run-ut where
# built. Time stamps (14 and 19 digits) are masked in file names and contents; xlsx files are compared member by
# member without docProps/core.xml; stdout/stderr by their first 40 lines with numbers masked; the job's --resume
# state (.probescope/) is not compared.
#   BASELINE=1 tests/cli/identical.sh OLD_BUILD BASELINE_DIR   records the old build's outputs (BASELINE_DIR/run1 and
#                                                              BASELINE_DIR/baseline.list)
#   tests/cli/identical.sh NEW_BUILD BASELINE_DIR              compares; exit 0 = identical, 1 = the differences listed
# Files whose content varies between two runs of the SAME build can be named in BASELINE_DIR/VARIES (none do today).
# It writes only into OUT_DIR (default a fresh mktemp folder) and BASELINE_DIR.
set -u
build=$(cd "${1:?usage: identical.sh BUILD_DIR BASELINE_DIR [OUT_DIR]}" && pwd)
base=${2:?usage: identical.sh BUILD_DIR BASELINE_DIR [OUT_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd -P)
cli=$build/app/cli/probescope-cli
[ -x "$cli" ] || { echo "no $cli"; exit 2; }
out=${3:-$(mktemp -d "${TMPDIR:-/tmp}/identical.XXXXXX")}
mkdir -p "$out"
[ -d "$src/../shared/fixtures" ] || { echo "no fixtures at $src/../shared/fixtures"; exit 2; }
fx=$(cd "$src/../shared/fixtures" && pwd -P)
demo=$src/resources/demo
wf=$fx/msprobe26_workflow

run() {  # run NAME CWD ARGS...   (outputs go to $out/NAME/o; the command sees OUT as $out/NAME/o)
    local name=$1 cwd=$2; shift 2
    local d=$out/$name
    mkdir -p "$d"
    local args=()
    for a in "$@"; do a=${a//@OUT@/$d/o}; args+=("${a//@DIR@/$d}"); done
    (cd "$cwd" && "$cli" "${args[@]}" >"$d/stdout" 2>"$d/stderr" </dev/null)
    echo $? >"$d/rc"
}

for m in md5 statistics tensor; do
    p=$fx/modelA_${m}_mix
    for prof in msprobe-1.2 msprobe-26; do
        run "$m-$prof-job" /tmp compare --npu "$p/npu" --bench "$p/bench" -o @OUT@ --profile "$prof"
        run "$m-$prof-step0-xlsx" /tmp compare --npu "$p/npu/step0/rank/dump.json" --bench "$p/bench/step0/rank/dump.json" -o @OUT@ --profile "$prof" --xlsx
        run "$m-$prof-fuzzy-stack" /tmp compare --npu "$p/npu/step1/rank/dump.json" --bench "$p/bench/step1/rank/dump.json" -o @OUT@ --profile "$prof" -f -s
    done
    run "$m-info" /tmp info "$p/npu"
    run "$m-tree" /tmp tree "$p/npu" --exec-order
    run "$m-graph26" /tmp graph -tp "$p/npu/step0" -gp "$p/bench/step0" -o @OUT@ --format 26
    run "$m-graph83" /tmp graph -tp "$p/npu/step0" -gp "$p/bench/step0" -o @OUT@ --format 8.3 -fm
done
run "tensor-verify" /tmp info "$fx/modelA_tensor_mix/npu" --verify
for d in "$fx"/msprobe26_da/SYNTH_* "$fx"/msprobe26_da/modelA_*; do
    [ -d "$d/inputs" ] || continue
    run "da-$(basename "$d")" "$d/inputs" compare -tp npu/step0 -gp bench/step0 -o @OUT@ -da --profile msprobe-26
done
for mode in all_mode md5_mode summary_mode; do
    p=$fx/legacy_ptdbg/$mode
    [ -d "$p/npu" ] || continue
    run "ptdbg-$mode" /tmp compare --profile ptdbg --npu "$p/npu/ptdbg_dump_v6.0/step0/rank0" --bench "$p/bench/ptdbg_dump_v6.0/step0/rank0" -o @OUT@
    run "ptdbg-$mode-fuzzy" /tmp compare --profile ptdbg --npu "$p/npu/ptdbg_dump_v6.0/step0/rank0" --bench "$p/bench/ptdbg_dump_v6.0/step0/rank0" -o @OUT@ -f
done
for c in "$wf"/overflow_check/*/; do
    run "ovf-$(basename "$c")" "$c" overflow_check -i inputs/step0 -o @OUT@
done
for c in "$wf"/monitor/*/; do
    n=$(basename "$c")
    [ -d "$c/inputs/monitor_output" ] && run "d2db-$n" "$c/inputs" data2db --data monitor_output --db @OUT@ --format monitor --micro_step false
    [ -d "$c/inputs/anomaly_detected" ] && run "anom-$n" "$c/inputs" anomaly_analyse -d anomaly_detected -o @OUT@ -k 5
done
for c in "$wf"/config_check/*/; do
    [ -f "$c/inputs/bench.zip" ] && run "cc-$(basename "$c")" "$c/inputs" config_check -c bench.zip cmp.zip -o @OUT@
done
for c in "$wf"/ckpt_compare/*/; do
    b=ckptB; [ -d "$c/inputs/ckptB/iter_0000200" ] && b=ckptB/iter_0000200
    [ -d "$c/inputs/ckptA" ] && run "ckpt-$(basename "$c")" "$c/inputs" config_check -c ckptA "$b" -o @DIR@/ckpt_similarity.json
done
for c in "$wf"/merge_result/*/; do
    cfg=$(ls "$c"/inputs/*.yaml 2>/dev/null | head -1)
    [ -n "$cfg" ] && run "merge-$(basename "$c")" "$c/inputs" merge_result -i compare_out -o @OUT@ -config "$cfg"
done
run "demo-job" /tmp compare --npu "$demo/npu" --bench "$demo/bench" -o @OUT@
run "demo-job26" /tmp compare --npu "$demo/npu" --bench "$demo/bench" -o @OUT@ --profile msprobe-26
if [ -x "$build/app/cli/probescope-cli" ] && "$cli" run-ut --help >/dev/null 2>&1; then
    run "runut" /tmp run-ut -api_info "$fx/modelA_tensor_mix/npu/step0/rank/dump.json" -o @OUT@ -j 1
fi

# Normalised listing: file names with time stamps replaced, then a checksum per file; the exit status per case.
# stdout/stderr are compared with numbers masked (timings) only for their first 40 lines. The output folder, the
# fixtures and the source tree are masked in every text (OUT, FX, SRC), so a baseline recorded from one checkout
# compares with a build of another (a worktree): list DIR RUN_DIR FIXTURES SOURCE (RUN_DIR: where the commands wrote,
# DIR: where the outputs are now).
list() {
    local paths="s#$2#OUT#g; s#$3#FX#g; s#$4#SRC#g"
    # .probescope/ is the whole job's --resume state (journals; per-pair markers before issue 37), not an output:
    # its format may change between versions (tst_job checks it), so it is left out of the comparison.
    (cd "$1" && find . -type f -not -path '*/.probescope/*' | LC_ALL=C sort | while read -r f; do
        n=$(echo "$f" | sed -E 's/[0-9]{19}/TS/g; s/[0-9]{14}/TS/g')
        case "$f" in
            */stdout|*/stderr) s=$(head -40 "$f" | sed -E "$paths"'; s/[0-9]+(\.[0-9]+)?/N/g' | md5sum | cut -c1-32) ;;
            *.xlsx) s=$(for m in $(unzip -Z1 "$f" | grep -v '^docProps/core.xml$'); do echo "$m"; unzip -p "$f" "$(printf '%s' "$m" | sed 's/\[/[[]/g')"; done | sed -E "$paths"'; s/[0-9]{19}/TS/g; s/[0-9]{14}/TS/g' | md5sum | cut -c1-32) ;;
            *) s=$(sed -E "$paths"'; s/[0-9]{19}/TS/g; s/[0-9]{14}/TS/g' "$f" | md5sum | cut -c1-32) ;;
        esac
        echo "$n $s"
    done)
}
if [ "${BASELINE:-0}" = 1 ]; then
    mkdir -p "$base"
    rm -rf "$base/run1"
    cp -a "$out" "$base/run1"
    printf 'out=%s\nfx=%s\nsrc=%s\n' "$out" "$fx" "$src" >"$base/roots"
    list "$base/run1" "$out" "$fx" "$src" >"$base/baseline.list"
    echo "baseline: $(wc -l <"$base/baseline.list") files/statuses in $(ls "$out" | wc -l) cases, in $base"
    exit 0
fi
list "$out" "$out" "$fx" "$src" >"$out.list"
# The baseline's listing, with the roots it was recorded under (BASELINE_DIR/roots).
root() { sed -n "s/^$1=//p" "$base/roots" 2>/dev/null; }
baseOut=$(root out); baseFx=$(root fx); baseSrc=$(root src)
list "$base/run1" "${baseOut:-$base/run1}" "${baseFx:-$fx}" "${baseSrc:-$src}" >"$base/baseline.list"
varies=$(cat "$base/VARIES" 2>/dev/null)
filter() { if [ -n "$varies" ]; then awk -v v="$varies" 'BEGIN{n=split(v,a,"\n"); for(i=1;i<=n;i++) skip[a[i]]=1} { if ($1 in skip) print $1, "(varies)"; else print }'; else cat; fi; }
if diff <(filter <"$base/baseline.list") <(filter <"$out.list") >"$out.diff"; then
    echo "IDENTICAL: $(wc -l <"$out.list") files/statuses in $(ls "$out" | wc -l) cases (outputs in $out)"
    exit 0
fi
echo "DIFFERENT (outputs in $out; baseline outputs in $base/run1):"
cat "$out.diff"
exit 1
