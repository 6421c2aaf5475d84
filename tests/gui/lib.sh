#!/usr/bin/env bash
# Shared harness of the GUI tests (sourced, not run). Every test gets its own X server (Xvfb picks a
# free display itself with -displayfd, so tests can run in parallel and never on the developer's own
# desktop) and its own config directory. The tests drive the app with `--script` (scripted input fed
# frame by frame through the app's own input path, waiting on the app's own state; app/script.hpp)
# and read the app's own account of what happened (--state-log), never timing guesses.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   gui_init "$@"                 # sets bin, here, tmp, log; starts Xvfb; cleans up on exit
#   run_script NAME <<'EOF'       # runs the app on a script (stdin); fails the test if it fails
#   ...
#   EOF
#   "$bin" --state-log "$log" ... & app_pid=$!     # (xdotool smoke tests)
#   wait_for "the first trace" 's["weights_checksum"] != ""'
#   t="$(field temperature)"      # a field of the newest state line (dots for nesting)

gui_init() {
  bin="$(realpath "$1")"
  here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
  tmp="$(mktemp -d)"
  app_pid=""
  xvfb_pid=""
  trap gui_cleanup EXIT
  export XDG_CONFIG_HOME="$tmp/config"  # never touch the user's settings or workspace
  # The shipped tour follows the locale (a Chinese one opens the Chinese tour): tests read the English
  # one unless they ask (tour_test.sh sets LANG=zh_CN.UTF-8 for the Chinese tour).
  unset LANGUAGE LC_ALL LC_MESSAGES
  export LANG=C.UTF-8
  # No desktop file chooser may open during a test: the portal is asked on a bus that is not there,
  # so File ▸ Open falls back to the app's own path popup (as on a bare X server). files_test.sh
  # replaces the chooser with a fake zenity.
  export ATTNVIZ_FILE_CHOOSER=portal DBUS_SESSION_BUS_ADDRESS="unix:path=$tmp/no-session-bus"
  log="$tmp/state.jsonl"
  start_xvfb
}

# A private X server on a display it chooses itself (no races between parallel tests).
start_xvfb() {
  command -v Xvfb >/dev/null || { echo "FAIL: Xvfb is not installed (scripts/dev deps)" >&2; exit 1; }
  : >"$tmp/display"
  Xvfb -displayfd 5 -screen 0 1600x1000x24 -nolisten tcp -noreset 5>"$tmp/display" 2>"$tmp/xvfb.log" &
  xvfb_pid=$!
  for _ in $(seq 1 300); do
    [ -s "$tmp/display" ] && break
    kill -0 "$xvfb_pid" 2>/dev/null || { cat "$tmp/xvfb.log" >&2; echo "FAIL: Xvfb did not start" >&2; exit 1; }
    sleep 0.1
  done
  [ -s "$tmp/display" ] || { echo "FAIL: Xvfb gave no display number in 30 s" >&2; exit 1; }
  export DISPLAY=":$(tr -dc '0-9' <"$tmp/display")"
  unset WAYLAND_DISPLAY
}

gui_cleanup() {
  if [ -n "${app_pid:-}" ] && kill -0 "$app_pid" 2>/dev/null; then
    kill "$app_pid"
    wait "$app_pid" 2>/dev/null || true
  fi
  if [ -n "${xvfb_pid:-}" ]; then
    kill "$xvfb_pid" 2>/dev/null || true
    wait "$xvfb_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}

fail() {
  echo "FAIL: $*" >&2
  [ -f "$log" ] && { echo "last state:" >&2; tail -n 1 "$log" >&2; }
  exit 1
}

# run_script NAME [app args...] <<'EOF' ... EOF: the app runs the script from stdin with a state log;
# the test fails (showing the app's own account) unless the script completes.
run_script() {
  local name="$1"; shift
  cat >"$tmp/$name.script"
  : >"$log"
  if ! timeout 600 "$bin" --script "$tmp/$name.script" --state-log "$log" "$@" >"$tmp/$name.out" 2>&1; then
    cat "$tmp/$name.out" >&2
    fail "script $name did not complete"
  fi
  echo "script $name: done"
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
# condition holds (default 120 s; the time-out only turns a hang into a failure); fails if the app
# exits first.
wait_for() {
  local what="$1" cond="$2" seconds="${3:-120}"
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
