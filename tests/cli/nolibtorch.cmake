# SPDX-License-Identifier: Apache-2.0
# probescope-cli must start without LibTorch (issue 14): only its run-ut plugin may need libtorch/libc10.
execute_process(COMMAND readelf -d ${CLI} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${CLI} failed (${rc})")
endif()
if(out MATCHES "libtorch|libc10")
    message(FATAL_ERROR "probescope-cli links LibTorch directly:\n${out}")
endif()
if(NOT out MATCHES "NEEDED")
    message(FATAL_ERROR "no dynamic section in ${CLI}?\n${out}")
endif()
