#!/usr/bin/env python3
"""The whole model beside its GEMM layers (summary.whole_model).

A graph written here with known non-GEMM ops (ONNX with onnx.helper, TFLite
with tflite_fb.py) is analysed --static, and summary.whole_model is checked
against a recount made here: the shapes from onnx.shape_inference (for
TFLite, the tensors' stored shapes), each op's FLOPs by the cost table as
docs/METRICS.md states it ("The whole model"), the weight bytes from numpy's
nbytes of every initializer or buffer. Then: an op of unknown shapes is not
counted and said so, never 0; a format without a graph (safetensors) has
every figure null and a reason; --n changes the layers' FLOPs and the
model's alike.

    whole_model_check.py SPPROF        (exit 77 without onnx, numpy or flatbuffers)
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper, shape_inference
except ImportError:
    print("whole_model_check: python3-onnx or numpy missing: skipped")
    sys.exit(77)

RNG = np.random.default_rng(12)
F = TensorProto.FLOAT
FAILS = []

# per output element, as docs/METRICS.md states them
PER_OUT = {"Relu": 1, "Add": 1, "Mul": 1, "Sigmoid": 3, "Softmax": 5, "LeakyRelu": 2,
           "BatchNormalization": 2, "LayerNormalization": 8}
PER_IN = {"GlobalAveragePool": 1, "ReduceSum": 1}
FREE = {"Flatten", "Transpose", "Reshape", "Concat"}


def check(what, got, want, rel=1e-9):
    if want is None or isinstance(want, str):
        ok = got == want
    else:
        ok = isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=rel)
    if not ok:
        FAILS.append(f"{what}: got {got!r}, want {want!r}")


def weight(name, *shape):
    w = RNG.standard_normal(shape).astype(np.float32)
    w[RNG.random(shape) < 0.5] = 0
    return numpy_helper.from_array(w, name)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, name=outputs[0] + "_node", **attrs)


def onnx_model(unknown=False):
    """Conv (a layer), Relu, MaxPool, Add, Sigmoid, GlobalAveragePool, Flatten, Gemm (a layer),
    Softmax, an activation x activation MatMul (no layer), ReduceSum, LayerNormalization, a
    Mul of two constants (folded: 0); with unknown, a NonZero (no static cost)."""
    inits = [weight("w1", 8, 3, 3, 3), weight("w2", 5, 8), weight("bias", 1, 8, 1, 1),
             weight("c1", 4, 4), weight("c2", 4, 4), weight("g", 5), weight("beta", 5)]
    nodes = [
        node("Conv", ["x", "w1"], ["y1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("Relu", ["y1"], ["r1"]),
        node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Add", ["p1", "bias"], ["a1"]),
        node("Sigmoid", ["a1"], ["s1"]),
        node("GlobalAveragePool", ["s1"], ["gp"]),
        node("Flatten", ["gp"], ["f1"]),
        node("Gemm", ["f1", "w2"], ["y2"], transB=1),
        node("Softmax", ["y2"], ["sm"]),
        node("Transpose", ["sm"], ["smt"], perm=[1, 0]),
        node("MatMul", ["smt", "sm"], ["outer"]),
        node("ReduceSum", ["outer"], ["rs"], keepdims=1),
        node("LayerNormalization", ["outer", "g", "beta"], ["ln"]),
        node("Mul", ["c1", "c2"], ["cc"]),
    ]
    outputs = [helper.make_tensor_value_info("rs", F, None),
               helper.make_tensor_value_info("ln", F, None),
               helper.make_tensor_value_info("cc", F, None)]
    if unknown:
        nodes.append(node("NonZero", ["ln"], ["nz"]))
        outputs.append(helper.make_tensor_value_info("nz", TensorProto.INT64, None))
    g = helper.make_graph(nodes, "whole", [helper.make_tensor_value_info("x", F, [2, 3, 16, 16])],
                          outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), inits


def recount_onnx(model, inits):
    """The model's FLOPs and weight bytes, counted here; the layers' (Conv, Gemm) apart."""
    inf = shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inf.graph.value_info) + list(inf.graph.input) + list(inf.graph.output)}
    shapes.update({t.name: list(t.dims) for t in inits})
    consts = {t.name for t in inits}
    layers = other = 0
    for n in model.graph.node:
        out = int(np.prod(shapes[n.output[0]])) if n.output[0] in shapes else 0
        if all(i in consts for i in n.input):
            consts.update(n.output)       # folded before inference
        elif n.op_type == "Conv":
            w = shapes[n.input[1]]
            layers += 2 * out * int(np.prod(w[1:]))
        elif n.op_type == "Gemm":
            layers += 2 * out * shapes[n.input[0]][1]
        elif n.op_type == "MatMul":
            other += 2 * out * shapes[n.input[0]][-1]
        elif n.op_type == "MaxPool":
            other += out * int(np.prod(helper.get_attribute_value(n.attribute[0])))
        elif n.op_type in PER_OUT:
            other += PER_OUT[n.op_type] * out
        elif n.op_type in PER_IN:
            other += PER_IN[n.op_type] * int(np.prod(shapes[n.input[0]]))
        else:
            assert n.op_type in FREE or n.op_type == "NonZero", n.op_type
    wbytes = sum(numpy_helper.to_array(t).nbytes for t in inits)
    return layers, other, wbytes


def analyze(spprof, path, *extra):
    r = subprocess.run([spprof, "analyze", path, "--static", "--format", "json", "--quiet", *extra],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        FAILS.append(f"{path}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    return json.loads(r.stdout)


def analyze_runs(spprof, path):
    r = subprocess.run([spprof, "analyze", path, "--formats", "csr", "--time-budget", "0.01",
                        "--format", "json", "--quiet"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        FAILS.append(f"{path} with runs: exit {r.returncode}: {r.stderr.strip()}")
        return None
    return json.loads(r.stdout)


def text_line(spprof, path):
    r = subprocess.run([spprof, "analyze", path, "--static", "--quiet"], capture_output=True,
                       text=True, timeout=120)
    return [line for line in r.stdout.splitlines() if "whole model" in line]


def check_onnx(spprof, tmp):
    model, inits = onnx_model()
    path = os.path.join(tmp, "whole.onnx")
    onnx.save(model, path)
    layers, other, wbytes = recount_onnx(model, inits)
    rep = analyze(spprof, path)
    if rep is None:
        return
    w = rep["summary"]["whole_model"]
    check("onnx reason", w["reason"], None)
    check("onnx ops", w["ops"], len(model.graph.node))
    check("onnx layer_ops", w["layer_ops"], 2)
    check("onnx ops_not_counted", w["ops_not_counted"], 0)
    check("onnx not_counted", w["not_counted"], None)
    check("onnx profiled_flops", w["profiled_flops"], layers)
    check("onnx flops", w["flops"], layers + other)
    check("onnx flops_share", w["flops_share"], layers / (layers + other))
    check("onnx weight_bytes", w["weight_bytes"], wbytes)
    prof_bytes = sum(numpy_helper.to_array(t).nbytes for t in inits if t.name in ("w1", "w2"))
    check("onnx profiled_weight_bytes", w["profiled_weight_bytes"], prof_bytes)
    check("onnx weight_bytes_share", w["weight_bytes_share"], prof_bytes / wbytes)
    sparse = rep["summary"]["flops"]["sparse"]
    check("onnx theoretical_speedup", w["theoretical_speedup"],
          (layers + other) / (other + sparse))
    check("onnx deploy_speedup_bound (static)", w["deploy_speedup_bound"], None)
    lines = text_line(spprof, path)
    if len(lines) != 1 or "% of the FLOPs" not in lines[0]:
        FAILS.append(f"onnx text: want one 'whole model' line, got {lines!r}")
    # --n: the layers' N and so their FLOPs change, the other ops' stay
    rep = analyze(spprof, path, "--n", "7")
    if rep:
        w = rep["summary"]["whole_model"]
        check("onnx --n flops", w["flops"], rep["summary"]["flops"]["dense"] + other)
    # with runs: the projection read against the model by Amdahl's law (not a timing check:
    # the bound is checked against the report's own speedup and share)
    rep = analyze_runs(spprof, path)
    if rep:
        w, p = rep["summary"]["whole_model"], rep["summary"]["projection"]
        check("runs deploy_speedup", w["deploy_speedup"], p["speedup"])
        check("runs projected_flops_share", w["projected_flops_share"], w["flops_share"])
        f, s = w["projected_flops_share"], w["deploy_speedup"]
        check("runs deploy_speedup_bound", w["deploy_speedup_bound"], 1 / ((1 - f) + f / s))
    # an op whose FLOPs cannot be known: counted as not counted, named, never 0
    model, inits = onnx_model(unknown=True)
    path = os.path.join(tmp, "whole_unknown.onnx")
    onnx.save(model, path)
    rep = analyze(spprof, path)
    if rep:
        w = rep["summary"]["whole_model"]
        check("unknown ops_not_counted", w["ops_not_counted"], 1)
        if not w["not_counted"] or "NonZero" not in w["not_counted"]:
            FAILS.append(f"unknown: not_counted names no NonZero: {w['not_counted']!r}")
        check("unknown flops", w["flops"], layers + other)
        lines = text_line(spprof, path)
        if len(lines) != 1 or "not counted" not in lines[0]:
            FAILS.append(f"unknown text: want 'not counted' said, got {lines!r}")


def check_tflite(spprof, tmp):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import tflite_fb as tf
    except ImportError:
        print("whole_model_check: python3-flatbuffers missing: the TFLite model skipped")
        return
    m = tf.Model()
    x = m.tensor("x", [1, 8, 8, 3])
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)   # [O, kh, kw, I]
    wt = m.const("w", w)
    y = m.tensor("y", [1, 6, 6, 4])
    m.op(tf.CONV_2D, [x, wt, -1], [y])                          # a layer: 2·4·27·36
    r = m.tensor("r", [1, 6, 6, 4])
    m.op(14, [y], [r])                                          # LOGISTIC: 3 per output
    p = m.tensor("p", [1, 3, 3, 4])
    m.op(17, [r], [p], (5, {3: (tf.N.Int32Flags, 2), 4: (tf.N.Int32Flags, 2)}))  # MAX_POOL 2x2
    fc_w = RNG.standard_normal((5, 36)).astype(np.float32)
    f = m.tensor("f", [1, 36])
    m.op(22, [p], [f])                                          # RESHAPE: free
    o = m.tensor("o", [1, 5])
    m.op(tf.FC, [f, m.const("fc", fc_w), -1], [o])             # a layer: 2·5·36
    s = m.tensor("s", [1, 5])
    m.op(25, [o], [s])                                          # SOFTMAX: 5 per output
    path = m.write(os.path.join(tmp, "whole.tflite"))
    layers = 2 * 4 * 27 * 36 + 2 * 5 * 36
    other = 3 * 144 + 4 * 36 + 0 + 5 * 5
    rep = analyze(spprof, path)
    if rep is None:
        return
    wm = rep["summary"]["whole_model"]
    check("tflite ops", wm["ops"], 6)
    check("tflite layer_ops", wm["layer_ops"], 2)
    check("tflite ops_not_counted", wm["ops_not_counted"], 0)
    check("tflite profiled_flops", wm["profiled_flops"], layers)
    check("tflite flops", wm["flops"], layers + other)
    check("tflite weight_bytes", wm["weight_bytes"], w.nbytes + fc_w.nbytes)
    check("tflite weight_bytes_share", wm["weight_bytes_share"], 1.0)


def check_no_graph(spprof, tmp):
    """safetensors: no graph, every figure null, a reason."""
    w = RNG.standard_normal((16, 32)).astype(np.float32)
    header = json.dumps({"fc.weight": {"dtype": "F32", "shape": [16, 32],
                                       "data_offsets": [0, w.nbytes]}}).encode()
    header += b" " * (-len(header) % 8)
    path = os.path.join(tmp, "plain.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + w.tobytes())
    rep = analyze(spprof, path)
    if rep is None:
        return
    wm = rep["summary"]["whole_model"]
    for k, v in wm.items():
        if k != "reason" and v is not None:
            FAILS.append(f"safetensors: whole_model.{k} is {v!r}, want null")
    if not wm.get("reason") or "no graph" not in wm["reason"]:
        FAILS.append(f"safetensors: reason {wm.get('reason')!r} does not say 'no graph'")
    lines = text_line(spprof, path)
    if len(lines) != 1 or "no graph" not in lines[0]:
        FAILS.append(f"safetensors text: want the reason, got {lines!r}")


def main():
    spprof = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        check_onnx(spprof, tmp)
        check_tflite(spprof, tmp)
        check_no_graph(spprof, tmp)
    for f in FAILS:
        print("FAIL", f)
    if FAILS:
        return 1
    print("whole_model_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
