"""TFLite FlatBuffers written and read with Debian's python3-flatbuffers alone.

No generated schema code: the writer builds tables slot by slot with
flatbuffers.Builder, the reader walks them with flatbuffers.table.Table,
slots as in TFLite's schema.fbs (a union takes two: its type, then its
value). Used by tflite_check.py, which imports it only after numpy and
flatbuffers are found.
"""
import collections

import numpy as np
import flatbuffers
from flatbuffers import encode
from flatbuffers import number_types as N
from flatbuffers.table import Table

# TensorType
F32, F16, I32, U8, I8 = 0, 1, 2, 3, 9
TYPES = {np.dtype(np.float32): F32, np.dtype(np.float16): F16, np.dtype(np.int32): I32,
         np.dtype(np.uint8): U8, np.dtype(np.int8): I8}
NP_TYPES = {0: "<f4", 1: "<f2", 2: "<i4", 3: "u1", 4: "<i8", 6: "u1", 7: "<i2", 9: "i1",
            10: "<f8", 15: "<u4", 16: "<u2"}
# BuiltinOperator
CONV_2D, DEPTHWISE, DEQUANTIZE, FC, TRANSPOSE_CONV, DENSIFY, BATCH_MATMUL = \
    3, 4, 6, 9, 67, 124, 126
OP_NAMES = {CONV_2D: "CONV_2D", DEPTHWISE: "DEPTHWISE_CONV_2D", FC: "FULLY_CONNECTED",
            TRANSPOSE_CONV: "TRANSPOSE_CONV", BATCH_MATMUL: "BATCH_MATMUL"}
BATCH_MATMUL_OPTIONS = 101  # BuiltinOptions.BatchMatMulOptions
# MediaPipe's custom transposed conv (CUSTOM, 32): weight [O, kh, kw, I] as TRANSPOSE_CONV's
MP_TCONV = "Convolution2DTransposeBias"
OP_NAMES[MP_TCONV] = MP_TCONV
# SparseIndexVector: Int32Vector, Uint16Vector, Uint8Vector
INDEX_FLAGS = {1: N.Int32Flags, 2: N.Uint16Flags, 3: N.Uint8Flags}
INDEX_TYPES = {1: "<i4", 2: "<u2", 3: "u1"}

# one layer's figures, the same whoever counts them
Figures = collections.namedtuple(
    "Figures", "op_type node m k n dtype nnz zero_rows zero_cols bias storage")


def figures(op_type, node, w, n, dtype, bias=None, storage=None):
    nz = w != 0
    return Figures(op_type, node, w.shape[0], w.shape[1], int(n), dtype, int(nz.sum()),
                   int((~nz.any(1)).sum()), int((~nz.any(0)).sum()), bias, storage)



# ---- the writer: flatbuffers.Builder, table by table, slots as in TFLite's schema ----

def scalars(b, flags, values, align=None):
    values = list(values)
    b.StartVector(flags.bytewidth, len(values), align or flags.bytewidth)
    for v in reversed(values):
        b.Prepend(flags, flags.py_type(v))
    return b.EndVector()


def data_vector(b, raw):
    """A [ubyte] aligned at 16, as TFLite's converter writes a buffer's data."""
    b.StartVector(1, len(raw), 16)
    b.head = b.Head() - len(raw)
    b.Bytes[b.head:b.head + len(raw)] = raw
    return b.EndVector()


def offsets(b, offs):
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def table(b, fields):
    """fields: {slot: (flags, value)}, flags None for an offset; None values left out."""
    b.StartObject(max(fields, default=-1) + 1)
    for slot, (flags, v) in fields.items():
        if v is None:
            continue
        if flags is None:
            b.PrependUOffsetTRelativeSlot(slot, v, 0)
        else:
            b.PrependSlot(flags, slot, flags.py_type(v), None)
    return b.EndObject()


def ints(b, values):
    return scalars(b, N.Int32Flags, values)


def quant_table(b, q):
    if q is None:
        return None
    return table(b, {2: (None, scalars(b, N.Float32Flags, q["scale"])),
                     3: (None, scalars(b, N.Int64Flags, q["zero_point"])),
                     6: (N.Int32Flags, q.get("dim", 0))})


def index_vector(b, kind, values):
    """An Int32Vector, Uint16Vector or Uint8Vector (these two force_align 4)."""
    return table(b, {0: (None, scalars(b, INDEX_FLAGS[kind], values, 4))})


def dim_table(b, d):
    if d["format"] == 0:
        return table(b, {0: (N.Int8Flags, 0), 1: (N.Int32Flags, d["size"])})
    (sk, seg), (ik, idx) = d["segments"], d["indices"]
    seg_off, idx_off = index_vector(b, sk, seg), index_vector(b, ik, idx)
    return table(b, {0: (N.Int8Flags, 1), 2: (N.Uint8Flags, sk), 3: (None, seg_off),
                     4: (N.Uint8Flags, ik), 5: (None, idx_off)})


def sparsity_table(b, s):
    if s is None:
        return None
    dims = offsets(b, [dim_table(b, d) for d in s["dims"]])
    bmap = ints(b, s["block_map"]) if s["block_map"] else None
    return table(b, {0: (None, ints(b, s["order"])), 1: (None, bmap), 2: (None, dims)})


def tensor_table(b, t):
    fields = {0: (None, ints(b, t["shape"])), 3: (None, b.CreateString(t["name"])),
              4: (None, quant_table(b, t["quant"])), 6: (None, sparsity_table(b, t["sparsity"]))}
    fields.update({1: (N.Int8Flags, t["type"]), 2: (N.Uint32Flags, t["buffer"])})
    return table(b, fields)


def op_table(b, op):
    code, inputs, outputs, options = op
    kind, opts = options or (None, None)
    fields = {0: (N.Uint32Flags, code), 1: (None, ints(b, inputs)),
              2: (None, ints(b, outputs))}
    if kind:
        fields.update({3: (N.Uint8Flags, kind), 4: (None, table(b, opts))})
    return table(b, fields)


def code_table(b, code):
    return table(b, {0: (N.Int8Flags, min(code, 127)), 2: (N.Int32Flags, 1),
                     3: (N.Int32Flags, code)})


class Model:
    """A TFLite model being made: one subgraph's tensors, buffers and operators."""

    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [b""], [], []

    def tensor(self, name, shape, ttype=F32, raw=None, quant=None, sparsity=None):
        buffer = 0
        if raw is not None:
            self.buffers.append(raw)
            buffer = len(self.buffers) - 1
        self.tensors.append({"name": name, "shape": list(shape), "type": ttype,
                             "buffer": buffer, "quant": quant, "sparsity": sparsity})
        return len(self.tensors) - 1

    def const(self, name, a, quant=None):
        return self.tensor(name, a.shape, TYPES[a.dtype], a.astype(a.dtype.newbyteorder("<"))
                           .tobytes(), quant)

    def op(self, code, inputs, outputs, options=None):
        if code not in self.codes:
            self.codes.append(code)
        self.ops.append((self.codes.index(code), list(inputs), list(outputs), options))

    def named(self, name):
        return next(t for t in self.tensors if t["name"] == name)

    def io(self):
        made = {o for _, _, outs, _ in self.ops for o in outs}
        used = {i for _, ins, _, _ in self.ops for i in ins}
        inputs = [i for i, t in enumerate(self.tensors) if not t["buffer"] and i not in made]
        return inputs, sorted(made - used)

    def serialize(self):
        b = flatbuffers.Builder(4096)
        bufs = offsets(b, [table(b, {0: (None, data_vector(b, raw) if raw else None)})
                           for raw in self.buffers])
        tensors = offsets(b, [tensor_table(b, t) for t in self.tensors])
        ops = offsets(b, [op_table(b, op) for op in self.ops])
        ins, outs = self.io()
        graph = table(b, {0: (None, tensors), 1: (None, ints(b, ins)), 2: (None, ints(b, outs)),
                          3: (None, ops), 4: (None, b.CreateString("main"))})
        codes = offsets(b, [code_table(b, c) for c in self.codes])
        root = table(b, {0: (N.Uint32Flags, 3), 1: (None, codes),
                         2: (None, offsets(b, [graph])),
                         3: (None, b.CreateString("tflite_check")), 4: (None, bufs)})
        b.Finish(root, file_identifier=b"TFL3")
        return bytes(b.Output())

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.serialize())
        return path


# ---- the reader: flatbuffers.table.Table and numpy, no generated code ----

class Fb:
    """One flatbuffer table, its fields by slot."""

    def __init__(self, buf, pos):
        self.buf, self.t = buf, Table(buf, pos)

    def off(self, slot):
        return self.t.Offset(4 + 2 * slot)

    def scalar(self, slot, flags, default=0):
        o = self.off(slot)
        return self.t.Get(flags, self.t.Pos + o) if o else default

    def table(self, slot):
        o = self.off(slot)
        return Fb(self.buf, self.t.Indirect(self.t.Pos + o)) if o else None

    def tables(self, slot):
        o = self.off(slot)
        start = self.t.Vector(o) if o else 0
        return [Fb(self.buf, self.t.Indirect(start + 4 * i))
                for i in range(self.t.VectorLen(o) if o else 0)]

    def array(self, slot, dtype):
        o = self.off(slot)
        if not o:
            return None
        return np.frombuffer(self.buf, dtype, self.t.VectorLen(o), self.t.Vector(o))

    def string(self, slot):
        o = self.off(slot)
        return self.t.String(self.t.Pos + o).decode() if o else None


def expand(dim, coords):
    """One level of a sparse tensor's traversal: coordinates so far, one more each."""
    if dim.scalar(0, N.Int8Flags) == 0:
        return [c + (j,) for c in coords for j in range(dim.scalar(1, N.Int32Flags))]
    seg, idx = stored_index(dim, 2), stored_index(dim, 4)
    return [c + (int(idx[j]),) for p, c in enumerate(coords) for j in range(seg[p], seg[p + 1])]


def stored_index(dim, slot):
    return dim.table(slot + 1).array(0, INDEX_TYPES[dim.scalar(slot, N.Uint8Flags)])


def place(c, order, bmap, bsize, rank):
    """A traversal coordinate at its place in the dense tensor."""
    e = [0] * len(order)
    for level, d in enumerate(order):
        e[d] = c[level]
    out = e[:rank]
    for b, d in enumerate(bmap):
        out[d] = e[d] * bsize[b] + e[rank + b]
    return tuple(out)


def densify(sp, shape, values):
    order = [int(d) for d in sp.array(0, "<i4")]
    bmap = [int(d) for d in (sp.array(1, "<i4") if sp.off(1) else [])]
    dims, coords = sp.tables(2), [()]
    for dim in dims:
        coords = expand(dim, coords)
    bsize = {order[lv] - len(shape): dims[lv].scalar(1, N.Int32Flags)
             for lv in range(len(order)) if order[lv] >= len(shape)}
    dense = np.zeros(shape, values.dtype)
    for c, v in zip(coords, values):
        dense[place(c, order, bmap, bsize, len(shape))] = v
    return dense


def view(code, w, adj_y):
    """W, the GEMM view of a weight, as the layer reads it."""
    if code == DEPTHWISE:
        return w.reshape(-1, w.shape[-1]).T
    if code in (TRANSPOSE_CONV, MP_TCONV):
        return w.reshape(-1, w.shape[-1])
    if code == BATCH_MATMUL:
        b = w.reshape(w.shape[-2:])
        return b if adj_y else b.T
    return w.reshape(w.shape[0], -1)


class Reading:
    """Subgraph 0 of a .tflite, this file's own reading."""

    def __init__(self, path):
        self.buf = open(path, "rb").read()
        model = Fb(self.buf, encode.Get(N.UOffsetTFlags.packer_type, self.buf, 0))
        self.codes = [max(c.scalar(0, N.Int8Flags), c.scalar(3, N.Int32Flags))
                      for c in model.tables(1)]
        self.codes = [MP_TCONV if code == 32 and c.string(1) == MP_TCONV else code
                      for code, c in zip(self.codes, model.tables(1))]
        self.buffers = model.tables(4)
        graph = model.tables(2)[0]
        self.tensors, self.ops = graph.tables(0), graph.tables(3)
        self.producer = {int(o): op for op in self.ops for o in op.array(2, "<i4")}

    def code(self, op):
        return self.codes[op.scalar(0, N.Uint32Flags)]

    def name(self, i):
        return self.tensors[i].string(3)

    def shape(self, i):
        s = self.tensors[i].array(0, "<i4")
        return tuple(int(d) for d in (s if s is not None else ()))

    def numel(self, i):
        return int(np.prod(self.shape(i), dtype=np.int64))

    def raw(self, i):
        b = self.buffers[self.tensors[i].scalar(2, N.Uint32Flags)]
        if b.off(0):
            return b.array(0, "u1")
        off, size = b.scalar(1, N.Uint64Flags), b.scalar(2, N.Uint64Flags)
        return np.frombuffer(self.buf, "u1", size if off > 1 else 0, off if off > 1 else 0)

    def constant(self, i):
        """The constant behind tensor i, past DEQUANTIZE and DENSIFY; None when none."""
        while i in self.producer and self.code(self.producer[i]) in (DEQUANTIZE, DENSIFY):
            i = int(self.producer[i].array(1, "<i4")[0])
        return None if i in self.producer or not self.raw(i).size else i

    def zero_point(self, i):
        q = self.tensors[i].table(4)
        zp = q.array(3, "<i8") if q else None
        if zp is None or not zp.any():
            return None
        shape = [1] * len(self.shape(i))
        if zp.size > 1:
            shape[q.scalar(6, N.Int32Flags)] = zp.size
        return zp.reshape(shape)

    def value(self, i):
        """Tensor i's values; affine codes less their zero point, zero where W is."""
        t = self.tensors[i]
        a = self.raw(i).view(NP_TYPES[t.scalar(1, N.Int8Flags)])
        a = densify(t.table(6), self.shape(i), a) if t.table(6) else a.reshape(self.shape(i))
        zp = self.zero_point(i)
        return a if zp is None else a.astype(np.int64) - zp

    def dtype(self, i):
        t = self.tensors[i]
        if t.table(6) or self.zero_point(i) is not None:
            return "F32"
        return {F32: "F32", F16: "F16", I8: "I8", U8: "U8"}.get(t.scalar(1, N.Int8Flags), "?")

    def storage(self, i):
        t = self.tensors[i]
        if t.table(6):
            index = sum(stored_index(d, s).nbytes for d in t.table(6).tables(2)
                        if d.scalar(0, N.Int8Flags) for s in (2, 4))
            return ("tflite-sparse", self.raw(i).size + index)
        if self.zero_point(i) is not None:
            kind = "uint8" if t.scalar(1, N.Int8Flags) == U8 else "int8"
            return (f"tflite-{kind}-affine", self.raw(i).size)
        return None

    def adj_y(self, op):
        opts = op.table(4)
        return bool(opts.scalar(1, N.BoolFlags)) if opts else False

    def bias(self, code, ins):
        if code not in (FC, CONV_2D, DEPTHWISE) or len(ins) < 3 or ins[2] < 0:
            return None
        c = self.constant(ins[2])
        return self.name(ins[2] if c is None else c)

    def layer(self, op):
        """(weight tensor, Figures) of one operator; None when it has no constant weight."""
        code, ins = self.code(op), [int(i) for i in op.array(1, "<i4")]
        out = int(op.array(2, "<i4")[0])
        wi = self.constant(ins[1]) if len(ins) > 1 and ins[1] >= 0 else None
        if wi is None:
            return None
        w = view(code, self.value(wi), code == BATCH_MATMUL and self.adj_y(op))
        if code in (TRANSPOSE_CONV, BATCH_MATMUL, MP_TCONV):
            n = self.numel(ins[2 if code == TRANSPOSE_CONV else 0]) // w.shape[1]
        else:
            n = self.numel(out) // w.shape[0]
        return wi, figures(OP_NAMES[code], self.name(out), w, n, self.dtype(wi),
                           self.bias(code, ins), self.storage(wi))

    def layers(self):
        """name -> Figures, a weight's second use named "<weight>#2"."""
        out, uses = {}, collections.Counter()
        for op in self.ops:
            got = self.layer(op) if self.code(op) in OP_NAMES else None
            if got and got[1].m and got[1].k:
                uses[got[0]] += 1
                tag = f"#{uses[got[0]]}" if uses[got[0]] > 1 else ""
                out[self.name(got[0]) + tag] = got[1]
        return out
