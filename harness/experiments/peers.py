#!/usr/bin/python3
"""Our fiber server against the runtimes a reader would pick instead: CPU, throughput, syscalls.

Issue 28's comparison, beside claim C13: the fiber echo server with its defaults, every callback
server (the raw-epoll yardstick, libevent, libuv, libev) and every coroutine server (Boost.Asio's
stackful coroutines, GNU Pth), each a model of echo-server (servers/README.md), in the same
interleaved rounds: every round runs every server once per connection level, in an order rotated
round by round, so slow drifts of this shared machine hit every server alike. A peer that is not
built here (its library missing) is recorded as not built; a level beyond what a model declares
it can serve (conns_ceiling: Pth waits with select) is recorded as not run.

For every server, level and round:

  count  (the first --count-rounds rounds) --count-requests ping-pong requests with `perf stat
         -e raw_syscalls:sys_enter` attached to the server: kernel entries per request served,
         as the kernel counted them, set-up included;
  tput   --duration seconds with only task-clock attached: requests/s and the server's CPU time
         per request.

The summary gives, per level and server, the medians over the rounds with their 95% bootstrap
intervals, and the fiber server's paired ratio to each other server (per round, then median and
interval). Server on one CPU, echo-load on the other. Output: the JSON (peers.json in the suite)
to --out-file or standard output, and a table.
"""
import sys
import tempfile
from pathlib import Path

from lib import cli, host_pace, load_site, meta, rounds, runnable, stats
from lib import fiberio_runs as F
from experiments._step import Experiment, driver, full_only

PROG = "peers_bench"
OURS = "fiber"
# (server, kind): ours first, then the callback servers, then the coroutine servers.
SERVERS = [(OURS, "ours"), ("epoll", "callback"), ("libevent", "callback"),
           ("libuv", "callback"), ("libev", "callback"), ("asio-coro", "coroutine"),
           ("pth", "coroutine")]
KEYS = ("server_cpu_us_per_request", "requests_per_sec")


def parse_args(argv):
    ap = cli.parser("experiments/peers.py", __doc__, rounds=5, duration=1.0, warmup=0.3)
    ap.add_argument("--conns", type=cli.counts, default=[100, 1000],
                    help="connection levels, comma list (default 100,1000)")
    ap.add_argument("--size", type=int, default=64, help="bytes per request (default 64)")
    ap.add_argument("--count-requests", type=int, default=30000,
                    help="requests of each count run (default 30000)")
    ap.add_argument("--count-rounds", type=int, default=1,
                    help="rounds that also make the count runs (default 1: the kernel's count "
                         "per request is exact, not noisy)")
    ap.add_argument("--servers", default=None,
                    help="comma list, a subset of " + ",".join(s for s, _ in SERVERS))
    load_site.add_host_flags(ap)
    a = ap.parse_args(argv)
    load_site.check_host_flags(ap, a)
    if min(a.rounds, a.size, a.count_requests) < 1 or a.duration <= 0 or a.count_rounds < 0:
        ap.error("--rounds, --size and --count-requests must be at least 1, --duration "
                 "positive, --count-rounds at least 0")
    known = [s for s, _ in SERVERS]
    a.servers = a.servers.split(",") if a.servers else known
    bad = [s for s in a.servers if s not in known]
    if bad:
        ap.error(f"unknown server {', '.join(bad)} (valid: {', '.join(known)})")
    if OURS not in a.servers:
        ap.error(f"--servers must include {OURS}: every ratio is to it")
    return a


def interval(xs):
    xs = [x for x in xs if x is not None]
    return list(stats.bootstrap_ci(xs)) if len(xs) >= 2 else None


def summarise(runs, plan):
    out = []
    for conns, names in plan:
        for name, kind in names:
            t = [r for r in runs if r["conns"] == conns and r["variant"] == name
                 and r["kind"] == "tput"]
            c = [r for r in runs if r["conns"] == conns and r["variant"] == name
                 and r["kind"] == "count"]
            row = {"conns": conns, "server": name, "kind": kind, "rounds": len(t),
                   "syscalls_per_request": rounds.median([r["syscalls_per_request"] for r in c]),
                   "status": "ok" if t and all(r["status"] == "ok" for r in t) else
                   ("; ".join(sorted({w for r in t for w in r["reasons"]})) or "not run")}
            for key in KEYS:
                xs = [r[key] for r in t]
                row[key] = rounds.median(xs)
                row[key + "_ci"] = interval(xs)
            out.append(row)
    return out


def ratios(runs, plan):
    """The fiber server over each other server, per round, for CPU per request and req/s."""
    out = []
    for conns, names in plan:
        def by_round(v, key):
            return {r["round"]: r[key] for r in runs if r["conns"] == conns
                    and r["variant"] == v and r["kind"] == "tput"}
        for name, kind in names:
            if name == OURS:
                continue
            for key in KEYS:
                p = rounds.paired(by_round(OURS, key), by_round(name, key))
                out.append({"conns": conns, "num": OURS, "den": name, "kind": kind, "key": key,
                            **p, "ci": interval(p["per_round"])})
    return out


def fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    say = cli.reporter(a)
    build = Path(a.build_dir)
    a.server, a.load = meta.echo_binaries(build, PROG)
    members = {m["name"]: m.get("props") or {} for m in meta.registry(a.server, PROG)}
    wanted = [(s, k) for s, k in SERVERS if s in a.servers]
    built = [(s, k) for s, k in wanted if s in members]
    not_built = [s for s, _ in wanted if s not in members]
    if OURS not in members:
        print(f"{PROG}: {a.server} lists no {OURS} model", file=sys.stderr)
        return 2
    plan = []
    skipped = []
    for conns in a.conns:
        fits = []
        for s, k in built:
            ceiling = members[s].get("conns_ceiling")
            if ceiling and conns > ceiling:
                skipped.append({"conns": conns, "server": s, "status": "not run",
                                "reason": f"{s} serves at most {ceiling} connections "
                                          "(conns_ceiling: it waits with select)"})
            else:
                fits.append((s, k))
        plan.append((conns, fits))
    a.perf_ok, why = meta.perf_available(F.SYS_EVENT)
    if not a.perf_ok:
        say(f"{PROG}: not run: kernel counts ({why}); CPU from the server's rusage")
    for s in not_built:
        say(f"{PROG}: not run: {s} is not built here (its library is missing)")
    info = meta.collect(meta.REPO_ROOT, build, pinning={"server": a.server_cpu,
                                                        "load": a.load_cpu})
    a.loader = load_site.runner(a, info, PROG)
    # Each timed window is taken again while the host holds the server's CPU back.
    a.pace = host_pace.watch(build, a.server_cpu)
    say(f"{PROG}: {', '.join(s for s, _ in built)}; levels {a.conns}; {a.rounds} rounds; "
        f"load average {meta.loadavg()}")
    # fiberio_bench's runs read these: one ping-pong level at a time.
    a.conns_large, a.stream_conns, a.stream_size, a.pipeline = 0, 0, 0, 0
    a.sched = a.switch = None
    runs = []
    a.runnable_base = runnable.baseline()
    with tempfile.TemporaryDirectory(prefix="peers-bench-") as tmp:
        for rnd in range(a.rounds):
            for conns, names in plan:
                a.conns = conns
                for name, _ in rounds.rotated(names, rnd):
                    c = None
                    if a.perf_ok and rnd < a.count_rounds:
                        c = dict(F.count_run(a, name, "pingpong", tmp), round=rnd, conns=conns)
                        runs.append(c)
                    t = dict(F.tput_run(a, name, "pingpong", tmp), round=rnd, conns=conns)
                    runs.append(t)
                    say(f"  round {rnd + 1}/{a.rounds} conns={conns:<5} {name:10} sys/req "
                        f"{fmt(c['syscalls_per_request'] if c else None)} cpu "
                        f"{fmt(t['server_cpu_us_per_request'])} us/req "
                        f"{fmt(t['requests_per_sec'], '.0f')} req/s")
    summary = summarise(runs, plan)
    rat = ratios(runs, plan)
    for r in summary:
        say(f"{r['conns']:>5} {r['server']:10} {r['kind']:9} sys/req "
            f"{fmt(r['syscalls_per_request'])} cpu {fmt(r['server_cpu_us_per_request'])} us/req "
            f"{interval_text(r['server_cpu_us_per_request_ci'])} "
            f"{fmt(r['requests_per_sec'], '.0f')} req/s "
            f"{interval_text(r['requests_per_sec_ci'], '.0f')}")
    result = {"experiment": "peers", "meta": info,
              "config": {k: v for k, v in vars(a).items()
                         if k in ("rounds", "duration", "warmup", "size", "count_requests",
                                  "count_rounds", "server_cpu", "load_cpu")} | {
                  "conns": a.conns},
              "perf": a.perf_ok, "servers": [{"name": s, "kind": k, "built": s in members}
                                             for s, k in wanted],
              "not_built": not_built, "not_run": skipped, "summary": summary, "ratios": rat,
              "runs": runs}
    cli.emit(result, a, PROG)
    return 0


def interval_text(ci, spec=".2f"):
    return f"[{format(ci[0], spec)}, {format(ci[1], spec)}]" if ci else "[-]"


# The suite's declaration of this experiment (experiments/__init__.py lists it).
FULL = ["--conns", "100,1000", "--rounds", "5", "--duration", "1", "--warmup", "0.3",
        "--count-requests", "30000", "--count-rounds", "1"]
# Five rounds of seven servers at two levels take about 4 minutes: more than the quick suite
# has. The full preset measures the peers here and in fiberio.
QUICK_WHY = ("not run in the quick preset (about 4 minutes); the full preset measures the "
             "peers here and in fiberio")


EXPERIMENT = Experiment(
    name="peers",
    measures="server CPU per request, throughput and kernel entries per request of the fiber "
             "server beside every callback peer (epoll, libevent, libuv, libev) and coroutine "
             "peer (asio-coro, pth), at 100 and 1,000 connections",
    claims=(),  # the report's peers section reads it; C13's rule is unchanged
    binaries=("echo-server", "echo-load"),
    output="peers.json",
    presets={"quick": [], "full": FULL},  # quick: not run
    budget_s={"quick": 1, "full": 240},
    run=full_only(QUICK_WHY, driver()),
)


if __name__ == "__main__":
    sys.exit(main())
