# SPDX-License-Identifier: Apache-2.0
# Install rules for everything that is not a build target: the demo pair, the desktop entry, icons and
# AppStream metainfo, and the Debian docs. Programs and libraries install from their own folders.
# Paths are fixed relative to the prefix because the programs look for them there
# (<bin>/../share/probescope/demo, <bin>/../lib/probescope; see MainWindow::demoDir, loadRunUtBackend).
include(GNUInstallDirs)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/demo/ DESTINATION ${CMAKE_INSTALL_DATADIR}/probescope/demo)

set(_desktop ${PROJECT_SOURCE_DIR}/resources/desktop)
install(FILES ${_desktop}/probescope.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${_desktop}/probescope.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${_desktop}/probescope.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
# The PNGs are rendered from probescope.svg once and checked in (rsvg-convert -w N -h N), so the build needs
# no SVG renderer.
foreach(_size 16 24 32 48 64 128 256)
    install(FILES ${_desktop}/icons/probescope-${_size}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${_size}x${_size}/apps RENAME probescope.png)
endforeach()

# Debian policy wants a copyright file and, in a native package, a changelog.gz compressed with -9n.
set(_docDir ${CMAKE_INSTALL_DATADIR}/doc/probescope)
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in ${PROJECT_BINARY_DIR}/installer/changelog @ONLY)
execute_process(COMMAND gzip -9nc INPUT_FILE ${PROJECT_BINARY_DIR}/installer/changelog
                OUTPUT_FILE ${PROJECT_BINARY_DIR}/installer/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${PROJECT_BINARY_DIR}/installer/changelog.gz
        DESTINATION ${_docDir})
# The MPI plugin's package (installer/cpack.cmake) carries the same two files under its own name.
if(TARGET probescope_cli_mpi_plugin)
    install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${PROJECT_BINARY_DIR}/installer/changelog.gz
            DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/probescope-mpi COMPONENT mpi)
endif()
