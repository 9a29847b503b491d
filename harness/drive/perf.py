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
