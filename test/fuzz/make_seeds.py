#!/usr/bin/env python3
"""The seed corpora of fuzz_journal and fuzz_merge, made by the spprof binary
from the harnesses' model (fuzz_model.h, written here byte for byte):
journal layer lines (the harness writes the header line of its own
analysis before them; a seed starting with 'H' is a whole journal, its
header included) and report parts of --shard 0/1, 0/2 and 1/2 (a merge
input is its parts joined by "\\n\\f\\n").

    make_seeds.py SPPROF          writes test/fuzz/corpus/{journal,merge}/
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

M, K = [32, 48, 64], 48
RUN = ["--time-budget", "0.01", "--formats", "csr,bsr4", "--counters", "none", "--dense",
       "openblas", "--quiet", "--format", "json"]


def w(layer, i, j):
    return ((i + j) % 11 - 5) * 0.125 if (i * 7 + j * 3 + layer) % 5 == 0 else 0.0


def write_model(path):
    parts, off = [], 0
    for l, m in enumerate(M):
        b = m * K * 4
        parts.append('%s"l%d.weight": {"dtype": "F32", "shape": [%d, %d], "data_offsets": [%d, %d]}'
                     % (", " if l else "", l, m, K, off, off + b))
        off += b
    h = ("{" + "".join(parts) + "}").encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for l, m in enumerate(M):
            f.write(struct.pack("<%df" % (m * K), *[w(l, i, j) for i in range(m) for j in range(K)]))


def journal_line(i, l):
    return {"layer": i, "name": l["name"], "m": l["m"], "k": l["k"], "n": l["n"],
            "runs": l["runs"], "dense_candidates": l["dense_candidates"],
            "flops": {"combined": None, "combined_speedup": None},
            "activations": l.get("activations")}


def main():
    spprof = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "model.safetensors")
        write_model(model)

        def run(*extra):
            p = subprocess.run([spprof, "analyze", model, *RUN, *extra], capture_output=True,
                               text=True, check=True)
            return json.loads(p.stdout)
        rep = run()
        parts = {s: json.dumps(run("--shard", s)) for s in ("0/1", "0/2", "1/2")}
    jdir, mdir = os.path.join(here, "corpus", "journal"), os.path.join(here, "corpus", "merge")
    os.makedirs(jdir, exist_ok=True)
    os.makedirs(mdir, exist_ok=True)
    lines = [json.dumps(journal_line(i, l)) + "\n" for i, l in enumerate(rep["layers"])]
    seeds = {"all_layers": "".join(lines), "first_layer": lines[0],
             "torn_last": "".join(lines[:2]) + lines[2][:40],
             "whole": "H" + json.dumps({"schema": "spprof.journal/1",
                                        "model_hash": rep["model"]["hash"]["value"],
                                        "settings": rep["settings"]}) + "\n" + "".join(lines)}
    for name, text in seeds.items():
        with open(os.path.join(jdir, name), "w") as f:
            f.write(text)
    for name, text in {"one_shard": parts["0/1"],
                       "two_shards": parts["0/2"] + "\n\f\n" + parts["1/2"],
                       "two_shards_swapped": parts["1/2"] + "\n\f\n" + parts["0/2"]}.items():
        with open(os.path.join(mdir, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
