# SPDX-License-Identifier: Apache-2.0
# config_check -c CKPT_A CKPT_B (docs/checkpoint-compare.md): the fixture pair written and checked as a dict by
# tst_ckpt; here the command line: exit codes, the log, an existing output refused, a hostile pickle refused.
# cmake -DCLI=... -DFIX=<ckpt_compare fixtures> -DDATA=<tests/data/ckpt> -DOUT=<scratch folder> -P ckpt.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
function(run rc_expected)
    execute_process(COMMAND ${CLI} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc STREQUAL rc_expected)
        message(FATAL_ERROR "${ARGN}: exit code ${rc}, expected ${rc_expected}\nstdout:\n${out}\nstderr:\n${err}")
    endif()
    set(out "${out}" PARENT_SCOPE)
    set(err "${err}" PARENT_SCOPE)
endfunction()

run(0 config_check -c ${FIX}/tp2_pp2_legacy_names/inputs/ckptA ${FIX}/tp2_pp2_legacy_names/inputs/ckptB/iter_0000200
    -o ${OUT}/ckpt_similarity.json)
if(NOT out MATCHES "\\[INFO\\] Comparing model checkpoint.\n\\[INFO\\] Loaded checkpoint from iteration 200\n\\[INFO\\] Found 39 total parameters across all ranks\n\\[INFO\\] Loaded checkpoint from iteration 200\n\\[INFO\\] Found 38 total parameters across all ranks\n\\[WARNING\\] Parameters not in ckpt2: {'output_layer.weight'}\n\\[WARNING\\] Parameters not in ckpt1: set\\(\\)\n\\[INFO\\] Comparison results written to")
    message(FATAL_ERROR "unexpected log:\n${out}")
endif()
if(NOT EXISTS ${OUT}/ckpt_similarity.json)
    message(FATAL_ERROR "no output written")
endif()

# msprobe refuses an existing output (check_path_not_exists); ProbeScope never replaces a file either.
run(1 config_check -c ${FIX}/tp2/inputs/ckptA ${FIX}/tp2/inputs/ckptB -o ${OUT}/ckpt_similarity.json)
if(NOT err MATCHES "ckpt_similarity.json: error \\[output.exists\\]")
    message(FATAL_ERROR "an existing output was not refused:\n${err}")
endif()

# REDUCE of os.system: refused naming the file, the opcode and its offset; nothing runs, nothing is written.
run(1 config_check -c ${DATA}/hostile/reduce_os_system ${FIX}/tp2/inputs/ckptB -o ${OUT}/hostile.json)
if(NOT err MATCHES "reduce_os_system/iter_0000001/mp_rank_00/model_optim_rng.pt:byte [0-9]+: error \\[tensor.pickle-unsafe\\]: REDUCE at pickle offset [0-9]+ would call os.system")
    message(FATAL_ERROR "the hostile pickle was not refused as expected:\n${err}")
endif()
if(EXISTS ${OUT}/hostile.json)
    message(FATAL_ERROR "an output was written for a refused input")
endif()

# Shards that cannot be concatenated: a clear error (msprobe stops with numpy's ValueError).
run(1 config_check -c ${DATA}/shard_shape_mismatch/ckpt ${DATA}/shard_shape_mismatch/ckpt -o ${OUT}/shape.json)
if(NOT err MATCHES "mp_rank_01/model_optim_rng.pt: error \\[ckpt.shard-shape\\]: cannot concatenate")
    message(FATAL_ERROR "inconsistent shards were not refused:\n${err}")
endif()
