"""The host's pace over a timed window: host-pace (harness/bench/host_pace.c), pinned to the
server's CPU, times a fixed spin every 10 ms while the window runs; a window in which the spin
was slow for much of the time was measured while the host held the vCPU back, and is taken
again.

Why: a Firecracker guest reports no steal time, and on the 2-core AMD EPYC VM the host at
times gave a vCPU about a third of its speed for one to five seconds at once. In such seconds
the spin's median was 27 us against 11 us, and an epoll echo server served 86,000 instead of
125,000 req/s (results/notes/harness.md). A server's CPU time per request counts the held-back
time as its own, so in one comparison the same server read 5.7 and 15 us per request in
different rounds, and a paired ratio whose two windows fell on either side of such a stretch
read 0.78 or 1.10 where the calm rounds read 1.01-1.05. The spin's fastest samples are
not slowed even then (the host time-slices the vCPU), so the floor is the fastest sample seen.

    Watch(exe, cpus)          starts a probe per window (start()), reads it (finish(proc),
                              optionally only a span of it): {"samples", "floor_ns",
                              "median_ns", "slow_share", "slowed"}
    reading(samples, floor)   the same from a list of ns (the rule, testable alone)
    retaking(measure, watch)  measure() again while the host held it back, RETAKES times at most
"""
import json
import statistics
import subprocess
from pathlib import Path

from lib import cpu

EXE = "host-pace"
# A sample this many times the floor was held back: the spin's own spread on a calm CPU shared
# with a busy server is under 1.2x in 19 samples of 20 (the AMD EPYC VM; 0-12% of samples per
# second over 1.5x in calm seconds, 65-80% in held-back ones).
SLOW_FACTOR = 1.5
# A window is held back when more than this share of its samples were: the calm seconds'
# shares stayed at or below 0.12, the held-back ones' at or above 0.65.
SLOWED_SHARE = 0.3
# Fewer samples than this say nothing (a window shorter than 0.1 s at the 10 ms period).
MIN_SAMPLES = 10
# Windows taken again at most: held-back stretches last seconds, longer than a quick window,
# so a window taken at once may fall in the same stretch; the last take is kept either way,
# marked. A window kept held back marks the host as held back for good: the windows after it
# are kept as they come until one reads calm, so that such a host slows a step by RETAKES
# windows, not by RETAKES for every window.
RETAKES = 2


def reading(samples, floor=None):
    """What a window's samples (ns) say: the floor (the fastest sample here or, when given, of
    the windows before), the median, the share of samples over SLOW_FACTOR x the floor, and
    whether the window was held back (slowed)."""
    samples = [s for s in samples if s > 0]
    if not samples:
        return {"samples": 0, "floor_ns": floor, "median_ns": None, "slow_share": None,
                "slowed": False}
    low = min(samples) if floor is None else min(floor, min(samples))
    share = sum(1 for s in samples if s > SLOW_FACTOR * low) / len(samples)
    return {"samples": len(samples), "floor_ns": low, "median_ns": statistics.median(samples),
            "slow_share": round(share, 3),
            "slowed": len(samples) >= MIN_SAMPLES and share > SLOWED_SHARE}


class Watch:
    """One probe per window on `cpus`, the floor carried from window to window."""

    def __init__(self, exe, cpus):
        self.exe, self.cpus, self.floor = str(exe), cpus, None
        self.held_for_good = False  # the last window kept was held back (retaking())

    def start(self):
        return subprocess.Popen(cpu.pinned([self.exe], self.cpus), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc, span=None):
        """The window's reading: of the samples that started within span ((start, end) on
        time.monotonic's clock) when given, else of all; the floor learns from all. A probe
        that failed reads as no samples (never slowed)."""
        try:
            out, _ = proc.communicate(input="", timeout=10)
            doc = json.loads(out) if proc.returncode == 0 else {}
            samples, at = doc.get("samples_ns", []), doc.get("at_ns", [])
        except (subprocess.TimeoutExpired, ValueError, AttributeError):
            proc.kill()
            proc.communicate()
            samples, at = [], []
        every = reading(samples, self.floor)
        if every["samples"]:
            self.floor = every["floor_ns"]
        if span is None:
            return every
        inside = [s for s, t in zip(samples, at) if span[0] * 1e9 <= t <= span[1] * 1e9]
        return dict(reading(inside, self.floor), span_s=round(span[1] - span[0], 3))


def watch(build_dir, cpus):
    """A Watch on cpus with the build's probe, or None when the build has none."""
    exe = Path(build_dir) / "bin" / EXE
    return Watch(exe, cpus) if exe.is_file() else None


def retaking(measure, w, span_of=None):
    """measure() -> a window's record, with its host reading (`host_pace`) when w watches
    (None: measured once, as it comes); span_of(record), when given, -> the window's (start,
    end) on time.monotonic's clock, the part of the run read (a sweep repetition's ramp-up is
    not its window). A window the host held back is measured again, at most RETAKES times; the
    record kept is the last, and the ones set aside are listed in it (`host_slowed_windows`,
    measure()'s records). While the host is held back for good (w.held_for_good: the last
    window kept was held back), a window is kept as it comes."""
    set_aside = []
    while True:
        proc = w.start() if w else None
        rec = measure()
        if proc is None:
            return rec
        rec["host_pace"] = w.finish(proc, span_of(rec) if span_of else None)
        held = rec["host_pace"]["slowed"]
        if held and not w.held_for_good and len(set_aside) < RETAKES:
            set_aside.append(rec)
            continue
        w.held_for_good = held
        if set_aside:
            rec["host_slowed_windows"] = set_aside
        return rec
