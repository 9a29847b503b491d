#!/usr/bin/python3
"""Fiber IO read policies against the callback yardsticks: syscalls, CPU and throughput.

Claim C13 (shared/CLAIMS.md). The fiber echo server under each read policy (eager, wait,
adaptive; engines/io.h) and engine, beside the raw-epoll and libevent callback servers and
thread-per-connection, and on the ping-pong loads the peers (libuv, libev, asio-coro, pth, where
built), all measured in the same interleaved rounds (the order rotates every round, so slow
drifts of this shared VM hit every server alike). The raw-epoll server also runs
level-triggered (epoll-level, `--trigger level`): a control for what level triggering costs in
the kernel with no fiber runtime on top, beside the level-triggered merged engine; and walking 8
cache lines of a page of its own per connection after each read (epoll-touch8, `--touch-lines
8`): a control for what per-connection memory on the request path costs, as a fiber's record
and frames are. Loads:

  pingpong     --conns connections (default 100) x 64-byte requests, one in flight each;
  pingpong-1k  the same with --conns-large connections (default 1000), for the default
               policy, eager, and the yardsticks;
  stream       --stream-conns connections each keeping --pipeline requests of --stream-size
               bytes in flight (echo-load --pipeline): reads that fill the server's buffer,
               where trying the read first should pay.

For every server and load, two runs per round:

  count  --count-requests requests (a tenth of that for stream) with `perf stat -e
         raw_syscalls:sys_enter,syscalls:sys_enter_epoll_ctl` attached to the server: system
         calls and epoll_ctl per request served, as the kernel counted them;
  tput   --duration seconds with only task-clock attached (a syscall tracepoint puts every
         task of the machine on the slow system-call path): requests/s and the server's CPU
         time per request.

The server is pinned to one CPU and echo-load to the other; /proc/loadavg is recorded with
every run. Medians of the rounds and per-round paired ratios are reported; claim C13
(plots/) judges them. The read policies, the default policy and the default engine are the
ones `echo-server --list --json` declares for the fiber model. Output: the JSON (fiberio.json
in the suite) to --out-file or standard output, and a table.

Sampling until decided (--decide FIGURE:THRESHOLDS, harness/lib/sequential.py): after the rounds,
each pair C13 decides on (the default fiber server over the epoll yardstick on every ping-pong
load; at 1,000 connections over epoll-touch8) whose per-round ratio of FIGURE (cpu: server CPU
per request; tput: requests/s) is not yet decided against every threshold gets more
interleaved rounds of its two servers, up to the looks of a group-sequential sign test whose
last look is --sequential-max-rounds rounds, while --budget-s (the driver's whole run) lasts.
The preset passes C13's thresholds (harness/experiments/fiberio.py); the driver still judges
nothing: it records each comparison's decision, its looks and why it stopped.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

from lib import cli, host_pace, load_site, meta, rounds, runnable, sequential
from lib.fiberio_runs import (
    PROG, SYS_EVENT, YARDSTICK_FLAGS, count_run, fiber_model, tput_run, yardstick_args)
from lib.fiberio_sequential import (
    DECIDE_KEYS, decided_pairs, extend, fmt, paired, print_sequential, sequential_record)
from experiments._step import Experiment, driver

YARDSTICKS = ["epoll", "epoll-level", "epoll-touch8", "libevent", "thread"]
# The peers (issue 28): the runtimes a reader would pick instead, measured beside the
# yardsticks on the ping-pong loads of the full rounds (the stream is the read policies' test)
# and compared with the default server the same way; those not built here (echo-server does
# not list them) are left out.
PEERS = ["libuv", "libev", "asio-coro", "pth"]


def decide_spec(text):
    """argparse type of --decide: FIGURE:T1,T2,... -> (figure, [thresholds])."""
    fig, _, rest = text.partition(":")
    try:
        ts = [float(x) for x in rest.split(",") if x.strip()]
    except ValueError:
        ts = []
    if fig not in DECIDE_KEYS or not ts or min(ts) <= 0:
        raise argparse.ArgumentTypeError(
            f"want FIGURE:T1[,T2...] with FIGURE one of {', '.join(DECIDE_KEYS)} and positive "
            f"thresholds, got {text!r}")
    return fig, ts


def parse_args(argv):
    ap = cli.parser("experiments/fiberio.py", __doc__, rounds=5, duration=3.0, warmup=0.5)
    ap.add_argument("--engines",
                    help="comma list of fiber engines, or 'all' (default: the fiber model's "
                         "default engine, as echo-server --list --json declares it)")
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--conns-large", type=int, default=1000,
                    help="connections of the pingpong-1k load (0: skip it)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--stream-conns", type=int, default=100)
    ap.add_argument("--stream-size", type=int, default=16384)
    ap.add_argument("--no-stream", dest="stream", action="store_false",
                    help="leave the stream load out (C13 shows it, judges it only where the "
                         "two servers make as many system calls per request there)")
    ap.add_argument("--pipeline", type=int, default=4)
    ap.add_argument("--count-requests", type=int, default=200000,
                    help="requests of each count run (default 200000)")
    ap.add_argument("--full-rounds", type=int, default=None,
                    help="rounds that run every load and server, with the count runs (default: "
                         "every round); the other rounds run the pairs C13 judges only: the "
                         "default fiber server and the epoll yardstick on every load, and "
                         "epoll-touch8 at 1,000 connections")
    ap.add_argument("--no-aa", dest="aa", action="store_false",
                    help="skip the A/A pair (the default server a second time each round)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help="peers to measure beside the yardsticks, comma list, or none (default: "
                         "every one built here)")
    ap.add_argument("--decide", action="append", type=decide_spec, default=[],
                    metavar="FIGURE:THRESHOLDS",
                    help="sample until decided: FIGURE (cpu or tput) of the pairs C13 decides "
                         "on, against these thresholds (e.g. cpu:1.05,1.25); repeatable")
    ap.add_argument("--sequential-max-rounds", type=int, default=40,
                    help="with --decide: the rounds of the sequential design's last look "
                         "(default 40; its first look is --rounds)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="seconds the whole run may take (the suite passes the step's): a "
                         "pair gets rounds beyond --rounds only while those up to its next look "
                         "are predicted to end within it (default: no limit)")
    ap.add_argument("--sched", default="ring", choices=["star", "ring"])
    ap.add_argument("--switch", default="asm")
    load_site.add_host_flags(ap)
    a = ap.parse_args(argv)
    load_site.check_host_flags(ap, a)
    if min(a.rounds, a.conns, a.size, a.stream_conns, a.stream_size, a.pipeline,
           a.count_requests) < 1 or a.duration <= 0 or a.conns_large < 0:
        ap.error("rounds, connections, sizes, --pipeline, --count-requests and --duration "
                 "must be positive")
    if a.sequential_max_rounds < 1 or (a.budget_s is not None and a.budget_s <= 0):
        ap.error("--sequential-max-rounds and --budget-s must be positive")
    figs = [f for f, _ in a.decide]
    if len(set(figs)) < len(figs):
        ap.error("--decide names a figure twice")
    a.peers = [] if a.peers == "none" else [p for p in a.peers.split(",") if p]
    bad = [p for p in a.peers if p not in PEERS]
    if bad:
        ap.error(f"unknown peer {', '.join(bad)} (valid: {', '.join(PEERS)}, or none)")
    return a


# ---- summary ------------------------------------------------------------------------------------

def summarise(runs):
    med = rounds.median
    out = {}
    for r in runs:
        out.setdefault(r["load"], {}).setdefault(r["variant"], None)
    for kind, variants in out.items():
        for v in variants:
            mine = [r for r in runs if r["load"] == kind and r["variant"] == v]
            c = [r for r in mine if r["kind"] == "count"]
            t = [r for r in mine if r["kind"] == "tput"]
            variants[v] = {
                "rounds": len(t),
                "syscalls_per_request": med([r["syscalls_per_request"] for r in c]),
                "io_syscalls_per_request": med([r.get("io_syscalls_per_request") for r in c]),
                "waits_per_request": med([r.get("waits_per_request") for r in c]),
                "epoll_ctl_per_request": med([r["epoll_ctl_per_request"] for r in c]),
                "eagain_per_request": med([r["eagain_per_request"] for r in c]),
                "server_cpu_us_per_request": med([r["server_cpu_us_per_request"] for r in t]),
                "requests_per_sec": med([r["requests_per_sec"] for r in t]),
                "stalled_runs": sum(1 for r in t if r["stalled"]),
                "load_saturated_runs": sum(1 for r in t if r.get("load_saturated")),
            }
    return out


def ratios(runs, default, policies):
    out = {}
    loads = sorted({r["load"] for r in runs})
    have = {(r["load"], r["variant"]) for r in runs}
    c_key, t_key = "server_cpu_us_per_request", "requests_per_sec"
    for kind in loads:
        for ys in YARDSTICKS + PEERS:
            if (kind, default) in have and (kind, ys) in have:
                out[f"{kind} cpu {default}/{ys}"] = paired(runs, kind, c_key, default, ys)
                out[f"{kind} tput {default}/{ys}"] = paired(runs, kind, t_key, default, ys)
        for control in YARDSTICK_FLAGS:
            if (kind, control) in have and (kind, "epoll") in have:
                out[f"{kind} cpu {control}/epoll"] = paired(runs, kind, c_key, control, "epoll")
        eng = default.split("/")[2]
        for pol in policies:
            v, e = f"fiber/{pol}/{eng}", f"fiber/{policies[0]}/{eng}"
            if pol != policies[0] and (kind, v) in have and (kind, e) in have:
                out[f"{kind} cpu {v}/{e}"] = paired(runs, kind, c_key, v, e)
                out[f"{kind} tput {v}/{e}"] = paired(runs, kind, t_key, v, e)
    return out


def aa_pair(runs, default):
    """The A/A pair of every ping-pong load: the default server's second run of each round
    over its first, for server CPU per request and throughput."""
    out = {}
    for kind in sorted({r["load"] for r in runs if r["kind"] == "aa"}):
        for what, key in (("cpu", "server_cpu_us_per_request"), ("tput", "requests_per_sec")):
            first, second = ({r["round"]: r[key] for r in runs if r["load"] == kind
                              and r["variant"] == default and r["kind"] == k}
                             for k in ("tput", "aa"))
            out[f"{kind} {what}"] = dict(rounds.aa(default, first, second), load=kind, key=key)
    return out


def print_table(say, summary, rat):
    for kind, variants in summary.items():
        say(f"\n{kind}: {'server':24} {'sys/req':>8} {'ctl/req':>8} {'EAGAIN':>7} "
            f"{'cpu us/req':>10} {'req/s':>9}")
        for v, s in variants.items():
            say(f"{'':{len(kind) + 2}}{v:24} {fmt(s['syscalls_per_request']):>8} "
                f"{fmt(s['epoll_ctl_per_request']):>8} {fmt(s['eagain_per_request'], '.2f'):>7} "
                f"{fmt(s['server_cpu_us_per_request'], '.2f'):>10} "
                f"{fmt(s['requests_per_sec'], '.0f'):>9}")
    say()
    for name, r in rat.items():
        say(f"{name}: median {fmt(r['median'])} (rounds: "
            f"{', '.join(fmt(x) for x in r['per_round'])})")


def deciding(kind, default):
    """The servers C13 judges on a load (plots/claims/c13_sync_code_async_speed.py): the
    default fiber server against the epoll yardstick, and at 1,000 connections against the
    epoll server touching memory per connection as a fiber stack does."""
    return (default, "epoll") + (("epoll-touch8",) if kind == "pingpong-1k" else ())


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    a.t_start = time.monotonic()
    say = cli.reporter(a)
    build = Path(a.build_dir)
    a.server, a.load = meta.echo_binaries(build, PROG)
    declared = meta.registry(build / "bin" / "engine-info", PROG)
    engines = [m["name"] for m in declared]
    # A completion engine performs the reads itself: the read policies do not apply to it,
    # so it is measured once.
    completion = {m["name"] for m in declared if (m.get("props") or {}).get("completion")}
    fiber, models = fiber_model(a.server)
    policies, default_engine = fiber["read_policies"], fiber["default_engine"]
    wanted = engines if a.engines == "all" else (a.engines or default_engine).split(",")
    bad = [e for e in wanted if e not in engines]
    if bad:
        print(f"{PROG}: unknown engine {', '.join(bad)} (valid: {', '.join(engines)})",
              file=sys.stderr)
        return 2
    default = f"fiber/{fiber['default_read_policy']}/{default_engine}"
    a.perf_ok, why = meta.perf_available(SYS_EVENT)
    if not a.perf_ok:
        say(f"{PROG}: not run: perf counts ({why}); CPU from the server's rusage")
    fibers = [f"fiber/{p}/{e}" for e in wanted for p in policies
              if e not in completion or p == policies[0]]
    yard = [m for m in YARDSTICKS if yardstick_args(m)[1] in models]
    peers = [m for m in a.peers if m in models]
    plan = [("pingpong", fibers + yard + peers)] + ([("stream", fibers + yard)] if a.stream
                                                    else [])
    if a.conns_large:
        big = [f"fiber/{p}/{default_engine}" for p in policies] + yard + peers
        plan.append(("pingpong-1k", list(dict.fromkeys([default] + big))))
    info = meta.collect(meta.REPO_ROOT, build, pinning={"server": a.server_cpu,
                                                        "load": a.load_cpu})
    a.loader = load_site.runner(a, info, PROG)
    # Each timed window is taken again while the host holds the server's CPU or the load's
    # back, and a round whose two legs it held back differently is not paired.
    a.pace = host_pace.watch_pair(build, a.server_cpu, a.load_cpu)
    say(f"{PROG}: default {default}; engines {', '.join(wanted)}; {a.rounds} rounds; "
        f"server on CPU {a.server_cpu}, load on CPU {a.load_cpu}; load average "
        f"{meta.loadavg()}")
    runs = []
    la_start = meta.loadavg()
    a.runnable_base = runnable.baseline()
    full_rounds = a.rounds if a.full_rounds is None else a.full_rounds
    aa = f"{default} (A/A)"
    walls = {}  # (load, variant): seconds of each timed run, what a further round will take
    seq = None
    with tempfile.TemporaryDirectory(prefix="fiberio-bench-") as tmp:
        for rnd in range(a.rounds):
            full = rnd < full_rounds
            for kind, variants in plan:
                if not full:
                    variants = [v for v in variants if v in deciding(kind, default)]
                # The default server a second time in the round: the A/A pair.
                items = variants + ([aa] if a.aa and kind == "pingpong" else [])
                for v in rounds.rotated(items, rnd):
                    if v == aa:
                        t = dict(tput_run(a, default, kind, tmp, "aa"), round=rnd)
                        runs.append(t)
                        say(f"  round {rnd + 1}/{a.rounds} {kind:11} {v:24} "
                            f"{fmt(t['requests_per_sec'], '.0f')} req/s")
                        continue
                    c = dict(count_run(a, v, kind, tmp), round=rnd) if full else None
                    t1 = time.monotonic()
                    t = dict(tput_run(a, v, kind, tmp), round=rnd)
                    walls.setdefault((kind, v), []).append(time.monotonic() - t1)
                    runs += [x for x in (c, t) if x]
                    say(f"  round {rnd + 1}/{a.rounds} {kind:11} {v:24} sys/req "
                        f"{fmt(c['syscalls_per_request'] if c else None)} cpu "
                        f"{fmt(t['server_cpu_us_per_request'], '.2f')} us/req "
                        f"{fmt(t['requests_per_sec'], '.0f')} req/s (load {t['loadavg']})")
        if a.decide:
            pairs = decided_pairs(plan, default)
            design = sequential.design(max(a.rounds, a.sequential_max_rounds), first=a.rounds)
            stopped, over, added, secs = extend(a, runs, pairs, design, walls, tmp, say)
            seq = sequential_record(a, runs, pairs, design, stopped, over, added, secs)
    summary = summarise(runs)
    rat = ratios(runs, default, policies)
    result = {"experiment": "fiberio", "meta": info,
              "config": {k: v for k, v in vars(a).items()
                         if k not in ("perf_ok", "t_start", "loader", "pace")},
              "default": default, "policies": policies, "engines": wanted,
              "perf": a.perf_ok, "loadavg_start": la_start, "loadavg_end": meta.loadavg(),
              "summary": [dict(load=ld, variant=v, **st) for ld, vs in summary.items()
                          for v, st in vs.items()],
              "ratios": rat, "aa": aa_pair(runs, default) if a.aa else None,
              "sequential": seq, "runs": runs}
    print_table(say, summary, rat)
    if seq:
        print_sequential(say, seq)
    cli.emit(result, a, PROG)
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
# C13's thresholds (plots/claims/c13_sync_code_async_speed.py: HOLDS_CPU, PARTLY_CPU,
# HOLDS_TPUT, PARTLY_TPUT) for the driver's sampling until decided: the fiber server's CPU per
# request over the yardstick's against 1.05 and 1.25, its throughput against 0.95 and 0.8. The
# harness does not import plots/: test harness/sequential/preset-thresholds holds the two alike.
DECIDE = ["--decide", "cpu:1.05,1.25", "--decide", "tput:0.95,0.8"]

EXPERIMENT = Experiment(
    name="fiberio",
    measures="system calls, epoll_ctl, CPU per request and throughput per read policy and "
             "engine, beside the epoll, libevent and thread servers",
    claims=("C13",),
    binaries=("echo-server", "echo-load", "engine-info"),
    output="fiberio.json",
    presets={
        # 5 rounds of the deciding pair (default fiber server and epoll yardstick, ping-pong)
        # and the A/A pair; every server and the exact counts in the first round. No stream
        # (shown, not judged, where the read buffers differ: 16 server runs, about 15 s) and
        # no peers (40 to 60 s more on a shared 2-core VM); the full preset measures both.
        # Then sampling until decided (harness/lib/sequential.py): C13's thresholds on the pair's
        # CPU per request and throughput, looks at 5, 10 and 20 rounds as the budget allows
        # (5 rounds decide nothing without assuming the noise's shape; the look at 10 needs
        # 5 more rounds of the pair, an estimated 15 s, which this budget has only on a fast
        # machine).
        "quick": ["--rounds", "5", "--full-rounds", "1", "--duration", "0.4", "--warmup", "0.2",
                  "--count-requests", "20000", "--conns-large", "0", "--peers", "none",
                  "--no-stream", *DECIDE, "--sequential-max-rounds", "20"],
        # Every engine, policy, yardstick and peer in the first 3 rounds (with the counts); the
        # pairs C13 judges in all 5 (every server in every round took about 1,050 s); then
        # until decided, looks at 5, 10, 20 and 40 rounds, in the 300 s the budget adds for
        # them (a round of both pairs, 100 and 1,000 connections, estimated at 11 s).
        "full": ["--engines", "all", "--rounds", "5", "--full-rounds", "3", "--duration", "1",
                 "--count-requests", "30000", *DECIDE, "--sequential-max-rounds", "40"],
    },
    # Full: 861 s of 1,000 in the full run on the AMD EPYC VM (e361cd3, 2026-12-05).
    budget_s={"quick": 36, "full": 900},
    # Sizes itself to the budget: the rounds beyond the preset's run while they fit.
    budgeted=True,
    # At its least: the sequential design's first look (results/notes/harness.md).
    least_s={"quick": 20},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(main())
