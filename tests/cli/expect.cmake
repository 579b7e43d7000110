# SPDX-License-Identifier: Apache-2.0
# Runs one command and checks its exit code and output: cmake -DCMD=... -DEXPECT_RC=n -DEXPECT_OUT=regex
# [-DEXPECT_ERR=regex] [-DREMOVE=file] -P expect.cmake. (ctest alone cannot check a specific non-zero exit code.)
separate_arguments(args UNIX_COMMAND "${CMD}")
# -DREMOVE=file: an output of an earlier run of the test, removed first (ProbeScope never replaces an output).
if(DEFINED REMOVE AND NOT REMOVE STREQUAL "")
    file(REMOVE "${REMOVE}")
endif()
execute_process(COMMAND ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL EXPECT_RC)
    message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_OUT AND NOT out MATCHES "${EXPECT_OUT}")
    message(FATAL_ERROR "stdout does not match '${EXPECT_OUT}':\n${out}")
endif()
if(DEFINED EXPECT_ERR AND NOT err MATCHES "${EXPECT_ERR}")
    message(FATAL_ERROR "stderr does not match '${EXPECT_ERR}':\n${err}")
endif()
