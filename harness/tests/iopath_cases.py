#!/usr/bin/python3
"""Cases for harness/gate/iopath.py: the IO path's counts per request are counts, the same on every
run of one build, they see a read path that does one more system call per request, and the
lines figure sees exactly the lines a server touches per connection.

usage: iopath_cases.py CASE --work DIR     (exit 77 with `not run: why` where perf's
                                             tracepoints, valgrind or SCHED_FIFO are missing)
"""
import json
import os
import subprocess
import sys
import tempfile
import types
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
    """Two runs of the fiber server and the epoll yardstick count the same, to 0.1%, and as
    the fixed schedule predicts: a recv and a send per request, one epoll_wait per batch of
    all 100 connections, no epoll_ctl on their paths."""
    available()
    runs = [iopath.measure(BIN, ["fiber/adaptive", "epoll"]) for _ in range(2)]
    for name in ("fiber/adaptive", "epoll"):
        for fig in ("instructions_per_request", "syscalls_per_request"):
            vals = [r[name][fig] for r in runs]
            check(max(vals) <= min(vals) * 1.001, f"{name} {fig}: the same on every run", vals)
        lines = [r[name]["lines_per_request"] for r in runs]
        check(max(lines) - min(lines) <= 0.1, f"{name} lines_per_request: the same on every "
              "run, to a tenth of a line", lines)
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


def case_own_lines(a):
    """The epoll server told to walk 8 cache lines of a page of its own per connection after
    each read (--touch-lines 8, the fiberio yardstick epoll-touch8) touches 8 own lines more
    per request, and its instructions rise with the walk; the fiber server, with a stack per
    connection, touches more own lines per request than the epoll server."""
    available()
    with tempfile.TemporaryDirectory(prefix="iopath-lines-") as tmp:
        plain = iopath.user_space(BIN, iopath.CONFIGS["epoll"], tmp)
        touch = iopath.user_space(BIN, [*iopath.CONFIGS["epoll"], "--touch-lines", "8"], tmp)
        fiber = iopath.user_space(BIN, iopath.CONFIGS["fiber/adaptive"], tmp)
    extra = touch["lines_per_request"] - plain["lines_per_request"]
    check(abs(extra - 8) <= 0.3, "epoll --touch-lines 8: 8 own lines more per request",
          (plain, touch))
    check(touch["instructions_per_request"] > plain["instructions_per_request"],
          "epoll --touch-lines 8: more instructions per request", (plain, touch))
    check(fiber["lines_per_request"] > plain["lines_per_request"] + 1,
          "the fiber server touches more own lines per request than epoll", (fiber, plain))


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


def case_record(a):
    """--out-file writes the record the suite files (icount.json's `iopath` block): status ok,
    the configurations counted, their arguments and how they were counted; with a tool missing,
    status "not run" and why, and exit 0 (a machine without valgrind is no failure)."""
    available()
    with tempfile.TemporaryDirectory(prefix="iopath-record-") as tmp:
        def record(out, **env):
            p = subprocess.run([sys.executable, HARNESS / "gate" / "iopath.py", "--bin", BIN,
                                "--configs", "epoll", "--out-file", out],
                               capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, **env))
            check(p.returncode == 0, "iopath.py --out-file exits 0", p.stderr[-400:])
            return json.loads(Path(out).read_text())
        rec = record(Path(tmp) / "counted.json")
        check(rec.get("status") == "ok" and set(rec.get("configs") or {}) == {"epoll"}
              and rec.get("args") == {"epoll": iopath.CONFIGS["epoll"]}
              and "SCHED_FIFO" in rec.get("how", ""), "the record: ok, epoll, its arguments "
              "and how it was counted", rec)
        sc = (rec.get("configs") or {}).get("epoll", {}).get("syscalls_per_request") or 0
        check(abs(sc - 2.01) < 0.002, "epoll's counts in the record", rec)
        rec = record(Path(tmp) / "none.json", PATH=tmp)
        check(rec == {"status": "not run", "reason": "valgrind is not installed"},
              "no valgrind on PATH: not run, and why", rec)


def case_suite_block(a):
    """The suite's icount step files C13's pair, the default fiber server and the epoll
    yardstick, as its `iopath` block, counted in user space only, the fiber server with more
    instructions and own lines per request than the yardstick."""
    available()
    from experiments import icount
    with tempfile.TemporaryDirectory(prefix="iopath-block-") as tmp:
        ctx = types.SimpleNamespace(bin=BIN, tmp=tmp, log=Path(tmp) / "suite.log")
        rec = icount.iopath_block(ctx)
    got = rec.get("configs") or {}
    check(rec.get("status") == "ok" and set(got) == {"fiber/adaptive", "epoll"},
          "the block: ok, with the fiber server and the yardstick", rec)
    fib, ep = got.get("fiber/adaptive", {}), got.get("epoll", {})
    for fig in ("instructions_per_request", "lines_per_request"):
        check(fib.get(fig, 0) > ep.get(fig, 0) > 0, f"{fig}: fiber above epoll", rec)
    for name, g in got.items():
        check("syscalls_per_request" not in g, f"{name}: user space only (fiberio counts the "
              "system calls)", g)
    check("SCHED_FIFO" in rec.get("how", "") and "raw_syscalls" not in rec.get("how", ""),
          "how they were counted, user space only", rec.get("how"))


# The section common/hot_text.h names, and where the objects echo-server is linked from lie.
HOT_SECTION = ".text.hot.request_path"
OBJECT_DIRS = ("engines", "servers", "switch")


def hot_symbols():
    """{function: size in bytes} of every function the build's objects define in
    HOT_SECTION (objdump's symbol tables of the layers' objects and archives)."""
    files = [str(p) for d in OBJECT_DIRS for p in sorted((BIN.parent / d).rglob("*"))
             if p.suffix in (".o", ".a")]
    out = subprocess.run(["objdump", "-t", *files], capture_output=True, text=True,
                         timeout=60).stdout
    hot = {}
    for line in out.splitlines():
        words = line.split()
        # "ADDRESS FLAGS... F SECTION SIZE NAME"
        if len(words) >= 4 and words[-3] == HOT_SECTION and "F" in words[1:-3]:
            hot[words[-1]] = int(words[-2], 16)
    return hot


def case_hot_text(a):
    """Every function of echo-server that the default fiber server runs for a request lies in
    the request path's section (common/hot_text.h), so the path's own code spans no more pages
    than that section needs (its size in pages, plus one for where it starts)."""
    available()
    hot = hot_symbols()
    check(len(hot) >= 10, f"the build's objects define the request path in {HOT_SECTION}",
          sorted(hot))
    with tempfile.TemporaryDirectory(prefix="iopath-pages-") as tmp:
        got = iopath.code_pages(BIN, iopath.CONFIGS["fiber/adaptive"], tmp)
    path = got["request_path"].get("echo-server", [])
    check("fb_park" in path and "fb_read" in path, "the request path runs fb_read and fb_park",
          got["request_path"])
    outside = [fn for fn in path if fn not in hot]
    check(not outside, f"every echo-server function on the path is in {HOT_SECTION}", outside)
    span = -(-sum(hot.values()) // 4096) + 1
    libs = sum(1 for obj in got["request_path"] if obj != "echo-server")
    check(got["code_pages_per_request"] <= span + 2 * libs, "the path's pages: at most the "
          f"section's {span} and two per library", got)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
