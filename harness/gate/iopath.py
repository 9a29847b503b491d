#!/usr/bin/python3
"""iopath.py - counts of the IO path per request: the echo servers' user-space instructions and
the data cache lines a request touches for its own connection (cachegrind), system calls and
epoll_ctl calls (the kernel's tracepoints, through perf).

A count that moves with timing is no count. What the servers do per request depends on how
many requests wait when their loop looks (one epoll_wait per batch of ready connections;
eager reads that find the queue empty), so every count here is taken under a schedule that
fixes the timing: the server and echo-load both on CPU 0 under SCHED_FIFO at one priority.
Neither preempts the other, so each runs until it blocks: echo-load sends on every
connection, then the server serves every connection, and so on. The same build then counts
the same on every run (engines/tests/syscall_counts.py shows it for the system calls, and
harness/tests/iopath_cases.py for all four).

The lines figure is the data cache lines a request misses in a small cache that only the
requests before it filled (LINES_CACHE): what a request needs that the other 99 connections'
requests, served in between, did not touch. That is its own connection's memory (its stack,
its records, its slot in the fd table), the part of a request's footprint that a server with
a stack per connection has and a callback server keeps to a few bytes. On a real machine the
kernel's network path runs between any two of them too, so these are the lines a request
finds cold; cachegrind sees user space only, so the kernel's own lines are not in it.

Each figure is differenced over two runs of different request counts (REQUESTS), so that the
server's start, the connections' set-up and the end cancel out: (count at N2 - count at N1) /
(requests served at N2 - at N1), the requests as the server itself counted them.

    iopath.py [--bin DIR] [--configs NAME,...] [--json] [--out-file FILE] [--user-space-only]
              [--code-pages]

--code-pages adds the 4 KiB pages of user code a request runs (callgrind's per-instruction
counts; where every system call empties the TLB, each costs a page walk after every call) and
the functions on them, per object.

--out-file writes the record the suite files (the icount step's `iopath` block, which claim
C13 shows): {"status": "ok", "configs": {name: counts}, and how they were taken}, or
{"status": "not run", "reason": why}.

Configurations (CONFIGS): the fiber server under each read policy, and the callback servers
epoll, libevent, libuv and libev; one that this build lacks is "not run" with the server's
reason. Exit 0; 1 when a count could not be taken; 2 for bad usage.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from lib import callgrind, perf, server

ROOT = Path(__file__).resolve().parents[2]

CONFIGS = {
    "fiber/adaptive": ["--model", "fiber", "--read-policy", "adaptive"],
    "fiber/eager": ["--model", "fiber", "--read-policy", "eager"],
    "fiber/wait": ["--model", "fiber", "--read-policy", "wait"],
    "epoll": ["--model", "epoll"],
    "libevent": ["--model", "libevent"],
    "libuv": ["--model", "libuv"],
    "libev": ["--model", "libev"],
}
CONNS = 100
SIZE = 64
# Requests of the two runs of each figure: cachegrind runs the server some 50 times slower.
# Twice these counted the same to the tenth of an instruction and line and the ten-thousandth
# of a system call for fiber/adaptive, fiber/eager, epoll and libevent (2026-12-05): the
# schedule is fixed, so more requests only cost time.
REQUESTS = {"syscalls": (10000, 30000), "user_space": (1000, 3000)}
# The lines figure's cache: 128 lines of 64 bytes in one set (fully associative, LRU). It has
# to hold everything one request touches, and be too small to keep a connection's own lines
# through the 99 other connections' requests. Measured on 2026-12-05 (own lines per request
# with 64, 128 and 256 lines): fiber/adaptive 13.5 at all three, epoll 2.5, 2.5, 2.3; at 64
# libevent's one request overflows it (151 against 41 at 128 and 256), at 256 libev's own
# lines outlast the other requests (1.4 against 4.0 at 128). The instruction cache and the
# last level are the AMD EPYC VM's (gate/misscount.py), and not read here.
LINES_CACHE = ["--D1=8192,128,64", "--I1=32768,8,64", "--LL=8388608,16,64"]
# An instruction on the request path runs at least once per request; the poller's own loop
# runs once per batch of ready connections (1/CONNS per request here).
PATH_SHARE = 0.5
FIFO = ["chrt", "-f", "10", "taskset", "-c", "0"]
SYSCALLS = "raw_syscalls:sys_enter"
CTL = "syscalls:sys_enter_epoll_ctl"


class NotRun(Exception):
    """A configuration or a figure this machine or build cannot count, with the reason."""


def _serve(bin_dir, args, requests, wrap, tmp):
    """One run under the fixed schedule: the server (inside `wrap`, a command prefix such as
    perf stat or valgrind, run in tmp), echo-load's `requests` over CONNS connections, then
    SIGINT to the server. Returns the server's statistics line."""
    try:
        srv = server.EchoServer([*FIFO, *wrap, bin_dir / "echo-server", *args, "--port", "0"],
                                ready_timeout=120, cwd=tmp, stop_signal=signal.SIGINT,
                                wrapped=True)
    except server.NotStarted as e:
        raise NotRun(e.reason) from None
    try:
        ld = subprocess.run([*FIFO, str(bin_dir / "echo-load"), "--port", str(srv.port),
                             "--conns", str(CONNS), "--size", str(SIZE), "--requests",
                             str(requests), "--warmup", "0", "--max-time", "120", "--json"],
                            capture_output=True, text=True, timeout=180)
        if ld.returncode != 0:
            raise RuntimeError(f"echo-load exited {ld.returncode}: {ld.stderr.strip()[-300:]}")
    except BaseException:
        srv.stop(60)
        raise
    return srv.stats(60)


def _requests(stats):
    return stats["bytes"] // SIZE


def _two_runs(bin_dir, args, tmp, kind, tool, wrap, read):
    """The two runs a figure is differenced over, of REQUESTS[kind] requests each: the server
    inside wrap(out), a command prefix that writes its counts to the file out (named after
    tool); returns [(requests served, read(out))]."""
    runs = []
    for n in REQUESTS[kind]:
        out = Path(tmp) / f"{tool}-{n}.out"
        st = _serve(bin_dir, args, n, wrap(out), tmp)
        runs.append((_requests(st), read(out)))
    return runs


def syscalls(bin_dir, args, tmp):
    """{syscalls_per_request, epoll_ctl_per_request}, differenced over REQUESTS["syscalls"]."""
    def read(out):
        counts = perf.parse_csv(out.read_text())
        if counts.get(SYSCALLS) is None:
            raise NotRun(f"perf did not count {SYSCALLS}")
        return counts
    (r1, c1), (r2, c2) = _two_runs(
        bin_dir, args, tmp, "syscalls", "perf",
        lambda out: ["perf", "stat", "-x,", "-o", str(out), "-e", f"{SYSCALLS},{CTL}", "--"], read)
    return {"syscalls_per_request": (c2[SYSCALLS] - c1[SYSCALLS]) / (r2 - r1),
            "epoll_ctl_per_request": (c2.get(CTL, 0) - c1.get(CTL, 0)) / (r2 - r1)}


def user_space(bin_dir, args, tmp):
    """{instructions_per_request, lines_per_request}: cachegrind's user-space instruction total
    and its data cache misses (reads and writes) under LINES_CACHE, differenced likewise."""
    def read(out):
        got = callgrind.event_totals(out.read_text())
        missing = {"Ir", "D1mr", "D1mw"} - set(got)
        if missing:
            raise RuntimeError(f"cachegrind counted no {', '.join(sorted(missing))}")
        return got
    (r1, t1), (r2, t2) = _two_runs(
        bin_dir, args, tmp, "user_space", "cachegrind",
        lambda out: ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *LINES_CACHE,
                     f"--cachegrind-out-file={out}"], read)
    return {"instructions_per_request": (t2["Ir"] - t1["Ir"]) / (r2 - r1),
            "lines_per_request": (t2["D1mr"] + t2["D1mw"] - t1["D1mr"] - t1["D1mw"])
            / (r2 - r1)}


def code_pages(bin_dir, args, tmp):
    """{code_pages_per_request, request_path}: the 4 KiB pages of user code (the server's and
    its libraries') holding an instruction that runs at least PATH_SHARE times per request,
    and per object the functions those instructions are in (callgrind's per-instruction
    counts, differenced likewise). Every system call empties the TLB on a guest with page-table
    isolation and no PCID, so each of these pages costs a page walk after every call
    (common/hot_text.h)."""
    (r1, c1), (r2, c2) = _two_runs(
        bin_dir, args, tmp, "user_space", "callgrind",
        lambda out: callgrind.callgrind_cmd(str(out), "--dump-instr=yes"),
        lambda out: callgrind.instruction_counts(out.read_text()))
    pages, path = set(), {}
    for key in c2:
        if (c2[key] - c1.get(key, 0)) / (r2 - r1) >= PATH_SHARE:
            obj, fn, addr = key
            pages.add((obj, addr >> 12))
            path.setdefault(Path(obj or "?").name, set()).add(fn)
    if not pages:
        raise RuntimeError("callgrind counted no instruction per request")
    return {"code_pages_per_request": len(pages),
            "request_path": {obj: sorted(fns) for obj, fns in sorted(path.items())}}


def measure(bin_dir, configs=None, log=sys.stderr, kernel=True, pages=False):
    """{config: {figure: value} or {"status": "not run: why"}} for every configuration;
    kernel=False leaves the system calls out (the user-space counts alone), pages=True adds
    code_pages (two callgrind runs more per configuration)."""
    bin_dir = Path(bin_dir)
    out = {}
    for name in configs or CONFIGS:
        with tempfile.TemporaryDirectory(prefix="iopath-") as tmp:
            try:
                fig = dict(syscalls(bin_dir, CONFIGS[name], tmp) if kernel else {},
                           **user_space(bin_dir, CONFIGS[name], tmp),
                           **(code_pages(bin_dir, CONFIGS[name], tmp) if pages else {}))
            except NotRun as e:
                fig = {"status": f"not run: {e}"}
        out[name] = fig
        print(f"iopath: {name:15} {summary(fig)}", file=log)
    return out


def summary(fig):
    """One configuration's counts in a line (or its status)."""
    if "status" in fig:
        return fig["status"]
    text = (f"{fig['instructions_per_request']:9.1f} instructions, "
            f"{fig['lines_per_request']:5.1f} own lines")
    if "syscalls_per_request" in fig:
        text += (f", {fig['syscalls_per_request']:.4f} system calls, "
                 f"{fig['epoll_ctl_per_request']:.4f} epoll_ctl")
    if "code_pages_per_request" in fig:
        text += f", {fig['code_pages_per_request']} code pages"
    return text + " per request"


def unavailable():
    """Why these counts cannot be taken on this machine, or None."""
    for tool, why in (("valgrind", "valgrind is not installed"), ("perf", "perf is missing"),
                      ("chrt", "chrt is missing")):
        if not any(os.access(os.path.join(d, tool), os.X_OK)
                   for d in os.environ.get("PATH", "").split(":")):
            return why
    p = subprocess.run(["perf", "stat", "-x,", "-e", f"{SYSCALLS},{CTL}", "--", "true"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return f"perf cannot count {SYSCALLS}: {p.stderr.strip()[-200:]}"
    if subprocess.run(["chrt", "-f", "10", "true"], capture_output=True).returncode != 0:
        return "SCHED_FIFO refused (chrt -f 10)"
    if 0 not in os.sched_getaffinity(0):
        return "CPU 0 is not available to this process"
    return None


# How the record's counts were taken, in words the report can quote.
HOW = (f"{CONNS} connections x {SIZE} B, server and echo-load on CPU 0 under SCHED_FIFO, "
       "differenced over two request counts; instructions and own lines: cachegrind (user space, "
       "lines missed in a fully associative cache of 128 lines)")
HOW_KERNEL = "; system calls: the kernel's raw_syscalls tracepoint"


def write_record(path, doc):
    if path:
        Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--configs", help=f"comma list (default: all of {', '.join(CONFIGS)})")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    ap.add_argument("--out-file", metavar="FILE",
                    help="write the record, with its status and how it was counted, here")
    ap.add_argument("--user-space-only", action="store_true",
                    help="count instructions and own lines only, not the system calls (the "
                         "suite's record: fiberio counts C13's system calls under its load)")
    ap.add_argument("--code-pages", action="store_true",
                    help="also count the pages of code a request runs, and list its functions "
                         "(callgrind)")
    a = ap.parse_args(argv)
    a.bin = str(Path(a.bin).resolve())  # the servers and perf run from other folders
    configs = a.configs.split(",") if a.configs else None
    bad = [c for c in configs or [] if c not in CONFIGS]
    if bad:
        ap.error(f"unknown configuration {', '.join(bad)} (valid: {', '.join(CONFIGS)})")
    why = unavailable()
    if why:
        print(f"iopath: not run: {why}")
        write_record(a.out_file, {"status": "not run", "reason": why})
        return 0
    try:
        counts = measure(a.bin, configs, kernel=not a.user_space_only, pages=a.code_pages)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"iopath.py: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(counts, indent=1))
    how = HOW + ("" if a.user_space_only else HOW_KERNEL)
    write_record(a.out_file, {"status": "ok", "configs": counts, "how": how,
                              "args": {name: CONFIGS[name] for name in counts}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
