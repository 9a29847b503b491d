"""The fiber IO comparison's measured runs (experiments/fiberio.py, and experiments/peers.py
beside the runtimes people already use): one echo-server variant started on its CPU, and one run
of echo-load against it, counted by perf (count_run: kernel system calls and epoll_ctl per
request) or timed (tput_run: server CPU per request and throughput). `a` is the driver's
parsed command line (server, load, CPUs, connections, sizes, durations)."""
import functools
import sys
from pathlib import Path

from lib import cpu, host_pace, load, meta, perf, runnable, server, status

# The failing driver's name in the one-line errors of a run that cannot go on.
PROG = "fiberio_bench"
SYS_EVENT = "raw_syscalls:sys_enter"
CTL_EVENT = "syscalls:sys_enter_epoll_ctl"
# The calls that only wait for readiness. How many a request costs follows the load's pace,
# not the server's code: a server that keeps up with its client finds its set empty and waits
# once every request or two, one that is behind collects dozens of ready connections a wait
# (2.05 and 2.72 system calls per request from one server and load in two quick runs on the
# AMD EPYC VM, results/notes/harness.md). io_uring_enter is not among them: it submits IO too.
WAIT_CALLS = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select",
              "pselect6")
TRACEFS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


@functools.lru_cache(maxsize=None)
def wait_events():
    """The wait calls' syscall tracepoints this kernel has (a tuple; looked up once)."""
    for root in TRACEFS:
        found = [f"syscalls:sys_enter_{c}" for c in WAIT_CALLS
                 if Path(root, "events", "syscalls", f"sys_enter_{c}").is_dir()]
        if found:
            return tuple(found)
    return ()
# A yardstick variant that is not a model of its own: its model and flags. Each is a control
# of the epoll yardstick, reported as a ratio to it.
YARDSTICK_FLAGS = {"epoll-level": ["--model", "epoll", "--trigger", "level"],
                   "epoll-touch8": ["--model", "epoll", "--touch-lines", "8"]}


def yardstick_args(variant):
    """echo-server's flags for a yardstick variant; the model name is the second."""
    return YARDSTICK_FLAGS.get(variant, ["--model", variant])


# ---- processes -----------------------------------------------------------------------------

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
    waits = wait_events()
    pf = perf.PerfStat(srv.pid, ",".join([SYS_EVENT, CTL_EVENT, *waits]), tmpdir) \
        if a.perf_ok else None
    # Streamed requests are 256 times larger: a tenth as many keeps the run about as long.
    want = a.count_requests // 10 if kind == "stream" else a.count_requests
    ld = run_load(a, srv.port, kind, requests=max(want, 100))
    sj = stop_server(srv)
    counts = pf.result() if pf else {}
    n = sj["bytes"] // request_size(a, kind)
    sysc, ctl = counts.get(SYS_EVENT), counts.get(CTL_EVENT)
    waited = [counts.get(e) for e in waits]
    waited = sum(waited) if waited and None not in waited else None
    reads = sj.get("fiber_reads")
    return {
        "variant": variant, "load": kind, "kind": "count", "loadavg": la,
        "conns": load_args(a, kind)[1],
        "requests_served": n, "load_requests": ld["requests"],
        "syscalls": sysc, "epoll_ctl_kernel": ctl,
        "syscalls_per_request": sysc / n if sysc is not None and n else None,
        "waits": waited,
        "waits_per_request": waited / n if waited is not None and n else None,
        "io_syscalls_per_request": (sysc - waited) / n
        if None not in (sysc, waited) and n else None,
        "epoll_ctl_per_request": ctl / n if ctl is not None and n else None,
        "eagain_per_request": reads["again"] / n if reads and n else None,
        "waited_first_per_request": reads["waited_first"] / n if reads and n else None,
        "server_json": {k: sj.get(k) for k in ("read_policy", "engine", "epoll_ctl",
                                               "fiber_reads", "kernel_switches")},
        # Kernel counts per request: whatever else runs, the same for the same schedule (the
        # waits per request follow the schedule, see WAIT_CALLS).
        "status": "ok", "reasons": [],
    }


def tput_run(a, variant, kind, tmpdir, run_kind="tput"):
    """One timed window of a server variant, taken again while the host held the server's CPU
    back (lib/host_pace.py; a.pace is the driver's Watch, None when the build has no probe)."""
    return host_pace.retaking(lambda: timed_window(a, variant, kind, tmpdir, run_kind),
                              getattr(a, "pace", None))


def timed_window(a, variant, kind, tmpdir, run_kind):
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
