"""C7: around 10K connections the thread and process models stop working."""
import data as D
import figures as F
import verdict as V
from harness_api import stats
from formatting import fraction_text

ID = "C7"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("Around 10K connections the thread and process models stop working; thread "
         "switching degrades badly past ~1K.")
BRIEF = 'Threads and processes break near 10K connections, degrading past 1K.'
QUOTED = "C10K breaks threads and processes; degradation past ~1K"
CHARTS = ["sweep_throughput", "sweep_p99"]

HIGH_LEVEL = 5000  # the levels that count as 'around 10K'
HELD_SHARE = 0.9  # a server that never held this share of its connections at once fails
HALF_PEAK = 0.5
P99_LIMIT_US = 1e6
DEGRADES_PAST = 1000  # thread's best past this over its best up to it
BLOCKING_MODELS = ("thread", "fork")
MIN_OK_ROUNDS = D.MIN_OK_ROUNDS  # ok repetitions a client-bound point needs (pointdata.py)

RULE = ("three sub-claims on the persistent-connection sweep's steady state (the window "
        "after echo-load's ramp-up; ramp-up time and errors listed beside): thread fails at "
        f"its highest level >= {HIGH_LEVEL}, fork fails there ('fails': the server never held "
        f"{HELD_SHARE:.0%} of the connections at once, window errors, not runnable on this "
        f"machine, throughput < {fraction_text(HALF_PEAK)} its own peak (read as C6 reads it: a "
        "client-bound point above every ok level is the peak as a lower bound, against which "
        "a share can only be confirmed below half), or p99 > "
        f"{P99_LIMIT_US / 1e6:g} s), and thread's best figure past {DEGRADES_PAST} "
        f"connections is < {fraction_text(HALF_PEAK)} its best up to {DEGRADES_PAST}. All three -> "
        "holds, some -> "
        "holds partly, none -> does not hold; not run when no level >= "
        f"{HIGH_LEVEL} was tried")


def fails_at(model, p, peak, t):
    """Why a point counts as 'the model no longer works' (None when it worked), its
    thresholds read through the tester t. A failed or limit point (or one the driver did not
    run) is the model not working; a client-bound or contended point is read for what the
    load generator's speed does not set (connections held, errors), and for its throughput
    and p99 on its ok repetitions only, when it has at least MIN_OK_ROUNDS of them (one
    saturated repetition of five does not hide how the other four went). peak: the model's
    (point, bound) of data.peak; against a client-bound peak the share is an upper bound, read
    only to confirm a fall below half."""
    peak, bound = peak
    status, why = D.point_status(p)
    if status not in D.MEASURED or not p.get("load"):
        return f"{status}: " + ("; ".join(why) or p.get("reason", ""))
    at = f"{model} at {p['conns']} connections"
    held = (p.get("server") or {}).get("max_concurrent")
    if held is not None and t(F.exact(f"{at}: share of the connections held at once",
                                      held / p["conns"], "", "sweep"), "<", HELD_SHARE):
        return (f"the server held at most {held} of {p['conns']} connections at once; "
                f"{D.point_errors(p)} errors")
    if D.point_errors(p):
        return f"{D.point_errors(p)} errors"
    rps, p99 = D.rps_rounds(p), p99_rounds(p)
    if status != "ok":
        ok = D.ok_rounds(p)
        if len(ok) < MIN_OK_ROUNDS:
            return None
        rps = [r["requests_per_sec"] for r in ok if r.get("requests_per_sec") is not None]
        p99 = [r["p99_us"] for r in ok if r.get("p99_us") is not None]
        at += f" ({len(ok)} ok repetitions)"
    # Over repeated runs (`rounds`) the ratio carries their interval; older runs: n=1.
    share = F.ratio(f"{at}: req/s over its peak", rps, D.rps_rounds(peak) if peak else [],
                    "x", "sweep")
    if peak and t(F.bounded(share, F.AT_MOST, bound), "<", HALF_PEAK):
        return f"throughput {stats.median(rps):.0f} < half its peak {D.rps(peak):.0f}"
    if p99 and t(F.repeated(f"{at}: p99 latency", p99, "us", "sweep"), ">", P99_LIMIT_US):
        return f"p99 latency over {P99_LIMIT_US / 1e6:g} s"
    return None


def p99_rounds(p):
    """A point's p99 per repeated run (`rounds`), else the median run's."""
    reps = [r.get("p99_us") for r in p.get("rounds") or [] if r.get("p99_us") is not None]
    return reps or [(p["load"].get("latency_us") or {}).get("p99", 0)]


def ok_rounds_text(p):
    """What a point that is not ok overall was read for."""
    n = len(D.ok_rounds(p))
    return (f"throughput and p99 read on its {n} ok repetitions" if n >= MIN_OK_ROUNDS else
            "only the connections held and errors read")


def ramp_beside(p):
    """The ramp-up of a point, for the measured lines: never hidden, never mixed in."""
    r = D.ramp(p)
    if not r:
        return ""
    return (f"; ramp-up {r['seconds']:.2f} s, {r.get('errors_total', 0)} ramp-up errors"
            + ("" if r.get("complete", True) else f", {r.get('unfinished')} never echoed"))


def measure(run):
    if not run.get("sweep"):
        return {"lines": [f"no sweep: {run.why('sweep')}"]}
    blocking, lines, figures, unmeasured = [], [], [], []
    for model in run.members("models"):
        pts = D.sweep_points(run, model, "pingpong")
        high = [p for p in pts if p["conns"] >= HIGH_LEVEL]
        if not high:
            continue
        # A level the sweep's budget left out says nothing of the model: the highest level it
        # measured stands for it, and with none the model's sub-claim is open.
        if all(D.over_budget(p) for p in high):
            lines.append(f"- {model} at {high[-1]['conns']} connections: not run "
                         f"({high[-1]['reason']}): its part of the claim is open")
            if model in BLOCKING_MODELS:
                blocking.append((model, None, None))
                unmeasured.append(V.unmeasured_entry(
                    f"{model} at {high[-1]['conns']} connections", high[-1]["reason"],
                    f"measuring {model} at {HIGH_LEVEL} connections or more (a sweep budget "
                    "with room for it; the full preset's has) would decide its part, which "
                    "either way changes the verdict"))
            continue
        high = [p for p in high if not D.over_budget(p)]
        # Its peak over the points whose throughput is the server's (status ok), or, as C6
        # reads it, a client-bound point above them as a lower bound.
        peak = D.peak(run, model, "pingpong", D.ok_points(run, model, "pingpong"))
        top = high[-1]
        # The same comparisons the verdict makes, on intervals: a server within a threshold's
        # tolerance is said to be so, never "fails" or "works".
        fails, straddled = V.settle(lambda t: fails_at(model, top, peak, t) is not None)
        why = fails_at(model, top, peak, V.Tester({})) if fails else None
        status = D.point_status(top)[0]
        if status in D.MEASURED and top.get("load"):
            at = f"at {top['conns']} connections"
            figures += ([F.repeated(f"{model} req/s {at}", D.rps_rounds(top), "req/s",
                                    "sweep")] if status == "ok" else []) + [
                        F.exact(f"{model} connections held at once {at}",
                                (top.get("server") or {}).get("max_concurrent"), "", "sweep"),
                        F.exact(f"{model} errors {at}", D.point_errors(top), "", "sweep")]
        held = (top.get("server") or {}).get("max_concurrent")
        lines.append(f"- {model} at {top['conns']} connections: "
                     + (f"fails ({why})" if fails else f"works ({D.rps(top):.0f} req/s, p99 "
                        f"{top['load']['latency_us']['p99'] / 1000:.1f} ms, held {held}"
                        + ("" if status == "ok" else f"; {D.status_text(top)}: "
                           + ok_rounds_text(top)) + ")"
                        if fails is False else "undecided, within the rule's tolerance ("
                        + "; ".join(V.straddle_text(x) for x in straddled) + ")")
                     + ramp_beside(top))
        if model in BLOCKING_MODELS:
            blocking.append((model, top, peak))
    if not blocking:
        return {"lines": [f"the sweep did not try {HIGH_LEVEL} or more connections "
                          "(its --levels stop below)"]}
    th = D.ok_points(run, "thread", "pingpong")
    low, bound = D.peak(run, "thread", "pingpong",
                        [p for p in th if p["conns"] <= DEGRADES_PAST], upto=DEGRADES_PAST)
    high = max((p for p in th if p["conns"] > DEGRADES_PAST), key=D.rps, default=None)
    degrade = None
    if low and D.rps(low) and high is not None:
        degrade = F.ratio(f"thread best req/s past {DEGRADES_PAST} connections over its best "
                          "up to it", D.rps_rounds(high), D.rps_rounds(low), "x", "sweep")
        degrade = F.bounded(degrade, F.AT_MOST, bound)
        lines.append(f"- thread best up to {DEGRADES_PAST} connections {D.rps(low):.0f} req/s "
                     f"({low['conns']}{', client-bound: at least that' if bound else ''}), "
                     f"past {DEGRADES_PAST} {D.rps(high):.0f} req/s ({high['conns']})")
        figures += [F.repeated(f"thread best req/s up to {DEGRADES_PAST} connections",
                               D.rps_rounds(low), "req/s", "sweep"),
                    F.repeated(f"thread best req/s past {DEGRADES_PAST} connections",
                               D.rps_rounds(high), "req/s", "sweep")]
    return {"lines": lines, "figures": figures, "blocking": blocking, "degrade": degrade,
            "unmeasured": unmeasured}


def judge(m, t):
    if not m.get("blocking"):
        return V.NOTRUN
    subs = [fails_at(model, top, peak, t) is not None for model, top, peak in m["blocking"]
            if top is not None]
    if m["degrade"] is not None:
        subs.append(t(m["degrade"], "<", HALF_PEAK))
    # A model whose high levels were left out for time could go either way: decided only
    # when both ways give the same verdict.
    unknown = sum(1 for _, top, _ in m["blocking"] if top is None)
    ways = {combine(subs + [fails] * unknown) for fails in (True, False)}
    return ways.pop() if len(ways) == 1 else frozenset(ways)


def combine(subs):
    return V.HOLDS if subs and all(subs) else V.PARTLY if any(subs) else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
