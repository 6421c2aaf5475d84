# PNG checks for tests/windows/wine_test.sh (pixels decoded by tests/gui/png_check.py's reader).
#   compare_png.py A.png B.png TOL   same size, every channel of every pixel within TOL/255
#   compare_png.py --heatmap X.png   not blank, and coloured cells (a heatmap) cover part of it
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gui"))
from png_check import read_png  # noqa: E402

if sys.argv[1] == "--heatmap":
    img = read_png(sys.argv[2])
    rgb = img[:, :, :3].astype(np.int32)
    keys = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    distinct = len(np.unique(keys))
    # The window's chrome is grey; the colour maps (viridis, magma, the diverging one) are not.
    coloured = float(((rgb.max(axis=2) - rgb.min(axis=2)) > 60).mean())
    print(f"ok: {sys.argv[2]}: {img.shape[1]}x{img.shape[0]}, {distinct} distinct colours, "
          f"{coloured:.1%} of it coloured (heatmap cells)")
    sys.exit(0 if distinct >= 50 and coloured > 0.02 else 1)

a, b, tol = read_png(sys.argv[1]), read_png(sys.argv[2]), int(sys.argv[3])
if a.shape != b.shape:
    print(f"FAIL: {sys.argv[1]} is {a.shape}, {sys.argv[2]} is {b.shape}")
    sys.exit(1)
diff = np.abs(a.astype(np.int32) - b.astype(np.int32))
worst = int(diff.max())
same = open(sys.argv[1], "rb").read() == open(sys.argv[2], "rb").read()
print(f"ok: render: {a.shape[1]}x{a.shape[0]}, largest pixel difference {worst}/255 "
      f"({int((diff.max(axis=2) > 0).sum())} pixels differ; files {'byte-identical' if same else 'differ'})")
sys.exit(0 if worst <= tol else 1)
