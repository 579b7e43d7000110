#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the seed corpus of each fuzz target from real inputs (fixtures and tests/data).
# usage: seeds.sh FIXTURES SOURCE_DIR OUT
set -eu
fixtures=$1 src=$2 out=$3
rm -rf "$out" && mkdir -p "$out"/{json,dumpentry,constructstack,pt,npy,legacypkl,comparejson,runutcsv,ptdbg,visdb,vis,trenddb}
n=0
seed() { # seed TARGET FILE: copies FILE if it is small enough to mutate usefully (<= 256 KB)
    [ -f "$2" ] && [ "$(stat -c %s "$2")" -le 262144 ] || return 0
    n=$((n + 1)); cp "$2" "$out/$1/$n-$(basename "$2")"
}
while IFS= read -r f; do seed json "$f"; seed dumpentry "$f"; done < <(find "$fixtures" "$src/tests/data" "$src/resources/demo" -name dump.json -o -name debug.json)
while IFS= read -r f; do seed constructstack "$f"; seed json "$f"; done < <(find "$fixtures" "$src/tests/data" -name construct.json -o -name stack.json | head -40)
while IFS= read -r f; do seed pt "$f"; done < <(find "$fixtures" "$src/tests/data" -name '*.pt' | head -60)
while IFS= read -r f; do seed npy "$f"; done < <(find "$fixtures" "$src/tests/data" -name '*.npy' | head -60)
while IFS= read -r f; do seed legacypkl "$f"; done < <(find "$fixtures" "$src/tests/data" -name '*.pkl' | head -40)
# ptdbg's compare: the NPU pkl, 0xFF, the bench pkl (fuzz_ptdbg.cpp splits there); each legacy_ptdbg pair.
for pair in "$fixtures"/legacy_ptdbg/*/; do
    a=$(find "$pair/npu" -name '*.pkl' | head -1) b=$(find "$pair/bench" -name '*.pkl' | head -1)
    [ -n "$a" ] && [ -n "$b" ] || continue
    n=$((n + 1)); { cat "$a"; printf '\xff'; cat "$b"; } | head -c 262144 >"$out/ptdbg/$n-$(basename "$pair").pair"
done
printf '["Torch.add.0.forward.input.0", 0, [], "torch.float32", [3], [3, 1, 2, 2]]\n["Torch.add.0.forward.output", 0, [], "torch.float32", [3], [3, 1, 2, 2]]\n' >"$out/ptdbg/hand-1.pkl"
while IFS= read -r f; do seed comparejson "$f"; done < <(find "$fixtures" "$src/tests/data" -name 'compare*.json' | head -40)
while IFS= read -r f; do seed runutcsv "$f"; done < <(find "$fixtures" "$src/tests/data" -path '*run*' -name '*.csv' | head -60)
# -da: NPU dump.json NUL bench dump.json NUL a rank table (fuzz_diffanalyze.cpp), from the -da inputs and goldens.
mkdir -p "$out/diffanalyze"
table=$(find "$fixtures/msprobe26_da" -name 'compare_result_rank*.json' -size -64k 2>/dev/null | head -1)
while IFS= read -r npu; do
    bench=${npu/\/npu\//\/bench\/}
    [ -f "$bench" ] && [ "$(stat -c %s "$npu")" -le 131072 ] || continue
    n=$((n + 1))
    { cat "$npu"; printf '\0'; cat "$bench"; [ -z "$table" ] || { printf '\0'; cat "$table"; }; } >"$out/diffanalyze/$n-da"
done < <(find "$fixtures/msprobe26_da" "$src/tests/data/msprobe26_da" -path '*/npu/step0/rank*/dump.json' 2>/dev/null | head -20)
# The graph files: msprobe's own .vis.db / .trend.db (SQLite pages to mutate) and msprobe 1.2's .vis JSON.
while IFS= read -r f; do seed visdb "$f"; done < <(find "$fixtures/msprobe_graph" -name '*.vis.db' -size -257k | head -20)
while IFS= read -r f; do seed trenddb "$f"; done < <(find "$fixtures/msprobe_graph" -name '*.trend.db' | head -10)
while IFS= read -r f; do seed vis "$f"; done < <(find "$fixtures" -name '*.vis' | head -10)
# Hand-written seeds where the fixtures have few or none.
printf '{"npu_path": "npu/dump.json", "bench_path": "bench/dump.json", "stack_path": "stack.json"}' >"$out/comparejson/hand-1.json"
printf '{"npu_path": "a", "bench_path": "b", "is_print_compare_log": true}' >"$out/comparejson/hand-2.json"
# config.json of the collectors: the repository's examples and hand-written ones.
mkdir -p "$out/collectconfig"
while IFS= read -r f; do seed collectconfig "$f"; done < <(find "$src/tests/data" "$src/docs" -name 'config*.json' 2>/dev/null | head -20)
printf '{"task": "tensor", "dump_path": "d", "step": [0, "2-4"], "rank": ["0-999999"], "level": "mix", "tensor": {"scope": [], "list": ["relu"], "data_mode": ["forward"]}}' >"$out/collectconfig/hand-1.json"
printf '{"task": "free_benchmark", "level": "L1", "free_benchmark": {"pert_mode": "add_noise", "fuzz_stage": "forward", "preheat_step": 3}}' >"$out/collectconfig/hand-2.json"
# fuzz_workflow: rank 0's dump.json, NUL, rank 1's, NUL, an anomaly.json, NUL, a v1 monitor CSV (fuzz_workflow.cpp).
mkdir -p "$out/workflow"
wf=$fixtures/msprobe26_workflow
k=0
for d in "$wf"/overflow_check/*/inputs/step0; do
    dumps=$(find "$d" -name dump.json | sort | head -2)
    a=$(echo "$dumps" | head -1) b=$(echo "$dumps" | tail -1)
    anomaly=$(find "$wf/monitor" -name anomaly.json | sort | sed -n "$((k % 6 + 1))p")
    csv=$(find "$wf/monitor" -name '*.csv' | sort | sed -n "$((k * 7 % 50 + 1))p")
    [ -n "$a" ] && [ -n "$anomaly" ] && [ -n "$csv" ] || continue
    k=$((k + 1))
    { cat "$a"; printf '\0'; cat "$b"; printf '\0'; cat "$anomaly"; printf '\0'; cat "$csv"; } >"$out/workflow/$k.bin"
    # The monitor readers alone: empty dumps (refused at once), the anomaly.json and the CSV.
    { printf '{}\0{}\0'; cat "$anomaly"; printf '\0'; cat "$csv"; } >"$out/workflow/monitor-$k.bin"
done
mkdir -p "$out/monitorconfig"
printf '{"targets": {"module.decoder.layers.0.mlp": {}, "1:layers.1": {}}, "xy_distribution": true, "wg_distribution": true, "mv_distribution": true, "param_distribution": true, "ops": ["min", "max", "norm", "zeros", "nans", "mean", "id"], "eps": 1e-8, "ndigits": 6, "squash_name": true, "step_count_per_record": 2, "start_step": 1, "step_interval": 2, "collect_times": 5, "module_ranks": [0, 1], "alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 3.0}}, {"rule_name": "AnomalyNan", "args": {"threshold": 1e10}}], "dump": true}}' >"$out/monitorconfig/hand-1.json"
printf '{"ops": ["bogus"], "forward_only": true, "cc_distribution": {"enable": true}, "append_output": ["Nov28_10-00-00", "Nov28_11-00-00"], "format": "tensorboard", "monitor_mbs_grad": 1}' >"$out/monitorconfig/hand-2.json"
printf '{"task": "overflow_check", "seed": 1, "is_deterministic": true, "async_queue_bytes": 0, "overflow_check": {"overflow_nums": -1}}' >"$out/collectconfig/hand-3.json"
# .vis.config (graph/compare --match-file) and graph -i's JSON: the plugin's files and hand-made ones.
mkdir -p "$out/visconfig"
while IFS= read -r f; do seed visconfig "$f"; done < <(find "$fixtures/msprobe_graph" "$src/tests/data" -name '*.vis.config' 2>/dev/null | head -40)
printf '{"Functional.gelu.0.forward": "Functional.gelu.1.forward", "a": "b", "a": "c"}' >"$out/visconfig/hand-1.vis.config"
printf '{"npu_path": "npu/step0/rank", "bench_path": "bench/step0/rank", "is_print_compare_log": true}' >"$out/visconfig/hand-2.json"
# Issue 35: config_check packs and hostile zips, workbooks, and the checkpoints' data.pkl (the target's first byte:
# 0 = wrap the pickle in a stored torch.save zip, 1 = write it as it is).
mkdir -p "$out/zip" "$out/xlsx" "$out/ckptpickle"
while IFS= read -r f; do seed zip "$f"; done < <(find "$fixtures/msprobe26_workflow/config_check" "$src/tests/data/configcheck" -name '*.zip' 2>/dev/null | head -20)
while IFS= read -r f; do seed xlsx "$f"; seed zip "$f"; done < <(find "$fixtures/msprobe26_workflow" -name '*.xlsx' -size -64k 2>/dev/null | head -20)
while IFS= read -r f; do
    n=$((n + 1))
    { printf '\0'; unzip -p "$f" '*/data.pkl' 2>/dev/null | head -c 262144; } >"$out/ckptpickle/$n-data.pkl"
done < <(find "$fixtures/msprobe26_workflow/ckpt_compare" "$src/tests/data/ckpt" -name '*.pt' -size -4M 2>/dev/null | head -20)
# A REDUCE of os.system, the pickle the checkpoint reader must refuse (protocol 2: GLOBAL, args tuple, REDUCE).
printf '\0\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.' >"$out/ckptpickle/hand-reduce-os-system.pkl"
for d in "$out"/*; do echo "$(basename "$d"): $(ls "$d" | wc -l) seeds"; done
