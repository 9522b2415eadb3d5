#!/usr/bin/env python3
"""Every structure statistic of `spprof analyze --static` against a numpy
recount of the same weights (issue 17's tests).

Synthetic layers built with a known structure (kernel-pruned conv, 4-of-9
kernel patterns, zero input channels, 2:4 along M, magnitude and random
masks of the same sparsity over three weight distributions, an all-zero and
a nearly-zero layer) are written to one safetensors file; spprof's JSON is
then recounted here, figure by figure, from the arrays themselves, and the
class and provenance verdict of each layer checked against its construction.

    structure_recount.py SPPROF        (exit 77 without numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("structure_recount: numpy missing (python3-numpy): skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_writer import write_safetensors  # noqa: E402

FAILS = []


def check(what, got, want, tol=1e-9):
    if isinstance(want, float) or isinstance(got, float):
        ok = got is not None and want is not None and abs(got - want) <= tol * max(1.0, abs(want))
    else:
        ok = got == want
    if not ok:
        FAILS.append("%s: spprof %r, numpy %r" % (what, got, want))


def gemm_view(a):
    """The GEMM view of profiler/layer.c: [out, in] as is; a conv's row o
    runs over (spatial p, input channel c) with c fastest."""
    if a.ndim == 2:
        return a
    o, c = a.shape[:2]
    return a.reshape(o, c, -1).transpose(0, 2, 1).reshape(o, -1)


def groups(w, g):
    """Non-zeros per group of g consecutive elements of each row, W padded."""
    m, k = w.shape
    kp = -(-k // g) * g
    p = np.zeros((m, kp), dtype=bool)
    p[:, :k] = w != 0
    return p.reshape(m, kp // g, g).sum(axis=2)


def zero_blocks(w, b):
    m, k = w.shape
    mp, kp = -(-m // b) * b, -(-k // b) * b
    p = np.zeros((mp, kp), dtype=bool)
    p[:m, :k] = w != 0
    return (p.reshape(mp // b, b, kp // b, b).sum(axis=(1, 3)) == 0).mean()


def provenance(w):
    m, k = w.shape
    step = max(-(-m // 256), -(-(m * k) // (1 << 18)), 1)
    rows = w[::step].astype(np.float32)
    s = np.abs(rows[(rows != 0) & np.isfinite(rows)])
    out = {"rows": rows.shape[0], "survivors": int(s.size)}
    if s.size:
        med = np.sort(s)[(s.size - 1) // 2]
        scale = (np.array([med], np.float32).view(np.uint32) & 0x7FF00000).view(np.float32)[0]
        out["scale"] = float(scale)
        out["low_share"] = float((s < scale / 8).mean())
        out["min_ratio"] = float(s.min()) / float(scale)
    return out


def recount(name, a, lay):
    w = gemm_view(a)
    m, k = w.shape
    p = lay["pattern"]
    nnz = int((w != 0).sum())
    check(name + " nnz", lay["nnz"], nnz)
    for key, n, g in (("nm1_4", 1, 4), ("nm2_4", 2, 4), ("nm4_8", 4, 8)):
        check(name + " " + key, p[key], float((groups(w, g) <= n).mean()))
        check(name + " along_m." + key, p["along_m"][key], float((groups(w.T, g) <= n).mean()))
    for g in (4, 8, 16):
        check(name + " tightest along_k of%d" % g, p["tightest_n"]["along_k"]["of%d" % g],
              int(groups(w, g).max()))
        check(name + " tightest along_m of%d" % g, p["tightest_n"]["along_m"]["of%d" % g],
              int(groups(w.T, g).max()))
    for b in (2, 4, 8, 16):
        check(name + " block%d" % b, p["block%d" % b], float(zero_blocks(w, b)))
    zr, zc = int((~w.any(axis=1)).sum()), int((~w.any(axis=0)).sum())
    check(name + " zero_rows", p["zero_rows"], zr)
    check(name + " zero_cols", p["zero_cols"], zc)
    zeros = m * k - nnz
    gr = p["granularity"]
    levels = {"element": (m * k, zeros, zeros), "row": (m, zr, zr * k), "column": (k, zc, zc * m),
              "layer": (1, int(nnz == 0), zeros if nnz == 0 else 0)}
    if a.ndim == 4 and a.shape[2] * a.shape[3] >= 2:
        kz = ~(a != 0).reshape(a.shape[0], a.shape[1], -1).any(axis=2)
        cz = ~(a != 0).any(axis=(0, 2, 3))
        size = a.shape[2] * a.shape[3]
        levels["kernel"] = (kz.size, int(kz.sum()), int(kz.sum()) * size)
        levels["channel"] = (a.shape[1], int(cz.sum()), int(cz.sum()) * size * a.shape[0])
        masks = {}
        for o in range(a.shape[0]):
            for c in range(a.shape[1]):
                bits = tuple((a[o, c].reshape(-1) != 0).tolist())
                if any(bits):
                    masks[bits] = masks.get(bits, 0) + 1
        counts = sorted(masks.values(), reverse=True)
        check(name + " kernel.patterns", p["kernel"]["patterns"], len(masks))
        if counts:
            check(name + " kernel.top4", p["kernel"]["top4"], sum(counts[:4]) / sum(counts))
    else:
        check(name + " no kernel levels", (gr["kernel"], gr["channel"]), (None, None))
    for lv, (units, zero, held) in levels.items():
        check(name + " granularity." + lv + ".units", gr[lv]["units"], units)
        check(name + " granularity." + lv + ".zero", gr[lv]["zero"], zero)
        check(name + " granularity." + lv + ".fraction", gr[lv]["fraction"], zero / units)
        check(name + " granularity." + lv + ".zeros_share", gr[lv]["zeros_share"],
              held / zeros if zeros else None)
    want_state = "zero" if nnz == 0 else ("nearly_zero" if nnz <= 64 and nnz * 1000 <= m * k else None)
    check(name + " layer_state", p["layer_state"], want_state)
    pv, want = p["provenance"], provenance(w)
    for key, v in want.items():
        check(name + " provenance." + key, pv[key], float(v) if isinstance(v, float) else v)


def layers(rng):
    """name -> (array, expected class, expected verdict or None for 'not checked')."""
    out = {}

    def magnitude(x, s):
        t = np.quantile(np.abs(x), s)
        return np.where(np.abs(x) > t, x, 0).astype(np.float32)

    def random_mask(x, s):
        return np.where(rng.random(x.shape) >= s, x, 0).astype(np.float32)

    draws = {"gauss": lambda sh: rng.standard_normal(sh),
             "laplace": lambda sh: rng.laplace(size=sh),
             "uniform": lambda sh: rng.uniform(-1, 1, sh)}
    for dist, draw in draws.items():
        for s in (0.5, 0.9):
            x = draw((192, 320))
            out["%s_magnitude_%d.weight" % (dist, s * 100)] = (magnitude(x, s), "unstructured",
                                                              "magnitude-like")
            # at 90 % a random mask is 4:8 by chance: no class expected
            out["%s_random_%d.weight" % (dist, s * 100)] = (random_mask(x, s),
                                                           "unstructured" if s < 0.9 else None,
                                                           "random-like")
    # non-finite values count as non-zeros but not as survivors of the provenance
    a = out["uniform_random_50.weight"][0]
    a[0, 3], a[5, 7] = np.nan, np.inf
    x = rng.standard_normal((96, 96))
    # the lowest sparsity the docs promise a magnitude mask is seen at
    out["gauss_magnitude_10.weight"] = (magnitude(x, 0.1), "unstructured", "magnitude-like")
    x = rng.standard_normal((96, 96))
    out["gauss_magnitude_4.weight"] = (magnitude(x, 0.04), "dense", None)
    x = rng.standard_normal((64, 32, 3, 3)).astype(np.float32)
    kz = rng.random((64, 32)) < 0.7
    x[kz] = 0
    out["kernel_pruned.weight"] = (x, "kernel", None)
    shapes = [np.array(m, dtype=bool).reshape(3, 3) for m in
              ([0, 1, 0, 1, 1, 1, 0, 0, 0], [0, 1, 0, 1, 1, 0, 0, 1, 0],
               [0, 0, 0, 1, 1, 1, 0, 1, 0], [0, 1, 0, 0, 1, 1, 0, 1, 0])]
    x = rng.standard_normal((48, 40, 3, 3)).astype(np.float32)
    pick = rng.integers(0, 4, (48, 40))
    for o in range(48):
        for c in range(40):
            x[o, c][~shapes[pick[o, c]]] = 0
    out["pattern_pruned.weight"] = (x, "pattern", None)
    x = rng.standard_normal((32, 24, 3, 3)).astype(np.float32)
    x[:, [1, 5, 6, 20], :, :] = 0
    x[rng.random(x.shape) < 0.1] = 0
    out["zero_in_channels.weight"] = (x, None, None)
    # 2:4 along M: in each column, two of every four rows kept
    x = rng.standard_normal((128, 96)).astype(np.float32)
    for c in range(96):
        for r0 in range(0, 128, 4):
            drop = rng.choice(4, 2, replace=False)
            x[r0 + drop, c] = 0
    out["nm2_4_along_m.weight"] = (x, None, None)
    out["all_zero.weight"] = (np.zeros((64, 80), np.float32), None, None)
    x = np.zeros((100, 200), np.float32)
    x[rng.integers(0, 100, 12), rng.integers(0, 200, 12)] = 1.5
    out["nearly_zero.weight"] = (x, None, None)
    return out


def main():
    spprof = sys.argv[1]
    rng = np.random.default_rng(17)
    built = layers(rng)
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "structure.safetensors")
        write_safetensors(model, {n: a for n, (a, _, _) in built.items()})
        r = subprocess.run([spprof, "analyze", model, "--static", "--format", "json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("structure_recount: spprof exit %d: %s" % (r.returncode, r.stderr))
            return 1
        rep = json.loads(r.stdout)
        text = subprocess.run([spprof, "analyze", model, "--static"], capture_output=True,
                              text=True).stdout
    by_name = {l["name"]: l for l in rep["layers"]}
    check("layers", sorted(by_name), sorted(built))
    for name, (a, cls, verdict) in built.items():
        lay = by_name.get(name)
        if not lay:
            continue
        recount(name, a, lay)
        if cls:
            check(name + " class", lay["pattern"]["class"], cls)
        if verdict:
            check(name + " verdict", lay["pattern"]["provenance"]["verdict"], verdict)
        if name.startswith(("gauss_random", "laplace_random", "uniform_random")):
            check(name + " never magnitude-like",
                  lay["pattern"]["provenance"]["verdict"] != "magnitude-like", True)
    d = by_name["nm2_4_along_m.weight"]["diagnosis"]
    check("wrong-axis note in a static report", "2:4 along the wrong axis" in d, True)
    check("all-zero note", "every weight is zero" in by_name["all_zero.weight"]["diagnosis"], True)
    check("zero input channels note",
          "4 of the 24 input channels" in by_name["zero_in_channels.weight"]["diagnosis"], True)
    summ = rep["summary"]
    check("summary.zero_layers", summ["zero_layers"], 1)
    check("summary.nearly_zero_layers", summ["nearly_zero_layers"], 1)
    judged = [l for l in rep["layers"] if l["pattern"]["provenance"]["verdict"]]
    for v, key in (("magnitude-like", "magnitude_like"), ("random-like", "random_like"),
                   ("unclear", "unclear"), ("structured", "structured")):
        check("summary.provenance.layers." + key, summ["provenance"]["layers"][key],
              sum(1 for l in judged if l["pattern"]["provenance"]["verdict"] == v))
    check("text report names the provenance", "magnitude-like" in text, True)
    if FAILS:
        for f in FAILS:
            print("FAIL", f)
        print("structure_recount: %d of the figures differ" % len(FAILS))
        return 1
    print("structure_recount: %d layers, every figure equal to the numpy recount" % len(built))
    return 0


if __name__ == "__main__":
    sys.exit(main())
