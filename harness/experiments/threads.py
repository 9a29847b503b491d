#!/usr/bin/python3
"""experiments/threads.py - fiber echo server with 1 vs 2 scheduler threads (claim C11).

Each variant starts `echo-server --model fiber --threads N` (N independent schedulers, one
SO_REUSEPORT listener each) and drives it with echo-load (persistent connections, closed loop):

  t1-pinned    1 scheduler thread on CPU 0, the load on CPU 1 (the usual single-core set-up)
  t1-shared    1 scheduler thread, server and load both free to use CPUs 0-1
  t2-shared    2 scheduler threads, server and load both free to use CPUs 0-1

t2-shared against t1-shared is the fair comparison (same placement). On a 2-core machine the
load generator competes with the server for the same two cores, so two scheduler threads
cannot double anything here; the figures say how much they do gain. Variants are interleaved
over --rounds (order rotated each round); medians are reported with the raw runs.

    /usr/bin/python3 harness/experiments/threads.py [--rounds 3] [--duration 4] [--conns 200]
        [--build-dir build] [--out-file threads.json]
"""
import os
import statistics
import sys
from pathlib import Path

from lib import cli, cpu, load, meta, rounds, runnable, server, status
from lib import budget as B
from experiments._step import Experiment, driver

VARIANTS = [
    {"name": "t1-pinned", "threads": 1, "server_cpus": "0", "load_cpus": "1"},
    {"name": "t1-shared", "threads": 1, "server_cpus": "0-1", "load_cpus": "0-1"},
    {"name": "t2-shared", "threads": 2, "server_cpus": "0-1", "load_cpus": "0-1"},
]


def parse_args(argv):
    # Each variant places the server and the load itself.
    ap = cli.parser("experiments/threads.py", __doc__, rounds=3, duration=4.0, pin=False,
                    budget=True)
    ap.add_argument("--conns", type=int, default=200)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--load-threads", type=int, default=2)
    ap.add_argument("--server-args", default="", help="extra echo-server arguments")
    ap.add_argument("--warmup", type=float, default=0.5, help="warm-up seconds per run")
    ap.add_argument("--aa", default="t1-shared",
                    help="the variant measured twice a round, the A/A pair ('' for none)")
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.duration <= 0 or a.conns < 1:
        ap.error("--rounds, --duration and --conns must be positive")
    names = [v["name"] for v in VARIANTS]
    if a.aa and a.aa not in names:
        ap.error(f"--aa: unknown variant {a.aa} (valid: {', '.join(names)}, or '' for none)")
    return a


def one_run(a, v):
    pin = {0, 1} <= os.sched_getaffinity(0)
    extra = runnable.baseline(3, 0.02)
    extra = extra - a.runnable_base if None not in (extra, a.runnable_base) else None
    try:
        srv = server.EchoServer(cpu.pinned([a.server, "--model", "fiber", "--threads",
                                            v["threads"], "--port", "0",
                                            *a.server_args.split()],
                                           v["server_cpus"] if pin else None),
                                ready_timeout=10)
    except server.NotStarted as e:
        why = f"server did not start: {e.reason}"
        return {"variant": v["name"], "status": "failed", "reasons": [why], "reason": why}
    ld, rc = load.run_rc(a.load, srv.port, ["--conns", a.conns, "--size", a.size, "--duration",
                                            a.duration, "--warmup", a.warmup, "--threads",
                                            a.load_threads], v["load_cpus"] if pin else None,
                         timeout=a.duration + 60, check=False)
    stats = srv.stop(30)
    # echo-load's workers share the variant's CPUs: one core pinned, up to two shared.
    st, why = status.of_load(ld, rc, srv.returncode == 0 and stats is not None,
                             min(a.load_threads, 2 if v["load_cpus"] != "1" else 1), extra,
                             status.RUNNABLE_SLACK)
    if "error" in ld:
        return {"variant": v["name"], "status": "failed", "reasons": why,
                "reason": "no JSON from echo-load or the server: " + ld["error"][-200:]}
    served = (stats or {}).get("bytes", 0) / a.size
    cpu_s = cpu.rusage_s(stats) or 0
    return {"variant": v["name"], "status": "ok", "threads": v["threads"],
            "server_cpus": v["server_cpus"] if pin else "not pinned",
            "load_cpus": v["load_cpus"] if pin else "not pinned",
            "requests_per_sec": ld["requests_per_sec"],
            "errors": sum(ld["errors"].values()),
            "p99_us": ld["latency_us"]["p99"],
            "server_cpu_s": cpu_s,
            "server_cores_used": cpu_s / (a.duration + 0.5),
            "server_cpu_us_per_request": cpu_s * 1e6 / served if served else None,
            "load_cores_used": ld["cpu"]["cores_used"],
            "load_saturated": ld["cpu"]["saturated"],
            # Its own classification (status.of_load); "ok" above says it was measured.
            "point_status": st, "reasons": why}


def aa_pair(name, runs, aa_runs):
    """{label: pair}: the variant's second run of each round over its first, for throughput
    and server CPU per request."""
    out = {}
    for key in ("requests_per_sec", "server_cpu_us_per_request"):
        first, second = ({r["round"]: r.get(key) for r in rs
                          if r["status"] == "ok" and r["variant"].startswith(name)}
                         for rs in (runs, aa_runs))
        out[f"{key} {name}/{name}"] = dict(rounds.aa(name, first, second), key=key)
    return out


def main(argv=None):
    a = parse_args(argv)
    budget = B.Budget(a.budget_s)
    gate = B.RoundGate(budget)
    build = Path(a.build_dir)
    a.server, a.load = str(build / "bin" / "echo-server"), str(build / "bin" / "echo-load")
    info = meta.collect(meta.REPO_ROOT, build,
                        pinning={v["name"]: f"server {v['server_cpus']}, load {v['load_cpus']}"
                                 for v in VARIANTS})
    say = cli.reporter(a)
    runs, aa_runs = [], []
    a.runnable_base = runnable.baseline()
    twin = next((dict(v, name=v["name"] + " (A/A)") for v in VARIANTS if v["name"] == a.aa),
                None)
    for rnd, v in rounds.interleaved(a.rounds, VARIANTS + ([twin] if twin else []), gate):
        r = dict(one_run(a, v), round=rnd)
        (aa_runs if v is twin else runs).append(r)
        what = (f"{r['requests_per_sec']:.0f} req/s, server {r['server_cores_used']:.2f} "
                f"cores, load {r['load_cores_used']:.2f} cores" if r["status"] == "ok"
                else f"{r['status']}: {r['reason']}")
        say(f"[threads round {rnd + 1}/{a.rounds}] {v['name']:10} {what}")
    summary = {}
    for v in VARIANTS:
        ok = [r for r in runs if r["variant"] == v["name"] and r["status"] == "ok"]
        summary[v["name"]] = {
            "threads": v["threads"], "runs": len(ok),
            "requests_per_sec": statistics.median([r["requests_per_sec"] for r in ok])
            if ok else None,
            "server_cores_used": statistics.median([r["server_cores_used"] for r in ok])
            if ok else None,
            "server_cpu_us_per_request": statistics.median(
                [r["server_cpu_us_per_request"] for r in ok
                 if r["server_cpu_us_per_request"]]) if ok else None,
            "errors": sum(r["errors"] for r in ok)}
    t1, t2 = summary["t1-shared"]["requests_per_sec"], summary["t2-shared"]["requests_per_sec"]
    result = {"experiment": "threads", "meta": info,
              "config": {"rounds": a.rounds, "duration": a.duration, "conns": a.conns,
                         "size": a.size, "load_threads": a.load_threads,
                         "server_args": a.server_args, "variants": VARIANTS,
                         "cores": os.cpu_count()},
              "rounds_run": len({r["round"] for r in runs}),
              "budget": dict(budget.record(), rounds=gate.record()) if a.budget_s else None,
              "summary": summary,
              "ratio_t2_over_t1_shared": (t2 / t1) if t1 and t2 else None,
              "runs": runs, "aa": aa_pair(a.aa, runs, aa_runs) if twin else None,
              "aa_runs": aa_runs}
    cli.emit(result, a, "threads")
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="threads",
    measures="throughput and server CPU of the fiber server with 1 and 2 scheduler threads",
    claims=("C11",),
    binaries=("echo-server", "echo-load"),
    output="threads.json",
    presets={
        # Every round also runs t1-shared a second time: the A/A pair.
        "quick": ["--rounds", "5", "--duration", "0.4", "--warmup", "0.2"],
        "full": ["--rounds", "5", "--duration", "2"],
    },
    budget_s={"quick": 16, "full": 70},
    # At least 3 rounds, up to the preset's while they fit (lib.budget.RoundGate).
    budgeted=True,
    # At its least: three rounds (results/notes/harness.md).
    least_s={"quick": 12},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(main())
