#!/usr/bin/env python3
"""A folder given as the model (profiler/loaders_dir.c), end to end.

A TF.js folder (a layers model's .json and its .bin shards, named as
face-api and TF.js users name them, not model.json), a Hugging Face folder
(two safetensors shards, their index, config.json and tokenizer.json
beside them), a folder of one model file: each is read as its one model,
which the report names. Two models, none, and a link to a model outside
the folder are refused with one line and exit 2.

    folder_check.py SPPROF        (exit 77 without numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("folder_check: numpy missing: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_writer import write_safetensors  # noqa: E402
from tfjs_check import layers_model  # noqa: E402


def analyze(spprof, path):
    r = subprocess.run([spprof, "analyze", path, "--static", "--format", "json"],
                       capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


def main():
    spprof, fails = sys.argv[1], []
    rng = np.random.default_rng(7)

    def expect_model(what, folder, file, params):
        rc, rep, err = analyze(spprof, folder)
        if rc != 0:
            fails.append("%s: exit %d: %s" % (what, rc, err.strip()))
            return
        if os.path.basename(rep["model"]["path"]) != file:
            fails.append("%s: read %r, want %r" % (what, rep["model"]["path"], file))
        if rep["model"]["params"] != params:
            fails.append("%s: params %s, want %d" % (what, rep["model"]["params"], params))

    def expect_refusal(what, folder, says):
        rc, _, err = analyze(spprof, folder)
        if rc != 2 or len(err.strip().splitlines()) != 1 or says not in err:
            fails.append("%s: exit %d, %r (want exit 2 saying %r)" % (what, rc, err, says))

    with tempfile.TemporaryDirectory() as tmp:
        # TF.js: age.json-like (not model.json) with its shards
        tj = os.path.join(tmp, "tfjs")
        os.mkdir(tj)
        path, want, _ = layers_model(tj)
        expect_model("TF.js folder", tj, os.path.basename(path),
                     sum(int(np.prod(w[1].shape)) for w in want.values()) + 6)
        # Hugging Face: shards, index, config and tokenizer files
        hf = os.path.join(tmp, "hf")
        os.mkdir(hf)
        a, b = rng.standard_normal((32, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
        write_safetensors(os.path.join(hf, "model-00001-of-00002.safetensors"), {"a.weight": a})
        write_safetensors(os.path.join(hf, "model-00002-of-00002.safetensors"), {"b.weight": b})
        with open(os.path.join(hf, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors",
                                                     "b.weight": "model-00002-of-00002.safetensors"}}, f)
        for name in ("config.json", "tokenizer.json", "generation_config.json"):
            with open(os.path.join(hf, name), "w") as f:
                json.dump({"hidden_size": 32}, f)
        expect_model("Hugging Face folder", hf, "model.safetensors.index.json", 1024)
        # one model file beside a config
        one = os.path.join(tmp, "one")
        os.mkdir(one)
        write_safetensors(os.path.join(one, "model.safetensors"), {"a.weight": a})
        with open(os.path.join(one, "config.json"), "w") as f:
            f.write("{}")
        expect_model("one model file", one, "model.safetensors", 512)
        # two models: named, not guessed
        write_safetensors(os.path.join(one, "other.safetensors"), {"b.weight": b})
        expect_refusal("two models", one, "the folder holds 2 models")
        # none: a config alone, and a link to a model outside the folder
        none = os.path.join(tmp, "none")
        os.mkdir(none)
        with open(os.path.join(none, "config.json"), "w") as f:
            f.write("{}")
        os.symlink(os.path.join(hf, "model-00001-of-00002.safetensors"), os.path.join(none, "x.safetensors"))
        expect_refusal("no model, a link out", none, "a folder holding no model")
    for f in fails:
        print("FAIL", f)
    if fails:
        return 1
    print("folder_check: TF.js, Hugging Face and one-file folders read as their one model; "
          "ambiguous and empty folders refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
