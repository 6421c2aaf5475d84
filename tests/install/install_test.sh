#!/usr/bin/env bash
# The installed layout works on its own: install (or unpack the .deb) into a scratch root, then run
# the installed binary from a scratch working directory, with the attnviz environment variables unset:
# `--version` must name the scratch root's data directories (the run-time lookup found them next to the
# executable, not in the build or source tree), `dump` and `render` must write their files, and the
# GUI (when a display is there) must draw a screenshot with the installed shaders. Also: no absolute
# path of the source or build tree is compiled into the binary, the desktop entry and the AppStream
# metainfo validate, and the man page documents every flag the binary's --help texts name.
#
#   install_test.sh --build-dir BUILD SOURCE   cmake --install of an existing build (ctest; no compile)
#   install_test.sh --deb FILE.deb SOURCE      unpack the package (scripts/dev package); also checks its
#                                              Depends: and that the binary needs no CPU extension
set -euo pipefail
mode="$1"; what="$(realpath "$2")"; src="$(realpath "$3")"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

case "$mode" in
  --build-dir)
    cmake --install "$what" --prefix "$root/usr" >"$root/install.log" 2>&1 || { cat "$root/install.log"; fail "cmake --install failed"; }
    build="$what" ;;
  --deb)
    dpkg-deb -x "$what" "$root"
    depends="$(dpkg-deb -f "$what" Depends)"
    echo "Depends: $depends"
    for lib in libglfw3 libicu libpcre2-8 libstdc++6 fonts-dejavu-core; do
      grep -q "$lib" <<<"$depends" || fail "Depends: lacks $lib ($depends)"
    done
    # A package must start on any x86-64: no AVX/AVX-512 register in the code (-march=native leaks them),
    # except in core/gemm's section attnviz_avx512, whose kernel runs only after the CPU says AVX-512.
    if [ "$(uname -m)" = x86_64 ] && command -v objdump >/dev/null; then
      counts="$(objdump -d --no-show-raw-insn "$root/usr/bin/attnviz" |
                awk '/^Disassembly of section /{sec=$4} /%[yz]mm/{if (sec == "attnviz_avx512:") k++; else w++}
                     END{print w+0, k+0}')"
      read -r wide kernel <<<"$counts"
      [ "$wide" -eq 0 ] || fail "the packaged binary uses AVX registers in $wide instructions outside core/gemm's kernel (built with -march=native?)"
      [ "$kernel" -gt 0 ] || fail "the packaged binary has no AVX-512 matrix kernel (section attnviz_avx512)"
      echo "AVX registers: none outside core/gemm's run-time-chosen kernel ($kernel instructions)"
    fi
    build="" ;;
  *) fail "usage: install_test.sh --build-dir BUILD SOURCE | --deb FILE.deb SOURCE" ;;
esac

bin="$root/usr/bin/attnviz"
share="$root/usr/share"
[ -x "$bin" ] || fail "no $bin"
for f in attnviz/assets/scenes/default.json attnviz/assets/tours/first-hour.json attnviz/shaders/heatmap.frag attnviz/shaders/heatmap.vert \
         applications/attnviz.desktop metainfo/attnviz.metainfo.xml icons/hicolor/scalable/apps/attnviz.svg \
         icons/hicolor/48x48/apps/attnviz.png icons/hicolor/128x128/apps/attnviz.png \
         icons/hicolor/256x256/apps/attnviz.png man/man1/attnviz.1.gz doc/attnviz/README.md \
         doc/attnviz/copyright doc/attnviz/changelog.gz \
         bash-completion/completions/attnviz; do
  [ -f "$share/$f" ] || fail "not installed: share/$f"
done

# No absolute path of this machine's source or build tree in the binary (it would be looked up there).
for tree in "$src" ${build:+"$build"}; do
  if grep -a -o -F "$tree" "$bin" | head -1 | grep -q .; then
    fail "the installed binary contains the path $tree: $(grep -a -o -F "$tree[^[:cntrl:]]*" "$bin" | head -3 | tr '\n' ' ')"
  fi
done

# Run from elsewhere, with nothing pointing back at the trees.
work="$root/work"; mkdir -p "$work" "$root/home"
run() { (cd "$work" && env -u ATTNVIZ_ASSETS -u ATTNVIZ_SHADERS HOME="$root/home" XDG_CONFIG_HOME="$root/home/.config" "$bin" "$@"); }

version="$(run --version)"
echo "$version"
grep -q "^attnviz [0-9]" <<<"$version" || fail "--version prints no version"
grep -qxF "assets: $share/attnviz/assets (next to the executable)" <<<"$version" || fail "assets not found in the installed layout"
grep -qxF "shaders: $share/attnviz/shaders (next to the executable)" <<<"$version" || fail "shaders not found in the installed layout"

run dump --scene "$share/attnviz/assets/scenes/causal_decoder.json" --set heads=2 --out dump >/dev/null
[ -f "$work/dump/manifest.json" ] && [ -f "$work/dump/weights_h1.npy" ] || fail "dump wrote no manifest.json / weights_h1.npy"
run render --scene "$share/attnviz/assets/scenes/causal_decoder.json" --stage weights --out fig.png >/dev/null
[ "$(head -c 8 "$work/fig.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "render wrote no PNG"

# Every model folder a shipped scene opens is installed beside it, and it runs from there: the
# induction scene's trained model tokenizes and dumps its layers.
for scene in "$share"/attnviz/assets/scenes/*.json; do
  model="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("model", ""))' "$scene")" ||
    fail "cannot read $scene"
  [ -z "$model" ] && continue
  dir="$(dirname "$scene")/$model"
  [ -f "$dir/config.json" ] && [ -f "$dir/model.safetensors" ] ||
    fail "$(basename "$scene") opens the model '$model', not installed ($dir)"
  # (the scene's own text: a model trained on its own language knows only its words)
  text="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("model_text", ""))' "$scene")"
  [ -n "$text" ] || text="the cat sat on the mat the cat sat"
  ids="$(run tokenize --model "$dir" --text "$text")" || fail "tokenize with the installed model $model"
  grep -q '^\[[0-9]' <<<"$ids" || fail "tokenize printed no ids: $ids"
  run dump --model "$dir" --text "$text" --out "dump-$(basename "$dir")" >/dev/null ||
    fail "dump with the installed model $model"
  [ -f "$work/dump-$(basename "$dir")/manifest.json" ] || fail "dump with the installed model $model wrote no manifest"
  models=$((${models:-0} + 1))
done
[ "${models:-0}" -ge 1 ] || fail "no shipped scene opens a model (induction_heads.json should)"

# The window, drawn with the installed shaders (under the display ctest runs in, if any).
if [ -n "${DISPLAY:-}" ]; then
  run --fresh --size 800x500 --screenshot shot.png >/dev/null 2>"$root/gui.err" || { cat "$root/gui.err"; fail "the GUI failed from the installed layout"; }
  [ "$(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no screenshot"
  if [ -n "${ATTNVIZ_INSTALL_SCREENSHOT:-}" ]; then cp "$work/shot.png" "$ATTNVIZ_INSTALL_SCREENSHOT"; fi
  # The installed tour, its first step rendered (its files are found in the installed asset folder).
  run --tour "$share/attnviz/assets/tours/first-hour.json" --step 1 --size 800x500 --screenshot tour.png \
    >/dev/null 2>"$root/tour.err" || { cat "$root/tour.err"; fail "the installed tour's step 1 did not render"; }
  [ -f "$work/tour.png" ] || fail "no screenshot of the installed tour"
fi

# Desktop integration files.
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$share/applications/attnviz.desktop"; fi
appstream-util validate-relax --nonet "$share/metainfo/attnviz.metainfo.xml" >/dev/null ||
  { appstream-util validate-relax --nonet "$share/metainfo/attnviz.metainfo.xml"; fail "metainfo does not validate"; }

# The man page names every long flag of every --help (it is generated with them: gen_docs.sh).
commands=()
for c in dump render tokenize generate train grad ablate patch attribute; do
  if run "$c" --help >/dev/null 2>&1; then commands+=("$c"); fi
done
man="$(zcat "$share/man/man1/attnviz.1.gz" | sed 's/\\-/-/g; s/\\f[BIRP]//g')"
missing=()
for cmd in "" "${commands[@]}"; do
  # shellcheck disable=SC2086
  for flag in $(run $cmd --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    grep -q -- "$flag" <<<"$man" || missing+=("${cmd:-attnviz} $flag")
  done
done
[ ${#missing[@]} -eq 0 ] || fail "the man page lacks: ${missing[*]}"

# Bash completion: it loads, offers the subcommands, and offers exactly each command's --help flags.
completion="$share/bash-completion/completions/attnviz"
complete_words() {  # complete_words WORD... -> the completions offered for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _attnviz; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$completion" "$@" | sort -u
}
[ "$(complete_words attnviz d)" = dump ] || fail "completion of 'attnviz d' is not dump"
for cmd in "" "${commands[@]}"; do
  # shellcheck disable=SC2086
  want="$(run $cmd --help | grep -oE -- '^ +--[a-z][a-z-]*' | tr -d ' ' | sort -u)"
  # shellcheck disable=SC2086
  got="$(complete_words attnviz $cmd --)"
  for flag in $want; do
    grep -qx -- "$flag" <<<"$got" || fail "bash completion of 'attnviz $cmd' lacks $flag"
  done
done
echo "install test: ok ($mode)"
