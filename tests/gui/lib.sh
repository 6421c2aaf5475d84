#!/usr/bin/env bash
# Shared harness of the GUI tests (sourced, not run). The tests read the app's own account of what
# happened (--state-log: one JSON line per visible change), never timing guesses.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   gui_init "$@"                 # re-runs the script under xvfb-run when there is no display;
#                                 # sets bin, here, tmp, log; cleans up the app and tmp on exit
#   "$bin" --state-log "$log" ... & app_pid=$!
#   wait_for "the first trace" 's["weights_checksum"] != ""'
#   t="$(field temperature)"      # a field of the newest state line (dots for nesting)

gui_init() {
  bin="$(realpath "$1")"
  here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
  if [ -z "${DISPLAY:-}" ]; then
    exec xvfb-run -a -s '-screen 0 1600x1000x24' bash "${BASH_SOURCE[1]}" "$bin"
  fi
  tmp="$(mktemp -d)"
  app_pid=""
  trap gui_cleanup EXIT
  export XDG_CONFIG_HOME="$tmp/config"  # never touch the user's settings
  log="$tmp/state.jsonl"
}

gui_cleanup() {
  if [ -n "${app_pid:-}" ] && kill -0 "$app_pid" 2>/dev/null; then
    kill "$app_pid"
    wait "$app_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}

fail() {
  echo "FAIL: $*" >&2
  [ -f "$log" ] && { echo "last state:" >&2; tail -n 1 "$log" >&2; }
  exit 1
}

# field KEY: a field of the newest state line (nested with dots: widgets.temperature); lists are
# printed space-separated, numbers in them rounded to integers (pixel rectangles).
field() {
  /usr/bin/python3 - "$log" "$1" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
v = json.loads(lines[-1]) if lines else {}
for k in sys.argv[2].split("."):
    v = v.get(k, "") if isinstance(v, dict) else ""
print(" ".join(str(round(x)) for x in v) if isinstance(v, list) else v)
PY
}

# wait_for DESCRIPTION PYTHON_CONDITION_ON_s [SECONDS]: polls the newest state line until the
# condition holds (default 60 s); fails if the app exits or time runs out.
wait_for() {
  local what="$1" cond="$2" seconds="${3:-60}"
  for _ in $(seq 1 $((seconds * 10))); do
    if [ -s "$log" ] && /usr/bin/python3 - "$log" "$cond" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
s = json.loads(lines[-1])
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
    then return 0; fi
    kill -0 "$app_pid" 2>/dev/null || fail "the app exited while waiting for: $what"
    sleep 0.1
  done
  fail "timed out waiting for: $what"
}
