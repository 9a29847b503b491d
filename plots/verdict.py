"""The vocabulary every claim speaks: the five verdicts, how a rule decides one from figures
with intervals, and the result a claim returns (its measured lines write numbers with
plots/formatting.py).

A claim's judge(m, t) reads its figures through the tester t: `t(fig, op, threshold)` is
True when the figure's whole interval satisfies `op threshold`, False when none of it does
(plots/figures.py's compare). When an interval straddles a threshold, `decide` runs the rule
once with each answer; if every way leads to the same verdict the straddle does not matter,
otherwise the verdict is `inconclusive` and names the thresholds straddled and the verdicts
they leave open, and `open` says per straddled comparison what would decide it on this
machine (`open_entry`: about how many rounds the measured noise needs, or that the figure sits
at its threshold, needs repetitions, or is a bound only a faster load generator can lift).
plots/claims_table.py says what stopped a `not run` verdict and what would lift it.
"""
import math
import sys

import figures as F
from formatting import figure_number, figure_with_interval, threshold_text

HOLDS, NOT, PARTLY, NOTRUN = "holds", "does not hold", "holds partly", "not run"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, PARTLY, NOT, INCONCLUSIVE, NOTRUN)

# Appended to every claim's RULE: how its thresholds are read.
INTERVALS = (f"; every threshold is compared with the figure's {F.LEVEL:.0%} interval, not its "
             "point: a verdict needs the whole interval on one side, and an interval that "
             "straddles a threshold deciding the verdict makes it inconclusive (a figure "
             f"measured once counts as its value +- {F.SINGLE_MARGIN:.0%})")

MAX_PATHS = 256  # ways through one rule; a rule with more straddles is inconclusive anyway


def result(verdict, rule, measured, notes=None, numbers=None, figures=None):
    """measured: markdown lines; numbers: {name: (ours, quoted)} for the surprises section;
    figures: the named figures the rule read (plots/figures.py), which the report sets beside
    the reference run's and plots/compare.py beside another run's. A rule that names no
    figures gets its `numbers` as figures."""
    numbers = numbers or {}
    return {"verdict": verdict, "rule": rule, "measured": measured, "notes": notes or [],
            "numbers": numbers,
            "figures": figures if figures is not None else F.from_numbers(numbers),
            "tests": [], "straddled": [], "possible": [verdict], "single_sample": [],
            "margin": None, "thresholds": {}, "noise_floor": [], "open": []}


# ---- deciding on intervals ---------------------------------------------------------------------

class Tester:
    """The `t` a judge reads its figures through, for one way through the rule: a straddled
    comparison takes its answer from `assumed`, or True when met for the first time (and is
    remembered in `met`, so `explore` can try False too)."""

    def __init__(self, assumed, noisy=frozenset()):
        self.assumed, self.met, self.tests, self.figures = assumed, [], {}, {}
        self.noisy = noisy  # (figure, threshold) pairs taken as straddled: see decide()

    def __call__(self, fig, op, threshold, name=None):
        if fig is None or fig.get("value") is None:
            return False
        key = (fig["name"], op, threshold)
        test = self.tests.setdefault(key, dict(F.compare(fig, op, threshold), name=name))
        self.figures.setdefault(fig["name"], fig)
        if test["outcome"] != F.STRADDLES and (fig["name"], threshold) not in self.noisy:
            return test["outcome"] == F.YES
        if key not in self.assumed:
            self.assumed = {**self.assumed, key: True}
            self.met.append(key)
        return self.assumed[key]


def point(fig, op, threshold, name=None):
    """A tester that reads the point value alone: for the measured lines' own words (works /
    fails), never for a verdict."""
    return fig is not None and fig.get("value") is not None and \
        F.OPS[op](fig["value"], threshold)


def explore(judge, m, noisy=frozenset()):
    """({verdict: the straddle answers of one way leading to it}, {key: test}, {name: figure
    tested}, [straddled keys the rule consulted]) over every way through the rule: each
    straddle met is answered True first, then False (depth first). noisy: (figure, threshold)
    pairs to take as straddled whatever their interval says."""
    outcomes, tests, tested, straddled = {}, {}, {}, []
    todo, runs = [{}], 0
    while todo and runs < MAX_PATHS:
        runs += 1
        assumed = todo.pop()
        t = Tester(assumed, noisy)
        v = judge(m, t)
        tests.update(t.tests)
        tested.update(t.figures)
        outcomes.setdefault(v, t.assumed)
        for i, key in enumerate(t.met):
            if key not in straddled:
                straddled.append(key)
            todo.append({**assumed, **{k: True for k in t.met[:i]}, key: False})
    if todo:
        outcomes.setdefault(INCONCLUSIVE, {})  # ways left untried: no verdict can be sure
    return outcomes, tests, tested, straddled


def thresholds_of(judge, tests):
    """{name: value} of the thresholds the rule compared with: a name given to the tester, or
    the claim module's constants of that value."""
    consts = {k: v for k, v in vars(sys.modules[judge.__module__]).items()
              if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)}
    out = {}
    for test in tests.values():
        named = [k for k, v in consts.items() if v == test["threshold"]]
        names = [test["name"]] if test.get("name") else \
            named or [threshold_text(test["threshold"])]
        for k in names:
            out[k] = test["threshold"]
    return out


def settle(rule):
    """What a yes/no rule(t) says over every way through its straddled thresholds: (True,
    tests), (False, tests), or (None, the straddled tests) when the ways disagree. The words a
    measured line uses about one server or one part of a claim come from here, so they never
    contradict the verdict that reads the same comparisons."""
    outcomes, tests, _, straddled = explore(lambda _m, t: bool(rule(t)), None)
    if len(outcomes) == 1 and INCONCLUSIVE not in outcomes:
        return next(iter(outcomes)), list(tests.values())
    return None, [tests[k] for k in straddled]


def settled_text(answer, straddled, yes, no):
    """yes / no / "cannot say: <figure> straddles <threshold>" for a settle() answer."""
    if answer is None:
        return "cannot say (" + "; ".join(straddle_text(t) for t in straddled) + ")"
    return yes if answer else no


# ---- the A/A noise floor -----------------------------------------------------------------------

def apart_from_noise(fig, aa):
    """True when fig's interval and the A/A figure's do not overlap, False when they do, None
    when either has no interval (nothing to say)."""
    if fig is None or aa is None or fig.get("value") is None or aa.get("low") is None:
        return None
    lo, hi, basis = F.bounds(fig)
    if basis == "one sample":
        return None
    return hi < aa["low"] or lo > aa["high"]


def noise_entry(fig, aa):
    """What a claim's measure() lists under "noise_floor" for one deciding ratio; decide()
    makes the verdict inconclusive when any such ratio is not apart from its A/A interval, a
    threshold it is compared with lies within that noise (noise_matters), and the verdict
    would change with the side of that threshold the truth lies on."""
    return {"figure": fig["name"], "aa": aa, "apart": apart_from_noise(fig, aa),
            "value": fig["value"], "low": fig.get("low"), "high": fig.get("high")}


def noise_thresholds(entry, tests):
    """The thresholds the rule compares a ratio with that lie between the ends of its interval
    and its A/A interval taken together: where the ratio overlaps its noise floor, the truth
    may lie on either side of them. Equal to noise says 'no difference'; when every threshold
    is beyond both intervals (a ratio of 0.97 judged against 1.05 and 1.25, say), the verdict
    is the same wherever in the noise the truth lies. Without intervals, every threshold."""
    aa = entry["aa"]
    mine = [t["threshold"] for t in tests if t["figure"] == entry["figure"]]
    if entry.get("low") is None or entry.get("high") is None or aa.get("low") is None:
        return mine
    lo, hi = min(entry["low"], aa["low"]), max(entry["high"], aa["high"])
    return [x for x in mine if lo <= x <= hi]


def noise_matters(entry, tests):
    """Whether a ratio's overlap with its A/A interval reaches a threshold it is compared
    with (noise_thresholds)."""
    return bool(noise_thresholds(entry, tests))


def noise_line(entry):
    aa = entry["aa"]
    word = {True: "apart from it", False: "overlaps it: not distinguishable from noise",
            None: "no interval to compare"}[entry["apart"]]
    return (f"- A/A noise floor beside {entry['figure']}: {aa['name']} "
            f"{figure_with_interval(aa)}; the ratio's interval {word}")


def one_side(test):
    """'above' or 'below' when a bound's interval lies wholly on one side of its threshold
    (it is open only because the figure is a bound), else None."""
    low, high, thr = test.get("low"), test.get("high"), test["threshold"]
    if not test.get("bound") or low is None or high is None:
        return None
    return "above" if low > thr else "below" if high < thr else None


def straddle_reason(test, rule):
    """One sentence of why a comparison stayed open, for the summary."""
    side = one_side(test)
    if side:
        return (f"Its interval lies {side} {threshold_text(test['threshold'])}, but it is a bound "
                f"({test['bound']} this, read where the load generator was client-bound): the "
                f"server's own figure may lie on either side of "
                f"{threshold_text(test['threshold'])}.")
    return f"Its interval straddles {rule}."


def straddle_text(test):
    side = one_side(test)
    word = (f"lies {side} {threshold_text(test['threshold'])} but, {test['bound']} this, may lie "
            "on either "
            "side of it" if side else f"straddles {threshold_text(test['threshold'])}")
    return (f"{test['figure']} {figure_number(test['value'])} [{figure_number(test['low'])}, "
            f"{figure_number(test['high'])}] {word}"
            + (" (one sample, +- margin)" if test["basis"] == "one sample" else "")
            + (f" ({test['bound']} this)" if test.get("bound") and not side else ""))


def possible_of(outcomes):
    """The verdicts the ways through a rule led to, in VERDICTS order. A judge returns a
    frozenset of verdicts where a part the run did not measure could make it any of them."""
    return [v for v in VERDICTS
            if any(v == o or (isinstance(o, frozenset) and v in o) for o in outcomes)]


def decide(rule, m, judge):
    """The result of a claim whose `measure` gave m: a dict of its figures beside "lines"
    (what was measured, markdown), "figures" and "numbers"; judge(m, t) is the verdict, read
    on intervals (see the module's docstring)."""
    outcomes, tests, tested, straddled = explore(judge, m)
    verdicts = possible_of(outcomes)
    verdict = verdicts[0] if len(verdicts) == 1 else INCONCLUSIVE
    figures = m.get("figures")
    if figures is not None or tested:
        # A figure the rule tested but the claim did not list is listed after its own.
        figures = list(figures or [])
        figures += [f for n, f in tested.items() if n not in {g["name"] for g in figures}]
        figures = [dict(f, decides=f["name"] in tested) for f in figures]
    r = result(verdict, rule + INTERVALS, m["lines"], numbers=m.get("numbers"), figures=figures)
    r["tests"] = list(tests.values())
    r["straddled"] = [tests[k] for k in straddled] if verdict == INCONCLUSIVE else []
    r["possible"] = verdicts
    r["single_sample"] = sorted({t["figure"] for t in tests.values()
                                 if t["basis"] == "one sample"})
    # A decided verdict did not hang on a comparison that straddled (every way through it led
    # to the same verdict): the nearest of the settled ones is what decided it.
    settled = [t for t in tests.values() if t["outcome"] != F.STRADDLES]
    near = min(settled if verdict != INCONCLUSIVE and settled else tests.values(),
               key=lambda t: abs(t["margin"]), default=None)
    r["margin"] = None if near is None else {
        "figure": near["figure"], "threshold": near["threshold"], "relative": near["margin"]}
    r["thresholds"] = thresholds_of(judge, tests)
    r["noise_floor"] = [dict(e, matters=noise_matters(e, tests.values()))
                        for e in m.get("noise_floor") or []]
    noisy = [e for e in r["noise_floor"] if e["apart"] is False and e["matters"]]
    r["measured"] = list(r["measured"]) + [
        f"- {e['figure']} overlaps its A/A noise floor, but no threshold it is compared with "
        "lies within that noise: the overlap cannot change the verdict"
        for e in r["noise_floor"] if e["apart"] is False and not e["matters"]]
    if noisy and verdict not in (NOTRUN, INCONCLUSIVE):
        # The truth may lie on either side of a threshold within the noise: every way through
        # those comparisons is tried, and only a verdict they could change is inconclusive.
        pairs = frozenset((e["figure"], x) for e in noisy
                          for x in noise_thresholds(e, tests.values()))
        within = possible_of(explore(judge, m, pairs)[0])
        if within == [verdict]:
            r["measured"].append(
                "- " + "; ".join(e["figure"] for e in noisy) + " overlaps its A/A noise floor "
                "across a threshold, but the verdict is the same on either side of it")
        else:
            r["verdict"], r["noisy"] = INCONCLUSIVE, noisy
            r["possible"] = [v for v in within if v != INCONCLUSIVE]
    r["open"] = open_comparisons(r)
    if r["verdict"] == INCONCLUSIVE and any(isinstance(o, frozenset) for o in outcomes):
        # Parts of the claim the run did not measure (m["unmeasured"]: unmeasured_entry),
        # named only where the judge found that they could change the verdict.
        r["open"] += list(m.get("unmeasured") or [])
    return r


def unmeasured_entry(figure, why, lift):
    """An open entry for a part of a claim the run left unmeasured (a point over its step's
    budget): no figure, so no interval or rounds; what would decide it is measuring it."""
    return {"figure": figure, "value": None, "low": None, "high": None, "n": 0, "op": None,
            "threshold": None, "basis": "not measured", "bound": None, "noise_floor": None,
            "needs": UNMEASURED, "rounds": None, "half_width": None, "distance": None,
            "text": f"{figure}: not measured ({why}); {lift}"}


def why(r):
    """One line under a verdict: what an inconclusive one straddles, what a verdict on
    single samples rests on."""
    if r.get("noisy"):
        return ("inconclusive: " + "; ".join(
            f"{e['figure']} {figure_number(e['value'])} [{figure_number(e['low'])}, "
            f"{figure_number(e['high'])}] "
            f"overlaps the A/A noise floor {figure_with_interval(e['aa'])}" for e in r["noisy"])
            + f" (within that noise it could be {' or '.join(r['possible'])})")
    if r["verdict"] == INCONCLUSIVE:
        said = [straddle_text(t) for t in r["straddled"]] + [
            e["text"] for e in r.get("open") or [] if e["needs"] == UNMEASURED]
        could = [v for v in r["possible"] if v != INCONCLUSIVE]
        return ("inconclusive: " + "; ".join(said)
                + (f" (it could be {' or '.join(could)})" if could else ""))
    if r.get("single_sample") and r["verdict"] != NOTRUN:
        return "rests on figures measured once: " + ", ".join(r["single_sample"])
    return ""


# ---- what would decide an open verdict on this machine ------------------------------------------

# A value within this share of its threshold sits on it: no number of rounds moves its interval
# clear (for a threshold of 0, within this share of the interval's half-width: over 40,000x the
# rounds).
AT_THRESHOLD = 0.005
ROUNDS, AT, REPETITIONS, LIMIT = "rounds", "at the threshold", "repetitions", "limit"
UNMEASURED = "measuring"  # a part the run did not measure (unmeasured_entry)
BOUND_LIMIT = ("the figure is a bound, read where the load generator (echo-load) saturated "
               "its core, so the server's own figure is open on that side")
BOUND_LIFT = ("no number of rounds lifts that limit; a load generator that keeps up with the "
              "server (more CPU for echo-load than the server uses) would decide it")


def rounds_to_clear(value, low, high, n, threshold):
    """(rounds, half-width, distance) for an interval [low, high] of n samples around value to
    clear threshold, if its width shrinks as 1/sqrt(n): n * (half-width / distance)^2 rounded
    up, at least n + 1. The half-width is the interval's side facing the threshold (a bootstrap
    interval need not be symmetric). rounds is None when the value sits at the threshold
    (AT_THRESHOLD), and n when the interval already clears it."""
    side = (high - value) if threshold >= value else (value - low)
    dist = abs(value - threshold)
    scale = abs(threshold) if threshold else side
    if dist <= AT_THRESHOLD * scale:
        return None, side, dist
    if side < dist:
        return n, side, dist
    # Rounded before ceil: value 0.9, interval [0.7, 1.1], threshold 1.0 gives
    # 20.00000000000003, which is 20 rounds, not 21.
    return max(n + 1, math.ceil(round(n * (side / dist) ** 2, 6))), side, dist


def _interval(v, lo, hi, n, bound=None):
    return (f"{figure_number(v)} [{figure_number(lo)}, {figure_number(hi)}] (n={n}"
            + (f"; {bound} this" if bound else "") + ")")


def _rounds_text(rounds, n, side, dist, t):
    return (f"about {rounds} rounds would decide it on this machine (this run has {n}; an "
            f"estimate from the interval's width, which shrinks about as 1/sqrt(n): {n} x "
            f"({figure_number(side)} / {figure_number(dist)})^2, the half-width toward "
            f"{threshold_text(t)} over the "
            "distance to it)")


def open_entry(test):
    """What would decide one straddled comparison (a test of figures.compare): a dict of the
    figure, its interval and n, the threshold, `needs` (ROUNDS, AT, REPETITIONS or LIMIT),
    `rounds` (the estimated rounds in all, or None), `half_width`, `distance` and `text`."""
    v, lo, hi, n, t = test["value"], test["low"], test["high"], test["n"], test["threshold"]
    bound = test.get("bound")
    e = {"figure": test["figure"], "value": v, "low": lo, "high": hi, "n": n,
         "op": test["op"], "threshold": t, "basis": test["basis"], "bound": bound,
         "noise_floor": None, "needs": ROUNDS, "rounds": None, "half_width": None,
         "distance": abs(v - t)}
    head = f"{test['figure']} "
    if test["basis"] == "one sample":
        e["needs"] = REPETITIONS
        e["text"] = (f"{head}{figure_number(v)} (n={n}, measured once) is within the +-"
                     f"{F.SINGLE_MARGIN:.0%} a single sample is taken as of {threshold_text(t)}: "
                     "it needs "
                     "repetitions (an interval from repeated rounds) before anything can "
                     "decide it")
        return e
    if test.get("open_parts"):
        return parts_open_entry(e, test["open_parts"])
    rounds, side, dist = rounds_to_clear(v, lo, hi, n, t)
    e["half_width"] = side
    where = f"{head}{_interval(v, lo, hi, n, bound)} straddles {threshold_text(t)}: "
    # A bound can be decided by rounds only when its value lies on the side it can confirm
    # (an upper bound below the threshold, a lower bound above it).
    confirmable = (bound == F.AT_MOST and v < t) or (bound == F.AT_LEAST and v > t)
    if bound and not confirmable:
        e["needs"] = LIMIT
        e["text"] = where + BOUND_LIMIT + "; " + BOUND_LIFT
    elif rounds is None:
        e["needs"] = AT
        e["text"] = (where + f"the figure is at the threshold (within {AT_THRESHOLD:.1%} of "
                     "it): no number of rounds will decide it here")
    else:
        e["rounds"] = rounds
        e["text"] = where + _rounds_text(rounds, n, side, dist, t) + (
            f"; {BOUND_LIMIT}, but its value lies on the side the bound can confirm, so "
            "rounds can decide it" if bound else "")
    return e


def parts_open_entry(e, parts):
    """What would decide a count of comparisons whose interval is open on `parts` (the tests
    of those comparisons): each of them decided. Its rounds are the most any part needs, and
    n is that part's; a part at its threshold leaves it at the threshold."""
    n = e["n"]
    entries = [open_entry(p) for p in parts]
    said = [part["text"] for part in entries]
    # A part that rounds cannot decide outweighs any number of rounds; the first such wins.
    worst = max(entries, key=lambda part: (part["needs"] != ROUNDS, part["rounds"] or 0))
    e.update(needs=worst["needs"], rounds=worst["rounds"], n=worst["n"],
             half_width=worst["half_width"])
    e["text"] = (f"{e['figure']} {_interval(e['value'], e['low'], e['high'], n)} "
                 f"straddles {threshold_text(e['threshold'])} because {len(parts)} of its "
                 f"comparisons {'is' if len(parts) == 1 else 'are'} open: " + "; ".join(said))
    return e


def noise_open_entry(entry, threshold, n):
    """What would decide a ratio whose overlap with its A/A noise floor reaches across
    threshold: both intervals clear of it (each estimated as in rounds_to_clear)."""
    aa, v, t = entry["aa"], entry["value"], threshold
    mine = rounds_to_clear(v, entry["low"], entry["high"], n, t)
    noise = rounds_to_clear(aa["value"], aa["low"], aa["high"], aa["n"], t)
    e = {"figure": entry["figure"], "value": v, "low": entry["low"], "high": entry["high"],
         "n": n, "op": None, "threshold": t, "basis": "interval", "bound": None,
         "noise_floor": aa["name"], "needs": ROUNDS, "rounds": None, "half_width": mine[1],
         "distance": abs(v - t)}
    where = (f"{entry['figure']} {_interval(v, entry['low'], entry['high'], n)} and its A/A "
             f"noise floor {_interval(aa['value'], aa['low'], aa['high'], aa['n'])} reach "
             f"across {threshold_text(t)}: ")
    if mine[0] is None or noise[0] is None:
        e["needs"] = AT
        e["text"] = where + ("the figure is at the threshold" if mine[0] is None else
                             "the noise floor is at the threshold") + \
            f" (within {AT_THRESHOLD:.1%} of it): no number of rounds will decide it here"
        return e
    # The noise floor's rounds are rounds too (the A/A pair runs in the same rounds).
    e["rounds"] = max(n + 1, mine[0], noise[0])
    e["text"] = where + (f"about {e['rounds']} rounds would take both intervals clear of it on "
                         f"this machine (this run has {n}; an estimate from the intervals' "
                         "widths, which shrink about as 1/sqrt(n): n x (half-width toward "
                         f"{threshold_text(t)} / distance to it)^2 for each, the larger)")
    return e


def open_comparisons(r):
    """open_entry for every comparison that keeps an inconclusive verdict open (a straddled
    threshold, or a ratio's overlap with its A/A noise floor); [] for any other verdict."""
    if r["verdict"] != INCONCLUSIVE:
        return []
    if r.get("noisy"):
        ns = {f["name"]: f["n"] for f in r["figures"] or []}
        return [noise_open_entry(e, x, ns.get(e["figure"]) or e["aa"]["n"])
                for e in r["noisy"] for x in noise_thresholds(e, r["tests"])]
    return [open_entry(t) for t in r["straddled"]]


def short_open(e):
    """An open comparison in a few words, for the verdict table's cell."""
    if e["needs"] == ROUNDS:
        return f"about {e['rounds']} rounds would decide it (now {e['n']})"
    if e["needs"] == AT:
        return "at the threshold: no number of rounds decides it here"
    if e["needs"] == REPETITIONS:
        return "measured once: needs repetitions"
    if e["needs"] == UNMEASURED:
        return "not measured: a budget with room for it"
    return "limit: client-bound (echo-load saturated its core)"
