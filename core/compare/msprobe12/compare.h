// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/compare/match/mapping.h"
#include "core/compare/table/comparetable.h"

#include <memory>

namespace probescope::compare {

class ProfileRules;

/// Compares two dump files the way msprobe 1.2.2 does (compare-spec Appendix A).
Result<std::shared_ptr<const CompareTable>> compareDumps(const dump::DumpFile& npu, const dump::DumpFile& bench,
                                                         const CompareOptions& options, ProgressSink* progress = nullptr);

/// msprobe 1.2.2's data-mapping mode (compare-spec Appendix A.13): one row per mapping item whose names
/// both exist, in file order; no matching, dtype or struct test.
Result<std::shared_ptr<const CompareTable>> compareWithDataMapping(const dump::DumpFile& npu,
                                                                   const dump::DumpFile& bench,
                                                                   const DataMapping& mapping,
                                                                   const CompareOptions& options,
                                                                   ProgressSink* progress = nullptr);

namespace msprobe12 {
/// msprobe 1.2.2 behind the profile seam (msprobe12/profile.cpp); compare/pipeline/profiles.h's rulesOf gives it.
const ProfileRules& rules();
}

} // namespace probescope::compare
