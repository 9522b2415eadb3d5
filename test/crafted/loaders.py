"""The graph and multi-file loaders against crafted files (issue 43, items 7-10
and 13): weights shared by many layers (the work must not grow as the
square of the file), decoded copies charged to one budget per model (a
blob, a shard or a sparse tensor named many times), names that lead out
of the model's folder through a symbolic link, and two undefined
behaviours (a Core ML kernel of 2^32 x 2^32, a TF.js weight spanning an
empty shard). Written with test/tflite_fb.py, test/coreml_writer.py and
onnx.helper; a case whose writer is missing is skipped, with the reason."""
import json
import os
import struct

from crafted_check import Case

try:
    import numpy as np
    import flatbuffers
    from flatbuffers import number_types as N
except ImportError:
    np = None


def report_check(want_layers, want_nnz=None):
    """A check that the report on stdout has want_layers layers (each with want_nnz non-zeros)."""
    def check(p):
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            return "stdout is not a JSON report"
        layers = rep.get("layers", [])
        if len(layers) != want_layers:
            return "%d layers, want %d" % (len(layers), want_layers)
        if want_nnz is not None:
            bad = [l["name"] for l in layers if l.get("nnz") != want_nnz]
            if bad:
                return "layer %s: nnz %s, want %d" % (bad[0], layers[0].get("nnz"), want_nnz)
        return None
    return check


# ---- TFLite: one operator table, or one tensor, named many times ----

def tflite_shared(path, m, k, nops, density=0.5, pad=0):
    """FULLY_CONNECTED [m, k] listed nops times in the subgraph's operator vector, every
    entry the offset of one operator table: a file of about 4 x nops + 4 m k + pad bytes
    (pad: a buffer no tensor names, which raises the budgets the file's size sets)."""
    import tflite_fb as T
    rng = np.random.default_rng(43)
    w = rng.standard_normal((m, k)).astype("<f4")
    w[rng.random((m, k)) >= density] = 0
    b = flatbuffers.Builder(1 << 20)
    raws = [w.tobytes()] + ([bytes(pad)] if pad else [])
    bufs = T.offsets(b, [T.table(b, {})] + [T.table(b, {0: (None, T.data_vector(b, r))})
                                            for r in raws])
    tensors = T.offsets(b, [
        T.tensor_table(b, {"name": "x", "shape": [1, k], "type": T.F32, "buffer": 0,
                           "quant": None, "sparsity": None}),
        T.tensor_table(b, {"name": "w", "shape": [m, k], "type": T.F32, "buffer": 1,
                           "quant": None, "sparsity": None}),
        T.tensor_table(b, {"name": "y", "shape": [1, m], "type": T.F32, "buffer": 0,
                           "quant": None, "sparsity": None})])
    op = T.op_table(b, (0, [0, 1, -1], [2], None))
    ops = T.offsets(b, [op] * nops)
    graph = T.table(b, {0: (None, tensors), 1: (None, T.ints(b, [0])), 2: (None, T.ints(b, [2])),
                        3: (None, ops), 4: (None, b.CreateString("main"))})
    codes = T.offsets(b, [T.code_table(b, T.FC)])
    root = T.table(b, {0: (N.Uint32Flags, 3), 1: (None, codes), 2: (None, T.offsets(b, [graph])),
                       3: (None, b.CreateString("crafted")), 4: (None, bufs)})
    b.Finish(root, file_identifier=b"TFL3")
    with open(path, "wb") as f:
        f.write(bytes(b.Output()))
    return int(np.count_nonzero(w))


def tflite_sparse_aliased(path, m, k, aliases):
    """One sparse [m, k] f32 tensor (CSR, 4 non-zeros) named by `aliases` tensors that all
    point at its buffer, each a FULLY_CONNECTED weight: each densifies to 4 m k bytes."""
    import tflite_fb as T
    mod = T.Model()
    vals = np.ones(4, "<f4").tobytes()
    seg = [0] + [4] * m
    sp = {"order": [0, 1], "block_map": [],
          "dims": [{"format": 0, "size": m},
                   {"format": 1, "segments": (1, seg), "indices": (1, [0, 1, 2, 3])}]}
    first = mod.tensor("w0", (m, k), T.F32, vals, sparsity=sp)
    buf = mod.tensors[first]["buffer"]
    x = mod.tensor("x", (1, k))
    for i in range(aliases):
        t = first if i == 0 else mod.tensor("w%d" % i, (m, k), T.F32, None, sparsity=sp)
        mod.tensors[t]["buffer"] = buf
        mod.op(T.FC, [x, t, -1], [mod.tensor("y%d" % i, (1, m))])
    mod.write(path)


def tflite_cases(d):
    out = []
    tflite_shared(os.path.join(d, "shared.tflite"), 400, 400, 49000)
    out.append(Case("loaders: tflite 49000 ops on one weight",
                    ["analyze", "shared.tflite", "--static"], says=["layers"]))
    nnz = tflite_shared(os.path.join(d, "shared7k.tflite"), 480, 480, 7000)
    out.append(Case("loaders: tflite 7000 ops on one 900 KB weight",
                    ["analyze", "shared7k.tflite", "--static", "--format", "json"], rc=0,
                    check=report_check(7000, nnz)))
    tflite_shared(os.path.join(d, "tiny_shared.tflite"), 4, 4, 60000, pad=760000)
    out.append(Case("loaders: tflite 60000 ops on a 4x4 weight, 1 MB",
                    ["analyze", "tiny_shared.tflite", "--static"], says=["layers"]))
    tflite_sparse_aliased(os.path.join(d, "aliased.tflite"), 16, 1 << 22, 64)
    out.append(Case("loaders: tflite sparse tensor aliased 64x",
                    ["analyze", "aliased.tflite", "--static"], says=["memory budget"]))
    return out


# ---- ONNX: one initializer under many MatMuls ----

def onnx_cases(d):
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("loaders: python3-onnx missing: the ONNX cases skipped")
        return []
    def shared(name, m, k, nops):
        rng = np.random.default_rng(43)
        w = rng.standard_normal((k, m)).astype(np.float32)
        w[rng.random(w.shape) >= 0.5] = 0
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y%d" % i], name="mm%d" % i)
                 for i in range(nops)]
        g = helper.make_graph(nodes, "shared",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, k])],
                              [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [4, m])],
                              [numpy_helper.from_array(w, "w")])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
                  os.path.join(d, name))
        return int(np.count_nonzero(w))

    def folds(name, nodes, consts):
        """A MatMul whose weight 'w' the nodes compute from the constants."""
        nodes = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(v, k))
                 for k, v in consts.items()] + nodes
        nodes.append(helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"))
        g = helper.make_graph(nodes, "folds",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
                  os.path.join(d, name))

    def doubling(levels, bottom):
        """x{i+1} = Concat(x{i}, x{i}): 2^levels times the bottom's elements."""
        return bottom + [helper.make_node("Concat", ["x%d" % i, "x%d" % i], ["x%d" % (i + 1)],
                                          axis=0) for i in range(levels)]

    row = np.ones((1, 16), np.float32)
    # 4 KiB doubled 40 times: refused by the budget, not allocated
    folds("fold_bomb.onnx", doubling(40, [helper.make_node("Identity", ["c"], ["x0"])]) +
          [helper.make_node("Identity", ["x40"], ["w"])], {"c": np.ones((64, 16), np.float32)})
    # the same DAG over an op spprof does not fold: each node tried once, not 2^60 times
    folds("fold_dag.onnx", doubling(60, [helper.make_node("Mul", ["c", "c"], ["x0"])]) +
          [helper.make_node("Identity", ["x60"], ["w"])], {"c": row})
    # 5000 Identity nodes deep: past the folding depth, a warning, no deep recursion
    chain = [helper.make_node("Identity", ["c" if i == 0 else "i%d" % (i - 1)],
                              ["w" if i == 4999 else "i%d" % i]) for i in range(5000)]
    folds("fold_deep.onnx", chain, {"c": np.ones((16, 8), np.float32)})

    def warned(text):
        def check(p):
            if p.returncode != 0 or text not in p.stderr:
                return "exit %d, stderr %r: want a warning with %r" % (p.returncode, p.stderr[-300:],
                                                                       text)
            return None
        return check

    shared("shared.onnx", 256, 256, 20000)
    nnz = shared("shared7k.onnx", 400, 400, 6000)
    return [Case("loaders: onnx weight folded from a Concat doubled 40 times",
                 ["analyze", "fold_bomb.onnx", "--static"], says=["memory budget"]),
            Case("loaders: onnx weight over a DAG of 60 doubling Concats on a Mul",
                 ["analyze", "fold_dag.onnx", "--static"], rc=0,
                 check=warned("(Mul), which is not an op")),
            Case("loaders: onnx weight 5000 Identity nodes from its constant",
                 ["analyze", "fold_deep.onnx", "--static"], rc=0,
                 check=warned("64 folding steps")),
            Case("loaders: onnx 20000 MatMuls on one initializer",
                 ["analyze", "shared.onnx", "--static"], says=["layers"]),
            Case("loaders: onnx 6000 MatMuls on one 640 KB initializer",
                 ["analyze", "shared7k.onnx", "--static", "--format", "json"], rc=0,
                 check=report_check(6000, nnz))]


# ---- Core ML: one blob decoded many times, named by many spellings; symbolic links ----

def coreml_lut_package(path, nops, spellings=False, kib=128):
    """An ML program of nops iOS16 constexpr_lut_to_dense ops, each decoding the one blob
    of 1-bit indices (kib KiB) into fp32 (32x); with spellings, op i names the weight
    file "@model_path/" + "./" * i + "weights/weight.bin"."""
    import coreml_writer as W
    blobs = W.Blobs()
    n = kib * 1024 * 8
    at = blobs.add(W.UINT8, np.full(kib * 1024, 0x5A, np.uint8))
    p = W.Program("CoreML7", blobs)
    for i in range(nops):
        where = "@model_path/" + ("./" * i if spellings else "") + "weights/weight.bin"
        idx = W.blob(2, W.value_type(W.UINT8, (kib * 1024,))) + \
            W.msg(5, W.blob(1, where) + W.uint(2, at))
        attrs = {"name": W.immediate(W.STRING, "lut%d" % i), "indices": idx,
                 "lut": W.immediate(W.FP32, np.array([0, 1], np.float32)),
                 "shape": W.immediate(W.UINT32, np.array([n // 1024, 1024], np.uint32))}
        p.op("constexpr_lut_to_dense", "lut%d" % i, W.FP32, (n // 1024, 1024), attrs=attrs)
        p.layer("linear", "y%d" % i, (1, n // 1024), x=p.input("x%d" % i, (1, 1024)),
                weight="lut%d" % i)
    return W.write_package(path, p.model(8), blobs.bytes())


def coreml_conv_2_32(path):
    """A neural network whose convolution claims a kernel of 2^32 x 2^32."""
    import coreml_writer as W
    conv = W.uint(1, 1) + W.uint(2, 1) + W.uint(10, 1) + W.varints(20, [1 << 32, 1 << 32]) + \
        W.blob(90, W.floats(1, np.ones(4, np.float32)))
    layer = W.blob(1, "conv") + W.blob(2, "x") + W.blob(3, "y") + W.blob(W.CONVOLUTION, conv)
    with open(path, "wb") as f:
        f.write(W.uint(1, 4) + W.msg(W.NEURAL_NETWORK, W.blob(1, layer)))


def coreml_cases(d):
    import coreml_writer as W
    out = []
    coreml_lut_package(os.path.join(d, "lut.mlpackage"), 200)
    out.append(Case("loaders: coreml 200 LUT ops on one blob",
                    ["analyze", "lut.mlpackage", "--static"], says=["memory budget"]))
    coreml_lut_package(os.path.join(d, "spell.mlpackage"), 300, spellings=True, kib=64)
    out.append(Case("loaders: coreml blob named by 300 spellings",
                    ["analyze", "spell.mlpackage", "--static"], says=["memory budget"]))
    # the package's model, its weights, its manifest: each a link out of the package
    for part, rel in (("model", "Data/com.apple.CoreML/model.mlmodel"),
                      ("weights", "Data/com.apple.CoreML/weights/weight.bin"),
                      ("manifest", "Manifest.json")):
        pkg = coreml_lut_package(os.path.join(d, "link_%s.mlpackage" % part), 1, kib=1)
        inside = os.path.join(pkg, rel)
        os.rename(inside, os.path.join(d, "outside_%s" % part))
        os.symlink(os.path.join(d, "outside_%s" % part), inside)
        out.append(Case("loaders: mlpackage %s linked outside" % part,
                        ["analyze", "link_%s.mlpackage" % part, "--static"],
                        says=["leads outside the model's folder"]))
    coreml_conv_2_32(os.path.join(d, "conv.mlmodel"))
    out.append(Case("loaders: coreml conv kernelSize 2^32", ["analyze", "conv.mlmodel", "--static"],
                    says=["dimension"]))
    return out


# ---- TF.js and sharded checkpoints: shards named twice, linked out, empty ----

def tfjs_model(folder, paths, weights, shards=None):
    """model.json of one group (a MatMul on each weight) and its shards {name: bytes}."""
    os.makedirs(folder, exist_ok=True)
    for name, raw in (shards or {}).items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(raw)
    nodes = [{"name": "mm_" + w["name"], "op": "MatMul", "input": ["x", w["name"]]}
             for w in weights]
    with open(os.path.join(folder, "model.json"), "w") as f:
        json.dump({"format": "graph-model", "modelTopology": {"node": nodes},
                   "weightsManifest": [{"paths": paths, "weights": weights}]}, f)
    return os.path.join(folder, "model.json")


def tfjs_cases(d):
    out = []
    # one 64 KiB shard listed 16,384 times under one weight of 1 GiB
    tfjs_model(os.path.join(d, "repeat"), ["s.bin"] * 16384,
               [{"name": "w", "shape": [16384, 16384], "dtype": "float32"}],
               {"s.bin": bytes(64 << 10)})
    out.append(Case("loaders: tfjs shard listed 16384x", ["analyze", "repeat/model.json", "--static"],
                    says=["a second time"]))
    # the same file under a second spelling
    tfjs_model(os.path.join(d, "spelled"), ["s.bin", "./s.bin"],
               [{"name": "w", "shape": [16, 16], "dtype": "float32"}], {"s.bin": bytes(512)})
    out.append(Case("loaders: tfjs shard under two spellings",
                    ["analyze", "spelled/model.json", "--static"], says=["a second time"]))
    # a shard that is a link to /etc/passwd
    size = os.path.getsize("/etc/passwd") // 4
    folder = os.path.join(d, "passwd")
    tfjs_model(folder, ["s.bin"], [{"name": "w", "shape": [1, size], "dtype": "float32"}])
    os.symlink("/etc/passwd", os.path.join(folder, "s.bin"))
    out.append(Case("loaders: tfjs shard linked to /etc/passwd",
                    ["analyze", "passwd/model.json", "--static"],
                    says=["leads outside the model's folder"]))
    # a weight across an empty shard: 4 x 4 floats, 8 before it, 8 after
    w = np.arange(1, 17, dtype="<f4").reshape(4, 4)
    w[0] = 0
    tfjs_model(os.path.join(d, "empty"), ["a.bin", "e.bin", "b.bin"],
               [{"name": "w", "shape": [4, 4], "dtype": "float32"}],
               {"a.bin": w.tobytes()[:32], "e.bin": b"", "b.bin": w.tobytes()[32:]})
    out.append(Case("loaders: tfjs weight spanning an empty shard",
                    ["analyze", "empty/model.json", "--static", "--format", "json"], rc=0,
                    check=report_check(1, 12)))
    # an index whose shard is a link to /etc/passwd
    for index in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        folder = os.path.join(d, "index_" + index.split(".")[0])
        os.makedirs(folder)
        with open(os.path.join(folder, index), "w") as f:
            json.dump({"weight_map": {"a": "model-1.bin"}}, f)
        os.symlink("/etc/passwd", os.path.join(folder, "model-1.bin"))
        out.append(Case("loaders: %s shard linked to /etc/passwd" % index.split(".")[0],
                        ["analyze", os.path.join(os.path.basename(folder), index), "--static"],
                        says=["leads outside the model's folder"]))
    return out


def cases(d, spprof):
    if np is None:
        print("loaders: numpy or flatbuffers missing: skipped")
        return []
    return tflite_cases(d) + onnx_cases(d) + coreml_cases(d) + tfjs_cases(d)
