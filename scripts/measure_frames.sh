#!/usr/bin/env bash
# Measures how smoothly the GUI draws while the user works, from the app's own --frame-log (one
# line per frame: interval between frame starts, CPU time up to the swap, swap time, whether a trace
# was being computed, T).
#
#   scripts/measure_frames.sh path/to/attnviz [MODE] [--seconds S] [--set KEY=VALUE ...]
#                             [--view stage|heads|compare] [--keep DIR]
#
# MODE
#   drag   (default) drag the temperature slider from 10 % to 90 % of its width over S seconds
#          (default 5): every step changes T, so a new trace is requested continuously.
#   hover  sweep the mouse over the main heatmap for S seconds (tooltip + cell derivation each frame).
#   zoom   over the main heatmap: wheel in 12 notches, pan by dragging, wheel out again, for a large
#          matrix (e.g. --set length=4096).
#
# The brief's measurement: scripts/measure_frames.sh build/app/attnviz drag \
#     --set length=512 --set d_model=512 --set heads=8
#
# MEASURE_WRAP="perf record -g -o /tmp/perf.data --" profiles the app during the run.
# Runs under its own Xvfb (xvfb-run, 1600x1000x24, Mesa's software OpenGL) unless DISPLAY is set.
# Prints median / p95 / max frame interval and the frame rate during the interaction, the CPU part
# of the frames, how many traces arrived, and the load average (the machine may be shared).
set -euo pipefail

if [ $# -lt 1 ]; then
  sed -n '2,20p' "${BASH_SOURCE[0]}" >&2
  exit 2
fi
bin="$(realpath "$1")"
shift
if [ -z "${DISPLAY:-}" ]; then
  exec xvfb-run -a -s '-screen 0 1600x1000x24' bash "${BASH_SOURCE[0]}" "$bin" "$@"
fi

mode=drag
seconds=5
keep=""
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    drag | hover | zoom) mode="$1" ;;
    --seconds) seconds="$2"; shift ;;
    --set) sets+=(--set "$2"); shift ;;
    --view) sets+=(--view "$2"); shift ;;
    --keep) keep="$2"; shift ;;
    *) echo "measure_frames.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

tmp="$(mktemp -d)"
app_pid=""
cleanup() {
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; fi
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$tmp"/*.log "$tmp"/*.jsonl "$tmp"/*.tsv "$keep"/ 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_CONFIG_HOME="$tmp/config"  # default settings (1 compute thread, UI scale 100 %)
state="$tmp/state.jsonl"
frames="$tmp/frames.tsv"

# field KEY of the newest state line (dots for nesting: widgets.temperature).
field() {
  /usr/bin/python3 - "$state" "$1" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
v = json.loads(lines[-1]) if lines else {}
for k in sys.argv[2].split("."):
    v = v.get(k, "") if isinstance(v, dict) else ""
print(" ".join(str(round(x)) for x in v) if isinstance(v, list) else v)
PY
}
wait_idle() {  # the trace for the current settings is on screen
  for _ in $(seq 1 1200); do
    if [ -s "$state" ] && /usr/bin/python3 - "$state" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
s = json.loads(lines[-1])
sys.exit(0 if s["weights_checksum"] and not s["updating"] and "temperature" in s["widgets"] else 1)
PY
    then return 0; fi
    kill -0 "$app_pid" 2>/dev/null || { echo "the app exited" >&2; cat "$tmp/app.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "timed out waiting for the trace" >&2
  exit 1
}
frame_count() { wc -l <"$frames"; }

${MEASURE_WRAP:-} "$bin" --state-log "$state" --frame-log "$frames" --stage weights "${sets[@]}" >"$tmp/app.log" 2>&1 &
app_pid=$!
wait_idle
wid="$(xdotool search --sync --onlyvisible --name '^attnviz$' | head -n 1)"
eval "$(xdotool getwindowgeometry --shell "$wid")"
xdotool windowfocus --sync "$wid" || true
sleep 0.5

# One xdotool process for the whole gesture (a process per step would add its own start-up time
# to the measurement): "mousemove x y sleep s" repeated.
steps=$(/usr/bin/python3 -c "print(max(10, int($seconds * 50)))")  # 50 moves per second
pause=$(/usr/bin/python3 -c "print(f'{$seconds / $steps:.3f}')")
gesture=()
start=()  # where the pointer goes before the measurement starts
case "$mode" in
  drag)
    read -r rx ry rw rh <<<"$(field widgets.temperature)"
    y=$((Y + ry + rh / 2))
    x0=$(/usr/bin/python3 -c "print(int($X + $rx + 0.1 * $rw))")
    x1=$(/usr/bin/python3 -c "print(int($X + $rx + 0.9 * $rw))")
    start=("$x0" "$y")
    gesture+=(mousedown 1)
    for i in $(seq 1 "$steps"); do
      gesture+=(mousemove $((x0 + (x1 - x0) * i / steps)) "$y" sleep "$pause")
    done
    gesture+=(mouseup 1)
    ;;
  hover | zoom)
    read -r hx hy hw hh <<<"$(field widgets.heatmap)"
    cx=$((X + hx + hw / 2)); cy=$((Y + hy + hh / 2))
    start=("$cx" "$cy")
    if [ "$mode" = hover ]; then
      for i in $(seq 1 "$steps"); do  # a diagonal zig-zag over the image
        gesture+=(mousemove $((X + hx + hw * ((i * 7) % 100) / 100)) $((Y + hy + hh * ((i * 3) % 100) / 100)) sleep "$pause")
      done
    else
      third=$((steps / 3))
      # (mousedown/mouseup rather than click: xdotool's click pauses ~100 ms after each)
      for _ in $(seq 1 12); do gesture+=(mousedown 4 mouseup 4 sleep "$pause"); done  # wheel up = zoom in
      gesture+=(mousedown 1)
      for i in $(seq 1 "$third"); do
        gesture+=(mousemove $((cx - hw / 4 * i / third)) $((cy - hh / 4 * i / third)) sleep "$pause")
      done
      gesture+=(mouseup 1)
      for _ in $(seq 1 12); do gesture+=(mousedown 5 mouseup 5 sleep "$pause"); done  # wheel down = zoom out
      for i in $(seq 1 "$third"); do  # hover after zooming out
        gesture+=(mousemove $((cx + hw / 4 * i / third)) $((cy + hh / 4 * i / third)) sleep "$pause")
      done
    fi
    ;;
esac

xdotool mousemove "${start[@]}"
sleep 0.5
generation_before="$(field generation)"
first=$(frame_count)
t_start=$(date +%s.%N)
xdotool "${gesture[@]}"
t_end=$(date +%s.%N)
last=$(frame_count)
wait_idle
settle=$(frame_count)

/usr/bin/python3 - "$frames" "$first" "$last" "$settle" "$mode" "$t_start" "$t_end" "$generation_before" <<'PY'
import statistics, sys
path, first, last, settle, mode, t0, t1, gen0 = sys.argv[1:]
first, last, settle, gen0 = int(first), int(last), int(settle), int(gen0)
rows = [l.rstrip("\n").split("\t") for l in open(path)][1:]  # header off; line k = frame k-1
def col(r, i): return float(r[i])
during = rows[first - 1:last - 1]   # frames drawn while xdotool was moving the mouse
after = rows[last - 1:settle - 1]   # until the last trace arrived
if len(during) < 3:
    sys.exit(f"only {len(during)} frames during the gesture")
iv = sorted(col(r, 2) for r in during)
busy = sorted(col(r, 2) - col(r, 3) for r in during)  # the interval minus the wait for input
cpu = sorted(col(r, 4) for r in during)
swap = sorted(col(r, 5) for r in during)
def pct(v, p): return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
def stats(v): return f"median {statistics.median(v):.1f}  p95 {pct(v, 95):.1f}  max {v[-1]:.1f}"
wall = float(t1) - float(t0)
span = (col(during[-1], 1) - col(during[0], 1)) or wall
updating = sum(int(r[6]) for r in during)
gens = {int(r[7]) for r in during + after}
traces = len([g for g in gens if g > gen0])
temps = [col(r, 8) for r in during]
print(f"mode {mode}: {len(during)} frames in {span:.2f} s = {len(during) / span:.1f} fps "
      f"({updating} of them while a trace was being computed)")
print(f"  interval between frame starts ms: {stats(iv)}")
print(f"  same minus waiting for input  ms: {stats(busy)}  (= {1000 / statistics.median(busy):.0f} fps possible)")
print(f"  CPU from frame start to swap  ms: {stats(cpu)}")
print(f"  glfwSwapBuffers               ms: {stats(swap)}")
print(f"  traces shown: {traces} (during the gesture and until the last one arrived, "
      f"{col(after[-1], 1) - col(during[-1], 1) if after else 0:.2f} s after it ended)")
if mode == "drag":
    print(f"  temperature {temps[0]:.3g} -> {temps[-1]:.3g}")
PY
read -r l1 l5 l15 _ </proc/loadavg
echo "  load average during the run: $l1 $l5 $l15 ($(nproc) cores)"
