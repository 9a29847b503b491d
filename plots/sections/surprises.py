"""What surprised us: the largest deviations from the quoted figures, comparisons between our
own figures that the sources would not predict, and the claims that did not hold."""
import math

import data as D
from verdict import NOT, NOTRUN, fmt


FIBER_AIM = 0.85  # the fiber server's best throughput over the epoll server's, the project's aim


def peak(run, model, mode):
    pts = D.ok_points(run, model, mode)
    return max(pts, key=D.rps) if pts else None


def observations(run):
    """Comparisons between our own figures that the sources would not predict."""
    out = []
    for mode, label in (("pingpong", "persistent connections"), ("churn", "churn")):
        th, fk = peak(run, "thread", mode), peak(run, "fork", mode)
        if th and fk and D.rps(fk) > D.rps(th):
            out.append(f"- With {label}, fork-per-connection peaked higher than "
                       f"thread-per-connection ({D.rps(fk):.0f} req/s at {fk['conns']} vs "
                       f"{D.rps(th):.0f} at {th['conns']}), where the PyCon figures put fork "
                       "an order of magnitude below.")
    fb, ep = peak(run, "fiber", "pingpong"), peak(run, "epoll", "pingpong")
    if fb and ep and D.rps(ep):
        out.append(f"- The fiber server's best persistent-connection throughput is "
                   f"{D.rps(fb) / D.rps(ep):.2f}x the hand-written epoll server's "
                   f"({D.rps(fb):.0f} vs {D.rps(ep):.0f} req/s)"
                   + (": blocking-style code at event-loop speed."
                      if D.rps(fb) >= FIBER_AIM * D.rps(ep)
                      else f", below the {FIBER_AIM} the project aims for."))
    summ = (run.get("engines") or {}).get("summary") or {}
    tput = {e: v.get("requests_per_sec") for e, v in summ.items() if v.get("requests_per_sec")}
    if tput:
        best = max(tput, key=tput.get)
        if best != "merged":
            out.append(f"- The fastest engine in the comparison was {best} "
                       f"({tput[best]:.0f} req/s), not merged ({fmt(tput.get('merged'), '.0f')})"
                       ".")
    return out


def surprises(results, run):
    """The largest deviations between our figures and the quoted ones, and the claims that
    did not hold, computed from the verdicts' numbers."""
    devs = []
    for cid, r in results.items():
        for name, (ours, quoted) in r["numbers"].items():
            if ours and quoted and ours > 0 and quoted > 0:
                devs.append((abs(math.log10(ours / quoted)), cid, name, ours, quoted))
    devs.sort(reverse=True)
    out = ["## What surprised us", ""]
    for _, cid, name, ours, quoted in devs[:4]:
        factor = ours / quoted
        out.append(f"- {cid}, {name}: we measured {ours:.3g} where the source suggests "
                   f"{quoted:.3g} ({factor:.3g}x, {'more' if factor > 1 else 'less'}).")
    out += observations(run)
    bad = [cid for cid, r in results.items() if r["verdict"] == NOT]
    if bad:
        out.append(f"- Claims that do not hold on this machine: {', '.join(bad)}.")
    notrun = [cid for cid, r in results.items() if r["verdict"] == NOTRUN]
    if notrun:
        out.append(f"- Not run here: {', '.join(notrun)}.")
    if len(out) == 2:
        out.append("- nothing measured yet")
    return out + [""]
