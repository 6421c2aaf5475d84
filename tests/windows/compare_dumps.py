# Compares two `attnviz dump` folders (tests/windows/wine_test.sh): the same manifest stages and
# shapes, every .npy within float32 rounding of the other (the two builds may sum in another order).
#   compare_dumps.py LINUX_DIR WINDOWS_DIR LABEL
import json
import os
import sys

import numpy as np

lin, win, label = sys.argv[1:4]
ml, mw = (json.load(open(os.path.join(d, "manifest.json"))) for d in (lin, win))
sl = [s["name"] + str(s.get("head", "")) for s in ml["stages"]]
sw = [s["name"] + str(s.get("head", "")) for s in mw["stages"]]
if sl != sw:
    print(f"FAIL: {label}: stages differ: {sl} vs {sw}")
    sys.exit(1)
files = sorted(f for f in os.listdir(lin) if f.endswith(".npy"))
if sorted(f for f in os.listdir(win) if f.endswith(".npy")) != files:
    print(f"FAIL: {label}: the .npy files differ")
    sys.exit(1)
worst, where = 0.0, ""
for f in files:
    a, b = np.load(os.path.join(lin, f)), np.load(os.path.join(win, f))
    if a.shape != b.shape:
        print(f"FAIL: {label}: {f} is {a.shape} on Linux, {b.shape} on Windows")
        sys.exit(1)
    finite = np.isfinite(a)
    if not np.array_equal(finite, np.isfinite(b)) or not np.array_equal(a[~finite], b[~finite]):
        print(f"FAIL: {label}: {f}: the infinities (masks) differ")
        sys.exit(1)
    d = np.abs(a[finite].astype(np.float64) - b[finite]) / (1.0 + np.abs(a[finite].astype(np.float64)))
    if d.size and d.max() > worst:
        worst, where = float(d.max()), f
print(f"ok: {label}: {len(files)} arrays, largest difference {worst:.2e} (relative to 1 + |x|, in {where or '-'})")
sys.exit(0 if worst < 1e-4 else 1)
