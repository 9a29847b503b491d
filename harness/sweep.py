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

Results go to a new folder results/runs/<host>/<UTC date>-<git sha>/sweep.json, rewritten after
every point so an interrupted sweep keeps what it measured.
"""
import argparse
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)

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
    ap = argparse.ArgumentParser(
        prog="sweep.py", description=__doc__.split("\n\n")[0],
        epilog="Example: /usr/bin/python3 harness/sweep.py --quick --models epoll,thread")
    ap.add_argument("--build-dir",
                    help="where bin/echo-server and bin/echo-load are (default: build/, or the "
                         "build folder of --load)")
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
    ap.add_argument("--out-name", default="sweep.json",
                    help="file name in the run folder (default sweep.json)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="do not pin (default: server on CPU 0, load on CPU 1 when both exist)")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    ap.add_argument("--no-perf", dest="perf", action="store_false",
                    help="skip the perf stat counts")
    ap.add_argument("--out", default=str(meta.REPO_ROOT / "results" / "runs"),
                    help="root of the run folders (default: results/runs)")
    ap.add_argument("--run-dir", help="write into this existing run folder instead of a new one")
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

def pinned(cmd, cpu, pin):
    return ["taskset", "-c", str(cpu), *cmd] if pin else cmd


def start_server(a, model, log, conns=None):
    concurrency = (getattr(a, "declared", None) or {}).get(model, {}).get("concurrency")
    extra = LEVEL_ARGS[concurrency](conns) if concurrency in LEVEL_ARGS and conns else []
    cmd = pinned([a.server, "--model", model, "--port", "0", *extra, *a.server_args.split()],
                 a.server_cpu, a.pin)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    # taskset execs the server, so proc.pid is the server itself. Thousands of pre-forked
    # workers take a while to report ready.
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    line = proc.stdout.readline().strip() if ready else ""
    if not line.startswith("listening "):
        stop_process(proc, 2)
        return proc, None
    return proc, int(line.rsplit(":", 1)[1])


def stop_process(proc, timeout):
    """SIGTERM, then SIGKILL if needed; returns (stdout, how it ended)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return out or "", "exited"
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return out or "", "killed after SIGTERM timeout"


def start_perf(a, pid, tmpdir):
    if not a.perf_ok:
        return None, None
    out = Path(tmpdir) / f"perf-{pid}.csv"
    cmd = ["perf", "stat", "-x", ",", "-e", PERF_EVENTS, "-o", str(out), "-p", str(pid)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)  # let perf attach before the load starts
    return proc, out


def finish_perf(proc, out):
    if proc is None:
        return {"status": "not run", "reason": "perf unavailable"}
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    counts = {}
    for line in Path(out).read_text().splitlines() if Path(out).exists() else []:
        f = line.split(",")
        if len(f) >= 3 and f[2] and not line.startswith("#"):
            try:
                counts[f[2]] = float(f[0])
            except ValueError:
                counts[f[2]] = None  # "<not counted>" or "<not supported>"
    if not counts:
        return {"status": "not run", "reason": "perf stat produced no counts"}
    return {"status": "ok", "events": counts,
            "note": "counted over the whole point, warm-up included, for the server process"}


def run_load(a, port, mode, conns):
    cmd = pinned([a.load, "--port", str(port), "--conns", str(conns), "--size", str(a.size),
                  "--duration", str(a.duration), "--warmup", str(a.warmup), "--mode", mode,
                  "--threads", str(a.load_threads), "--ramp-timeout", str(a.ramp_timeout),
                  "--json", *(a.load_args.split() if mode == "slow" else [])],
                 a.load_cpu, a.pin)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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


def measure_point(a, model, mode, conns, run_dir, tmpdir):
    logs = run_dir / "logs"
    logs.mkdir(exist_ok=True)
    # The kernel's memory before the server exists: a model that sets up per-connection
    # capacity at start (prefork's workers) owes that to its connections too.
    kern_before = idle_kernel(a.idle_samples)
    log_path = logs / f"{model}-{mode}-{conns}.server.stderr"
    with open(log_path, "w") as log:
        server, port = start_server(a, model, log, conns)
    if port is None:
        why = log_path.read_text().strip().splitlines()
        status = "not run" if server.returncode == 2 else "failed"
        return {"status": status,
                "reason": "server did not start: " + (why[-1] if why else f"exit {server.returncode}")}
    pid = server.pid
    limit = meta.nofile_soft(pid)
    if limit is not None and conns + FD_MARGIN > limit:
        stop_process(server, 5)
        return {"status": "not run",
                "reason": f"fds: {conns} connections + {FD_MARGIN} exceed the server's "
                          f"RLIMIT_NOFILE soft limit ({limit})"}
    # Baselines of the server process alone, for the same reason: prefork's workers exist
    # before the first connection, one per connection it can serve.
    base_rss = meta.rss_kb(pid) or 0
    perf, perf_out = start_perf(a, pid, tmpdir)
    base_pss = meta.pss_kb(pid) or 0
    kern_idle = idle_kernel(a.idle_samples)
    load = run_load(a, port, mode, conns)
    started = time.monotonic()
    deadline = started + a.ramp_timeout + a.warmup + a.duration + 40
    peak, procs, pss_samples, kern = sample_memory(load, pid, deadline)
    try:
        out, err = load.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        load.kill()
        out, err = load.communicate()
    perf_result = finish_perf(perf, perf_out)
    sout, ended = stop_process(server, 15)
    stats = [l for l in sout.splitlines() if l.startswith("{")]
    point = {"status": "ok", "load_exit": load.returncode, "server_ended": ended,
             "perf": perf_result}
    try:
        point["load"] = json.loads(out)
    except json.JSONDecodeError:
        point.update(status="failed", load=None,
                     reason="echo-load gave no JSON: " + (err.strip().splitlines() or ["?"])[-1])
    try:
        point["server"] = json.loads(stats[-1]) if stats else None
    except json.JSONDecodeError:
        point["server"] = None
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
    a.perf_ok, perf_why = meta.perf_available() if a.perf else (False, "--no-perf")
    if not a.perf_ok:
        print(f"sweep: perf stat not run: {perf_why}")
    pinning = ({"server": str(a.server_cpu), "load": str(a.load_cpu), "tool": "taskset"}
               if a.pin else None)
    info = meta.collect(meta.REPO_ROOT, a.build_dir, pinning)
    run_dir = Path(a.run_dir) if a.run_dir else meta.new_run_dir(a.out, info)
    run_dir.mkdir(parents=True, exist_ok=True)
    out_path = run_dir / a.out_name
    if out_path.exists():
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
    print(f"sweep: {len(points)} points -> {out_path}")
    rss_seen = {}
    started, overhead = time.monotonic(), []
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmpdir:
        for i, (model, mode, conns) in enumerate(points, 1):
            t0 = time.monotonic()
            c = a.declared[model]["concurrency"]
            why = limit_verdict(c, conns, limits, rss_seen.get(model, RSS_GUESS_KB.get(c, 128)))
            if why:
                point = {"status": "not run", "reason": why}
            else:
                point = measure_point(a, model, mode, conns, run_dir, tmpdir)
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
            print(f"[sweep {i}/{len(points)}] {model:8} {mode:8} conns={conns:<6} "
                  f"{summary(point)}  (elapsed {fmt_secs(time.monotonic() - started)}, "
                  f"ETA {fmt_secs(left * per_point)})", flush=True)
    if (run_dir / "logs").exists() and not any((run_dir / "logs").iterdir()):
        (run_dir / "logs").rmdir()
    print(f"sweep: done in {fmt_secs(time.monotonic() - started)}; results in {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
