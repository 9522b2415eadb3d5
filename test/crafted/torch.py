"""The PyTorch reader (profiler/load_torch.c, pickle.c) and the zip walk
(zip_member.c) against hostile files of issue 43: storage offsets and
strides whose bounds wrap 64 bits, a pickle "billion laughs" of lists
shared through the memo, stride-0 views gathered densely, a member's second
local header that the central directory names, and the equivalents of what
broke torch's own weights_only unpickler (CVE-2025-32434, CVE-2026-24747:
calls reached through GLOBAL with REDUCE/BUILD/NEWOBJ/INST/OBJ, SETITEM on
values that are not dicts, APPEND on a dict, a storage whose declared count
disagrees with its bytes), and the training state a checkpoint leaves out
(issue 46 item 2: its tensors tallied, never read, yet checked alike).
Pickles are written opcode by opcode here; the
stride-0 views by torch.save itself when torch imports."""
import json
import os
import struct
import zipfile
import subprocess
import zlib

from crafted_check import Case


# --- pickle opcodes (Lib/pickletools.py) ---
def s(text):
    b = text.encode() if isinstance(text, str) else text
    return b"X" + struct.pack("<I", len(b)) + b


def i(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    b = v.to_bytes(9, "little", signed=True).rstrip(b"\x00" if v >= 0 else b"\xff")
    if not b or (b[-1] & 0x80) != (0x80 if v < 0 else 0):
        b += b"\x00" if v >= 0 else b"\xff"
    return b"\x8a" + bytes([len(b)]) + b


def g(mod, name):
    return b"c" + mod.encode() + b"\n" + name.encode() + b"\n"


def tup(*items):
    return b"(" + b"".join(items) + b"t"


ODICT = g("collections", "OrderedDict") + b")R"


def persid(key="0", numel=4, cls="FloatStorage"):
    return tup(s("storage"), g("torch", cls), s(key), s("cpu"), i(numel)) + b"Q"


def tensor(key="0", numel=4, offset=0, size=(4,), stride=(1,), cls="FloatStorage", storage=None):
    return (g("torch._utils", "_rebuild_tensor_v2") +
            tup(storage if storage is not None else persid(key, numel, cls), i(offset),
                tup(*[i(x) for x in size]), tup(*[i(x) for x in stride]), b"\x89", ODICT) + b"R")


def state(**named):
    """An OrderedDict of name -> pickled value, as torch.save writes a state dict."""
    return b"\x80\x02" + ODICT + b"(" + b"".join(s(k) + v for k, v in named.items()) + b"u."


FLOATS = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)  # a 16-byte FloatStorage


def pt(d, name, pkl, storages=None, method=zipfile.ZIP_STORED):
    """A torch.save-style zip: archive/data.pkl, archive/data/<key>, version, byteorder."""
    with zipfile.ZipFile(os.path.join(d, name), "w", method) as z:
        z.writestr("archive/data.pkl", pkl)
        for key, data in (storages if storages is not None else {"0": FLOATS}).items():
            z.writestr("archive/data/" + key, data)
        z.writestr("archive/version", "3\n")
        z.writestr("archive/byteorder", "little")
    return name


def refuse(name, path, says=(), **kw):
    return Case("torch: " + name, ["analyze", path, "--static"], says=list(says), **kw)


# --- 1: offsets and strides whose bounds wrap 64 bits ---
def wrapping(d):
    out = []
    # (offset + hi + 1) * 4 wraps to 4: the data 256 MiB before the storage
    far = tensor(offset=(1 << 62) - (1 << 26), size=(1 << 26,), stride=(1,), numel=(1 << 63) - 1)
    for tag, method in (("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)):
        out.append(refuse("storage offset wraps 64 bits (%s)" % tag,
                          pt(d, "wrap_%s.pt" % tag, state(w=far), method=method), ["storage '0'"]))
    # (offset + 2) * 4 wraps to 0: 8 bytes of the zip's header read as weights
    near = tensor(offset=(1 << 62) - 2, size=(2,), stride=(1,), numel=(1 << 63) - 1)
    out.append(refuse("storage offset wraps onto the zip header",
                      pt(d, "wrap_header.pt", state(w=near)), ["storage '0'"]))
    # (n - 1) * stride = 2^24 * 2^40 wraps to 0: a gather 4 TiB apart
    wide = tensor(size=((1 << 24) + 1,), stride=(1 << 40,), numel=(1 << 63) - 1)
    out.append(refuse("stride extent wraps 64 bits", pt(d, "wrap_stride.pt", state(w=wide))))
    # 2^40 x (2^24 + 1) elements wrap to 2^40
    many = tensor(size=(1 << 40, (1 << 24) + 1), stride=(0, 0), numel=(1 << 63) - 1)
    out.append(refuse("element count wraps 64 bits", pt(d, "wrap_numel.pt", state(w=many))))
    return out


# --- 4: lists shared through the memo, 8 references a level, 14 levels ---
def laughs(d):
    out = []
    for tag, leaf in (("list", i(1)), ("tensor", tensor())):
        p = b"]q\x00" + leaf + b"a"  # memo 0: [leaf]; memo k: 8 references to memo k - 1
        for lvl in range(1, 15):
            p += b"0](" + (b"h" + bytes([lvl - 1])) * 8 + b"eq" + bytes([lvl])
        pkl = b"\x80\x02" + ODICT + s("laughs") + p + b"s."
        out.append(refuse("billion laughs of %s leaves" % tag,
                          pt(d, "laughs_%s.pt" % tag, pkl), ["shared"]))
    return out


# --- 5: stride-0 views gathered densely ---
def expanded(d):
    # torch.save in a child: torch imported here would count in every case's peak RSS
    # (the cases are forked from this process)
    save = ("import sys, torch\n"
            "for n in (4096, 16384, 65536):\n"
            "    torch.save({'w': (torch.ones(1) if n == 4096 else torch.zeros(1)).expand(n, n)},\n"
            "               'expand_%d.pt' % n)\n")
    r = subprocess.run(["/usr/bin/python3", "-c", save], cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        print("crafted torch: torch.save failed (python3-torch missing?): stride-0 views skipped")
        return []
    out = []
    for n in (16384, 65536):
        out.append(refuse("stride-0 view %dx%d" % (n, n), "expand_%d.pt" % n, ["memory budget"]))
    path = "expand_4096.pt"

    def loaded(p):
        layers = json.loads(p.stdout)["layers"]
        if [(l["name"], l["shape"], l["nnz"]) for l in layers] != [("w", [4096, 4096], 4096 * 4096)]:
            return "layers %r, want w [4096, 4096] dense" % [(l["name"], l["shape"], l["nnz"])
                                                             for l in layers]
    out.append(Case("torch: stride-0 view 4096x4096 within budget loads",
                    ["analyze", path, "--static", "--format", "json"], rc=0, check=loaded,
                    max_mib=1024, seconds=30))
    return out


# --- 6: a second local header of a member, the one the central directory names ---
def local(name, data, crc):
    return (struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 0, 0, 0x21, crc, len(data), len(data),
                        len(name), 0) + name + data)


def two_headers(members, target, decoy):
    """A stored zip of members (name -> bytes) where target has a decoy local
    header (bytes of decoy) before its real one; the central directory names
    the real one with the decoy's CRC."""
    body, cd = b"", b""
    for name, data in members.items():
        n = name.encode()
        crc = zlib.crc32(data)
        if name == target:
            body += local(n, decoy, zlib.crc32(decoy))
            crc = zlib.crc32(decoy)
        off = len(body)
        body += local(n, data, crc)
        cd += (struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0x21, crc, len(data),
                           len(data), len(n), 0, 0, 0, 0, 0, off) + n)
    return body + cd + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(members), len(members),
                                   len(cd), len(body), 0)


def second_header(d):
    dense = struct.pack("<64f", *[1.0 + k for k in range(64)])
    sparse = struct.pack("<64f", *[1.0 if k % 12 == 0 else 0.0 for k in range(64)])
    pkl = state(w=tensor(numel=64, size=(8, 8), stride=(8, 1)))
    with open(os.path.join(d, "second_header.pt"), "wb") as f:
        f.write(two_headers({"archive/data.pkl": pkl, "archive/data/0": dense,
                             "archive/version": b"3\n"}, "archive/data/0", sparse))

    def npy(data):
        head = b"{'descr': '<f4', 'fortran_order': False, 'shape': (8, 8), }"
        head += b" " * (118 - len(head)) + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + data

    with open(os.path.join(d, "second_header.npz"), "wb") as f:
        f.write(two_headers({"w.npy": npy(dense)}, "w.npy", npy(sparse)))
    return [refuse("member with a second local header (.pt)", "second_header.pt", ["CRC"]),
            refuse("member with a second local header (.npz)", "second_header.npz", ["CRC"])]


# --- 14: what broke torch's weights_only unpickler ---
def unpickler(d):
    t = tensor()
    bad = {
        # (a) calls reached through GLOBAL / STACK_GLOBAL and REDUCE, BUILD, NEWOBJ, INST, OBJ
        "rebuild_tensor_v1": g("torch._utils", "_rebuild_tensor") + tup(persid(), i(0), tup(i(4)),
                                                                         tup(i(1))) + b"R",
        "rebuild_v2_not_storage": tensor(storage=tup(s("storage"), i(0))),
        "rebuild_v2_global_storage": tensor(storage=g("torch", "FloatStorage")),
        "odict_build_global": ODICT + b"}" + s("__class__") + g("os", "system") + b"sb",
        "odict_build_not_dict": ODICT + tup(s("__setstate__"), i(1)) + b"b",
        "dict_build": b"}}" + s("_metadata") + b"}sb",
        "tensor_build_setstate": t + b"}" + s("__setstate__") + g("builtins", "exec") + b"sb",
        "tensor_build": t + tup(persid(), i(0), tup(i(4)), tup(i(1))) + b"b",
        "stack_global_eval": b"\x8c\x08builtins\x8c\x04eval\x93" + s("1+1") + b"\x85R",
        "newobj_odict": g("collections", "OrderedDict") + b")\x81",
        "newobj_ex_odict": g("collections", "OrderedDict") + b")}\x92",
        "inst_odict": b"(icollections\nOrderedDict\n",
        "obj_odict": b"(" + g("collections", "OrderedDict") + b"o",
        "reduce_storage": g("torch", "FloatStorage") + tup(i(4)) + b"R",
        "reduce_parameter_of_int": g("torch._utils", "_rebuild_parameter") + tup(i(3)) + b"R",
        "ext1": b"\x82\x01",
        # (b) SETITEM / SETITEMS on a list, a tuple, a tensor and an int
        "setitem_list": b"]" + i(0) + t + b"s",
        "setitems_list": b"](" + i(0) + t + b"u",
        "setitem_tuple": b")" + i(0) + t + b"s",
        "setitems_tuple": tup(t) + b"(" + i(0) + t + b"u",
        "setitem_tensor": t + i(0) + t + b"s",
        "setitems_tensor": t + b"(" + i(0) + i(1) + b"u",
        "setitem_int": i(7) + i(0) + t + b"s",
        "setitems_int": i(7) + b"(" + i(0) + t + b"u",
        # (d) APPEND / APPENDS on a dict
        "append_dict": b"}" + t + b"a",
        "appends_dict": b"}(" + t + t + b"e",
    }
    out = []
    for name, value in bad.items():
        out.append(refuse("unpickler: " + name, pt(d, "u_%s.pt" % name, state(w=value))))
    # (c) a storage whose declared element count disagrees with its bytes
    for tag, numel in (("larger", 8), ("smaller", 2)):
        out.append(refuse("unpickler: storage count %s than its bytes" % tag,
                          pt(d, "u_count_%s.pt" % tag,
                             state(w=tensor(numel=numel, size=(2,)))), ["elements"]))
    return out


# --- the legacy stream's storages found by key: one scan of the pickle per key was N^2 ---
LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e"


# --- 7: a checkpoint's optimizer state, left out: its sizes still checked, its walk still bounded ---
def left_out(d):
    def ckpt(optimizer):
        return (b"\x80\x02" + ODICT + b"(" + s("model") + ODICT + b"(" + s("w") + tensor() + b"u" +
                s("optimizer") + optimizer + s("epoch") + i(3) + b"u.")

    def opt_state(t):
        return (b"}(" + s("state") + b"}(" + i(0) + b"}(" + s("momentum_buffer") + t + b"uu" +
                s("param_groups") + b"]u")

    out = [refuse("optimizer state with a size past 2^40",
                  pt(d, "left_size.pt", ckpt(opt_state(tensor(size=(1 << 41,), stride=(1,))))),
                  ["momentum_buffer", "size out of range"]),
           refuse("optimizer state whose element count wraps 64 bits",
                  pt(d, "left_numel.pt", ckpt(opt_state(tensor(size=(1 << 40, (1 << 24) + 1),
                                                               stride=(0, 0))))),
                  ["size out of range"])]
    p = b"]q\x00" + tensor() + b"a"  # the billion laughs of section 4, as training state
    for lvl in range(1, 15):
        p += b"0](" + (b"h" + bytes([lvl - 1])) * 8 + b"eq" + bytes([lvl])
    out.append(refuse("billion laughs left out as training state",
                      pt(d, "left_laughs.pt", ckpt(p)), ["shared"]))
    # read right: the model's one tensor profiled, the warning naming the buffer
    ok = pt(d, "left_ok.pt", ckpt(opt_state(tensor())))
    want = "optimizer state left out (1 tensor, 4 values: optimizer.state.*.momentum_buffer)"

    def named(r):
        m = json.loads(r.stdout)
        w = [x["message"] for x in m["warnings"] if x["code"] == "training_state"]
        return None if m["model"]["params"] == 4 and m["model"]["tensors"] == 1 and len(w) == 1 \
            and want in w[0] else "model %s, warnings %s" % (m["model"], m["warnings"])
    out.append(Case("torch: optimizer state left out, named",
                    ["analyze", ok, "--static", "--format", "json"], rc=0, check=named))
    return out


def legacy_many(d, n=40000):
    obj = b"".join(tensor(key=str(k), numel=0, size=(0,)) for k in range(n))
    keys = b"".join(s(str(k)) for k in range(n))
    with open(os.path.join(d, "legacy_many.pt"), "wb") as f:
        f.write(LEGACY_MAGIC + b"\x80\x02M\xe9\x03." + b"\x80\x02}." +
                b"\x80\x02](" + obj + b"e." + b"\x80\x02](" + keys + b"e." + b"\0" * 8 * n)
    return [Case("torch: legacy stream of 40000 storages", ["analyze", "legacy_many.pt", "--static"],
                 rc=0, seconds=5)]


def cases(d, spprof):
    return (wrapping(d) + laughs(d) + expanded(d) + second_header(d) + unpickler(d) +
            left_out(d) + legacy_many(d))
