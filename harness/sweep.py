#!/usr/bin/python3
"""Sweep driver: echo-server models x load modes x concurrency levels, measured with echo-load.

For every point it starts a fresh echo-server (pinned to one CPU when asked), waits until it is
ready (drive.server), attaches `perf stat` to it, runs echo-load (pinned to another CPU) and
samples the server's resident memory (summed over its child processes) and the kernel's memory
(KernelStack, SUnreclaim, PageTables in /proc/meminfo: before the server started against the
measured window), then stops the server and keeps its JSON statistics. echo-load first connects
every connection and echoes once on each (the ramp-up, reported in its own block), then warms up
and measures: the window's errors are steady-state errors. A point that would exceed a limit of
this machine (fds, pids, memory, memory maps) is recorded as "not run" with the reason, never
shrunk silently.

The JSON goes to --out-file (rewritten after every point, so an interrupted sweep keeps what it
measured; the servers' error output beside it in logs/) or, at the end, to standard output.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)
from drive import cli, cpu, load, memory, perf, runnable, server, status  # noqa: E402
from drive.limits import FD_MARGIN, RSS_GUESS_KB, limit_verdict  # noqa: E402

MODES = ["pingpong", "churn", "slow"]
DEFAULT_MODES = ["pingpong", "churn"]  # slow clients are their own experiment (--modes slow)
LEVELS = [1, 2, 4, 10, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
QUICK_LEVELS = [1, 10, 100, 1000]
PERF_EVENTS = "syscalls:sys_enter_epoll_ctl,context-switches,cpu-migrations,task-clock"

# Flags that size a model for a level: a process pool serves one connection per process, so
# it gets --procs N (a pool smaller than the level would only measure its backlog).
LEVEL_ARGS = {"process-pool": lambda conns: ["--procs", str(conns)]}
IDLE_SAMPLES = 5  # /proc/meminfo reads, 0.1 s apart, before the server starts and once idle


def declared_models(server):
    """{model: declared properties} in the registry's order, from `echo-server --list --json`."""
    return {m["name"]: m["props"] for m in meta.registry(server, "sweep")}


def declared_limit(props, conns):
    """The reason a model cannot serve conns connections by its own declaration (conns_ceiling:
    a select-based runtime's FD_SETSIZE less its own fds), or None."""
    ceiling = props.get("conns_ceiling")
    if ceiling and conns > ceiling:
        return (f"the model serves at most {ceiling} connections (conns_ceiling: it waits with "
                f"select)")
    return None


def csv_list(kind, valid=None):
    def parse(text):
        items = [x.strip() for x in text.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"empty {kind} list")
        if valid is True:  # names, checked once the binary is known
            return items
        if valid:
            bad = [x for x in items if x not in valid]
            if bad:
                raise argparse.ArgumentTypeError(
                    f"unknown {kind} {', '.join(bad)} (valid: {', '.join(valid)})")
            return items
        try:
            levels = [int(x) for x in items]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be whole numbers, got {text!r}")
        if min(levels) < 1:
            raise argparse.ArgumentTypeError(f"{kind} must be at least 1")
        return levels
    return parse


def parse_plan(text):
    """'MODELS/MODES/LEVELS;...' -> [(models, modes, levels)]."""
    groups = []
    for g in [x for x in text.split(";") if x.strip()]:
        parts = g.strip().split("/")
        if len(parts) != 3:
            raise argparse.ArgumentTypeError(f"want MODELS/MODES/LEVELS, got {g!r}")
        groups.append((csv_list("model", valid=True)(parts[0]), csv_list("mode", MODES)(parts[1]),
                       csv_list("levels")(parts[2])))
    if not groups:
        raise argparse.ArgumentTypeError("empty plan")
    return groups


def positive(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def parse_args(argv):
    ap = cli.parser("sweep.py", __doc__, pin=False)
    ap.epilog = "Example: /usr/bin/python3 harness/sweep.py --quick --models epoll,thread"
    ap.set_defaults(build_dir=None)
    ap.add_argument("--server", help="echo-server binary (default: BUILD_DIR/bin/echo-server)")
    ap.add_argument("--load", help="echo-load binary (default: BUILD_DIR/bin/echo-load)")
    ap.add_argument("--models", type=csv_list("model", valid=True), default=None,
                    help="comma list of server models (default: every model echo-server lists)")
    ap.add_argument("--modes", type=csv_list("mode", MODES), default=None,
                    help="pingpong (persistent connections), churn (one per request), slow "
                         "(persistent, requests sent in chunks; see --load-args) "
                         f"(default: {','.join(DEFAULT_MODES)})")
    ap.add_argument("--levels", type=csv_list("levels"), default=None,
                    help=f"concurrency levels (default: {','.join(map(str, LEVELS))})")
    ap.add_argument("--plan", type=parse_plan, default=None,
                    help="instead of --models x --modes x --levels: groups 'MODELS/MODES/LEVELS' "
                         "separated by ';', each a cross product, e.g. "
                         "'thread,fork/pingpong,churn/1,100;epoll/pingpong/100'")
    ap.add_argument("--repeat", type=int, default=1,
                    help="echo-load runs per point, back to back against the same server, each "
                         "with its own ramp-up, warm-up and window; the point's `load` is the "
                         "median run's, every run is in its `rounds` (default 1)")
    ap.add_argument("--size", type=int, default=64, help="bytes per request (default 64)")
    ap.add_argument("--duration", type=positive, default=None,
                    help="measured seconds per point (default 5; --quick: 1)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="warm-up seconds per point (default 1; --quick: 0.5)")
    ap.add_argument("--load-threads", type=int, default=1, help="echo-load --threads")
    ap.add_argument("--server-args", default="",
                    help="extra echo-server arguments, e.g. '--engine merged --switch asm'")
    ap.add_argument("--load-args", default="",
                    help="extra echo-load arguments, e.g. '--chunk 16 --chunk-delay 0.02'")
    ap.add_argument("--ramp-timeout", type=float, default=60.0,
                    help="echo-load --ramp-timeout: seconds to connect and echo once on every "
                         "connection before measuring (default 60)")
    ap.add_argument("--idle-samples", type=int, default=IDLE_SAMPLES,
                    help="/proc/meminfo reads, 0.1 s apart, for each of a point's two kernel "
                         f"memory baselines (default {IDLE_SAMPLES}; their median is used)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="do not pin (default: server on CPU 0, load on CPU 1 when both exist)")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    ap.add_argument("--no-perf", dest="perf", action="store_false",
                    help="skip the perf stat counts")
    ap.add_argument("--quick", action="store_true",
                    help=f"preset: levels {','.join(map(str, QUICK_LEVELS))}, 1 s per point")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and the limit verdict of every point; start nothing")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if a.plan:
        a.models = list(dict.fromkeys(m for ms, _, _ in a.plan for m in ms))
        a.modes = list(dict.fromkeys(m for _, ms, _ in a.plan for m in ms))
        a.levels = sorted({n for _, _, ns in a.plan for n in ns})
    a.modes = a.modes or DEFAULT_MODES
    a.levels = a.levels or (QUICK_LEVELS if a.quick else LEVELS)
    a.duration = a.duration or (1.0 if a.quick else 5.0)
    a.warmup = a.warmup if a.warmup is not None else (0.5 if a.quick else 1.0)
    if not a.build_dir:
        a.build_dir = str(Path(a.load).resolve().parent.parent if a.load
                          else meta.REPO_ROOT / "build")
    a.server = a.server or str(Path(a.build_dir) / "bin" / "echo-server")
    if not os.access(a.server, os.X_OK):
        ap.error(f"{a.server} is missing: build first (./run.sh build)")
    a.declared = declared_models(a.server)
    bad = [m for m in a.models or [] if m not in a.declared]
    if bad:
        ap.error(f"argument --models: unknown model {', '.join(bad)} "
                 f"(valid: {', '.join(a.declared)})")
    a.models = a.models or list(a.declared)
    a.load = a.load or str(Path(a.build_dir) / "bin" / "echo-load")
    if a.size < 1:
        ap.error("--size must be at least 1")
    if a.load_threads < 1:
        ap.error("--load-threads must be at least 1")
    cpus = os.sched_getaffinity(0)
    if a.pin and not {a.server_cpu, a.load_cpu} <= cpus:
        print(f"sweep: CPUs {a.server_cpu} and {a.load_cpu} are not both available "
              f"(have {meta.cpu_list(cpus)}); running unpinned", file=sys.stderr)
        a.pin = False
    return a


# ---- one point ---------------------------------------------------------------------------

def where(a, role):
    """The CPU of the server or the load, or None when not pinning."""
    return (a.server_cpu if role == "server" else a.load_cpu) if a.pin else None


def start_server(a, model, log, conns=None):
    """The server of one point, or NotStarted (its words are in log)."""
    concurrency = (getattr(a, "declared", None) or {}).get(model, {}).get("concurrency")
    extra = LEVEL_ARGS[concurrency](conns) if concurrency in LEVEL_ARGS and conns else []
    cmd = [a.server, "--model", model, "--port", "0", *extra, *a.server_args.split()]
    return server.EchoServer(cpu.pinned(cmd, where(a, "server")), stderr=log)


def perf_point(pf):
    """The perf block of a point, perf told to stop now (before the server)."""
    if pf is None:
        return {"status": "not run", "reason": "perf unavailable"}
    counts = pf.result(wait=0)
    if not counts:
        return {"status": "not run", "reason": "perf stat produced no counts"}
    return {"status": "ok", "events": counts,
            "note": "counted over the whole point, warm-up included, for the server process"}


def load_args(a, mode, conns):
    return ["--conns", conns, "--size", a.size, "--duration", a.duration, "--warmup", a.warmup,
            "--mode", mode, "--threads", a.load_threads, "--ramp-timeout", a.ramp_timeout,
            *(a.load_args.split() if mode == "slow" else [])]


def run_load(a, port, mode, conns):
    return load.start(a.load, port, load_args(a, mode, conns), where(a, "load"))


def round_record(i, doc, rc, server_ok, a):
    """One repetition of a point: its figures and its own status."""
    st, why = status.of_load(doc, rc, server_ok, a.load_threads,
                             getattr(a, "extra_runnable", None), status.RUNNABLE_SLACK)
    rec = {"round": i, "status": st, "reasons": why, "exit": rc}
    if doc and "error" not in doc:
        rec.update(requests=doc.get("requests"), requests_per_sec=doc.get("requests_per_sec"),
                   p99_us=(doc.get("latency_us") or {}).get("p99"),
                   errors=sum((doc.get("errors") or {}).values()) + (doc.get("mismatches") or 0),
                   unfinished=doc.get("unfinished") or 0,
                   cores_used=(doc.get("cpu") or {}).get("cores_used"),
                   ramp_s=(doc.get("ramp_up") or {}).get("seconds"))
    return rec


def median_load(runs):
    """The echo-load JSON of the repetition whose throughput is the median (the lower middle
    of an even count), with its index as `round`; None when none printed JSON."""
    docs = [dict(doc, round=i) for i, (doc, _) in enumerate(runs) if doc and "error" not in doc]
    if not docs:
        return None
    docs.sort(key=lambda d: d.get("requests_per_sec") or 0)
    return docs[(len(docs) - 1) // 2]


def window_of(load_json, started, a):
    """(start, end) of echo-load's measured window on our monotonic clock: after its ramp-up
    and warm-up. echo-load's clock starts a few ms after we launched it; that is ignored."""
    ramp = (load_json or {}).get("ramp_up") or {}
    begin = started + (ramp.get("seconds") or 0.0) + a.warmup
    return begin, begin + a.duration


def load_round(a, srv, mode, conns):
    """One echo-load run against the server with the server's memory sampled meanwhile:
    (echo-load's JSON or {"error": ...}, its exit status, (start time, memory samples))."""
    ld = run_load(a, srv.port, mode, conns)
    started = time.monotonic()
    deadline = started + a.ramp_timeout + a.warmup + a.duration + 40
    sampled = memory.sample_while(ld, srv.pid, deadline)
    try:
        out, err = ld.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        ld.kill()
        out, err = ld.communicate()
    doc = load.parse(out) or {"error": (err.strip().splitlines() or ["no JSON"])[-1]}
    return doc, ld.returncode, (started, sampled)


def window_memory(sample, doc, a):
    """(peak KiB, processes at the peak, the PSS KiB read nearest the window's middle, kernel
    samples) of one repetition, the readings inside its measured window only: a PSS read
    during the ramp-up would count connections not yet open. PSS is None when no reading fell
    inside the window."""
    started, (peak, procs, pss_samples, kern) = sample
    w0, w1 = window_of(doc, started, a)
    mid = (w0 + w1) / 2
    inside = [tv for tv in pss_samples if w0 <= tv[0] <= w1]
    pss = min(inside, key=lambda tv: abs(tv[0] - mid))[1] if inside else None
    return peak, procs, pss, [v for t, v in kern if w0 <= t <= w1]


def round_memory(sample, doc, base, conns, a):
    """One repetition's memory per connection (KiB) against the server's baselines taken before
    the first load: VmRSS growth, PSS growth and the kernel's growth in its window (None where
    a figure could not be sampled)."""
    doc = doc if doc and "error" not in doc else None
    peak, _, pss, in_window = window_memory(sample, doc, a)
    kern = meta.kernel_growth(base["kern"], in_window, conns)
    return {"rss_per_conn_kb": round(max(0, peak - base["rss"]) / conns, 2) if peak else None,
            "pss_per_conn_kb": (round(max(0, pss - base["pss"]) / conns, 2)
                                if pss is not None else None),
            "kernel_per_conn_kb": kern["per_conn_total_kb"] if kern else None}


def measure_point(a, model, mode, conns, tmpdir):
    # The kernel's memory before the server exists: a model that sets up per-connection
    # capacity at start (prefork's workers) owes that to its connections too.
    kern_before = memory.idle_kernel(a.idle_samples)
    log_path = a.logs / f"{model}-{mode}-{conns}.server.stderr"
    try:
        with open(log_path, "w") as log:
            srv = start_server(a, model, log, conns)
    except server.NotStarted as e:
        why = log_path.read_text().strip().splitlines()
        reason = "server did not start: " + (why[-1] if why else f"exit {e.returncode}")
        st = status.skipped(reason)[0] if e.returncode == 2 else "failed"
        return {"status": st, "reasons": [reason], "reason": reason}
    pid = srv.pid
    limit = meta.nofile_soft(pid)
    if limit is not None and conns + FD_MARGIN > limit:
        srv.stop(5)
        reason = (f"fds: {conns} connections + {FD_MARGIN} exceed the server's RLIMIT_NOFILE "
                  f"soft limit ({limit})")
        return {"status": "limit", "reasons": [reason], "reason": reason}
    # Baselines of the server process alone, for the same reason: prefork's workers exist
    # before the first connection, one per connection it can serve.
    base_rss = meta.rss_kb(pid) or 0
    pf = perf.PerfStat(pid, PERF_EVENTS, tmpdir) if a.perf_ok else None
    base_pss = meta.pss_kb(pid) or 0
    kern_idle = memory.idle_kernel(a.idle_samples)
    # Every repetition is a separate echo-load run against the same server, back to back,
    # each with its own ramp-up, warm-up and window, and the memory sampled in each: the
    # figures per connection get an interval like the throughput.
    base = {"rss": base_rss, "pss": base_pss, "kern": kern_before}
    runs, samples = [], []
    for _ in range(a.repeat):
        if runs and srv.proc.poll() is not None:
            break
        doc, rc, sample = load_round(a, srv, mode, conns)
        runs.append((doc, rc))
        samples.append(sample)
    perf_result = perf_point(pf)
    stats = srv.stop(15)
    server_ok = srv.returncode == 0 and stats is not None and srv.ended == "exited"
    point = {"status": "ok", "load_exit": runs[0][1], "server_ended": srv.ended,
             "perf": perf_result, "server": stats,
             "rounds": [dict(round_record(i, doc, rc, server_ok or i < len(runs) - 1, a),
                             memory=round_memory(samples[i], doc, base, conns, a))
                        for i, (doc, rc) in enumerate(runs)]}
    point["load"] = median_load(runs)
    if len(runs) < a.repeat:
        point["rounds"].append({"round": len(runs), "status": "failed",
                                "reasons": ["the server had exited: repetition not run"]})
    point["status"], point["reasons"] = status.of_rounds(point["rounds"])
    point["load_round"] = point["load"].get("round") if point["load"] else None
    if point["status"] != "ok":
        point["reason"] = "; ".join(point["reasons"])
    if point["load"] is None:
        point["reason"] = "echo-load gave no JSON: " + runs[0][0].get("error", "?")
    # The point's own memory block is its first repetition's (the shape older runs have);
    # the repetitions' figures are in rounds[i].memory.
    first = runs[0][0] if "error" not in runs[0][0] else None
    peak, procs, pss_mid, in_window = window_memory(samples[0], first, a)
    # Every PSS reading of every repetition, ramp-ups included: its peak bounds the memory the
    # connections took when no reading fell inside a window (a walk over a thousand processes
    # outlasts a window of a few tenths of a second), for the next level's memory forecast.
    pss_all = [v for _, (_, _, readings, _) in samples for _, v in readings]
    point["rss"] = {"baseline_kb": base_rss, "peak_kb": peak, "processes_at_peak": procs,
                    "per_conn_kb": round(max(0, peak - base_rss) / conns, 2),
                    "pss_baseline_kb": base_pss, "pss_mid_kb": pss_mid,
                    "pss_per_conn_kb": (round(max(0, pss_mid - base_pss) / conns, 2)
                                        if pss_mid is not None else None),
                    "pss_peak_per_conn_kb": (round(max(0, max(pss_all) - base_pss) / conns, 2)
                                             if pss_all else None),
                    "source": "/proc/PID/status VmRSS summed over the server and its child "
                              "processes, less the server process alone before the load"}
    point["kernel"] = meta.kernel_growth(kern_before, in_window, conns)
    if point["kernel"]:
        point["kernel"]["idle_server_kb"] = meta.kernel_median(kern_idle)
        point["kernel"]["baseline"] = "before the server started"
    add_per_request(point, a.size)
    if log_path.stat().st_size == 0:
        log_path.unlink()
    return point


def add_per_request(point, size):
    """perf counted from before the load's first byte to after its last, so dividing by every
    request the server echoed in its life (its bytes / size) gives exact per-request figures."""
    perf, server = point.get("perf", {}), point.get("server") or {}
    if perf.get("status") != "ok" or not server.get("bytes"):
        return
    served = server["bytes"] / size
    perf["requests_served"] = served
    perf["per_request"] = {k: (v / served if v is not None else None)
                           for k, v in perf["events"].items()}


# ---- the sweep ---------------------------------------------------------------------------

def summary(point):
    r = point.get("load")
    if point["status"] not in status.MEASURED or not r:
        return f"{point['status']}: {point.get('reason', '')}"
    rounds = [x["requests_per_sec"] for x in point.get("rounds", []) if "requests_per_sec" in x]
    errs = sum(r["errors"].values())
    ramp = r.get("ramp_up") or {}
    kern = (point.get("kernel") or {}).get("per_conn_total_kb")
    return (f"{r['requests_per_sec']:>9.0f} req/s  p99 {r['latency_us']['p99']:>9.1f} us  "
            f"errors {errs}  rss/conn {point['rss']['per_conn_kb']} KiB  kernel/conn "
            f"{kern if kern is not None else 'n/a'} KiB"
            + (f"  ramp {ramp['seconds']:.2f} s ({ramp.get('errors_total', 0)} errors)"
               if ramp else "")
            + (f"  rounds {min(rounds):.0f}-{max(rounds):.0f}" if len(rounds) > 1 else "")
            + ("" if point["status"] == "ok" else f"  [{point['status']}]"))


def fmt_secs(s):
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def write_json(path, data):
    """The sweep so far, replaced in one step: a reader never sees half a file."""
    if path is None:
        return
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def plan(a):
    if a.plan:
        return [(model, mode, conns) for models, modes, levels in a.plan for model in models
                for mode in modes for conns in levels]
    return [(model, mode, conns) for model in a.models for mode in a.modes for conns in a.levels]


def main(argv=None):
    a = parse_args(argv)
    # Servers inherit this: let them have every fd the hard limit allows.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    limits = meta.limits()
    points = plan(a)
    if a.dry_run:
        for i, (model, mode, conns) in enumerate(points, 1):
            c = a.declared[model]["concurrency"]
            why = limit_verdict(c, conns, limits, RSS_GUESS_KB.get(c, 128))
            print(f"[plan {i}/{len(points)}] {model:8} {mode:8} conns={conns:<6} "
                  f"{'not run: ' + why if why else 'would run'}")
        return 0
    for path in (a.server, a.load):
        if not os.access(path, os.X_OK):
            print(f"sweep: not run: {path} is not built (build with ./run.sh build)",
                  file=sys.stderr)
            return 2
    say = cli.reporter(a)
    a.perf_ok, perf_why = meta.perf_available() if a.perf else (False, "--no-perf")
    if not a.perf_ok:
        say(f"sweep: perf stat not run: {perf_why}")
    pinning = ({"server": str(a.server_cpu), "load": str(a.load_cpu), "tool": "taskset"}
               if a.pin else None)
    info = meta.collect(meta.REPO_ROOT, a.build_dir, pinning)
    out_path = Path(a.out_file) if a.out_file else None
    if out_path and out_path.exists():
        print(f"sweep: {out_path} exists; refusing to overwrite it", file=sys.stderr)
        return 2
    result = {"meta": info, "experiment": "echo sweep",
              "config": {"models": a.models, "modes": a.modes, "levels": a.levels,
                         "size": a.size, "duration": a.duration, "warmup": a.warmup,
                         "load_threads": a.load_threads, "server_args": a.server_args,
                         "load_args": a.load_args, "ramp_timeout": a.ramp_timeout,
                         "idle_samples": a.idle_samples, "repeat": a.repeat,
                         "plan": ["/".join(",".join(map(str, x)) for x in g) for g in a.plan]
                         if a.plan else None,
                         "level_args": {c: " ".join(LEVEL_ARGS[c]("N")) for c in LEVEL_ARGS},
                         "server": a.server, "load": a.load, "perf_events": PERF_EVENTS,
                         "perf": a.perf_ok},
              "points": []}
    say(f"sweep: {len(points)} points -> {out_path or 'standard output'}")
    rss_seen = {}
    base_runnable = runnable.baseline()
    result["config"]["runnable_baseline"] = base_runnable
    started, overhead = time.monotonic(), []
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmpdir:
        # The servers' error output: beside the JSON, or thrown away with it on stdout.
        a.logs = out_path.parent / "logs" if out_path else Path(tmpdir)
        a.logs.mkdir(parents=True, exist_ok=True)
        for i, (model, mode, conns) in enumerate(points, 1):
            t0 = time.monotonic()
            c = a.declared[model]["concurrency"]
            why = declared_limit(a.declared[model], conns) or limit_verdict(
                c, conns, limits, rss_seen.get(model, RSS_GUESS_KB.get(c, 128)))
            if why:
                st, reasons = status.skipped(why)
                point = {"status": st, "reasons": reasons, "reason": why}
            else:
                # Other tasks runnable just before the point, beyond the sweep's baseline:
                # what the point will compete with besides itself.
                before = runnable.baseline(5, 0.02)
                a.extra_runnable = (before - base_runnable) if None not in (
                    before, base_runnable) else None
                point = measure_point(a, model, mode, conns, tmpdir)
                point["runnable"] = {"baseline": base_runnable, "before": before}
                if point["status"] in status.MEASURED:
                    overhead.append(time.monotonic() - t0 - a.repeat * (a.duration + a.warmup))
                    # PSS counts pages shared by fork children once, so it predicts memory
                    # use better than summed VmRSS; both were sampled at this point.
                    mem = point["rss"]
                    per = next(v for v in (mem["pss_per_conn_kb"], mem["pss_peak_per_conn_kb"],
                                           mem["per_conn_kb"]) if v is not None)
                    rss_seen[model] = max(rss_seen.get(model, 0), int(per * 1.5) + 1)
            point.update(model=model, mode=mode, conns=conns,
                         seconds=round(time.monotonic() - t0, 3))
            result["points"].append(point)
            write_json(out_path, result)
            left = sum(1 for m, _, n in points[i:]
                       if not limit_verdict(a.declared[m]["concurrency"], n, limits,
                                            rss_seen.get(m, RSS_GUESS_KB.get(
                                                a.declared[m]["concurrency"], 128))))
            setup = sum(overhead) / len(overhead) if overhead else 2
            per_point = a.repeat * (a.warmup + a.duration) + setup
            say(f"[sweep {i}/{len(points)}] {model:8} {mode:8} conns={conns:<6} "
                f"{summary(point)}  (elapsed {fmt_secs(time.monotonic() - started)}, "
                f"ETA {fmt_secs(left * per_point)})")
        if out_path and not any(a.logs.iterdir()):
            a.logs.rmdir()
    say(f"sweep: done in {fmt_secs(time.monotonic() - started)}")
    if not out_path:
        cli.emit(result, a, "sweep")
    return 0


if __name__ == "__main__":
    sys.exit(main())
