#!/usr/bin/python3
"""Cases for harness/lib/stats.py's bootstrap: the resampling draws the indices that
random.Random.randrange would, so every interval the harness has written stays what it was,
and the intervals come out as resampling through randrange gives them.

usage: stats_cases.py CASE --work DIR
"""
import random
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from lib import stats  # noqa: E402

# Lengths around the powers of two, where the rejection loop matters most (n = 2^k + 1 rejects
# almost half the draws) and least (n = 2^k - 1 or 2^k).
LENGTHS = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 129, 1000)


def by_randrange(xs, rng):
    return [xs[rng.randrange(len(xs))] for _ in xs]


def case_resample_as_randrange(a):
    """Every length, several seeds, many resamples in a row from one generator: the same
    values in the same order, and the generators left in the same state."""
    for n in LENGTHS:
        xs = [float(i) * 1.5 for i in range(n)]
        for seed in (1, 2, 99):
            ours, theirs = random.Random(seed), random.Random(seed)
            for _ in range(50):
                got, want = stats.resample(xs, ours), by_randrange(xs, theirs)
                check(got == want, f"n={n} seed={seed}: the randrange resample", (got, want))
            check(ours.getstate() == theirs.getstate(), f"n={n} seed={seed}: same state after")


def case_intervals_unchanged(a):
    """bootstrap_ci and ratio_ci against the same computation through randrange."""
    tail = (1.0 - 0.95) / 2.0  # as the functions compute it: 0.025 and one ulp
    rng = random.Random(7)
    for n in (5, 12, 40):
        xs = [rng.lognormvariate(0, 0.2) for _ in range(n)]
        ys = [rng.lognormvariate(0.1, 0.2) for _ in range(n + 3)]
        r = random.Random(1)
        values = sorted(stats.median(by_randrange(xs, r)) for _ in range(stats.BOOTSTRAP_DRAWS))
        want = (stats.quantile(values, tail), stats.quantile(values, 1.0 - tail))
        check(stats.bootstrap_ci(xs) == want, f"bootstrap_ci of {n}", (stats.bootstrap_ci(xs), want))
        r = random.Random(1)
        ratios = sorted(stats.median(by_randrange(xs, r)) / stats.median(by_randrange(ys, r))
                        for _ in range(stats.BOOTSTRAP_DRAWS))
        want = (stats.quantile(ratios, tail), stats.quantile(ratios, 1.0 - tail))
        check(stats.ratio_ci(xs, ys) == want, f"ratio_ci of {n} and {n + 3}",
              (stats.ratio_ci(xs, ys), want))



def case_t_quantile(a):
    """Student's t quantiles as the tables give them (the run-to-run band's scale), and the
    arguments it cannot take refused."""
    table = {(0.995, 2): 9.925, (0.995, 3): 5.841, (0.995, 9): 3.250, (0.995, 19): 2.861,
             (0.975, 4): 2.776, (0.5, 7): 0.0}
    for (q, df), want in table.items():
        got = stats.t_quantile(q, df)
        check(abs(got - want) < 1e-3, f"t quantile {q} with {df} degrees of freedom", got)
    for q, df in ((0.3, 5), (1.0, 5), (0.99, 1)):
        try:
            stats.t_quantile(q, df)
        except ValueError:
            continue
        check(False, f"t_quantile({q}, {df}) is refused")

if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
