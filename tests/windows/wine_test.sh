#!/usr/bin/env bash
# The Windows build under Wine, against the Linux build of the same source (scripts/dev package-windows):
#   tests/windows/wine_test.sh PACKAGE_DIR LINUX_ATTNVIZ WORK_DIR
# PACKAGE_DIR is the unpacked zip (attnviz.exe, share/attnviz/...). Checks --version, dump (numbers
# equal to Linux's), render (pixels within 1/255), tokenize (the same ids; every Hugging Face tokenizer
# of tests/data/hf_tokenizers with Hugging Face's ids), a short train, dump --model
# of a test checkpoint, the GUI under Xvfb (a screenshot with the heatmap), a scripted GUI run that
# steps through stages and exports a figure, and bad input: a non-ASCII path, a read-only file and
# folder, a file another process holds locked. Prints one line per check; exits non-zero on the first failure.
set -euo pipefail
pkg="$(cd "$1" && pwd)" linux="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
work="$(mkdir -p "$3" && cd "$3" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
share="$pkg/share/attnviz"
exe="$pkg/attnviz.exe"
py=/usr/bin/python3

export WINEPREFIX="$work/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" WINEARCH=win64
# Debian's wine64 package puts its programs in /usr/lib/wine (the `wine` package adds /usr/bin links).
wine64="$(command -v wine64 || echo /usr/lib/wine/wine64)"
wineserver="$(command -v wineserver || echo /usr/lib/wine/wineserver)"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# Unix paths reach the Windows program as they are: Wine resolves /tmp/x on its Z: drive.
win() { "$wine64" "$exe" "$@"; }
# A fresh Linux HOME, so neither side reads the developer's settings.
lin() { env HOME="$work/linux-home" XDG_CONFIG_HOME="$work/linux-home/.config" "$linux" "$@"; }

rm -rf "$work/out"; mkdir -p "$work/out" "$work/linux-home"
trap '"$wineserver" -k 2>/dev/null || true' EXIT
cd "$work/out"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  t0=$(date +%s)
  "$wine64" wineboot -i >/dev/null 2>&1 || true
  "$wineserver" -w
  ok "Wine prefix created in $(( $(date +%s) - t0 )) s"
fi

# --- --version: the data found next to attnviz.exe --------------------------------------------
v="$(win --version | tr -d '\r')"
grep -q '^attnviz [0-9]' <<<"$v" || fail "--version: $v"
grep -qE '^assets: .*share[/\\]attnviz[/\\]assets \(next to the executable\)$' <<<"$v" || fail "--version: assets not found: $v"
ok "--version: $(head -1 <<<"$v")"

# --- dump: every stage's numbers as Linux computes them --------------------------------------------
scene="$share/assets/scenes/causal_decoder.json"
win dump --scene "$scene" --set heads=2 --out win-dump >/dev/null
lin dump --scene "$scene" --set heads=2 --out lin-dump >/dev/null
$py "$here/tests/windows/compare_dumps.py" lin-dump win-dump "dump --scene" || fail "dump differs"

# --- render: the PNG within 1/255 of Linux's --------------------------------------------------------
win render --scene "$scene" --stage weights --out win-fig.png >/dev/null
lin render --scene "$scene" --stage weights --out lin-fig.png >/dev/null
$py "$here/tests/windows/compare_png.py" lin-fig.png win-fig.png 1 || fail "render differs"

# --- tokenize: the same ids ------------------------------------------------------------------------
model="$share/assets/models/induction-2l"
a="$(win tokenize --model "$model" --text "the cat sat on the mat" | tr -d '\r')"
b="$(lin tokenize --model "$model" --text "the cat sat on the mat")"
[ "$a" = "$b" ] || fail "tokenize: Windows '$a', Linux '$b'"
ok "tokenize: $a"
# Every Hugging Face tokenizer of the test data (WordPiece, Unigram, BPE; BERT's normalizer, NFKC,
# SentencePiece's charsmap by graphemes: ICU on both systems): Hugging Face's ids on both.
$py "$here/tests/windows/compare_tokenizers.py" "$here/tests/data/hf_tokenizers" "$work/out/hf" \
    -- "$wine64" "$exe" -- env HOME="$work/linux-home" XDG_CONFIG_HOME="$work/linux-home/.config" "$linux" ||
  fail "the Hugging Face tokenizers differ"

# --- a short train, then dump --model of that checkpoint, compared with Linux's numbers --------------
win train --task induction --layers 1 --heads 2 --d-model 32 --context 48 --steps 20 \
          --batch 8 --eval-every 10 --out win-ckpt >/dev/null 2>win-train.err || { cat win-train.err; fail "train"; }
lin train --task induction --layers 1 --heads 2 --d-model 32 --context 48 --steps 20 \
          --batch 8 --eval-every 10 --out lin-ckpt >/dev/null 2>&1
$py - win-ckpt lin-ckpt <<'PY' || fail "train: the checkpoints differ"
import json, sys
w, l = (json.load(open(d + "/summary.json")) for d in sys.argv[1:3])
def losses(s):
    return [v for k, v in sorted(s.items()) if isinstance(v, float) and "loss" in k]
lw, ll = losses(w), losses(l)
assert lw and len(lw) == len(ll), (w, l)
worst = max(abs(a - b) / max(1e-6, abs(b)) for a, b in zip(lw, ll))
print(f"ok: train: 20 steps, losses {lw} (Linux {ll}; largest relative difference {worst:.2e})")
assert worst < 1e-3
PY
win dump --model win-ckpt --ids 5,9,2,7,5,9,2,7,5,9 --out win-model-dump >/dev/null
lin dump --model win-ckpt --ids 5,9,2,7,5,9,2,7,5,9 --out lin-model-dump >/dev/null
$py "$here/tests/windows/compare_dumps.py" lin-model-dump win-model-dump "dump --model (the Windows-trained checkpoint)" ||
  fail "dump --model differs"
win dump --model "$model" --text "the cat sat on the mat the cat sat" --out win-induction >/dev/null
lin dump --model "$model" --text "the cat sat on the mat the cat sat" --out lin-induction >/dev/null
$py "$here/tests/windows/compare_dumps.py" lin-induction win-induction "dump --model (the shipped induction-2l)" ||
  fail "dump --model differs"

# --- the GUI under Xvfb + Wine ---------------------------------------------------------------------
# Each GUI run gets its own Xvfb; Wine's desktop process (explorer.exe, alive while the wineserver
# is) would keep talking to the previous one, so the wineserver is ended first.
gui() {
  "$wineserver" -k 2>/dev/null || true
  "$wineserver" -w 2>/dev/null || true
  xvfb-run -a -s '-screen 0 1600x1000x24' "$wine64" "$exe" "$@"
}
gui --fresh --size 1280x800 --screenshot "$work/wine-screenshot.png" >gui.out 2>&1 || { cat gui.out; fail "GUI screenshot"; }
$py "$here/tests/windows/compare_png.py" --heatmap "$work/wine-screenshot.png" || fail "the screenshot shows no heatmap"

cat >steps.script <<'SCRIPT'
wait weights_checksum != "" && updating == false
key Right
wait stage_index == 1
key Right
wait stage_index == 2
key End
wait stage_index == 18
key ctrl+e
wait export_path ~ .png && status_is_error == false
quit
SCRIPT
gui --fresh --size 1280x800 --script steps.script --state-log state.log >script.out 2>&1 || { cat script.out; fail "scripted GUI run"; }
fig="$(ls attnviz-exports/*.png 2>/dev/null | head -1)"
[ -n "$fig" ] || fail "the scripted run exported no figure"
$py "$here/tests/windows/compare_png.py" --heatmap "$fig" || fail "the exported figure is blank"
ok "scripted GUI: stages 0 -> 1 -> 2 -> 18, Ctrl+E exported $fig"

# File > Open (Ctrl+O) opens the Windows file dialog (IFileOpenDialog) on its own thread while the
# window keeps drawing; quitting with the dialog open closes it and ends the app.
cat >chooser.script <<'SCRIPT'
wait weights_checksum != "" && updating == false
key ctrl+o
wait chooser_open == true timeout 60
frames 20
expect chooser_open == true && status ~ "file chooser"
quit
SCRIPT
t0=$(date +%s)
gui --fresh --size 1280x800 --script chooser.script >chooser.out 2>&1 || { cat chooser.out; fail "the Windows file dialog"; }
ok "File > Open: the Windows file dialog opened while the window kept drawing; quit with it open took $(( $(date +%s) - t0 )) s in all"

# --- bad input ---------------------------------------------------------------------------------------
# A folder named like C:\Users\李\模型: the model opens from it, and a figure is written into it.
mkdir -p "李/模型"
cp -r "$model" "李/模型/induction-2l"
a="$(win tokenize --model "李/模型/induction-2l" --text "the cat sat on the mat" | tr -d '\r')"
[ "$a" = "$b" ] || fail "tokenize from a non-ASCII folder: '$a'"
win render --scene "$scene" --stage weights --out "李/模型/图.png" >/dev/null || fail "render into a non-ASCII folder"
[ -f "李/模型/图.png" ] || fail "no 图.png in 李/模型"
win dump --model "李/模型/induction-2l" --text "the cat sat on the mat the cat sat" --out "李/模型/转储" >/dev/null ||
  fail "dump into a non-ASCII folder"
$py "$here/tests/windows/compare_dumps.py" lin-induction "李/模型/转储" "dump --model from and into 李/模型" >/dev/null ||
  fail "dump in a non-ASCII folder differs"
mkdir -p "李/模型/bert_uncased"
cp "$here/tests/data/hf_tokenizers/bert_uncased.tokenizer.json" "李/模型/bert_uncased/tokenizer.json"
printf 'Héllo, 世界! Ünïcödé naïve café' >"李/模型/文本.txt"
a="$(win tokenize --model "李/模型/bert_uncased" --text-file "李/模型/文本.txt" | tr -d '\r')"
b="$(lin tokenize --model "李/模型/bert_uncased" --text-file "李/模型/文本.txt")"
[ "$a" = "$b" ] || fail "WordPiece from a non-ASCII folder: Windows '$a', Linux '$b'"
ok "non-ASCII path: tokenize and dump from 李/模型/induction-2l, render to 李/模型/图.png, dump to 李/模型/转储, WordPiece on 李/模型/文本.txt $a"

# A read-only file (attrib +r, what a read-only copy from a CD or a locked-down share gives): refused in
# one line, the file untouched.
cp win-fig.png readonly.png
"$wine64" cmd /c attrib +r readonly.png >/dev/null 2>&1
before="$(md5sum <readonly.png)"
set +e; err="$(win render --scene "$scene" --stage scores --out readonly.png 2>&1 >/dev/null | tr -d '\r')"; rc=$?; set -e
[ "$rc" -ne 0 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "read-only file: exit $rc, '$err'"
[ "$(md5sum <readonly.png)" = "$before" ] || fail "the read-only file was changed"
[ -z "$(ls -A . | grep '\.tmp-')" ] || fail "a temporary file was left behind"
ok "read-only file: '$err' (file untouched)"

# A read-only folder (as a locked-down school share is): Wine maps Unix permissions, which do not stop
# root, so as root the check runs as the user nobody, with a Wine prefix of its own.
ro_win() {  # ro_win ARGS...: attnviz.exe as a user the folder's permissions stop
  if [ "$(id -u)" -ne 0 ]; then win "$@"; return; fi
  runuser -u nobody -- env HOME="$work/as-nobody" WINEPREFIX="$work/as-nobody/wineprefix" WINEDEBUG=-all \
    WINEDLLOVERRIDES="mscoree,mshtml=" "$wine64" "$exe" "$@"
}
if [ "$(id -u)" -eq 0 ] && [ ! -f "$work/as-nobody/wineprefix/system.reg" ]; then
  mkdir -p "$work/as-nobody"; chown nobody "$work/as-nobody"
  runuser -u nobody -- env HOME="$work/as-nobody" WINEPREFIX="$work/as-nobody/wineprefix" WINEDEBUG=-all \
    WINEDLLOVERRIDES="mscoree,mshtml=" "$wine64" wineboot -i >/dev/null 2>&1 || true
  runuser -u nobody -- env WINEPREFIX="$work/as-nobody/wineprefix" "$wineserver" -w
fi
ro="$work/as-nobody/ro-folder"
rm -rf "$ro"; mkdir -p "$ro"; cp win-fig.png "$ro/kept.png"; chmod 555 "$ro"
set +e; err="$(ro_win render --scene "$scene" --stage weights --out "$ro/fig.png" 2>&1 >/dev/null | tr -d '\r')"; rc=$?; set -e
[ "$rc" -ne 0 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "read-only folder: exit $rc, '$err'"
[ "$(ls -A "$ro")" = kept.png ] || fail "read-only folder: $(ls -A "$ro") (something was written)"
ok "read-only folder: '$err' (nothing written)"
# A training run's checkpoint folder there: refused before it trains, in one line.
set +e
err="$(ro_win train --task induction --layers 1 --heads 2 --d-model 32 --context 48 --steps 5 --batch 8 \
       --out "$ro/ckpt" 2>&1 >/dev/null | tr -d '\r')"; rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "train into a read-only folder: exit $rc, '$err'"
[ "$(ls -A "$ro")" = kept.png ] || fail "train into a read-only folder: $(ls -A "$ro") (something was written)"
ok "read-only folder, train --out: '$err' (nothing written)"
chmod 755 "$ro"

# A file another program holds open without sharing (as Excel or an image viewer does): refused in one
# line, the file untouched, no temporary left.
x86_64-w64-mingw32-gcc-posix -municode -O1 -o locker.exe "$here/tests/windows/locker.c"
cp win-fig.png locked.png
before="$(md5sum <locked.png)"
"$wine64" ./locker.exe locked.png 30 >locker.out 2>&1 &
locker=$!
for _ in $(seq 100); do grep -q locked locker.out 2>/dev/null && break; sleep 0.2; done
grep -q locked locker.out || fail "the locker did not start: $(cat locker.out)"
set +e; err="$(win render --scene "$scene" --stage scores --out locked.png 2>&1 >/dev/null | tr -d '\r')"; rc=$?; set -e
kill "$locker" 2>/dev/null || true
wait "$locker" 2>/dev/null || true
[ "$rc" -ne 0 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "locked file: exit $rc, '$err'"
[ "$(md5sum <locked.png)" = "$before" ] || fail "the locked file was changed"
[ -z "$(ls -A . | grep '\.tmp-')" ] || fail "a temporary file was left behind"
ok "locked file: '$err' (file untouched)"
# A tokenizer.json another program holds open without sharing: tokenize says so in one line.
mkdir -p locked-model
cp "$here/tests/data/hf_tokenizers/t5_unigram.tokenizer.json" locked-model/tokenizer.json
before="$(md5sum <locked-model/tokenizer.json)"
rm -f locker.out
"$wine64" ./locker.exe locked-model/tokenizer.json 30 >locker.out 2>&1 &
locker=$!
for _ in $(seq 100); do grep -q locked locker.out 2>/dev/null && break; sleep 0.2; done
grep -q locked locker.out || fail "the locker did not start: $(cat locker.out)"
set +e; err="$(win tokenize --model locked-model --text "hello world" 2>&1 >/dev/null | tr -d '\r')"; rc=$?; set -e
kill "$locker" 2>/dev/null || true
wait "$locker" 2>/dev/null || true
[ "$rc" -ne 0 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "locked tokenizer.json: exit $rc, '$err'"
[ "$(md5sum <locked-model/tokenizer.json)" = "$before" ] || fail "the locked tokenizer.json was changed"
ok "locked tokenizer.json: '$err' (file untouched)"
echo "all Windows checks passed"
