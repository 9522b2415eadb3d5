"""The journal, merge and report readers against crafted files (issue 43,
items 2, 3, 11, 12 and 13): every renderer given the extremes the schema
allows (1e308, -1e308, integers past 2^63, 64 KiB strings in every field);
the journal beside -o as a symbolic link, a FIFO, the model itself and a
directory; --resume given a journal line with a forged speedup and a
journal of 8 GiB without a newline; merge given a part with its layers
reordered, a negative time and a forged speedup; a report of 5,200 runs
with a key of their own each to CSV; and the temporary file of -o under
SIGHUP, SIGQUIT, SIGPIPE and SIGXFSZ. The reports and parts mutated here
are the binary's own, of a four-layer model written here."""
import json
import os
import random
import resource
import signal
import subprocess
import time

from crafted_check import Case

RUN = ["--time-budget", "0.01", "--formats", "csr", "--counters", "none", "--dense", "openblas",
       "--quiet"]


def write_model(path):
    """Four pruned fp32 layers of other shapes (two shards' worth of work units)."""
    import numpy as np  # setup installs it; imported here so the runner starts without
    from st_writer import write_safetensors

    rng = random.Random(43)
    tensors = {}
    for i in range(4):
        m, k = 32 + 16 * i, 48
        vals = [rng.uniform(-1, 1) if rng.random() < 0.3 else 0.0 for _ in range(m * k)]
        tensors["l%d.weight" % i] = np.array(vals, dtype=np.float32).reshape(m, k)
    write_safetensors(path, tensors)


def analyze(spprof, d, *extra):
    subprocess.run([spprof, "analyze", "model.safetensors", *RUN, "--format", "json", *extra],
                   cwd=d, check=True, capture_output=True)


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def dump(d, name, obj):
    with open(os.path.join(d, name), "w") as f:
        json.dump(obj, f)


def mapped(v, num, text, key=""):
    """v with every number through num and every string through text (keys kept); a time
    stays positive (a negative one is refused on load) and each CPU run's speedup stays what
    its times give (one that is not is refused on load), so that the renderers get the rest."""
    if isinstance(v, dict):
        out = {k: (v[k] if k == "schema" else mapped(v[k], num, text, k)) for k in v}
        runs = out.get("runs")
        if isinstance(runs, list) and runs and isinstance(runs[0].get("time_ns"), dict):
            dense = runs[0]["time_ns"]["median"]
            for r in runs:
                if isinstance(r.get("time_ns"), dict) and isinstance(r.get("speedup"), (int, float)):
                    r["speedup"] = dense / r["time_ns"]["median"]
        return out
    if isinstance(v, list):
        return [mapped(x, num, text, key) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return abs(num(v)) if key in ("median", "p10", "p90") else num(v)
    return text(v)


def timed_speedups(rep, layer):
    """Each timed run's speedup against dense from the medians, and the report's."""
    runs = rep["layers"][layer]["runs"]
    dense = runs[0]["time_ns"]["median"]
    return [(r["speedup"], dense / r["time_ns"]["median"]) for r in runs if r.get("time_ns")]


def speedups_derived(path, layer):
    def check(p):
        try:
            with open(path) as f:
                rep = json.load(f)
        except (OSError, ValueError) as e:
            return "no report: %s" % e
        for got, want in timed_speedups(rep, layer):
            if got is None or abs(got - want) > 1e-9 * want:
                return "speedup %r, the medians give %r" % (got, want)
        return None
    return check


def unchanged(path, content):
    """A check that the link at path is still there and its target still holds content."""
    def check(p):
        if not os.path.islink(path):
            return "the link %s is gone" % os.path.basename(path)
        with open(os.path.realpath(path), "rb") as f:
            return None if f.read() == content else "its target was overwritten"
    return check


def renderer_cases(d, rep):
    out = []
    deep = rep["layers"][0]["pattern"]["tightest_n"]["along_k"]
    for k in list(deep):
        deep[k] = 1e308
    dump(d, "tightest.json", rep)
    variants = [("tightest", None),
                ("1e308", (lambda x: 1e308, lambda s: s)),
                ("-1e308", (lambda x: -1e308, lambda s: s)),
                ("2^64", (lambda x: 18446744073709551616 * 7, lambda s: s)),
                ("64 KiB strings", (lambda x: x, lambda s: s + "\u202e%s=" + "W" * 65536))]
    for name, f in variants:
        if f:
            dump(d, "x_%s.json" % name.replace(" ", "_"), mapped(rep, *f))
        src = "tightest.json" if f is None else "x_%s.json" % name.replace(" ", "_")
        for fmt in ("text", "markdown", "csv", "html", "json"):
            dst = "out_%s.%s" % (src[:-5], fmt)
            out.append(Case("reports: %s to %s" % (name, fmt),
                            ["report", src, "--format", fmt, "-o", dst], rc=0,
                            absent=["." + dst + ".*"]))
    return out


def journal_cases(d, rep):
    out = []
    base = ["analyze", "model.safetensors", *RUN, "--format", "json"]
    with open(os.path.join(d, "victim.txt"), "w") as f:
        f.write("keep me\n")
    os.symlink("victim.txt", os.path.join(d, "link.json.journal"))
    for resume in ([], ["--resume"]):
        out.append(Case("journal: a symbolic link%s" % (" --resume" if resume else ""),
                        base + ["-o", "link.json", *resume], names="link.json.journal",
                        says=["symbolic link"], absent=["link.json"],
                        check=unchanged(os.path.join(d, "link.json.journal"), b"keep me\n")))
    os.mkfifo(os.path.join(d, "fifo.json.journal"))
    for resume in ([], ["--resume"]):
        out.append(Case("journal: a FIFO%s" % (" --resume" if resume else ""),
                        base + ["-o", "fifo.json", *resume], names="fifo.json.journal",
                        says=["FIFO"], absent=["fifo.json"]))
    # a copy of the model, under the journal's name too (a hard link): cut, the mapping faults
    model = os.path.join(d, "self.safetensors")
    with open(os.path.join(d, "model.safetensors"), "rb") as f, open(model, "wb") as g:
        g.write(f.read())
    os.link(model, os.path.join(d, "self.json.journal"))
    size = os.path.getsize(model)

    def model_whole(p):
        now = os.path.getsize(model)
        return None if now == size else "the model was cut from %d to %d bytes" % (size, now)
    for resume in ([], ["--resume"]):
        out.append(Case("journal: the model itself%s" % (" --resume" if resume else ""),
                        ["analyze", "self.safetensors", *RUN, "--format", "json", "-o", "self.json",
                         *resume], names="self.json.journal", says=["input"], absent=["self.json"],
                        check=model_whole))
    os.mkdir(os.path.join(d, "dir.json.journal"))
    out.append(Case("journal: a directory", base + ["-o", "dir.json"], names="dir.json.journal",
                    says=["directory"], absent=["dir.json"]))
    # a journal of this run, two layers done, the first's csr speedup forged
    head = {"schema": "spprof.journal/1", "model_hash": rep["model"]["hash"]["value"],
            "settings": rep["settings"]}
    lines = [head]
    for i, l in enumerate(rep["layers"][:2]):
        lines.append({"layer": i, "name": l["name"], "m": l["m"], "k": l["k"], "n": l["n"],
                      "runs": l["runs"], "dense_candidates": l["dense_candidates"],
                      "flops": {"combined": None, "combined_speedup": None},
                      "activations": l.get("activations")})
    lines[1]["runs"][1]["speedup"] = 1e6
    lines[1]["runs"][1]["efficiency"] = 1e6
    with open(os.path.join(d, "forged.json.journal"), "w") as f:
        f.write("".join(json.dumps(x) + "\n" for x in lines))
    out.append(Case("resume: a journal line with speedup 1e6",
                    base + ["-o", "forged.json", "--resume"], rc=0,
                    check=speedups_derived(os.path.join(d, "forged.json"), 0)))
    neg = json.loads(json.dumps(lines))
    neg[1]["runs"][1]["time_ns"]["median"] = -1
    with open(os.path.join(d, "neg.json.journal"), "w") as f:
        f.write("".join(json.dumps(x) + "\n" for x in neg))
    out.append(Case("resume: a journal line with a negative time",
                    base + ["-o", "neg.json", "--resume"], names="neg.json.journal",
                    says=["l0.weight"], absent=["neg.json"]))
    with open(os.path.join(d, "huge.json.journal"), "wb") as f:
        f.truncate(8 << 30)  # sparse: 8 GiB of zeros, no newline
    out.append(Case("resume: 8 GiB without a newline", base + ["-o", "huge.json", "--resume"],
                    names="huge.json.journal", says=["64 MiB"], absent=["huge.json"]))
    return out


def merged_runs_match(path, parts):
    def check(p):
        try:
            with open(path) as f:
                got = json.load(f)
        except (OSError, ValueError) as e:
            return "no merged report: %s" % e
        for l in got["layers"]:
            src = [x for part in parts for x in part["layers"]
                   if x["name"] == l["name"] and x["runs"]]
            mine = [{k: v for k, v in r.items() if k == "time_ns"} for r in l["runs"]]
            if not src or mine != [{k: v for k, v in r.items() if k == "time_ns"}
                                   for r in src[0]["runs"]]:
                return "layer %s took runs that are not its own" % l["name"]
        return None
    return check


def merge_cases(d):
    out = []
    parts = [load(d, "p0.json"), load(d, "p1.json")]
    shard1 = [l["name"] for l in parts[1]["layers"] if l["runs"]][0]
    rev = json.loads(json.dumps(parts[1]))
    rev["layers"].reverse()
    dump(d, "p1_reordered.json", rev)
    out.append(Case("merge: a part's layers reordered",
                    ["merge", "p0.json", "p1_reordered.json", "--format", "json", "-o",
                     "m_reordered.json"], rc=0,
                    check=merged_runs_match(os.path.join(d, "m_reordered.json"), parts)))
    neg = json.loads(json.dumps(parts[1]))
    for l in neg["layers"]:
        if l["runs"]:
            l["runs"][1]["speedup"] = 1000
            l["runs"][1]["time_ns"]["median"] = -1
    dump(d, "p1_negative.json", neg)
    out.append(Case("merge: speedup 1000, median -1",
                    ["merge", "p0.json", "p1_negative.json", "--format", "json"],
                    names="p1_negative.json", says=[shard1]))
    forged = json.loads(json.dumps(parts[1]))
    layer = next(i for i, l in enumerate(forged["layers"]) if l["runs"])
    forged["layers"][layer]["runs"][1]["speedup"] = 1000
    dump(d, "p1_forged.json", forged)
    out.append(Case("merge: a forged speedup", ["merge", "p0.json", "p1_forged.json",
                                                 "--format", "json"],
                    names="p1_forged.json", says=["speedup 1000"]))
    # figures the report reader does not hold against the times: derived again, not copied
    for r in forged["layers"][layer]["runs"]:
        r["speedup"] = parts[1]["layers"][layer]["runs"][0]["time_ns"]["median"] / \
            r["time_ns"]["median"]
        r.update({"efficiency": 1e6, "gap": -1e6, "gflops": 1e9, "bandwidth_gbs": 1e9,
                  "bw_util": 7.0, "arithmetic_intensity": 1e9})
    dump(d, "p1_figures.json", forged)

    def figures_derived(p):
        try:
            with open(os.path.join(d, "m_figures.json")) as f:
                got = json.load(f)["layers"][layer]["runs"]
        except (OSError, ValueError, KeyError) as e:
            return "no merged report: %s" % e
        want = parts[1]["layers"][layer]["runs"]
        return None if got == want else "merged runs are not the part's as timed: %s" % (
            [(g.get("gflops"), w.get("gflops")) for g, w in zip(got, want)])
    out.append(Case("merge: forged efficiency, gflops, bw_util",
                    ["merge", "p0.json", "p1_figures.json", "--format", "json", "-o",
                     "m_figures.json"], rc=0, check=figures_derived))
    return out


def csv_case(d, rep):
    """5,200 runs, each with a key of its own: about 1 MB of JSON."""
    big = json.loads(json.dumps(rep))
    one = big["layers"][0]["runs"][1]
    runs = []
    for i in range(5200):
        r = {k: one[k] for k in ("backend", "format", "status", "time_ns", "speedup")}
        r["key_%d" % i] = i
        r["cache"] = {"ev_%d" % i: 1.0}
        runs.append(r)
    big["layers"] = big["layers"][:1]
    big["layers"][0]["runs"] = runs
    dump(d, "runs5200.json", big)
    src = os.path.getsize(os.path.join(d, "runs5200.json"))
    out_path = os.path.join(d, "runs5200.csv")

    def small(p):
        n = os.path.getsize(out_path)
        return None if n < 16 * src else "wrote %d bytes from %d" % (n, src)
    return [Case("reports: 5,200 runs to csv", ["report", "runs5200.json", "--format", "csv",
                                                "-o", "runs5200.csv"], rc=0, check=small)]


def temp_left(d, prefix):
    return [x for x in os.listdir(d) if x.startswith("." + prefix + ".")]


def wait_stopped(pid, seconds=2.0):
    """Whether pid is in the stopped state (T) within seconds; False when it exited."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        if state in ("T", "t"):
            return True
        if state in ("Z", "X"):
            return False
        time.sleep(0.001)
    return False


def signal_check(d, spprof, src):
    """Each signal sent while -o's temporary file exists (the process stopped there)
    must remove it; SIGXFSZ comes from RLIMIT_FSIZE."""
    def one(sig):
        for attempt in range(20):
            dst = "sig%d_%d.html" % (sig, attempt)
            # the signal's default disposition, whatever the runner's (nohup ignores SIGHUP,
            # and an ignored signal is inherited: spprof then rightly leaves it alone)
            p = subprocess.Popen([spprof, "report", src, "--format", "html", "-o", dst], cwd=d,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 start_new_session=True,
                                 preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
            caught = False
            while p.poll() is None:
                if temp_left(d, dst):
                    os.kill(p.pid, signal.SIGSTOP)
                    # SIGSTOP lands asynchronously: look again only once the process is
                    # stopped (it could finish and exit 0 in between, which read as a miss)
                    caught = wait_stopped(p.pid) and bool(temp_left(d, dst))
                    if caught:
                        os.kill(p.pid, sig)
                    os.kill(p.pid, signal.SIGCONT)
                    break
            p.communicate()
            if temp_left(d, dst):
                return "%s left %s" % (signal.Signals(sig).name, temp_left(d, dst)[0])
            if caught:
                return None if p.returncode == 128 + sig else "%s: exit %d" % (
                    signal.Signals(sig).name, p.returncode)
        return "%s: never caught the temporary file" % signal.Signals(sig).name

    def fsize():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

    def check(p):
        for sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
            why = one(sig)
            if why:
                return why
        q = subprocess.run([spprof, "report", src, "--format", "html", "-o", "xfsz.html"], cwd=d,
                           capture_output=True, preexec_fn=fsize)
        if temp_left(d, "xfsz.html"):
            return "SIGXFSZ left %s" % temp_left(d, "xfsz.html")[0]
        if q.returncode not in (128 + signal.SIGXFSZ, 2, 4, 5):
            return "SIGXFSZ: exit %d" % q.returncode
        return None
    return check


def cases(d, spprof):
    write_model(os.path.join(d, "model.safetensors"))
    analyze(spprof, d, "-o", "base.json")
    for i in range(2):
        analyze(spprof, d, "--shard", "%d/2" % i, "-o", "p%d.json" % i)
    rep = load(d, "base.json")
    out = renderer_cases(d, json.loads(json.dumps(rep)))
    out += journal_cases(d, rep)
    out += merge_cases(d)
    out += csv_case(d, rep)
    out.append(Case("reports: -o's temp file under SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ",
                    ["report", "runs5200.json", "--format", "text", "-o", "sig.txt"], rc=0,
                    seconds=60, check=signal_check(d, spprof, "runs5200.json")))
    return out
