#!/usr/bin/env python3
"""The PyTorch loader (profiler/load_torch.c, pickle.c) against torch itself.

Files written here by Debian's python3-torch with torch.save (zip and the
legacy stream): state dicts
of Linear and Conv2d layers, every dtype the loader maps, a pruned model
(weight_orig, weight_mask), strided views, tensors sharing one storage, a
checkpoint nesting the state dict, values shared through the pickle's memo
(a state dict under two keys, a tied weight, an optimizer's betas), a
stride-0 view within the memory budget, and a big-endian copy of one file. Each
is read by spprof and by torch.load, and every tensor's shape, dtype, nnz
and layer compared. Training checkpoints ({'model': sd, 'optimizer':
opt.state_dict(), 'epoch': 3} after a step of SGD with momentum or Adam,
Lightning's layout, an optimizer's state dict alone) profile the model's
weights only, with one training_state warning naming what was left out;
a whole pickled nn.Module stays refused. A 128 MiB stored storage is read in place (peak RSS
under its size), a byte changed in it fails its CRC, and the same archive
deflated, or written with data descriptors, reads the same. Then hostile pickles inside a torch zip (os.system,
posix.system, builtins.eval through REDUCE, deep nesting, a huge memo
index, a truncated pickle) must exit 2 with one line naming the file.

    torch_check.py SPPROF        (exit 77 without torch)
"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

try:
    import torch
    import torch.nn.utils.prune as prune
except ImportError:
    print("torch_check: python3-torch missing: skipped")
    sys.exit(77)

DT = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
      torch.uint8: "U8", torch.int8: "I8", torch.int16: "I16", torch.int32: "I32",
      torch.int64: "I64", torch.bool: "BOOL"}
FAILS = []


def spprof_json(spprof, path):
    r = subprocess.run([spprof, "analyze", path, "--static", "--format", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        FAILS.append("%s: exit %d: %s" % (os.path.basename(path), r.returncode, r.stderr.strip()))
        return None
    return json.loads(r.stdout)


def flatten(obj, prefix=""):
    """name -> tensor, as the loader names them."""
    out = {}
    if isinstance(obj, torch.Tensor):
        out[prefix or "tensor"] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, "%s%s%s" % (prefix, "." if prefix else "", k)))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out.update(flatten(v, "%s%s%d" % (prefix, "." if prefix else "", i)))
    return out


def compare(spprof, path, masked=(), model=None):
    """spprof's layers and totals against torch.load's tensors: all of them, or
    those under the top-level key model (the rest left out with a warning)."""
    rep = spprof_json(spprof, path)
    if rep is None:
        return None
    name = os.path.basename(path)
    want = flatten(torch.load(path)) if model is None else flatten(torch.load(path)[model], model)
    for m in masked:  # the fold: stem = orig x mask, neither part counted
        want[m] = want.pop(m + "_orig") * want.pop(m + "_mask")
    layers = {l["name"]: l for l in rep["layers"]}
    params = sum(t.numel() for t in want.values())
    if rep["model"]["params"] != params:
        FAILS.append("%s: params %s, torch %d" % (name, rep["model"]["params"], params))
    nnz = sum(int(torch.count_nonzero(t)) for t in want.values())
    if rep["model"]["nnz"] != nnz:
        FAILS.append("%s: nnz %s, torch %d" % (name, rep["model"]["nnz"], nnz))
    for key, t in want.items():
        if t.dim() < 2 or "embed" in key:
            continue
        l = layers.get(key)
        if l is None:
            FAILS.append("%s: no layer %s" % (name, key))
            continue
        if l["shape"] != list(t.shape) or l["dtype"] != DT[t.dtype]:
            FAILS.append("%s: %s shape %s %s, torch %s %s" % (name, key, l["shape"], l["dtype"],
                                                             list(t.shape), DT[t.dtype]))
        if l["nnz"] != int(torch.count_nonzero(t)):
            FAILS.append("%s: %s nnz %s, torch %d" % (name, key, l["nnz"],
                                                     int(torch.count_nonzero(t))))
    extra = set(layers) - set(k for k, t in want.items() if t.dim() >= 2)
    if extra:
        FAILS.append("%s: layers torch does not have: %s" % (name, sorted(extra)))
    left = [w["message"] for w in rep["warnings"] if w["code"] == "training_state"]
    if (model is None) != (not left):
        FAILS.append("%s: training_state warnings %s (want %s)" % (name, left,
                                                                  "none" if model is None else "one"))
    return rep


def training(d, spprof):
    """Training checkpoints: the model's state dict profiled, the optimizer's
    state (momentum buffers, Adam's moments and steps) and the rest left out,
    named in one training_state warning (issue 46 item 2)."""
    torch.manual_seed(5)
    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))
    masks = {}
    for i in (0, 2):
        w = net[i].weight
        masks[i] = w.abs() > w.abs().flatten().kthvalue(int(0.8 * w.numel())).values
    opts = {"sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
            "adam": lambda ps: torch.optim.Adam(ps, lr=1e-3)}
    for tag, make in opts.items():
        opt = make(net.parameters())
        net(torch.randn(8, 64)).sum().backward()
        opt.step()
        with torch.no_grad():  # the pruned zeros kept, as a pruning schedule does
            for i, m in masks.items():
                net[i].weight.mul_(m)
        sd = net.state_dict()
        path = os.path.join(d, "ckpt_%s.pt" % tag)
        torch.save({"model": sd, "optimizer": opt.state_dict(), "epoch": 3}, path)
        rep = compare(spprof, path, model="model")
        if rep is None:
            continue
        params = sum(t.numel() for t in sd.values())
        nnz = sum(int(torch.count_nonzero(t)) for t in sd.values())
        name = os.path.basename(path)
        if abs(rep["model"]["sparsity"] - (1 - nnz / params)) > 1e-9 or rep["model"]["params"] != params:
            FAILS.append("%s: params %s sparsity %s, the model's %d and %.6f" % (
                name, rep["model"]["params"], rep["model"]["sparsity"], params, 1 - nnz / params))
        bad = [l["name"] for l in rep["layers"]
               if any(w in l["name"] for w in ("optimizer", "momentum_buffer", "exp_avg"))]
        if bad:
            FAILS.append("%s: optimizer state profiled as layers: %s" % (name, bad))
        held = json.dumps(rep["summary"].get("hold_back"))
        if "optimizer" in held:
            FAILS.append("%s: the optimizer state holds the model back: %s" % (name, held))
        state = opt.state_dict()["state"]
        n = sum(1 for s in state.values() for v in s.values() if torch.is_tensor(v))
        left = [w["message"] for w in rep["warnings"] if w["code"] == "training_state"]
        kind = "momentum_buffer" if tag == "sgd" else "exp_avg_sq"
        if len(left) != 1 or "optimizer state left out (%d tensors" % n not in left[0] or \
                "optimizer.state.*.%s" % kind not in left[0] or "'model' state dict" not in left[0]:
            FAILS.append("%s: want one training_state warning naming %d tensors of "
                         "optimizer.state.*.%s: %s" % (name, n, kind, left))
    # Lightning's layout: a list of optimizer states beside 'state_dict'
    path = os.path.join(d, "lightning.pt")
    torch.save({"state_dict": net.state_dict(), "optimizer_states": [opt.state_dict()],
                "lr_schedulers": [], "epoch": 3, "global_step": 10}, path)
    compare(spprof, path, model="state_dict")
    # an optimizer's state dict alone (transformers' optimizer.pt): no layers
    path = os.path.join(d, "optimizer.pt")
    torch.save(opt.state_dict(), path)
    rep = spprof_json(spprof, path)
    if rep and (rep["layers"] or rep["model"]["params"] != 0 or
                not any(w["code"] == "training_state" for w in rep["warnings"])):
        FAILS.append("optimizer.pt: %d layers, params %s, warnings %s (want none, 0, training_state)"
                     % (len(rep["layers"]), rep["model"]["params"], rep["warnings"]))
    # no model key: the optimizer state still left out, the rest profiled
    path = os.path.join(d, "no_model_key.pt")
    torch.save({"enc": net.state_dict(), "optim": opt.state_dict()}, path)
    rep = spprof_json(spprof, path)
    if rep and sorted(l["name"] for l in rep["layers"]) != ["enc.0.weight", "enc.2.weight"]:
        FAILS.append("no_model_key.pt: layers %s" % [l["name"] for l in rep["layers"]])
    # a whole pickled nn.Module stays refused: its class is a global torch.save writes for no tensor
    path = os.path.join(d, "whole_module.pt")
    torch.save(net, path)
    r = subprocess.run([spprof, "analyze", path, "--static"], capture_output=True, text=True)
    if r.returncode != 2 or "Sequential" not in r.stderr or r.stderr.count("\n") != 1:
        FAILS.append("whole_module.pt: exit %d, stderr %r (want 2 naming the class)" %
                     (r.returncode, r.stderr))


def big_endian_copy(src, dst):
    """src rewritten as a big-endian torch file: byteorder 'big', storages swapped."""
    zin = zipfile.ZipFile(src)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
        prefix = zin.namelist()[0].split("/")[0]
        for info in zin.infolist():
            data = zin.read(info.filename)
            if "/data/" in info.filename:
                w = 4  # every tensor of this file is F32
                data = b"".join(data[i:i + w][::-1] for i in range(0, len(data), w))
            z.writestr(info.filename, data)
        z.writestr(prefix + "/byteorder", "big")


def peak_rss_kib(cmd):
    """Run cmd; its exit status and peak resident set in KiB (GNU time's: a
    child forked from this process would count this process's pages too)."""
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return r.returncode, int(r.stderr.strip().splitlines()[-1])


def in_place(d, spprof):
    """Stored storages read in place: a 128 MiB tensor never costs its size in
    memory; a byte changed in a stored storage fails its CRC (exit 2, one line);
    the same archive deflated (read as copies), or written with data
    descriptors (sizes after each member), reads the same."""
    w = torch.zeros(8192, 4096)
    w[::5, ::3] = 0.25
    path = os.path.join(d, "in_place.pt")
    torch.save({"fc.weight": w}, path)
    rc, kib = peak_rss_kib([spprof, "analyze", path, "--static", "--quiet"])
    # a copy of the storage alone is 131072 KiB; read in place, 34-48 MiB were seen
    if rc != 0 or kib >= 96 * 1024:
        FAILS.append("in_place.pt (128 MiB stored): exit %d, peak RSS %d KiB (want < 96 MiB: "
                     "read in place)" % (rc, kib))
    zin = zipfile.ZipFile(path)
    info = next(i for i in zin.infolist() if "/data/" in i.filename)
    deflated = os.path.join(d, "deflated.pt")
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as z:
        for i in zin.infolist():
            z.writestr(i.filename, zin.read(i.filename))
    a, b = spprof_json(spprof, path), spprof_json(spprof, deflated)
    if a and b and [(l["name"], l["nnz"], l["pattern"]) for l in a["layers"]] != \
            [(l["name"], l["nnz"], l["pattern"]) for l in b["layers"]]:
        FAILS.append("deflated.pt: its layers differ from the stored file's")
    # written to a stream that cannot seek: each member's sizes in a data descriptor after it
    class Unseekable:
        def __init__(self, f):
            self.f = f

        def write(self, b):
            return self.f.write(b)

        def flush(self):
            self.f.flush()

    described = os.path.join(d, "descriptor.pt")
    with open(described, "wb") as out:
        with zipfile.ZipFile(Unseekable(out), "w", zipfile.ZIP_STORED) as z:
            for i in zin.infolist():
                z.writestr(i.filename, zin.read(i.filename))
    with open(described, "rb") as f:
        flagged = int.from_bytes(f.read(8)[6:8], "little") & 8
    c = spprof_json(spprof, described)
    if not flagged or (a and c and [(l["name"], l["nnz"]) for l in a["layers"]] !=
                       [(l["name"], l["nnz"]) for l in c["layers"]]):
        FAILS.append("descriptor.pt (data descriptors): flag %d, layers differ from the stored "
                     "file's" % flagged)
    # the member's data starts after its local header (30 bytes, name, extra)
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    start = info.header_offset + 30 + int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28],
                                                     "little") + \
        int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    raw[start + info.file_size // 2] ^= 0x40
    bad = os.path.join(d, "crc.pt")
    with open(bad, "wb") as f:
        f.write(raw)
    r = subprocess.run([spprof, "analyze", bad, "--static"], capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or "CRC" not in r.stderr or bad not in r.stderr or r.stderr.count("\n") != 1 \
            or r.stdout:
        FAILS.append("crc.pt: exit %d, stderr %r (want 2 and a CRC error naming the file)" %
                     (r.returncode, r.stderr))


def hostile(d, spprof):
    """Pickles that must be refused: name -> (bytes of data.pkl, text in the error)."""
    cases = {
        "os_system.pt": (b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.",
                         "os.system"),
        "posix_system.pt": (b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00true\x85R.", "posix.system"),
        "eval.pt": (b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93X\x03\x00\x00\x001+1\x85R.",
                    "builtins.eval"),
        "deep.pt": (b"\x80\x02" + b"(" * 100000 + b".", "deeper"),
        "memo.pt": (b"\x80\x02}r\xff\xff\xff\xff.", "memo index"),
        "memo_get.pt": (b"\x80\x02j\x00\x00\x00\x01.", "memo index"),
        "truncated.pt": (b"\x80\x02}q\x00X\xff\x00\x00\x00ab", "runs past"),
        "nested_lists.pt": (b"\x80\x02" + b"]" * 60000 + b"a" * 59999 + b".", "deeper"),
        "not_a_storage.pt": (b"\x80\x02(X\x07\x00\x00\x00storagecos\nsystem\n" +
                             b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ.", "os.system"),
    }
    for name, (pkl, want) in cases.items():
        path = os.path.join(d, name)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", pkl)
            z.writestr("archive/version", "3\n")
        r = subprocess.run([spprof, "analyze", path, "--static"], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 2 or want not in r.stderr or path not in r.stderr or \
                r.stderr.count("\n") != 1 or r.stdout:
            FAILS.append("%s: exit %d, stderr %r (want 2 naming %r)" % (name, r.returncode,
                                                                       r.stderr, want))


def main():
    spprof = sys.argv[1]
    torch.manual_seed(11)
    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                  torch.nn.Linear(8 * 6 * 6, 16))
        with torch.no_grad():
            net[3].weight[net[3].weight.abs() < 0.02] = 0
        torch.save(net.state_dict(), p("state.pt"))
        compare(spprof, p("state.pt"))
        dtypes = {str(dt).split(".")[1]: (torch.randn(24, 20) * 40).to(dt)
                  for dt in DT if dt != torch.bool}
        dtypes["bool"] = torch.rand(16, 12) > 0.5
        torch.save(dtypes, p("dtypes.pt"))
        compare(spprof, p("dtypes.pt"))
        prune.l1_unstructured(net[3], "weight", amount=0.7)
        torch.save(net.state_dict(), p("pruned.pt"))
        compare(spprof, p("pruned.pt"), masked=("3.weight",))
        base = torch.randn(40, 30)
        base[base.abs() < 0.5] = 0
        views = {"t": base.t(), "cols": base[:, ::3], "slice": base[10:30],
                 "shared_a": base[:20], "shared_b": base[20:]}
        torch.save(views, p("views.pt"))
        compare(spprof, p("views.pt"))
        # the legacy (pre-1.6) stream: storages read in place, views and shares alike
        torch.save(views, p("views_legacy.pt"), _use_new_zipfile_serialization=False)
        compare(spprof, p("views_legacy.pt"))
        torch.save(dtypes, p("dtypes_legacy.pt"), _use_new_zipfile_serialization=False)
        compare(spprof, p("dtypes_legacy.pt"))
        torch.save({"model": net.state_dict(), "epoch": 3, "opt": [torch.zeros(5, 5)]},
                   p("checkpoint.pt"))
        compare(spprof, p("checkpoint.pt"), masked=("model.3.weight",), model="model")
        # a sharded checkpoint, as transformers writes it: pytorch_model.bin.index.json
        sd = net.state_dict()
        keys = sorted(sd)
        half = {k: sd[k] for k in keys[: len(keys) // 2]}, {k: sd[k] for k in keys[len(keys) // 2:]}
        wmap = {}
        for i, part in enumerate(half):
            shard = "pytorch_model-%05d-of-00002.bin" % (i + 1)
            torch.save(part, p(shard))
            wmap.update({k: shard for k in part})
        with open(p("pytorch_model.bin.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": wmap}, f)
        whole = spprof_json(spprof, p("pytorch_model.bin.index.json"))
        torch.save(sd, p("unsharded.pt"))
        one = spprof_json(spprof, p("unsharded.pt"))
        if whole and one:
            strip = lambda r: sorted((l["name"], l["nnz"], l["shape"]) for l in r["layers"])
            if strip(whole) != strip(one) or whole["model"]["format"] != "pytorch":
                FAILS.append("sharded checkpoint: layers or format differ from the one file's")
        # values the pickle shares through its memo, as real checkpoints do: one state dict
        # under two keys, a tied weight twice, Adam's betas tuple in two param groups (the
        # 'model' entry profiled; the rest walked, tallied and left out)
        lin = torch.nn.Linear(16, 8)
        opt = torch.optim.Adam([{"params": [lin.weight]}, {"params": [lin.bias]}])
        lin(torch.randn(4, 16)).sum().backward()
        opt.step()
        sd = lin.state_dict()
        torch.save({"model": sd, "ema": sd, "tied": [lin.weight, lin.weight],
                    "optimizer": opt.state_dict()}, p("shared.pt"))
        compare(spprof, p("shared.pt"), model="model")
        # a stride-0 view within the budget is gathered (64 MiB)
        torch.save({"w": torch.full((1,), 0.5).expand(4096, 4096)}, p("expand.pt"))
        compare(spprof, p("expand.pt"))
        torch.save(views, p("le.pt"))
        big_endian_copy(p("le.pt"), p("be.pt"))
        le, be = spprof_json(spprof, p("le.pt")), spprof_json(spprof, p("be.pt"))
        if le and be:
            strip = lambda r: [(l["name"], l["nnz"], l["pattern"]) for l in r["layers"]]
            if strip(le) != strip(be):
                FAILS.append("big-endian file: its layers differ from the little-endian one's")
        training(d, spprof)
        in_place(d, spprof)
        hostile(d, spprof)
    for f in FAILS:
        print("FAIL", f)
    if FAILS:
        return 1
    print("torch_check: every tensor equal to torch.load's; hostile pickles refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
