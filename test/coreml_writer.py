"""Core ML files written, and read back, with numpy alone (for coreml_check.py).

No protobuf library: a wire encoder writes each message as coremltools'
mlmodel/format protos number it (in field order, no proto3 zero scalars,
repeated numbers packed), the weight file as MILBlob's StorageFormat.hpp lays
it out; the reading has a decoder of its own and unpacks bits with numpy.
"""
import json
import os
import struct

import numpy as np

# ---- the wire encoder ----


def varint(v):
    v &= (1 << 64) - 1  # a negative int32/int64: ten bytes, two's complement
    out = bytearray()
    while v > 0x7F:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def uint(field, v):
    """A varint scalar (int32/64, uint32/64, bool, enum); proto3 writes no zero."""
    return varint(field << 3) + varint(int(v)) if v else b""


def blob(field, raw):
    """A length-delimited field: bytes, a str or a submessage; None: no field."""
    raw = raw.encode() if isinstance(raw, str) else raw
    return b"" if raw is None else varint(field << 3 | 2) + varint(len(raw)) + bytes(raw)


def msg(field, *parts):
    return blob(field, b"".join(parts))


def floats(field, a):
    return blob(field, np.ascontiguousarray(a, "<f4").tobytes())


def varints(field, a):
    return blob(field, b"".join(varint(int(v)) for v in np.ravel(a)))


def entry(field, k, v):  # one entry {key 1, value 2} of a map<string, message>
    return blob(field, blob(1, k) + blob(2, v))


def pack_lsb(q, nbits):
    """MIL's sub-byte order: value i at bit i * nbits, bytes filled from bit 0."""
    acc = sum(int(v) << i * nbits for i, v in enumerate(np.ravel(q)))
    return acc.to_bytes((np.size(q) * nbits + 7) // 8, "little")


# ---- field numbers of Model and NeuralNetworkLayer; MIL.proto's types; the weight file ----
NEURAL_NETWORK, CLASSIFIER, REGRESSOR, ML_PROGRAM = 500, 403, 303, 502
CONVOLUTION, ACTIVATION, INNER_PRODUCT, BATCHED_MATMUL = 100, 130, 140, 1045
BOOL, STRING, FP16, FP32, INT8, INT32, UINT8, UINT32 = 1, 2, 10, 11, 21, 23, 31, 33
UINT4, UINT2, UINT1 = 35, 36, 37
SUB_BITS = {UINT1: 1, UINT2: 2, UINT4: 4}
NUMPY = {FP16: "<f2", FP32: "<f4", INT8: "i1", UINT8: "u1", INT32: "<i4", UINT32: "<u4"}
DTYPE_NAMES = {FP16: "F16", FP32: "F32", INT8: "I8", UINT8: "U8"}
# MILBlob's BlobDataType
BLOB_TYPES = {FP16: 1, FP32: 2, UINT8: 3, INT8: 4, UINT1: 9, UINT2: 10, UINT4: 11,
              INT32: 14, UINT32: 15}
SENTINEL = 0xDEADBEEF


def data_bytes(dtype, a):
    if dtype in SUB_BITS:
        return pack_lsb(a, SUB_BITS[dtype])
    return np.ascontiguousarray(a, NUMPY[dtype]).tobytes()


class Blobs:
    """weights/weight.bin: a header {count, version 2}; per blob at 64, a 64-byte metadata
    {sentinel, dtype, size, data offset, padding bits} and its data."""

    def __init__(self, shift=0):
        self.body, self.count, self.shift = bytearray(64), 0, shift  # shift: a bad offset

    def add(self, dtype, a):
        """The offset of the blob's metadata, which BlobFileValue.offset holds."""
        data, meta = data_bytes(dtype, a), len(self.body) + -len(self.body) % 64
        pad_bits = -np.size(a) * SUB_BITS[dtype] % 8 if dtype in SUB_BITS else 0
        self.body += bytes(meta - len(self.body)) + struct.pack(
            "<IIQQQ", SENTINEL, BLOB_TYPES[dtype], len(data), meta + 64, pad_bits).ljust(64, b"\0")
        self.body, self.count = self.body + data, self.count + 1
        return meta + self.shift

    def bytes(self):
        return struct.pack("<II", self.count, 2).ljust(64, b"\0") + bytes(self.body[64:])


def value_type(dtype, shape):
    """ValueType {tensorType 1 {dataType 1, rank 2, dimensions 3 {constant 1 {size 1}}}}."""
    dims = b"".join(msg(3, msg(1, uint(1, d))) for d in shape)
    return msg(1, uint(1, dtype), uint(2, len(shape)), dims)


def immediate(dtype, a):
    """Value {type 2, immediateValue 3 {tensor 1}} in coremltools' TensorValue fields: fp32
    in floats 1, int32 in ints 2, bool in bools 3, strings 4, the rest (uint32 too) in bytes 7."""
    a = np.asarray(a)
    tv = msg(1, floats(1, a)) if dtype == FP32 else msg(2, varints(1, a)) if dtype == INT32 \
        else msg(3, varints(1, a.astype(int))) if dtype == BOOL \
        else msg(4, *(blob(1, str(s)) for s in a.ravel())) if dtype == STRING \
        else msg(7, blob(1, data_bytes(dtype, a)))
    return blob(2, value_type(dtype, a.shape)) + msg(3, blob(1, tv))


class Program:
    """Function "main" of an ML program: its inputs, ops in order, outputs and blobs."""

    def __init__(self, opset, blobs=None):
        self.opset, self.blobs = opset, blobs or Blobs()
        self.inputs, self.ops, self.outputs = [], [], []

    def value(self, dtype, a):
        """In the weight file from 10 values on, as coremltools writes them; else immediate."""
        a = np.asarray(a)
        if a.size < 10 or dtype not in BLOB_TYPES:
            return immediate(dtype, a)
        where = blob(1, "@model_path/weights/weight.bin") + uint(2, self.blobs.add(dtype, a))
        return blob(2, value_type(dtype, a.shape)) + msg(5, where)

    def input(self, name, shape, dtype=FP32):
        self.inputs.append(blob(1, name) + blob(2, value_type(dtype, shape)))
        return name

    def op(self, kind, out, dtype, shape, inputs=(), attrs=()):
        """inputs {param: an op's output (str) or a Value (bytes)}; attrs {name: Value}."""
        args = [entry(2, k, blob(1, blob(1, v) if isinstance(v, str) else blob(2, v)))
                for k, v in dict(inputs).items()]
        out_type = blob(3, blob(1, out) + blob(2, value_type(dtype, shape)))
        self.ops.append(blob(1, kind) + b"".join(args) + out_type +
                        b"".join(entry(5, k, v) for k, v in dict(attrs).items()))
        return out

    def const(self, name, dtype, a, with_name=True):
        attrs = {"name": immediate(STRING, name)} if with_name else {}
        attrs["val"] = self.value(dtype, a)
        return self.op("const", name, dtype, np.shape(a), attrs=attrs)

    def constexpr(self, kind, name, dtype, shape, params):
        """params {name: (dtype, array)}: attributes up to CoreML7, bound inputs from CoreML8."""
        values = {k: self.value(d, a) for k, (d, a) in params.items()}
        attrs = {"name": immediate(STRING, name)}
        if self.opset in ("CoreML6", "CoreML7"):
            return self.op(kind, name, dtype, shape, attrs={**attrs, **values})
        return self.op(kind, name, dtype, shape, inputs=values, attrs=attrs)

    def layer(self, kind, out, shape, **inputs):
        self.outputs.append(out)
        return self.op(kind, out, FP32, shape, inputs=inputs)

    def model(self, spec):
        block = b"".join([blob(2, o) for o in self.outputs] + [blob(3, o) for o in self.ops])
        fn = b"".join(blob(1, i) for i in self.inputs) + blob(2, self.opset) + \
            entry(3, self.opset, block)
        return uint(1, spec) + msg(ML_PROGRAM, uint(1, 1), entry(2, "main", fn))


def write_package(path, model, weight_bin, manifest_model="model.mlmodel"):
    """A .mlpackage folder: Manifest.json, Data/com.apple.CoreML/{model.mlmodel, weights/}."""
    data = os.path.join(path, "Data", "com.apple.CoreML")
    os.makedirs(os.path.join(data, "weights"))
    for name, raw in (("model.mlmodel", model), ("weights/weight.bin", weight_bin)):
        with open(os.path.join(data, name), "wb") as f:
            f.write(raw)
    apple, root = "com.apple.CoreML", "4B1AD2E5-4C7B-4D2F-9A4E-2C1B3D5E6F70"
    items = {root: {"author": apple, "description": "CoreML Model Specification",
                    "name": "model.mlmodel", "path": apple + "/" + manifest_model},
             "8E0F1A2B-3C4D-4E5F-8A9B-0C1D2E3F4A5B": {
                 "author": apple, "description": "CoreML Model Weights", "name": "weights",
                 "path": apple + "/weights"}}
    with open(os.path.join(path, "Manifest.json"), "w") as f:
        json.dump({"fileFormatVersion": "1.0.0", "itemInfoEntries": items,
                   "rootModelIdentifier": root}, f, indent=2)
    return path


# ---- the reading: a wire decoder of its own, bits unpacked by numpy ----

def read_varint(buf, pos):
    v = shift = 0
    while pos < len(buf):
        v, shift, pos = v | (buf[pos] & 0x7F) << shift, shift + 7, pos + 1
        if buf[pos - 1] < 0x80:
            return v, pos
    raise ValueError("a varint runs past the end")


def fields(buf):
    """A message's fields: number -> [an int for a varint, bytes for the others]."""
    out, pos = {}, 0
    while pos < len(buf):
        k, pos = read_varint(buf, pos)
        if k & 7 == 0:
            v, pos = read_varint(buf, pos)
        else:
            n, pos = read_varint(buf, pos) if k & 7 == 2 else ({1: 8, 5: 4}[k & 7], pos)
            v, pos = buf[pos:pos + n], pos + n
            if pos > len(buf):
                raise ValueError(f"field {k >> 3} runs past the end")
        out.setdefault(k >> 3, []).append(v)
    return out


def first(m, f, default=b""):
    return m[f][0] if f in m else default


def sub(m, f):
    return fields(first(m, f))


def ints_of(m, f):
    """A packed repeated varint, as signed 64-bit numbers."""
    v, pos, out = first(m, f), 0, []
    while pos < len(v):
        x, pos = read_varint(v, pos)
        out.append(x - (x >> 63 << 64))
    return out


def floats_of(m, f):
    return np.frombuffer(b"".join(m.get(f, [])), "<f4")


def mapping(m, f):
    return {first(fields(e), 1).decode(): first(fields(e), 2) for e in m.get(f, [])}


def unpack(raw, nbits, count, order):
    bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder=order)[:count * nbits]
    powers = 1 << np.arange(nbits)
    return bits.reshape(count, nbits) @ (powers[::-1] if order == "big" else powers)


# an op's weight input, and W from it (transpose_y t); a NeuralNetwork layer's alike
VIEWS = {"linear": ("weight", lambda w, t: w), "matmul": ("y", lambda w, t: w if t else w.T),
         "conv": ("weight", lambda w, t: w.transpose(0, 2, 3, 1).reshape(len(w), -1)),
         "conv_transpose": ("weight", lambda w, t: w.reshape(len(w), -1).T)}


def nn_weight(wp, shape):
    """(values in the stored shape, dtype, file_storage) of a WeightParams."""
    if 1 in wp or 2 in wp:
        w = floats_of(wp, 1) if 1 in wp else np.frombuffer(wp[2][0], "<f2")
        return w.reshape(shape), "F32" if 1 in wp else "F16", None
    q_params, raw = sub(wp, 40), first(wp, 30)
    q = unpack(raw, first(q_params, 1, 0), int(np.prod(shape)), "big").reshape(shape)
    if 101 in q_params:
        scale, bias = floats_of(sub(q_params, 101), 1), floats_of(sub(q_params, 101), 2)
        per = (-1,) + (1,) * (len(shape) - 1)
        w = q.astype(np.float32) * scale.reshape(per) + bias.reshape(per)
        return w, "F32", ("coreml-linear", len(raw) + 4 * (scale.size + bias.size))
    lut = floats_of(sub(q_params, 102), 1)
    return lut[q], "F32", ("coreml-lut", len(raw) + 4 * lut.size)


# op type, the weights, hasBias and bias fields of each layer kind
NN_OPS = {INNER_PRODUCT: ("innerProduct", 20, 10, 21), CONVOLUTION: ("convolution", 90, 70, 91),
          BATCHED_MATMUL: ("batchedMatmul", 8, 7, 9)}


def nn_layer(m):
    """(weight name, figures' arguments) of a NeuralNetworkLayer with a weight, or None."""
    kind = next((k for k in NN_OPS if k in m), None)
    if kind is None:
        return None
    (op_type, wf, hf, bf), name, p = NN_OPS[kind], first(m, 1).decode(), sub(m, kind)
    if op_type == "convolution":
        o, kc, ks, up = first(p, 1, 0), first(p, 2, 0), ints_of(p, 20) or [3, 3], first(p, 60, 0)
        view, shape = ("conv_transpose", (kc, o // (first(p, 10, 0) or 1), *ks)) if up \
            else ("conv", (o, kc, *ks))
    else:  # innerProduct [C_out, C_in]; batchedMatmul [X2, X1] row-major
        view, shape = "linear", (first(p, 2, 0), first(p, 1, 0)) if op_type == "innerProduct" \
            else (first(p, 6, 0), first(p, 5, 0))
    w, dtype, storage = nn_weight(sub(p, wf), shape)
    w = VIEWS[view][1](w, False)
    bias = first(p, hf, 0) and nn_weight(sub(p, bf), -1)[0].size == len(w)
    dims = ints_of(sub(m, 5), 2)
    n, src = (np.prod(dims) // len(w), "model") if dims and min(dims) > 0 else (None, "option")
    return name + "/weights", (op_type, name, w, n, dtype, name + "/bias" if bias else None,
                               storage, src)


def typed(raw):
    """(name 1, dataType, shape) of a NamedValueType, or of a Value (no name) by its type 2."""
    m = fields(raw)
    t = sub(sub(m, 2), 1)
    return first(m, 1).decode(), first(t, 1, 0), \
        tuple(first(sub(fields(d), 1), 1, 0) for d in t.get(3, []))


def raw_array(data, dtype, shape):
    n = int(np.prod(shape))
    if dtype in SUB_BITS:
        return unpack(data, SUB_BITS[dtype], n, "little").reshape(shape)
    return np.frombuffer(data, NUMPY[dtype], n).reshape(shape)


def constexpr(kind, p):
    """(dense array, dtype, file_storage) from params {name: (array, dtype, bytes)}; iOS16's
    have a shape and their bits in uint8 bytes, iOS18's the output's shape and sub-byte types."""
    if kind == "constexpr_sparse_to_dense":
        (data, dtype, nd), (mask, _, nm) = p["nonzero_data"], p["mask"]
        shape = tuple(p["shape"][0]) if "shape" in p else mask.shape
        bits = np.unpackbits(mask, bitorder="little") if "shape" in p else mask.ravel()
        if len(bits) - int(np.prod(shape)) not in range(8) or bits.sum() != data.size:
            raise ValueError("the mask's set bits are not nonzero_data's count")
        dense = np.zeros(len(bits), data.dtype)
        dense[bits != 0] = data
        return dense[:int(np.prod(shape))].reshape(shape), dtype, ("coreml-sparse", nd + nm)
    (idx, itype, ni), (lut, dtype, nl) = p["indices"], p["lut"]
    if "shape" in p:
        shape, nbits = tuple(p["shape"][0]), int(np.log2(lut.size))
        if len(idx) != (nbits * int(np.prod(shape)) + 7) // 8:
            raise ValueError("the lut's index vector is not its shape's length")
        idx = raw_array(idx.tobytes(), {1: UINT1, 2: UINT2, 4: UINT4, 8: UINT8}[nbits], shape)
    elif lut.shape != (1,) * idx.ndim + (1 << SUB_BITS.get(itype, 8), 1):
        raise ValueError("not a per-tensor scalar lut")
    return lut.reshape(-1)[idx], dtype, ("coreml-lut", ni + nl)


class Reading:
    """weight name -> figures' arguments of a .mlmodel or .mlpackage, numpy's own reading."""

    def __init__(self, path):
        if os.path.isdir(path):
            doc = json.load(open(os.path.join(path, "Manifest.json")))
            path = os.path.join(path, "Data",
                                doc["itemInfoEntries"][doc["rootModelIdentifier"]]["path"])
        self.folder, self.model = os.path.dirname(path), fields(open(path, "rb").read())

    def layers(self):
        if ML_PROGRAM in self.model:
            return self.program()
        nn = sub(self.model, next(f for f in (NEURAL_NETWORK, CLASSIFIER, REGRESSOR)
                                  if f in self.model))
        return dict(filter(None, (nn_layer(fields(l)) for l in nn.get(1, []))))

    def blob(self, name, offset, dtype):
        data = open(os.path.join(self.folder, name.replace("@model_path/", "", 1)), "rb").read()
        if offset + 64 > len(data):
            raise ValueError("a blob's offset past the end of the weight file")
        sentinel, mil, size, at = struct.unpack_from("<IIQQ", data, offset)
        if sentinel != SENTINEL or mil != BLOB_TYPES[dtype] or at + size > len(data):
            raise ValueError("a blob's metadata does not hold")
        return data[at:at + size]

    def value(self, raw):
        """(array, dtype, bytes stored) of a Value, immediate or in the weight file."""
        v, (_, dtype, shape) = fields(raw), typed(raw)
        tv = sub(sub(v, 3), 1)
        if 1 in tv:
            return floats_of(sub(tv, 1), 1).reshape(shape), dtype, 4 * int(np.prod(shape))
        if 4 in tv:
            return np.array([s.decode() for s in sub(tv, 4)[1]]).reshape(shape), dtype, None
        for f in (f for f in (2, 3, 5) if f in tv):
            return np.array(ints_of(sub(tv, f), 1)).reshape(shape), dtype, None
        data = self.blob(first(sub(v, 5), 1).decode(), first(sub(v, 5), 2, 0), dtype) \
            if 5 in v else first(sub(tv, 7), 1)
        return raw_array(data, dtype, shape), dtype, len(data)

    def program(self):
        fn = fields(mapping(sub(self.model, ML_PROGRAM), 2)["main"])
        self.shapes = {t[0]: t[2] for t in map(typed, fn.get(1, []))}
        consts, out = {}, {}
        for op in fields(mapping(fn, 3)[first(fn, 2).decode()]).get(3, []):
            op = fields(op)
            kind, res = first(op, 1).decode(), typed(first(op, 3))
            args = {k: fields(first(fields(v), 1)) for k, v in mapping(op, 2).items()}
            params = {k: self.value(v) for k, v in mapping(op, 5).items() if k != "name"}
            params.update({k: self.value(b[2][0]) for k, b in args.items() if 2 in b})
            weight = first(args.get(VIEWS.get(kind, ("",))[0], {}), 1).decode()
            if kind == "const":
                consts[res[0]] = params["val"][:2] + (None,)
            elif kind.startswith("constexpr_"):
                consts[res[0]] = constexpr(kind, params)
            elif kind in VIEWS and weight in consts:
                out[weight] = self.mil_layer(kind, consts, weight, args, params, res)
        return out

    def mil_layer(self, kind, consts, weight, args, params, res):
        w, dtype, storage = consts[weight]
        w = VIEWS[kind][1](w, "transpose_y" in params and bool(params["transpose_y"][0]))
        n = np.prod(self.shapes[first(args["x"], 1).decode()]) // w.shape[1] \
            if kind == "conv_transpose" else np.prod(res[2]) // len(w)
        bias = first(args.get("bias", {}), 1).decode()
        bias = bias if bias in consts and consts[bias][0].size == len(w) else None
        return kind, res[0], w, n, DTYPE_NAMES[dtype], bias, storage, "model"
