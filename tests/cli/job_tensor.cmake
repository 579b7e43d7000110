# SPDX-License-Identifier: Apache-2.0
# Whole-job compare of tensor dumps (issue 15): the demo's tensor-mode pair copied into rank0 and rank1 of a root.
# Each pair's table must equal the single-pair compare of the demo byte for byte, and with both ranks failing in
# the same node after no communication, the origin is the lower rank.
# cmake -DCLI=probescope-cli -DDEMO=resources/demo -DOUT=dir -P job_tensor.cmake
file(REMOVE_RECURSE "${OUT}")
foreach(side npu bench)
    foreach(rank rank0 rank1)
        file(COPY "${DEMO}/${side}/step0/rank/" DESTINATION "${OUT}/job/${side}/step0/${rank}")
    endforeach()
endforeach()
execute_process(COMMAND "${CLI}" compare --npu "${OUT}/job/npu" --bench "${OUT}/job/bench" -o "${OUT}/root" -c
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
execute_process(COMMAND "${CLI}" compare --npu "${DEMO}/npu/step0/rank/dump.json"
                        --bench "${DEMO}/bench/step0/rank/dump.json" -o "${OUT}/single" -c
                RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
if(NOT rc EQUAL 0 OR NOT rc1 EQUAL 0)
    message(FATAL_ERROR "exit ${rc} / ${rc1}\n${out}\n${err}\n${err1}")
endif()
file(GLOB single "${OUT}/single/compare_result_*.csv")
file(READ "${single}" want)
foreach(rank rank0 rank1)
    file(GLOB got "${OUT}/root/step0/compare_result_${rank}-${rank}_*.csv")
    file(READ "${got}" have)
    if(NOT have STREQUAL want)
        message(FATAL_ERROR "${rank}: the job's table differs from the single-pair compare")
    endif()
endforeach()
string(STRIP "${out}" out)
string(REGEX REPLACE ".*\n" "" line "${out}")
if(NOT line STREQUAL "job origin: step 0 rank0 Aten.gelu.0.forward (execution index 38)")
    message(FATAL_ERROR "origin: ${line}")
endif()
file(READ "${OUT}/root/job_summary.json" summary)
string(JSON metric GET "${summary}" pairs 1 worst_metric metric)
string(JSON culprit GET "${summary}" pairs 1 first_failure culprit)
if(NOT metric STREQUAL "Cosine" OR NOT culprit)
    message(FATAL_ERROR "tensor summary: worst metric ${metric}, culprit ${culprit}")
endif()
