#!/usr/bin/python3
"""Sweep driver: echo-server models x load modes x concurrency levels, measured with echo-load.

For every point it starts a fresh echo-server (pinned to one CPU when asked), waits for its
`listening` line, attaches `perf stat` to it, runs echo-load (pinned to another CPU) and samples
the server's resident memory (summed over its child processes) and the kernel's memory
(KernelStack, SUnreclaim, PageTables in /proc/meminfo: before the server started against the
measured window), then stops the server and keeps its JSON statistics. echo-load first connects
every connection and echoes once on each (the ramp-up, reported in its own block), then warms
up and measures: the window's errors are steady-state errors. A point that would exceed a
limit of this machine (fds, pids, memory, memory maps) is recorded as "not run" with the
reason, never shrunk silently.

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
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)
from drive import cli, cpu, load, perf, server  # noqa: E402

MODES = ["pingpong", "churn", "slow"]
DEFAULT_MODES = ["pingpong", "churn"]  # slow clients are their own experiment (--modes slow)
LEVELS = [1, 2, 4, 10, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
QUICK_LEVELS = [1, 10, 100, 1000]
PERF_EVENTS = "syscalls:sys_enter_epoll_ctl,context-switches,cpu-migrations,task-clock"

FD_MARGIN = 64        # fds a server keeps besides its connections (listener, epoll, stdio ...)
TASK_MARGIN = 512     # pids left free for the rest of the machine
MAP_MARGIN = 1000     # memory maps a process has besides per-connection stacks
MEM_FRACTION = 0.8    # share of MemAvailable a point may expect to use
# Resident memory per connection assumed before a model has been measured (KiB), by the
# model's declared concurrency. Deliberately generous; after the first point the measured
# figure is used instead.
RSS_GUESS_KB = {"thread-per-connection": 128, "process-per-connection": 1024,
                "process-pool": 1024, "thread-pool": 16, "fiber-per-connection": 128,
                "event-loop": 16}
# Kernel tasks per connection, by declared concurrency: these models meet the pid limits.
TASK_PER_CONN = {"thread-per-connection": "threads", "process-per-connection": "processes",
                 "process-pool": "processes"}
# Flags that size a model for a level: a process pool serves one connection per process, so
# it gets --procs N (a pool smaller than the level would only measure its backlog).
LEVEL_ARGS = {"process-pool": lambda conns: ["--procs", str(conns)]}
IDLE_SAMPLES = 5  # /proc/meminfo reads, 0.1 s apart, before the server starts and once idle
# A guarded stack (two memory maps) per connection.
STACK_PER_CONN = ("thread-per-connection", "fiber-per-connection")


def declared_models(server):
    """{model: declared properties} in the registry's order, from `echo-server --list --json`."""
    return {m["name"]: m["props"] for m in meta.registry(server, "sweep")}


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


# ---- limits ------------------------------------------------------------------------------

def limit_verdict(concurrency, conns, limits, rss_per_conn_kb):
    """None if the point fits this machine, else the reason it is not run."""
    if conns + FD_MARGIN > limits["nofile_hard"]:
        return (f"fds: {conns} connections + {FD_MARGIN} exceed the server's RLIMIT_NOFILE "
                f"({limits['nofile_hard']})")
    if concurrency in TASK_PER_CONN:
        cap = min(x for x in (limits["pid_max"], limits["threads_max"], limits["nproc"]) if x)
        used = meta.tasks_in_use() or 0
        if conns + used + TASK_MARGIN > cap:
            return (f"pids: {conns} {TASK_PER_CONN[concurrency]} + "
                    f"{used} tasks alive + {TASK_MARGIN} spare exceed pid_max/threads-max "
                    f"({cap})")
    if concurrency in STACK_PER_CONN:
        # Each guarded stack is two mappings (stack and guard page).
        maps = 2 * conns + MAP_MARGIN
        if limits["max_map_count"] and maps > limits["max_map_count"]:
            return (f"memory maps: {conns} guarded stacks need ~{maps} maps, "
                    f"vm.max_map_count is {limits['max_map_count']}")
    avail = meta.meminfo_kb("MemAvailable")
    need = conns * rss_per_conn_kb
    if avail and need > MEM_FRACTION * avail:
        return (f"memory: ~{need // 1024} MiB expected ({rss_per_conn_kb} KiB per connection) "
                f"exceeds {int(MEM_FRACTION * 100)}% of MemAvailable ({avail // 1024} MiB)")
    return None


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


def run_load(a, port, mode, conns):
    return load.start(a.load, port, [
        "--conns", conns, "--size", a.size, "--duration", a.duration, "--warmup", a.warmup,
        "--mode", mode, "--threads", a.load_threads, "--ramp-timeout", a.ramp_timeout,
        *(a.load_args.split() if mode == "slow" else [])], where(a, "load"))


def sample_memory(proc, server_pid, deadline):
    """While the load runs: the peak resident memory of the server and its children, PSS now
    and then (a walk over thousands of children is slow), and /proc/meminfo's kernel fields at
    every turn, each with its time, so the measured window can be picked out afterwards (its
    start depends on how long the ramp-up took). The interval grows with one walk's time."""
    peak, procs, pss, kern = 0, 1, [], []
    next_pss = 0.0
    # /proc/meminfo is read on its own thread, four times a second: a walk over ten thousand
    # processes takes seconds and must not leave the window without a kernel sample.
    done = threading.Event()

    def read_kernel():
        while not done.is_set():
            kern.append((time.monotonic(), meta.kernel_kb()))
            done.wait(0.25)
    reader = threading.Thread(target=read_kernel, daemon=True)
    reader.start()
    while proc.poll() is None and time.monotonic() < deadline:
        t = time.monotonic()
        rss, n = meta.tree_rss_kb(server_pid, True)
        if rss > peak:
            peak, procs = rss, n
        if t >= next_pss:
            pss.append((t, meta.tree_pss_kb(server_pid, True)))
            next_pss = t + max(1.0, 3 * (time.monotonic() - t))
        # Wait on the load itself, so that its end ends the sampling at once.
        try:
            proc.wait(timeout=max(0.25, 2 * (time.monotonic() - t)))
        except subprocess.TimeoutExpired:
            pass
    done.set()
    reader.join()
    return peak, procs, pss, kern


def window_of(load_json, started, a):
    """(start, end) of echo-load's measured window on our monotonic clock: after its ramp-up
    and warm-up. echo-load's clock starts a few ms after we launched it; that is ignored."""
    ramp = (load_json or {}).get("ramp_up") or {}
    begin = started + (ramp.get("seconds") or 0.0) + a.warmup
    return begin, begin + a.duration


def idle_kernel(n):
    samples = []
    for i in range(max(1, n)):
        if i:
            time.sleep(0.1)
        samples.append(meta.kernel_kb())
    return samples


def measure_point(a, model, mode, conns, tmpdir):
    # The kernel's memory before the server exists: a model that sets up per-connection
    # capacity at start (prefork's workers) owes that to its connections too.
    kern_before = idle_kernel(a.idle_samples)
    log_path = a.logs / f"{model}-{mode}-{conns}.server.stderr"
    try:
        with open(log_path, "w") as log:
            srv = start_server(a, model, log, conns)
    except server.NotStarted as e:
        why = log_path.read_text().strip().splitlines()
        return {"status": "not run" if e.returncode == 2 else "failed",
                "reason": "server did not start: " + (why[-1] if why else
                                                      f"exit {e.returncode}")}
    pid = srv.pid
    limit = meta.nofile_soft(pid)
    if limit is not None and conns + FD_MARGIN > limit:
        srv.stop(5)
        return {"status": "not run",
                "reason": f"fds: {conns} connections + {FD_MARGIN} exceed the server's "
                          f"RLIMIT_NOFILE soft limit ({limit})"}
    # Baselines of the server process alone, for the same reason: prefork's workers exist
    # before the first connection, one per connection it can serve.
    base_rss = meta.rss_kb(pid) or 0
    pf = perf.PerfStat(pid, PERF_EVENTS, tmpdir) if a.perf_ok else None
    base_pss = meta.pss_kb(pid) or 0
    kern_idle = idle_kernel(a.idle_samples)
    ld = run_load(a, srv.port, mode, conns)
    started = time.monotonic()
    deadline = started + a.ramp_timeout + a.warmup + a.duration + 40
    peak, procs, pss_samples, kern = sample_memory(ld, pid, deadline)
    try:
        out, err = ld.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        ld.kill()
        out, err = ld.communicate()
    perf_result = perf_point(pf)
    stats = srv.stop(15)
    point = {"status": "ok", "load_exit": ld.returncode, "server_ended": srv.ended,
             "perf": perf_result, "load": load.parse(out), "server": stats}
    if point["load"] is None:
        point.update(status="failed",
                     reason="echo-load gave no JSON: " + (err.strip().splitlines() or ["?"])[-1])
    w0, w1 = window_of(point.get("load"), started, a)
    in_window = [v for t, v in kern if w0 <= t <= w1]
    mid = (w0 + w1) / 2
    pss = min(pss_samples, key=lambda tv: abs(tv[0] - mid))[1] if pss_samples else None
    point["rss"] = {"baseline_kb": base_rss, "peak_kb": peak, "processes_at_peak": procs,
                    "per_conn_kb": round(max(0, peak - base_rss) / conns, 2),
                    "pss_baseline_kb": base_pss, "pss_mid_kb": pss,
                    "pss_per_conn_kb": (round(max(0, pss - base_pss) / conns, 2)
                                        if pss is not None else None),
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
    if point["status"] != "ok":
        return f"{point['status']}: {point.get('reason', '')}"
    r = point["load"]
    errs = sum(r["errors"].values())
    ramp = r.get("ramp_up") or {}
    kern = (point.get("kernel") or {}).get("per_conn_total_kb")
    return (f"{r['requests_per_sec']:>9.0f} req/s  p99 {r['latency_us']['p99']:>9.1f} us  "
            f"errors {errs}  rss/conn {point['rss']['per_conn_kb']} KiB  kernel/conn "
            f"{kern if kern is not None else 'n/a'} KiB"
            + (f"  ramp {ramp['seconds']:.2f} s ({ramp.get('errors_total', 0)} errors)"
               if ramp else ""))


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
                         "idle_samples": a.idle_samples,
                         "level_args": {c: " ".join(LEVEL_ARGS[c]("N")) for c in LEVEL_ARGS},
                         "server": a.server, "load": a.load, "perf_events": PERF_EVENTS,
                         "perf": a.perf_ok},
              "points": []}
    say(f"sweep: {len(points)} points -> {out_path or 'standard output'}")
    rss_seen = {}
    started, overhead = time.monotonic(), []
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmpdir:
        # The servers' error output: beside the JSON, or thrown away with it on stdout.
        a.logs = out_path.parent / "logs" if out_path else Path(tmpdir)
        a.logs.mkdir(parents=True, exist_ok=True)
        for i, (model, mode, conns) in enumerate(points, 1):
            t0 = time.monotonic()
            c = a.declared[model]["concurrency"]
            why = limit_verdict(c, conns, limits, rss_seen.get(model, RSS_GUESS_KB.get(c, 128)))
            if why:
                point = {"status": "not run", "reason": why}
            else:
                point = measure_point(a, model, mode, conns, tmpdir)
                if point["status"] == "ok":
                    overhead.append(time.monotonic() - t0 - a.duration - a.warmup)
                    # PSS counts pages shared by fork children once, so it predicts memory
                    # use better than summed VmRSS; both were sampled at this point.
                    mem = point["rss"]
                    per = mem["pss_per_conn_kb"] if mem["pss_per_conn_kb"] is not None else \
                        mem["per_conn_kb"]
                    rss_seen[model] = max(rss_seen.get(model, 0), int(per * 1.5) + 1)
            point.update(model=model, mode=mode, conns=conns,
                         seconds=round(time.monotonic() - t0, 3))
            result["points"].append(point)
            write_json(out_path, result)
            left = sum(1 for m, _, n in points[i:]
                       if not limit_verdict(a.declared[m]["concurrency"], n, limits,
                                            rss_seen.get(m, RSS_GUESS_KB.get(
                                                a.declared[m]["concurrency"], 128))))
            per_point = a.warmup + a.duration + (sum(overhead) / len(overhead) if overhead else 2)
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
