#!/usr/bin/python3
"""iopath.py - counts of the IO path per request: the echo servers' user-space instructions
(callgrind), system calls and epoll_ctl calls (the kernel's tracepoints, through perf).

A count that moves with timing is no count. What the servers do per request depends on how
many requests wait when their loop looks (one epoll_wait per batch of ready connections;
eager reads that find the queue empty), so every count here is taken under a schedule that
fixes the timing: the server and echo-load both on CPU 0 under SCHED_FIFO at one priority.
Neither preempts the other, so each runs until it blocks: echo-load sends on every
connection, then the server serves every connection, and so on. The same build then counts
the same on every run (engines/tests/syscall_counts.py shows it for the system calls, and
harness/tests/iopath_cases.py for all three).

Each figure is differenced over two runs of different request counts (REQUESTS), so that the
server's start, the connections' set-up and the end cancel out: (count at N2 - count at N1) /
(requests served at N2 - at N1), the requests as the server itself counted them.

    iopath.py [--bin DIR] [--configs NAME,...] [--json]

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

from lib import perf, server

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
# Requests of the two runs of each figure: callgrind runs the server some 50 times slower.
REQUESTS = {"syscalls": (20000, 60000), "instructions": (2000, 6000)}
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


def syscalls(bin_dir, args, tmp):
    """{syscalls_per_request, epoll_ctl_per_request}, differenced over REQUESTS["syscalls"]."""
    runs = []
    for n in REQUESTS["syscalls"]:
        out = Path(tmp) / f"perf-{n}.csv"
        st = _serve(bin_dir, args, n, ["perf", "stat", "-x,", "-o", str(out), "-e",
                                       f"{SYSCALLS},{CTL}", "--"], tmp)
        counts = perf.parse_csv(out.read_text())
        if counts.get(SYSCALLS) is None:
            raise NotRun(f"perf did not count {SYSCALLS}")
        runs.append((_requests(st), counts))
    (r1, c1), (r2, c2) = runs
    return {"syscalls_per_request": (c2[SYSCALLS] - c1[SYSCALLS]) / (r2 - r1),
            "epoll_ctl_per_request": (c2.get(CTL, 0) - c1.get(CTL, 0)) / (r2 - r1)}


def instructions(bin_dir, args, tmp):
    """{instructions_per_request}: callgrind's user-space total, differenced likewise."""
    runs = []
    for n in REQUESTS["instructions"]:
        out = Path(tmp) / f"callgrind-{n}.out"
        st = _serve(bin_dir, args, n, ["valgrind", "--tool=callgrind", "--dump-line=no",
                                       f"--callgrind-out-file={out}"], tmp)
        total = next((int(ln.split()[1]) for ln in out.read_text().splitlines()
                      if ln.startswith(("summary:", "totals:"))), None)
        if total is None:
            raise RuntimeError("no instruction total in callgrind's output")
        runs.append((_requests(st), total))
    (r1, t1), (r2, t2) = runs
    return {"instructions_per_request": (t2 - t1) / (r2 - r1)}


def measure(bin_dir, configs=None, log=sys.stderr):
    """{config: {figure: value} or {"status": "not run: why"}} for every configuration."""
    bin_dir = Path(bin_dir)
    out = {}
    for name in configs or CONFIGS:
        with tempfile.TemporaryDirectory(prefix="iopath-") as tmp:
            try:
                fig = dict(syscalls(bin_dir, CONFIGS[name], tmp),
                           **instructions(bin_dir, CONFIGS[name], tmp))
            except NotRun as e:
                fig = {"status": f"not run: {e}"}
        out[name] = fig
        print(f"iopath: {name:15} " + (fig.get("status") or
              f"{fig['instructions_per_request']:9.1f} instructions, "
              f"{fig['syscalls_per_request']:.4f} system calls, "
              f"{fig['epoll_ctl_per_request']:.4f} epoll_ctl per request"), file=log)
    return out


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--configs", help=f"comma list (default: all of {', '.join(CONFIGS)})")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    a = ap.parse_args(argv)
    a.bin = str(Path(a.bin).resolve())  # the servers and perf run from other folders
    configs = a.configs.split(",") if a.configs else None
    bad = [c for c in configs or [] if c not in CONFIGS]
    if bad:
        ap.error(f"unknown configuration {', '.join(bad)} (valid: {', '.join(CONFIGS)})")
    why = unavailable()
    if why:
        print(f"iopath: not run: {why}")
        return 0
    try:
        counts = measure(a.bin, configs)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"iopath.py: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(counts, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
