#!/usr/bin/env python3
"""The Core ML loader against an independent numpy reading of the same files.

Written here with coreml_writer.py's protobuf wire encoder (no protobuf
library): neuralNetwork, ...Classifier and ...Regressor .mlmodel files
(innerProduct, convolution, batchedMatmul, a deconvolution; float32, float16,
8- and 3-bit linear and 4-bit LUT weights) and two .mlpackage ML programs
(CoreML7: linear, conv, matmul, conv_transpose on const weights, iOS16
constexpr_sparse_to_dense and 2-bit constexpr_lut_to_dense; CoreML8: their
iOS18 forms). Every layer's figures are compared with the W numpy builds from
Core ML's layouts, and coreml_writer.py's reading must read back what was
written. Bad files exit 2 naming the file, and the reading refuses them.

    coreml_check.py SPPROF      (exit 77 without numpy)
    coreml_check.py --self      (the writer against its reading alone)
"""
import collections
import os
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("coreml_check: numpy missing: skipped")
    sys.exit(77)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from coreml_writer import *  # noqa: E402,F403  (the writer and the reading)
from check_common import analyze, pruned, report  # noqa: E402

RNG = np.random.default_rng(19)
FAILS = []
DEFAULT_N = 128  # spprof's --n


class Figures(collections.namedtuple(
        "Figures", "op_type node m k n n_source dtype nnz zero_rows zero_cols bias storage")):
    w = None  # the W they count, where known; not compared by ==


def figures(op_type, node, w, n, dtype, bias=None, storage=None, source="model"):
    """One layer's figures, the same whoever counts them; n None: --n's."""
    nz = w != 0
    f = Figures(op_type, node, w.shape[0], w.shape[1], int(DEFAULT_N if n is None else n),
                source, dtype, int(nz.sum()), int((~nz.any(1)).sum()), int((~nz.any(0)).sum()),
                bias, storage)
    f.w = w
    return f


# ---- NeuralNetwork layers (NeuralNetwork.proto); W from the arrays written ----


def pack_msb(q, nbits):
    """NeuralNetwork's rawValue: each value's bits from its top one down, bytes from bit 7."""
    acc, bits = 0, np.size(q) * nbits
    for v in np.ravel(q):
        acc = acc << nbits | int(v)
    return (acc << -bits % 8).to_bytes((bits + 7) // 8, "big")


def weights(w=None, f16=None, raw=None, nbits=0, scale=(), bias=(), lut=()):
    """WeightParams: floatValue 1, float16Value 2, or rawValue 30 with quantization 40
    {numberOfBits 1, linearQuantization 101 {scale 1, bias 2}, or lookupTable 102 {1}}."""
    if w is not None:
        return floats(1, np.ravel(w))
    if f16 is not None:
        return blob(2, np.ascontiguousarray(f16, "<f2").tobytes())
    kind = msg(101, floats(1, scale), floats(2, bias)) if len(scale) else msg(102, floats(1, lut))
    return blob(30, raw) + msg(40, uint(1, nbits), kind)


def inner_product(c_in, c_out, wp, bias=None):
    return uint(1, c_in) + uint(2, c_out) + uint(10, bias is not None) + blob(20, wp) + \
        blob(21, bias)


def convolution(out_ch, kernel_ch, ksize, wp, groups=1, deconv=False, bias=None):
    return uint(1, out_ch) + uint(2, kernel_ch) + uint(10, groups) + varints(20, ksize) + \
        uint(60, deconv) + uint(70, bias is not None) + blob(90, wp) + blob(91, bias)


def batched_matmul(x1, x2, wp, bias=None):
    """weightMatrixFirstDimension X1 (K), Second X2 (out); the [X1, X2] weight column-major."""
    return uint(5, x1) + uint(6, x2) + uint(7, bias is not None) + blob(8, wp) + blob(9, bias)


def layer(name, kind, params, out_shape=None):
    """NeuralNetworkLayer: name 1, input 2, output 3, outputTensor 5 {rank 1, dimValue 2}."""
    shape = msg(5, uint(1, len(out_shape)), varints(2, out_shape)) if out_shape else b""
    return blob(1, name) + blob(2, name + "_in") + blob(3, name + "_out") + shape + \
        blob(kind, params)


def nn_model(top, layers, extra=b"", spec=4):
    """Model {specificationVersion 1, top {layers 1, extra}}; no description."""
    return uint(1, spec) + msg(top, *(blob(1, l) for l in layers), extra)


def matrix(m, k, density=0.4, dtype=np.float32):
    return pruned(RNG, m, k, density, dtype)


def codes(m, k, top, zero=0):
    """[m, k] codes in [0, top), `zero` where W is 0: often, row 0 and the last column."""
    q = RNG.integers(0, top, (m, k))
    q[RNG.random((m, k)) < 0.5] = zero
    q[0] = zero
    q[:, -1] = zero
    return q


def to_oihw(w, kh, kw):  # W [O, kh*kw*I], the channel fastest, back to OIHW
    return w.reshape(len(w), kh, kw, -1).transpose(0, 3, 1, 2)


def nn_float():
    """innerProduct float32 with a bias, convolution float16 (OIHW), batchedMatmul (its
    [X1, X2] = [K, out] matrix column-major: W [out, K] row-major), a deconvolution (weight
    [C_in, C_out, kh, kw], W [C_out*kh*kw, C_in], no outputTensor: --n's N)."""
    fc, b, bmm, up = matrix(10, 24), RNG.standard_normal(10), matrix(7, 16), matrix(16, 5)
    conv, cb = matrix(6, 3 * 3 * 4).astype(np.float16), RNG.standard_normal(6)
    p = convolution(6, 4, (3, 3), weights(f16=to_oihw(conv, 3, 3)), bias=weights(f16=cb))
    bp = batched_matmul(16, 7, weights(np.ravel(bmm.T, order="F")), weights(b[:7]))
    return [(layer("fc", INNER_PRODUCT, inner_product(24, 10, weights(fc), weights(b)),
                   (1, 3, 10, 1, 1)), figures("innerProduct", "fc", fc, 3, "F32", "fc/bias")),
            (layer("conv", CONVOLUTION, p, (1, 6, 5, 5)),
             figures("convolution", "conv", conv, 25, "F16", "conv/bias")),
            (layer("bmm", BATCHED_MATMUL, bp, (2, 3, 7)),
             figures("batchedMatmul", "bmm", bmm, 6, "F32", "bmm/bias")),
            (layer("up", CONVOLUTION, convolution(4, 5, (2, 2), weights(up.T.reshape(5, 4, 2, 2)),
                                                  deconv=True)),
             figures("convolution", "up", up, DEFAULT_N, "F32", source="option"))]


def nn_quantized():
    """8 bits linear, a scale (a power of two: W exact) and bias per channel, 0 at q = zp;
    a 4-bit LUT (lut[0] = 0) in two groups (kernelChannels C_in / 2), a -1 in its shape."""
    zp, scale = RNG.integers(0, 256, 8), (2.0 ** -RNG.integers(3, 8, 8)).astype(np.float32)
    q8 = np.where(codes(8, 20, 1, 1) == 1, zp[:, None], RNG.integers(0, 256, (8, 20)))
    bias = (-zp * scale).astype(np.float32)
    raw8 = pack_msb(q8, 8)
    fc8 = inner_product(20, 8, weights(raw=raw8, nbits=8, scale=scale, bias=bias))
    lut, q4 = RNG.standard_normal(16).astype(np.float32), codes(8, 3 * 3 * 3, 16)
    lut[0] = 0
    raw4 = pack_msb(to_oihw(q4, 3, 3), 4)
    pal = convolution(8, 3, (3, 3), weights(raw=raw4, nbits=4, lut=lut), groups=2)
    w8 = q8.astype(np.float32) * scale[:, None] + bias[:, None]
    return [(layer("fc8", INNER_PRODUCT, fc8, (1, 4, 8, 1, 1)),
             figures("innerProduct", "fc8", w8, 4, "F32", None, ("coreml-linear", len(raw8) + 64))),
            (layer("pal", CONVOLUTION, pal, (1, 8, -1, -1)),
             figures("convolution", "pal", lut[q4], DEFAULT_N, "F32", None,
                     ("coreml-lut", len(raw4) + 64), "option"))]


def nn_head():
    """A float16 innerProduct; then 3 bits, one scale and bias for all, values across bytes."""
    w, b, q = matrix(5, 30).astype(np.float16), RNG.standard_normal(5), codes(6, 11, 8, 3)
    raw = pack_msb(q, 3)
    fc3 = inner_product(11, 6, weights(raw=raw, nbits=3, scale=[0.25], bias=[-0.75]))
    w3 = q.astype(np.float32) * np.float32(0.25) - np.float32(0.75)
    return [(layer("head", INNER_PRODUCT, inner_product(30, 5, weights(f16=w), weights(f16=b)),
                   (1, 1, 5, 1, 1)), figures("innerProduct", "head", w, 1, "F16", "head/bias")),
            (layer("fc3", INNER_PRODUCT, fc3, (5, 6)),
             figures("innerProduct", "fc3", w3, 5, "F32", None, ("coreml-linear", len(raw) + 8)))]


def nn_files():
    """The three kinds of NeuralNetwork, each with a layer of no weight (an activation)."""
    head, labels = nn_head(), msg(100, *(blob(1, s) for s in ("cat", "dog", "eel", "fox", "gnu")))
    out = {}
    for name, top, cases, extra in (("network", NEURAL_NETWORK, nn_float() + nn_quantized(), b""),
                                    ("classifier", CLASSIFIER, head[:1], labels),
                                    ("regressor", REGRESSOR, head[1:], b"")):
        layers = [lay for lay, _ in cases]
        layers.insert(1, layer("relu", ACTIVATION, msg(10)))
        out[name + ".mlmodel"] = (nn_model(top, layers, extra),
                                  {f.node + "/weights": f for _, f in cases})
    return out


# ---- ML programs ----

def mil_plain(p):
    """const weights: linear's float16 weight and bias in the weight file; conv's OIHW float32
    one with an immediate bias of 8; matmul's y [O, K] with transpose_y true, its const with
    no name attribute; conv_transpose's [C_in, C_out, kh, kw], N from x's shape."""
    lw, lb, cw, cb = (matrix(12, 20).astype(np.float16), RNG.standard_normal(12).astype("<f2"),
                      matrix(8, 3 * 3 * 4), RNG.standard_normal(8))
    mw, tw = matrix(6, 16), matrix(3 * 2 * 2, 5)
    p.layer("linear", "lin_y", (3, 12), x=p.input("lin_x", (3, 20)),
            weight=p.const("lin_w", FP16, lw), bias=p.const("lin_b", FP16, lb))
    p.layer("conv", "conv_y", (1, 8, 8, 8), x=p.input("conv_x", (1, 4, 10, 10)),
            weight=p.const("conv_w", FP32, to_oihw(cw, 3, 3)), bias=p.const("conv_b", FP32, cb),
            strides=immediate(INT32, [1, 1]), pad_type=immediate(STRING, "valid"),
            groups=immediate(INT32, 1))
    p.layer("matmul", "mm_y", (2, 5, 6), x=p.input("mm_x", (2, 5, 16)),
            y=p.const("mm_w", FP32, mw, with_name=False), transpose_x=immediate(BOOL, False),
            transpose_y=immediate(BOOL, True))
    p.layer("conv_transpose", "ct_y", (1, 3, 8, 8), x=p.input("ct_x", (1, 5, 4, 4)),
            weight=p.const("ct_w", FP32, tw.T.reshape(5, 3, 2, 2)),
            strides=immediate(INT32, [2, 2]))
    return {"lin_w": figures("linear", "lin_y", lw, 3, "F16", "lin_b"),
            "conv_w": figures("conv", "conv_y", cw, 64, "F32", "conv_b"),
            "mm_w": figures("matmul", "mm_y", mw, 10, "F32"),
            "ct_w": figures("conv_transpose", "ct_y", tw, 16, "F32")}


def mil_sparse16(p, drop=0):
    """iOS16 constexpr_sparse_to_dense: float16 nonzero_data, a uint8 mask LSB first."""
    w = matrix(10, 24).astype(np.float16)
    mask, data = np.frombuffer(pack_lsb(w != 0, 1), np.uint8), w[w != 0][drop:]
    name = p.constexpr("constexpr_sparse_to_dense", "sp_w", FP16, w.shape,
                       {"nonzero_data": (FP16, data), "mask": (UINT8, mask),
                        "shape": (UINT32, np.array(w.shape, np.uint32))})
    p.layer("linear", "sp_y", (2, 10), x=p.input("sp_x", (2, 24)), weight=name)
    return {"sp_w": figures("linear", "sp_y", w, 2, "F16", None,
                            ("coreml-sparse", data.nbytes + mask.size))}


def mil_lut16(p, short=0):
    """iOS16 constexpr_lut_to_dense: 2-bit indices LSB first, an immediate lut of 4."""
    lut = np.array([0, *RNG.standard_normal(3)], np.float32)
    q = codes(6, 3 * 3 * 3, 4)
    idx = np.frombuffer(pack_lsb(to_oihw(q, 3, 3), 2), np.uint8)
    idx = idx[:len(idx) - short]
    name = p.constexpr("constexpr_lut_to_dense", "pal_w", FP32, (6, 3, 3, 3),
                       {"indices": (UINT8, idx), "lut": (FP32, lut),
                        "shape": (UINT32, np.array([6, 3, 3, 3], np.uint32))})
    p.layer("conv", "pal_y", (1, 6, 4, 4), x=p.input("pal_x", (1, 3, 6, 6)), weight=name)
    return {"pal_w": figures("conv", "pal_y", lut[q], 16, "F32", None,
                             ("coreml-lut", idx.size + lut.nbytes))}


def lut18(p, name, itype, q, ltype):
    """iOS18 constexpr_lut_to_dense: indices of the weight's shape, lut [1, .., 2^bits, 1]."""
    lut = RNG.standard_normal(1 << SUB_BITS.get(itype, 8)).astype(NUMPY[ltype])
    lut[0] = 0
    p.constexpr("constexpr_lut_to_dense", name, ltype, q.shape,
                {"indices": (itype, q), "lut": (ltype, lut.reshape((1,) * q.ndim + (-1, 1)))})
    return lut, ("coreml-lut", (q.size * SUB_BITS.get(itype, 8) + 7) // 8 + lut.nbytes)


def mil_ios18(p):
    """iOS18 constexpr_sparse_to_dense: float32 nonzero_data, a UINT1 mask of matmul's y
    [K, O]; constexpr_lut_to_dense: UINT4 indices into linear (an immediate bias), UINT2
    into conv_transpose, UINT8 into conv."""
    sp, q4, q2, q8 = matrix(7, 18), codes(9, 14, 16), codes(2 * 3 * 3, 4, 4), codes(6, 8, 256)
    y = sp.T.copy()
    p.constexpr("constexpr_sparse_to_dense", "sp18_w", FP32, y.shape,
                {"nonzero_data": (FP32, y[y != 0]), "mask": (UINT1, y != 0)})
    p.layer("matmul", "sp18_y", (3, 7), x=p.input("sp18_x", (3, 18)), y="sp18_w")
    lut4, s4 = lut18(p, "l4_w", UINT4, q4, FP16)
    p.layer("linear", "l4_y", (5, 9), x=p.input("l4_x", (5, 14)), weight="l4_w",
            bias=p.const("l4_b", FP32, RNG.standard_normal(9).astype(np.float32)))
    lut2, s2 = lut18(p, "l2_w", UINT2, q2.T.reshape(4, 2, 3, 3), FP32)
    p.layer("conv_transpose", "l2_y", (1, 2, 5, 5), x=p.input("l2_x", (1, 4, 3, 3)),
            weight="l2_w")
    lut8, s8 = lut18(p, "l8_w", UINT8, to_oihw(q8, 2, 2), FP16)
    p.layer("conv", "l8_y", (1, 6, 4, 4), x=p.input("l8_x", (1, 2, 5, 5)), weight="l8_w")
    s18 = ("coreml-sparse", 4 * np.count_nonzero(y) + (y.size + 7) // 8)
    return {"sp18_w": figures("matmul", "sp18_y", sp, 3, "F32", None, s18),
            "l4_w": figures("linear", "l4_y", lut4[q4], 5, "F16", "l4_b", s4),
            "l2_w": figures("conv_transpose", "l2_y", lut2[q2], 9, "F32", None, s2),
            "l8_w": figures("conv", "l8_y", lut8[q8], 16, "F16", None, s8)}


def package(folder, name, opset, cases, blobs=None, manifest_model="model.mlmodel"):
    p, want = Program(opset, blobs), {}
    for case in cases:
        want.update(case(p))
    spec = {"CoreML7": 8, "CoreML8": 9}[opset]
    return write_package(os.path.join(folder, name), p.model(spec), p.blobs.bytes(),
                         manifest_model), want


def written(folder):
    """[(path, want)]: every file written, the CoreML8 package also by its model.mlmodel."""
    out = []
    for name, (raw, want) in nn_files().items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(raw)
        out.append((os.path.join(folder, name), want))
    out.append(package(folder, "program7.mlpackage", "CoreML7",
                       (mil_plain, mil_sparse16, mil_lut16)))
    out.append(package(folder, "program8.mlpackage", "CoreML8", (mil_ios18,)))
    out.append((os.path.join(out[-1][0], "Data", "com.apple.CoreML", "model.mlmodel"),
                out[-1][1]))
    return out


# ---- the checks ----

def diff(path, got, want, who):
    if set(got) != set(want):
        FAILS.append(f"{path}: layers {sorted(got)}, {who}; want {sorted(want)}")
    for name in sorted(set(got) & set(want)):
        if got[name] != want[name]:
            FAILS.append(f"{path}: layer {name}: {who} {got[name]}, numpy says {want[name]}")


def reader_check(path, want):
    """coreml_writer.py's reading must read back what its writer wrote."""
    try:
        got = {k: figures(*v) for k, v in Reading(path).layers().items()}
    except (ValueError, KeyError, OSError) as e:
        return FAILS.append(f"{path}: the reading refuses it: {e!r}")
    diff(path, got, want, "read back")
    for name in set(got) & set(want):
        if not np.array_equal(got[name].w, want[name].w):
            FAILS.append(f"{path}: layer {name}: W read back is not the W written")


def check(spprof, path, want):
    rep = report(spprof, path, FAILS)
    if rep is None:
        return
    got = {l["name"]: Figures(l["op_type"], l["node"], l["m"], l["k"], l["n"], l["n_source"],
                              l["dtype"], l["nnz"], l["pattern"]["zero_rows"],
                              l["pattern"]["zero_cols"], l["bias"],
                              (fs["format"], fs["bytes"]) if (fs := l["file_storage"]) else None)
           for l in rep["layers"]}
    diff(path, got, want, "spprof")


def bad_files(folder):
    """Files spprof must refuse: a cut protobuf, a far blob, a bad sentinel, a mask with
    more bits set than nonzero_data's values, a short index vector, a missing model."""
    good = open(os.path.join(folder, "network.mlmodel"), "rb").read()
    paths = [os.path.join(folder, "truncated.mlmodel")]
    with open(paths[0], "wb") as f:
        f.write(good[:len(good) - 9])
    paths.append(package(folder, "far.mlpackage", "CoreML7", (mil_plain,), Blobs(1 << 20))[0])
    paths.append(package(folder, "sentinel.mlpackage", "CoreML7", (mil_plain,))[0])
    with open(os.path.join(paths[-1], "Data", "com.apple.CoreML", "weights", "weight.bin"),
              "r+b") as f:
        f.seek(64)
        f.write((SENTINEL ^ 1).to_bytes(4, "little"))
    paths.append(package(folder, "mask.mlpackage", "CoreML7",
                         (lambda p: mil_sparse16(p, drop=1),))[0])
    paths.append(package(folder, "short.mlpackage", "CoreML7",
                         (lambda p: mil_lut16(p, short=1),))[0])
    paths.append(package(folder, "missing.mlpackage", "CoreML7", (mil_plain,),
                         manifest_model="gone.mlmodel")[0])
    return paths


def refused(spprof, path):
    """The reading refuses it; spprof exits 2, one line on stderr naming the file, no stdout."""
    try:
        Reading(path).layers()
        FAILS.append(f"{path}: the reading takes a bad file")
    except (ValueError, KeyError, OSError):
        pass
    p = analyze(spprof, path) if spprof else None
    err = p.stderr.strip() if p else ""
    if p and (p.returncode != 2 or p.stdout or not err.startswith("spprof: '") or
              path not in err or len(err.splitlines()) != 1):
        FAILS.append(f"{path}: exit {p.returncode}, {err!r}; want exit 2 and one line "
                     "'spprof: ...' naming the file")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: coreml_check.py SPPROF | --self")
    spprof = None if sys.argv[1] == "--self" else sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        models, bad = written(tmp), bad_files(tmp)
        for path, want in models:
            reader_check(path, want)
            if spprof:
                check(spprof, path, want)
        for path in bad:
            refused(spprof, path)
    total = sum(len(want) for _, want in models[:-1])
    if FAILS:
        print("\n".join(FAILS))
        print(f"coreml_check: {len(FAILS)} figures differ")
        sys.exit(1)
    print(f"coreml_check: {total} written layers, " + ("every figure equal to numpy's" if spprof
                                                      else "read back as written (no spprof)"))


if __name__ == "__main__":
    main()
