"""perf stat, attached to a running process or around a command, read back as counts per
event: the kernel's own counts (syscall tracepoints, task-clock), not the program's."""
import signal
import subprocess
import time
from pathlib import Path


def parse_csv(text):
    """{event: count} from `perf stat -x ,` output; None for an event perf reports as not
    counted or not supported."""
    counts = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] and not line.startswith("#"):
            try:
                counts[f[2]] = float(f[0])
            except ValueError:
                counts[f[2]] = None
    return counts


def _read(path):
    return parse_csv(path.read_text()) if path.exists() else {}


class PerfStat:
    """perf stat attached to a running process; it ends when the process exits."""

    def __init__(self, pid, events, tmpdir):
        self.out = Path(tmpdir) / f"stat-{pid}-{time.monotonic_ns()}.csv"
        self.proc = subprocess.Popen(["perf", "stat", "-x", ",", "-e", events, "-o",
                                      str(self.out), "-p", str(pid)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # attached before the first request

    def result(self, wait=30):
        """The counts, once perf has ended: it ends with the process it watches; after `wait`
        seconds (0: at once) it is told to stop."""
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return _read(self.out)


def count(cmd, events, tmpdir, timeout=120):
    """perf stat around a whole command: ({event: count}, the command's exit status)."""
    out = Path(tmpdir) / f"stat-{time.monotonic_ns()}.csv"
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", events, "-o", str(out), "--",
                        *[str(c) for c in cmd]], capture_output=True, text=True,
                       timeout=timeout)
    return _read(out), p.returncode


SYSCALL_EVENT = "raw_syscalls:sys_enter"
SWITCH_LOOP = 20000  # switches of the shorter run; the longer makes twice as many


def syscalls_per_switch(switch_tests, backend, tmpdir):
    """System calls per switch as the kernel counts them: perf around `switch-tests
    syscall-loop BACKEND N` with SWITCH_LOOP and twice as many switches, so that start-up and
    teardown cancel out. {"per_switch": value or None, "status": "ok" | "not run" | "failed",
    "counts": [short, long], "why": what went wrong}."""
    counts = []
    for n in (SWITCH_LOOP, 2 * SWITCH_LOOP):
        try:
            got, rc = count([switch_tests, "syscall-loop", backend, n], SYSCALL_EVENT, tmpdir)
        except OSError as e:
            return {"per_switch": None, "status": "not run", "counts": counts,
                    "why": f"perf cannot run: {e.strerror}"}
        if got.get(SYSCALL_EVENT) is None:
            return {"per_switch": None, "status": "not run", "counts": counts,
                    "why": f"perf did not count {SYSCALL_EVENT}"}
        if rc != 0:
            return {"per_switch": None, "status": "failed", "counts": counts,
                    "why": f"switch-tests syscall-loop {backend} {n} exited {rc}"}
        counts.append(int(got[SYSCALL_EVENT]))
    return {"per_switch": (counts[1] - counts[0]) / SWITCH_LOOP, "status": "ok",
            "counts": counts, "why": None}
