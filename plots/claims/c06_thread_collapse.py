"""C6: thread-per-connection throughput rises with concurrency, then collapses; fork stays
far lower."""
import data as D
import figures as F
import verdict as V
from formatting import fraction_text, value_text

ID = "C6"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("Thread-per-connection throughput rises with concurrency, then collapses; "
         "fork-per-connection stays far lower.")
BRIEF = 'Thread-per-connection rises, then collapses; fork stays far lower.'
QUOTED = ("VM thread: 909 req/s at 1, 5000 at 4, 4603 at 100, 1778 at 500 (errors); physical "
          "thread: 6942 at 1, 2377 at 100; VM fork: 384-437 req/s, errors at 100")
# The talk's figures, requests/s by concurrency: a Python server on other hardware, drawn
# beside ours for shape only (the absolute values do not compare).
QUOTED_SERIES = {
    "thread (VM)": [(1, 909.27), (2, 3778.38), (3, 4815.37), (4, 5000.04), (10, 4998.16),
                    (50, 4881.93), (100, 4603.24), (200, 3445.12), (500, 1778.26)],
    "fork (VM)": [(1, 384.14), (2, 435.67), (3, 435.17), (4, 437.54), (10, 383.11),
                  (50, 364.03), (100, 320.51)],
    "thread (physical)": [(1, 6942.78), (2, 6891.23), (3, 6584.38), (4, 6517.23),
                          (10, 6178.50), (50, 4926.91), (100, 2377.77)],
}
CHARTS = ["sweep_throughput", "sweep_p99"]

RISE = 1.5  # a later level over the level-1 figure
COLLAPSE = 0.5  # a level over the best level before it
FAR_LOWER = 0.5  # fork's peak over thread's
# The claim's range of concurrency (1 to 10^4): a peak at the last level of a sweep that
# reached it leaves no collapse inside the range; a sweep that stopped short leaves it open.
RANGE_TOP = 10000
# A later level 'has errors' when at least this share of its measured requests failed or never
# finished: the talk's 500-connection errors were a visible share, and a handful of timeouts in
# 100,000 requests (0.06% on the reference's churn) is not a collapse.
ERRORS_AT = 0.01
# Throughput is read on ok points only (data.point_status); an error rate on every point whose
# load ran, a failed one included (its failures are the figure); never on a point stopped by a
# machine limit, which says what the machine lacks, not what the model does.
ERROR_STATUSES = ("ok", "client-bound", "contended", "failed")

RULE = ("on the steady state (the measured window, after echo-load's ramp-up; ramp-up "
        "errors are listed beside), throughput on the points whose status is ok (the others "
        "are listed with why): thread-per-connection 'rises then collapses' when some level "
        f"past level 1 reaches >= {RISE}x the level-1 figure and a level after it falls to "
        f"<= {fraction_text(COLLAPSE)} the best level before it or has errors (>= "
        f"{ERRORS_AT:.0%} of its measured requests failed or unfinished, on a point whose "
        "load ran; a machine limit does not count; a point not ok in every repetition is read "
        f"on its ok ones when it has at least {D.MIN_OK_ROUNDS}; each level is read against "
        "level 1 and against the best before it, so one noisy peak does not decide the shape; "
        f"with no ok level after the peak in a sweep that stopped below {RANGE_TOP:,} "
        "connections, the fall is not measured: anywhere from 0 to 1 of the peak; a "
        "client-bound point that served more than every ok level is the peak as a lower "
        "bound, the server's peak being at least that, so the rise can then only be confirmed "
        "and the fall and fork's share only confirmed below their thresholds, never refuted); "
        f"fork is 'far lower' when its peak is <= {fraction_text(FAR_LOWER)} thread's. Holds "
        "when both hold in some mode, holds partly when one does, "
        "otherwise does not hold")


def error_rate(p):
    """The share of a point's measured requests that failed or never finished (None without
    a measured request)."""
    load = p.get("load") or {}
    failed = D.point_errors(p) + (load.get("unfinished") or 0)
    total = (load.get("requests") or 0) + failed
    return failed / total if total else None


def unmeasured_fall(mode):
    """The fall when the peak is the last ok level of a sweep that stopped short of the
    claim's range: nothing after it was measured, so it may lie anywhere from none (1, the
    peak itself) to all the way down (0). Its interval says so, and the collapse it decides
    stays open (inconclusive) instead of reading as "no"."""
    return F.estimate(f"thread {mode} lowest level after the peak over the peak (no ok level "
                      "after the peak)", 1.0, 0.0, 1.0, 0, "x", "sweep")


def shape_figures(mode, th, fk, later, top):
    """The figures the rule reads for one mode, ratios over the points' repeated runs
    (`rounds`, with their interval; measured once in older runs):

    - steps: per level past the first, in order, (rise, fall, errors): the level over level 1,
      the level over the best level before it, and its error rate (`later`: thread's points
      of every status the error rate allows; a failed level has no throughput, only errors);
    - end: the unmeasured fall past a peak at the last level, when the sweep stopped short;
    - fork: fork's peak over thread's.

    Reading every level, not the peak alone, keeps one noisy level from deciding: a peak
    whose repetitions spread from 0.6 to 1.8 of each other says little of the rise, while a
    tight level before it may say it plainly. top: thread's peak, (point, bound) of
    data.peak: a client-bound peak is read at its lower bound, so a rise to it can only be
    confirmed and a fall from it only confirmed."""
    pk, bound = top
    rounds = D.rps_rounds
    read = sorted(list(th) + ([pk] if bound and pk not in th else []), key=lambda p: p["conns"])
    first = th[0]
    steps, seen = [], [first]
    errors = {p["conns"]: r for p in later if (r := error_rate(p)) is not None}
    for c in sorted({p["conns"] for p in read} | set(errors)):
        if c <= first["conns"]:
            continue
        p = next((q for q in read if q["conns"] == c), None)
        rise = fall = None
        if p is not None:
            is_bound = bound and p is pk
            best = max(seen, key=D.rps)
            rise = F.bounded(F.ratio(f"thread {mode} at {c} connections over its first level",
                                     rounds(p), rounds(first), "x", "sweep"),
                             F.AT_LEAST, is_bound)
            fall = F.ratio(f"thread {mode} at {c} connections over the best level before it",
                           rounds(p), rounds(best), "x", "sweep")
            fall = F.bounded(fall, F.AT_LEAST if is_bound else F.AT_MOST,
                             is_bound or (bound and best is pk))
            seen.append(p)
        err = errors.get(c)
        steps.append((rise, fall, F.exact(f"thread {mode} error rate at {c} connections", err,
                                          "", "sweep") if err else None))
    last = read[-1]["conns"] if read else first["conns"]
    end = unmeasured_fall(mode) if pk["conns"] >= last and last < RANGE_TOP else None
    fk_top = max(fk, key=D.rps, default=None)
    return {"steps": steps, "end": end,
            "peak": F.bounded(F.ratio(f"thread {mode} peak over its first level", rounds(pk),
                                      rounds(first), "x", "sweep"), F.AT_LEAST, bound),
            "fork": F.bounded(F.ratio(f"fork {mode} peak over thread's", rounds(fk_top)
                                      if fk_top and D.rps(pk) else [], rounds(pk), "x", "sweep"),
                              F.AT_MOST, bound)}


def rises_collapses(f, t):
    """(rises, rises then collapses) of one mode's figures under the tester t: some level
    reaches RISE over level 1, and some level after a risen one falls to COLLAPSE of the best
    before it or has errors (or falls, unmeasured, past a last-level peak)."""
    risen = shape = False
    for rise, fall, errors in f["steps"]:
        down = (errors is not None and t(errors, ">=", ERRORS_AT)) or \
            (fall is not None and t(fall, "<=", COLLAPSE))
        shape = shape or (risen and down)
        risen = risen or (rise is not None and t(rise, ">=", RISE))
    if f["end"] is not None:
        shape = shape or (risen and t(f["end"], "<=", COLLAPSE))
    return risen, shape


def ramp_errors(p):
    return D.ramp(p).get("errors_total") or 0


def left_out(run, model, mode, read_points):
    """Lines naming a model's points the throughput did not read (those not in read_points),
    with their status and why."""
    out, read = [], {p["conns"] for p in read_points}
    for p in D.sweep_points(run, model, mode):
        status, why = D.point_status(p)
        if status != "ok" and p["conns"] not in read:
            out.append(f"{p['conns']} ({status}: {'; '.join(why) or 'no reason recorded'})")
    return [f"  - {model} {mode} points left out of the throughput: " + ", ".join(out)] \
        if out else []


def level_text(p):
    rate = error_rate(p)
    return (f"{p['conns']}: {D.rps(p):.0f}"
            + (f" ({len(p['rounds'])} of {p['ok_of']} repetitions ok)" if "ok_of" in p else "")
            + (f" ({D.point_errors(p)} errors, {rate:.2%} of its requests)"
               if D.point_errors(p) and rate is not None else "")
            + (f" [ramp-up errors {ramp_errors(p)}]" if ramp_errors(p) else ""))


def measure(run):
    if not run.get("sweep"):
        return {"lines": [f"no sweep: {run.why('sweep')}"]}
    lines, modes, figures = [], {}, []
    for mode in ("pingpong", "churn"):
        th = D.throughput_points(run, "thread", mode)
        fk = D.throughput_points(run, "fork", mode)
        if not th:
            continue
        later = D.ok_points(run, "thread", mode, allow=ERROR_STATUSES)
        top = D.peak(run, "thread", mode, th)
        fk_top = max(fk, key=D.rps, default=None)
        figures += [F.repeated(f"thread {mode} req/s at {th[0]['conns']} connection(s)",
                               D.rps_rounds(th[0]), "req/s", "sweep"),
                    F.repeated(f"thread {mode} peak req/s", D.rps_rounds(top[0]),
                               "req/s", "sweep"),
                    F.repeated(f"thread {mode} req/s at the highest level",
                               D.rps_rounds(th[-1]), "req/s", "sweep"),
                    F.repeated(f"fork {mode} peak req/s",
                               D.rps_rounds(fk_top) if fk_top else [], "req/s", "sweep")]
        modes[mode] = f = shape_figures(mode, th, fk, later, top)
        figures.append(f["peak"])
        rises, collapses = (V.settled_text(*V.settle(lambda t, i=i: rises_collapses(f, t)[i]),
                                           "yes", "no") for i in (0, 1))
        fk_peak = max((D.rps(p) for p in fk), default=None)
        th_peak = D.rps(top[0])
        lines.append(f"- {mode}: thread req/s by level (ok points): "
                     + ", ".join(level_text(p) for p in th))
        lines += left_out(run, "thread", mode, th) + left_out(run, "fork", mode, fk)
        worst = max((e for _, _, e in f["steps"] if e is not None), key=lambda e: e["value"],
                    default=None)
        if worst is not None:
            lines.append(f"  - highest error rate past level {th[0]['conns']}: "
                         f"{worst['value']:.2%} of the measured requests ({worst['name']}; "
                         f"errors count from {ERRORS_AT:.0%})")
        if top[1]:
            lines.append(f"  - thread's peak is its client-bound point at {top[0]['conns']} "
                         f"connections ({th_peak:.0f} req/s, more than any ok level): echo-load "
                         "set the pace there, so the server's peak is at least that; the rise "
                         "reads as a lower bound, the fall and fork's share as upper bounds")
        lines.append(f"  - thread rises: {rises}, rises then collapses: {collapses}; fork peak "
                     f"{value_text(fk_peak, '.0f')} vs thread peak {th_peak:.0f} req/s")
    if not lines:
        return {"lines": ["no thread-per-connection points measured"]}
    return {"lines": lines, "figures": figures, "modes": modes}


def judge(m, t):
    if "modes" not in m:
        return V.NOTRUN
    shape = any(all(rises_collapses(f, t)) for f in m["modes"].values())
    lower = any(t(f["fork"], "<=", FAR_LOWER) for f in m["modes"].values())
    return V.HOLDS if shape and lower else V.PARTLY if shape or lower else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
