#!/usr/bin/env bash
# Files the way a desktop does it, driven through the app's own input path:
#  - File ▸ Open scene / Save scene as / Open model ask the desktop's file chooser. A fake `zenity` on
#    PATH (ATTNVIZ_FILE_CHOOSER=zenity) stands in for the user: it records its arguments and gives the
#    next answer from a queue (a path, "cancel", or a failure). A cancelled dialog changes nothing; a
#    broken one is one line and the app's own path popup instead.
#  - Files dropped onto the window (the `drop` step calls the window's own GLFW drop callback): a .npy
#    becomes the custom mask, a scene opens, a folder that is not a model and a missing file are one
#    line each, several files open the first and say so, a mask on a model is refused.
#  - Copy matrix as TSV: what the clipboard then holds (GLFW's X selection) is the current stage,
#    labels and numbers, equal to what `attnviz dump` writes for it.
# The unit tests (tests/app/file_chooser_test.cpp) cover the portal and kdialog backends.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"

src="$(cd "$here/../.." && pwd)"
scene="$src/assets/scenes/causal_decoder.json"
other="$src/assets/scenes/cross_attention.json"
/usr/bin/python3 "$here/make_tiny_model.py" "$tmp/tiny" "$tmp/bad" || fail "could not write the test model"
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/mask.npy', np.triu(np.ones((7, 7)), 1))" ||
  fail "could not write the mask"
mkdir -p "$tmp/bin" "$tmp/not-a-model"

# The fake chooser: each call takes the first line of answers.txt.
cat >"$tmp/bin/zenity" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >>"$tmp/zenity.calls"
echo "--" >>"$tmp/zenity.calls"
answer=\$(head -n 1 "$tmp/answers.txt")
sed -i 1d "$tmp/answers.txt"
case "\$answer" in
  cancel) exit 1 ;;
  broken) echo "cannot open display: :99" >&2; exit 5 ;;
  *) printf '%s\n' "\$answer"; exit 0 ;;
esac
EOF
chmod +x "$tmp/bin/zenity"
cat >"$tmp/answers.txt" <<EOF
$scene
cancel
$tmp/saved scene.json
$tmp/tiny
broken
EOF

export ATTNVIZ_FILE_CHOOSER=zenity PATH="$tmp/bin:$PATH" TMPDIR_TEST="$tmp" SCENE="$scene" OTHER="$other"
run_script files --fresh <<'EOF'
wait weights_checksum != "" && updating == false
# --- Open scene: the chooser answers with a scene ------------------------------------------------
key ctrl+o
wait status ^= Opened && scene_path ~ causal_decoder.json && chooser_backend == zenity && updating == false
expect chooser_open == false && recent_files ~ ${SCENE}
# --- Copy matrix: the masked scores of head 0 (with -inf cells), as the clipboard holds them --------
key End
wait stage == residual
key Left
key Left
key Left
key Left
key Left
key Left
wait stage == masked && head == 0
key ctrl+shift+c
wait status ^= "Copied masked"
clipboard_save ${TMPDIR_TEST}/clip.tsv
# --- Cancel: nothing changes --------------------------------------------------------------------
key ctrl+o
wait status == "" && chooser_open == false
expect scene_path ~ causal_decoder.json && status_is_error == false
# --- Scene title and note (the desktop's save dialog asks only for the file): from the File menu ----
click widget menu_File 0.5 0.5
frames 3
wait widgets.menu_scene_details != null
click widget menu_scene_details 0.5 0.5
wait text_input_active == true && widgets.scene_details_done != null
key ctrl+a
type Masks, saved by the test
frames 2
click widget scene_details_done 0.5 0.5
wait text_input_active == false && scene_title == "Masks, saved by the test"
# --- Save scene as: the chooser's path, with a space in it -----------------------------------------
key ctrl+shift+s
wait status ^= "Saved scene to" && scene_path ~ "saved scene.json"
# --- Open model: a folder ------------------------------------------------------------------------
key ctrl+m
wait model_active == true && model_dir ~ tiny && model_runs > 0
expect recent_files ~ ${TMPDIR_TEST}/tiny
# --- Drops: a mask on a model is refused; back to the single layer, it becomes the custom mask ------
drop ${TMPDIR_TEST}/mask.npy
wait status_is_error == true && status ~ "single layer"
expect mask == causal
key ctrl+o
wait status_is_error == true && status ^= "File chooser (zenity): zenity failed (exit 5)"
# ... and the app's own popup asks instead: open the other scene by typing its path
wait text_input_active == true
type ${OTHER}
key Return
wait status ^= Opened && scene_path ~ cross_attention.json && model_active == false && updating == false
drop ${TMPDIR_TEST}/mask.npy
wait mask == custom && status ~ "7×7 mask"
drop ${TMPDIR_TEST}/not-a-model
wait status_is_error == true && status ~ "not a model folder"
drop ${TMPDIR_TEST}/missing.json
wait status_is_error == true && status ~ "no such file"
expect mask == custom && scene_path ~ cross_attention.json
drop ${SCENE} ${TMPDIR_TEST}/mask.npy
wait scene_path ~ causal_decoder.json && status ~ "2 files were dropped" && status_is_error == false
quit
EOF

# What the fake chooser was asked: titles, the save proposal, a folder for the model.
/usr/bin/python3 - "$tmp/zenity.calls" "$scene" <<'PY' || fail "the chooser's arguments"
import sys
calls = [c.strip("\n").split("\n") for c in open(sys.argv[1]).read().split("--\n") if c.strip()]
assert len(calls) == 5, calls
assert calls[0][:2] == ["--file-selection", "--title=Open scene"], calls[0]
assert "--file-filter=attnviz scenes | *.json" in calls[0], calls[0]
assert any(a.startswith("--filename=") and a.endswith("/assets/scenes/") for a in calls[0]), calls[0]
assert "--save" in calls[2] and "--confirm-overwrite" in calls[2], calls[2]
assert "--filename=" + sys.argv[2] in calls[2], calls[2]  # the scene's own folder and name proposed
assert "--directory" in calls[3], calls[3]
print("chooser arguments: ok")
PY

# The saved scene is a real scene file, whole.
/usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['title'] == 'Masks, saved by the test', s" \
  "$tmp/saved scene.json" || fail "the saved scene (with the title typed in Scene title and note)"

# The clipboard against `attnviz dump` of the same scene: every label and number.
"$bin" dump --scene "$scene" --out "$tmp/dump" >/dev/null || fail "dump"
/usr/bin/python3 - "$tmp/clip.tsv" "$tmp/dump" <<'PY' || fail "the clipboard's table"
import json, sys
import numpy as np
rows = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
cells = [r.split("\t") for r in rows]
m = json.load(open(sys.argv[2] + "/manifest.json"))
st = [s for s in m["stages"] if s["name"] == "masked" and s["head"] == 0][0]
w = np.load(sys.argv[2] + "/" + st["file"])
assert len(cells) == w.shape[0] + 1, (len(cells), w.shape)
assert all(len(c) == w.shape[1] + 1 for c in cells), [len(c) for c in cells]
keys = [t for t in m["key_tokens"]]
queries = [t for t in m["query_tokens"]]
assert cells[0][1:] == [str(k) for k in keys], (cells[0], keys)
assert [c[0] for c in cells[1:]] == [str(q) for q in queries], ([c[0] for c in cells[1:]], queries)
got = np.array([[float(x) for x in c[1:]] for c in cells[1:]]).astype(w.dtype)  # %.9g: the same float back
assert np.isneginf(w).any(), "the causal mask's -inf cells"
ok = got == w  # (-inf == -inf: the masked cells too)
assert ok.all(), ("cells differ", np.argwhere(~ok)[:5])
print("clipboard: %d x %d, equal to the dump" % w.shape)
PY
echo "files_test: ok"
