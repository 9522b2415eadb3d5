#!/usr/bin/env python3
"""--dedupe and --shard end to end (profiler/dedupe.c, shard.c).

--dedupe: repeated layers timed once.

A safetensors model holds a.weight, b.weight (a's non-zero pattern, other
values), c.weight (a's shape, another pattern), d.weight (a's pattern in
bf16-free F16, another dtype) and e.weight (a's pattern with one more
non-zero). With --dedupe only b copies a's runs (runs_copied_from "a.weight",
the same medians, the same N sweep); every other layer is timed itself. Without --dedupe no
layer has the field; --dedupe with --activations is a usage error (exit 2).

--shard: the reports of shards 0/3, 1/3 and 2/3 time disjoint sets of layers
that together are every layer, each layer in the shard its "shard" names,
layers of one work unit (a, b, e: one shape, dtype and class) in one shard;
the split is the same run after run, --shard auto reads each engine's
variables (SLURM's less its minimum, Kubernetes' with --shard-count, Open
MPI's, PMI's), and a bad spec or missing variable is a usage error.

merge: one shard's report (0/1, with breakeven and N sweeps) merges into itself
field for field (every figure derived again from the runs and sweeps read
back); the three shards merge into
a report whose layers carry each part's runs and whose static figures and
summary are an unsharded run's; a doubled or missing shard, parts of other
settings or of another model, a static report and a model that is not the
parts' are refused (exit 2) naming the part.

--resume: a run killed (SIGKILL) once its journal holds a layer, then run
again with --resume, takes the journal's layers as they were (their runs
equal the journal's, not timed again) and times the rest: every layer has
runs, no journal is left. Ctrl-C (SIGINT) writes a report marked
incomplete (exit 130) whose later layers have no runs, and keeps the
journal; --resume completes it. A torn last line is dropped; a journal of
other settings, and --resume without -o, are refused (exit 2).

    scale_check.py SPPROF        (exit 77 without numpy)
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


def run(spprof, path, *extra, env=None):
    p = subprocess.run([spprof, "analyze", path, "--format", "json", "--formats", "csr",
                        "--time-budget", "0.02", "--dense", "openblas", "--counters", "none",
                        "--quiet", *extra], capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    return p, (json.loads(p.stdout) if p.returncode == 0 and p.stdout else None)


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
        shards(spprof, path, fails)
        merges(spprof, path, tmp, fails)
        resumes(spprof, tmp, fails)
    if fails:
        print("\n".join(fails))
        sys.exit(1)
    print("scale_check: b copies a's runs, c, d and e are timed themselves; no field without "
          "--dedupe; --activations refused; 3 shards split the layers by unit and merge back; killed and interrupted runs resume")


def timed(rep):
    return {l["name"] for l in rep["layers"] if l["runs"]}


def shards(spprof, path, fails):
    """--shard I/3 for each I, then auto from each engine's variables, then refusals."""
    got, split = [], {}
    for i in range(3):
        p, rep = run(spprof, path, "--shard", f"{i}/3")
        if rep is None:
            fails.append(f"--shard {i}/3: exit {p.returncode}: {p.stderr.strip()}")
            return
        if rep["settings"]["shard"] != {"index": i, "count": 3, "source": "option"}:
            fails.append(f"--shard {i}/3: settings.shard {rep['settings']['shard']}")
        for l in rep["layers"]:
            split.setdefault(l["name"], set()).add(l["shard"])
            if bool(l["runs"]) != (l["shard"] == i):
                fails.append(f"--shard {i}/3: {l['name']} of shard {l['shard']} has "
                             f"{len(l['runs'])} runs")
        got.append(timed(rep))
    names = set(split)
    if any(len(v) != 1 for v in split.values()):
        fails.append(f"a layer's shard differs between reports: {split}")
    if sum(len(g) for g in got) != len(names) or set().union(*got) != names:
        fails.append(f"the shards' timed layers {got} are not a split of {sorted(names)}")
    unit = {split[n].copy().pop() for n in ("a.weight", "b.weight", "e.weight")}
    if len(unit) != 1:
        fails.append(f"a, b and e (one work unit) are in shards {unit}")
    again = timed(run(spprof, path, "--shard", "1/3")[1])
    if again != got[1]:
        fails.append(f"--shard 1/3 timed {again}, then {got[1]}")
    engines = [({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4",
                 "SLURM_ARRAY_TASK_COUNT": "3"}, [], "SLURM_ARRAY_TASK_ID"),
               ({"JOB_COMPLETION_INDEX": "1"}, ["--shard-count", "3"], "JOB_COMPLETION_INDEX"),
               ({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3"}, [], "OMPI_COMM_WORLD_RANK"),
               ({"PMI_RANK": "1", "PMI_SIZE": "3"}, [], "PMI_RANK")]
    for env, extra, source in engines:
        p, rep = run(spprof, path, "--shard", "auto", *extra, env=env)
        if rep is None or rep["settings"]["shard"] != {"index": 1, "count": 3, "source": source} \
                or timed(rep) != got[1]:
            fails.append(f"--shard auto with {env}: exit {p.returncode}, "
                         f"{rep and rep['settings']['shard']}, {p.stderr.strip()}")
    bad = [(["--shard", "3/3"], {}), (["--shard", "1"], {}), (["--shard", "auto"], {}),
           (["--shard", "auto"], {"JOB_COMPLETION_INDEX": "0"}),
           (["--shard", "auto"], {"PMI_RANK": "4", "PMI_SIZE": "3"}),
           (["--shard", "0/2", "--shard-count", "2"], {})]
    clean = {k: "" for e, _, _ in engines for k in e}
    for args, env in bad:
        e = {k: v for k, v in {**clean, **env}.items() if v}
        p = subprocess.run([spprof, "analyze", path, *args, "--quiet"], capture_output=True,
                           text=True, env={**{k: v for k, v in os.environ.items() if k not in clean},
                                           **e})
        if p.returncode != 2 or "--shard" not in p.stderr:
            fails.append(f"{args} with {env}: exit {p.returncode}, {p.stderr.strip()!r}")


def strip(rep):
    """rep without what a merge changes by design: when, the shard, the parts' names."""
    rep.pop("created", None)
    rep["settings"].pop("shard", None)
    rep["settings"].pop("merged_from", None)
    for l in rep["layers"]:
        l.pop("shard", None)
    return rep


def merge(spprof, parts, *extra):
    p = subprocess.run([spprof, "merge", *parts, "--format", "json", *extra],
                       capture_output=True, text=True)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def merges(spprof, path, tmp, fails):
    part = lambda i, n, *x: os.path.join(tmp, f"part{i}of{n}{''.join(x)}.json")
    for i, n, extra in [(0, 1, ["--dedupe", "--epilogue", "bias_relu", "--breakeven", "--n-sweep", "1,16"]), (0, 3, []),
                        (1, 3, []),
                        (2, 3, []), (0, 3, ["--time-budget", "0.03"]), (0, 1, ["--static"])]:
        p, _ = run(spprof, path, "--shard", f"{i}/{n}", "-o", part(i, n, *extra), *extra)
        if p.returncode:
            fails.append(f"--shard {i}/{n} {extra}: exit {p.returncode}: {p.stderr.strip()}")
            return
    one = part(0, 1, "--dedupe", "--epilogue", "bias_relu", "--breakeven", "--n-sweep", "1,16")
    p, got = merge(spprof, [one])
    with open(one) as f:
        want = json.load(f)
    if got is None or strip(got) != strip(want):
        fails.append(f"merge of one shard is not its part: {p.stderr.strip()}")
    three = [part(i, 3) for i in range(3)]
    p, got = merge(spprof, three)
    if got is None:
        fails.append(f"merge of 3 shards: exit {p.returncode}: {p.stderr.strip()}")
        return
    parts = [json.load(open(f)) for f in three]
    static = json.loads(subprocess.run([spprof, "analyze", path, "--static", "--format", "json"],
                                       capture_output=True, text=True, check=True).stdout)
    for i, l in enumerate(got["layers"]):
        src = parts[parts[0]["layers"][i]["shard"]]["layers"][i]
        if l["runs"] != src["runs"] or not l["runs"]:
            fails.append(f"merged {l['name']}: its runs are not its shard's")
        for k in ("nnz", "sparsity", "pattern", "storage", "flops"):
            if k == "flops":   # the combined FLOPs are the runs' X's
                l[k] = {f: v for f, v in l[k].items() if not f.startswith("combined")}
                static["layers"][i][k] = {f: v for f, v in static["layers"][i][k].items()
                                          if not f.startswith("combined")}
            if l[k] != static["layers"][i][k]:
                fails.append(f"merged {l['name']}.{k} differs from an unsharded scan's")
    for k in ("gemm_params", "gemm_nnz", "storage", "flops", "hold_back", "provenance"):
        if got["summary"][k] != static["summary"][k]:
            fails.append(f"merged summary.{k} differs from an unsharded scan's")
    proj = got["summary"]["projection"]
    if not proj or proj["dense_time_ns"] <= 0:
        fails.append(f"merged projection {proj}")
    if got["settings"]["shard"] is not None or got["settings"]["merged_from"] != three:
        fails.append(f"merged settings: shard {got['settings']['shard']}, "
                     f"merged_from {got['settings'].get('merged_from')}")
    other = os.path.join(tmp, "other.safetensors")
    rng = np.random.default_rng(9)
    write_safetensors(other, {"x.weight": pruned(rng, 16, 16)})
    p, _ = run(spprof, other, "--shard", "1/3", "-o", os.path.join(tmp, "other1.json"))
    bad = [([three[0], three[0], three[2]], "both shard 0"),
           (three[:2], "shard 2 of 3 is missing"),
           ([three[0], three[1], part(0, 3, "--time-budget", "0.03")], "settings.time_budget_s"),
           ([three[0], os.path.join(tmp, "other1.json"), three[2]], "parts of different models"),
           ([part(0, 1, "--static")], "not a shard's report"),
           ([os.path.join(tmp, "absent.json")], "absent.json")]
    for parts_, msg in bad:
        p, _ = merge(spprof, parts_)
        if p.returncode != 2 or msg not in p.stderr:
            fails.append(f"merge {[os.path.basename(x) for x in parts_]}: exit {p.returncode}, "
                         f"{p.stderr.strip()!r}, want 2 and {msg!r}")
    p, _ = merge(spprof, three, "--model", other)
    if p.returncode != 2 or "not the model they profiled" not in p.stderr:
        fails.append(f"merge --model OTHER: exit {p.returncode}, {p.stderr.strip()!r}")
    machines(spprof, three, tmp, got, fails)


def machines(spprof, three, tmp, same, fails):
    """Shard 1 as if timed on another CPU: the machine becomes a dimension, and compare says so."""
    moved = os.path.join(tmp, "part1-elsewhere.json")
    with open(three[1]) as f:
        rep = json.load(f)
    rep["machine"]["cpu"] = "Other CPU 9000"
    with open(moved, "w") as f:
        json.dump(rep, f)
    p, got = merge(spprof, [three[0], moved, three[2]])
    if got is None or len(got.get("machines", [])) != 2 or \
            got["machines"][1]["cpu"] != "Other CPU 9000" or got["machine"] != got["machines"][0]:
        fails.append(f"merge across machines: exit {p.returncode}, machines "
                     f"{[m.get('cpu') for m in (got or {}).get('machines', [])]}")
        return
    for l in got["layers"]:
        if l["runs"] and l.get("machine") != (1 if l.get("name") in {x["name"] for x in rep["layers"]
                                                                     if x["shard"] == 1} else 0):
            fails.append(f"merge across machines: {l['name']} has machine {l.get('machine')}")
    if "machines" in same or any("machine" in l for l in same["layers"]):
        fails.append("merge on one machine: it has machines or layers[].machine")
    text = subprocess.run([spprof, "merge", three[0], moved, three[2]], capture_output=True, text=True)
    if "machines  [0]" not in text.stdout or "[1] Other CPU 9000" not in text.stdout:
        fails.append("merge across machines: the text report does not list the machines")
    cmp = subprocess.run([spprof, "compare", three[0], moved, "--format", "json"],
                         capture_output=True, text=True)
    c = json.loads(cmp.stdout) if cmp.returncode == 0 else {}
    if c.get("same_machine") is not False or "Other CPU 9000" not in (c.get("new") or {}).get("machine", ""):
        fails.append(f"compare across machines: same_machine {c.get('same_machine')}")
    cmp = subprocess.run([spprof, "compare", three[0], moved], capture_output=True, text=True)
    if "machines differ" not in cmp.stdout:
        fails.append("compare across machines: the text does not say the machines differ")
    cmp = subprocess.run([spprof, "compare", three[0], three[1], "--format", "json"],
                         capture_output=True, text=True)
    if json.loads(cmp.stdout).get("same_machine") is not True:
        fails.append("compare on one machine: same_machine is not true")


def journal_layers(path):
    """The layer lines of a journal (the header aside), or [] while there is none."""
    try:
        with open(path) as f:
            lines = [json.loads(x) for x in f.read().splitlines()[1:] if x.endswith("}")]
    except (OSError, ValueError):
        return []
    return lines


def stopped(spprof, model, out, sig, *extra):
    """analyze model -o out, sent sig once its journal holds a layer: (exit status, journal lines)."""
    import signal
    import time
    p = subprocess.Popen([spprof, "analyze", model, "--formats", "csr", "--time-budget", "0.25",
                          "--counters", "none", "--dense", "openblas", "--quiet", "-o", out, *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not journal_layers(out + ".journal") and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal({"kill": signal.SIGKILL, "int": signal.SIGINT}[sig])
    p.wait()
    return p.returncode, journal_layers(out + ".journal")


def resumes(spprof, tmp, fails):
    rng = np.random.default_rng(3)
    model = os.path.join(tmp, "twelve.safetensors")
    write_safetensors(model, {f"l{i}.weight": pruned(rng, 96, 128 + 16 * i) for i in range(12)})
    out = os.path.join(tmp, "resumed.json")
    args = ["--formats", "csr", "--time-budget", "0.25", "--counters", "none", "--dense",
            "openblas", "--quiet", "-o", out]
    rc, done = stopped(spprof, model, out, "kill")
    if rc != -9 or not done or len(done) == 12:
        fails.append(f"kill: exit {rc}, {len(done)} journal layers (want some, not all)")
        return
    with open(out + ".journal", "a") as f:
        f.write('{"layer": 11, "name": "l11.weig')   # torn by the kill
    p = subprocess.run([spprof, "analyze", model, *args, "--resume"], capture_output=True, text=True)
    rep = json.load(open(out)) if p.returncode == 0 else None
    if rep is None or any(not l["runs"] for l in rep["layers"]) or os.path.exists(out + ".journal"):
        fails.append(f"--resume after a kill: exit {p.returncode}, {p.stderr.strip()}")
        return
    for line in done:
        if rep["layers"][line["layer"]]["runs"] != line["runs"]:
            fails.append(f"--resume: layer {line['name']}'s runs are not its journal's")
    if "incomplete" in rep:
        fails.append("--resume: the completed report is marked incomplete")
    rc, done = stopped(spprof, model, out, "int")
    part = json.load(open(out)) if rc == 130 else {}
    if rc != 130 or part.get("incomplete") is not True or \
            not any(l["runs"] for l in part["layers"]) or all(l["runs"] for l in part["layers"]) or \
            not os.path.exists(out + ".journal"):
        fails.append(f"Ctrl-C: exit {rc}, incomplete {part.get('incomplete')}, journal "
                     f"{os.path.exists(out + '.journal')}")
        return
    bad = subprocess.run([spprof, "analyze", model, *args[:3], "0.3", *args[4:], "--resume"],
                         capture_output=True, text=True)
    if bad.returncode != 2 or ".journal" not in bad.stderr:
        fails.append(f"--resume with other settings: exit {bad.returncode}, {bad.stderr.strip()!r}")
    p = subprocess.run([spprof, "analyze", model, *args, "--resume"], capture_output=True, text=True)
    rep = json.load(open(out)) if p.returncode == 0 else {}
    if p.returncode or "incomplete" in rep or any(not l["runs"] for l in rep["layers"]):
        fails.append(f"--resume after Ctrl-C: exit {p.returncode}, {p.stderr.strip()}")
    p = subprocess.run([spprof, "analyze", model, "--resume", "--quiet"], capture_output=True, text=True)
    if p.returncode != 2 or "-o" not in p.stderr:
        fails.append(f"--resume without -o: exit {p.returncode}, {p.stderr.strip()!r}")


main()
