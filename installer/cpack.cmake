# SPDX-License-Identifier: Apache-2.0
# The Debian packages: `cpack -G DEB` in a Release build (no option needed) makes
# - probescope_<version>_<arch>.deb: the programs, the run_ut plugins, the collection library with its CMake
#   package and headers, the demo pair, the desktop entry, icons and metainfo (translations are compiled into
#   the programs, :/i18n);
# - probescope-mpi_<version>_<arch>.deb: the whole-job compare's MPI plugin (libprobescope-cli-mpi.so), which
#   only `mpirun`/`srun` runs load. It brings Open MPI, so it is a Recommends of probescope, not a Depends: a
#   user who never launches under MPI installs no MPI runtime, and the CLI says which package to add when a
#   launcher is used without it (app/cli/mpiloader.cpp).
set(CPACK_PACKAGE_NAME probescope)
set(CPACK_PACKAGE_VENDOR "The ProbeScope developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inspect and compare msprobe precision dumps")
# One string, never a CMake list: a list is joined with ';', which dpkg shows at the start of each continuation
# line of the Description. CPack indents each line by one space for the control file.
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "ProbeScope compares the precision dumps that MindStudio Probe (msprobe)\n"
    "and ptdbg_ascend write of a training run on the target device and of a\n"
    "reference run, and finds where the two runs first diverge: a desktop\n"
    "application (probescope), a command-line tool (probescope-cli) with\n"
    "msprobe's compare, run_ut and api_precision_compare, and a collection\n"
    "library for LibTorch training programs.")
# The project has no web site and no mailing address, so the package names none: no Homepage field. Debian
# requires a Maintainer with an address, so the default one is in the reserved top-level domain `.invalid`
# (RFC 2606), which says openly that there is no address to write to; whoever distributes the packages sets
# PROBESCOPE_PACKAGE_MAINTAINER to their own.
set(PROBESCOPE_PACKAGE_MAINTAINER "ProbeScope local build <unmaintained@probescope.invalid>"
    CACHE STRING "The Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${PROBESCOPE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PROBESCOPE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

# Components: everything installed without a component and the collection library ("collect") go into the
# main package; the MPI plugin ("mpi", app/cli/CMakeLists.txt) into its own, and the Python module ("python",
# core/collect/python) into python3-probescope: it needs python3-torch, which a GUI or CLI user should not have
# to install.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_COMPONENT_UNSPECIFIED_GROUP main)
set(CPACK_COMPONENT_COLLECT_GROUP main)
set(CPACK_COMPONENT_MPI_GROUP mpi)
set(CPACK_COMPONENT_PYTHON_GROUP python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-probescope)
set(CPACK_DEBIAN_PYTHON_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
string(CONCAT CPACK_DEBIAN_PYTHON_DESCRIPTION
    "ProbeScope's collection library for Python training scripts: the module\n"
    "probescope (probescope.pytorch), which dumps msprobe-format precision data\n"
    "with msprobe 1.2's PrecisionDebugger API, so a script changes only its\n"
    "import line. Statistics, md5 and tensor files are written in C++, in the\n"
    "background while the model computes.")
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME probescope)
set(CPACK_DEBIAN_MPI_PACKAGE_NAME probescope-mpi)
set(CPACK_DEBIAN_MAIN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_MPI_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "probescope (= ${PROJECT_VERSION})")
# The synopsis line of both packages is CPACK_PACKAGE_DESCRIPTION_SUMMARY (CPackDeb prepends it).
set(CPACK_DEBIAN_MAIN_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
string(CONCAT CPACK_DEBIAN_MPI_DESCRIPTION
    "The MPI engine of ProbeScope's whole-job compare: the plugin that spreads\n"
    "the (step, rank) pairs of a whole-job compare over the processes of an\n"
    "mpirun or srun launch (Open MPI). probescope-cli loads it only under an\n"
    "MPI launcher; without it a job is compared with local threads.")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# dpkg-shlibdeps finds the libraries the programs and plugins link (Qt, QCustomPlot, LibTorch, yaml-cpp,
# libxlsxwriter, zlib). What is loaded by path rather than linked is named here: Qt's own zh_CN strings,
# and a CJK font for the Chinese UI. The collection library's users compile against LibTorch's headers.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_MAIN_PACKAGE_RECOMMENDS "probescope-mpi, qt6-translations-l10n, fonts-noto-cjk")
# The Python module `probescope` (core/collect/python, in /usr/lib/python3/dist-packages/probescope) links
# libtorch_python, which dpkg-shlibdeps finds; it runs in Debian's python3 with python3-torch's `torch`, which
# nothing links, so it is named here.
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "probescope (= ${PROJECT_VERSION}), python3, python3-torch")
if(TARGET probescope_python)
    set(CPACK_DEBIAN_MAIN_PACKAGE_SUGGESTS "python3-probescope, libtorch-dev, cmake")
else()
    set(CPACK_DEBIAN_MAIN_PACKAGE_SUGGESTS "libtorch-dev, cmake")
endif()
# Debian's file permissions (lintian: non-standard-dir-perm, non-standard-file-perm) whatever the umask.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

include(CPack)
