#!/usr/bin/env python3
"""Pruning masks folded into their weights (profiler/masks.c), end to end.

A model pruned with torch.nn.utils.prune (weight_orig, weight_mask) and one
whose mask sits beside its weight are written as safetensors from their
state dicts; spprof's layers must be the effective weights orig x mask,
counted figure by figure against torch's own product, with the mask named
in the report, and neither the mask nor the _orig counted as a layer or
twice in the totals.

    masks_check.py SPPROF        (exit 77 without torch and numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.utils.prune as prune
except ImportError:
    print("masks_check: python3-torch or numpy missing: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_writer import write_safetensors  # noqa: E402



def analyze(spprof, model, *extra):
    r = subprocess.run([spprof, "analyze", model, "--static", *extra], capture_output=True,
                       text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    spprof, fails = sys.argv[1], []
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(64, 48), torch.nn.ReLU(), torch.nn.Linear(48, 32))
    prune.l1_unstructured(net[0], "weight", amount=0.6)
    prune.random_unstructured(net[2], "weight", amount=0.3)
    sd = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    want = {"0.weight": (net[0].weight.detach().numpy(), "0.weight_orig", "0.weight_mask"),
            "2.weight": (net[2].weight.detach().numpy(), "2.weight_orig", "2.weight_mask")}
    # a mask beside its weight, in another dtype (U8), and a weight in F16
    w = np.random.default_rng(5).standard_normal((40, 24)).astype(np.float16)
    mask = (np.random.default_rng(6).random((40, 24)) > 0.5).astype(np.uint8)
    sd["side.weight"], sd["side.weight_mask"] = w, mask
    want["side.weight"] = (w * mask, None, "side.weight_mask")
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "pruned.safetensors")
        write_safetensors(model, sd)
        rc, out, err = analyze(spprof, model, "--format", "json")
        if rc != 0:
            print("masks_check: spprof exit %d: %s" % (rc, err))
            return 1
        rep = json.loads(out)
        rc, text, _ = analyze(spprof, model)
        bad = dict(sd)
        bad["side.weight_mask"] = np.ones((40, 25), np.uint8)
        write_safetensors(model, bad)
        rc_bad, _, err_bad = analyze(spprof, model)
    layers = {l["name"]: l for l in rep["layers"]}
    # the file's order, the folded weights in their originals' places (the pruned ones came last)
    order = [l["name"] for l in rep["layers"]]
    if order != ["0.weight", "2.weight", "side.weight"]:
        fails.append("layer order %s, want the file's: 0.weight, 2.weight, side.weight" % order)
    if sorted(layers) != sorted(want):
        fails.append("layers %s, want %s" % (sorted(layers), sorted(want)))
    for name, (eff, orig, mtensor) in want.items():
        l = layers.get(name)
        if not l:
            continue
        nnz = int(np.count_nonzero(eff))
        if l["nnz"] != nnz:
            fails.append("%s: nnz %s, torch %d" % (name, l["nnz"], nnz))
        if l["mask"] != {"tensor": mtensor, "orig": orig}:
            fails.append("%s: mask %r" % (name, l["mask"]))
        if [l["m"], l["k"]] != list(eff.shape):
            fails.append("%s: shape %s" % (name, [l["m"], l["k"]]))
        if "the effective weight" not in text or mtensor not in text:
            fails.append("%s: the text report does not name its mask" % name)
    # l1_unstructured keeps the largest: a magnitude mask; random_unstructured a random one
    verdict = {n: layers[n]["pattern"]["provenance"]["verdict"] for n in layers}
    if verdict.get("0.weight") != "magnitude-like":
        fails.append("0.weight (l1_unstructured): %r" % verdict.get("0.weight"))
    if verdict.get("2.weight") == "magnitude-like":
        fails.append("2.weight (random_unstructured) judged magnitude-like")
    params = sum(e.size for e, _, _ in want.values()) + sd["0.bias"].size + sd["2.bias"].size
    if rep["model"]["params"] != params:
        fails.append("model.params %s, want %d (masks and _orig once)" % (rep["model"]["params"], params))
    if rep["model"]["tensors"] != 5:
        fails.append("model.tensors %s, want 5" % rep["model"]["tensors"])
    if rc_bad != 2 or "side.weight_mask" not in err_bad or "shape" not in err_bad:
        fails.append("a mask of another shape: exit %d, %r" % (rc_bad, err_bad))
    # ln_structured (whole output channels by their L2 norm): a structured verdict, not
    # "random-like", and the advice to remove the dead channels (issue 46 item 5)
    conv = torch.nn.Conv2d(16, 24, 3)
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    prune.remove(conv, "weight")
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "channels.safetensors")
        write_safetensors(model, {"conv.weight": conv.weight.detach().numpy()})
        rc, out, err = analyze(spprof, model, "--format", "json")
        rep = json.loads(out) if rc == 0 else {"layers": [{}]}
    l = rep["layers"][0]
    v = l.get("pattern", {}).get("provenance", {}).get("verdict")
    if v != "structured":
        fails.append("conv.weight (ln_structured): verdict %r, want structured" % v)
    if "remove the 12 zero output rows: the layer becomes 12x144 and dense" not in (l.get("diagnosis") or ""):
        fails.append("conv.weight (ln_structured): no shrink advice in %r" % l.get("diagnosis"))
    for f in fails:
        print("FAIL", f)
    if fails:
        return 1
    print("masks_check: %d masked layers, every figure equal to torch's orig x mask" % len(want))
    return 0


if __name__ == "__main__":
    sys.exit(main())
