// SPDX-License-Identifier: Apache-2.0
// The fused metric pass for every x86-64 CPU (see kernelsimpl.h).
#define PROBESCOPE_KERNEL_NS generic
#include "core/compare/metrics/kernelsimpl.h"
