"""What a measured point can be used for, decided by the driver that measured it from the load
generator's own figures: `status` (one of STATUSES) and `reasons` (strings), the same meanings
as plots/data.py's point_status, which takes a driver's word when a point carries both.

    ok            measured, nothing in the way
    client-bound  echo-load used (nearly) its whole core: the figure may measure the load
                  generator, not the server (CPU per request stays the server's own); not
                  when the server used (nearly) all of its own cores too
    contended     more tasks were runnable during the point than the run itself accounts for
    limit         a limit of this machine (fds, pids, memory maps, FD_SETSIZE) stopped it
    failed        nothing measured, too many requests failed, or the server died
    not run       not attempted for another reason
"""
STATUSES = ("ok", "client-bound", "contended", "limit", "failed", "not run")
# Worst first: a point with several findings takes the first of these.
SEVERITY = ("failed", "limit", "not run", "contended", "client-bound", "ok")
# echo-load's share of one core above which its figures may be its own.
CLIENT_CORE_SHARE = 0.9
# The server's share of its cores above which it was at its limit too: a faster client could
# have raised its throughput by at most 1/share - 1 (5%), so the figure is the server's.
SERVER_CORE_SHARE = 0.95
# Runnable tasks (procs_running) beyond the run's own baseline that make a point contended:
# more than one other task competing for two cores.
RUNNABLE_SLACK = 1
# Statuses whose figures were measured (a figure the load generator does not set may use them).
MEASURED = ("ok", "client-bound", "contended")
# Statuses whose server CPU per request stands: a load generator at its limit sends fewer
# requests, but what each cost the server is still the server's own (other jobs' runnable
# tasks, "contended", share its caches and cores, so those are left out).
SERVER_CPU = ("ok", "client-bound")
# echo-load's exit status when more than --max-failed of the measured requests failed.
EXIT_TOO_MANY_FAILED = 4
LIMIT_WORDS = ("limit", "RLIMIT", "pid_max", "threads-max", "max_map_count", "FD_SETSIZE",
               "Too many open files", "fds:", "pids:", "memory maps:")


def is_limit(reason):
    return any(w in (reason or "") for w in LIMIT_WORDS)


def worst(statuses):
    """The most severe of several statuses ("ok" for none)."""
    found = [s for s in SEVERITY if s in statuses]
    return found[0] if found else "ok"


def of_load(ld, exit_code=None, server_ok=True, load_cores=1, extra_runnable=None,
            runnable_limit=None, server_share=None):
    """(status, reasons) of one echo-load run from its JSON `ld` (None: it printed none), its
    exit status, whether the server survived, the cores echo-load's workers had (its share is
    cores_used / load_cores), the runnable tasks seen beyond the run's own (extra_runnable,
    against runnable_limit), and the server's share of its own cores in the window (None:
    not known). A load generator at its limit beside a server at its own (SERVER_CORE_SHARE)
    is not client-bound: the server could not have gone faster."""
    if not ld or "error" in ld:
        why = (ld or {}).get("error") or "no JSON from echo-load"
        return ("limit" if is_limit(why) else "failed"), [f"echo-load: {why[-200:]}"]
    reasons, found = [], []
    errors = ld.get("errors") or {}
    if not ld.get("requests"):
        found.append("failed")
        reasons.append("no request completed in the measured window")
    if exit_code == EXIT_TOO_MANY_FAILED:
        kinds = ", ".join(f"{k} {v}" for k, v in errors.items() if v) or "unfinished"
        limited = errors.get("fd_exhausted") or errors.get("addr_unavailable")
        found.append("limit" if limited else "failed")
        reasons.append(("ran out of fds or ports: " if limited else
                        "more than 1% of the measured requests failed or never completed: ")
                       + kinds + f" (unfinished {ld.get('unfinished') or 0})")
    if ld.get("partial"):
        found.append("failed")
        reasons.append(f"echo-load stopped early ({ld.get('stopped_by', '?')})")
    if not server_ok:
        found.append("failed")
        reasons.append("the server died or failed to stop cleanly")
    cpu = ld.get("cpu") or {}
    share = (cpu.get("cores_used") or 0) / max(1, load_cores)
    if cpu.get("saturated") or share >= CLIENT_CORE_SHARE:
        used = (f"echo-load used {cpu.get('cores_used', 0):.2f} of its {load_cores} core(s)"
                + (" (saturated)" if cpu.get("saturated") else ""))
        if server_share is not None and server_share >= SERVER_CORE_SHARE:
            reasons.append(f"{used}, the server {server_share:.2f} of its own: both at their "
                           "limit, so the throughput is the server's")
        else:
            found.append("client-bound")
            reasons.append(used)
    if extra_runnable is not None and runnable_limit is not None \
            and extra_runnable > runnable_limit:
        found.append("contended")
        reasons.append(f"{extra_runnable:.1f} more tasks runnable than the run's own "
                       f"(limit {runnable_limit})")
    return worst(found), reasons


def of_rounds(records):
    """(status, reasons) of a point measured in several rounds: the worst round's status, each
    reason prefixed with its round."""
    status = worst([r.get("status", "ok") for r in records])
    reasons = [f"round {r.get('round', i) + 1}: {why}" for i, r in enumerate(records)
               for why in r.get("reasons") or []]
    return status, reasons


def skipped(reason):
    """(status, reasons) of a point that was not attempted: limit when a limit says so."""
    return ("limit" if is_limit(reason) else "not run"), [reason]
