"""The host's pace over a timed window: host-pace (harness/bench/host_pace.c), pinned to the
server's CPU, times a fixed spin every 10 ms while the window runs; a window in which the spin
was slow for much of the time was measured while the host held the vCPU back, and is taken
again.

Why: a Firecracker guest reports no steal time, and on the 2-core AMD EPYC VM the host at
times gave a vCPU about a third of its speed for one to five seconds at once. In such seconds
the spin's median was 27 us against 11 us, and an epoll echo server served 86,000 instead of
125,000 req/s (results/notes/harness.md). A server's CPU time per request counts the held-back
time as its own: in one fiberio run of 6 rounds the epoll server read 5.5 us per request in
two rounds and 10.5-11.9 in three others, and the rounds' fiber/epoll ratios ranged from 0.78
to 1.10. The spin's fastest samples are not slowed even in such seconds (the host time-slices
the vCPU), so the floor is the fastest sample seen.

    Watch(exe, cpus)          starts a probe per window (start()), reads it (finish(proc),
                              optionally only a span of it): {"samples", "floor_ns",
                              "median_ns", "slow_share", "slowed"}
    reading(samples, floor)   the same from a list of ns (the rule, testable alone)
    stalls(samples, at)       the held-back stretches of a long run, for a program of short
                              pieces (switch-bench's repetitions; overlaps() tells which)
    retaking(measure, watch)  measure() again while the host held it back, RETAKES times at most
    start_floors(build, cpus) the fastest spin per CPU at a run's start, which the suite hands
                              its steps (FLOOR_ENV) as the floor their watches begin with
"""
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from lib import cpu

EXE = "host-pace"
# A sample this many times the floor was held back: beside a busy echo server on the AMD EPYC
# VM, 0-12% of a calm second's samples took over 1.5x the fastest, 65-80% of a held-back one's.
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


def floor_of(samples, floor=None):
    """The fastest of the samples (ns; those that failed, 0, left out) and `floor`, the
    fastest seen before; None when there is neither."""
    seen = [x for x in samples if x > 0] + ([floor] if floor is not None else [])
    return min(seen) if seen else None


def reading(samples, floor=None):
    """What a window's samples (ns) say: the floor (the fastest sample here or, when given, of
    the windows before), the median, the share of samples over SLOW_FACTOR x the floor, and
    whether the window was held back (slowed)."""
    samples = [s for s in samples if s > 0]
    if not samples:
        return {"samples": 0, "floor_ns": floor, "median_ns": None, "slow_share": None,
                "slowed": False}
    low = floor_of(samples, floor)
    share = sum(1 for s in samples if s > SLOW_FACTOR * low) / len(samples)
    return {"samples": len(samples), "floor_ns": low, "median_ns": statistics.median(samples),
            "slow_share": round(share, 3),
            "slowed": len(samples) >= MIN_SAMPLES and share > SLOWED_SHARE}


# Samples per stretch read for stalls() (100 ms at the 10 ms period): long enough for the
# share to mean something, short beside the seconds a held-back stretch lasts.
STALL_SAMPLES = 10


def stalls(samples, at, floor=None):
    """[(start, end)] on time.monotonic's clock: the stretches of a long run the host held the
    CPU back, for a program whose own pieces are shorter than a window of the probe's (a
    switch-bench repetition lasts 30 ms in the quick preset). Each STALL_SAMPLES consecutive
    samples (their start times in `at`, ns) more than SLOWED_SHARE of which took over
    SLOW_FACTOR x the floor (the fastest sample, or `floor` when lower) are held back, from the
    first one's start to the last one's end; overlapping ones merge."""
    pairs = [(s, t) for s, t in zip(samples, at) if s > 0]
    if len(pairs) < STALL_SAMPLES:
        return []
    low = floor_of(samples, floor)
    slow = [s > SLOW_FACTOR * low for s, _ in pairs]
    out = []
    for i in range(len(pairs) - STALL_SAMPLES + 1):
        if sum(slow[i:i + STALL_SAMPLES]) / STALL_SAMPLES > SLOWED_SHARE:
            last = pairs[i + STALL_SAMPLES - 1]
            out.append((pairs[i][1] / 1e9, (last[1] + last[0]) / 1e9))
    return merged(out)


def merged(stretches):
    """The stretches, sorted, overlapping ones made one (those of several CPUs' probes)."""
    out = []
    for t0, t1 in sorted(stretches):
        if out and t0 <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], t1))
        else:
            out.append((t0, t1))
    return out


def overlaps(span, stretches):
    """Whether (start, end) overlaps any of the stretches."""
    return any(span[0] < t1 and t0 < span[1] for t0, t1 in stretches)


# The floors a suite measured at its start, for the steps it runs: "CPU:NS,CPU:NS".
FLOOR_ENV = "SWITCHYARD_HOST_PACE_FLOOR"
# How long start_floors() samples, at PERIOD_START_MS: a hundred spins on each CPU, so that
# the fastest is the machine's pace unless the host held it back for all of them.
START_SECONDS = 0.5
PERIOD_START_MS = 5


def start_floors(build_dir, cpus, seconds=START_SECONDS):
    """{cpu: the fastest spin in ns} over `seconds`, a probe pinned to each of `cpus` (all at
    once: each spins 0.2% of its CPU); a CPU whose probe failed is left out, and every CPU
    when the build has no probe."""
    exe = Path(build_dir) / "bin" / EXE
    if not exe.is_file():
        return {}
    ws = [Watch(exe, str(c), PERIOD_START_MS) for c in cpus]
    procs = [w.start() for w in ws]
    time.sleep(seconds)
    floors = {w.cpus: floor_of(w.samples(proc)[0]) for w, proc in zip(ws, procs)}
    return {c: ns for c, ns in floors.items() if ns is not None}


def floor_text(floors):
    """FLOOR_ENV's value for {cpu: ns}."""
    return ",".join(f"{c}:{ns}" for c, ns in sorted(floors.items()))


def env_floor(cpus, env=None):
    """The floor FLOOR_ENV gives for `cpus` (a watch on one CPU), or None: none set, none
    for that CPU, or a value that does not parse (a floor is a hint, never a reason to stop)."""
    text = (os.environ if env is None else env).get(FLOOR_ENV, "")
    for item in text.split(","):
        c, _, ns = item.partition(":")
        if c.strip() == str(cpus).strip() and ns.strip().isdigit() and int(ns) > 0:
            return int(ns)
    return None


class Watch:
    """One probe per window on `cpus`, the floor carried from window to window. It begins at
    the floor the suite measured at the run's start on that CPU (FLOOR_ENV), when there is one:
    a step that starts while the host holds the CPU back would otherwise take its first,
    slowed windows for the machine's pace and find none of them held back."""

    def __init__(self, exe, cpus, period_ms=None):
        self.exe, self.cpus, self.period_ms = str(exe), cpus, period_ms
        self.floor = env_floor(cpus)
        self.held_for_good = False  # the last window kept was held back (retaking())

    def start(self):
        period = ["--period-ms", str(self.period_ms)] if self.period_ms else []
        return subprocess.Popen(cpu.pinned([self.exe] + period, self.cpus), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def samples(self, proc):
        """(samples ns, their start times ns) of a probe, stopped now; empty when it failed."""
        try:
            out, _ = proc.communicate(input="", timeout=10)
            doc = json.loads(out) if proc.returncode == 0 else {}
            return doc.get("samples_ns", []), doc.get("at_ns", [])
        except (subprocess.TimeoutExpired, ValueError, AttributeError):
            proc.kill()
            proc.communicate()
            return [], []

    def stretches(self, proc):
        """stalls() of a probe stopped now, the floor carried as in finish()."""
        samples, at = self.samples(proc)
        self.floor = floor_of(samples, self.floor)
        return stalls(samples, at, self.floor)

    def finish(self, proc, span=None):
        """The window's reading: of the samples that started within span ((start, end) on
        time.monotonic's clock) when given, else of all; the floor learns from all. A probe
        that failed reads as no samples (never slowed)."""
        samples, at = self.samples(proc)
        self.floor = floor_of(samples, self.floor)
        if span is None:
            return reading(samples, self.floor)
        inside = [s for s, t in zip(samples, at) if span[0] * 1e9 <= t <= span[1] * 1e9]
        return dict(reading(inside, self.floor), span_s=round(span[1] - span[0], 3))


def watch(build_dir, cpus):
    """A Watch on cpus with the build's probe, or None when the build has none."""
    exe = Path(build_dir) / "bin" / EXE
    return Watch(exe, cpus) if exe.is_file() else None


# The most CPUs watched at once for a program that is not pinned (every CPU it may run on),
# on a machine of the size this project runs on.
MAX_WATCHED = 8


def watch_every_cpu(bin_dir):
    """([a Watch on each CPU this process may run on], None) with the probe in bin_dir, for a
    program that is not pinned; or ([], why not): more CPUs than MAX_WATCHED, or no probe."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > MAX_WATCHED:
        return [], f"not watched: {len(cpus)} CPUs, more than {MAX_WATCHED}"
    exe = Path(bin_dir) / EXE
    if not exe.is_file():
        return [], f"not watched: no {EXE} built"
    return [Watch(exe, str(c)) for c in cpus], None


class Watches:
    """The server's CPU and the load generator's watched as one (the interface of a Watch):
    a window's reading is the server CPU's, with each CPU's under `cpus` ({"server": ...,
    "load": ...}), and the window is held back when either CPU was. Why the load's: in a
    window where echo-load is bound to its core, the server's CPU per request follows the load
    generator's pace (fewer requests per wake, each epoll_wait serving fewer); on the AMD EPYC
    VM, with the load's CPU held back, both echo servers spent a third more CPU per request
    while the server's CPU read calm (results/notes/harness.md)."""

    def __init__(self, named):
        self.named = dict(named)
        self.held_for_good = False

    def start(self):
        return {k: w.start() for k, w in self.named.items()}

    def finish(self, procs, span=None):
        readings = {k: w.finish(procs[k], span) for k, w in self.named.items()}
        return dict(readings["server"], slowed=any(r["slowed"] for r in readings.values()),
                    cpus=readings)


def watch_pair(build_dir, server_cpu, load_cpu):
    """Watches on the server's and the load's CPUs, a Watch on the server's alone when they
    are one CPU, or None when the build has no probe."""
    server = watch(build_dir, server_cpu)
    if server is None or str(load_cpu) == str(server_cpu):
        return server
    return Watches({"server": server, "load": watch(build_dir, load_cpu)})


def pace_state(rec):
    """Which watched CPUs the host held back in a record's window ({cpu name: slowed}), or
    None when the window was not watched."""
    pace = (rec or {}).get("host_pace")
    if not pace:
        return None
    cpus = pace.get("cpus") or {"server": pace}
    return {k: bool(v.get("slowed")) for k, v in cpus.items()}


def same_pace(a, b):
    """Whether two windows meant to be compared (a round's two legs) ran at one pace: the
    host held back the same watched CPUs in both, or either was not watched. A leg measured
    as the host slowed a CPU, beside one measured before it did, makes a ratio of the host's
    doing."""
    x, y = pace_state(a), pace_state(b)
    return x is None or y is None or x == y


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
