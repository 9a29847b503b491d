"""One point of the sweep (lib/sweep.py): a fresh echo-server sized for the level, perf
attached, its echo-load repetitions against it back to back with the server's memory sampled in
each, and the point's record with its status, figures per repetition and per request."""
import subprocess
import time

from lib import cpu, host_pace, load, load_site, memory, meta, perf, server, status
from lib.limits import FD_MARGIN

PERF_EVENTS = "syscalls:sys_enter_epoll_ctl,context-switches,cpu-migrations,task-clock"
# Flags that size a model for a level: a process pool serves one connection per process, so
# it gets --procs N (a pool smaller than the level would only measure its backlog).
LEVEL_ARGS = {"process-pool": lambda conns: ["--procs", str(conns)]}


def where(a, role):
    """The CPU of the server or the load, or None when not pinning."""
    return (a.server_cpu if role == "server" else a.load_cpu) if a.pin else None


def start_server(a, model, log, conns=None):
    """The server of one point, or NotStarted (its words are in log)."""
    concurrency = (getattr(a, "declared", None) or {}).get(model, {}).get("concurrency")
    extra = LEVEL_ARGS[concurrency](conns) if concurrency in LEVEL_ARGS and conns else []
    bind = ["--bind", a.bind] if getattr(a, "bind", None) else []
    cmd = [a.server, "--model", model, "--port", "0", *bind, *extra, *a.server_args.split()]
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
    if getattr(a, "fleet", None):
        return load_site.RemoteRun(a.fleet, a.bind, port, load_args(a, mode, conns), a.warmup,
                              a.duration, a.ramp_timeout)
    return load.start(a.load, port, load_args(a, mode, conns), where(a, "load"))


def round_record(i, doc, rc, server_ok, a, server_cores=None):
    """One repetition of a point: its figures and its own status (server_cores: the cores the
    server used in the repetition's window, None when not known)."""
    cores = server_cores_of(a)
    share = server_cores / cores if server_cores is not None and cores else None
    st, why = status.of_load(doc, rc, server_ok, a.load_threads,
                             getattr(a, "extra_runnable", None), status.RUNNABLE_SLACK, share)
    rec = {"round": i, "status": st, "reasons": why, "exit": rc, "server_cores": server_cores}
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


def watched_round(a, srv, mode, conns):
    """load_round, taken again while the host held the server's CPU back in its window
    (lib/host_pace.py, a.pace; the ramp-up is not read: it is not measured): (doc, exit
    status, sample, host) with host the kept repetition's reading and the throughput of the
    ones set aside, or None when the host's pace is not watched."""
    def one():
        doc, rc, sample = load_round(a, srv, mode, conns)
        return {"doc": doc, "rc": rc, "sample": sample}

    def span(rec):
        doc = rec["doc"]
        return window_of(doc, rec["sample"][0], a) if doc and "error" not in doc else None
    rec = host_pace.retaking(one, getattr(a, "pace", None), span)
    host = rec.get("host_pace")
    if host is not None:
        host = dict(host, set_aside=[
            {"requests_per_sec": r["doc"].get("requests_per_sec"),
             "slow_share": r["host_pace"]["slow_share"]}
            for r in rec.get("host_slowed_windows", [])])
    return rec["doc"], rec["rc"], rec["sample"], host


def server_cores_of(a):
    """The cores the server may use: those it is pinned to, or None when it is not pinned (its
    share of the machine then says nothing of its limit)."""
    spot = where(a, "server")
    if spot is None:
        return None
    ranges = [part.split("-") for part in str(spot).split(",")]
    return sum(int(r[-1]) - int(r[0]) + 1 for r in ranges)


# The least span of CPU-time readings a repetition's server cores are read over: the readings
# come in 10 ms ticks, so a shorter span is too coarse to tell 0.95 of a core from one.
CORES_SPAN_S = 0.15


def window_cores(sample, doc, a):
    """The cores the server's process used over one repetition's warm-up and window (echo-load
    at full pace, its ramp-up left out), from the CPU-time readings taken meanwhile; None
    without two readings CORES_SPAN_S apart in it, and for a server of several processes (the
    readings are the first process's alone)."""
    started, (_, procs, _, _, readings) = sample
    if not doc or "error" in doc or procs > 1:
        return None
    w0, w1 = window_of(doc, started, a)
    inside = [(t, c) for t, c in readings if w0 - a.warmup <= t <= w1 and c is not None]
    if len(inside) < 2 or inside[-1][0] - inside[0][0] < CORES_SPAN_S:
        return None
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    return round((c1 - c0) / (t1 - t0), 3)


def window_memory(sample, doc, a):
    """(peak KiB, processes at the peak, the PSS KiB read nearest the window's middle, kernel
    samples) of one repetition, the readings inside its measured window only: a PSS read
    during the ramp-up would count connections not yet open. PSS is None when no reading fell
    inside the window."""
    started, (peak, procs, pss_samples, kern, _) = sample
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


def repetitions(a, one_round, alive, clock=time.monotonic):
    """(results, wall seconds of each, why the budget cut them short or None, rounds planned):
    one_round() up to a.point_rounds times (the step's budget; --repeat without one), asking
    a.another_round(done, last wall seconds) before every round after the first, while
    alive() (the server still runs)."""
    rounds = getattr(a, "point_rounds", None) or a.repeat
    another = getattr(a, "another_round", None)
    out, walls, cut = [], [], None
    for _ in range(rounds):
        if out and not alive():
            break
        if out and another is not None:
            cut = another(len(out), walls[-1])
            if cut:
                break
        t0 = clock()
        out.append(one_round())
        walls.append(clock() - t0)
    return out, walls, cut, rounds


def measure_point(a, model, mode, conns, tmpdir):
    if getattr(a, "fleet", None) and mode == "churn":
        reason = ("churn has no ramp-up for the load hosts' agents to start together from "
                  "(load hosts run pingpong and slow)")
        return {"status": "not run", "reasons": [reason], "reason": reason}
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
    done, walls, cut, rounds = repetitions(a, lambda: watched_round(a, srv, mode, conns),
                                           lambda: srv.proc.poll() is None)
    runs = [(doc, rc) for doc, rc, _, _ in done]
    samples = [sample for _, _, sample, _ in done]
    hosts = [host for _, _, _, host in done]
    perf_result = perf_point(pf)
    stats = srv.stop(15)
    server_ok = srv.returncode == 0 and stats is not None and srv.ended == "exited"
    point = {"status": "ok", "load_exit": runs[0][1], "server_ended": srv.ended,
             "perf": perf_result, "server": stats,
             "rounds": [dict(round_record(i, doc, rc, server_ok or i < len(runs) - 1, a,
                                          window_cores(samples[i], doc, a)),
                             memory=round_memory(samples[i], doc, base, conns, a),
                             **({"host_pace": hosts[i]} if hosts[i] is not None else {}))
                        for i, (doc, rc) in enumerate(runs)]}
    point["load"] = median_load(runs)
    for r, wall in zip(point["rounds"], walls):
        r["wall_s"] = round(wall, 3)
    if cut:
        point["cut"] = f"after {len(runs)} of {rounds} repetitions: {cut}"
    elif len(runs) < rounds:
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
    pss_all = [v for _, (_, _, readings, _, _) in samples for _, v in readings]
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
