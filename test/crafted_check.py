#!/usr/bin/env python3
"""Crafted files against the spprof binary: hostile inputs written at test
time, each run bounded in time and memory, each with the outcome it must have.

The cases live in test/crafted/*.py, one module per area (the PyTorch reader,
the multi-file loaders, the journal, merge and report readers): each module
has cases(d, spprof) returning a list of Case, with its files written under
the scratch folder d. A case runs `spprof ARGS...` in d with
    RLIMIT_CPU 60 s and, outside sanitizer builds, RLIMIT_AS 4 GiB (so a
    runaway case dies instead of taking the machine), and must then
  - end within `seconds` of wall time (10 by default) and keep its peak
    resident set (wait4's ru_maxrss) under `max_mib` (512 by default);
  - exit `rc` (2 by default): a refusal is exit 2 with exactly one line on
    stderr that names the file at fault (`names`, default the first path in
    the arguments) and holds each of `says`; nothing on stdout;
  - leave none of `absent` behind (outputs and temporary files);
  - pass `check(proc)` when given (a case that must load, and match).
A case whose inputs cannot be made here (a package missing) is skipped by
its module with the reason printed. Exit 0 when every case held, 1 otherwise.

    crafted_check.py SPPROF [CASE-NAME-SUBSTRING]
"""
import dataclasses
import glob
import importlib.util
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Optional


@dataclasses.dataclass
class Case:
    name: str
    args: List[str]                 # spprof's arguments (without the binary)
    rc: int = 2
    says: List[str] = dataclasses.field(default_factory=list)
    names: Optional[str] = None     # the path the error must name; default args' first file
    absent: List[str] = dataclasses.field(default_factory=list)
    check: Optional[Callable] = None  # check(completed_process) -> None or a failure text
    seconds: float = 10.0
    max_mib: int = 512
    stdin: Optional[bytes] = None
    env: Optional[dict] = None


def sanitized(spprof):
    """Whether the binary carries ASan (its shadow memory is no RSS of the case's)."""
    with open(spprof, "rb") as f:
        if b"__asan_init" in f.read():
            return True
    ldd = subprocess.run(["ldd", spprof], capture_output=True, text=True)
    return "libasan" in ldd.stdout


def run_case(spprof, d, c, asan):
    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
        if not asan:
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        os.setsid()

    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    if asan:
        # a small quarantine: freed blocks held back by ASan are no leak of the case's
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=8"
    if c.env:
        env.update(c.env)
    out = tempfile.TemporaryFile(dir=d)
    err = tempfile.TemporaryFile(dir=d)
    t0 = time.monotonic()
    p = subprocess.Popen([spprof] + c.args, cwd=d, env=env, preexec_fn=limits,
                         stdin=subprocess.PIPE if c.stdin is not None else subprocess.DEVNULL,
                         stdout=out, stderr=err)
    if c.stdin is not None:
        try:
            p.stdin.write(c.stdin)
        except BrokenPipeError:
            pass
        p.stdin.close()
    killed = False
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > max(c.seconds * 3, 30):
            os.killpg(p.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.01)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    p.stdout = out.read().decode("utf-8", "replace")
    p.stderr = err.read().decode("utf-8", "replace")
    mib = ru.ru_maxrss / 1024
    fails = []
    if killed:
        fails.append("killed after %.1f s" % wall)
    elif wall > c.seconds:
        fails.append("took %.1f s (bound %.0f s)" % (wall, c.seconds))
    if mib > c.max_mib:
        fails.append("peak RSS %.0f MiB (bound %d MiB)" % (mib, c.max_mib))
    if p.returncode != c.rc:
        fails.append("exit %d, want %d" % (p.returncode, c.rc))
    if c.rc == 2:
        lines = p.stderr.splitlines()
        names = c.names if c.names is not None else next(
            (a for a in c.args if os.path.exists(os.path.join(d, a))), None)
        if len(lines) != 1:
            fails.append("%d lines on stderr, want 1" % len(lines))
        if names and names not in p.stderr:
            fails.append("the error does not name %r" % names)
        for s in c.says:
            if s not in p.stderr:
                fails.append("the error does not say %r" % s)
        if p.stdout:
            fails.append("wrote %d bytes to stdout" % len(p.stdout))
    for a in c.absent:
        left = glob.glob(os.path.join(d, a))
        if left:
            fails.append("left %s behind" % ", ".join(os.path.relpath(x, d) for x in left))
    if c.check and not fails:
        why = c.check(p)
        if why:
            fails.append(why)
    return fails, wall, mib, p


def main():
    spprof = os.path.abspath(sys.argv[1])
    only = sys.argv[2] if len(sys.argv) > 2 else None
    asan = sanitized(spprof)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crafted")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    failed = total = 0
    for mod_path in sorted(glob.glob(os.path.join(here, "*.py"))):
        spec = importlib.util.spec_from_file_location(
            "crafted_" + os.path.basename(mod_path)[:-3], mod_path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        with tempfile.TemporaryDirectory() as d:
            for c in mod.cases(d, spprof):
                if only and only not in c.name:
                    continue
                total += 1
                fails, wall, mib, p = run_case(spprof, d, c, asan)
                tag = "FAIL" if fails else "ok"
                print("%-4s %-44s %5.2f s %5.0f MiB  %s" % (tag, c.name, wall, mib,
                                                            (p.stderr.strip().splitlines() or [""])[-1][:150]))
                for f in fails:
                    print("       " + f)
                failed += bool(fails)
    print("crafted_check: %d cases, %d failed%s" % (total, failed, " (ASan build)" if asan else ""))
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())
