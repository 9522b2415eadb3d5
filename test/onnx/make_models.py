#!/usr/bin/env python3
"""Write ONNX test models with onnx.helper (the ONNX project's reference
writer) and, next to them, what spprof must report for each, computed here
with numpy from the weights as written: cases.json in OUTDIR lists them.

    make_models.py OUTDIR

Each case: {"model", "args" (extra spprof arguments), then either
"params"/"nnz"/"tensors" (model totals) and "layers" (name -> m, k, n,
n_source, nnz, sparsity, nm2_4, zero_rows, zero_cols, op, node, op_type),
or "exit" and "message" (a bad model: the exit code and a text the error
line must hold)}; "warnings" {code: [[texts one warning holds], ...]}: the
warnings of that code, one per list (none of the codes listed in any case
where a case leaves it out). Exits 77 when onnx or numpy cannot be imported.
"""
import json
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnx import external_data_helper
except ImportError as e:  # the C test skips on 77
    print("make_models.py: %s" % e, file=sys.stderr)
    sys.exit(77)

RNG = np.random.default_rng(20240611)
F = TensorProto.FLOAT


def sparse(shape, density=0.5, zero_rows=0, axis=0):
    """float32 weights with about density non-zeros and zero_rows all-zero
    slices along axis (never -0.0 tricks: plain values)."""
    w = RNG.standard_normal(shape).astype(np.float32)
    w[RNG.random(shape) >= density] = 0
    for r in range(zero_rows):
        idx = [slice(None)] * len(shape)
        idx[axis] = r
        w[tuple(idx)] = 0
    return w


def figures(v, nz=None):
    """The static figures of a GEMM view v (M x K) by DESIGN section 3;
    nz: the non-zero mask when v's dtype is not a plain numpy number."""
    nz = (v != 0) if nz is None else nz
    m, k = nz.shape
    nnz = int(nz.sum())
    kp = -(-k // 4) * 4
    padded = np.zeros((m, kp), dtype=bool)
    padded[:, :k] = nz
    groups = padded.reshape(m, kp // 4, 4).sum(axis=2)
    return {"m": m, "k": k, "nnz": nnz, "sparsity": 1.0 - nnz / (m * k),
            "nm2_4": float((groups <= 2).mean()),
            "zero_rows": int((~nz.any(axis=1)).sum()),
            "zero_cols": int((~nz.any(axis=0)).sum())}


class Case:
    def __init__(self, name, args=()):
        self.name, self.args, self.layers, self.tensors = name, list(args), {}, []

    def layer(self, name, view, n, op, node, op_type, nz=None, bias=None):
        f = figures(view, nz)
        f.update(n=n[0], n_source=n[1], op=op, node=node, op_type=op_type)
        if bias is not None:
            f["bias"] = bias
        self.layers[name] = f

    def count(self, arr, nz=None):
        """a tensor the model holds: its elements and non-zeros"""
        self.tensors.append((int(np.asarray(arr).size),
                             int(np.count_nonzero(arr if nz is None else nz))))

    def save(self, out, model, cases):
        path = os.path.join(out, self.name + ".onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        cases.append({"model": self.name + ".onnx", "args": self.args,
                      "tensors": len(self.tensors),
                      "params": sum(t[0] for t in self.tensors),
                      "nnz": sum(t[1] for t in self.tensors),
                      "layers": self.layers})


def model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def init(case, name, arr):
    case.count(arr)
    return numpy_helper.from_array(arr, name)


def gemm_models(out, cases):
    # transB=1, static shapes: N from the model
    c = Case("gemm_tb1")
    b = sparse((12, 16), 0.4, zero_rows=2)
    c.layer("fc.w", b, (8, "model"), "gemm", "fc", "Gemm")
    g = helper.make_graph([helper.make_node("Gemm", ["x", "fc.w"], ["y"], name="fc", transB=1)],
                          "g", [vi("x", [8, 16])], [vi("y", [8, 12])], [init(c, "fc.w", b)])
    c.save(out, model(g), cases)
    # a bias C of the output features (--epilogue adds it), and a Conv's B
    c = Case("gemm_bias")
    b = sparse((12, 16), 0.5)
    c.layer("fc.w", b, (4, "model"), "gemm", "fc", "Gemm", bias="fc.b")
    cw = sparse((6, 3, 3, 3), 0.5)
    c.layer("conv.w", cw.transpose(0, 2, 3, 1).reshape(6, -1), (64, "model"), "conv2d",
            "conv", "Conv", bias="conv.b")
    bias = np.linspace(-1, 1, 12).astype(np.float32)
    cb = np.linspace(-1, 1, 6).astype(np.float32)
    g = helper.make_graph([helper.make_node("Gemm", ["x", "fc.w", "fc.b"], ["y"], name="fc", transB=1),
                           helper.make_node("Conv", ["xc", "conv.w", "conv.b"], ["yc"], name="conv")],
                          "g", [vi("x", [4, 16]), vi("xc", [1, 3, 10, 10])],
                          [vi("y", [4, 12]), vi("yc", [1, 6, 8, 8])],
                          [init(c, "fc.w", b), init(c, "fc.b", bias), init(c, "conv.w", cw),
                           init(c, "conv.b", cb)])
    c.save(out, model(g), cases)
    # transB=0, a symbolic batch, --n given: N from the option
    c = Case("gemm_tb0", ["--n", "5"])
    b = sparse((16, 12), 0.5, zero_rows=3)
    c.layer("fc.w", b.T, (5, "option"), "gemm", None, "Gemm")
    g = helper.make_graph([helper.make_node("Gemm", ["x", "fc.w"], ["y"])], "g",
                          [vi("x", ["batch", 16])], [vi("y", ["batch", 12])],
                          [init(c, "fc.w", b)])
    c.save(out, model(g), cases)


def matmul_models(out, cases):
    c = Case("matmul")
    wr = sparse((16, 10), 0.3)
    wl = sparse((10, 16), 0.6, zero_rows=1)
    wb = sparse((3, 16, 10), 0.5)
    c.layer("wr", wr.T, (12, "model"), "matmul", "right", "MatMul")
    c.layer("wr#2", wr.T, (4, "model"), "matmul", "again", "MatMul")
    c.layer("wl", wl, (7, "model"), "matmul", "left", "MatMul")
    for i in range(3):
        c.layer("wb[%d]" % i, wb[i].T, (5, "model"), "matmul", "batched", "MatMul")
    nodes = [helper.make_node("MatMul", ["x", "wr"], ["y1"], name="right"),
             helper.make_node("MatMul", ["x2", "wr"], ["y4"], name="again"),
             helper.make_node("MatMul", ["wl", "x3"], ["y2"], name="left"),
             helper.make_node("MatMul", ["x4", "wb"], ["y3"], name="batched")]
    g = helper.make_graph(nodes, "g",
                          [vi("x", [2, 6, 16]), vi("x2", [4, 16]), vi("x3", [16, 7]),
                           vi("x4", [3, 5, 16])],
                          [vi("y1", [2, 6, 10]), vi("y4", [4, 10]), vi("y2", [10, 7]),
                           vi("y3", [3, 5, 10])],
                          [init(c, "wr", wr), init(c, "wl", wl), init(c, "wb", wb)])
    c.save(out, model(g), cases)


def conv_models(out, cases):
    c = Case("conv")
    w = sparse((12, 4, 3, 3), 0.5, zero_rows=2)
    # K in (kh, kw, c) order, c fastest
    c.layer("conv.w", w.transpose(0, 2, 3, 1).reshape(12, -1), (200, "model"), "conv2d",
            "conv", "Conv")
    wt = sparse((6, 4, 3, 3), 0.5)  # [C, O/g, kh, kw], group 2
    for gi in range(2):
        c.layer("deconv.w[%d]" % gi, wt[gi * 3:(gi + 1) * 3].reshape(3, -1).T, (25, "model"),
                "conv_transpose", "deconv", "ConvTranspose")
    w1 = sparse((5, 3, 4), 0.5)
    # x1's symbolic batch b is taken as 1: y1 is [1, 5, 6]
    c.layer("conv1.w", w1.transpose(0, 2, 1).reshape(5, -1), (6, "model"), "conv1d",
            None, "Conv")
    nodes = [helper.make_node("Conv", ["x", "conv.w"], ["y"], name="conv", group=2,
                              pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["xt", "deconv.w"], ["yt"], name="deconv",
                              group=2),
             helper.make_node("Conv", ["x1", "conv1.w"], ["y1"])]
    g = helper.make_graph(nodes, "g",
                          [vi("x", [2, 8, 10, 10]), vi("xt", [1, 6, 5, 5]),
                           vi("x1", ["b", 3, 9])],
                          [vi("y", [2, 12, 10, 10]), vi("yt", [1, 8, 7, 7]),
                           vi("y1", ["b", 5, 6])],
                          [init(c, "conv.w", w), init(c, "deconv.w", wt),
                           init(c, "conv1.w", w1)])
    c.save(out, model(g), cases)


def recurrent_models(out, cases):
    c = Case("recurrent")
    seq, batch, inp, hid = 5, 2, 7, 4
    nodes, inits = [], []
    for op, gates in (("LSTM", 4), ("GRU", 3), ("RNN", 1)):
        w = sparse((2, gates * hid, inp), 0.5)
        r = sparse((2, gates * hid, hid), 0.5, zero_rows=1, axis=1)
        wn, rn = op.lower() + ".W", op.lower() + ".R"
        for d in range(2):
            c.layer("%s[%d]" % (wn, d), w[d], (seq * batch, "model"), op.lower(), op, op)
            c.layer("%s[%d]" % (rn, d), r[d], (seq * batch, "model"), op.lower(), op, op)
        nodes.append(helper.make_node(op, ["x", wn, rn], [op + ".y"], name=op,
                                      hidden_size=hid, direction="bidirectional"))
        inits += [init(c, wn, w), init(c, rn, r)]
    g = helper.make_graph(nodes, "g", [vi("x", [seq, batch, inp])],
                          [vi(op + ".y", None) for op in ("LSTM", "GRU", "RNN")], inits)
    c.save(out, model(g), cases)


def graph_models(out, cases):
    """Constant nodes, If branches and a Loop body holding weights."""
    c = Case("subgraphs")
    wc = sparse((16, 6), 0.5)
    wt = sparse((16, 6), 0.3)
    we = sparse((6, 16), 0.7)
    wl = sparse((16, 16), 0.2, zero_rows=4)
    floats = np.array([0.0, 1.5, 0.0, 2.0], dtype=np.float32)
    c.layer("wc", wc.T, (4, "model"), "matmul", "use_const", "MatMul")
    c.layer("wt", wt.T, (4, "model"), "matmul", "then_mm", "MatMul")
    c.layer("we", we, (4, "model"), "gemm", "else_gemm", "Gemm")
    c.layer("wl", wl.T, (4, "model"), "matmul", "body_mm", "MatMul")
    c.count(wc)
    c.count(floats)
    then_g = helper.make_graph([helper.make_node("MatMul", ["x", "wt"], ["t_out"], name="then_mm")],
                               "then", [], [vi("t_out", [4, 6])], [init(c, "wt", wt)])
    c.count(we)
    else_g = helper.make_graph(
        [helper.make_node("Constant", [], ["we"], value=numpy_helper.from_array(we)),
         helper.make_node("Gemm", ["x", "we"], ["e_out"], name="else_gemm", transB=1)],
        "else", [], [vi("e_out", [4, 6])])
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x", "wl"], ["b_out"], name="body_mm"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), vi("b_out", [4, 16])],
        [init(c, "wl", wl)])
    nodes = [helper.make_node("Constant", [], ["wc"], value=numpy_helper.from_array(wc, "ignored")),
             helper.make_node("Constant", [], ["cf"], value_floats=floats.tolist()),
             helper.make_node("MatMul", ["x", "wc"], ["y"], name="use_const"),
             helper.make_node("If", ["cond"], ["z"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Loop", ["trip", "cond"], ["l_out"], body=body)]
    g = helper.make_graph(nodes, "g",
                          [vi("x", [4, 16]), helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("trip", TensorProto.INT64, [])],
                          [vi("y", [4, 6]), vi("z", [4, 6])])
    c.save(out, model(g), cases)


def sparse_model(out, cases):
    c = Case("sparse_init")
    dense = sparse((8, 12), 0.25, zero_rows=2)
    flat = dense.reshape(-1)
    idx = np.nonzero(flat)[0].astype(np.int64)
    st = helper.make_sparse_tensor(numpy_helper.from_array(flat[idx], "sw"),
                                   numpy_helper.from_array(idx, "sw_idx"), [8, 12])
    c.count(dense)
    c.layer("sw", dense, (3, "model"), "gemm", "g", "Gemm")
    # 40000 x 40000 F32 is 6.4 GB dense, past the densify limit: counted from
    # its stored values (one of them zero), never densified, not a layer
    big_vals = np.array([1.0, 0.0, 2.0, 3.0], dtype=np.float32)
    big_idx = np.array([5, 77, 1000, 40000 * 40000 - 1], dtype=np.int64)
    big = helper.make_sparse_tensor(numpy_helper.from_array(big_vals, "big"),
                                    numpy_helper.from_array(big_idx, "big_idx"),
                                    [40000, 40000])
    c.tensors.append((40000 * 40000, 3))
    g = helper.make_graph([helper.make_node("Gemm", ["x", "sw"], ["y"], name="g", transB=1)],
                          "g", [vi("x", [3, 12])], [vi("y", [3, 8])],
                          sparse_initializer=[st, big])
    c.save(out, model(g), cases)


def dtype_model(out, cases):
    """The same kind of layer in several dtypes and both encodings."""
    c = Case("dtypes")
    nodes, inits = [], []

    def add(name, tensor, view, nz=None):
        nodes.append(helper.make_node("Gemm", ["x", name], ["y_" + name], name="n_" + name,
                                      transB=1))
        inits.append(tensor)
        c.layer(name, view, (3, "model"), "gemm", "n_" + name, "Gemm", nz)
        c.count(view, nz)

    w = sparse((6, 8), 0.5)
    add("f32_raw", numpy_helper.from_array(w, "f32_raw"), w)
    add("f32_typed", helper.make_tensor("f32_typed", F, w.shape, w.reshape(-1).tolist()), w)
    h = sparse((6, 8), 0.5).astype(np.float16)
    add("f16", numpy_helper.from_array(h, "f16"), h)
    # F16 in int32_data: the bit patterns, as ONNX specifies
    add("f16_typed", helper.make_tensor("f16_typed", TensorProto.FLOAT16, h.shape,
                                        h.view(np.uint16).reshape(-1).tolist(), raw=False), h)
    bw = sparse((6, 8), 0.5)
    bits = (bw.view(np.uint32) >> 16).astype(np.uint16)
    bits[0, 0] = 0x8000  # -0.0 is zero
    add("bf16", helper.make_tensor("bf16", TensorProto.BFLOAT16, bw.shape, bits.tobytes(), raw=True),
        bits, (bits & 0x7fff) != 0)
    i8 = (sparse((6, 8), 0.5) * 40).astype(np.int8)
    add("i8", helper.make_tensor("i8", TensorProto.INT8, i8.shape, i8.reshape(-1).tolist()), i8)
    d = sparse((6, 8), 0.4).astype(np.float64)
    add("f64", helper.make_tensor("f64", TensorProto.DOUBLE, d.shape, d.reshape(-1).tolist()), d)
    names = [n.input[1] for n in nodes]
    g = helper.make_graph(nodes, "g", [vi("x", [3, 8])],
                          [vi("y_" + n, [3, 6]) for n in names], inits)
    c.save(out, model(g), cases)


def external_models(out, cases):
    c = Case("external")
    w1 = sparse((10, 16), 0.5, zero_rows=1)
    w2 = sparse((16, 4), 0.3)
    c.layer("ext1", w1, (2, "model"), "gemm", "a", "Gemm")
    c.layer("ext2", w2.T, (2, "model"), "matmul", "b", "MatMul")
    g = helper.make_graph([helper.make_node("Gemm", ["x", "ext1"], ["h"], name="a", transB=1),
                           helper.make_node("MatMul", ["h2", "ext2"], ["y"], name="b")],
                          "g", [vi("x", [2, 16]), vi("h2", [2, 16])], [vi("h", [2, 10]), vi("y", [2, 4])],
                          [init(c, "ext1", w1), init(c, "ext2", w2)])
    m = model(g)
    external_data_helper.convert_model_to_external_data(m, all_tensors_to_one_file=True,
                                                        location="external.bin", size_threshold=0)
    onnx.save_model(m, os.path.join(out, "external.onnx"))
    c.args = []
    cases.append({"model": "external.onnx", "args": [], "tensors": 2,
                  "params": sum(t[0] for t in c.tensors), "nnz": sum(t[1] for t in c.tensors),
                  "layers": c.layers})
    size = os.path.getsize(os.path.join(out, "external.bin"))

    def bad(name, location, offset, message):
        t = TensorProto()
        t.name, t.data_type = "w_" + name, F
        t.dims.extend([4, 4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)), ("length", "64")):
            e = t.external_data.add()
            e.key, e.value = k, v
        gb = helper.make_graph([helper.make_node("MatMul", ["x", t.name], ["y"])], "g",
                               [vi("x", [2, 4])], [vi("y", [2, 4])], [t])
        with open(os.path.join(out, "bad_ext_%s.onnx" % name), "wb") as f:
            f.write(model(gb).SerializeToString())
        cases.append({"model": "bad_ext_%s.onnx" % name, "args": [], "exit": 2,
                      "message": [t.name, message]})

    bad("escape", "../external.bin", 0, "escapes")
    bad("absolute", "/etc/passwd", 0, "escapes")
    bad("missing", "no_such_file.bin", 0, "no_such_file.bin")
    bad("short", "external.bin", size - 32, "past the end")


def bad_models(out, cases):
    """Faults the loader must name: raw_data size, typed count, data_type."""
    def write(name, tensor, message):
        g = helper.make_graph([], "g", [], [], [tensor])
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(model(g).SerializeToString())
        cases.append({"model": name + ".onnx", "args": [], "exit": 2,
                      "message": [tensor.name, message]})

    t = numpy_helper.from_array(np.ones((4, 4), np.float32), "short_raw")
    t.raw_data = t.raw_data[:60]  # helper.make_tensor refuses a wrong size
    write("bad_raw_size", t, "raw_data holds 60 bytes")
    t = helper.make_tensor("few_floats", F, [3, 3], [1.0] * 9)
    del t.float_data[8]
    write("bad_typed_count", t, "float_data holds 8 values")
    t = TensorProto()
    t.name, t.data_type = "odd_type", 99
    t.dims.append(1)
    write("bad_data_type", t, "data_type 99")
    t = helper.make_tensor("neg", F, [2, 2], [1.0] * 4)
    t.dims[1] = -2
    write("bad_negative_dims", t, "negative")
    t = helper.make_tensor("huge", F, [1], [1.0])
    t.dims[:] = [1 << 40, 1 << 40]
    write("bad_dims_overflow", t, "overflows")


def const(case, name, arr):
    """A Constant node holding arr, which the model totals count."""
    arr = np.asarray(arr)
    case.count(arr)
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name))


def i64(*v):
    return np.array(v, dtype=np.int64)


def lstm_gates(case, prefix, w, hid, order, neg):
    """Nodes that rebuild an LSTM weight [1, 4*hid, cols] from the constant w
    [4*hid, cols] the way PyTorch's export does: Slice per gate, Concat in
    ONNX's order, Unsqueeze; neg: starts and ends from the end, a step input
    and a negative axis (else opset-13 plain slices, the last to INT64_MAX)."""
    nodes = [const(case, prefix + ".w", w)]
    parts = []
    for g in range(4):
        a, b = g * hid, (g + 1) * hid
        if neg:
            starts, ends = i64(a - 4 * hid), i64(b - 4 * hid if g < 3 else 4 * hid + 7)
            extra = [prefix + ".axes", prefix + ".steps"]
        else:
            starts, ends = i64(a), i64(b if g < 3 else np.iinfo(np.int64).max)
            extra = [prefix + ".axes"]
        nodes += [const(case, "%s.s%d" % (prefix, g), starts),
                  const(case, "%s.e%d" % (prefix, g), ends),
                  helper.make_node("Slice", [prefix + ".w", "%s.s%d" % (prefix, g),
                                             "%s.e%d" % (prefix, g)] + extra,
                                   ["%s.g%d" % (prefix, g)])]
        parts.append("%s.g%d" % (prefix, g))
    nodes.insert(1, const(case, prefix + ".axes", i64(-2 if neg else 0)))
    if neg:
        nodes.insert(2, const(case, prefix + ".steps", i64(1)))
    nodes += [helper.make_node("Concat", [parts[i] for i in order], [prefix + ".cat"], axis=0),
              const(case, prefix + ".ax0", i64(0)),
              helper.make_node("Unsqueeze", [prefix + ".cat", prefix + ".ax0"], [prefix])]
    return nodes, np.concatenate([w[i * hid:(i + 1) * hid] for i in order])


def fold_models(out, cases):
    """Weights built from constants (issue 46 item 3): folded, counted once."""
    c = Case("fold_lstm")
    seq, batch, inp, hid = 3, 2, 5, 4
    order = (0, 3, 1, 2)  # PyTorch's i, f, g, o to ONNX's i, o, f, c
    w = sparse((4 * hid, inp), 0.5)
    r = sparse((4 * hid, hid), 0.4, zero_rows=1)
    nw, fw = lstm_gates(c, "W", w, hid, order, False)
    nr, fr = lstm_gates(c, "R", r, hid, order, True)
    c.layer("W", fw, (seq * batch, "model"), "lstm", "lstm", "LSTM")
    c.layer("R", fr, (seq * batch, "model"), "lstm", "lstm", "LSTM")
    # inside an If branch, as silero_vad: the branch unsqueezes the outer constants
    w2 = sparse((4 * hid, inp), 0.6)
    c.layer("W2", w2, (seq * batch, "model"), "lstm", "lstm2", "LSTM")
    c.layer("R#2", fr, (seq * batch, "model"), "lstm", "lstm2", "LSTM")
    branch = helper.make_graph(
        [helper.make_node("Constant", [], ["b.ax"], value=numpy_helper.from_array(i64(0))),
         helper.make_node("Unsqueeze", ["w2", "b.ax"], ["W2"]),
         helper.make_node("LSTM", ["x", "W2", "R"], ["b.y"], name="lstm2", hidden_size=hid)],
        "then", [], [vi("b.y", None)])
    c.count(i64(0))
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["o.y"])], "else", [],
                              [vi("o.y", None)])
    nodes = nw + nr + [const(c, "w2", w2),
                       helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="lstm",
                                        hidden_size=hid),
                       helper.make_node("If", ["cond"], ["z"], then_branch=branch,
                                        else_branch=other)]
    g = helper.make_graph(nodes, "g", [vi("x", [seq, batch, inp]),
                                       helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          [vi("y", None), vi("z", None)])
    c.save(out, model(g), cases)

    # Constant -> Transpose -> Reshape under a MatMul; Cast and Flatten under a Gemm
    c = Case("fold_matmul")
    t = sparse((4, 3, 8), 0.5)
    wm = t.transpose(2, 0, 1).reshape(8, -1)
    c.layer("wm", wm.T, (6, "model"), "matmul", "mm", "MatMul")
    h = sparse((5, 2, 6), 0.5).astype(np.float16)
    wg = h.astype(np.float32).reshape(5, -1)
    c.layer("wg", wg, (6, "model"), "gemm", "gm", "Gemm")
    nodes = [const(c, "t", t),
             helper.make_node("Transpose", ["t"], ["tt"], perm=[2, 0, 1]),
             const(c, "shape", i64(0, -1)),
             helper.make_node("Reshape", ["tt", "shape"], ["wm"]),
             helper.make_node("MatMul", ["x", "wm"], ["y"], name="mm"),
             const(c, "h", h),
             helper.make_node("Cast", ["h"], ["hf"], to=TensorProto.FLOAT),
             helper.make_node("Flatten", ["hf"], ["wg"], axis=1),
             helper.make_node("Gemm", ["x2", "wg"], ["y2"], name="gm", transB=1)]
    g = helper.make_graph(nodes, "g", [vi("x", [6, 8]), vi("x2", [6, 12])],
                          [vi("y", [6, 12]), vi("y2", [6, 5])])
    c.save(out, model(g), cases)

    # Gather on a constant (negative indices), Concat on a negative axis, Squeeze
    c = Case("fold_gather")
    table = sparse((7, 12), 0.5, zero_rows=1)
    idx = i64(4, -1, 0, 2, -7)
    wgat = table[idx]
    c.layer("wgat", wgat, (3, "model"), "gemm", "gg", "Gemm")
    a, b = sparse((6, 3), 0.5), sparse((6, 5), 0.5)
    wcat = np.concatenate([a, b], axis=-1)[None]
    c.layer("wcat", wcat[0].T, (3, "model"), "matmul", "mc", "MatMul")
    nodes = [const(c, "table", table), const(c, "idx", idx),
             helper.make_node("Gather", ["table", "idx"], ["wgat"], axis=0),
             helper.make_node("Gemm", ["x", "wgat"], ["y"], name="gg", transB=1),
             const(c, "a", a[None]), const(c, "b", b[None]),
             helper.make_node("Concat", ["a", "b"], ["ab"], axis=-1),
             const(c, "sq", i64(0)),
             helper.make_node("Squeeze", ["ab", "sq"], ["wcat"]),
             helper.make_node("MatMul", ["x2", "wcat"], ["y2"], name="mc")]
    g = helper.make_graph(nodes, "g", [vi("x", [3, 12]), vi("x2", [3, 6])],
                          [vi("y", [3, 5]), vi("y2", [3, 8])])
    c.save(out, model(g), cases)

    # opset 9: Slice's and Unsqueeze's arguments are attributes
    c = Case("fold_opset9")
    w9 = sparse((6, 8), 0.5)
    c.layer("w9", w9[:, 1:-1].T, (2, "model"), "matmul", "m9", "MatMul")
    nodes = [const(c, "c9", w9),
             helper.make_node("Slice", ["c9"], ["s9"], starts=[1], ends=[-1], axes=[1]),
             helper.make_node("Unsqueeze", ["s9"], ["u9"], axes=[0]),
             helper.make_node("Squeeze", ["u9"], ["w9"], axes=[0]),
             helper.make_node("MatMul", ["x", "w9"], ["y"], name="m9")]
    g = helper.make_graph(nodes, "g", [vi("x", [2, 6])], [vi("y", [2, 6])])
    m9 = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m9.ir_version = 4
    c.save(out, m9, cases)

    # weight inputs that stay unresolved: one warning each, by node and input
    c = Case("fold_unresolved")
    wk = sparse((4, 6), 0.5)
    c.layer("wk", wk.T, (2, "model"), "matmul", "ok", "MatMul")
    nodes = [const(c, "wk", wk),
             helper.make_node("MatMul", ["x", "wk"], ["y0"], name="ok"),
             helper.make_node("Conv", ["img", "cw"], ["y1"], name="conv_in"),
             const(c, "m1", sparse((4, 6), 0.5)), const(c, "m2", np.float32(2.0)),
             helper.make_node("Mul", ["m1", "m2"], ["scaled"], name="scale"),
             helper.make_node("MatMul", ["x", "scaled"], ["y2"], name="mm_mul"),
             const(c, "half", sparse((1, 8, 3), 0.5)),
             helper.make_node("Concat", ["half", "lw"], ["lcat"], axis=1),
             helper.make_node("LSTM", ["seq", "lcat", "lr"], ["y3"], name="lstm_in",
                              hidden_size=4),
             helper.make_node("MatMul", ["x", "wx"], ["y4"], name="mm_in"),
             # activations times activations (attention's Q.K^T): no warning
             helper.make_node("Transpose", ["k"], ["kt"]),
             helper.make_node("MatMul", ["x", "kt"], ["y5"], name="qk")]
    g = helper.make_graph(nodes, "g",
                          [vi("x", [2, 4]), vi("img", [1, 2, 5, 5]), vi("cw", [3, 2, 3, 3]),
                           vi("lw", [1, 8, 3]), vi("lr", [1, 16, 4]), vi("seq", [2, 1, 3]),
                           vi("wx", [4, 3]), vi("k", [2, 4])],
                          [vi("y0", [2, 6])])
    c.save(out, model(g), cases)
    cases[-1]["warnings"] = {"unresolved_weight": [
        ["conv_in", "'cw' is a graph input"],
        ["mm_mul", "node 'scale' (Mul)"],
        ["lstm_in", "input 1 'lcat'", "graph input 'lw'"],
        ["lstm_in", "input 2 'lr' is a graph input"],
        ["mm_in", "input 1 'wx' is a graph input"]]}

    def bad(name, nodes, inputs, message):
        gb = helper.make_graph(nodes, "g", inputs, [vi("y", None)])
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(model(gb).SerializeToString())
        cases.append({"model": name + ".onnx", "args": [], "exit": 2, "message": message})

    cw = numpy_helper.from_array(np.ones((4, 4), np.float32))
    mk = helper.make_node
    bad("bad_fold_step", [mk("Constant", [], ["c"], value=cw),
                          mk("Constant", [], ["z"], value=numpy_helper.from_array(i64(0))),
                          mk("Slice", ["c", "z", "z", "z", "z"], ["w"], name="sl"),
                          mk("MatMul", ["x", "w"], ["y"])],
        [vi("x", [2, 4])], ["node 'sl' (Slice)", "step is 0"])
    bad("bad_fold_index", [mk("Constant", [], ["c"], value=cw),
                           mk("Constant", [], ["i"], value=numpy_helper.from_array(i64(1, 4))),
                           mk("Gather", ["c", "i"], ["w"], name="ga"),
                           mk("MatMul", ["x", "w"], ["y"])],
        [vi("x", [2, 2])], ["node 'ga' (Gather)", "index is out of range"])
    bad("bad_fold_cycle", [mk("Transpose", ["b"], ["a"], name="ta"),
                           mk("Transpose", ["a"], ["b"], name="tb"),
                           mk("MatMul", ["x", "a"], ["y"])],
        [vi("x", [2, 4])], ["cycle"])
    bad("bad_fold_reshape", [mk("Constant", [], ["c"], value=cw),
                             mk("Constant", [], ["s"], value=numpy_helper.from_array(i64(3, -1))),
                             mk("Reshape", ["c", "s"], ["w"], name="rs"),
                             mk("MatMul", ["x", "w"], ["y"])],
        [vi("x", [2, 3])], ["node 'rs' (Reshape)", "-1"])


def main():
    out = sys.argv[1]
    cases = []
    gemm_models(out, cases)
    matmul_models(out, cases)
    conv_models(out, cases)
    recurrent_models(out, cases)
    graph_models(out, cases)
    sparse_model(out, cases)
    dtype_model(out, cases)
    external_models(out, cases)
    bad_models(out, cases)
    fold_models(out, cases)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
