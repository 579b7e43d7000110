# SPDX-License-Identifier: Apache-2.0
# The one folder walker: probescope-cli compare on the demo roots, on a step folder, on a rank folder and on
# a dump.json gives the same per-step tables. Roots write each step into OUT/step{N}; the CSVs of every level
# must be byte-identical for the same step.
# cmake -DCLI=probescope-cli -DDEMO=resources/demo -DOUT=dir -P compare_levels.cmake
file(REMOVE_RECURSE "${OUT}")

function(run_compare name)
    execute_process(COMMAND "${CLI}" compare ${ARGN} -o "${OUT}/${name}" -c -j 2
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "compare ${name}: exit ${rc}\n${out}\n${err}")
    endif()
endfunction()

# Exactly one CSV matching `pattern`; its path goes to `var`.
function(one_csv var pattern)
    file(GLOB found "${pattern}")
    list(LENGTH found n)
    if(NOT n EQUAL 1)
        message(FATAL_ERROR "expected one file matching ${pattern}, found ${n}: ${found}")
    endif()
    set(${var} "${found}" PARENT_SCOPE)
endfunction()

function(same_file a b)
    file(READ "${a}" ta)
    file(READ "${b}" tb)
    if(NOT ta STREQUAL tb)
        message(FATAL_ERROR "tables differ:\n  ${a}\n  ${b}")
    endif()
endfunction()

run_compare(root --npu "${DEMO}/npu" --bench "${DEMO}/bench")
run_compare(step0 --npu "${DEMO}/npu/step0" --bench "${DEMO}/bench/step0")
run_compare(step1 --npu "${DEMO}/npu/step1" --bench "${DEMO}/bench/step1")
run_compare(rank0 --npu "${DEMO}/npu/step0/rank" --bench "${DEMO}/bench/step0/rank")
run_compare(file0 --npu "${DEMO}/npu/step0/rank/dump.json" --bench "${DEMO}/bench/step0/rank/dump.json")

# Roots: one folder per step, rank pairs named by their folders as on disk (a bare "rank" folder: rank-rank).
one_csv(root0 "${OUT}/root/step0/compare_result_rank-rank_*.csv")
one_csv(root1 "${OUT}/root/step1/compare_result_rank-rank_*.csv")
one_csv(step0 "${OUT}/step0/compare_result_rank-rank_*.csv")
one_csv(step1 "${OUT}/step1/compare_result_rank-rank_*.csv")
one_csv(rank0 "${OUT}/rank0/compare_result_*.csv")
one_csv(file0 "${OUT}/file0/compare_result_*.csv")
same_file("${root0}" "${step0}")
same_file("${root1}" "${step1}")
same_file("${step0}" "${rank0}")
same_file("${rank0}" "${file0}")
# The two steps are different runs: their tables must differ, or the comparison above proves nothing.
file(READ "${root0}" t0)
file(READ "${root1}" t1)
if(t0 STREQUAL t1)
    message(FATAL_ERROR "step0 and step1 gave the same table")
endif()
