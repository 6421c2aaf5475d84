#!/usr/bin/env bash
# Nothing the learner made is lost: the workspace (text, knobs, custom mask cells, view, stage, head,
# pinned row, open labs, the open model and its layer) is restored at the next start; a corrupt
# workspace file is reported in one line, set aside, and the app starts anyway; --fresh and --scene
# start without it; a model folder that is gone is one line and the single layer.
#   usage: bash tests/gui/workspace_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
cd "$tmp"
ws="$XDG_CONFIG_HOME/attnviz/workspace.json"

# 1. Make something: heads 2, mask custom with two hidden cells, the weights stage, head 1, a pinned
#    row, the heads-grid view and the temperature lab. Quit with Ctrl+Q.
run_script make --fresh --set heads=2 --set mask=custom --set "custom_mask=010;001" --view heads \
  --lab temperature <<'EOF'
wait weights_checksum != "" && updating == false
key Down
wait head == 1
quit
EOF
[ -s "$ws" ] || fail "no workspace was written at $ws"
/usr/bin/python3 - "$ws" <<'PY' || fail "the workspace file does not hold what was made"
import json, sys
w = json.load(open(sys.argv[1]))
c = w["config"]
assert w["attnviz_workspace"] == 1, w
assert c["heads"] == 2 and c["mask"] == "custom", c
assert c["custom_mask"][:2] == ["010", "001"], c["custom_mask"]
assert w["view"] == "heads" and w["head"] == 1, w
assert "temperature" in w["labs"], w["labs"]
PY

# 2. The next start restores it (no flags).
run_script restore <<'EOF'
wait weights_checksum != "" && updating == false && head == 1
expect view == heads
quit
EOF
/usr/bin/python3 - "$log" <<'PY' || fail "the restored state differs"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
assert s["view"] == "heads" and s["head"] == 1, s
PY

# 3. --fresh and --scene ignore it.
run_script fresh --fresh <<'EOF'
wait weights_checksum != "" && updating == false
expect view == stage && head == 0
quit
EOF

# 4. A corrupt workspace: one line in the status bar, the file set aside, the app starts.
printf '{"attnviz_workspace": 1, "config": {"heads": "many"' >"$ws"
run_script corrupt <<'EOF'
wait weights_checksum != "" && updating == false
expect status_is_error == true && status ~ "workspace" && status ~ "set aside"
quit
EOF
ls "$XDG_CONFIG_HOME/attnviz/" | grep -q '^workspace.json.broken-' || fail "the corrupt workspace was not set aside"
# 5. The open model is part of it: the tiny TEST model (tests/gui/make_tiny_model.py) at layer 1 on the
#    model view; the next start reopens it in the background, on the same layer and view.
/usr/bin/python3 "$here/make_tiny_model.py" "$tmp/tiny" "$tmp/bad" >/dev/null || fail "could not write the test model"
run_script model_make --fresh --model "$tmp/tiny" --text "the cat sat on the mat" --layer 1 --view model <<'EOF'
wait model_active == true && model_runs >= 1 && updating == false && model_layer == 1 && view == model
quit
EOF
/usr/bin/python3 - "$ws" "$tmp/tiny" <<'PY' || fail "the workspace file does not name the open model"
import json, sys
w = json.load(open(sys.argv[1]))
m = w["model"]
assert m["dir"] == sys.argv[2] and m["layer"] == 1 and m["text"] == "the cat sat on the mat", m
assert w["view"] == "model", w["view"]
PY
run_script model_restore <<'EOF'
wait model_active == true && model_runs >= 1 && updating == false
expect model_layer == 1 && view == model && model_text ^= the && model_name ~ tiny
quit
EOF

# 6. The model's folder is gone: one line in the status bar, the single layer, and the app runs.
mv "$tmp/tiny" "$tmp/tiny-moved"
run_script model_gone <<'EOF'
wait status_is_error == true && model_loading == false && weights_checksum != "" && updating == false
expect model_active == false && status ~ tiny && view == stage
quit
EOF
echo "workspace_test: OK"
