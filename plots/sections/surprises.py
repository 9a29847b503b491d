"""What surprised us, from settled comparisons only: a claim that did not hold (or held partly)
with its figure far from the quoted one, and comparisons between our own figures that the
sources would not predict. Every comparison is between points of the same status (ok: the
server, not the load generator, set the pace) and mode, and says so only when its 95%
interval is wholly on one side: a peak that a client-bound point exceeded is no peak, and a
ratio whose interval straddles its mark says nothing."""
import math

import data as D
import figures as F
from verdict import HOLDS, NOT, NOTRUN, PARTLY
from formatting import figure_with_interval

FIBER_AIM = 0.85  # the fiber server's best throughput over the epoll server's, the project's aim
FAR = 1.0  # a quoted figure is far from ours beyond 10x either way (log10 distance)


def settled_peak(run, model, mode):
    """A model's highest throughput at an ok point (its repetitions' requests/s), or None
    when a client-bound point served more: then the server's peak is not measured, and a
    comparison with the ok peak would set a load generator's limit against a server."""
    pk, bound = D.peak(run, model, mode, D.throughput_points(run, model, mode))
    if pk is None or bound:
        return None
    return pk


def peak_ratio(run, num, den, mode):
    """(ratio figure, num's peak point, den's peak point) of two models' settled peaks in
    one mode, or None."""
    a, b = settled_peak(run, num, mode), settled_peak(run, den, mode)
    if a is None or b is None:
        return None
    fig = F.ratio(f"{num} {mode} peak over {den}'s", D.rps_rounds(a), D.rps_rounds(b), "x",
                  "sweep")
    return fig, a, b


def apart(fig, mark):
    """+1 when the figure's whole interval lies above mark, -1 below, 0 otherwise (a figure
    measured once has no interval: never settled)."""
    low, high = fig.get("low"), fig.get("high")
    if fig.get("value") is None or low is None or high is None or fig.get("n", 0) < 2:
        return 0
    return 1 if low > mark else -1 if high < mark else 0


def fork_over_thread(run):
    out = []
    for mode, label in (("pingpong", "persistent connections"), ("churn", "churn")):
        got = peak_ratio(run, "fork", "thread", mode)
        if got and apart(got[0], 1.0) > 0:
            fig, fk, th = got
            out.append(f"- With {label}, fork-per-connection peaked higher than "
                       f"thread-per-connection: {figure_with_interval(fig)} ({D.rps(fk):.0f} "
                       f"req/s at {fk['conns']} vs {D.rps(th):.0f} at {th['conns']}, both ok "
                       "points), where the PyCon figures put fork an order of magnitude below.")
    return out


def fiber_over_epoll(run):
    got = peak_ratio(run, "fiber", "epoll", "pingpong")
    side = apart(got[0], FIBER_AIM) if got else 0
    if not side:
        return []
    fig, fb, ep = got
    return [f"- The fiber server's best persistent-connection throughput is "
            f"{figure_with_interval(fig)} the hand-written epoll server's ({D.rps(fb):.0f} at "
            f"{fb['conns']} vs {D.rps(ep):.0f} req/s at {ep['conns']}, both ok points)"
            + (": blocking-style code at event-loop speed." if side > 0
               else f", below the {FIBER_AIM} the project aims for.")]


def engine_rounds(run):
    """{engine: [requests/s of each ok throughput round]} of the engine comparison."""
    out = {}
    for r in (run.get("engines") or {}).get("runs", []):
        rps = (r.get("load") or {}).get("requests_per_sec")
        if r.get("kind") == "tput" and r.get("status") == "ok" and rps:
            out.setdefault(r.get("engine"), []).append(rps)
    return out


def fastest_engine(run):
    rounds = engine_rounds(run)
    if "merged" not in rounds:
        return []
    out = []
    for name, reps in rounds.items():
        fig = F.ratio(f"{name} over merged", reps, rounds["merged"], "x", "engines")
        if name != "merged" and apart(fig, 1.0) > 0:
            out.append(f"- The {name} engine served more than merged, the one the sources "
                       f"recommend: {figure_with_interval(fig)} (ok rounds only).")
    return out


def observations(run):
    """Comparisons between our own figures that the sources would not predict."""
    return fork_over_thread(run) + fiber_over_epoll(run) + fastest_engine(run)


def deviations(results):
    """(log distance, claim, name, ours, quoted) of the figures of claims decided against
    (does not hold, holds partly) that lie more than 10x from the quoted figure, largest
    first; a figure read against a client-bound point (a bound) is left out."""
    out = []
    for cid, r in results.items():
        if r["verdict"] not in (NOT, PARTLY):
            continue
        bounds = {f["name"] for f in r["figures"] if f.get("bound")}
        for name, (ours, quoted) in r["numbers"].items():
            if name in bounds or not (ours and quoted and ours > 0 and quoted > 0):
                continue
            dist = abs(math.log10(ours / quoted))
            if dist > FAR:
                out.append((dist, cid, name, ours, quoted))
    return sorted(out, reverse=True)


def surprises(results, run):
    out = ["## What surprised us", "",
           "Only settled comparisons: a claim decided against, or two ok points of one mode "
           "whose 95% interval lies wholly on one side; client-bound points are left out.", ""]
    for _, cid, name, ours, quoted in deviations(results)[:4]:
        factor = ours / quoted
        out.append(f"- {cid} ({results[cid]['verdict']}), {name}: we measured {ours:.3g} where "
                   f"the source suggests {quoted:.3g} ({factor:.3g}x, "
                   f"{'more' if factor > 1 else 'less'}).")
    out += observations(run)
    bad = [cid for cid, r in results.items() if r["verdict"] == NOT]
    if bad:
        out.append(f"- Claims that do not hold on this machine: {', '.join(bad)}.")
    if len(out) == 4:
        held = sum(r["verdict"] == HOLDS for r in results.values())
        left = sum(r["verdict"] == NOTRUN for r in results.values())
        out.append(f"- nothing settled: {held} claims hold, {left} not run, and no comparison "
                   "of ok points lies clear of its mark.")
    return out + [""]
