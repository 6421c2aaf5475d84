#!/usr/bin/python3
"""Checks attnviz's numbers against an independent NumPy implementation of attention.

usage: /usr/bin/python3 numpy_forward_test.py /path/to/attnviz

For several configs it runs `attnviz dump`, loads every .npy file with numpy.load, and recomputes the
multi-head forward pass in float64 from the dumped input X (and source Y), W_Q, W_K, W_V and W_O only:

    Q = X W_Q,  K = Y W_K,  V = Y W_V                      (per head; Y = X for self-attention)
    S = Q Kᵀ,  scaled = S / √d_k,  masked = scaled or −∞
    A = softmax(masked / T)   (row max subtracted before exp)
    head = A V,  concat = [head_0 … head_h−1],  output = concat W_O,  residual = X + output

plus RoPE, pre/post LayerNorm and linear attention φ(Q)(φ(K)ᵀV) where the config asks for them.
Every recomputed stage must match the dump to 1e-5 (relative, with an absolute floor for values near
0 that scales with the stage's magnitude: float32 cannot do better). Exits non-zero naming the
config, stage, head and cell (i, j) of every mismatch.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

RTOL = 1e-5
ATOL = 1e-5

# (name, --set arguments)
CASES = [
    ("default", []),
    ("heads4_causal_T0.5", ["heads=4", "mask=causal", "temperature=0.5"]),
    ("cross_attention", ["text=the black cat is sleeping", "source_text=le chat noir dort", "heads=2"]),
    ("rope", ["positional=rope"]),
    ("additive", ["scoring=additive"]),
    ("linear_elu1_causal", ["attention=linear", "phi=elu1", "mask=causal"]),
    ("layernorm_pre", ["layernorm=pre"]),
    ("layernorm_post_window", ["layernorm=post", "mask=window", "window=2", "heads=8"]),
    ("dot_padding_chinese", ["text=毛茸茸的蓝色生物在翠绿的森林里漫步。", "scoring=dot", "mask=padding", "valid_length=5"]),
]


class Checker:
    def __init__(self):
        self.failures = []
        self.checked = 0

    def fail(self, case, msg):
        self.failures.append(f"[{case}] {msg}")

    def compare(self, case, stage, head, got, expected, rtol=RTOL, atol=ATOL):
        """Compares one dumped matrix with the float64 recomputation, naming the first bad cells."""
        self.checked += 1
        where = stage if head is None else f"{stage} head {head}"
        expected = np.asarray(expected, dtype=np.float64)
        if expected.ndim == 1:
            expected = expected.reshape(-1, 1)
        if got.shape != expected.shape:
            self.fail(case, f"{where}: shape {got.shape}, expected {expected.shape}")
            return
        g = got.astype(np.float64)
        # −∞ (masked scores) must be exactly where expected, with the same sign.
        inf_g, inf_e = np.isinf(g), np.isinf(expected)
        bad = (inf_g != inf_e) | (inf_g & inf_e & (np.sign(g) != np.sign(expected))) | np.isnan(g)
        finite = ~inf_g & ~inf_e & ~np.isnan(g)
        scale = np.max(np.abs(expected[finite])) if finite.any() else 1.0
        floor = atol * max(1.0, scale)  # float32 rounding is relative to the stage's largest entries
        diff = np.zeros_like(g)
        diff[finite] = np.abs(g[finite] - expected[finite])
        tol = floor + rtol * np.abs(np.where(finite, expected, 0.0))
        bad |= finite & (diff > tol)
        if bad.any():
            cells = np.argwhere(bad)
            lines = []
            for i, j in cells[:5]:
                lines.append(
                    f"({i}, {j}): attnviz {g[i, j]!r} vs numpy {expected[i, j]!r} "
                    f"(|diff| {diff[i, j]:.3g} > tol {tol[i, j]:.3g})"
                )
            more = f" … and {len(cells) - 5} more" if len(cells) > 5 else ""
            self.fail(case, f"{where}: {len(cells)} cell(s) differ: " + "; ".join(lines) + more)


def softmax_rows(S):
    """Row-wise softmax; −∞ gives exactly 0 and an all −∞ row gives zeros (never NaN)."""
    out = np.zeros_like(S)
    for i in range(S.shape[0]):
        row = S[i]
        ok = np.isfinite(row)
        if not ok.any():
            continue
        e = np.exp(row[ok] - row[ok].max())
        out[i, ok] = e / e.sum()
    return out


def layernorm_rows(X, eps=1e-5):
    mean = X.mean(axis=1, keepdims=True)
    var = ((X - mean) ** 2).mean(axis=1, keepdims=True)
    return (X - mean) / np.sqrt(var + eps)


def rope(X, base):
    """Rotates each pair (2i, 2i+1) of row p by the angle p·ωᵢ, ωᵢ = base^(−2i/d)."""
    n, d = X.shape
    R = np.empty_like(X)
    p = np.arange(n, dtype=np.float64)
    for i in range(d // 2):
        w = base ** (-2.0 * i / d)
        c, s = np.cos(p * w), np.sin(p * w)
        x0, x1 = X[:, 2 * i], X[:, 2 * i + 1]
        R[:, 2 * i] = x0 * c - x1 * s
        R[:, 2 * i + 1] = x0 * s + x1 * c
    return R


def sinusoidal(n, d, base):
    P = np.zeros((n, d))
    p = np.arange(n, dtype=np.float64)
    for k in range(d):
        w = base ** (-(2 * (k // 2)) / d)
        P[:, k] = np.sin(p * w) if k % 2 == 0 else np.cos(p * w)
    return P


def allowed_mask(cfg, n, m):
    """True where query i may attend to key j."""
    i = np.arange(n)[:, None]
    j = np.arange(m)[None, :]
    kind = cfg["mask"]
    if kind == "none":
        return np.ones((n, m), dtype=bool)
    if kind == "causal":
        return j <= i
    if kind == "padding":
        v = cfg["valid_length"]
        return np.broadcast_to(j < v if v >= 0 else np.ones_like(j, dtype=bool), (n, m)).copy()
    if kind == "window":
        w = cfg["window"]
        return (j <= i) & (j > i - w)
    raise ValueError(f"mask {kind} not covered by this reference")


def elu1(X):
    return np.where(X > 0, X + 1.0, np.exp(np.minimum(X, 0.0)))


def run_case(attnviz, case, sets, workdir, chk):
    out = os.path.join(workdir, case)
    cmd = [attnviz, "dump", "--out", out, "--threads", "2"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        chk.fail(case, f"`{' '.join(cmd)}` exited {proc.returncode}: {proc.stderr.strip()}")
        return
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
        man = json.load(f)
    cfg = man["config"]

    # --- the manifest ------------------------------------------------------------------------
    for key in ["attnviz_dump", "config", "query_tokens", "key_tokens", "n", "m", "d_model", "heads", "d_k", "d_v", "stages"]:
        if key not in man:
            chk.fail(case, f"manifest.json has no '{key}'")
            return
    for s in sets:
        k, v = s.split("=", 1)
        if str(cfg[k]).lower() != v.lower() and not (isinstance(cfg[k], float) and float(v) == cfg[k]):
            chk.fail(case, f"manifest config {k} = {cfg[k]!r}, but --set {s}")
    n, m, h, d_model, d_k, d_v = (man[k] for k in ["n", "m", "heads", "d_model", "d_k", "d_v"])
    if len(man["query_tokens"]) != n or len(man["key_tokens"]) != m:
        chk.fail(case, f"manifest has {len(man['query_tokens'])} query / {len(man['key_tokens'])} key tokens for n={n}, m={m}")

    stages = {}
    listed = {"manifest.json"}
    for e in man["stages"]:
        name, head, shape, fname = e["name"], e["head"], e["shape"], e["file"]
        expect_file = f"{name}.npy" if head is None else f"{name}_h{head}.npy"
        if fname != expect_file:
            chk.fail(case, f"stage {name} head {head}: file {fname!r}, expected {expect_file!r}")
        for field in ["formula", "title", "kind"]:
            if not isinstance(e.get(field), str) or (field != "formula" and not e[field]):
                chk.fail(case, f"stage {name} head {head}: manifest field {field!r} missing or empty")
        if e["kind"] not in ("signed", "probability", "non_negative", "indicator"):
            chk.fail(case, f"stage {name} head {head}: unknown kind {e['kind']!r}")
        listed.add(fname)
        path = os.path.join(out, fname)
        if not os.path.exists(path):
            chk.fail(case, f"stage {name} head {head}: {fname} is missing")
            continue
        a = np.load(path)
        if a.dtype != np.dtype("<f4") or a.ndim != 2 or not a.flags["C_CONTIGUOUS"]:
            chk.fail(case, f"{fname}: dtype {a.dtype}, {a.ndim}-D, C order {a.flags['C_CONTIGUOUS']}; expected 2-D C-order <f4")
        if list(a.shape) != list(shape):
            chk.fail(case, f"{fname}: shape {a.shape} but manifest says {shape}")
        stages[(name, head)] = a
    extra = set(os.listdir(out)) - listed
    if extra:
        chk.fail(case, f"files not in the manifest: {sorted(extra)}")

    def get(name, head=None):
        if (name, head) not in stages:
            chk.fail(case, f"stage {name} head {head} is not in the dump")
            raise KeyError(name)
        return stages[(name, head)].astype(np.float64)

    try:
        recompute(case, cfg, man, get, stages, chk)
    except KeyError:
        pass


def recompute(case, cfg, man, get, stages, chk):
    n, m, h, d_model, d_k, d_v = (man[k] for k in ["n", "m", "heads", "d_model", "d_k", "d_v"])
    cross = bool(cfg["source_text"])
    T = float(cfg["temperature"])

    # --- input: X = E + P ---------------------------------------------------------------------
    X = get("input")                                   # n x d_model
    chk.compare(case, "input", None, stages[("input", None)], get("embedding") + get("positional"))
    if cfg["positional"] == "sinusoidal":
        chk.compare(case, "positional", None, stages[("positional", None)], sinusoidal(n, d_model, float(cfg["pe_base"])))
    one_hot = get("one_hot")                           # n x V
    if not (np.all((one_hot == 0) | (one_hot == 1)) and np.all(one_hot.sum(axis=1) == 1)):
        chk.fail(case, "one_hot: rows must hold exactly one 1")
    Y = get("source") if cross else X                  # m x d_model

    if cfg["layernorm"] == "pre":
        Xn = layernorm_rows(X)
        chk.compare(case, "layernorm", None, stages[("layernorm", None)], Xn)
        Yn = layernorm_rows(Y) if cross else Xn
    else:
        Xn, Yn = X, Y

    allowed = allowed_mask(cfg, n, m)                  # n x m
    heads = []
    for hd in range(h):
        W_Q, W_K, W_V = get("W_Q", hd), get("W_K", hd), get("W_V", hd)
        Q = Xn @ W_Q                                   # n x d_k
        K = Yn @ W_K                                   # m x d_k
        V = Yn @ W_V                                   # m x d_v
        chk.compare(case, "Q", hd, stages[("Q", hd)], Q)
        chk.compare(case, "K", hd, stages[("K", hd)], K)
        chk.compare(case, "V", hd, stages[("V", hd)], V)
        if cfg["positional"] == "rope":
            Q = rope(Q, float(cfg["pe_base"]))
            K = rope(K, float(cfg["pe_base"]))
            chk.compare(case, "Q_rot", hd, stages[("Q_rot", hd)], Q)
            chk.compare(case, "K_rot", hd, stages[("K_rot", hd)], K)

        if cfg["attention"] == "linear":
            if cfg["phi"] != "elu1":
                raise ValueError("this reference covers phi=elu1")
            pQ, pK = elu1(Q), elu1(K)                  # n x d_k, m x d_k
            chk.compare(case, "phi_Q", hd, stages[("phi_Q", hd)], pQ)
            chk.compare(case, "phi_K", hd, stages[("phi_K", hd)], pK)
            chk.compare(case, "KV", hd, stages[("KV", hd)], pK.T @ V)      # d_k x d_v
            sim = (pQ @ pK.T) * allowed                # n x m, φ(q_i)·φ(k_j) where allowed
            z = sim.sum(axis=1, keepdims=True)         # n x 1
            chk.compare(case, "normalizer", hd, stages[("normalizer", hd)], z)
            A = sim / z
            chk.compare(case, "weights", hd, stages[("weights", hd)], A)
            head = A @ V                               # n x d_v
        else:
            if cfg["scoring"] in ("scaled_dot", "dot"):
                S = Q @ K.T                            # n x m
                chk.compare(case, "scores", hd, stages[("scores", hd)], S)
            elif cfg["scoring"] == "additive":
                # The additive scorer's own small network (W_q, W_k, w_v) is not dumped: continue
                # from attnviz's scores, checking everything after them.
                S = get("scores", hd)
            else:
                raise ValueError(f"scoring {cfg['scoring']} not covered by this reference")
            scaled = S / np.sqrt(d_k) if cfg["scoring"] == "scaled_dot" else S
            chk.compare(case, "scaled", hd, stages[("scaled", hd)], scaled)
            masked = np.where(allowed, scaled, -np.inf)
            chk.compare(case, "masked", hd, stages[("masked", hd)], masked)
            A = softmax_rows(masked / T)               # n x m
            chk.compare(case, "weights", hd, stages[("weights", hd)], A)
            rows = A.sum(axis=1)
            if not np.allclose(rows[allowed.any(axis=1)], 1.0, atol=1e-12):
                chk.fail(case, f"reference weights head {hd} rows do not sum to 1")
            head = A @ V                               # n x d_v
        chk.compare(case, "head_output", hd, stages[("head_output", hd)], head)
        heads.append(head)

    concat = np.concatenate(heads, axis=1)             # n x (h*d_v)
    chk.compare(case, "concat", None, stages[("concat", None)], concat)
    output = concat @ get("W_O")                       # n x d_model
    chk.compare(case, "output", None, stages[("output", None)], output)
    after = output
    if cfg["residual"]:
        after = X + output                             # the residual adds to the raw X, even with pre-LN
        chk.compare(case, "residual", None, stages[("residual", None)], after)
    if cfg["layernorm"] == "post":
        chk.compare(case, "layernorm_post", None, stages[("layernorm_post", None)], layernorm_rows(after))


def check_refusal(attnviz, workdir, chk):
    """A config attnviz cannot compute: one line on stderr, non-zero exit, no directory."""
    out = os.path.join(workdir, "refused")
    proc = subprocess.run([attnviz, "dump", "--out", out, "--set", "heads=3"], capture_output=True, text=True)
    chk.checked += 1
    if proc.returncode == 0:
        chk.fail("refusal", "heads=3 with d_model=64 was accepted")
    elif not proc.stderr.startswith("attnviz dump: ") or proc.stderr.count("\n") != 1 or "heads" not in proc.stderr:
        chk.fail("refusal", f"expected one line 'attnviz dump: … heads …' on stderr, got {proc.stderr!r}")
    leftovers = [f for f in os.listdir(workdir) if f.startswith("refused")]
    if leftovers:
        chk.fail("refusal", f"a refused dump left {leftovers}")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    attnviz = os.path.abspath(sys.argv[1])
    chk = Checker()
    workdir = tempfile.mkdtemp(prefix="attnviz-numpy-ref-")
    try:
        for case, sets in CASES:
            before = len(chk.failures)
            count = chk.checked
            run_case(attnviz, case, sets, workdir, chk)
            status = "ok  " if len(chk.failures) == before else "FAIL"
            print(f"{status} {case:24s} {chk.checked - count:3d} matrices compared  (--set {' '.join(sets) or '(defaults)'})")
        check_refusal(attnviz, workdir, chk)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if chk.failures:
        print(f"\n{len(chk.failures)} problem(s):")
        for f in chk.failures:
            print("  " + f)
        return 1
    print(f"\nall {chk.checked} comparisons agree with NumPy (float64) to {RTOL:g} relative")
    return 0


if __name__ == "__main__":
    sys.exit(main())
