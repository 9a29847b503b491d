#!/usr/bin/python3
"""Timer structures where servers use them: read timeouts' CPU, idle wake-ups, sleep lateness.

Claim C17 (shared/CLAIMS.md). Three parts, each optional (--parts):

  cpu       the fiber echo server with `--read-timeout MS` under each timer structure
            (`--timers NAME`, as `timer-info --list --json` lists them) beside the same server
            without timeouts, at each --conns level (64-byte ping-pong, echo-load): every
            request arms a timer that its data cancels, the mostly-cancelled case. The timeout
            (--read-timeout-ms, default 30 s) is far longer than any gap of the load, so none
            fires (the statistics' `timeouts.read` must stay 0). Interleaved rounds, the order
            rotated every round, with the server without timeouts a second time each round
            (the A/A pair); server CPU per request from perf's task-clock (else rusage);
            per-round ratios structure/none. A level beyond this machine's fd limit is recorded
            as a limit, not run;
  idle      how often each server wakes per second with --idle-conns connections open (each
            echoed once) and no traffic: perf stat attached to the server's processes for
            --idle-window seconds, counting the kernel's context switches and the wait system
            calls' tracepoints (epoll_wait, epoll_pwait, epoll_pwait2, io_uring_enter, poll,
            ppoll, select, pselect6, nanosleep, clock_nanosleep, futex, recvfrom; those this
            kernel has). Every built model with its defaults, the fiber server on every engine,
            and the fiber server with `--poll-tick 1` (the fixed 1 ms tick of NtyCo's and
            libco's loops) and with a read timeout pending on every connection (a deadline-
            driven wait with timers armed far away);
  lateness  timer-lateness under each structure: one fiber sleeps --sleeps times for
            --sleep-us microseconds and records how late it ran again (p50, p99, max), with
            --pending other timers armed far away; beside cyclictest (Debian's rt-tests) on
            the same CPU with the same interval and count, the kernel's own timer wake-up
            latency: the floor. Without cyclictest that row says "not run" and why.

The server and the sleepers run on --server-cpu, echo-load on --load-cpu. Output: the JSON
(timers.json in the suite) to --out-file or standard output, and tables.
"""
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lib import cli, cpu, limits, load_site, meta, perf, rounds, server, stats, status
from experiments._step import Experiment, driver

PROG = "timers_bench"
PARTS = ("cpu", "idle", "lateness")
NONE = "none"  # the fiber server without timeouts
WAIT_CALLS = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "io_uring_enter", "poll", "ppoll",
              "select", "pselect6", "nanosleep", "clock_nanosleep", "futex", "recvfrom")
SWITCHES = "context-switches"
TRACEFS = ("/sys/kernel/tracing/events/syscalls", "/sys/kernel/debug/tracing/events/syscalls")
# Idle variants beyond the models' defaults: (label, echo-server flags); and, per timer
# structure, the fiber server with a read timeout armed far away on every connection.
IDLE_EXTRA = (("fiber --poll-tick 1", ["--model", "fiber", "--poll-tick", "1"]),
              ("epoll --read-timeout 60000", ["--model", "epoll", "--read-timeout", "60000"]))
IDLE_TIMEOUT_MS = "60000"


def parse_args(argv):
    ap = cli.parser("experiments/timers.py", __doc__, rounds=5, duration=1.0, warmup=0.3)
    ap.add_argument("--parts", default=",".join(PARTS),
                    help=f"comma list of {', '.join(PARTS)} (default: all)")
    ap.add_argument("--timers", default="all",
                    help="comma list of timer structures, or 'all' (timer-info --list)")
    ap.add_argument("--cpu-timers",
                    help="comma list of the structures the cpu part measures (default: "
                         "--timers)")
    ap.add_argument("--conns", type=cli.counts, default=[100],
                    help="connection levels of the cpu part (default 100)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--read-timeout-ms", type=int, default=30000)
    ap.add_argument("--no-aa", dest="aa", action="store_false",
                    help="skip the A/A pair (the server without timeouts twice a round)")
    ap.add_argument("--idle-conns", type=int, default=100)
    ap.add_argument("--idle-window", type=float, default=2.0, help="seconds counted per server")
    ap.add_argument("--idle-rounds", type=int, default=1)
    ap.add_argument("--idle-variants", default="all",
                    help="comma list of idle variants (labels as printed), or 'all'")
    ap.add_argument("--sleeps", type=int, default=2000)
    ap.add_argument("--sleep-us", type=int, default=1000)
    ap.add_argument("--pending", type=int, default=1000,
                    help="other timers armed far away while the lateness is measured")
    ap.add_argument("--lateness-rounds", type=int, default=3)
    load_site.add_host_flags(ap)
    a = ap.parse_args(argv)
    load_site.check_host_flags(ap, a)
    a.parts = [p for p in a.parts.split(",") if p]
    bad = [p for p in a.parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part {', '.join(bad)} (valid: {', '.join(PARTS)})")
    if min(a.rounds, a.size, a.read_timeout_ms, a.idle_conns, a.idle_rounds, a.sleeps,
           a.sleep_us, a.lateness_rounds) < 1 or a.duration <= 0 or a.idle_window <= 0 \
            or a.pending < 0:
        ap.error("counts, sizes, windows and --duration must be positive")
    return a


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def interval(xs):
    """The median and its 95% bootstrap interval (harness/lib/stats.py), None for no samples."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"median": None, "low": None, "high": None, "n": 0}
    lo, hi = stats.bootstrap_ci(xs) if len(xs) >= 2 else (None, None)
    return {"median": stats.median(xs), "low": lo, "high": hi, "n": len(xs)}


# ---- cpu: read timeouts per structure ------------------------------------------------------

def cpu_cmd(a, variant):
    cmd = [a.server, "--model", "fiber", *a.loader.server_flags]
    if variant != NONE:
        cmd += ["--read-timeout", a.read_timeout_ms, "--timers", variant]
    return cpu.pinned(cmd, a.server_cpu)


def cpu_run(a, variant, conns, tmp, kind):
    la = meta.loadavg()
    srv = server.start_or_exit(PROG, variant, cpu_cmd(a, variant))
    pf = perf.PerfStat(srv.pid, "task-clock", tmp) if a.perf_ok else None
    ld, rc = a.loader.run_rc(srv.port, ["--conns", conns, "--size", a.size, "--duration",
                                        a.duration, "--warmup", a.warmup], a.load_cpu,
                             timeout=900, check=False)
    sj = srv.stop(30)
    counts = pf.result() if pf else {}
    st, why = status.of_load(ld, rc, srv.returncode == 0 and sj is not None, 1)
    rec = {"variant": variant, "conns": conns, "kind": kind, "loadavg": la, "status": st,
           "reasons": why, "server_cpu_us_per_request": None, "requests_per_sec": None}
    if sj is None or "error" in ld:
        return rec
    n = sj["bytes"] // a.size
    us, source = cpu.per_request(counts.get("task-clock"), sj, n)
    fired = (sj.get("timeouts") or {}).get("read")
    if fired:
        rec["reasons"] = why + [f"{fired} read timeouts fired: not the mostly-cancelled case"]
        rec["status"] = "failed"
    rec.update(server_cpu_us_per_request=us, cpu_source=source or "server rusage",
               requests_per_sec=ld["requests_per_sec"], requests_served=n, timeouts_fired=fired,
               timers=sj.get("timers"), load_saturated=ld["cpu"]["saturated"])
    return rec


def cpu_part(a, say, structures, tmp):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits this
    lim = meta.limits()
    runs, skipped = [], {}
    for conns in a.conns:
        why = limits.limit_verdict("fiber-per-connection", conns, lim, 128)
        if why:
            skipped[str(conns)] = why
            say(f"  cpu {conns} connections: not run: {why}")
            continue
        items = [NONE] + structures + (["aa"] if a.aa else [])
        for rnd, v in rounds.interleaved(a.rounds, items):
            r = dict(cpu_run(a, NONE if v == "aa" else v, conns, tmp,
                             "aa" if v == "aa" else "tput"), round=rnd)
            runs.append(r)
            say(f"  round {rnd + 1}/{a.rounds} cpu {conns:5} {v:8} "
                f"{fmt(r['server_cpu_us_per_request'], '.2f')} us/req "
                f"{fmt(r['requests_per_sec'], '.0f')} req/s ({r['status']})")
    ratios, aa = {}, {}
    for conns in a.conns:
        def by_round(v, kind="tput"):
            return {r["round"]: r["server_cpu_us_per_request"] for r in runs
                    if r["conns"] == conns and r["variant"] == v and r["kind"] == kind
                    and r["status"] in status.MEASURED}
        base = by_round(NONE)
        for s in structures:
            p = rounds.paired(by_round(s), base)
            ratios[f"{conns} {s}/{NONE}"] = dict(p, conns=conns, num=s, den=NONE,
                                                 **{k: v for k, v in
                                                    interval(p["per_round"]).items()
                                                    if k != "median"})
        if a.aa and base:
            aa[f"{conns} cpu"] = dict(rounds.aa(NONE, base, by_round(NONE, "aa")), conns=conns,
                                      key="server_cpu_us_per_request")
    summary = []
    for conns in a.conns:
        for v in [NONE] + structures:
            xs = [r["server_cpu_us_per_request"] for r in runs if r["conns"] == conns
                  and r["variant"] == v and r["kind"] == "tput"
                  and r["status"] in status.MEASURED]
            if xs:
                summary.append({"conns": conns, "variant": v,
                                "server_cpu_us_per_request": interval(xs)})
    return {"runs": runs, "ratios": ratios, "aa": aa, "summary": summary, "skipped": skipped,
            "read_timeout_ms": a.read_timeout_ms}


# ---- idle: wake-ups per second --------------------------------------------------------------

def wait_events():
    """The wait system calls' tracepoints this kernel has."""
    root = next((Path(d) for d in TRACEFS if Path(d).is_dir()), None)
    if root is None:
        return []
    return [f"syscalls:sys_enter_{c}" for c in WAIT_CALLS if (root / f"sys_enter_{c}").is_dir()]


def idle_variants(a, models, engines, structures):
    out = []
    for m in models:
        out.append((m, ["--model", m]))
        if m == "fiber":
            out += [(f"fiber --engine {e}", ["--model", "fiber", "--engine", e])
                    for e in engines]
            out += [(f"fiber --timers {s} --read-timeout {IDLE_TIMEOUT_MS}",
                     ["--model", "fiber", "--timers", s, "--read-timeout", IDLE_TIMEOUT_MS])
                    for s in structures]
    out += [(label, flags) for label, flags in IDLE_EXTRA if flags[1] in models]
    if a.idle_variants != "all":
        want = a.idle_variants.split(",")
        out = [v for v in out if v[0] in want]
    return out


def open_idle(port, n):
    """n connections, each echoed once (so the server has taken it), left open."""
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"x")
        if s.recv(1) != b"x":
            raise RuntimeError("no echo")
        socks.append(s)
    return socks


def idle_counts(text):
    """perf's counts; an event `<not counted>` over a running time of 0 is a count of 0: the
    watched tasks never ran in the window, which is what an idle server should do."""
    counts = perf.parse_csv(text)
    for line in text.splitlines():
        f = line.split(",")
        if len(f) > 3 and f[0] == "<not counted>" and f[3] in ("0", "0.00"):
            counts[f[2]] = 0.0
    return counts


def idle_run(a, label, flags, events):
    rec = {"variant": label, "flags": flags, "conns": a.idle_conns, "status": "ok",
           "reasons": []}
    try:
        srv = server.EchoServer(cpu.pinned([a.server, *flags], a.server_cpu))
    except server.NotStarted as e:  # one server that cannot start costs only its own row
        return dict(rec, status="failed", reasons=[str(e)])
    try:
        socks = open_idle(srv.port, a.idle_conns)
    except (OSError, RuntimeError) as e:
        srv.stop(30)
        return dict(rec, status="failed", reasons=[f"opening idle connections: {e}"])
    time.sleep(0.2)  # the last echoes' wake-ups settle
    pids = ",".join(str(p) for p in [srv.pid, *meta.descendants(srv.pid)])
    with tempfile.NamedTemporaryFile(suffix=".csv") as out:
        t0 = time.monotonic()
        p = subprocess.run(["perf", "stat", "-x", ",", "-e", ",".join([SWITCHES, *events]),
                            "-o", out.name, "-p", pids, "--", "sleep", str(a.idle_window)],
                           capture_output=True, text=True, timeout=a.idle_window + 60)
        secs = time.monotonic() - t0
        counts = idle_counts(Path(out.name).read_text())
    for s in socks:
        s.close()
    sj = srv.stop(30)
    if p.returncode != 0 or counts.get(SWITCHES) is None:
        return dict(rec, status="failed", reasons=[f"perf stat: {p.stderr.strip()[-200:]}"])
    # perf counted for the sleep's own lifetime, a little less than secs.
    window = min(secs, a.idle_window) or a.idle_window
    waits = {e.split("sys_enter_")[1]: (c or 0) / window for e, c in counts.items()
             if e != SWITCHES}
    return dict(rec, window_s=window, wakeups_per_s=counts[SWITCHES] / window,
                wait_calls_per_s=sum(waits.values()), wait_calls=waits,
                engine=(sj or {}).get("engine"), timers=(sj or {}).get("timers"),
                poll_tick_ms=(sj or {}).get("poll_tick_ms"))


def idle_part(a, say, build, structures):
    if not a.perf_ok:
        return {"status": "not run", "why": a.perf_why, "runs": [], "summary": []}
    events = wait_events()
    models = [m["name"] for m in meta.registry(a.server, PROG)]
    engines = [m["name"] for m in meta.registry(build / "bin" / "engine-info", PROG)]
    variants = idle_variants(a, models, engines, structures)
    runs = []
    for rnd, (label, flags) in rounds.interleaved(a.idle_rounds, variants):
        r = dict(idle_run(a, label, flags, events), round=rnd)
        runs.append(r)
        say(f"  round {rnd + 1}/{a.idle_rounds} idle {label:42} "
            f"{fmt(r.get('wakeups_per_s'), '.1f')} wake-ups/s "
            f"{fmt(r.get('wait_calls_per_s'), '.1f')} waits/s ({r['status']})")
    summary = []
    for label, flags in variants:
        mine = [r for r in runs if r["variant"] == label and r["status"] == "ok"]
        summary.append({"variant": label, "flags": flags,
                        "wakeups_per_s": interval([r["wakeups_per_s"] for r in mine]),
                        "wait_calls_per_s": interval([r["wait_calls_per_s"] for r in mine]),
                        "rounds": len(mine)})
    return {"status": "ok", "events": [SWITCHES, *events], "conns": a.idle_conns,
            "window_s": a.idle_window, "runs": runs, "summary": summary}


# ---- lateness: sleeps per structure beside cyclictest ----------------------------------------

def lateness_run(a, exe, name):
    p = subprocess.run(cpu.pinned([exe, "--timers", name, "--sleeps", a.sleeps, "--sleep-us",
                                   a.sleep_us, "--pending", a.pending], a.server_cpu),
                       capture_output=True, text=True, timeout=600)
    doc = server.last_json(p.stdout)
    if p.returncode != 0 or not doc:
        return {"status": "failed", "why": p.stderr.strip()[-200:] or f"exit {p.returncode}"}
    return dict(doc["lateness_us"], status="ok")


def histogram_quantiles(text, buckets):
    """p50, p99 and max (us) of cyclictest's -h histogram (one line per microsecond; overflows
    beyond the last bucket counted at the top, and the max read from its own line)."""
    counts, mx, over = {}, None, 0
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[0].isdigit() and f[1].isdigit():
            counts[int(f[0])] = int(f[1])
        elif line.startswith("# Max Latencies:") and len(f) > 3:
            mx = float(f[3])
        elif line.startswith("# Histogram Overflows:") and len(f) > 3:
            over = int(f[3])
    total = sum(counts.values()) + over
    if not total:
        return None

    def q(x):
        need, seen = x * total, 0
        for us in sorted(counts):
            seen += counts[us]
            if seen >= need:
                return float(us)
        return float(buckets)
    return {"p50": q(0.5), "p99": q(0.99), "max": mx, "n": total, "overflows": over}


def cyclictest_run(a):
    exe = shutil.which("cyclictest")
    if not exe:
        return {"status": "not run", "why": "cyclictest not installed (Debian's rt-tests)"}
    buckets = 20000
    base = [exe, "-q", "-t", "1", "-i", str(a.sleep_us), "-l", str(a.sleeps), "-h",
            str(buckets), "-a", str(a.server_cpu).split(",")[0].split("-")[0]]
    why = None
    # -m (mlockall) where allowed; without it when not (an unprivileged run).
    for cmd in (base + ["-m"], base):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return {"status": "not run", "why": f"cyclictest: {e}"}
        got = histogram_quantiles(p.stdout, buckets) if p.returncode == 0 else None
        if got:
            return dict(got, status="ok", command=" ".join(cmd))
        why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    return {"status": "not run", "why": f"cyclictest failed: {why}"}


def lateness_part(a, say, build, structures):
    exe = build / "bin" / "timer-lateness"
    if not exe.exists():
        return {"status": "not run", "why": f"{exe} not built", "runs": [], "summary": []}
    items = structures + ["cyclictest"]
    runs = []
    for rnd, name in rounds.interleaved(a.lateness_rounds, items):
        r = cyclictest_run(a) if name == "cyclictest" else lateness_run(a, exe, name)
        runs.append(dict(r, variant=name, round=rnd))
        say(f"  round {rnd + 1}/{a.lateness_rounds} lateness {name:10} p50 "
            f"{fmt(r.get('p50'), '.1f')} p99 {fmt(r.get('p99'), '.1f')} max "
            f"{fmt(r.get('max'), '.1f')} us ({r['status']}{': ' + r['why'] if 'why' in r else ''})")
    summary = []
    for name in items:
        mine = [r for r in runs if r["variant"] == name and r["status"] == "ok"]
        entry = {"variant": name, "rounds": len(mine)}
        for k in ("p50", "p99", "max"):
            entry[k] = interval([r[k] for r in mine])
        if not mine:
            entry["status"], entry["why"] = "not run", next(
                (r.get("why") for r in runs if r["variant"] == name), None)
        summary.append(entry)
    return {"status": "ok", "sleeps": a.sleeps, "sleep_us": a.sleep_us, "pending": a.pending,
            "runs": runs, "summary": summary}


# ---- main -------------------------------------------------------------------------------------

def print_tables(say, res):
    c = res.get("cpu")
    if c:
        say("\ncpu per request with --read-timeout, per structure (median [95% interval], n):")
        for e in c["summary"]:
            i = e["server_cpu_us_per_request"]
            say(f"  {e['conns']:5} {e['variant']:8} {fmt(i['median'], '.2f')} us "
                f"[{fmt(i['low'], '.2f')}, {fmt(i['high'], '.2f')}] n={i['n']}")
        for name, r in c["ratios"].items():
            say(f"  {name}: {fmt(r['median'])} [{fmt(r['low'])}, {fmt(r['high'])}] "
                f"n={r['n']}")
        for name, r in c["aa"].items():
            say(f"  A/A {name}: {fmt(r['median'])} spread {r['spread']}")
    i = res.get("idle")
    if i and i.get("summary"):
        say("\nidle wake-ups per second (context switches; wait calls):")
        for e in i["summary"]:
            say(f"  {e['variant']:42} {fmt(e['wakeups_per_s']['median'], '.1f'):>8} "
                f"{fmt(e['wait_calls_per_s']['median'], '.1f'):>8}")
    lt = res.get("lateness")
    if lt and lt.get("summary"):
        say("\nsleep lateness (us, medians over rounds):")
        for e in lt["summary"]:
            say(f"  {e['variant']:10} p50 {fmt(e['p50']['median'], '.1f'):>8} p99 "
                f"{fmt(e['p99']['median'], '.1f'):>8} max {fmt(e['max']['median'], '.1f'):>9}"
                + (f"  not run: {e.get('why')}" if e.get("status") == "not run" else ""))


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    say = cli.reporter(a)
    build = Path(a.build_dir)
    a.server, a.load = meta.echo_binaries(build, PROG)
    declared = [m["name"] for m in meta.registry(build / "bin" / "timer-info", PROG)]
    structures = declared if a.timers == "all" else a.timers.split(",")
    cpu_structures = a.cpu_timers.split(",") if a.cpu_timers else structures
    bad = [s for s in structures + cpu_structures if s not in declared]
    if bad:
        print(f"{PROG}: unknown timer structure {', '.join(bad)} (valid: "
              f"{', '.join(declared)})", file=sys.stderr)
        return 2
    a.perf_ok, a.perf_why = meta.perf_available("syscalls:sys_enter_epoll_wait")
    if not a.perf_ok:
        say(f"{PROG}: perf cannot count here ({a.perf_why}): CPU from rusage, idle not run")
    info = meta.collect(meta.REPO_ROOT, build, pinning={"server": a.server_cpu,
                                                        "load": a.load_cpu})
    # Only the cpu part runs echo-load: the idle servers are reached from here, on loopback.
    a.loader = load_site.runner(a, info, PROG) if "cpu" in a.parts else load_site.Here(a.load)
    say(f"{PROG}: structures {', '.join(structures)}; parts {', '.join(a.parts)}; load "
        f"average {meta.loadavg()}")
    la_start = meta.loadavg()
    res = {}
    with tempfile.TemporaryDirectory(prefix="timers-bench-") as tmp:
        if "cpu" in a.parts:
            res["cpu"] = cpu_part(a, say, cpu_structures, tmp)
        if "idle" in a.parts:
            res["idle"] = idle_part(a, say, build, structures)
        if "lateness" in a.parts:
            res["lateness"] = lateness_part(a, say, build, structures)
    result = {"experiment": "timers", "meta": info,
              "config": {k: v for k, v in vars(a).items()
                         if k not in ("perf_ok", "loader")},
              "structures": structures, "perf": a.perf_ok, "loadavg_start": la_start,
              "loadavg_end": meta.loadavg(), **res}
    print_tables(say, res)
    cli.emit(result, a, PROG)
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="timers",
    measures="echo CPU per request with a read timeout per timer structure beside none, idle "
             "wake-ups per second per server model and engine (1 ms poll tick against a "
             "deadline-driven wait), sleep lateness per structure beside cyclictest's",
    claims=("C17",),
    binaries=("echo-server", "echo-load", "engine-info", "timer-info", "timer-lateness"),
    output="timers.json",
    presets={
        # Three idle servers for 0.5 s each; 5 rounds of 100 sleeps of 1 ms per structure, so
        # that the lateness C17 judges has an interval: about 15 s. The servers' CPU with read
        # timeouts is the full preset's: C17 judges it from 1,000 connections up.
        "quick": ["--parts", "idle,lateness", "--idle-window", "0.5",
                  "--idle-variants", "epoll,fiber,fiber --poll-tick 1",
                  "--sleeps", "100", "--lateness-rounds", "5"],
        "full": ["--rounds", "5", "--duration", "1", "--conns", "100,10000",
                 "--idle-window", "2", "--idle-rounds", "2", "--sleeps", "1000",
                 "--lateness-rounds", "5"],
    },
    budget_s={"quick": 11, "full": 360},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(main())
