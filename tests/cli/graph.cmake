# SPDX-License-Identifier: Apache-2.0
# probescope-cli info FILE.vis.db / graph (docs/graph.md). Included from CMakeLists.txt; tst_graph compares the
# written dbs with msprobe's table by table, these check the command line: output, exit codes, files.
set(graphFixtures ${PROBESCOPE_FIXTURES_DIR}/msprobe_graph)
set(graphOut ${CMAKE_CURRENT_BINARY_DIR}/graph-out)

probescope_cli_test(graph_info_db26 RC 0 ARGS info ${graphFixtures}/v26/modelA_tensor_mix/compare_steps.vis.db
    OUT "msprobe 26.x .vis.db, compare, task all, micro steps 1, steps \\[0, 1\\], ranks \\[0\\].*graphs: 4.*NPU_0_0 \\(step 0, rank 0, NPU\\): 127 nodes \\(50 modules, 72 APIs, 5 API collections\\).*#FF704D error \\[0.6, 1\\] 3;.*unmatched 11.*first failing node: Functional.gelu.0.forward \\(node_order 38, precision_index 1, #FF704D error.*Bench_0_0 \\(step 0, rank 0, Bench\\): 123 nodes.*unmatched 7.*NPU_1_0.*first failing node: none.*warnings: none")
probescope_cli_test(graph_info_db833 RC 0 ARGS info ${graphFixtures}/v833/modelA_tensor_mix/compare_step1_rank.vis.db
    OUT "msprobe 8.x .vis.db, compare, task all.*#FF704D \\[0.2, 1\\].*first failing node: Functional.conv2d.1.forward \\(node_order 7, precision_index 0.203125")
probescope_cli_test(graph_info_vis RC 0 ARGS info ${PROBESCOPE_FIXTURES_DIR}/modelA_tensor_mix/expected/graph/graph_compare_step0_rank.vis
    OUT "msprobe 1.2 .vis, compare, task all.*NPU_0_0 \\(step 0, rank 0, NPU\\): 114 nodes.*first failing node: Functional.gelu.0.forward \\(node_order 38, precision_index 0.99462890625")
probescope_cli_test(graph_info_build RC 0 ARGS info ${graphFixtures}/v26/modelA_md5_mix/build_steps.vis.db
    OUT "msprobe 26.x .vis.db, build, micro steps 1, steps \\[0, 1\\].*NPU_1_0 \\(step 1, rank 0, NPU\\): 127 nodes")
probescope_cli_test(graph_info_trend RC 0 ARGS info ${graphFixtures}/v26/modelA_statistics_mix/dump_data_bench_layout_rank0_nomicro.trend.db
    OUT "msprobe 26 .trend.db.*steps \\[0, 1\\], ranks \\[0\\].*metrics: forward backward recompute parameters_grad")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/not-sqlite.vis.db "{\"graph\": 1}")
probescope_cli_test(graph_info_not_sqlite RC 1 ARGS info ${CMAKE_CURRENT_BINARY_DIR}/not-sqlite.vis.db
    ERR "not-sqlite.vis.db: error \\[graph.db\\]: not an SQLite database")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/broken.vis "{\n  \"NPU\": {\"root\": \"DefaultModel\",\n")
probescope_cli_test(graph_info_broken_vis RC 1 ARGS info ${CMAKE_CURRENT_BINARY_DIR}/broken.vis
    ERR "broken.vis:3:1: error \\[graph.vis\\]: not valid JSON")
probescope_cli_test(graph_info_missing RC 1 ARGS info ${graphFixtures}/v26/no-such.vis.db ERR "no-such.vis.db: error \\[io.read\\]")
probescope_cli_test(graph_info_options RC 2 ARGS info ${graphFixtures}/v26/modelA_md5_mix/build_steps.vis.db --verify
    ERR "takes no options")

set(pairMd5 ${PROBESCOPE_FIXTURES_DIR}/modelA_md5_mix)
set(pairStatsGraph ${PROBESCOPE_FIXTURES_DIR}/modelA_statistics_mix)
probescope_cli_test(graph_write_compare RC 0 ARGS graph -tp ${pairMd5}/npu -gp ${pairMd5}/bench -o ${graphOut}/compare
    OUT "graphs: 4\n  written: [^\n]*graph-out/compare/compare_[0-9]+(_[0-9]+)?\\.vis\\.db")
probescope_cli_test(graph_write_build83 RC 0 ARGS graph -tp ${pairMd5}/npu/step0/rank -o ${graphOut}/build --format 8.3
    OUT "graphs: 1\n  written: [^\n]*graph-out/build/build_[0-9]+(_[0-9]+)?\\.vis\\.db")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/graph-input.json
     "{\"npu_path\": \"${pairMd5}/npu/step1/rank\", \"bench_path\": \"${pairMd5}/bench/step1/rank\", \"is_print_compare_log\": false}")
probescope_cli_test(graph_write_json RC 0 ARGS graph -i ${CMAKE_CURRENT_BINARY_DIR}/graph-input.json -o ${graphOut}/json --format 8.3 -fm
    OUT "step1/rank  vs  [^\n]*step1/rank\n  graphs: 2")
probescope_cli_test(graph_write_match_file RC 0 ARGS graph -tp ${PROBESCOPE_FIXTURES_DIR}/modelA_statistics_mix/npu/step0/rank
    -gp ${PROBESCOPE_FIXTURES_DIR}/modelA_statistics_mix/bench/step0/rank -o ${graphOut}/match
    --match-file ${graphFixtures}/vis_config/plugin26_modelA_statistics/compare_step0_rank_0_0.vis.config
    OUT "graphs: 2\n  written:")
probescope_cli_test(graph_write_mixed_levels RC 1 ARGS graph -tp ${pairMd5}/npu -gp ${pairMd5}/bench/step0/rank -o ${graphOut}/bad
    ERR "error \\[graph.input\\]: the folder structures of the NPU and bench paths differ")
probescope_cli_test(graph_write_missing RC 1 ARGS graph -tp ${pairMd5}/nothing-here -o ${graphOut}/bad
    ERR "error \\[layout.missing\\]")
probescope_cli_test(graph_usage_no_out RC 2 ARGS graph -tp ${pairMd5}/npu ERR "graph needs -o OUT")
probescope_cli_test(graph_usage_format RC 2 ARGS graph -tp ${pairMd5}/npu -o x --format 9 ERR "--format takes 8.3 or 26, not 9")
probescope_cli_test(graph_usage_match_without_bench RC 2 ARGS graph -tp ${pairMd5}/npu -o x --match-file y
    ERR "--match-file pairs NPU and bench nodes: it needs -gp BENCH")
probescope_cli_test(graph_help RC 0 ARGS graph --help OUT "probescope-cli graph -tp NPU \\[-gp BENCH\\] -o OUT")

# Issue 33: graph refuses what compare refuses (the one pipeline), one value per option, a one-sided rank said.
probescope_cli_test(graph_usage_tp_twice RC 2 ARGS graph -tp ${pairMd5}/npu -tp ${pairMd5}/bench -o ${graphOut}/twice
    ERR "-tp is given twice; graph takes one")
probescope_cli_test(graph_usage_format_twice RC 2 ARGS graph -tp ${pairMd5}/npu -o ${graphOut}/twice --format 26 --format 8.3
    ERR "--format is given twice")
probescope_cli_test(graph_usage_out_twice RC 2 ARGS graph -tp ${pairMd5}/npu -o ${graphOut}/a --output_path ${graphOut}/b
    ERR "--output_path is given twice")
set(cutPair ${CMAKE_CURRENT_BINARY_DIR}/graph-cut-pt)
file(REMOVE_RECURSE ${cutPair})
foreach(side npu bench)
    file(COPY ${PROBESCOPE_FIXTURES_DIR}/modelA_tensor_mix/${side}/step0/rank/ DESTINATION ${cutPair}/${side})
endforeach()
set(cutPt ${cutPair}/npu/dump_tensor_data/Functional.gelu.0.forward.output.0.pt)
# A zip cut short after 300 bytes, as an interrupted copy leaves it.
execute_process(COMMAND truncate -s 300 ${cutPt})
probescope_cli_test(graph_refuses_cut_pt RC 1 ARGS graph -tp ${cutPair}/npu -gp ${cutPair}/bench -o ${graphOut}/cut
    ERR "Functional.gelu.0.forward.output.0.pt.*graph: not written: the dumps have errors")
probescope_cli_test(compare_refuses_cut_pt RC 1 ARGS compare --npu ${cutPair}/npu/dump.json --bench ${cutPair}/bench/dump.json
    -o ${graphOut}/cut-compare --profile msprobe-26 ERR "Functional.gelu.0.forward.output.0.pt")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/graph-input-huge.json "{\n  \"npu_path\": 1e99999\n}")
probescope_cli_test(graph_input_overflow RC 1 ARGS graph -i ${CMAKE_CURRENT_BINARY_DIR}/graph-input-huge.json -o ${graphOut}/huge-input
    ERR "graph-input-huge.json: error \\[graph.input\\]: not valid JSON: .*overflow")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/graph-input-cut.json "{\n  \"npu_path\": \"a\",\n")
probescope_cli_test(graph_input_syntax RC 1 ARGS graph -i ${CMAKE_CURRENT_BINARY_DIR}/graph-input-cut.json -o ${graphOut}/cut-input
    ERR "graph-input-cut.json:3:1: error \\[graph.input\\]: not valid JSON")
set(linkedPair ${CMAKE_CURRENT_BINARY_DIR}/graph-linked-tensors)
file(REMOVE_RECURSE ${linkedPair})
file(COPY ${PROBESCOPE_FIXTURES_DIR}/modelA_tensor_mix/bench/step0/rank/ DESTINATION ${linkedPair}/bench)
file(COPY ${PROBESCOPE_FIXTURES_DIR}/modelA_tensor_mix/npu/step0/rank/ DESTINATION ${linkedPair}/npu)
file(REMOVE_RECURSE ${linkedPair}/npu/dump_tensor_data)
file(CREATE_LINK ${linkedPair}/bench/dump_tensor_data ${linkedPair}/npu/dump_tensor_data SYMBOLIC)
probescope_cli_test(graph_refuses_linked_tensor_folder RC 1 ARGS graph -tp ${linkedPair}/npu -gp ${linkedPair}/bench
    -o ${graphOut}/linked ERR "npu/dump_tensor_data.*graph: not written")
set(oneSided ${CMAKE_CURRENT_BINARY_DIR}/graph-one-sided)
file(REMOVE_RECURSE ${oneSided})
file(COPY ${pairMd5}/npu/step0/rank/ DESTINATION ${oneSided}/npu/rank0)
file(COPY ${pairMd5}/bench/step0/rank/ DESTINATION ${oneSided}/bench/rank0)
file(COPY ${pairMd5}/bench/step0/rank/ DESTINATION ${oneSided}/bench/rank1)
probescope_cli_test(graph_bench_only_rank RC 1 ARGS graph -tp ${oneSided}/npu -gp ${oneSided}/bench -o ${graphOut}/one-sided
    OUT "note: bench [^\n]*rank1 has no NPU counterpart.*graphs: 2.*1 \\(step, rank\\) place\\(s\\) not compared")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/huge.vis.config "{\n    \"Functional.gelu.0.forward\": \"Functional.gelu.1.forward\",\n    \"x\": 1e99999\n}")
probescope_cli_test(graph_match_file_overflow RC 1 ARGS graph -tp ${pairStatsGraph}/npu/step0/rank -gp ${pairStatsGraph}/bench/step0/rank
    -o ${graphOut}/huge --match-file ${CMAKE_CURRENT_BINARY_DIR}/huge.vis.config
    ERR "huge.vis.config:3:[0-9]+: error \\[graph.match-file\\]: not valid JSON: .*overflow")
probescope_cli_test(compare_match_file_overflow RC 1 ARGS compare --npu ${pairStatsGraph}/npu/step0/rank/dump.json
    --bench ${pairStatsGraph}/bench/step0/rank/dump.json -o ${graphOut}/huge-compare --match-file ${CMAKE_CURRENT_BINARY_DIR}/huge.vis.config
    ERR "huge.vis.config:3:[0-9]+: error \\[graph.match-file\\]: not valid JSON")

# compare --match-file (docs/graph.md "compare --match-file"): a shifted gelu call made from the real pairs, in both
# msprobe profiles, statistics and tensor mode (matchfile.cmake checks the CSVs); and the option's errors.
foreach(mode statistics tensor)
    foreach(profile msprobe-1.2 msprobe-26)
        add_test(NAME cli.compare_match_file_${mode}_${profile}
                 COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:probescope-cli> -DPAIR=${PROBESCOPE_FIXTURES_DIR}/modelA_${mode}_mix
                         -DPROFILE=${profile} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/match-file-${mode}-${profile}
                         -P ${CMAKE_CURRENT_SOURCE_DIR}/matchfile.cmake)
    endforeach()
endforeach()
set(pairStats ${PROBESCOPE_FIXTURES_DIR}/modelA_statistics_mix)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/broken.vis.config "{\n    \"Functional.gelu.0.forward\": \"Functional.gelu.1.forward\"\n    \"x\": \"y\"\n}")
probescope_cli_test(compare_match_file_damaged RC 1 ARGS compare --npu ${pairStats}/npu/step0/rank/dump.json
    --bench ${pairStats}/bench/step0/rank/dump.json -o ${graphOut}/match-bad --match-file ${CMAKE_CURRENT_BINARY_DIR}/broken.vis.config
    ERR "broken.vis.config:3:7: error \\[graph.match-file\\]: not valid JSON")
probescope_cli_test(compare_match_file_whole_job RC 2 ARGS compare --npu ${pairStats}/npu --bench ${pairStats}/bench
    -o ${graphOut}/match-job --match-file ${CMAKE_CURRENT_BINARY_DIR}/broken.vis.config
    ERR "--match-file names the nodes of one \\(step, rank\\)")
probescope_cli_test(compare_match_file_with_dm RC 2 ARGS compare --npu ${pairStats}/npu/step0/rank/dump.json
    --bench ${pairStats}/bench/step0/rank/dump.json -o ${graphOut}/match-dm -dm ${data}/mapping/ms_pt/data_mapping.yaml
    --match-file ${graphFixtures}/vis_config/plugin26_modelA_statistics/compare_step0_rank_0_0.vis.config
    ERR "error \\[compare.option\\]: --match-file pairs nodes within msprobe 1.2's matching")
probescope_cli_test(compare_match_file_da RC 2 ARGS compare --npu ${pairStats}/npu/step0 --bench ${pairStats}/bench/step0
    -o ${graphOut}/match-da --profile msprobe-26 -da --match-file ${CMAKE_CURRENT_BINARY_DIR}/broken.vis.config
    ERR "--match-file.*-da finds the first diverging node")
probescope_cli_test(compare_match_file_ptdbg RC 2 ARGS compare --profile ptdbg --npu ${PROBESCOPE_FIXTURES_DIR}/legacy_ptdbg
    --bench ${PROBESCOPE_FIXTURES_DIR}/legacy_ptdbg -o ${graphOut}/match-ptdbg --match-file x.vis.config
    ERR "--match-file does not apply to the ptdbg profile")
probescope_cli_test(compare_match_file_help RC 0 ARGS --help OUT "--match-file FILE.vis.config")
