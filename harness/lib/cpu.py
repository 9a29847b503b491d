"""Where a process runs and what CPU time it used."""
import contextlib
import os
import shutil


def pinned(cmd, cpus):
    """cmd run under `taskset -c CPUS` (a CPU list such as "0" or "0-1"); unchanged when cpus is
    None or "" (not pinned) or taskset is not installed."""
    cmd = [str(c) for c in cmd]
    if cpus is None or cpus == "" or not shutil.which("taskset"):
        return cmd
    return ["taskset", "-c", str(cpus), *cmd]


@contextlib.contextmanager
def this_process_on(cpu):
    """Runs the calling process on `cpu` for the block when it may use it (else where it was),
    and gives it back its CPUs after: pinned() is for a command started, this for our own
    work measured in place."""
    before = os.sched_getaffinity(0)
    if cpu in before:
        os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def rusage_s(stats):
    """User plus system CPU seconds of a server's whole life, from its statistics line (None
    without one)."""
    if not stats:
        return None
    return (stats.get("cpu_user_s") or 0) + (stats.get("cpu_sys_s") or 0)


def per_request(task_clock_ms, stats, served):
    """(server CPU microseconds per request served, source): perf's task-clock when it counted,
    else the server's own rusage over its whole life (start-up and idle included)."""
    if not served:
        return None, None
    if task_clock_ms:
        return task_clock_ms * 1000.0 / served, "perf task-clock"
    cpu_s = rusage_s(stats)
    if cpu_s is None:
        return None, None
    return cpu_s * 1e6 / served, "server rusage"
