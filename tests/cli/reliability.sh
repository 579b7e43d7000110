#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 20's reproductions against probescope-cli, one case per ctest (cli.reliability.CASE).
# usage: reliability.sh CLI FIXTURES WORKDIR CASE
set -u
cli=$1 fixtures=$2 work=$3 case=$4
F=$fixtures/modelA_tensor_mix
S=$fixtures/modelA_statistics_mix
source "$(dirname "${BASH_SOURCE[0]}")/caselib.sh"
# copyside SIDE DEST [copy]: a rank folder of the tensor pair, its tensors copied (2 MB): a dump_tensor_data that is
# a link leaving the dump folder is refused since issue 25 (docs/reliability.md, "One tensor resolver").
copyside() {
    mkdir -p "$2"
    cp "$F/$1/step0/rank/"{dump.json,construct.json,stack.json} "$2/"
    cp -r "$F/$1/step0/rank/dump_tensor_data" "$2/"
    chmod -R u+w "$2"
}
csvs() { ls "$1"/compare_result_*.csv 2>/dev/null | wc -l; }

case $case in
truncated_bench)
    copyside bench bench
    head -c 30000 "$F/bench/step0/rank/dump.json" >bench/dump.json
    run 1 "$cli" compare --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1
    has err.txt "bench/dump.json:[0-9]+:[0-9]+: error \[dump.truncated\]: the file was cut short after 30000 bytes"
    has out.txt "not compared"
    lacks out.txt "no failing node|first failing node"
    [ "$(csvs out)" = 0 ] || fail "a result was written for a refused pair"
    ;;
salvage)
    copyside bench bench
    head -c 30000 "$F/bench/step0/rank/dump.json" >bench/dump.json
    run 1 "$cli" compare --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1 --salvage
    has out.txt "SALVAGED, the result is partial: [^ ]*bench/dump.json: cut after 30000 bytes; [0-9]+ entries read"
    has out.txt "\(partial input\) "
    has err.txt "error \[dump.truncated\]"
    [ "$(csvs out)" = 1 ] || fail "--salvage wrote no result"
    ;;
truncated_npu_cuts)
    # The issue tried 20 cut points on the NPU side; every one must be refused with its position.
    copyside npu npu
    size=$(stat -c %s "$F/npu/step0/rank/dump.json")
    for i in $(seq 1 20); do
        head -c $((size * i / 21)) "$F/npu/step0/rank/dump.json" >npu/dump.json
        run 1 "$cli" compare --npu npu/dump.json --bench "$F/bench/step0/rank/dump.json" -o out -j 1
        has err.txt "npu/dump.json:[0-9]+:[0-9]+: error \[dump\.truncated\]"
    done
    [ "$(csvs out)" = 0 ] || fail "a result was written for a refused pair"
    ;;
type_errors)
    copyside bench bench
    # Each edit changes the first match only (perl-base is in every Debian system; python3 may not be).
    for edit in '"data_name": "[^"]*"=>"data_name": 123' '"shape": \[[0-9, ]*\]=>"shape": "4,3,8,8"' \
                '"Max": [-0-9.e]+=>"Max": "abc"' '"input_args": \[=>"input_args": "s", "x": [' \
                '"type": "torch.Tensor"=>"type": 5'; do
        EDIT=$edit perl -0777 -pe 'my ($p, $r) = split /=>/, $ENV{EDIT}; s/$p/$r/' \
            "$F/bench/step0/rank/dump.json" >bench/dump.json
        cmp -s bench/dump.json "$F/bench/step0/rank/dump.json" && fail "the edit $edit changed nothing"
        run 1 "$cli" info bench
        has out.txt "error \[dump\.(leaf|entry)-type\]"
        run 1 "$cli" compare --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1
        has err.txt "bench/dump.json:[0-9]+:[0-9]+: error \[dump\.(leaf|entry)-type\]"
    done
    # An entry whose value is "x".
    echo '{"task": "tensor", "level": "mix", "framework": "pytorch", "data": {"Functional.gelu.0.forward": "x"}}' \
        >bench/dump.json
    run 1 "$cli" info bench
    has out.txt "error \[dump.entry-type\]"
    run 1 "$cli" compare --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1
    has err.txt "error \[dump.entry-type\]"
    ;;
utf8_and_keys)
    copyside npu npu
    # One flipped byte: "Norm" -> "N\xcerm"; "output" -> "jutput".
    perl -0777 -pe 's/"Norm"/"N\xcerm"/' "$F/npu/step0/rank/dump.json" >npu/dump.json
    perl -0777 -pe 's/"output"/"jutput"/' "$F/npu/step0/rank/dump.json" >renamed.json
    run 1 "$cli" info npu --verify
    has out.txt "dump.json:[0-9]+:[0-9]+: error \[json.utf8\]: invalid UTF-8 \(byte 0xce\)"
    run 1 "$cli" compare --npu npu/dump.json --bench "$F/bench/step0/rank/dump.json" -o out -j 1
    has err.txt "error \[json.utf8\]"
    cp renamed.json npu/dump.json
    run 0 "$cli" info npu
    has out.txt "warning \[dump.unknown-key\]: .*\"jutput\""
    ;;
directory_mode)
    # A whole-job compare: rank1's bench is not JSON at all, rank2's is cut; rank0 still compares, exit 1.
    for side in npu bench; do
        for r in 0 1 2; do
            mkdir -p $side/rank$r
            cp "$S/$side/step0/rank/"{dump.json,construct.json,stack.json} $side/rank$r/
        done
    done
    echo 'not json' >bench/rank1/dump.json
    head -c 20000 "$S/bench/step0/rank/dump.json" >bench/rank2/dump.json
    run 1 "$cli" compare --npu npu --bench bench -o out -j 1 -c
    has err.txt "bench/rank1/dump.json:1:1: error \[json.syntax\]"
    has err.txt "bench/rank2/dump.json:[0-9]+:[0-9]+: error \[dump.truncated\]"
    [ "$(grep -c 'not compared' out.txt)" = 2 ] || fail "two pairs should be refused"
    has out.txt "written: [^ ]*compare_result_rank0-rank0_[0-9]{14}\.csv"
    [ "$(csvs out)" = 1 ] || fail "only rank0's result should be written"
    ;;
empty_bench)
    mkdir bench && echo '{"task": "tensor", "level": "mix", "framework": "pytorch", "data": {}}' >bench/dump.json
    run 1 "$cli" compare --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1
    has err.txt "error \[compare.empty-dump\]: the bench dump has no entries"
    lacks out.txt "no failing node"
    ;;
unreadable_pt)
    copyside bench bench copy
    victim=bench/dump_tensor_data/Functional.gelu.0.forward.input.0.pt
    [ -f "$victim" ] || fail "fixture file missing: $victim"
    head -c 100 "$F/bench/step0/rank/dump_tensor_data/Functional.gelu.0.forward.input.0.pt" >"$victim"
    run 1 "$cli" compare --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1
    has err.txt "error \[compare.tensor-unreadable\]: row Functional.gelu.0.forward.input.0: its tensor file is unreadable"
    grep -h "Functional.gelu.0.forward.input.0," out/compare_result_*.csv >row.txt
    has row.txt "unreadable"
    lacks row.txt "not found"
    ;;
concurrent)
    # Two compares into one folder at once, ten times: both succeed, under different names, every file whole.
    for t in $(seq 1 10); do
        rm -rf out
        "$cli" compare --npu "$S/npu/step0" --bench "$S/bench/step0" -o out -j 1 -c >a.txt 2>&1 & pa=$!
        "$cli" compare --npu "$S/npu/step0" --bench "$S/bench/step0" -o out -j 1 -c >b.txt 2>&1 & pb=$!
        wait $pa || fail "first run failed: $(cat a.txt)"
        wait $pb || fail "second run failed: $(cat b.txt)"
        [ "$(csvs out)" = 2 ] || fail "trial $t: $(csvs out) result files instead of 2"
        fa=$(grep -o 'written: [^ ]*\.csv' a.txt) fb=$(grep -o 'written: [^ ]*\.csv' b.txt)
        [ "$fa" != "$fb" ] || fail "trial $t: both runs claim $fa"
        cmp -s "${fa#written: }" "${fb#written: }" || fail "trial $t: the two results differ"
    done
    ;;
symlink_target)
    mkdir out
    # Dangling symlinks at every name a run could take in the next seconds: never followed or replaced.
    now=$(date +%s)
    for s in 0 1 2 3 4 5 6 7 8 9; do
        ts=$(date -d "@$((now + s))" +%Y%m%d%H%M%S)
        ln -s "$w/victim_$s.csv" "out/compare_result_rank-rank_$ts.csv"
    done
    run 0 "$cli" compare --npu "$S/npu/step0" --bench "$S/bench/step0" -o out -j 1 -c
    has out.txt "written: [^ ]*compare_result_rank-rank_[0-9]{14}_1\.csv"
    ls "$w"/victim_* >/dev/null 2>&1 && fail "a symlink at the result name was followed"
    [ "$(find out -type l | wc -l)" = 10 ] || fail "a symlink was replaced"
    ;;
fifo)
    # A FIFO in place of each JSON input: every command answers at once with an error.
    for name in dump.json construct.json stack.json; do
        rm -rf d && mkdir d && cp "$S/npu/step0/rank/"*.json d/ && rm d/$name && mkfifo d/$name
        if [ $name = dump.json ]; then
            run 1 "$cli" info d
            run 1 "$cli" tree d
            run 1 "$cli" compare --npu d/dump.json --bench "$S/bench/step0/rank/dump.json" -o out -j 1
            has err.txt "not a regular file: it is a FIFO"
            run 1 "$cli" run-ut -api_info d/dump.json -o ru
        else
            timeout 60 "$cli" info d >out.txt 2>&1; [ $? = 124 ] && fail "info hangs on a FIFO $name"
            timeout 60 "$cli" tree d >out.txt 2>&1; [ $? = 124 ] && fail "tree hangs on a FIFO $name"
            has out.txt "FIFO"
        fi
    done
    mkfifo compare.json
    run 1 "$cli" compare -i compare.json -o out
    ;;
resume_cut)
    # run-ut -csv_path on a result CSV whose last line was cut: named, exit 1, the file untouched.
    mkdir ru
    printf '\xef\xbb\xbfAPI name,Forward Test Success,Backward Test Success,Message\r\nTorch.matmul.0,pass,pass,\r\nTensor.transpose.4,pas' \
        >ru/accuracy_checking_result_20260101000000.csv
    head -1 "$F/expected/run_ut/accuracy_checking_details.csv" | tr -d '\n' >ru/accuracy_checking_details_20260101000000.csv
    printf '\r\n' >>ru/accuracy_checking_details_20260101000000.csv
    before=$(md5sum ru/*.csv)
    run 1 "$cli" run-ut -api_info "$F/npu/step0/rank/dump.json" -csv_path ru/accuracy_checking_result_20260101000000.csv
    has err.txt "accuracy_checking_result_20260101000000.csv:3:1: error \[runut.resume-malformed\]: the last line is cut short"
    [ "$before" = "$(md5sum ru/*.csv)" ] || fail "the resumed files were changed"
    ;;
# ---- issue 25: the ptdbg profile and the tensor gate ----
ptdbg_escape)
    # A row named ../../../outside/… read a file outside the dump; a planted .npy there must never be used.
    P=$fixtures/legacy_ptdbg/all_mode
    for side in npu bench; do
        mkdir -p $side && cp -r "$P/$side/ptdbg_dump_v6.0/step0/rank0" $side/ && chmod -R u+w $side
        sed -i 's#\["Functional.gelu.0.forward.output"#["../../../outside/Functional.gelu.0.forward.output"#' $side/rank0/dump.pkl
    done
    mkdir -p outside && cp "$P/npu/ptdbg_dump_v6.0/step0/rank0/dump/Functional.gelu.0.forward.output.npy" outside/
    run 1 "$cli" compare --profile ptdbg --npu npu/rank0 --bench bench/rank0 -o out -j 1
    has err.txt "error \[tensor.path-escape\]"
    has out.txt "written: [^ ]*compare_result_[0-9]{14}\.csv"
    grep -h "outside/Functional.gelu.0.forward.output," out/compare_result_*.csv >row.txt
    has row.txt "unreadable"
    lacks row.txt "not found"
    ;;
ptdbg_linked_folder)
    # The NPU .npy folder is a link to the bench's: the NPU would be compared with the bench's own tensors.
    P=$fixtures/legacy_ptdbg/all_mode
    for side in npu bench; do mkdir -p $side && cp -r "$P/$side/ptdbg_dump_v6.0/step0/rank0" $side/ && chmod -R u+w $side; done
    rm -rf npu/rank0/dump && ln -s "$w/bench/rank0/dump" npu/rank0/dump
    run 1 "$cli" compare --profile ptdbg --npu npu/rank0 --bench bench/rank0 -o out -j 1
    has err.txt "npu/rank0/dump: error \[tensor.path-escape\]: the tensor folder resolves to"
    lacks out.txt "no failing node"
    run 1 "$cli" compare --npu npu/rank0/dump.pkl --bench bench/rank0/dump.pkl -o out2 -j 1
    has err.txt "error \[tensor.path-escape\]"
    lacks out.txt "no failing node"
    ;;
ptdbg_corrupt_npy)
    # A corrupt .npy of a .pkl dump was "not found." / "no failing node" with exit 0 in both profiles.
    P=$fixtures/legacy_ptdbg/all_mode
    for side in npu bench; do mkdir -p $side && cp -r "$P/$side/ptdbg_dump_v6.0/step0/rank0" $side/ && chmod -R u+w $side; done
    head -c 60 "$P/npu/ptdbg_dump_v6.0/step0/rank0/dump/Functional.gelu.0.forward.input.0.npy" \
        >npu/rank0/dump/Functional.gelu.0.forward.input.0.npy
    for profile in ptdbg msprobe-1.2; do
        run 1 "$cli" compare --profile $profile --npu npu/rank0 --bench bench/rank0 -o out-$profile -j 1
        has err.txt "error \[compare.tensor-unreadable\]: .*Functional.gelu.0.forward.input.0"
        grep -h "^Functional.gelu.0.forward.input.0," out-$profile/compare_result_*.csv >row.txt
        has row.txt "unreadable"
        lacks row.txt "not found"
    done
    ;;
ptdbg_long_name)
    # A ~35 KB row name overflowed the stack in std::regex (exit 139).
    name="Torch.$(head -c 35000 /dev/zero | tr '\0' a).0.forward"
    for side in npu bench; do
        printf '["%s.input.0", 0, [], "torch.float32", [3], [1, 1, 1, 1]]\n["%s.output", 0, [], "torch.float32", [3], [1, 1, 1, 1]]\n' \
            "$name" "$name" >$side.pkl
    done
    run 0 "$cli" compare --profile ptdbg --npu npu.pkl --bench bench.pkl -o out
    has out.txt "rows: 2"
    ;;
ptdbg_damaged_pkl)
    # A cut .pkl is refused with file:line:col (exit 1) unless --salvage, as a cut dump.json is.
    P=$fixtures/legacy_ptdbg/summary_mode
    for side in npu bench; do mkdir -p $side && cp -r "$P/$side/ptdbg_dump_v6.0/step0/rank0" $side/ && chmod -R u+w $side; done
    size=$(stat -c %s bench/rank0/dump.pkl)
    head -c $((size - 20)) "$P/bench/ptdbg_dump_v6.0/step0/rank0/dump.pkl" >bench/rank0/dump.pkl # inside the last row
    run 1 "$cli" compare --profile ptdbg --npu npu/rank0 --bench bench/rank0 -o out
    has err.txt "bench/rank0/dump.pkl:[0-9]+:[0-9]+: error \[pkl.truncated\]"
    has out.txt "not compared"
    [ "$(csvs out)" = 0 ] || fail "a result was written for a refused pair"
    run 1 "$cli" compare --profile ptdbg --npu npu/rank0 --bench bench/rank0 -o out --salvage
    has out.txt "SALVAGED, the result is partial: [^ ]*bench/rank0/dump.pkl"
    [ "$(csvs out)" = 1 ] || fail "--salvage wrote no result"
    # Options the ptdbg branch does not implement are usage errors, never dropped.
    for opt in "--step 0" "--rank 0" --resume "--pair-threads 2" -da --exec-order --verify "-cm"; do
        run 2 "$cli" compare --profile ptdbg --npu npu/rank0 --bench bench/rank0 -o out $opt
        has err.txt "${opt%% *} does not apply to the ptdbg profile: "
    done
    ;;
pkl_amplification)
    # Index paths turned 20 KB of pkl into millions of rows and GBs: capped with an error naming file and line.
    mkdir -p a
    for i in $(seq 0 199); do
        printf '["Torch.add.%d.forward.input.9999.9999", 0, [], "torch.float32", [2], [1, 0, 0.5, 1]]\n' $i
    done >a/dump.pkl
    run 1 "$cli" info a/dump.pkl
    has out.txt "a/dump.pkl:[0-9]+:[0-9]+: error \[pkl.amplification\]"
    ;;
msprobe26_cut_pt)
    # In the msprobe 26 profile a .pt cut to 3,000 bytes gave the row "Result pass" and exit 0.
    copyside bench bench copy
    victim=bench/dump_tensor_data/Functional.gelu.0.forward.input.0.pt
    head -c 3000 "$F/bench/step0/rank/dump_tensor_data/Functional.gelu.0.forward.input.0.pt" >"$victim"
    run 1 "$cli" compare --profile msprobe-26 --npu "$F/npu/step0/rank/dump.json" --bench bench/dump.json -o out -j 1
    has err.txt "error \[compare.tensor-unreadable\]: row Functional.gelu.0.forward.input.0"
    grep -h "^Functional.gelu.0.forward.input.0," out/compare_result_*.csv >row.txt
    has row.txt "unreadable"
    lacks row.txt ",pass,"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok [$case]"
