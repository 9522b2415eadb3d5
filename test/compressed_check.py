#!/usr/bin/env python3
"""compressed-tensors checkpoints (profiler/compressed.c) decoded back to W.

A sparse-bitmask checkpoint as llm-compressor writes it (for each weight
"<W>.compressed" values, "<W>.bitmask" packed with numpy.packbits(axis=-1,
bitorder="little"), "<W>.shape", "<W>.row_offsets"; config.json with its
sparsity_config) is written here with numpy; spprof's layers must equal the
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


def main():
    spprof, fails = sys.argv[1], []
    rng = np.random.default_rng(9)
    dense = {"model.layers.0.mlp.up_proj.weight": rng.standard_normal((96, 70)).astype(np.float16),
             "model.layers.0.mlp.down_proj.weight": rng.standard_normal((70, 96)).astype(np.float32)}
    for w in dense.values():
        w[rng.random(w.shape) < 0.6] = 0
    dense["model.layers.0.mlp.down_proj.weight"][5] = 0  # an all-zero row
    tensors = {"model.norm.weight": np.ones(70, np.float32)}
    for name, w in dense.items():
        tensors.update({name + k: v for k, v in compress(w).items()})
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "model.safetensors")
        write_safetensors(model, tensors)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump({"quantization_config": {"sparsity_config": {"format": "sparse-bitmask"}}}, f)
        r = subprocess.run([spprof, "analyze", model, "--static", "--format", "json"],
                           capture_output=True, text=True)
        text = subprocess.run([spprof, "analyze", model, "--static"], capture_output=True,
                              text=True).stdout
        if r.returncode != 0:
            print("compressed_check: spprof exit %d: %s" % (r.returncode, r.stderr))
            return 1
        rep = json.loads(r.stdout)
        bad = dict(tensors)
        bad["model.layers.0.mlp.up_proj.weight.compressed"] = \
            tensors["model.layers.0.mlp.up_proj.weight.compressed"][:-1]
        write_safetensors(model, bad)
        rb = subprocess.run([spprof, "analyze", model, "--static"], capture_output=True, text=True)
    layers = {l["name"]: l for l in rep["layers"]}
    if sorted(layers) != sorted(dense):
        fails.append("layers %s, want %s" % (sorted(layers), sorted(dense)))
    for name, w in dense.items():
        l = layers.get(name)
        if not l:
            continue
        parts = compress(w)
        want = {"nnz": int(np.count_nonzero(w)), "shape": list(w.shape), "dtype": DTYPES[w.dtype.type],
                "zero_rows": int((~w.any(axis=1)).sum()),
                "file_storage": {"format": "sparse-bitmask",
                                 "bytes": sum(v.nbytes for v in parts.values())}}
        got = {"nnz": l["nnz"], "shape": l["shape"], "dtype": l["dtype"],
               "zero_rows": l["pattern"]["zero_rows"], "file_storage": l["file_storage"]}
        if got != want:
            fails.append("%s: %s, want %s" % (name, got, want))
        if "stored as sparse-bitmask" not in text:
            fails.append("the text report does not say how the weights are stored")
    params = sum(w.size for w in dense.values()) + 70
    if rep["model"]["params"] != params:
        fails.append("model.params %s, want %d" % (rep["model"]["params"], params))
    if rb.returncode != 2 or "more bits set than values" not in rb.stderr:
        fails.append("a bitmask with a value missing: exit %d, %r" % (rb.returncode, rb.stderr))
    for f in fails:
        print("FAIL", f)
    if fails:
        return 1
    print("compressed_check: %d sparse-bitmask weights decoded equal to the dense ones" % len(dense))
    return 0


if __name__ == "__main__":
    sys.exit(main())
