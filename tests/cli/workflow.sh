#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 34: overflow_check / nan_analyze, data2db --format monitor and anomaly_analyse through probescope-cli: exit
# codes, no output when there is no anomaly, damaged input naming its file, never overwriting
# (docs/overflow-check.md, docs/monitor.md). One case per ctest (cli.workflow.CASE).
# usage: workflow.sh CLI FIXTURES WORKDIR CASE
set -u
cli=$1 fixtures=$2 work=$3 case=$4
W=$fixtures/msprobe26_workflow
O=$W/overflow_check
M=$W/monitor
source "$(dirname "${BASH_SOURCE[0]}")/caselib.sh"
count() { ls "$1" 2>/dev/null | wc -l; }

case $case in
nan)
    run 0 "$cli" overflow_check -i "$O/allreduce_nan_rank1_2r/inputs/step0" -o OUT
    has out.txt "Start searching anomaly node before communication."
    has out.txt "The analyze result is saved in: OUT/anomaly_analyze_[0-9]+\.json"
    [ "$(count OUT)" = 1 ] || fail "expected one file in OUT"
    cmp -s OUT/anomaly_analyze_*.json "$O"/allreduce_nan_rank1_2r/expected/anomaly_analyze_*.json || fail "not msprobe's file"
    ;;
nan_analyze_alias)
    run 0 "$cli" nan_analyze -i "$O/p2p_send_recv_2r/inputs/step0" -o OUT
    cmp -s OUT/anomaly_analyze_*.json "$O"/p2p_send_recv_2r/expected/anomaly_analyze_*.json || fail "not msprobe's file"
    ;;
no_anomaly)
    run 0 "$cli" overflow_check -i "$O/no_anomaly_2r/inputs/step0" -o OUT
    has out.txt "Cannot find any anomaly node, no need to generate analyze file."
    [ -e OUT ] && fail "no anomaly: OUT must not be created"
    ;;
dump_root)
    mkdir -p root
    cp -r "$O/no_anomaly_2r/inputs/step0" root/step0
    cp -r "$O/allreduce_nan_rank1_2r/inputs/step0" root/step3
    run 0 "$cli" overflow_check -i root -o OUT
    has out.txt "first step with an anomaly: step3"
    cmp -s OUT/anomaly_analyze_*.json "$O"/allreduce_nan_rank1_2r/expected/anomaly_analyze_*.json || fail "not msprobe's file"
    ;;
damaged)
    cp -r "$O/allreduce_nan_rank1_2r/inputs/step0" step0
    head -c 3000 "$O/allreduce_nan_rank1_2r/inputs/step0/rank1/dump.json" >step0/rank1/dump.json
    run 1 "$cli" overflow_check -i step0 -o OUT
    has err.txt "step0/rank1/dump.json:[0-9]+:[0-9]+: error \[dump\.truncated\]"
    has out.txt "not analysed"
    [ -e OUT ] && fail "a refused run created OUT"
    ;;
never_overwrite)
    mkdir -p OUT && echo keep >OUT/mine.txt
    run 0 "$cli" overflow_check -i "$O/inf_single_rank/inputs/step0" -o OUT
    run 0 "$cli" overflow_check -i "$O/inf_single_rank/inputs/step0" -o OUT
    [ "$(count OUT)" = 3 ] || fail "two runs must leave two analyze files beside mine.txt"
    [ "$(cat OUT/mine.txt)" = keep ] || fail "mine.txt changed"
    ;;
usage)
    run 2 "$cli" overflow_check -o OUT
    has err.txt "overflow_check needs -i STEP_DIR"
    run 2 "$cli" overflow_check -i x --frob
    has err.txt "unknown overflow_check option --frob"
    run 1 "$cli" overflow_check -i does-not-exist -o OUT
    ;;
data2db)
    run 0 "$cli" data2db --data "$M/v1_all_ops_vpp2_2r/inputs/monitor_output" --db DB --format monitor --micro_step false
    has out.txt "Monitor data import completed. DB: DB/monitor_data.trend.db"
    run 0 "$cli" info DB/monitor_data.trend.db
    has out.txt "steps 0-3|steps 0, 1, 2, 3|steps \[0"
    has out.txt "statistics: norm min max zeros nans mean"
    # A second run never replaces the db.
    cp DB/monitor_data.trend.db before.db
    run 1 "$cli" data2db --data "$M/v1_all_ops_vpp2_2r/inputs/monitor_output" --db DB --format monitor
    has err.txt "monitor_data.trend.db: error \[monitor.db-exists\]"
    cmp -s before.db DB/monitor_data.trend.db || fail "the db was replaced"
    ;;
data2db_errors)
    run 2 "$cli" data2db --data x --db y --micro_step maybe
    has err.txt "--micro_step takes true or false"
    mkdir -p empty
    run 1 "$cli" data2db --data empty --db DB --format monitor
    has err.txt "error \[monitor.no-data\]"
    [ -e DB/monitor_data.trend.db ] && fail "an empty input wrote a db"
    mkdir -p mon/Nov28_10-00-00-rank0-abc
    printf 'vpp_stage,name,step,norm\n0,"a,1,2\n' >mon/Nov28_10-00-00-rank0-abc/actv_0-0.csv
    echo '{"a": 1}' >map.json
    run 1 "$cli" data2db --data mon --db DB --format monitor --mapping map.json
    has err.txt "map.json:[0-9]+:[0-9]+: error \[monitor.mapping\]"
    ;;
anomaly)
    run 0 "$cli" anomaly_analyse -d "$M/anomaly_processor_handmade/inputs/anomaly_detected" -o A -k 5
    has out.txt "Top 5 anomalies are listed as follows:"
    has out.txt "0: Rule AnomalyTurbulence reports anomaly signal in \('0:layers.1.mlp.unknown_tag/rank3/other', 'norm'\) at step 0"
    [ -f A/anomaly_analyse.json ] || fail "no anomaly_analyse.json"
    cp A/anomaly_analyse.json before.json
    run 1 "$cli" anomaly_analyse -d "$M/anomaly_processor_handmade/inputs/anomaly_detected" -o A -k 3
    has err.txt "anomaly_analyse.json: error \[monitor.write\]: exists already"
    cmp -s before.json A/anomaly_analyse.json || fail "anomaly_analyse.json was replaced"
    run 2 "$cli" anomaly_analyse -d x -k 0
    has err.txt "The top k number must be greater than 0."
    run 2 "$cli" anomaly_analyse -d x -s "1, 2"
    has err.txt "resolvable list"
    mkdir -p bad/rank0 && printf '{"x": {"step": ' >bad/rank0/anomaly.json
    run 1 "$cli" anomaly_analyse -d bad -o B
    has err.txt "bad/rank0/anomaly.json:[0-9]+:[0-9]+: error"
    [ -e B/anomaly_analyse.json ] && fail "a failed run wrote a file"
    ;;
*) fail "unknown case" ;;
esac
exit 0
