# SPDX-License-Identifier: Apache-2.0
# compare --match-file on a shifted call (docs/graph.md "compare --match-file"):
#   cmake -DCLI=probescope-cli -DPAIR=fixtures/modelA_X_mix -DPROFILE=msprobe-1.2|msprobe-26 -DWORK=dir -P matchfile.cmake
# The bench rank of the real fixture pair is copied with its Functional.gelu.0 call renamed Functional.gelu.1 (keys,
# data names, tensor files), as if the bench had run one more gelu before it. Without the file its rows have no bench
# data; with a .vis.config pairing the two calls the CSV is the unshifted pair's CSV, value for value, and a stale
# entry of the file is a warning naming the file and the entry.
set(from "Functional.gelu.0.")
set(to "Functional.gelu.1.")
file(REMOVE_RECURSE ${WORK})
set(bench ${WORK}/bench)
file(MAKE_DIRECTORY ${bench})
foreach(json dump.json construct.json stack.json)
    if(EXISTS ${PAIR}/bench/step0/rank/${json})
        file(READ ${PAIR}/bench/step0/rank/${json} text)
        string(REPLACE "${from}" "${to}" text "${text}")
        file(WRITE ${bench}/${json} "${text}")
    endif()
endforeach()
if(IS_DIRECTORY ${PAIR}/bench/step0/rank/dump_tensor_data)
    file(GLOB tensors RELATIVE ${PAIR}/bench/step0/rank/dump_tensor_data ${PAIR}/bench/step0/rank/dump_tensor_data/*)
    file(MAKE_DIRECTORY ${bench}/dump_tensor_data)
    foreach(t ${tensors})
        string(REPLACE "${from}" "${to}" renamed "${t}")
        file(COPY_FILE ${PAIR}/bench/step0/rank/dump_tensor_data/${t} ${bench}/dump_tensor_data/${renamed})
    endforeach()
endif()
file(WRITE ${WORK}/match.vis.config "{\n    \"Functional.gelu.0.forward\": \"Functional.gelu.1.forward\",\n"
                                    "    \"Functional.gelu.0.backward\": \"Functional.gelu.1.backward\",\n"
                                    "    \"Functional.gelu.5.forward\": \"Functional.gelu.1.forward\"\n}")

# Runs one compare into WORK/<out>; sets <out>_csv (the CSV text) and <out>_stdout.
function(run_compare out benchDump)
    execute_process(COMMAND ${CLI} compare --npu ${PAIR}/npu/step0/rank/dump.json --bench ${benchDump}
                            -o ${WORK}/${out} --profile ${PROFILE} -c ${ARGN}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${out}: exit code ${rc}\n${stdout}\n${stderr}")
    endif()
    file(GLOB csv ${WORK}/${out}/compare_result*.csv)
    list(LENGTH csv n)
    if(NOT n EQUAL 1)
        message(FATAL_ERROR "${out}: expected one CSV, found '${csv}'\n${stdout}")
    endif()
    file(READ ${csv} text)
    set(${out}_csv "${text}" PARENT_SCOPE)
    set(${out}_stdout "${stdout}" PARENT_SCOPE)
endfunction()

run_compare(reference ${PAIR}/bench/step0/rank/dump.json)
run_compare(plain ${bench}/dump.json)
run_compare(matched ${bench}/dump.json --match-file ${WORK}/match.vis.config)

if(NOT plain_csv MATCHES "\nFunctional\\.gelu\\.0\\.forward\\.output\\.0,N/A,")
    message(FATAL_ERROR "without --match-file the shifted gelu should have no bench data:\n${plain_csv}")
endif()
if(NOT matched_csv MATCHES "\nFunctional\\.gelu\\.0\\.forward\\.output\\.0,Functional\\.gelu\\.1\\.forward\\.output\\.0,")
    message(FATAL_ERROR "with --match-file the gelu rows should be compared with the renamed call:\n${matched_csv}")
endif()
string(REPLACE "${to}" "${from}" back "${matched_csv}")
if(NOT back STREQUAL reference_csv)
    message(FATAL_ERROR "with --match-file the CSV should be the unshifted pair's (names aside)\n--- matched:\n${matched_csv}\n--- reference:\n${reference_csv}")
endif()
if(NOT matched_stdout MATCHES "match\\.vis\\.config: warning \\[compare\\.match-skipped\\]: \"Functional\\.gelu\\.5\\.forward\": \"Functional\\.gelu\\.1\\.forward\" dropped: neither side has a node Functional\\.gelu\\.5\\.forward")
    message(FATAL_ERROR "the stale entry should be a warning naming the file and the entry:\n${matched_stdout}")
endif()
# The first failing node is the unshifted pair's again.
string(REGEX MATCH "first failing node: [^ \n]+|no failing node" refFirst "${reference_stdout}")
string(REGEX MATCH "first failing node: [^ \n]+|no failing node" matchedFirst "${matched_stdout}")
if(NOT refFirst STREQUAL matchedFirst)
    message(FATAL_ERROR "first failing node '${matchedFirst}', the unshifted pair's is '${refFirst}'")
endif()
message(STATUS "${PROFILE}: shifted gelu unmatched without the file, compared with it; ${matchedFirst}")
