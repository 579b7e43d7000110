// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace probescope::testing {

/**
 * @brief Whether a test may skip when a fixture it reads is missing (docs/testing.md, "Fixtures").
 *
 * A test that cannot find its fixture tests nothing; passing it would be a lie. So a missing fixture FAILS the test,
 * unless the environment variable PROBESCOPE_ALLOW_MISSING_FIXTURES=1 says that this checkout has no
 * ../shared/fixtures on purpose: then the test is skipped, saying which fixture is missing.
 */
inline bool missingFixturesAllowed()
{
    const char* allow = std::getenv("PROBESCOPE_ALLOW_MISSING_FIXTURES");
    return allow && std::strcmp(allow, "1") == 0;
}

} // namespace probescope::testing

/// A fixture is missing (`what` says which): the test fails, or skips under PROBESCOPE_ALLOW_MISSING_FIXTURES=1.
/// Returns from the test function, as GTEST_FAIL and GTEST_SKIP do.
#define PROBESCOPE_FIXTURE_MISSING(what)                                                                               \
    do {                                                                                                               \
        if (::probescope::testing::missingFixturesAllowed())                                                           \
            GTEST_SKIP() << "fixture missing (allowed by PROBESCOPE_ALLOW_MISSING_FIXTURES=1): " << what;              \
        else                                                                                                           \
            GTEST_FAIL() << "fixture missing: " << what                                                                \
                         << " (the fixtures are ../shared/fixtures or $PROBESCOPE_FIXTURES; set "                      \
                            "PROBESCOPE_ALLOW_MISSING_FIXTURES=1 to skip such tests instead)";                          \
    } while (0)

/// The one "fixture or fail" check: `fixturePath` (a file or folder) must exist.
#define PROBESCOPE_REQUIRE_FIXTURE(fixturePath)                                                                        \
    do {                                                                                                               \
        const std::filesystem::path probescopeFixture_ = (fixturePath);                                                \
        std::error_code probescopeFixtureError_;                                                                       \
        if (!std::filesystem::exists(probescopeFixture_, probescopeFixtureError_))                                     \
            PROBESCOPE_FIXTURE_MISSING(probescopeFixture_);                                                            \
    } while (0)
