# SPDX-License-Identifier: Apache-2.0
# The Debian package: `cpack -G DEB` in a Release build (no option needed) makes one probescope_<version>_<arch>.deb
# holding the programs, the run_ut plugins, the collection library with its CMake package and headers, the
# demo pair, the desktop entry, icons and metainfo. Translations are compiled into the programs (:/i18n).
set(CPACK_PACKAGE_NAME probescope)
set(CPACK_PACKAGE_VENDOR "The ProbeScope developers")
set(CPACK_PACKAGE_CONTACT "ProbeScope developers <probescope@users.noreply.github.com>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inspect and compare msprobe precision dumps")
set(CPACK_PACKAGE_DESCRIPTION
    "ProbeScope compares the precision dumps that MindStudio Probe (msprobe)\n"
    "and ptdbg_ascend write of a training run on the target device and of a\n"
    "reference run, and finds where the two runs first diverge: a desktop\n"
    "application (probescope), a command-line tool (probescope-cli) with\n"
    "msprobe's compare, run_ut and api_precision_compare, and a collection\n"
    "library for LibTorch training programs.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_PACKAGE_NAME probescope)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/probescope/probescope")
# dpkg-shlibdeps finds the libraries the programs and plugins link (Qt, QCustomPlot, LibTorch, yaml-cpp,
# libxlsxwriter, zlib). What is loaded by path rather than linked is named here: Qt's own zh_CN strings,
# and a CJK font for the Chinese UI. The collection library's users compile against LibTorch's headers.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-translations-l10n, fonts-noto-cjk")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libtorch-dev, cmake")
# Debian's file permissions (lintian: non-standard-dir-perm, non-standard-file-perm) whatever the umask.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

include(CPack)
