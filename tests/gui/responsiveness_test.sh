#!/usr/bin/env bash
# The GUI keeps drawing while traces are recomputed: drag the temperature slider for ~2.5 s on a
# 512-token, d_model = 512, 8-head layer (every step asks for a new trace) and check, from the app's
# own --frame-log and --state-log:
#   - many frames were drawn while a trace was being computed (the old trace stayed on screen and the
#     UI kept answering: a GUI that waited for the computation would log a handful of long frames);
#   - the median frame interval during the drag is below 100 ms;
#   - the temperature moved and the weights on screen changed (new traces arrived during the drag).
# The numbers themselves (≥ 30 fps) are measured and reported by scripts/measure_frames.sh; this test
# only guards against the GUI blocking on the computation, with bounds generous enough not to
# depend on how loaded the test machine is.
#   usage: bash tests/gui/responsiveness_test.sh path/to/attnviz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gui_init "$@"
frames="$tmp/frames.tsv"

"$bin" --state-log "$log" --frame-log "$frames" --stage weights \
  --set length=512 --set d_model=512 --set heads=8 >"$tmp/app.out" 2>&1 &
app_pid=$!
wait_for "the first trace" 's["weights_checksum"] != "" and not s["updating"] and "temperature" in s["widgets"] and s.get("n") == 512' 120

wid="$(xdotool search --sync --onlyvisible --name '^attnviz$' | head -n 1)"
[ -n "$wid" ] || fail "no window called attnviz"
eval "$(xdotool getwindowgeometry --shell "$wid")"
xdotool windowfocus --sync "$wid" || true

sum0="$(field weights_checksum)"
t0="$(field temperature)"
read -r rx ry rw rh <<<"$(field widgets.temperature)"
y=$((Y + ry + rh / 2))
x0=$((X + rx + rw * 15 / 100))
x1=$((X + rx + rw * 85 / 100))
xdotool mousemove "$x0" "$y"
sleep 0.3
first=$(wc -l <"$frames")

# One xdotool process: press, 120 small moves 20 ms apart (~2.5 s), release.
steps=120
gesture=(mousedown 1)
for i in $(seq 1 "$steps"); do gesture+=(mousemove $((x0 + (x1 - x0) * i / steps)) "$y" sleep 0.02); done
gesture+=(mouseup 1)
xdotool "${gesture[@]}"
last=$(wc -l <"$frames")

wait_for "temperature change" "abs(s['temperature'] - $t0) > 1e-6"
wait_for "the final trace" "s['weights_checksum'] not in ('', '$sum0') and not s['updating']"

/usr/bin/python3 - "$frames" "$first" "$last" <<'PY' || fail "the GUI did not keep drawing during the recomputation"
import statistics, sys
path, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [l.split("\t") for l in open(path)][1:]
header = open(path).readline().split()
col = {name: i for i, name in enumerate(header)}
during = rows[first - 1:last - 1]
updating = [r for r in during if r[col["updating"]] == "1"]
generations = {r[col["generation"]] for r in during}
intervals = [float(r[col["interval_ms"]]) for r in during]
median = statistics.median(intervals) if intervals else float("inf")
print(f"drag: {len(during)} frames, {len(updating)} while a trace was computed, "
      f"{len(generations)} traces shown, median interval {median:.1f} ms")
# At 30 fps a 2.5 s drag draws ~75 frames; 20 leaves room for a heavily loaded machine, while a GUI
# that blocked on each 512 x 512 x 8-head trace would draw only a few frames with the updating flag.
assert len(updating) >= 20, f"only {len(updating)} frames were drawn while a trace was computed"
# 100 ms (10 fps) is three times the 30 fps target: a loaded CI machine stays well below it, a GUI
# that waits for the computation (hundreds of ms per trace at this size on one core) does not.
assert median < 100.0, f"median frame interval {median:.1f} ms during the drag"
# New traces were shown while the mouse was still moving, not only after it stopped.
assert len(generations) >= 2, "no new trace arrived during the drag"
PY
echo "slider drag: T $t0 -> $(field temperature), weights $sum0 -> $(field weights_checksum)"
echo "PASS"
