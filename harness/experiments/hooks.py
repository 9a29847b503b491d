#!/usr/bin/python3
"""Cost of the hooked libc calls and of the fiber locks (engines/hook.h, engines/sync.h).

Three measurements, all in one run:

  bench   switch-bench's hook/ and sync/ rows (Google Benchmark), repeated with random
          interleaving: ns per 1-byte read/write on a ready pipe through the raw system
          call, the hooks' fall-through, the fiber IO call (direct) and the hook (hooked);
          ns per lock/unlock pair for the fiber mutex, the event lock and a pthread mutex,
          uncontended and contended (a second fiber, or a second thread);
  icount  the same hook/ loops and the uncontended sync/ loops under callgrind
          (hook-icount, two loop counts differenced): user-space instructions per call,
          exact and repeatable, where the time rows drown a few ns in a ~150 ns syscall;
  echo    echo-server --model fiber with --io direct and --io hooked, interleaved over
          rounds (the order alternates), pinned to one CPU with echo-load on the other:
          requests/s and the server's CPU time per request (perf task-clock, or the
          server's rusage without perf), and the paired hooked/direct ratio per round.

Beside them, the deadlock of seed 000 as the test suite stages it (engines/sync/deadlock_*):
the test program's own verdict and report, once with a pthread mutex and once with the event
lock, so that the report states what this build did.

Output: the JSON (hooks.json in the suite) to --out-file or standard output, and a table.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lib import callgrind, cli, cpu, load, meta, perf, rounds, server
from experiments._step import Experiment, driver, full_only

PROG = "hooks_bench"
IO_MODES = ["direct", "hooked"]
ICOUNT_ROWS = ["hook/read/pipe/syscall", "hook/read/pipe/fallthrough", "hook/read/pipe/direct",
               "hook/read/pipe/hooked", "hook/write/pipe/direct", "hook/write/pipe/hooked",
               "sync/fiber_mutex/uncontended", "sync/event_lock/uncontended",
               "sync/pthread_mutex/uncontended"]


def parse_args(argv):
    ap = cli.parser("experiments/hooks.py", __doc__, rounds=5, duration=3.0, warmup=0.5)
    ap.add_argument("--conns", type=int, default=50)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--engine", default="merged")
    ap.add_argument("--repetitions", type=int, default=5, help="switch-bench repetitions")
    ap.add_argument("--min-time", type=float, default=0.1, help="switch-bench seconds per row")
    ap.add_argument("--icount-loops", default="6400,70400")
    ap.add_argument("--icount-rows", default=",".join(ICOUNT_ROWS))
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.duration <= 0 or a.repetitions < 1 or a.min_time <= 0:
        ap.error("--rounds, --duration, --repetitions and --min-time must be positive")
    try:
        a.loops = tuple(int(x) for x in a.icount_loops.split(","))
    except ValueError:
        ap.error("--icount-loops wants two integers, e.g. 6400,70400")
    if len(a.loops) != 2 or a.loops[0] >= a.loops[1] or any(n % 64 for n in a.loops):
        ap.error("--icount-loops wants two increasing multiples of 64")
    return a


med = rounds.median


# ---- bench: switch-bench rows -------------------------------------------------------------

def run_bench(a, tmp):
    out = Path(tmp) / "hook-bench.json"
    cmd = [str(Path(a.bin) / "switch-bench"), "--benchmark_filter=^(hook|sync)/",
           f"--benchmark_min_time={a.min_time}", f"--benchmark_repetitions={a.repetitions}",
           "--benchmark_enable_random_interleaving=true",
           f"--benchmark_out={out}", "--benchmark_out_format=json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode != 0 or not out.exists():
        return {"status": "failed", "reason": p.stderr.strip()[-400:]}
    doc = json.loads(out.read_text())
    rows = {}
    for b in doc["benchmarks"]:
        name = b.get("run_name", b["name"]).replace("/real_time", "")
        r = rows.setdefault(name, {"cpu_ns": [], "real_ns": [], "counters": {}})
        if b.get("error_occurred"):
            r["not_run"] = b.get("error_message", "error")
            continue
        if b.get("run_type") == "aggregate":
            continue
        r["cpu_ns"].append(b["cpu_time"])
        r["real_ns"].append(b["real_time"])
        for k in ("queued_per_pair", "wakeups_per_pair", "other_pairs_per_pair"):
            if k in b:
                r["counters"].setdefault(k, []).append(b[k])
    for name, r in rows.items():
        r["cpu_ns_median"] = med(r["cpu_ns"])
        r["real_ns_median"] = med(r["real_ns"])
        # The figure to quote: CPU time, except where a partner thread runs meanwhile.
        r["ns_median"] = r["real_ns_median"] if "threads:" in name else r["cpu_ns_median"]
        r["counters"] = {k: med(v) for k, v in r["counters"].items()}
    rows = dict(sorted(rows.items()))
    return {"status": "ok", "context": doc.get("context", {}), "rows": rows,
            "unit": "ns per call (hook/) or per lock/unlock pair (sync/); sync/*/threads:2 "
                    "rows are real time (the partner thread's CPU is not the row's)"}


def bench_ratios(rows):
    def ns(name, key="cpu_ns_median"):
        r = rows.get(name)
        return r.get(key) if r else None

    out = {}
    for call in ("read", "write"):
        d, h = ns(f"hook/{call}/pipe/direct"), ns(f"hook/{call}/pipe/hooked")
        out[f"{call} hooked/direct"] = h / d if d and h else None
        f, s = ns(f"hook/{call}/pipe/fallthrough"), ns(f"hook/{call}/pipe/syscall")
        out[f"{call} fallthrough/syscall"] = f / s if f and s else None
    return out


# ---- icount ----------------------------------------------------------------------------------

def run_icount(a):
    rows = [r for r in a.icount_rows.split(",") if r]
    try:
        doc = callgrind.run(a.bin, rows, a.loops, jobs=2, log=open(os.devnull, "w"),
                         exe_name="hook-icount")
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        return {"status": f"not run: {e}"[:400]}
    per = {b["name"].removeprefix("icount/"): b["cpu_time"] for b in doc["benchmarks"]}
    return {"status": "ok", "loops": list(a.loops), "instructions_per_unit": per,
            "unit": "user-space instructions per call or per lock/unlock pair (callgrind; the "
                    "kernel's part is invisible to it)"}


# ---- echo: direct against hooked ---------------------------------------------------------------

def echo_run(a, io_mode, tmp):
    """echo-server --model fiber --io MODE under a ping-pong load."""
    cmd = [a.server, "--model", "fiber", "--engine", a.engine, "--io", io_mode]
    try:
        srv = server.EchoServer(cpu.pinned(cmd, a.server_cpu))
        pf = perf.PerfStat(srv.pid, "task-clock", tmp) if a.perf_ok else None
        ld = load.run(a.load, srv.port, ["--conns", a.conns, "--size", a.size, "--duration",
                                         a.duration, "--warmup", a.warmup], a.load_cpu)
        sj = srv.stats(timeout=20)
    except RuntimeError as e:
        sys.exit(f"{PROG}: --io {io_mode}: {e}")
    counts = pf.result() if pf else {}
    n = sj["bytes"] // a.size
    cpu_us, source = cpu.per_request(counts.get("task-clock"), sj, n)
    hook = sj.get("hook")
    return {"io": io_mode, "requests_per_sec": ld["requests_per_sec"], "requests_served": n,
            "server_cpu_us_per_request": cpu_us,
            "cpu_source": source or "server rusage",
            "hook": hook, "hook_calls_per_request": hook["calls"] / n if hook and n else None,
            "load_saturated": ld["cpu"]["saturated"], "latency_us": ld["latency_us"],
            "stalled": ld["latency_us"]["max"] >= 100000}


def paired(runs, key):
    def by_round(mode):
        return {r["round"]: r[key] for r in runs if r["io"] == mode}
    p = rounds.paired(by_round("hooked"), by_round("direct"))
    return {"median": p["median"], "rounds": p["per_round"]}


def run_echo(a, tmp):
    runs = []
    for rnd, mode in rounds.interleaved(a.rounds, IO_MODES):
        r = dict(echo_run(a, mode, tmp), round=rnd)
        runs.append(r)
        a.say(f"  round {rnd + 1}/{a.rounds} --io {mode:6} "
              f"{r['requests_per_sec']:9.0f} req/s  "
              f"{r['server_cpu_us_per_request'] or float('nan'):6.2f} us CPU/request")
    summary = {m: {"requests_per_sec": med([r["requests_per_sec"] for r in runs if r["io"] == m]),
                   "server_cpu_us_per_request": med([r["server_cpu_us_per_request"]
                                                     for r in runs if r["io"] == m]),
                   "hook_calls_per_request": med([r["hook_calls_per_request"]
                                                  for r in runs if r["io"] == m])}
               for m in IO_MODES}
    ratios = {"cpu per request hooked/direct": paired(runs, "server_cpu_us_per_request"),
              "throughput hooked/direct": paired(runs, "requests_per_sec")}
    return {"status": "ok", "summary": summary, "ratios": ratios, "runs": runs,
            "config": {"engine": a.engine, "conns": a.conns, "size": a.size,
                       "duration_s": a.duration, "warmup_s": a.warmup, "rounds": a.rounds,
                       "server_cpu": a.server_cpu, "load_cpu": a.load_cpu}}


# ---- deadlock: the seed-000 scenario, with each lock ------------------------------------------

def run_deadlock(a):
    exe = Path(a.build_dir) / "engines" / "tests" / "test-sync"
    if not os.access(exe, os.X_OK):
        return {"status": f"not run: {exe} missing"}
    out = {"status": "ok"}
    for lock, case in (("pthread_mutex", "deadlock_pthread_mutex"),
                       ("event_lock", "deadlock_event_lock")):
        try:
            p = subprocess.run([str(exe), case, "ring"], capture_output=True, text=True,
                               timeout=30)
        except subprocess.TimeoutExpired:
            out[lock] = {"test_passed": False, "outcome": "hung (the bound failed)"}
            continue
        text = p.stdout + p.stderr
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        out[lock] = {"test_passed": p.returncode == 0,
                     "deadlocked": first.startswith("DEADLOCK"),
                     "outcome": first, "output": text.strip().splitlines()}
    return out


def fmt(v, spec=".3f"):
    return "n/a" if v is None else format(v, spec)


def print_table(say, res):
    b = res["bench"]
    if b.get("status") == "ok":
        say(f"{'row':44} {'ns (median)':>12} {'instructions':>13}")
        ic = res["icount"].get("instructions_per_unit", {})
        for name, r in b["rows"].items():
            if "not_run" in r:
                say(f"{name:44} {r['not_run']}")
                continue
            say(f"{name:44} {fmt(r['ns_median'], '.1f'):>12} "
                f"{fmt(ic.get(name), '.1f'):>13}")
        for k, v in res["bench_ratios"].items():
            say(f"  {k}: {fmt(v)}")
    for lock in ("pthread_mutex", "event_lock"):
        d = res["deadlock"].get(lock)
        if d:
            say(f"deadlock scenario with {lock}: {d['outcome']} "
                f"(test {'passed' if d['test_passed'] else 'FAILED'})")
    e = res["echo"]
    for k, v in e["ratios"].items():
        say(f"echo {k}: median {fmt(v['median'])} over rounds "
            f"[{', '.join(fmt(x) for x in v['rounds'])}]")


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    a.say = say = cli.reporter(a)
    a.bin = str(Path(a.build_dir) / "bin")
    a.server, a.load = str(Path(a.bin) / "echo-server"), str(Path(a.bin) / "echo-load")
    for exe in ("switch-bench", "hook-icount", "echo-server", "echo-load"):
        if not os.access(Path(a.bin) / exe, os.X_OK):
            sys.exit(f"{PROG}: {a.bin}/{exe} missing: build first (./run.sh build)")
    a.perf_ok, why = meta.perf_available("task-clock")
    if not a.perf_ok:
        say(f"{PROG}: perf task-clock not run ({why}): CPU from the server's rusage")
    info = meta.collect(meta.REPO_ROOT, Path(a.build_dir),
                        pinning={"server": a.server_cpu, "load": a.load_cpu})
    res = {"experiment": "hooks", "meta": info, "load_average": {"start": meta.loadavg()}}
    with tempfile.TemporaryDirectory(prefix="hooks-bench-") as tmp:
        say(f"{PROG}: switch-bench hook/ and sync/ rows")
        res["bench"] = run_bench(a, tmp)
        res["bench_ratios"] = bench_ratios(res["bench"].get("rows", {}))
        say(f"{PROG}: instruction counts (callgrind)")
        res["icount"] = run_icount(a)
        say(f"{PROG}: echo, --io direct against hooked, {a.rounds} rounds")
        res["echo"] = run_echo(a, tmp)
    res["deadlock"] = run_deadlock(a)
    res["load_average"]["end"] = meta.loadavg()
    res["config"] = {k: v for k, v in vars(a).items() if k not in ("perf_ok", "loops", "say")}
    print_table(say, res)
    cli.emit(res, a, PROG)
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
# No verdict reads it; the quick suite spends its minutes on the figures verdicts use.
QUICK_WHY = "not run in the quick preset (no verdict reads it; about 15 s); the full preset does"

EXPERIMENT = Experiment(
    name="hooks",
    measures="ns and instructions per hooked call and lock pair, echo CPU per request with "
             "--io hooked against direct",
    claims=(),  # the report quotes it beside the claims; no verdict reads it
    binaries=("switch-bench", "hook-icount", "echo-server", "echo-load"),
    output="hooks.json",
    presets={"quick": [], "full": ["--rounds", "5", "--duration", "3", "--repetitions", "5"]},
    budget_s={"quick": 1, "full": 60},
    run=full_only(QUICK_WHY, driver()),
)


if __name__ == "__main__":
    sys.exit(main())
