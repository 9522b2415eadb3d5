#!/usr/bin/env python3
"""MPI mode of analyze (cmd/cmd_mpi.c) with 2 ranks on this host.

`mpirun -n 2 spprof analyze MODEL -o R` profiles shard I of 2 on rank I and
rank 0 writes one report: every layer timed by the rank of its shard (its
runs those of `--shard I/2` alone would have, in count and formats),
settings.merged_from naming both ranks, no shard left in the settings. A
rank that fails (here rank 1, whose first layer's --activations file is
not a .npy) is named in a shard_failed warning and its layers have no
runs, while rank 0's layers are kept.

    mpi_check.py SPPROF        (exit 77 without mpirun, numpy or an MPI build)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("mpi_check: numpy missing: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_common import pruned  # noqa: E402
from st_writer import write_safetensors  # noqa: E402

MPIRUN = shutil.which("mpirun")


def mpirun(spprof, *args):
    # Open MPI's own allocations (its MCA components, dlclose'd) are not freed at exit: in a
    # sanitizer build LeakSanitizer would fail every rank on them, so leaks go unchecked under
    # mpirun (the merge and shard code it runs is leak-checked by scale-check without it)
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS"), "detect_leaks=0") if x)
    return subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-x", "ASAN_OPTIONS",
                           "-n", "2", spprof, "analyze", *args], capture_output=True, text=True,
                          timeout=600, env=env)


def main():
    spprof = sys.argv[1]
    if not MPIRUN:
        print("mpi_check: mpirun missing (Debian openmpi-bin): skipped")
        sys.exit(77)
    fails = []
    rng = np.random.default_rng(11)
    common = ["--formats", "csr", "--time-budget", "0.02", "--counters", "none", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m.safetensors")
        write_safetensors(model, {f"l{i}.weight": pruned(rng, 32 + 8 * i, 64) for i in range(8)})
        out = os.path.join(tmp, "r.json")
        p = mpirun(spprof, model, *common, "-o", out)
        if p.returncode or not os.path.exists(out):
            print(f"mpi_check: mpirun: exit {p.returncode}: {p.stderr.strip()[-500:]}")
            sys.exit(1)
        rep = json.load(open(out))
        if "merged_from" not in rep["settings"]:
            print("mpi_check: spprof is built without MPI (-Dmpi): skipped")
            sys.exit(77)
        if rep["settings"]["merged_from"] != ["MPI rank 0 of 2", "MPI rank 1 of 2"] or \
                rep["settings"]["shard"] is not None:
            fails.append(f"settings: merged_from {rep['settings']['merged_from']}, "
                         f"shard {rep['settings']['shard']}")
        shard1 = []
        for i in (0, 1):
            alone = json.loads(subprocess.run([spprof, "analyze", model, *common, "--shard", f"{i}/2",
                                               "--format", "json"], capture_output=True, text=True,
                                              check=True).stdout)
            for l, m in zip(alone["layers"], rep["layers"]):
                if l["shard"] != i:
                    continue
                if i == 1:
                    shard1.append(l["name"])
                if [r["format"] for r in l["runs"]] != [r["format"] for r in m["runs"]] or \
                        not m["runs"]:
                    fails.append(f"{m['name']}: runs {[r['format'] for r in m['runs']]}, "
                                 f"alone {[r['format'] for r in l['runs']]}")
        if not shard1 or len(shard1) == len(rep["layers"]):
            fails.append(f"shard 1 holds {shard1}: the test needs layers on both ranks")
        else:
            act = os.path.join(tmp, "act")
            os.mkdir(act)
            with open(os.path.join(act, re.sub(r"[^A-Za-z0-9._-]", "_", shard1[0]) + ".npy"), "wb") as f:
                f.write(b"not a numpy file")
            p = mpirun(spprof, model, *common, "--activations", act, "-o", out)
            rep = json.load(open(out)) if os.path.exists(out) else None
            warn = [w["message"] for w in (rep or {}).get("warnings", []) if w["code"] == "shard_failed"]
            if not rep or len(warn) != 1 or "rank 1" not in warn[0]:
                fails.append(f"a failing rank: exit {p.returncode}, warnings {warn}, "
                             f"{p.stderr.strip()[-300:]}")
            else:
                for l in rep["layers"]:
                    if bool(l["runs"]) == (l["name"] in shard1):
                        fails.append(f"a failing rank: {l['name']} has {len(l['runs'])} runs")
    if fails:
        print("\n".join(fails))
        sys.exit(1)
    print(f"mpi_check: 2 ranks profile their shards into one report; a failing rank is named "
          f"and the other's {8 - len(shard1)} layers kept")


main()
