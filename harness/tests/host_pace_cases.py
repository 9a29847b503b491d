#!/usr/bin/python3
"""Cases for the host's pace over a timed window (harness/lib/host_pace.py and its probe,
harness/bench/host_pace.c): the probe's samples and its refusals, the reading of a window's
samples, and the windows taken again while the host held the CPU back.

usage: host_pace_cases.py CASE --build-dir DIR
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)
from lib import host_pace as H  # noqa: E402


def exe(a):
    return Path(a.build_dir) / "bin" / H.EXE


def case_samples(a):
    """The probe samples until its input ends, and until SIGTERM: one JSON line of positive
    ns, about one sample per period."""
    p = subprocess.Popen([exe(a), "--period-ms", "5"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    out, _ = p.communicate(input="", timeout=10)
    doc = json.loads(out)
    s = doc["samples_ns"]
    check(p.returncode == 0, "exit 0 at the end of its input", p.returncode)
    check(doc["spin"] == 25000 and doc["period_ms"] == 5, "says its default spin and period",
          doc)
    check(5 <= len(s) <= 70 and min(s) > 0, "a positive sample about every 5 ms over 0.3 s",
          len(s))
    p = subprocess.Popen([exe(a), "--spin", "1000"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=10)
    check(p.returncode == 0 and json.loads(out)["samples_ns"], "SIGTERM ends it with its "
          "samples", (p.returncode, out[:80]))


def case_bad_usage(a):
    """Bad usage exits 2 with a message."""
    refuses([exe(a)], ["--spin", "0"], ["--period-ms", "x"], ["--period-ms"], ["--bogus", "1"],
            ["extra"], ["--max-samples", "99999999999"])


CALM = [11000, 11200, 10900, 12000, 11100, 11500, 13000, 11000, 11050, 11300, 11900, 11000]


def case_reading(a):
    """The rule: a calm window, one held back for most of it (its fastest samples still at the
    floor), one held back throughout with the floor carried from the window before, and a
    window too short to say anything."""
    r = H.reading(CALM)
    check(r["floor_ns"] == 10900 and r["slow_share"] == 0 and not r["slowed"], "calm", r)
    held = CALM[:4] + [27000, 29000, 26000, 30000, 28000, 27500, 26500, 31000]
    r = H.reading(held)
    check(r["slow_share"] == 0.667 and r["slowed"], "8 of 12 at 2.5x: held back", r)
    edge = CALM[:8] + [16400] * 4  # 4 of 12 just over 1.5x the floor: a third, over 0.3
    check(H.reading(edge)["slowed"] and not H.reading(CALM[:9] + [16400] * 3)["slowed"],
          "over 0.3 of the samples held back, and not at 0.25")
    slow = [27000] * 12
    check(not H.reading(slow)["slowed"], "alone, a window held back throughout is its own floor")
    check(H.reading(slow, floor=10900)["slowed"], "with the floor carried, it is held back")
    check(not H.reading([30000] * 5 + [11000] * 4, floor=10900)["slowed"],
          "fewer than MIN_SAMPLES samples say nothing")
    check(H.reading([])["samples"] == 0 and not H.reading([])["slowed"], "no samples")


class FakeWatch:
    """A Watch whose windows read as `slowed` says, one after another."""

    def __init__(self, slowed):
        self.slowed, self.started, self.held_for_good = list(slowed), 0, False

    def start(self):
        self.started += 1
        return self.started

    def finish(self, proc, span=None):
        return {"slowed": self.slowed[proc - 1], "span": span}


def case_retaking(a):
    """A window the host held back is taken again, at most RETAKES times, the ones set aside
    listed in the kept one; without a watch a window is taken once."""
    takes = []

    def measure():
        takes.append(len(takes))
        return {"take": takes[-1]}
    rec = H.retaking(measure, FakeWatch([True, False, True]))
    check(len(takes) == 2 and rec["take"] == 1 and not rec["host_pace"]["slowed"],
          "the calm second take is kept", rec)
    check([r["take"] for r in rec["host_slowed_windows"]] == [0], "the first set aside", rec)
    takes.clear()
    rec = H.retaking(measure, FakeWatch([True] * 5))
    check(len(takes) == H.RETAKES + 1 and rec["host_pace"]["slowed"], "held back throughout: "
          "RETAKES more takes, the last kept and marked", (len(takes), rec))
    check(len(rec["host_slowed_windows"]) == H.RETAKES, "every earlier take listed", rec)
    # Held back for good: the windows after one kept held back are kept as they come until
    # one reads calm; then retaking starts again.
    w = FakeWatch([True] * (H.RETAKES + 1) + [True, False, True, False])
    counts = []
    for _ in range(4):
        takes.clear()
        rec = H.retaking(measure, w)
        counts.append((len(takes), rec["host_pace"]["slowed"]))
    check(counts == [(H.RETAKES + 1, True), (1, True), (1, False), (2, False)],
          "after a window kept held back, one take a window until a calm one", counts)
    takes.clear()
    rec = H.retaking(measure, None)
    check(takes == [0] and rec == {"take": 0}, "no watch: once, as it came", rec)
    takes.clear()
    rec = H.retaking(measure, FakeWatch([True, False]), lambda r: (r["take"], r["take"] + 1))
    check(rec["host_pace"]["span"] == (1, 2) and
          rec["host_slowed_windows"][0]["host_pace"]["span"] == (0, 1),
          "each take read over its own span", rec)
    takes.clear()
    rec = H.retaking(measure, FakeWatch([False]))
    check(takes == [0] and "host_slowed_windows" not in rec, "calm: once", rec)


def case_watch(a):
    """The real probe over a short window on this machine: samples read, the floor carried to
    the next window; a build without the probe gives no watch."""
    w = H.watch(a.build_dir, "0")
    check(w is not None, "the build has the probe", exe(a))
    proc = w.start()
    time.sleep(0.5)  # MIN_SAMPLES at 10 ms, on a loaded CPU 0 too
    r = w.finish(proc)
    check(r["samples"] >= H.MIN_SAMPLES and r["floor_ns"] > 0, "a window read", r)
    first = w.floor
    proc = w.start()
    time.sleep(0.15)
    r2 = w.finish(proc)
    check(w.floor <= first and r2["floor_ns"] == w.floor, "the floor carried", (first, r2))
    check(H.watch("/nonexistent", "0") is None, "no probe, no watch")
    proc = w.start()
    t0 = time.monotonic()
    time.sleep(0.4)
    r3 = w.finish(proc, (t0 + 0.1, t0 + 0.3))
    check(6 <= r3["samples"] <= 21 and r3["span_s"] == 0.2,
          "a span of 0.2 s reads its own samples, about one per 10 ms", r3)
    check(w.finish(w.start(), (0.0, 1.0))["samples"] == 0, "a span before the probe: none")


def case_watches(a):
    """The server's CPU and the load's watched as one: the window is held back when either
    was, each CPU's reading kept under `cpus`, the server's the record's own; one CPU is one
    Watch; a build without the probe gives none. same_pace() pairs two legs only when the
    host held back the same CPUs in both, or one was not watched."""
    w = H.Watches({"server": FakeWatch([False, False]), "load": FakeWatch([True, False])})
    r = w.finish(w.start())
    check(r["slowed"] and r["cpus"]["load"]["slowed"] and not r["cpus"]["server"]["slowed"],
          "the load's CPU held back: the window is", r)
    r = w.finish(w.start())
    check(not r["slowed"] and set(r["cpus"]) == {"server", "load"}, "both calm: calm", r)
    takes = []
    rec = H.retaking(lambda: takes.append(1) or {},
                     H.Watches({"server": FakeWatch([False, False]),
                                "load": FakeWatch([True, False])}))
    check(len(takes) == 2 and len(rec["host_slowed_windows"]) == 1,
          "a window the load's CPU was held back in is taken again", (takes, rec))
    check(isinstance(H.watch_pair(a.build_dir, "0", "1"), H.Watches) and
          isinstance(H.watch_pair(a.build_dir, "0", "0"), H.Watch) and
          H.watch_pair("/nonexistent", "0", "1") is None, "a pair, one CPU, no probe")

    def leg(server, load=None):
        cpus = {"server": {"slowed": server}}
        if load is not None:
            cpus["load"] = {"slowed": load}
        return {"host_pace": {"slowed": server or bool(load), "cpus": cpus}}
    check(H.same_pace(leg(False, False), leg(False, False)) and
          H.same_pace(leg(True, True), leg(True, True)), "held back alike: one pace")
    check(not H.same_pace(leg(False, True), leg(False, False)) and
          not H.same_pace(leg(True, False), leg(False, False)),
          "one leg held back where the other was not: two paces")
    check(H.same_pace({}, leg(True, True)) and H.same_pace(leg(False), {"host_pace": None}),
          "a leg not watched says nothing")
    check(H.pace_state({"host_pace": {"slowed": True}}) == {"server": True},
          "a window watched on the server's CPU alone", "")


def case_start_floor(a):
    """The run's starting floors (start_floors) reach a step's watches through FLOOR_ENV: a
    watch begins at its CPU's floor and reads a window against it; a floor that is absent, for
    another CPU or malformed is none; a faster window's own samples take over."""
    floors = H.start_floors(a.build_dir, [0], seconds=0.2)
    check(set(floors) == {"0"} and floors["0"] > 0, "a floor for CPU 0", floors)
    check(H.start_floors("/nonexistent", [0]) == {}, "no probe, no floors")
    text = H.floor_text({"1": 10300, "0": 10200})
    check(text == "0:10200,1:10300", "the variable's text", text)
    env = {H.FLOOR_ENV: text}
    check(H.env_floor("1", env) == 10300 and H.env_floor(0, env) == 10200,
          "each CPU's floor", text)
    check(H.env_floor("2", env) is None and H.env_floor("0", {}) is None and
          H.env_floor("0", {H.FLOOR_ENV: "0:abc,0:-5,0"}) is None,
          "another CPU's, none, or malformed: no floor")
    # A floor far below this machine's spin: every sample of the window is slow against it.
    os.environ[H.FLOOR_ENV] = "0:1"
    w = H.watch(a.build_dir, "0")
    check(w.floor == 1, "the watch begins at the run's floor", w.floor)
    proc = w.start()
    time.sleep(0.5)
    r = w.finish(proc)
    check(r["floor_ns"] == 1 and r["slowed"], "a window read against the run's floor", r)
    # A floor above every sample: the window's own fastest is the floor.
    os.environ[H.FLOOR_ENV] = "0:999999999"
    w = H.watch(a.build_dir, "0")
    proc = w.start()
    time.sleep(0.5)
    r = w.finish(proc)
    check(r["floor_ns"] < 999999999, "a faster window's own floor", r)
    del os.environ[H.FLOOR_ENV]
    check(H.watch(a.build_dir, "0").floor is None, "no variable: no floor to begin from")


def case_stalls(a):
    """The held-back stretches of a long run: 100 samples 10 ms apart, 20 of them slowed in a
    row, read as one stretch from the first window holding more than 0.3 of slow samples to
    the last; a calm run has none; two stalls far apart are two stretches."""
    at = [i * 10_000_000 for i in range(100)]
    calm = [11000 + (i % 7) * 300 for i in range(100)]
    held = [27000 if 40 <= i < 60 else x for i, x in enumerate(calm)]
    got = H.stalls(held, at)
    check(len(got) == 1, "one stretch", got)
    t0, t1 = got[0]
    # Windows of 10 from sample 34 (4 slow: 40-43) to sample 56 (4 slow: 56-59).
    check(abs(t0 - 0.34) < 1e-9 and abs(t1 - (0.65 + calm[65] * 1e-9)) < 1e-9,
          "from the first window with 4 slow samples to the end of the last", got)
    check(H.stalls(calm, at) == [], "calm: none")
    check(H.stalls(held[:9], at[:9]) == [], "fewer samples than a window: none")
    two = [27000 if 10 <= i < 20 or 70 <= i < 80 else x for i, x in enumerate(calm)]
    check(len(H.stalls(two, at)) == 2, "two stalls, two stretches", H.stalls(two, at))
    check(H.stalls([27000] * 20, at[:20], floor=11000) != [] and
          H.stalls([27000] * 20, at[:20]) == [], "held back throughout: only against a floor")
    check(H.merged([(3, 4), (1, 2), (1.5, 2.5), (2.5, 2.6)]) == [(1, 2.6), (3, 4)],
          "merged: sorted, overlapping ones one", H.merged([(3, 4), (1, 2), (1.5, 2.5)]))
    check(H.overlaps((0.5, 0.6), got) and not H.overlaps((0.1, 0.2), got) and
          not H.overlaps((0.7, 0.8), got), "overlaps")


def case_switch_bench_stamps(a):
    """switch-bench stamps each run of a row with SWITCH_BENCH_STAMPS (bench/bench_stamp.h),
    in order within the process, and not without it."""
    bench = Path(a.build_dir) / "bin" / "switch-bench"
    runs = {}
    for stamped in (True, False):
        out = Path(a.build_dir) / f"host-pace-stamps-{stamped}.json"
        env = dict(os.environ, SWITCH_BENCH_STAMPS="1") if stamped else \
            {k: v for k, v in os.environ.items() if k != "SWITCH_BENCH_STAMPS"}
        t0 = time.monotonic()
        p = subprocess.run([bench, "--benchmark_filter=^(call/noinline|syscall/getppid)$",
                            "--benchmark_min_time=0.01", "--benchmark_repetitions=3",
                            "--benchmark_enable_random_interleaving=true",
                            f"--benchmark_out={out}", "--benchmark_out_format=json"],
                           capture_output=True, text=True, timeout=60, env=env)
        t1 = time.monotonic()
        check(p.returncode == 0, "switch-bench runs", p.stderr[-300:])
        runs[stamped] = ([b for b in json.loads(out.read_text())["benchmarks"]
                          if b["run_type"] == "iteration"], t0, t1)
    reps, t0, t1 = runs[True]
    check(len(reps) == 6, "two rows of 3 repetitions", len(reps))
    check(all(t0 <= r["host_t0_s"] < r["host_t1_s"] <= t1 for r in reps),
          "each run stamped within the process's lifetime, start before end",
          [(r["host_t0_s"], r["host_t1_s"]) for r in reps])
    spans = sorted((r["host_t0_s"], r["host_t1_s"]) for r in reps)
    check(all(x[1] <= y[0] for x, y in zip(spans, spans[1:])), "the runs do not overlap", spans)
    check(not any("host_t0_s" in r for r in runs[False][0]), "no stamps without the variable")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--build-dir", {"required": True})))
