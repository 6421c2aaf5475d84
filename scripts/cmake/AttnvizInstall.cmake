# Install rules (GNUInstallDirs) and the Debian package (CPack DEB). Included from the top CMakeLists.txt.
#
#   <prefix>/bin/attnviz
#   <prefix>/share/attnviz/assets/scenes/*.json, <prefix>/share/attnviz/shaders/*    (found at run time
#                                                   relative to the binary: io/files.cpp)
#   <prefix>/share/applications/attnviz.desktop, share/metainfo/attnviz.metainfo.xml
#   <prefix>/share/icons/hicolor/{scalable,48x48,128x128,256x256}/apps/attnviz.{svg,png}
#   <prefix>/share/man/man1/attnviz.1.gz, share/bash-completion/completions/attnviz
#   <prefix>/share/doc/attnviz/README.md (+ the pictures it shows)
set(attnviz_desktop "${PROJECT_SOURCE_DIR}/assets/desktop")

install(TARGETS attnviz RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/assets/scenes" DESTINATION "${ATTNVIZ_DATA_DIR}/assets")
# The shipped models (assets/models/induction-2l, which assets/scenes/induction_heads.json opens).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/assets/models" DESTINATION "${ATTNVIZ_DATA_DIR}/assets")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/assets/tours" DESTINATION "${ATTNVIZ_DATA_DIR}/assets")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/shaders" DESTINATION "${ATTNVIZ_DATA_DIR}")

install(FILES "${attnviz_desktop}/attnviz.desktop" DESTINATION "${CMAKE_INSTALL_DATADIR}/applications")
install(FILES "${attnviz_desktop}/attnviz.metainfo.xml" DESTINATION "${CMAKE_INSTALL_DATADIR}/metainfo")
install(FILES "${attnviz_desktop}/attnviz.svg" DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps")
foreach(size 48 128 256)
  install(FILES "${attnviz_desktop}/attnviz-${size}.png" DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps"
          RENAME attnviz.png)
endforeach()
# The man page (assets/desktop/attnviz.1, written by hand, plus every command's --help verbatim) and the
# bash completion (its flag lists) are generated from the linked binary's own --help texts each time
# it is linked, so they always list the flags it has.
# (the POST_BUILD step is in app/CMakeLists.txt, beside the target)
install(FILES "${CMAKE_BINARY_DIR}/attnviz.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
install(FILES "${CMAKE_BINARY_DIR}/attnviz.bash-completion" DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions"
        RENAME attnviz)

install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
# Debian policy's two files in every package's doc folder: the copyright statement and the changelog
# (Debian changelog format; gzip -n so the package is the same bytes on every build).
install(FILES "${attnviz_desktop}/copyright" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
set(attnviz_changelog_gz "${CMAKE_BINARY_DIR}/changelog.gz")
add_custom_command(OUTPUT "${attnviz_changelog_gz}"
                   COMMAND gzip -9nc "${attnviz_desktop}/changelog" > "${attnviz_changelog_gz}"
                   DEPENDS "${attnviz_desktop}/changelog" VERBATIM)
add_custom_target(attnviz_changelog DEPENDS "${attnviz_changelog_gz}")
add_dependencies(attnviz attnviz_changelog)  # built with the binary, so `cmake --install` finds it
install(FILES "${attnviz_changelog_gz}" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/assets/screenshots" DESTINATION "${CMAKE_INSTALL_DOCDIR}/assets")

# --- CPack: a .deb ---------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnviz)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
# The maintainer field: the project's address (a placeholder until the project has one; a packager sets
# theirs with -DATTNVIZ_PACKAGE_MAINTAINER="Name <address>").
set(ATTNVIZ_PACKAGE_MAINTAINER "attnviz developers <attnviz@example.org>" CACHE STRING "Maintainer: of the .deb")
set(CPACK_PACKAGE_CONTACT "${ATTNVIZ_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "see attention compute, one stage at a time")
set(CPACK_PACKAGE_DESCRIPTION
    "attnviz is a desktop app that teaches how attention works by computing it\n"
    "live: every stage of a multi-head attention layer as a heatmap with its\n"
    "formula, real numbers on hover, labs, GPT-2 / Llama-style models from local\n"
    "files, and headless dump/render commands.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # attnviz_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Shared libraries from dpkg-shlibdeps (libglfw3, libgl1, libimgui, libicu72, libpcre2, libstdc++ ...);
# the fonts are opened by path at run time, so they are listed by hand.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core, fonts-droid-fallback")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Only what `install()` lists above goes into the package.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};ALL;/")
set(CPACK_OUTPUT_FILE_PREFIX "${CMAKE_BINARY_DIR}/package")
include(CPack)
