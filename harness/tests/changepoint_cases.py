#!/usr/bin/python3
"""Cases for harness/lib/changepoint.py on synthetic series of runs: planted steps are found where
they were planted, and series without one get none, under Gaussian and heavy-tailed noise of
the size measured between runs of one machine (3%: the learned run-to-run bands of compare).

usage: changepoint_cases.py CASE --work DIR
"""
import random
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from lib import changepoint as CP  # noqa: E402

SEEDS = 60
NOISE = 0.03


def noisy(levels, rng, heavy=False):
    """One value per run around each level: Gaussian noise of NOISE, or (heavy) a Student-t
    with 3 degrees of freedom of the same variance, whose tails put a run 10-15% off now and
    then."""
    out = []
    for lv in levels:
        if heavy:
            chi2 = sum(rng.gauss(0, 1) ** 2 for _ in range(3))
            z = rng.gauss(0, 1) / max(1e-9, (chi2 / 3) ** 0.5) / 3 ** 0.5
        else:
            z = rng.gauss(0, 1)
        out.append(lv * (1 + NOISE * z))
    return out


def case_no_step(a):
    """Flat series of 8 to 40 runs: no step invented in more than 2 of SEEDS per noise kind."""
    for heavy in (False, True):
        invented = 0
        for seed in range(SEEDS):
            rng = random.Random(seed)
            xs = noisy([100.0] * rng.randint(8, 40), rng, heavy)
            invented += bool(CP.steps(xs))
        print(f"{'heavy-tailed' if heavy else 'Gaussian'}: {invented} of {SEEDS} flat series "
              "given a step")
        check(invented <= 2, "a flat series gets no step", invented)


def case_planted_steps(a):
    """30 runs with a 15% rise at run 10 and a 10% fall at run 20: both found (within one run)
    in at least 95% of series, nothing else in at least 95%."""
    for heavy in (False, True):
        found = extra = 0
        for seed in range(SEEDS):
            rng = random.Random(1000 + seed)
            xs = noisy([100.0] * 10 + [115.0] * 10 + [103.5] * 10, rng, heavy)
            at = [s.index for s in CP.steps(xs)]
            # Within one run of where it was planted: with 3% noise a run beside a 10% step
            # can look like either level.
            found += any(abs(i - 10) <= 1 for i in at) and any(abs(i - 20) <= 1 for i in at)
            extra += any(min(abs(i - 10), abs(i - 20)) > 1 for i in at)
        kind = "heavy-tailed" if heavy else "Gaussian"
        print(f"{kind}: both steps found in {found} of {SEEDS}, a step elsewhere in {extra}")
        check(found >= 0.95 * SEEDS, f"{kind}: the planted steps are found", found)
        check(extra <= 0.05 * SEEDS, f"{kind}: no step elsewhere", extra)


def case_levels_and_floor(a):
    """A step's levels are the medians either side; a significant shift below the floor is
    not a step (an exact count moving by 1% is one with a floor of 0.5%); too short a series
    has none; the same series gives the same steps every time."""
    xs = [10.0] * 6 + [12.0] * 6
    st = CP.steps(xs)
    check(len(st) == 1 and st[0].index == 6 and st[0].before == 10 and st[0].after == 12,
          "one step from 10 to 12 at run 6", st)
    check(abs(st[0].change - 0.2) < 1e-12, "its change is +20%", st[0].change)
    counts = [1000.0] * 8 + [1010.0] * 8
    check(CP.steps(counts) == [], "a 1% move is under the 5% floor")
    check([s.index for s in CP.steps(counts, floor=0.005)] == [8],
          "a 1% move of an exact count is a step under a 0.5% floor")
    check(CP.steps([1.0, 2.0, 1.0, 2.0, 9.0]) == [], "five runs: too short for a step")
    rng = random.Random(7)
    ys = noisy([100.0] * 12 + [120.0] * 12, rng)
    check(CP.steps(ys) == CP.steps(ys), "the same series, the same steps")
    check(CP.steps([5.0] * 20) == [], "a constant series has no step")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
