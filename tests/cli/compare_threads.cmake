# SPDX-License-Identifier: Apache-2.0
# Results never depend on -j (issue 26): a small real-shaped tensor pair (probescope-gencomparelarge, tensors of
# 0.4-6 MB, so streamed in several chunks) compared with -j 1 and -j 2 gives byte-identical CSVs, for every
# profile that reads tensors.
# cmake -DCLI=probescope-cli -DGEN=probescope-gencomparelarge -DOUT=dir -P compare_threads.cmake
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${GEN}" --kind real --scale 0.04 --out "${OUT}/pair"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generating the pair: exit ${rc}\n${out}\n${err}")
endif()

function(one_csv var pattern)
    file(GLOB found "${pattern}")
    list(LENGTH found n)
    if(NOT n EQUAL 1)
        message(FATAL_ERROR "expected one file matching ${pattern}, found ${n}: ${found}")
    endif()
    set(${var} "${found}" PARENT_SCOPE)
endfunction()

foreach(profile msprobe-26 msprobe-1.2)
    foreach(threads 1 2)
        execute_process(COMMAND "${CLI}" compare -i "${OUT}/pair/compare.json" -o "${OUT}/${profile}-j${threads}" -c
                                --profile ${profile} -j ${threads}
                        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
        # Exit 0, or 1 when a row fails its verdict (the pair has one injected error); never a usage error.
        if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
            message(FATAL_ERROR "${profile} -j ${threads}: exit ${rc}\n${out}\n${err}")
        endif()
        if(err MATCHES "error \\[")
            message(FATAL_ERROR "${profile} -j ${threads} reported errors:\n${err}")
        endif()
    endforeach()
    one_csv(one "${OUT}/${profile}-j1/compare_result*.csv")
    one_csv(two "${OUT}/${profile}-j2/compare_result*.csv")
    file(READ "${one}" a)
    file(READ "${two}" b)
    if(NOT a STREQUAL b)
        message(FATAL_ERROR "${profile}: -j 1 and -j 2 tables differ:\n  ${one}\n  ${two}")
    endif()
    # The metrics were computed (not a table of placeholders): some row holds a Cosine of 1.0 or 0.99....
    if(NOT a MATCHES ",(1\\.0|0\\.99[0-9]*),")
        message(FATAL_ERROR "${profile}: no computed Cosine in ${one}")
    endif()
endforeach()
file(REMOVE_RECURSE "${OUT}/pair")
