"""Figures: the named numbers a verdict rule reads, each with its uncertainty, in one shape
the report, verdicts.json and the run comparison share.

A verdict function returns its figures as a list of dicts made by the constructors below:

    timing(name, value, unit, source, samples=None, spread=None)   noisy; repeated samples
    paired(name, per_round, unit, source)                          a ratio of two things
                                                                   measured in the same rounds
    estimate(name, value, low, high, n, unit, source)              an interval computed by the
                                                                   claim itself
    exact(name, value, unit, source)                               a deterministic count
    once(name, value, unit, source)                                measured once
    repeated(name, samples, unit, source)                          a point's repeated runs
                                                                   (once when there is one)
    ratio(name, num, den, unit, source)                            two points' repeated runs,
                                                                   resampled independently

Every figure carries `value`, a 95% interval `low`-`high` (the percentile bootstrap, over its
samples, of their median: harness/lib/stats.py), `n` (how many samples) and `exact`. An exact
count's interval is its value. A figure with one sample has no interval (low and high None);
a rule compares it as if it were known to within SINGLE_MARGIN (see `compare`).

`source` names the experiment (the JSON file's stem) the figure came from, so the report can
say which preset knob a fuller run would change. `compare(fig, op, threshold)` says on which
side of a threshold a figure's interval lies (plots/verdict.py builds verdicts on it);
`differ(a, b)` says whether two runs' figures of the same name differ beyond the noise
(plots/compare_diff.py).
"""
import math

from harness_api import kernel_resolution, regress_gate, stats

TIMING, EXACT, ONCE = "timing", "exact", "once"
LEVEL = 0.95  # of every interval
ALPHA = 0.05  # of the two-sided Mann-Whitney test plots/compare_diff.py runs
# A figure measured once has no interval. A rule takes it as known to within this share of
# its value: the round-to-round spread of the repeated figures of a run on the reference
# machine is mostly below it, so a single sample closer than this to a threshold cannot
# decide a verdict.
SINGLE_MARGIN = 0.05

_CI = {}


def interval(samples):
    """(low, high): the LEVEL bootstrap interval of the median of samples (deterministic,
    seeded by harness/lib/stats.py), remembered since reports evaluate each run more than once."""
    key = tuple(samples)
    if key not in _CI:
        _CI[key] = stats.bootstrap_ci(list(samples), stats.median, LEVEL)
    return _CI[key]


def _fig(kind, name, value, unit, source, samples=None, spread=None, low=None, high=None,
         n=None):
    value = None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)
    samples = [float(s) for s in (samples or []) if s is not None]
    if spread is None and len(samples) >= 2:
        spread = (min(samples), max(samples))
    if value is None:
        low = high = None
        n = 0
    elif kind == EXACT:
        low = high = value
        n = n or 1
    elif low is None and len(samples) >= 2:
        low, high = interval(samples)
        n = len(samples)
    if n is None:
        n = len(samples) or 1
    return {"name": name, "value": value, "unit": unit, "kind": kind, "source": source,
            "samples": samples, "spread": tuple(spread) if spread else None,
            "low": None if low is None else float(low),
            "high": None if high is None else float(high), "n": n, "exact": kind == EXACT}


def timing(name, value, unit, source, samples=None, spread=None):
    """A timing or a ratio of timings; `value` the median of `samples` (the repeated
    measurements) when they were kept. `spread` may be given directly, e.g. median +- stddev
    when only the aggregates were kept: it is shown, but gives no interval."""
    return _fig(TIMING, name, value, unit, source, samples, spread)


def paired(name, per_round, unit, source):
    """A ratio measured in interleaved rounds: each round's ratio of the two things measured
    back to back in it (data.paired), the value their median, the interval bootstrapped over
    the rounds."""
    per_round = [r for r in per_round or [] if r is not None]
    return _fig(TIMING, name, stats.median(per_round) if per_round else None, unit, source,
                per_round)


def estimate(name, value, low, high, n, unit, source, open_parts=None):
    """A figure whose interval the claim computed itself (a bootstrap over rounds of a fit,
    or the bounds of a count of comparisons); n is the number of rounds or comparisons. A
    count of comparisons lists as open_parts the tests (compare()) of those its interval is
    open on: what would decide it is what would decide them."""
    if low is not None and value is not None:
        low, high = min(low, value), max(high, value)
    fig = _fig(TIMING, name, value, unit, source, low=low, high=high, n=n)
    if open_parts:
        fig["open_parts"] = list(open_parts)
    return fig


# A figure read on a point where the load generator, not the server, set the pace (client-bound)
# is a bound of what the server does, not a measurement of it: the server served at least that
# much. AT_LEAST and AT_MOST name the side that stays open. The figure keeps its measured
# interval; a rule comparing it takes the open side as unbounded, so the figure can confirm a
# threshold on its closed side and never refute one.
AT_LEAST, AT_MOST = "at least", "at most"


def bounded(fig, side, when=True, why="a client-bound peak"):
    """fig as a one-sided bound (side AT_LEAST or AT_MOST), its name saying so and why; fig
    itself when `when` is false (a peak that was measured, not bounded)."""
    if not when or fig is None or fig.get("value") is None:
        return fig
    return dict(fig, bound=side, name=f"{fig['name']} ({side}: {why})")


def exact(name, value, unit, source):
    """A count that repeats exactly from run to run (callgrind instructions, perf syscall
    tracepoints, epoll_ctl per request, connections held): its interval is its value."""
    return _fig(EXACT, name, value, unit, source)


def once(name, value, unit, source):
    """A figure measured once per run (no repeated samples, so its noise is unknown)."""
    return _fig(ONCE, name, value, unit, source)


def repeated(name, samples, unit, source):
    """A figure from a point's repeated runs (a sweep point's `rounds`): the median with its
    interval when there are two or more, a figure measured once when there is one (older
    runs keep only the median run's)."""
    samples = [s for s in samples or [] if s is not None]
    if len(samples) >= 2:
        return timing(name, stats.median(samples), unit, source, samples)
    return once(name, samples[0] if samples else None, unit, source)


def ratio(name, num, den, unit, source):
    """median(num) / median(den) of two things measured in separate runs (two sweep points'
    repeated runs: not paired by round). With two or more samples a side, its interval
    resamples both sides independently (harness/lib/stats.py ratio_ci); else it is measured once.
    Its samples are num's over den's median, for the run comparison's U test."""
    num = [x for x in num or [] if x is not None]
    den = [x for x in den or [] if x is not None]
    if not num or not den or not stats.median(den):
        return once(name, None, unit, source)
    value = stats.median(num) / stats.median(den)
    if len(num) < 2 or len(den) < 2:
        return once(name, value, unit, source)
    key = ("ratio", tuple(num), tuple(den))
    if key not in _CI:
        _CI[key] = stats.ratio_ci(num, den, LEVEL)
    low, high = _CI[key]
    return _fig(TIMING, name, value, unit, source, [x / stats.median(den) for x in num],
                low=low, high=high, n=min(len(num), len(den)))


def present(*items):
    """The figures among items that exist (a reader returns None for a figure its run lacks)."""
    return [f for f in items if f is not None]


def noise_floor(doc, source, prefer=None):
    """The A/A figure of an experiment: the per-round ratios of one configuration measured
    twice in the same rounds (`doc["aa"]`, {label: {"per_round": [...]}} as the drivers'
    rounds.aa writes it), whose interval is what two identical things differ by here.
    `prefer` picks the first label containing it. None when the run has no A/A pairs (older
    runs)."""
    aa = (doc or {}).get("aa") or {}
    for label in sorted(aa, key=lambda k: (prefer is None or prefer not in k, k)):
        rounds = [r for r in aa[label].get("per_round") or [] if isinstance(r, (int, float))]
        if len(rounds) >= 2:
            return paired(f"A/A noise floor ({label})", rounds, "x", source)
    return None


def from_numbers(numbers):
    """The figures of a verdict that gives only its `numbers` ({name: (ours, quoted)})."""
    return [once(name, ours, "", None) for name, (ours, _) in numbers.items()]


# ---- comparing a figure with a threshold ------------------------------------------------------

YES, NO, STRADDLES = "yes", "no", "straddles"
OPS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
       "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}


def bounds(fig):
    """(low, high, basis) a rule compares: the interval (widened to hold the value), the
    value itself for an exact count, value +- SINGLE_MARGIN for a single sample."""
    v = fig["value"]
    if fig["exact"]:
        return v, v, "exact"
    if fig.get("low") is not None:
        return min(fig["low"], v), max(fig["high"], v), "interval"
    d = abs(v) * SINGLE_MARGIN
    return v - d, v + d, "one sample"


def compare(fig, op, threshold):
    """Whether `fig op threshold` holds for the whole interval (YES), for none of it (NO), or
    for part of it (STRADDLES), with what a report needs to say so. The raw values are
    compared: nothing is rounded first."""
    lo, hi, basis = bounds(fig)
    test = OPS[op]
    side = fig.get("bound")
    # A one-sided bound's open end reaches past every threshold (the bound's own low and high
    # stay what was measured, for the report).
    open_lo = -math.inf if side == AT_MOST else lo
    open_hi = math.inf if side == AT_LEAST else hi
    # The interval's worst and best ends for this operator: ">=" holds everywhere when its low
    # end holds, nowhere when its high end fails.
    worst, best = (open_lo, open_hi) if op in (">=", ">") else (open_hi, open_lo)
    outcome = YES if test(worst, threshold) else NO if not test(best, threshold) else STRADDLES
    v = fig["value"]
    out = {"figure": fig["name"], "op": op, "threshold": threshold, "outcome": outcome,
           "value": v, "low": lo, "high": hi, "n": fig["n"], "basis": basis, "bound": side,
           "margin": (v / threshold - 1) if threshold else v}
    if fig.get("open_parts"):
        out["open_parts"] = fig["open_parts"]
    return out


# Kernel memory per connection below its resolution (harness/drive/memory.py says why) is
# printed as such, never as a figure.


def kernel_kib(kib, conns=None):
    """A kernel KiB-per-connection figure for a table: the number at or above the resolution,
    "< R (below resolution)" under it (negative included), "n/a" without a figure."""
    if kib is None:
        return "n/a"
    res = kernel_resolution(conns)
    if kib < res:
        return f"< {res:.3g} (below resolution)"
    return f"{kib:.1f}"


def kernel_counted(kib, conns=None):
    """The kernel KiB a total adds: the figure, or 0 when it is below the resolution (a
    negative difference would otherwise lower the total)."""
    return kib if kib is not None and kib >= kernel_resolution(conns) else 0.0


# ---- comparing two runs' figures --------------------------------------------------------------

# Exact counts are rounded like this before being compared: the JSON files keep 4-6
# significant digits, and a count per request over a different number of requests differs
# in the last digit without the behaviour changing.
EXACT_DIGITS = 3
WITHIN, BEYOND, UNCLEAR, UNKNOWN = "within noise", "beyond noise", "unclear", "noise unknown"
# A difference the U test and the intervals call real, but smaller than what moves between
# two runs of the same commit on one machine: the repetitions of one run share its state
# (placement, caches, huge pages, what the harness left behind), so their intervals cannot see
# that. Two quick runs of c8fbe7b on the AMD EPYC VM: 9 of 102 figures apart at p = 0.0079
# (the least p of 5 against 5), several by 1 to 3%.
RUN_TO_RUN = "within run-to-run noise"
# The effect floor: two runs' figures closer than this share are never beyond noise. It is the
# regression gate's floor (harness/gate/regress_gate.py, MIN_TIMING_TOLERANCE: single figures moved
# by up to 6.5% between VMs of one CPU model, results/baseline/NOTES.md), so `compare`,
# `history` and the gate draw the line between sittings at the same place.
FLOOR = regress_gate.MIN_TIMING_TOLERANCE
# A band learned from a machine's runs: the figure's value in each of at least BAND_MIN_RUNS
# other runs. Two runs of one commit differ by about sqrt(2) of one run's spread, and that
# spread is itself estimated from the few runs at hand, so the band is the prediction bound of
# such a difference at BAND_LEVEL: Student's t quantile for the runs' degrees of freedom times
# sqrt(2) times the standard deviation of their logarithms (apart_by is a ratio, so the band is
# one too; values that are not all positive are taken as differences over their median). It
# is at least the runs' range (what two of them already differed by) and sqrt(2) times the
# median half-width of those runs' own 95% intervals (two runs' medians, each as uncertain as
# this machine's runs of the figure have been: on the AMD EPYC VM three quick runs put
# switch/setjmp at 19.0, 19.07 and 19.15 ns with intervals 15 to 23 ns wide, and two runs of
# one commit at 17.2 [14.9, 18.2] and 20.5 [18.4, 21.6]). Three robust sigmas of one run are
# only 2.1 sigmas of a difference: two quick runs of one commit there had 8 of 197 figures past
# such a band (4%), learned from 3 runs and from 10. Test plots/compare RunToRun simulates it.
BAND_LEVEL = 0.99
BAND_MIN_RUNS = 3


def band_width(values):
    """The learned part of run_band, as a share (see apart_by), for at least 3 values whose
    median is not 0."""
    t = stats.t_quantile(1 - (1 - BAND_LEVEL) / 2, len(values) - 1) * math.sqrt(2)
    if min(values) > 0:
        return max(math.expm1(t * stats.stdev([math.log(v) for v in values])),
                   max(values) / min(values) - 1)
    m = abs(stats.median(values))
    return max(t * stats.stdev(values) / m, (max(values) - min(values)) / m)


def apart_by(va, vb):
    """How far apart two values are, the same either way round: the larger of B/A and A/B,
    minus 1 (0.03 for 1.03); infinite when one is 0 or the signs differ."""
    if va == vb:
        return 0.0
    if va == 0 or vb == 0 or (va < 0) != (vb < 0):
        return math.inf
    return max(va / vb, vb / va) - 1


def run_band(values=(), halves=()):
    """{"share", "learned", "runs", "text"}: how far apart two runs' values of a figure must be
    before a difference can be beyond noise. `values` are the figure's values in the other runs
    of the machine, `halves` the half-widths of their 95% intervals over their values (of
    those that have one); the band is learned from at least BAND_MIN_RUNS runs (and a median
    that is not 0), else the floor alone applies."""
    values = [v for v in values if v is not None]
    learned = None
    m = stats.median(values) if len(values) >= BAND_MIN_RUNS else 0
    if m:
        learned = max(band_width(values),
                      math.sqrt(2) * stats.median(halves) if halves else 0.0)
    if learned is None:
        text = f"floor {FLOOR:.0%}" + (
            "" if not values else f" ({len(values)} run(s): fewer than {BAND_MIN_RUNS})"
            if len(values) < BAND_MIN_RUNS else f" ({len(values)} runs, their median 0)")
    elif learned > FLOOR:
        text = f"learned {learned:.1%} ({len(values)} runs)"
    else:
        text = f"floor {FLOOR:.0%} (learned {learned:.1%}, {len(values)} runs)"
    return {"share": max(FLOOR, learned or 0.0), "learned": learned, "runs": len(values),
            "text": text}


def _share(x):
    return "a sign change" if math.isinf(x) else f"{x:.1%}"


def differ(a, b, band=None):
    """(B/A, class, reading) for two figures of the same name. class: "exact same", "exact
    differs", WITHIN, BEYOND, UNCLEAR (the U test and the intervals disagree), RUN_TO_RUN (the
    two are closer than the run-to-run band, `band` from run_band, default the floor: never
    beyond noise, whatever the U test and the intervals say), UNKNOWN (a side measured once and
    the two further apart than the band) or "one side only"; reading says it in words, with
    the U test's p."""
    va, vb = (a or {}).get("value"), (b or {}).get("value")
    if va is None or vb is None:
        side = "B" if va is None and vb is not None else "A" if vb is None and va is not None \
            else "neither"
        return None, "one side only", f"only in {side}"
    ratio = vb / va if va else (1.0 if vb == va else None)
    if a["exact"] and b["exact"]:
        if round(va, EXACT_DIGITS) == round(vb, EXACT_DIGITS):
            return ratio, "exact same", "exact: same"
        return ratio, "exact differs", f"exact: differs by {vb - va:+.4g}"
    band = band or run_band()
    apart_share = apart_by(va, vb)
    inside = apart_share < band["share"]
    gap = f"{_share(apart_share)} apart, " + (f"within the {band['text']}" if inside else
                                              f"past the {band['text']}")
    if a.get("low") is None or b.get("low") is None:
        which = " and ".join(s for s, f in (("A", a), ("B", b)) if f.get("low") is None)
        if inside:
            return ratio, RUN_TO_RUN, f"within run-to-run noise ({gap}; n=1 in {which})"
        return ratio, UNKNOWN, f"noise unknown (n=1 in {which}; {gap})"
    apart = a["high"] < b["low"] or b["high"] < a["low"]
    way = "higher" if vb > va else "lower"
    ints = "intervals apart" if apart else "intervals overlap"
    if len(a["samples"]) < 2 or len(b["samples"]) < 2:
        if apart and inside:
            return ratio, RUN_TO_RUN, f"within run-to-run noise ({gap}; {ints}; no U test)"
        return ratio, (BEYOND if apart else WITHIN), \
            (f"{way} beyond noise" if apart else "within noise") + f" ({ints}; no U test" \
            + (f"; {gap})" if apart else ")")
    p = stats.mann_whitney_two_sided(a["samples"], b["samples"])
    if p >= ALPHA and not apart:
        return ratio, WITHIN, f"within noise (U test p={p:.3g}, {ints})"
    if inside:
        return ratio, RUN_TO_RUN, f"within run-to-run noise ({gap}; U test p={p:.3g}, {ints})"
    if p < ALPHA and apart:
        return ratio, BEYOND, f"{way} beyond noise (U test p={p:.3g}, {ints}; {gap})"
    return ratio, UNCLEAR, f"unclear: U test p={p:.3g} but {ints}"


def by_name(figs):
    out = {}
    for f in figs or []:
        out.setdefault(f["name"], f)
    return out


def names(*fig_lists):
    """Figure names in first-seen order over several lists."""
    seen = []
    for figs in fig_lists:
        for f in figs or []:
            if f["name"] not in seen:
                seen.append(f["name"])
    return seen
