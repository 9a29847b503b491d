"""Figures: the named numbers a verdict rule reads, in one shape the report and the run
comparison share.

A verdict function returns its figures as a list of dicts made by the constructors below:

    timing(name, value, unit, source, samples=None, spread=None)   noisy; repeated samples
    exact(name, value, unit, source)                               a deterministic count
    once(name, value, unit, source)                                measured once (memory,
                                                                   connections held, ...)

`source` names the experiment (the JSON file's stem) the figure came from, so the report can
say which preset knob a fuller run would change. The report sets each figure beside the
reference run's figure of the same name; `plots/compare.py` sets two runs' figures side by
side and uses `judge` to say whether a difference is larger than the noise.
"""
import math

TIMING, EXACT, ONCE = "timing", "exact", "once"


def _fig(kind, name, value, unit, source, samples=None, spread=None):
    value = None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)
    samples = [float(s) for s in (samples or []) if s is not None]
    if spread is None and len(samples) >= 2:
        spread = (min(samples), max(samples))
    return {"name": name, "value": value, "unit": unit, "kind": kind, "source": source,
            "samples": samples, "spread": tuple(spread) if spread else None}


def timing(name, value, unit, source, samples=None, spread=None):
    """A timing or a ratio of timings. `samples` are the repeated measurements (their range
    is the spread); `spread` may be given directly, e.g. median +- stddev when only the
    aggregates were kept."""
    return _fig(TIMING, name, value, unit, source, samples, spread)


def exact(name, value, unit, source):
    """A count that repeats exactly from run to run (callgrind instructions, perf syscall
    tracepoints, epoll_ctl per request): compared for equality, not against noise."""
    return _fig(EXACT, name, value, unit, source)


def once(name, value, unit, source):
    """A figure measured once per run (no repeated samples, so its noise is unknown)."""
    return _fig(ONCE, name, value, unit, source)


def from_numbers(numbers):
    """The figures of a verdict that gives only its `numbers` ({name: (ours, quoted)})."""
    return [once(name, ours, "", None) for name, (ours, _) in numbers.items()]


def num(v, exact=False):
    """A figure's number: whole numbers from 100 up (or 1000 for exact counts, which keep four
    digits), three significant digits below."""
    if abs(v) >= (1000 if exact else 100):
        return f"{v:.0f}"
    return f"{v:.4g}" if exact else f"{v:.3g}"


def fmt(fig):
    v = fig["value"] if fig else None
    if v is None:
        return "n/a"
    return num(v, fig["kind"] == EXACT) + (f" {fig['unit']}" if fig.get("unit") else "")


def fmt_spread(fig):
    s = fig.get("spread") if fig else None
    if not s:
        return ""
    return f" [{num(s[0])}-{num(s[1])}]"


# Exact counts are rounded like this before being compared: the JSON files keep 4-6
# significant digits, and a count per request over a different number of requests differs
# in the last digit without the behaviour changing.
EXACT_DIGITS = 3


def judge(a, b):
    """(B/A, note) for two figures of the same name; note says how to read the change."""
    va, vb = (a or {}).get("value"), (b or {}).get("value")
    if va is None or vb is None:
        return None, "only in " + ("B" if va is None and vb is not None else
                                   "A" if vb is None and va is not None else "neither")
    ratio = vb / va if va else (1.0 if vb == va else None)
    kind = a["kind"] if a["kind"] == b["kind"] else ONCE
    if kind == EXACT:
        same = round(va, EXACT_DIGITS) == round(vb, EXACT_DIGITS)
        return ratio, "exact: same" if same else f"exact: differs by {vb - va:+.4g}"
    if kind == TIMING:
        sa, sb = a.get("spread"), b.get("spread")
        if not sa or not sb:
            return ratio, "no spread in " + ("A" if not sa else "B") + ": noise unknown"
        if sa[0] <= sb[1] and sb[0] <= sa[1]:
            return ratio, "within noise (samples overlap)"
        return ratio, ("higher" if vb > va else "lower") + " beyond noise"
    return ratio, "one sample each: noise unknown"


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
