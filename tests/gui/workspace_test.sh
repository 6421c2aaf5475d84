#!/usr/bin/env bash
# Nothing the learner made is lost: the workspace (text, knobs, custom mask cells, view, stage, head,
# pinned row, open labs) is restored at the next start; a corrupt workspace file is reported in one
# line, set aside, and the app starts anyway; --fresh and --scene start without it.
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
echo "workspace_test: OK"
