"""Measured points (the sweep's, the slow clients', the max-connections run's, fibermem's):
what each point's status lets a figure use it for, and the sweep's readers. data.py re-exports
these names, so the claims and sections read them as `D.point_status`, `D.ok_points`, ...
"""
import statistics

from harness_api import driver_status

# Every measured point's status: what it can be used for. Throughput verdicts use "ok" points
# only; CPU per request stays valid on a client-bound point (the server's CPU is still its own).
POINT_STATUSES = driver_status.STATUSES
# The statuses of a point that measured something (a figure the load generator's speed does
# not set may still use it).
MEASURED = driver_status.MEASURED
SERVER_CPU = driver_status.SERVER_CPU


# ---- sweep points ---------------------------------------------------------------------

def sweep_series(doc, mode, value, allow=MEASURED):
    """{model: [(conns, value), ...]} for measured points whose status (point_status) is in
    `allow`; value(point) may return None."""
    out = {}
    for p in (doc or {}).get("points", []):
        if p.get("mode") != mode or not p.get("load") or point_status(p)[0] not in allow:
            continue
        v = value(p)
        if v is not None:
            out.setdefault(p["model"], []).append((p["conns"], v))
    return {m: sorted(v) for m, v in out.items()}


def sweep_not_run(doc, mode):
    """The points of a mode without a measured figure (failed, limit, not run)."""
    return [p for p in (doc or {}).get("points", [])
            if p.get("mode") == mode and (point_status(p)[0] not in MEASURED
                                          or not p.get("load"))]


def sweep_flagged(doc, mode):
    """A mode's points measured but not ok (client-bound, contended)."""
    return [p for p in (doc or {}).get("points", []) if p.get("mode") == mode and p.get("load")
            and point_status(p)[0] in MEASURED and point_status(p)[0] != "ok"]


def rps_rounds(p):
    """A sweep point's requests/s per repetition (`rounds`; older runs: its one figure)."""
    reps = [r.get("requests_per_sec") for r in p.get("rounds") or []
            if r.get("requests_per_sec") is not None]
    if reps:
        return reps
    v = (p.get("load") or {}).get("requests_per_sec")
    return [v] if v is not None else []


def point_errors(p):
    load = p.get("load") or {}
    return sum((load.get("errors") or {}).values()) + (load.get("mismatches") or 0)

def ramp(p):
    """A sweep point's ramp-up block ({} when the run had none)."""
    return (p.get("load") or {}).get("ramp_up") or {}


def kernel_per_conn(p):
    """(total, {field: KiB}) of the kernel memory per connection a sweep point measured, or
    (None, {}) when it has no kernel figure."""
    k = p.get("kernel") or {}
    return k.get("per_conn_total_kb"), k.get("per_conn_kb") or {}


def server_cpu_us_per_request(p, size):
    """The server's CPU time (its getrusage, children included) per request it echoed in its
    whole life (bytes / size), ramp-up and idle time included; None without the figures."""
    srv = p.get("server") or {}
    cpu = (srv.get("cpu_user_s") or 0) + (srv.get("cpu_sys_s") or 0)
    served = (srv.get("bytes") or 0) / size if size else 0
    return 1e6 * cpu / served if served and cpu else None


def sweep_points(run, model, mode):
    """A model's sweep points of one mode, by connections, whatever their status."""
    return sorted((p for p in (run.get("sweep") or {}).get("points", [])
                   if p.get("model") == model and p.get("mode") == mode),
                  key=lambda p: p["conns"])


# How a driver's time budget (harness/drive/budget.py) words a point it left out: not measured,
# so no evidence that the server works or fails there.
OVER_BUDGET = "over budget"


def over_budget(p):
    """Whether the driver left the point out for want of time (not for a limit)."""
    return p.get("status") == "not run" and (p.get("reason") or "").startswith(OVER_BUDGET)


# The load generator's share of the measured requests that may fail before the point is failed
# (echo-load's own --max-failed default).
FAILED_SHARE = 0.01


def point_status(p):
    """(status, [reasons]) of one measured point (sweep, slow, maxconns, fibermem). A driver
    that classified the point itself (`status` one of POINT_STATUSES, `reasons`) is taken at
    its word; older runs are classified here from what they recorded (fibermem writes
    "not run: why" or "failed: why" into the status itself)."""
    status = p.get("status")
    if status in POINT_STATUSES and "reasons" in p:
        return status, list(p["reasons"] or [])
    if status and status != "ok":
        reason = p.get("reason") or status
        limit = status.startswith("not run") or driver_status.is_limit(reason)
        return ("limit" if limit else "failed"), [reason]
    if status == "ok" and "load" not in p:
        # A record no load generator fed (fibermem's parked fibers): its driver's ok stands.
        return "ok", []
    load = p.get("load") or {}
    if not load:
        return "failed", ["no load generator result"]
    if not load.get("requests"):
        return "failed", ["no request completed in the measured window"]
    failed = point_errors(p) + (load.get("unfinished") or 0)
    if failed > FAILED_SHARE * (load["requests"] + failed):
        errors = load.get("errors") or {}
        kinds = ", ".join(f"{k} {v}" for k, v in errors.items() if v)
        if errors.get("fd_exhausted") or errors.get("addr_unavailable"):
            return "limit", [f"ran out of fds or ports: {kinds}"]
        return "failed", [f"{failed} of {load['requests'] + failed} measured requests failed "
                          f"or never completed ({kinds or 'unfinished'})"]
    reasons = [w for w in load.get("warnings") or [] if "saturated its CPU" in w]
    if (load.get("cpu") or {}).get("saturated") or reasons:
        return "client-bound", reasons or ["echo-load used its whole core"]
    return "ok", []



def status_text(p):
    """A point's status and its reasons on one line, e.g. "limit: fd limit: ...", "ok"."""
    status, why = point_status(p)
    if why == [p.get("status")]:
        return why[0]  # an older record's status already says "STATUS: why"
    return f"{status}: {'; '.join(why)}" if why else status


def ok_points(run, model, mode, allow=("ok",)):
    """A model's points whose status is in `allow`: "ok" alone for throughput; a figure the
    load generator's speed does not set (memory, CPU per request) may add "client-bound"."""
    return [p for p in sweep_points(run, model, mode) if point_status(p)[0] in allow]


def rps(p):
    return p["load"].get("requests_per_sec") or 0.0


# Ok repetitions a client-bound or contended point needs for its throughput to be read on
# them: one saturated repetition of five does not hide how the other four went.
MIN_OK_ROUNDS = 3


def ok_rounds(p):
    """A sweep point's repetitions (`rounds`) whose own status is ok."""
    return [r for r in p.get("rounds") or [] if r.get("status") == "ok"]


def throughput_points(run, model, mode):
    """A model's points whose throughput may be read: the ok points, and the points that are
    client-bound or contended in some of their repetitions but ok in at least MIN_OK_ROUNDS,
    as copies that keep only those ok repetitions (their `load` throughput the median of
    them, their status ok)."""
    out = []
    for p in sweep_points(run, model, mode):
        status = point_status(p)[0]
        if status == "ok":
            out.append(p)
        elif status in ("client-bound", "contended") and p.get("load"):
            ok = [r for r in ok_rounds(p) if r.get("requests_per_sec") is not None]
            if len(ok) >= MIN_OK_ROUNDS:
                median = statistics.median(r["requests_per_sec"] for r in ok)
                out.append(dict(p, rounds=ok, status="ok", ok_of=len(p["rounds"]),
                                load=dict(p["load"], requests_per_sec=median)))
    return out


def peak(run, model, mode, read, upto=None):
    """(point, bound): a model's highest throughput in one mode (at most `upto` connections).
    The best of `read` (points whose throughput is the server's), unless a client-bound point
    measured more: the server served at least that while echo-load, not the server, set the
    pace, so that point is the peak as a lower bound (bound True) and what is read against it
    is a bound too."""
    best = max(read, key=rps, default=None)
    top = max((p for p in sweep_points(run, model, mode)
               if p.get("load") and point_status(p)[0] == "client-bound"
               and (upto is None or p["conns"] <= upto)), key=rps, default=None)
    if top is not None and (best is None or rps(top) > rps(best)):
        return top, True
    return best, False


def memory_top(run, model):
    """A model's largest persistent point >= 100 connections with a memory figure, error-free
    when it has one (the point claim C8 reads and the memory chart stacks), or None."""
    pts = [p for p in ok_points(run, model, "pingpong", ("ok", "client-bound"))
           if p["conns"] >= 100 and (p.get("rss") or {}).get("per_conn_kb") is not None]
    # A point with errors may not have held every connection at once: prefer clean ones.
    pts = [p for p in pts if not point_errors(p)] or pts
    return pts[-1] if pts else None


def memory_points(run):
    """{model: (conns, user KiB, PSS KiB, kernel KiB, {kernel field: KiB})} per connection at
    each model's memory_top point (its first repetition)."""
    per = {}
    for model in run.members("models"):
        top = memory_top(run, model)
        if top:
            kern, parts = kernel_per_conn(top)
            per[model] = (top["conns"], top["rss"]["per_conn_kb"],
                          top["rss"].get("pss_per_conn_kb"), kern, parts)
    return per


def memory_rounds(p):
    """A sweep point's memory per connection in each repetition (`rounds[i].memory`, KiB), as
    [(user, kernel or None)]: user is PSS where every repetition has a PSS reading, else VmRSS
    (one kind for all, so that they compare). Empty for older runs, which sampled memory in the
    first run only."""
    mems = [r["memory"] for r in p.get("rounds") or [] if r.get("memory")]
    key = ("pss_per_conn_kb" if mems and all(m.get("pss_per_conn_kb") is not None for m in mems)
           else "rss_per_conn_kb")
    return [(m[key], m.get("kernel_per_conn_kb")) for m in mems if m.get(key) is not None]


def user_kb(rss_kb, pss_kb):
    """User memory per connection: PSS (fork's children share most of their pages, which a sum
    of VmRSS counts once per child) or VmRSS where there is no PSS."""
    return pss_kb if pss_kb is not None else rss_kb
