#!/usr/bin/env python3
"""compressed-tensors checkpoints (profiler/compressed.c) decoded back to W.

A sparse-bitmask checkpoint as llm-compressor writes it (for each weight
"<W>.compressed" values, "<W>.bitmask" packed with numpy.packbits(axis=-1,
bitorder="little"), "<W>.shape", "<W>.row_offsets"; config.json with its
sparsity_config), and a sparse-24-bitmask one ("<P>.compressed" as
[rows, cols / 2] of the two largest of every four, "<P>.bitmask", "<P>.shape"
as a column, for the weight "<P>.weight") are written here with numpy; spprof's layers must equal the
dense weights figure by figure, with the file's own bytes reported, and a
bitmask that disagrees with its values refused with exit 2.

    compressed_check.py SPPROF        (exit 77 without numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("compressed_check: numpy missing: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_writer import DTYPES, write_safetensors  # noqa: E402



def compress(w):
    mask = w != 0
    counts = mask.sum(axis=-1)
    return {".compressed": w[mask], ".bitmask": np.packbits(mask, axis=-1, bitorder="little"),
            ".shape": np.array(w.shape, np.int64),
            ".row_offsets": (np.cumsum(counts) - counts).astype(np.int64)}


def keep24(w):
    """The mask llm-compressor's sparse-24-bitmask keeps: the two largest |w| of every 4."""
    groups = np.abs(w).reshape(-1, 4)
    mask = np.zeros(groups.shape, bool)
    np.put_along_axis(mask, np.argsort(-groups, axis=1, kind="stable")[:, :2], True, axis=1)
    return mask.reshape(w.shape)


def compress24(w):
    mask = keep24(w)
    return {".compressed": w[mask].reshape(w.shape[0], w.shape[1] // 2),
            ".bitmask": np.packbits(mask, axis=-1, bitorder="little"),
            ".shape": np.array(w.shape, np.int64).reshape(-1, 1)}


# One row per format: how a weight's parts are named and packed.
FORMATS = {"sparse-bitmask": (compress, lambda name: name),
           "sparse-24-bitmask": (compress24, lambda name: name[:-len(".weight")])}


def run_case(spprof, fmt, dense, fails):
    """Write dense compressed in fmt, profile it; return (report, text, exit of a damaged file)."""
    pack, prefix = FORMATS[fmt]
    tensors = {"model.norm.weight": np.ones(70, np.float32)}
    for name, w in dense.items():
        tensors.update({prefix(name) + k: v for k, v in pack(w).items()})
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "model.safetensors")
        write_safetensors(model, tensors)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"quantization_config": {"sparsity_config": {"format": fmt}}}, f)
        r = subprocess.run([spprof, "analyze", model, "--static", "--format", "json"],
                           capture_output=True, text=True)
        text = subprocess.run([spprof, "analyze", model, "--static"], capture_output=True,
                              text=True).stdout
        if r.returncode != 0:
            fails.append("%s: spprof exit %d: %s" % (fmt, r.returncode, r.stderr))
            return
        rep = json.loads(r.stdout)
        first = prefix(next(iter(dense))) + ".compressed"
        bad = dict(tensors)
        bad[first] = tensors[first].reshape(-1)[:-1]
        write_safetensors(model, bad)
        rb = subprocess.run([spprof, "analyze", model, "--static"], capture_output=True, text=True)
    layers = {l["name"]: l for l in rep["layers"]}
    if sorted(layers) != sorted(dense):
        fails.append("%s: layers %s, want %s" % (fmt, sorted(layers), sorted(dense)))
    for name, w in dense.items():
        l = layers.get(name)
        if not l:
            continue
        parts = pack(w)
        want = {"nnz": int(np.count_nonzero(w)), "shape": list(w.shape), "dtype": DTYPES[w.dtype.type],
                "zero_rows": int((~w.any(axis=1)).sum()),
                "file_storage": {"format": fmt, "bytes": sum(v.nbytes for v in parts.values())}}
        got = {"nnz": l["nnz"], "shape": l["shape"], "dtype": l["dtype"],
               "zero_rows": l["pattern"]["zero_rows"], "file_storage": l["file_storage"]}
        if fmt == "sparse-24-bitmask":
            want["nm2_4"], got["nm2_4"] = 1.0, l["pattern"]["nm2_4"]
        if got != want:
            fails.append("%s: %s, want %s" % (name, got, want))
    if "stored as " + fmt not in text:
        fails.append("%s: the text report does not say how the weights are stored" % fmt)
    params = sum(w.size for w in dense.values()) + 70
    if rep["model"]["params"] != params:
        fails.append("%s: model.params %s, want %d" % (fmt, rep["model"]["params"], params))
    if rb.returncode != 2 or "compressed" not in rb.stderr:
        fails.append("%s: a value missing: exit %d, %r" % (fmt, rb.returncode, rb.stderr))
    return rb.stderr


def main():
    spprof, fails = sys.argv[1], []
    rng = np.random.default_rng(9)
    dense = {"model.layers.0.mlp.up_proj.weight": rng.standard_normal((96, 70)).astype(np.float16),
             "model.layers.0.mlp.down_proj.weight": rng.standard_normal((70, 96)).astype(np.float32)}
    for w in dense.values():
        w[rng.random(w.shape) < 0.6] = 0
    dense["model.layers.0.mlp.down_proj.weight"][5] = 0  # an all-zero row
    err = run_case(spprof, "sparse-bitmask", dense, fails)
    if err is not None and "more bits set than values" not in err:
        fails.append("sparse-bitmask: a value missing: %r" % err)
    dense24 = {"model.layers.0.self_attn.q_proj.weight":
               rng.standard_normal((64, 96)).astype(np.float16),
               "model.layers.0.self_attn.o_proj.weight":
               rng.standard_normal((96, 64)).astype(np.float32)}
    dense24["model.layers.0.self_attn.o_proj.weight"][3, :40] = 0  # groups keeping zeros
    for w in dense24.values():
        w[~keep24(w)] = 0
    run_case(spprof, "sparse-24-bitmask", dense24, fails)
    for f in fails:
        print("FAIL", f)
    if fails:
        return 1
    print("compressed_check: %d sparse-bitmask and %d sparse-24-bitmask weights decoded equal "
          "to the dense ones" % (len(dense), len(dense24)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
