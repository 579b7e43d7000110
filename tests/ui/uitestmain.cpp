// SPDX-License-Identifier: Apache-2.0
// GoogleTest main for widget and model tests: a real QApplication, offscreen unless a display
// platform was chosen (Xvfb runs set QT_QPA_PLATFORM=xcb themselves).
#include <QApplication>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

int main(int argc, char** argv)
{
    if (!std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 0);
    // Settings and recent files written by tests go to a test location, never the user's own.
    QStandardPaths::setTestModeEnabled(true);
    // The reopen cache too (session/paircache.h): a folder of this run's own, removed at the end.
    const std::string cache = (std::filesystem::temp_directory_path()
                               / ("probescope-tests-cache-" + std::to_string(::getpid()))).string();
    setenv("PROBESCOPE_CACHE_DIR", cache.c_str(), 1);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ProbeScopeTests");
    // One settings file per test process: ctest runs test binaries side by side, and a recent list or a saved
    // layout one test writes must not appear in another test's window (FirstImpression read another test's
    // recent pair when both ran at once).
    QApplication::setApplicationName(QStringLiteral("probescope-tests-%1").arg(::getpid()));
    ::testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    const QString settingsFile = QSettings().fileName();
    QFile::remove(settingsFile);
    std::error_code ec;
    std::filesystem::remove_all(cache, ec);
    return rc;
}
