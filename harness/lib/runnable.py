"""How many tasks the machine has runnable: /proc/stat's procs_running (the running and
runnable tasks now, the reader itself included), sampled in the background while something is
measured, so a step or a point can say whether more ran than it accounts for."""
import statistics
import threading
import time
from pathlib import Path


def now():
    """procs_running from /proc/stat (the reader counts itself), or None."""
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("procs_running "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def baseline(samples=10, every=0.05):
    """The median of a few readings a short while apart: the machine's runnable count when
    nothing of ours measures (None when /proc/stat has none)."""
    xs = []
    for i in range(samples):
        if i:
            time.sleep(every)
        v = now()
        if v is not None:
            xs.append(v)
    return statistics.median(xs) if xs else None


def wait_settled(base, slack=1, timeout=60.0, every=0.2, quiet=3):
    """Waits until `quiet` readings in a row are at most base + slack, or `timeout` seconds;
    returns (seconds waited, the last reading, settled)."""
    t0, run, last = time.monotonic(), 0, None
    if base is None:
        return 0.0, None, True
    while time.monotonic() - t0 < timeout:
        last = now()
        run = run + 1 if last is not None and last <= base + slack else 0
        if run >= quiet:
            return round(time.monotonic() - t0, 2), last, True
        time.sleep(every)
    return round(time.monotonic() - t0, 2), last, False


class Sampler(threading.Thread):
    """A reading (procs_running unless `read` says otherwise) every `every` seconds until
    stop(); summary() gives the max, mean and the samples taken."""

    def __init__(self, every=0.2, read=now):
        super().__init__(daemon=True)
        self.every, self.read, self.samples, self._halt = every, read, [], threading.Event()

    def run(self):
        while not self._halt.is_set():
            v = self.read()
            if v is not None:
                self.samples.append(v)
            self._halt.wait(self.every)

    def stop(self):
        self._halt.set()
        self.join(timeout=2)
        return self.summary()

    def summary(self):
        xs = self.samples
        if not xs:
            return {"samples": 0, "max": None, "mean": None}
        return {"samples": len(xs), "max": max(xs), "mean": round(sum(xs) / len(xs), 2),
                "every_s": self.every}
