#!/usr/bin/python3
"""Cases for harness/gate/iopath.py: the IO path's counts per request are counts, the same on every
run of one build, and they see a read path that does one more system call per request.

usage: iopath_cases.py CASE --work DIR     (exit 77 with `not run: why` where perf's
                                             tracepoints, valgrind or SCHED_FIFO are missing)
"""
import json
import os
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from gate import iopath  # noqa: E402

BIN = HARNESS.parent / "build" / "bin"


def available():
    why = iopath.unavailable()
    if why:
        print(f"not run: {why}")
        sys.exit(77)


def case_deterministic(a):
    """Three runs of the fiber server and the epoll yardstick count the same, to 0.1%, and as
    the fixed schedule predicts: a recv and a send per request, one epoll_wait per batch of
    all 100 connections, no epoll_ctl on their paths."""
    available()
    runs = [iopath.measure(BIN, ["fiber/adaptive", "epoll"]) for _ in range(3)]
    for name in ("fiber/adaptive", "epoll"):
        for fig in ("instructions_per_request", "syscalls_per_request"):
            vals = [r[name][fig] for r in runs]
            check(max(vals) <= min(vals) * 1.001, f"{name} {fig}: the same on every run", vals)
        sc = runs[0][name]["syscalls_per_request"]
        check(abs(sc - (2 + 1 / iopath.CONNS)) < 0.002, f"{name}: 2 + 1/{iopath.CONNS} system "
              "calls per request", sc)
        check(runs[0][name]["epoll_ctl_per_request"] < 0.001, f"{name}: no epoll_ctl per "
              "request", runs[0][name]["epoll_ctl_per_request"])


def case_extra_read(a):
    """The eager read policy tries a recv that finds the queue empty before every wait: one
    system call more per request than adaptive, and more instructions; the counts show both,
    which is what a gate over them needs to see a read path made dearer."""
    available()
    got = iopath.measure(BIN, ["fiber/adaptive", "fiber/eager"])
    ad, eg = got["fiber/adaptive"], got["fiber/eager"]
    check(abs(eg["syscalls_per_request"] - ad["syscalls_per_request"] - 1) < 0.002,
          "eager: exactly one system call more per request", (ad, eg))
    check(eg["instructions_per_request"] > ad["instructions_per_request"] * 1.05,
          "eager: more instructions per request", (ad, eg))


def case_relative_bin(a):
    """--bin given relative to the caller's folder still names the build: the servers and perf
    run from other folders, which once made every configuration "not run" (Workload failed: No
    such file or directory)."""
    available()
    # From the build's parent, as `--bin build/bin` is given: a path with no "..", which read
    # from a temporary folder names nothing.
    where = BIN.parent.parent
    rel = os.path.relpath(BIN, where)
    p = subprocess.run([sys.executable, HARNESS / "gate" / "iopath.py", "--bin", rel,
                        "--configs", "epoll", "--json"], cwd=where, capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, "iopath.py with a relative --bin exits 0", p.stderr[-400:])
    got = json.loads(p.stdout) if p.returncode == 0 else {}
    epoll = got.get("epoll") or {}
    check(abs((epoll.get("syscalls_per_request") or 0) - 2.01) < 0.002,
          "epoll measured through the relative folder", got)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
