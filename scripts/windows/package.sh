#!/usr/bin/env bash
# Lays out and zips the Windows build (scripts/dev package-windows):
#   scripts/windows/package.sh BUILD_DIR DEPS_PREFIX OUT_DIR VERSION
# -> OUT_DIR/attnviz-VERSION-windows-x86_64/ and OUT_DIR/attnviz-VERSION-windows-x86_64.zip:
#   attnviz.exe (static: no DLL beside it), share/attnviz/{assets,shaders,fonts}, README.md,
#   README-windows.txt, licenses/ (attnviz's and every bundled library's and font's).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$1" prefix="$2" out="$3" version="$4"
name="attnviz-$version-windows-x86_64"
dir="$out/$name"
rm -rf "$dir" "$out/$name.zip"
mkdir -p "$dir/share/attnviz/assets" "$dir/share/attnviz/fonts/dejavu" "$dir/share/attnviz/fonts/droid" "$dir/licenses"
cp "$build/app/attnviz.exe" "$dir/"
x86_64-w64-mingw32-strip "$dir/attnviz.exe"
cp -r "$here/assets/scenes" "$here/assets/models" "$dir/share/attnviz/assets/"
cp -r "$here/shaders" "$dir/share/attnviz/"
# The fonts the app draws with, from Debian's packages (the Linux build opens them in /usr/share/fonts).
for f in DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSansMono.ttf; do
  cp "/usr/share/fonts/truetype/dejavu/$f" "$dir/share/attnviz/fonts/dejavu/"
done
cp /usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf "$dir/share/attnviz/fonts/droid/"
cp "$here/README.md" "$dir/"
cp "$here/scripts/windows/README-windows.txt" "$dir/"
# Licences: attnviz's own, the fonts', the libraries compiled in (their Debian source packages').
cp "$here/assets/desktop/copyright" "$dir/licenses/attnviz.txt"
cp /usr/share/doc/fonts-dejavu-core/copyright "$dir/licenses/fonts-dejavu-core.txt"
cp /usr/share/doc/fonts-droid-fallback/copyright "$dir/licenses/fonts-droid-fallback.txt"
for d in "$prefix"/licenses/*/; do
  n="$(basename "$d")"
  for f in "$d"*; do cp "$f" "$dir/licenses/$n-$(basename "$f" .txt).txt"; done
done
# MinGW-w64's runtime (winpthreads, libgcc, libstdc++) is linked in statically.
for p in mingw-w64-common mingw-w64-x86-64-dev gcc-mingw-w64-base; do
  [ -f "/usr/share/doc/$p/copyright" ] && cp "/usr/share/doc/$p/copyright" "$dir/licenses/$p.txt"
done
# Windows line ends for the text files a user opens in Notepad.
for f in "$dir/README-windows.txt" "$dir"/licenses/*.txt; do sed -i 's/\r*$/\r/' "$f"; done
(cd "$out" && zip -qr -X "$name.zip" "$name")
echo "$out/$name.zip"
