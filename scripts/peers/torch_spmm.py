#!/usr/bin/python3
"""PyTorch as a reference peer of spprof: Y = W @ X on the CPU, timed.

usage: torch_spmm.py W.npy X.npy --threads T --budget B --out DIR

W is M x K fp32, X is K x N fp32 (.npy, C order). Two ops are timed:
  torch_csr    torch.sparse.mm(W as a CSR tensor, X): the documented sparse
               x dense product of torch.sparse (in 1.13 it and `csr @ X`
               reach the same addmm kernel for CSR; measured alike)
  torch_dense  torch.mm(W, X)
Each is warmed up twice, then the two are interleaved in rounds (the order
alternating) until B seconds are spent, at least 5 rounds; each run is one
call inside time.perf_counter_ns.

Writes DIR/y_torch_csr.npy, DIR/y_torch_dense.npy (M x N fp32) and then
DIR/result.json:
  {"torch_version", "threads", "mkldnn", "call": {op: "torch.sparse.mm", ...},
   "ops": {op: {"median_ns", "p10_ns", "p90_ns", "runs"}}}

Exit codes: 0 ok, 77 torch (or numpy) cannot be imported (one line on
stderr saying why), 2 bad input, 1 anything else (a traceback).
"""
import argparse
import json
import os
import sys
import time
import warnings

MIN_ROUNDS = 5
MAX_ROUNDS = 100000
WARMUP = 2


def fail(msg):
    print("torch_spmm: " + msg, file=sys.stderr)
    sys.exit(2)


def load(path, what):
    import numpy as np
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        fail("cannot read %s '%s': %s" % (what, path, e))
    if a.ndim != 2 or a.dtype != np.float32:
        fail("%s '%s' is %s %s, not a 2-D float32 array" % (what, path, a.dtype, a.shape))
    return np.ascontiguousarray(a)


def percentile(s, q):
    """Linear interpolation between the closest ranks of sorted s."""
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summary(times):
    s = sorted(times)
    return {"median_ns": percentile(s, 0.5), "p10_ns": percentile(s, 0.1),
            "p90_ns": percentile(s, 0.9), "runs": len(s)}


def timed(f):
    t0 = time.perf_counter_ns()
    y = f()
    return time.perf_counter_ns() - t0, y


def main():
    p = argparse.ArgumentParser(description="time torch CSR and dense matmul")
    p.add_argument("w")
    p.add_argument("x")
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--budget", type=float, required=True, help="seconds")
    p.add_argument("--out", required=True, help="output folder")
    a = p.parse_args()
    if a.threads < 1:
        fail("--threads must be at least 1")
    if not (a.budget > 0 and a.budget < 1e6):
        fail("--budget must be a positive number of seconds")
    if not os.path.isdir(a.out):
        fail("output folder '%s' does not exist" % a.out)

    try:
        import torch
        import numpy as np
    except ImportError as e:
        print("torch_spmm: cannot import torch in %s: %s" % (sys.executable, e),
              file=sys.stderr)
        sys.exit(77)

    w = load(a.w, "W")
    x = load(a.x, "X")
    if w.shape[1] != x.shape[0]:
        fail("W is %d x %d but X has %d rows" % (w.shape[0], w.shape[1], x.shape[0]))

    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")

    with torch.inference_mode():
        wd = torch.from_numpy(w)
        xd = torch.from_numpy(x)
        wc = wd.to_sparse_csr()
        ops = {
            "torch_csr": lambda: torch.sparse.mm(wc, xd),
            "torch_dense": lambda: torch.mm(wd, xd),
        }
        names = list(ops)
        ys = {}
        for name in names:
            for _ in range(WARMUP):
                ys[name] = ops[name]()
        times = {name: [] for name in names}
        start = time.perf_counter()
        rounds = 0
        while rounds < MIN_ROUNDS or (time.perf_counter() - start < a.budget
                                      and rounds < MAX_ROUNDS):
            order = names if rounds % 2 == 0 else names[::-1]
            for name in order:
                t, ys[name] = timed(ops[name])
                times[name].append(t)
            rounds += 1

    for name in names:
        y = ys[name]
        if y.layout != torch.strided:
            y = y.to_dense()
        np.save(os.path.join(a.out, "y_%s.npy" % name),
                np.ascontiguousarray(y.numpy(), dtype=np.float32))
    result = {
        "torch_version": torch.__version__,
        "threads": torch.get_num_threads(),
        "mkldnn": bool(torch.backends.mkldnn.is_available()),
        "call": {"torch_csr": "torch.sparse.mm", "torch_dense": "torch.mm"},
        "ops": {name: summary(times[name]) for name in names},
    }
    tmp = os.path.join(a.out, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(a.out, "result.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
