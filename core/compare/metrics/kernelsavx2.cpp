// SPDX-License-Identifier: Apache-2.0
// The fused metric pass for CPUs with AVX2, chosen at run time (see kernelsimpl.h).
#define PROBESCOPE_KERNEL_NS avx2
#include "core/compare/metrics/kernelsimpl.h"
