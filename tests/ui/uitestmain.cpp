// SPDX-License-Identifier: Apache-2.0
// GoogleTest main for widget and model tests: a real QApplication, offscreen unless a display
// platform was chosen (Xvfb runs set QT_QPA_PLATFORM=xcb themselves).
#include <QApplication>
#include <QStandardPaths>

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv)
{
    if (!std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 0);
    // Settings and recent files written by tests go to a test location, never the user's own.
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ProbeScopeTests");
    QApplication::setApplicationName("probescope-tests");
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
