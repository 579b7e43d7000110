// SPDX-License-Identifier: Apache-2.0
// The fused metric pass for CPUs with AVX-512 (F, VL, DQ, BW), chosen at run time for the compensated lanes only
// (see kernels.cpp, chunkStats): the same source as the AVX2 build, with 32 vector registers.
#define PROBESCOPE_KERNEL_NS avx512
#include "core/compare/metrics/kernelsimpl.h"
