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

Sampling until decided (--decide FIGURE:THRESHOLDS, harness/sequential.py): after the rounds,
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)
import sequential  # noqa: E402  (the sequential design, beside this file)
from drive import cli, cpu, load, perf, rounds, runnable, server, status  # noqa: E402

PROG = "fiberio_bench"
SYS_EVENT = "raw_syscalls:sys_enter"
CTL_EVENT = "syscalls:sys_enter_epoll_ctl"
YARDSTICKS = ["epoll", "epoll-level", "epoll-touch8", "libevent", "thread"]
# The peers (issue 28): the runtimes a reader would pick instead, measured beside the
# yardsticks on the ping-pong loads of the full rounds (the stream is the read policies' test)
# and compared with the default server the same way; those not built here (echo-server does
# not list them) are left out.
PEERS = ["libuv", "libev", "asio-coro", "pth"]
# A yardstick variant that is not a model of its own: its model and flags. Each is a control
# of the epoll yardstick, reported as a ratio to it.
YARDSTICK_FLAGS = {"epoll-level": ["--model", "epoll", "--trigger", "level"],
                   "epoll-touch8": ["--model", "epoll", "--touch-lines", "8"]}


# The figures --decide compares: the key of a tput run each pair's ratio divides.
DECIDE_KEYS = {"cpu": "server_cpu_us_per_request", "tput": "requests_per_sec"}


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


def yardstick_args(variant):
    """echo-server's flags for a yardstick variant; the model name is the second."""
    return YARDSTICK_FLAGS.get(variant, ["--model", variant])


def parse_args(argv):
    ap = cli.parser("fiberio_bench.py", __doc__, rounds=5, duration=3.0, warmup=0.5)
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
    load.add_host_flags(ap)
    a = ap.parse_args(argv)
    load.check_host_flags(ap, a)
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


# ---- processes ------------------------------------------------------------------------------

def fiber_model(server_exe):
    """The fiber model's declared properties: its read policies, default read policy and
    default engine (echo-server --list --json), and the names of every listed model."""
    members = meta.registry(server_exe, PROG)
    fiber = next((m["props"] for m in members if m["name"] == "fiber"), None)
    if not fiber or not fiber.get("read_policies"):
        sys.exit(f"{PROG}: {server_exe} --list --json declares no fiber model with read "
                 "policies")
    return fiber, [m["name"] for m in members]


def server_cmd(a, variant):
    """variant: 'fiber/<policy>/<engine>' or a yardstick model name."""
    if variant.startswith("fiber/"):
        _, policy, engine = variant.split("/")
        return [a.server, "--model", "fiber", "--engine", engine, "--read-policy", policy,
                "--sched", a.sched, "--switch", a.switch]
    return [a.server, *yardstick_args(variant)]


def start_server(a, variant):
    """One server variant of the comparison; a failure ends the run."""
    return server.start_or_exit(PROG, variant, cpu.pinned(
        server_cmd(a, variant) + a.loader.server_flags, a.server_cpu))


def stop_server(srv):
    return server.stats_or_exit(PROG, srv)


def load_args(a, kind):
    if kind == "stream":
        return ["--conns", a.stream_conns, "--size", a.stream_size, "--pipeline", a.pipeline]
    return ["--conns", a.conns_large if kind == "pingpong-1k" else a.conns, "--size", a.size]


def request_size(a, kind):
    return a.stream_size if kind == "stream" else a.size


def run_load(a, port, kind, requests=None):
    args = load_args(a, kind)
    args += ["--requests", requests, "--warmup", 0.2] if requests else \
        ["--duration", a.duration, "--warmup", a.warmup]
    try:
        return a.loader.run(port, args, a.load_cpu, timeout=900)
    except load.LoadFailed as e:
        sys.exit(f"{PROG}: {e}")


# ---- one measured run -------------------------------------------------------------------------

def count_run(a, variant, kind, tmpdir):
    la = meta.loadavg()
    srv = start_server(a, variant)
    pf = perf.PerfStat(srv.pid, f"{SYS_EVENT},{CTL_EVENT}", tmpdir) if a.perf_ok else None
    # Streamed requests are 256 times larger: a tenth as many keeps the run about as long.
    want = a.count_requests // 10 if kind == "stream" else a.count_requests
    ld = run_load(a, srv.port, kind, requests=max(want, 100))
    sj = stop_server(srv)
    counts = pf.result() if pf else {}
    n = sj["bytes"] // request_size(a, kind)
    sysc, ctl = counts.get(SYS_EVENT), counts.get(CTL_EVENT)
    reads = sj.get("fiber_reads")
    return {
        "variant": variant, "load": kind, "kind": "count", "loadavg": la,
        "conns": load_args(a, kind)[1],
        "requests_served": n, "load_requests": ld["requests"],
        "syscalls": sysc, "epoll_ctl_kernel": ctl,
        "syscalls_per_request": sysc / n if sysc is not None and n else None,
        "epoll_ctl_per_request": ctl / n if ctl is not None and n else None,
        "eagain_per_request": reads["again"] / n if reads and n else None,
        "waited_first_per_request": reads["waited_first"] / n if reads and n else None,
        "server_json": {k: sj.get(k) for k in ("read_policy", "engine", "epoll_ctl",
                                               "fiber_reads", "kernel_switches")},
        # Kernel counts per request: exact whatever else runs.
        "status": "ok", "reasons": [],
    }


def tput_run(a, variant, kind, tmpdir, run_kind="tput"):
    la = meta.loadavg()
    extra = runnable.baseline(3, 0.02)
    extra = extra - a.runnable_base if None not in (extra, a.runnable_base) else None
    srv = start_server(a, variant)
    pf = perf.PerfStat(srv.pid, "task-clock", tmpdir) if a.perf_ok else None
    ld, rc = a.loader.run_rc(srv.port, load_args(a, kind) + [
        "--duration", a.duration, "--warmup", a.warmup], a.load_cpu, timeout=900, check=False)
    sj = srv.stop(30)
    st, why = status.of_load(ld, rc, srv.returncode == 0 and sj is not None, 1, extra,
                             status.RUNNABLE_SLACK)
    counts = pf.result() if pf else {}
    if sj is None or "error" in ld:
        return {"variant": variant, "load": kind, "kind": run_kind, "loadavg": la,
                "status": st, "reasons": why, "requests_per_sec": None,
                "server_cpu_us_per_request": None, "stalled": False, "load_saturated": None}
    n = sj["bytes"] // request_size(a, kind)
    cpu_us, source = cpu.per_request(counts.get("task-clock"), sj, n)
    return {
        "variant": variant, "load": kind, "kind": run_kind, "loadavg": la,
        "status": st, "reasons": why,
        "conns": load_args(a, kind)[1],
        "requests_per_sec": ld["requests_per_sec"], "requests_served": n,
        "server_cpu_us_per_request": cpu_us,
        "cpu_source": source or "server rusage",
        "load_saturated": ld["cpu"]["saturated"], "load_cores_used": ld["cpu"]["cores_used"],
        "latency_us": {k: ld["latency_us"][k] for k in ("p50", "p99", "max")},
        "stalled": ld["latency_us"]["max"] >= 100000,
        "errors": {k: v for k, v in ld["errors"].items() if v},
    }


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
                "epoll_ctl_per_request": med([r["epoll_ctl_per_request"] for r in c]),
                "eagain_per_request": med([r["eagain_per_request"] for r in c]),
                "server_cpu_us_per_request": med([r["server_cpu_us_per_request"] for r in t]),
                "requests_per_sec": med([r["requests_per_sec"] for r in t]),
                "stalled_runs": sum(1 for r in t if r["stalled"]),
                "load_saturated_runs": sum(1 for r in t if r.get("load_saturated")),
            }
    return out


def paired(runs, kind, key, num, den):
    """num/den per round (both ran in the same round), and the median."""
    def by_round(v):
        return {r["round"]: r[key] for r in runs
                if r["load"] == kind and r["variant"] == v and r["kind"] == "tput"}
    return {"load": kind, "num": num, "den": den, "key": key,
            **rounds.paired(by_round(num), by_round(den))}


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


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


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


# ---- sampling until decided ---------------------------------------------------------------------

def decided_pairs(plan, default):
    """(load, num, den) of every pair C13 decides on that the plan measures: the default fiber
    server over the epoll yardstick on each ping-pong load, over epoll-touch8 at 1,000
    connections when it is measured (as plots/claims/c13_sync_code_async_speed.py reads
    them). The stream is left out: C13 judges it only when the two servers make about as many
    system calls per request there."""
    out = []
    for kind, variants in plan:
        if not kind.startswith("pingpong") or default not in variants:
            continue
        den = "epoll-touch8" if kind == "pingpong-1k" and "epoll-touch8" in variants else "epoll"
        if den in variants:
            out.append((kind, default, den))
    return out


def pair_state(a, runs, pair, design):
    """{figure: sequential.decide() of the pair's per-round ratios of it, with `key` and the
    `ratios` themselves}."""
    kind, num, den = pair
    out = {}
    for fig, ts in a.decide:
        rs = paired(runs, kind, DECIDE_KEYS[fig], num, den)["per_round"]
        out[fig] = dict(sequential.decide(rs, ts, design), key=DECIDE_KEYS[fig], ratios=rs)
    return out


def pending(state):
    """The rounds of the next look an undecided figure of a pair waits for; None when every
    figure is decided or has had its last look."""
    nxt = [f["next_look"] for f in state.values() if not f["decided"] and f["next_look"]]
    return min(nxt) if nxt else None


def extend(a, runs, pairs, design, walls, tmp, say):
    """More interleaved rounds of the pairs not yet decided, after the preset's: each round
    measures every such pair's two servers back to back (which goes first alternates), until
    each pair is decided or has had the design's last look. With --budget-s a pair goes on
    only while the rounds up to its next look (nothing is decided between looks) are
    predicted, from its own runs' wall times, to end within the budget; pairs are served in
    the plan's order (100 connections first). Returns ({pair: why it stopped}, {pair: the
    prediction that stopped it}, rounds run, seconds)."""
    stopped, over, rnd, t0 = {}, {}, a.rounds, time.monotonic()
    # Failed runs give no ratio: a pair gets at most twice its last look in attempts.
    cap = a.rounds + 2 * design.max_rounds

    def round_s(kind, num, den):
        return sum(rounds.median(walls.get((kind, v)) or [a.warmup + a.duration + 1.0])
                   for v in (num, den))

    while True:
        active, committed = [], 0.0
        for p in pairs:
            if p in stopped:
                continue
            state = pair_state(a, runs, p, design)
            if all(f["decided"] for f in state.values()):
                stopped[p] = "decided"
                continue
            if pending(state) is None:
                stopped[p] = "max looks"
                continue
            have = min(len(f["ratios"]) for f in state.values())
            need_s = max(1, pending(state) - have) * round_s(*p)
            left = None if a.budget_s is None else a.budget_s - (time.monotonic() - a.t_start)
            if left is not None and committed + need_s > left:
                stopped[p] = "budget"
                over[p] = {"next_look": pending(state), "rounds": have,
                           "predicted_s": round(need_s, 1),
                           "left_s": round(max(0.0, left - committed), 1)}
                say(f"  sequential: {p[0]} {p[1]}/{p[2]}: over budget (the look at "
                    f"{pending(state)} rounds predicted {need_s:.0f} s, "
                    f"{max(0.0, left - committed):.0f} s of {a.budget_s:.0f} s left)")
                continue
            committed += need_s
            active.append(p)
        if not active:
            break
        if rnd >= cap:
            stopped.update((p, "runs failed") for p in active)
            break
        for kind, num, den in rounds.rotated(active, rnd):
            for v in rounds.rotated([num, den], rnd):
                t1 = time.monotonic()
                t = dict(tput_run(a, v, kind, tmp), round=rnd, sequential=True)
                walls.setdefault((kind, v), []).append(time.monotonic() - t1)
                runs.append(t)
                say(f"  round {rnd + 1} (sequential) {kind:11} {v:24} cpu "
                    f"{fmt(t['server_cpu_us_per_request'], '.2f')} us/req "
                    f"{fmt(t['requests_per_sec'], '.0f')} req/s (load {t['loadavg']})")
        rnd += 1
    return stopped, over, rnd - a.rounds, time.monotonic() - t0


def needed(spread, outliers, effect, first):
    """sequential.rounds_needed, or None without a spread."""
    if spread is None or effect is None or effect <= 0:
        return None
    return sequential.rounds_needed(spread, effect, first=first, outliers=outliers or 0.0)


def sequential_record(a, runs, pairs, design, stopped, over, ext_rounds, ext_s):
    """fiberio.json's `sequential`: the design, and per pair its looks, rounds, decision per
    threshold and why it stopped, with what an undecided comparison would need."""
    out = []
    for p in pairs:
        kind, num, den = p
        figs = {}
        for fig, f in pair_state(a, runs, p, design).items():
            rs = f["ratios"]
            spread, share = sequential.spread_of(rs)
            med = rounds.median(rs)
            for d in f["decisions"]:
                if d["decision"] == sequential.UNDECIDED and med and spread is not None:
                    # were the truth the median: its relative distance from the threshold
                    dist = max(med / d["threshold"], d["threshold"] / med) - 1.0
                    d["rounds_needed_at_median"] = needed(spread, share, dist, a.rounds)
            figs[fig] = {"key": f["key"], "rounds": len(rs), "median": med,
                         "looks": f["looks"], "decisions": f["decisions"],
                         "decided": f["decided"], "spread": spread, "outliers": share,
                         "rounds_needed": needed(spread, share, sequential.EFFECT, a.rounds)}
        longest = max(figs.values(), key=lambda f: f["rounds"])
        out.append({"load": kind, "num": num, "den": den, "rounds": longest["rounds"],
                    "looks": [lk["rounds"] for lk in longest["looks"]],
                    "stopped": stopped.get(p, "decided"), "over_budget": over.get(p),
                    "figures": figs})
    return {"design": dict(design.record(), first=design.looks[0],
                           max_rounds=design.max_rounds, effect=sequential.EFFECT,
                           power=sequential.POWER),
            "thresholds": {fig: ts for fig, ts in a.decide},
            "budget_s": a.budget_s, "rounds_added": ext_rounds,
            "seconds_added": round(ext_s, 1), "pairs": out}


def print_sequential(say, seq):
    for p in seq["pairs"]:
        for fig, f in p["figures"].items():
            dec = "; ".join(
                f"{d['threshold']:g} {d['decision']}"
                + (f" at {d['rounds']} rounds" if d["rounds"] else
                   f" (needs about {d['rounds_needed_at_median']} rounds at the median)"
                   if d.get("rounds_needed_at_median") else
                   f" (needs more than {sequential.EXACT_LIMIT} rounds at the median)"
                   if "rounds_needed_at_median" in d
                   else "")
                for d in f["decisions"])
            say(f"sequential {p['load']} {fig} {p['num']}/{p['den']}: median "
                f"{fmt(f['median'])} over {f['rounds']} rounds; {dec}; stopped: {p['stopped']}")


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
    a.loader = load.runner(a, info, PROG)
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
                         if k not in ("perf_ok", "t_start", "loader")},
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


if __name__ == "__main__":
    sys.exit(main())
