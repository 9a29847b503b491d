"""perfstat.py - perf stat attached to a running server process, read back as counts per event.

Shared by the drivers that count a server's kernel entries and CPU time (engines_bench.py,
fiberio_bench.py): the counts are the kernel's own (syscall tracepoints, task-clock), not the
server's."""
import signal
import subprocess
import time
from pathlib import Path


class PerfStat:
    """perf stat attached to a running process; it ends when the process exits."""

    def __init__(self, pid, events, tmpdir):
        self.out = Path(tmpdir) / f"stat-{pid}-{time.monotonic_ns()}.csv"
        self.proc = subprocess.Popen(["perf", "stat", "-x", ",", "-e", events, "-o",
                                      str(self.out), "-p", str(pid)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.3)  # attached before the first request

    def result(self):
        """{event: count}, None for an event perf reports as not counted or not supported."""
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=30)
        counts = {}
        for line in self.out.read_text().splitlines() if self.out.exists() else []:
            f = line.split(",")
            if len(f) > 2 and f[0] and not line.startswith("#"):
                try:
                    counts[f[2]] = float(f[0])
                except ValueError:
                    counts[f[2]] = None
        return counts
