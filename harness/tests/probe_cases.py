#!/usr/bin/python3
"""Cases for the calibration probe (harness/lib/probe.py): the suite's wait before a step
that times, on a fake clock and a scripted probe, and one real probe of this machine.

usage: probe_cases.py CASE --work DIR
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from lib import budget as B, probe  # noqa: E402


def scripted(values, clock, cost=0.5):
    """A probe that returns the next of `values` and takes `cost` seconds of the fake clock."""
    it = iter(values)

    def take():
        clock.advance(cost)
        return next(it)
    return take


START = {"cpu_ms": 10.0, "rtt_us": 40.0}


def case_wait_until_back(a):
    """A machine still slow from the step before (30%, then 12%) is waited for until the probe
    is within the tolerance; faster than the start never holds a step back."""
    clock = B.FakeClock()
    values = [{"cpu_ms": 13.0, "rtt_us": 40.0}, {"cpu_ms": 10.0, "rtt_us": 44.8},
              {"cpu_ms": 10.3, "rtt_us": 41.0}]
    waited, now, settled = probe.wait_calibrated(START, 0.08, 30, 1.0,
                                                 scripted(values, clock), clock, clock.advance)
    check(settled and now == values[2], "settled on the third probe", (settled, now))
    check(abs(waited - 3.5) < 1e-9, "waited three probes and two pauses", waited)
    clock = B.FakeClock()
    fast = [{"cpu_ms": 5.0, "rtt_us": 20.0}]
    waited, _, settled = probe.wait_calibrated(START, 0.08, 30, 1.0, scripted(fast, clock),
                                               clock, clock.advance)
    check(settled and waited == 0.5, "a faster machine is no wake", waited)


def case_wait_times_out(a):
    """A machine that stays 20% slower is measured anyway after the timeout, and says so."""
    clock = B.FakeClock()
    slow = [{"cpu_ms": 12.0, "rtt_us": 48.0}] * 100
    waited, now, settled = probe.wait_calibrated(START, 0.08, 10, 1.0, scripted(slow, clock),
                                                 clock, clock.advance)
    check(not settled and waited <= 10, "gives up within the timeout", (settled, waited))
    check(probe.slower(now, START) == {"cpu_ms": 1.2, "rtt_us": 1.2}, "the ratio to the start",
          probe.slower(now, START))


def case_reference(a):
    """The run's reference is the median of its starting probes, and each figure's tolerance
    the larger of the floor and twice their spread: a machine that moved 10% on its own while
    the run started is not waited for at 12%, one 60% slower (a wake) is."""
    clock = B.FakeClock()
    takes = [{"cpu_ms": 10.0, "rtt_us": 40.0}, {"cpu_ms": 11.0, "rtt_us": 40.4},
             {"cpu_ms": 10.5, "rtt_us": 40.2}]
    ref = probe.reference(3, 1.0, scripted(takes, clock), clock.advance)
    check(ref["probe"] == {"cpu_ms": 10.5, "rtt_us": 40.2}, "the median per figure", ref)
    check(abs(ref["tolerance"]["cpu_ms"] - 0.19) < 1e-3 and
          ref["tolerance"]["rtt_us"] == probe.TOLERANCE_FLOOR["rtt_us"] > probe.TOLERANCE,
          "twice the spread where wider than the floor, else the figure's floor",
          ref["tolerance"])
    check(probe.within({"cpu_ms": 11.8, "rtt_us": 41.0}, ref["probe"], ref["tolerance"]),
          "12% slower on the loop is within its own spread", "")
    check(probe.within({"cpu_ms": 10.5, "rtt_us": 48.0}, ref["probe"], ref["tolerance"]),
          "19% slower on the round trip is within what it moves on a calm machine", "")
    check(not probe.within({"cpu_ms": 10.5, "rtt_us": 52.0}, ref["probe"], ref["tolerance"]),
          "29% slower on the round trip is not", "")
    check(not probe.within({"cpu_ms": 11.7, "rtt_us": 40.0},
                           ref["probe"], dict(ref["tolerance"], cpu_ms=probe.TOLERANCE)),
          "11% slower on the loop is not, held to the default", "")
    check(not probe.within({"cpu_ms": 16.8, "rtt_us": 40.0}, ref["probe"], ref["tolerance"]),
          "60% slower is a wake", "")
    wild = [{"cpu_ms": 10.0, "rtt_us": 40.0}, {"cpu_ms": 20.0, "rtt_us": 40.0},
            {"cpu_ms": 15.0, "rtt_us": 40.0}]
    ref = probe.reference(3, 1.0, scripted(wild, clock), clock.advance)
    check(ref["tolerance"]["cpu_ms"] == probe.MAX_TOLERANCE, "an unsettled start is capped",
          ref["tolerance"])


def case_waits_only_where_measured(a):
    """The suite waits for the probe only before a step that times something in the preset:
    not before a step the quick preset leaves out (peers, hooks, instruments, slow), nor before
    a counting step, nor the report; in full, before every step that times."""
    import suite
    EXPERIMENTS = suite.EXPERIMENTS
    for exp in EXPERIMENTS:
        skipped = getattr(exp.run, "quick_skips", False)
        check(suite.times(exp.name, "quick") == (exp.times and not skipped),
              f"{exp.name}: waits in quick only if it times and runs there")
        check(suite.times(exp.name, "full") == exp.times, f"{exp.name}: waits in full if it times")
    check(not suite.times(suite.REPORT, "quick"), "no wait before the report")
    check(any(getattr(e.run, "quick_skips", False) for e in EXPERIMENTS),
          "some step is left out of quick (the case checks something)")


def case_real_probe(a):
    """One probe of this machine: both figures measured, positive, in a fraction of a second."""
    clock = B.Budget(None)
    p = probe.take(tries=3)
    check(p["cpu_ms"] > 0 and p["rtt_us"] > 0, "both figures measured", p)
    check(clock.spent() < 5, "fast enough to run before every step", clock.spent())


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
