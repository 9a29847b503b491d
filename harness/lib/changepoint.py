"""changepoint.py - steps in a noisy series of benchmark runs, by penalised optimal partition.

A machine's history of one figure (one value per run, in commit order) moves for two reasons:
a commit changed what is measured, or the machine's state did (another tenant, a kernel
update, the harness's own leftovers). Comparing each run with the one before it marks every
jump of the second kind and misses a step that is small beside one run's noise but clear
over several. A change-point method reads the whole series instead.

The method is the exact optimal partition that PELT computes (here without its pruning, and
with a robust cost):

  1. The noise sigma is estimated from the differences of neighbouring runs (their median
     absolute deviation), which a few steps hardly move, unlike the series' own spread.
  2. Among all ways to cut the series into segments of at least MIN_SEGMENT runs, the one
     minimising sum(|deviation from each segment's median|) / sigma + PENALTY x log(n) per
     cut is chosen by dynamic programming. A cut pays for itself only where the levels on
     either side differ by more than noise could make them over that many runs.
  3. A cut whose neighbouring segments' medians differ by less than `floor` (relative) is
     dropped and the segments merged: a shift of 0.3% over a long series can be real, and is
     not what a reader of a history looks for. Exact counts use a floor of 0.5%.

    steps(values, floor=0.05) -> [Step(index, before, after)]

`index` is the first run after the step; `before` and `after` are the medians of the
segments on either side.
"""
import bisect
import math
import statistics
from dataclasses import dataclass

MIN_SEGMENT = 3
# Per cut, times log(n), in the cost's units (absolute deviations over sigma). Chosen on the
# test cases' synthetic series (3% noise, Gaussian and Student-t of the same variance, 200
# series each): flat series of 8-40 runs get a step in 1 of 200, and a 15% rise then a 10%
# fall, 10 runs each, are both found (within one run) in 193-196 of 200, with a third step
# elsewhere in 5-6 of 200; 1.5 invents more, 3 misses a tenth of the steps.
PENALTY = 2.0
# Only the latest runs are searched (segment_costs is O(n^3)).
MAX_RUNS = 200


@dataclass(frozen=True)
class Step:
    index: int     # the first value after the step
    before: float  # median of the values before it (back to the previous step)
    after: float   # median of the values after it (up to the next step)

    @property
    def change(self):
        return self.after / self.before - 1 if self.before else math.inf


def noise_sigma(xs):
    """sigma of the noise around the levels, from the MAD of neighbouring differences (a
    difference of two runs has sqrt(2) times one run's sigma; 0.6745 turns a MAD into a
    Gaussian sigma). Never 0: a floor of 1e-9 of the level keeps exact counts finite."""
    diffs = [b - a for a, b in zip(xs, xs[1:])]
    med = statistics.median(diffs)
    mad = statistics.median(abs(d - med) for d in diffs)
    level = statistics.median(abs(x) for x in xs) or 1.0
    return max(mad / 0.6745 / math.sqrt(2), 1e-9 * level)


def segment_costs(xs, sigma):
    """{(i, j): sum of |x - median| over xs[i:j], in units of sigma} for every segment of at
    least MIN_SEGMENT runs. Absolute deviations from the median, not squares from the mean:
    one run 15% off (the tails of run-to-run noise) then costs a segment 5 sigma, not 25
    sigma^2, and is no reason to cut it off. Each start's segments grow one run at a time
    over a sorted copy: O(n^3) in all, a fraction of a second at MAX_RUNS."""
    n, costs = len(xs), {}
    for i in range(n):
        seg = []
        for j in range(i, n):
            bisect.insort(seg, xs[j])
            if len(seg) >= MIN_SEGMENT:
                m = seg[len(seg) // 2] if len(seg) % 2 else \
                    (seg[len(seg) // 2 - 1] + seg[len(seg) // 2]) / 2
                costs[i, j + 1] = sum(abs(x - m) for x in seg) / sigma
    return costs


def partition(xs, sigma, penalty):
    """The cut indexes of the optimal partition (segments of at least MIN_SEGMENT runs)."""
    n, costs = len(xs), segment_costs(xs, sigma)
    best = [math.inf] * (n + 1)
    prev = [0] * (n + 1)
    best[0] = -penalty  # the first segment pays no cut
    for j in range(MIN_SEGMENT, n + 1):
        for i in [0] + list(range(MIN_SEGMENT, j - MIN_SEGMENT + 1)):
            c = best[i] + penalty + costs[i, j]
            if c < best[j]:
                best[j], prev[j] = c, i
    cuts, j = [], n
    while j > 0:
        j = prev[j]
        if j:
            cuts.append(j)
    return sorted(cuts)


def steps(values, floor=0.05):
    """The steps of `values` (a list of numbers, in order), sorted by index."""
    xs = [float(v) for v in values][-MAX_RUNS:]
    offset = max(0, len(values) - MAX_RUNS)
    if len(xs) < 2 * MIN_SEGMENT:
        return []
    cuts = partition(xs, noise_sigma(xs), PENALTY * math.log(len(xs)))
    while True:
        bounds = [0] + cuts + [len(xs)]
        meds = [statistics.median(xs[a:b]) for a, b in zip(bounds, bounds[1:])]
        small = [k for k in range(len(cuts))
                 if abs(meds[k + 1] - meds[k]) < floor * abs(meds[k])]
        if not small:
            break
        # The smallest relative move goes first; its neighbours' medians change with it.
        k = min(small, key=lambda k: abs(meds[k + 1] - meds[k]) / (abs(meds[k]) or 1))
        del cuts[k]
    return [Step(offset + c, meds[k], meds[k + 1]) for k, c in enumerate(cuts)]
