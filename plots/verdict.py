"""The vocabulary every claim speaks: the four verdicts, the result a claim returns, and the
small formatting helpers its measured lines use.

A claim (plots/claims/cNN_*.py) returns `result(...)`: its verdict, the rule it applied, the
markdown lines of what was measured, and the named figures (plots/figures.py) the report and
plots/compare.py set beside another run's.
"""
import statistics

import data as D
import figures as F

HOLDS, NOT, PARTLY, NOTRUN = "holds", "does not hold", "holds partly", "not run"


def fmt(v, spec=".3g", unit=""):
    if v is None:
        return "n/a"
    return format(v, spec) + unit


def result(verdict, rule, measured, notes=None, numbers=None, figures=None):
    """measured: markdown lines; numbers: {name: (ours, quoted)} for the surprises section;
    figures: the named figures the rule read (plots/figures.py), which the report sets beside
    the reference run's and plots/compare.py beside another run's. A rule that names no
    figures gets its `numbers` as figures."""
    numbers = numbers or {}
    return {"verdict": verdict, "rule": rule, "measured": measured, "notes": notes or [],
            "numbers": numbers,
            "figures": figures if figures is not None else F.from_numbers(numbers)}


def switch_fig(run, row, name=None):
    """A timing figure for one switch-bench row, with the spread of its repetitions."""
    doc = run.get("switch")
    entry = D.bench_rows(doc).get(row)
    if entry is None:
        return None
    return F.timing(name or row, D.ns(entry), "ns", "switch",
                    spread=D.bench_spread(doc).get(row))


def figs(*items):
    return [f for f in items if f is not None]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def share(x):
    """A fraction as the rule text says it: half, or 0.3x."""
    return "half" if x == 0.5 else f"{x:g}x"


def num(x):
    """A threshold as the rule text prints it: 1.15, 2.0 and 1000 stay as written."""
    return repr(x) if isinstance(x, float) else str(x)


def decide(rule, m, judge):
    """The result of a claim whose `measure` gave m: a dict of its deciding values beside
    "lines" (what was measured, markdown), "figures" and "numbers"; judge(m) is the verdict."""
    return result(judge(m), rule, m["lines"], numbers=m.get("numbers"), figures=m.get("figures"))
