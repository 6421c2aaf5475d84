#!/usr/bin/env bash
# Builds the libraries attnviz links on Windows from Debian's own source packages (apt-get source), with
# MinGW-w64, into PREFIX (static libraries + headers). Run by `scripts/dev package-windows`; each
# library is built once and kept (PREFIX/.done-NAME), so later runs reuse it.
#   scripts/windows/build-deps.sh DEPS_DIR
# Header-only libraries (Eigen, nlohmann-json, stb) come from the build machine's Debian packages.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
deps="$(mkdir -p "$1" && cd "$1" && pwd)"
src="$deps/src" prefix="$deps/prefix"
mkdir -p "$src" "$prefix/include" "$prefix/lib" "$prefix/licenses"
toolchain="$here/scripts/cmake/mingw-w64.cmake"
jobs="$(nproc 2>/dev/null || echo 2)"
niced=(nice -n 15)

fetch() {  # fetch SOURCE_PACKAGE: unpacks it into $src/SOURCE_PACKAGE (the newest version the archive has)
  local pkg="$1" dir="$src/$1"
  [ -d "$dir" ] && return 0
  local tmp="$src/.fetch-$pkg"
  rm -rf "$tmp"; mkdir -p "$tmp"
  # Newest first; a version listed but missing from the mirror (a security update's pool) falls back
  # to the next one the archive has.
  local v ok=0
  for v in $(apt-cache showsrc "$pkg" | sed -n 's/^Version: //p' | sort -Vru); do
    if (cd "$tmp" && apt-get source -qq "$pkg=$v" >/dev/null 2>&1); then ok=1; break; fi
  done
  [ "$ok" -eq 1 ] || { echo "attnviz: apt-get source $pkg failed (is a deb-src entry set up?)" >&2; exit 1; }
  local unpacked
  unpacked="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -1)"
  mv "$unpacked" "$dir"
  rm -rf "$tmp"
}


done_mark() { [ -f "$prefix/.done-$1" ]; }

# PCRE2 (the tokenizers' Unicode regexes): 8-bit library with its JIT, static.
if ! done_mark pcre2; then
  fetch pcre2
  rm -rf "$deps/build-pcre2"
  "${niced[@]}" cmake -S "$src/pcre2" -B "$deps/build-pcre2" -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF \
    -DPCRE2_BUILD_PCRE2_8=ON -DPCRE2_BUILD_PCRE2_16=OFF -DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_SUPPORT_JIT=ON \
    -DPCRE2_SUPPORT_UNICODE=ON -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF >/dev/null
  "${niced[@]}" cmake --build "$deps/build-pcre2" -j "$jobs" >/dev/null
  cmake --install "$deps/build-pcre2" >/dev/null
  mkdir -p "$prefix/licenses/pcre2"; cp "$src/pcre2/LICENCE" "$prefix/licenses/pcre2/"
  touch "$prefix/.done-pcre2"
fi

# GLFW (window, input, the OpenGL context), static.
if ! done_mark glfw3; then
  fetch glfw3
  rm -rf "$deps/build-glfw3"
  "${niced[@]}" cmake -S "$src/glfw3" -B "$deps/build-glfw3" -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF \
    -DGLFW_BUILD_EXAMPLES=OFF -DGLFW_BUILD_TESTS=OFF -DGLFW_BUILD_DOCS=OFF >/dev/null
  "${niced[@]}" cmake --build "$deps/build-glfw3" -j "$jobs" >/dev/null
  cmake --install "$deps/build-glfw3" >/dev/null
  mkdir -p "$prefix/licenses/glfw"; cp "$src/glfw3/LICENSE.md" "$prefix/licenses/glfw/"
  touch "$prefix/.done-glfw3"
fi

# Dear ImGui 1.86: the core, the GLFW and OpenGL 3 backends, as Debian's libimgui-dev builds them
# (its own stb_truetype and stb_rect_pack inside, as upstream does), static.
if ! done_mark imgui; then
  fetch imgui
  b="$deps/build-imgui"
  rm -rf "$b"; mkdir -p "$b"
  objs=()
  for f in imgui.cpp imgui_draw.cpp imgui_tables.cpp imgui_widgets.cpp imgui_demo.cpp \
           misc/cpp/imgui_stdlib.cpp backends/imgui_impl_glfw.cpp backends/imgui_impl_opengl3.cpp; do
    o="$b/$(basename "$f" .cpp).o"
    # (-Wno-stringop-overflow: GCC 12 misreads a memset in imgui_draw.cpp, upstream code)
    "${niced[@]}" x86_64-w64-mingw32-g++-posix -std=c++17 -O2 -Wno-stringop-overflow -I"$src/imgui" -I"$prefix/include" \
      -c "$src/imgui/$f" -o "$o" &
    objs+=("$o")
    # two compiles at a time
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  done
  wait
  rm -f "$prefix/lib/libimgui.a"
  x86_64-w64-mingw32-ar rcs "$prefix/lib/libimgui.a" "${objs[@]}"
  mkdir -p "$prefix/include/imgui/backends"
  cp "$src/imgui"/*.h "$src/imgui"/misc/cpp/imgui_stdlib.h "$prefix/include/imgui/"
  cp "$src/imgui"/backends/imgui_impl_glfw.h "$src/imgui"/backends/imgui_impl_opengl3*.h \
     "$prefix/include/imgui/backends/"
  mkdir -p "$prefix/licenses/imgui"; cp "$src/imgui/LICENSE.txt" "$prefix/licenses/imgui/"
  touch "$prefix/.done-imgui"
fi

# ICU 72 (the tokenizers' character classes, lower case, grapheme clusters and Unicode normal forms),
# the same version and data as Linux's libicu72 so token ids match: its common library compiled as it
# stands (no configure: ICU's headers detect MinGW), static; and a data library holding only what
# attnviz opens (the grapheme break rules and the NFKC tables; the rest of the properties are
# compiled into the common library), cut from Debian's icudt72l.dat with icupkg and turned into C by
# genccode (icu-devtools) under the entry point ICU looks for, icudt72_dat.
if ! done_mark icu; then
  fetch icu
  b="$deps/build-icu"
  rm -rf "$b"; mkdir -p "$b/obj" "$b/items"
  objs=()
  for f in "$src/icu/source/common"/*.cpp; do
    o="$b/obj/$(basename "$f" .cpp).o"
    # (-w: upstream's own deprecation warnings, about calls inside ICU)
    "${niced[@]}" x86_64-w64-mingw32-g++-posix -std=gnu++17 -O2 -w -DU_COMMON_IMPLEMENTATION \
      -DU_STATIC_IMPLEMENTATION -I"$src/icu/source/common" -c "$f" -o "$o" &
    objs+=("$o")
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  done
  wait
  rm -f "$prefix/lib/libicuuc.a" "$prefix/lib/libicudata.a"
  x86_64-w64-mingw32-ar rcs "$prefix/lib/libicuuc.a" "${objs[@]}"
  printf '%s\n' brkitr/res_index.res brkitr/root.res brkitr/char.brk nfkc.nrm >"$b/items.txt"
  icupkg -x "$b/items.txt" -d "$b/items" "$src/icu/source/data/in/icudt72l.dat"
  # (--ignore-deps: brkitr/root.res also names the word, line and sentence rules, left out)
  icupkg -tl --ignore-deps -s "$b/items" -a "$b/items.txt" new "$b/icudt72l.dat" 2>/dev/null
  # genccode names the array after the file: icudt72.dat gives icudt72_dat
  cp "$b/icudt72l.dat" "$b/icudt72.dat"
  genccode -q -d "$b" "$b/icudt72.dat"
  "${niced[@]}" x86_64-w64-mingw32-gcc-posix -O2 -I"$src/icu/source/common" -c "$b/icudt72_dat.c" -o "$b/icudt72_dat.o"
  x86_64-w64-mingw32-ar rcs "$prefix/lib/libicudata.a" "$b/icudt72_dat.o"
  rm -rf "$prefix/include/unicode"; cp -r "$src/icu/source/common/unicode" "$prefix/include/unicode"
  mkdir -p "$prefix/licenses/icu"; cp "$src/icu/LICENSE" "$prefix/licenses/icu/"
  rm -rf "$b/obj"
  touch "$prefix/.done-icu"
fi

# Header-only: Eigen, nlohmann-json and stb from the build machine's Debian packages, linked into the
# prefix so the cross compiler never sees the build machine's own /usr/include.
ln -sfn /usr/include/eigen3 "$prefix/include/eigen3"
ln -sfn /usr/include/nlohmann "$prefix/include/nlohmann"
ln -sfn /usr/include/stb "$prefix/include/stb"
for p in libeigen3-dev nlohmann-json3-dev libstb-dev; do
  mkdir -p "$prefix/licenses/$p"; cp "/usr/share/doc/$p/copyright" "$prefix/licenses/$p/"
done
