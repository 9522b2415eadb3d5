#!/usr/bin/env python3
"""--dedupe end to end (profiler/dedupe.c): repeated layers timed once.

A safetensors model holds a.weight, b.weight (a's non-zero pattern, other
values), c.weight (a's shape, another pattern), d.weight (a's pattern in
bf16-free F16, another dtype) and e.weight (a's pattern with one more
non-zero). With --dedupe only b copies a's runs (runs_copied_from "a.weight",
the same medians, the same N sweep); every other layer is timed itself. Without --dedupe no
layer has the field; --dedupe with --activations is a usage error (exit 2).

    dedupe_check.py SPPROF        (exit 77 without numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("dedupe_check: numpy missing: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_common import pruned  # noqa: E402
from st_writer import write_safetensors  # noqa: E402


def run(spprof, path, *extra):
    p = subprocess.run([spprof, "analyze", path, "--format", "json", "--formats", "csr",
                        "--time-budget", "0.02", "--dense", "openblas", "--counters", "none",
                        "--quiet", *extra], capture_output=True, text=True)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def main():
    spprof = sys.argv[1]
    rng = np.random.default_rng(5)
    fails = []
    a = pruned(rng, 48, 80)
    b = np.where(a != 0, rng.standard_normal(a.shape).astype(np.float32) + 3, 0).astype(np.float32)
    c = pruned(rng, 48, 80)
    e = a.copy()
    e[0, 0] = 1.5   # row 0 of a is all zero: one more non-zero
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "repeated.safetensors")
        write_safetensors(path, {"a.weight": a, "b.weight": b, "c.weight": c,
                                 "d.weight": a.astype(np.float16), "e.weight": e})
        p, rep = run(spprof, path, "--dedupe", "--n-sweep", "1,16")
        if rep is None:
            print(f"dedupe_check: --dedupe: exit {p.returncode}: {p.stderr.strip()}")
            sys.exit(1)
        layers = {l["name"]: l for l in rep["layers"]}
        want = {"a.weight": None, "b.weight": "a.weight", "c.weight": None,
                "d.weight": None, "e.weight": None}
        for name, src in want.items():
            got = layers[name].get("runs_copied_from", "absent")
            if got != src:
                fails.append(f"{name}: runs_copied_from {got!r}, want {src!r}")
        med = {n: [(r["time_ns"] or {}).get("median") for r in l["runs"]] for n, l in layers.items()}
        if med["b.weight"] != med["a.weight"]:
            fails.append(f"b.weight's medians {med['b.weight']} are not a.weight's {med['a.weight']}")
        if layers["b.weight"]["n_sweep"] != layers["a.weight"]["n_sweep"] or \
                layers["c.weight"]["n_sweep"] == layers["a.weight"]["n_sweep"]:
            fails.append("--n-sweep: b.weight's sweep is not a.weight's, or c.weight's is")
        if not layers["b.weight"]["runs"] or layers["b.weight"]["runs"][0]["format"] != "dense":
            fails.append("b.weight: no dense run copied")
        p, rep = run(spprof, path)
        if rep is None or any("runs_copied_from" in l for l in rep["layers"]):
            fails.append("without --dedupe: a layer has runs_copied_from (or the run failed)")
        p, _ = run(spprof, path, "--dedupe", "--activations", tmp)
        if p.returncode != 2 or "--dedupe" not in p.stderr:
            fails.append(f"--dedupe --activations: exit {p.returncode}, {p.stderr.strip()!r}")
    if fails:
        print("\n".join(fails))
        sys.exit(1)
    print("dedupe_check: b copies a's runs, c, d and e are timed themselves; no field without "
          "--dedupe; --activations refused")


main()
