# The libraries of the Windows cross build (scripts/dev package-windows), as the targets the Linux
# build gets from find_package / pkg-config: static libraries built by scripts/windows/build-deps.sh
# from Debian's source packages, and the header-only ones linked into the same prefix.
if(NOT ATTNVIZ_WINDOWS_DEPS OR NOT EXISTS "${ATTNVIZ_WINDOWS_DEPS}/lib/libimgui.a")
  message(FATAL_ERROR "ATTNVIZ_WINDOWS_DEPS must name the prefix scripts/windows/build-deps.sh filled "
                      "(got '${ATTNVIZ_WINDOWS_DEPS}'); use scripts/dev package-windows.")
endif()
set(_deps "${ATTNVIZ_WINDOWS_DEPS}")

add_library(Eigen3::Eigen INTERFACE IMPORTED)
target_include_directories(Eigen3::Eigen INTERFACE "${_deps}/include/eigen3")
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json INTERFACE "${_deps}/include")
# stb: header-only here; io/stb_windows.cpp compiles the implementations Linux takes from libstb.so.
add_library(stb INTERFACE IMPORTED)
target_include_directories(stb INTERFACE "${_deps}/include/stb")

add_library(PkgConfig::PCRE2 STATIC IMPORTED)
set_target_properties(PkgConfig::PCRE2 PROPERTIES IMPORTED_LOCATION "${_deps}/lib/libpcre2-8.a"
                      INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include" INTERFACE_COMPILE_DEFINITIONS PCRE2_STATIC)
# ICU 72's common library and the few data items attnviz opens (static: U_STATIC_IMPLEMENTATION).
add_library(ICU::data STATIC IMPORTED)
set_target_properties(ICU::data PROPERTIES IMPORTED_LOCATION "${_deps}/lib/libicudata.a")
add_library(ICU::uc STATIC IMPORTED)
set_target_properties(ICU::uc PROPERTIES IMPORTED_LOCATION "${_deps}/lib/libicuuc.a"
                      INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include" INTERFACE_COMPILE_DEFINITIONS U_STATIC_IMPLEMENTATION
                      INTERFACE_LINK_LIBRARIES "ICU::data;advapi32")
add_library(PkgConfig::GLFW3 STATIC IMPORTED)
set_target_properties(PkgConfig::GLFW3 PROPERTIES IMPORTED_LOCATION "${_deps}/lib/libglfw3.a"
                      INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include" INTERFACE_LINK_LIBRARIES "gdi32")
add_library(OpenGL::GL INTERFACE IMPORTED)
set_target_properties(OpenGL::GL PROPERTIES INTERFACE_LINK_LIBRARIES opengl32)
# Dear ImGui 1.86 with its GLFW and OpenGL 3 backends (imm32: its Windows IME support).
add_library(imgui STATIC IMPORTED)
set_target_properties(imgui PROPERTIES IMPORTED_LOCATION "${_deps}/lib/libimgui.a"
                      INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include/imgui"
                      INTERFACE_LINK_LIBRARIES "PkgConfig::GLFW3;OpenGL::GL;imm32")
