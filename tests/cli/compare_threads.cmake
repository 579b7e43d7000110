# SPDX-License-Identifier: Apache-2.0
# Results never depend on -j (issue 26): tensor pairs compared with -j 1 and -j 2 give byte-identical CSVs, for
# every profile that reads tensors (msprobe-26, msprobe-1.2 and ptdbg on its .pkl pair). Two generated pairs
# (probescope-gencomparelarge): a small real-shaped one (tensors of 0.4-6 MB, streamed in several chunks) and one whose
# outputs have 77 chunks of 65,536 elements, past the 64 from which a pair's chunks go to idle threads (issue 33: the
# test reached neither that path nor the ptdbg profile before).
# cmake -DCLI=probescope-cli -DGEN=probescope-gencomparelarge -DOUT=dir -P compare_threads.cmake
file(REMOVE_RECURSE "${OUT}")
foreach(kind real split)
    set(args --kind ${kind} --ptdbg --out "${OUT}/${kind}")
    if(kind STREQUAL "real")
        list(APPEND args --scale 0.04)
    endif()
    execute_process(COMMAND "${GEN}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "generating the ${kind} pair: exit ${rc}\n${out}\n${err}")
    endif()
endforeach()
# The split pair does reach the parallel path: an output of more than 64 chunks of 65,536 float32 elements.
file(SIZE "${OUT}/split/npu/step0/rank/dump_tensor_data/Functional.split1.1.forward.output.0.pt" bytes)
math(EXPR chunks "${bytes} / (65536 * 4)")
if(chunks LESS 65)
    message(FATAL_ERROR "the split pair's output has ${chunks} chunks, not more than 64")
endif()

function(one_csv var pattern)
    file(GLOB found "${pattern}")
    list(LENGTH found n)
    if(NOT n EQUAL 1)
        message(FATAL_ERROR "expected one file matching ${pattern}, found ${n}: ${found}")
    endif()
    set(${var} "${found}" PARENT_SCOPE)
endfunction()

foreach(kind real split)
    foreach(profile msprobe-26 msprobe-1.2 ptdbg)
        set(input "${OUT}/${kind}/compare.json")
        if(profile STREQUAL "ptdbg")
            set(input "${OUT}/${kind}/ptdbg/compare.json")
        endif()
        set(run "${OUT}/${kind}-${profile}")
        foreach(threads 1 2)
            execute_process(COMMAND "${CLI}" compare -i "${input}" -o "${run}-j${threads}" -c --profile ${profile}
                                    -j ${threads}
                            RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
            # Exit 0, or 1 when a row fails its verdict (the pair has one injected error); never a usage error.
            if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
                message(FATAL_ERROR "${kind} ${profile} -j ${threads}: exit ${rc}\n${out}\n${err}")
            endif()
            if(err MATCHES "error \\[")
                message(FATAL_ERROR "${kind} ${profile} -j ${threads} reported errors:\n${err}")
            endif()
        endforeach()
        one_csv(one "${run}-j1/compare_result*.csv")
        one_csv(two "${run}-j2/compare_result*.csv")
        file(READ "${one}" a)
        file(READ "${two}" b)
        if(NOT a STREQUAL b)
            message(FATAL_ERROR "${kind} ${profile}: -j 1 and -j 2 tables differ:\n  ${one}\n  ${two}")
        endif()
        # The metrics were computed (not a table of placeholders): some row holds a Cosine of 1.0 or 0.99....
        if(NOT a MATCHES ",(1\\.0|0\\.99[0-9]*),")
            message(FATAL_ERROR "${kind} ${profile}: no computed Cosine in ${one}")
        endif()
        if(kind STREQUAL "split" AND NOT a MATCHES "Functional\\.split1\\.1\\.forward\\.output\\.0")
            message(FATAL_ERROR "${kind} ${profile}: the 77-chunk output is not in ${one}")
        endif()
    endforeach()
endforeach()
file(REMOVE_RECURSE "${OUT}/real" "${OUT}/split")
