# SPDX-License-Identifier: Apache-2.0
# A scripted run of the window and the picture it wrote (issue 36): runs CMD, checks its exit code and stdout as
# expect.cmake does, then reads the PNG's header and checks its size is exactly EXPECT_SIZE ("1366x768").
#   cmake -DCMD=... -DPNG=file.png -DEXPECT_SIZE=WxH -DEXPECT_RC=n [-DEXPECT_OUT=regex] -P screenshot_size.cmake
file(REMOVE "${PNG}")
# The run and its exit code and stdout, as every scripted-mode test checks them.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/expect.cmake)
if(NOT EXISTS "${PNG}")
    message(FATAL_ERROR "no picture written to ${PNG}\nstdout:\n${out}\nstderr:\n${err}")
endif()
# PNG: 8 bytes of signature, then the IHDR chunk (length, "IHDR", width, height as 32-bit big-endian numbers).
file(READ "${PNG}" signature LIMIT 8 HEX)
if(NOT signature STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${PNG} is not a PNG (starts with ${signature})")
endif()
file(READ "${PNG}" header OFFSET 16 LIMIT 8 HEX)
string(SUBSTRING "${header}" 0 8 w)
string(SUBSTRING "${header}" 8 8 h)
math(EXPR width "0x${w}")
math(EXPR height "0x${h}")
if(NOT "${width}x${height}" STREQUAL EXPECT_SIZE)
    message(FATAL_ERROR "${PNG} is ${width}x${height}, expected ${EXPECT_SIZE}")
endif()
