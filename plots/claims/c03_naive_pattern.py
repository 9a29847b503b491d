"""C3: naive engines DEL the fd before the IO and ADD it after: two epoll_ctl per wait."""
import figures as F
import verdict as V
from formatting import threshold_text, value_text

ID = "C3"
SOURCE = "seed 001 (NtyCo)"
CLAIM = ("Naive engines delete the fd from epoll before the IO and add it back after, so "
         "one fd belongs to one context at a time.")
BRIEF = 'Naive engines pay two epoll_ctl calls (del, add) per wait.'
QUOTED = "2 epoll_ctl per wait"
QUOTED_CTL = 2.0
CHARTS = ["engines"]

TOLERANCE = 0.1  # around the quoted 2, and between the engine's and the kernel's counts
# Rounded so that 2.0 + 0.1 is the 2.1 the rule prints, not 2.1000000000000001.
HOLDS_LOW, HOLDS_HIGH = round(QUOTED_CTL - TOLERANCE, 9), round(QUOTED_CTL + TOLERANCE, 9)
PARTLY_LOW, PARTLY_HIGH = 1.5, 2.1

RULE = (f"holds when the naive engine makes {threshold_text(QUOTED_CTL)} +- "
        f"{threshold_text(TOLERANCE)} "
        "epoll_ctl per request (ping-pong) and the kernel's count agrees within "
        f"{threshold_text(TOLERANCE)}; holds partly when it makes {threshold_text(PARTLY_LOW)}-"
        f"{threshold_text(PARTLY_HIGH)}; otherwise does not hold")


def measure(run):
    s = ((run.get("engines") or {}).get("summary") or {}).get("naive")
    if not s or s.get("ctl_per_request_engine") is None:
        return {"lines": [f"no naive engine count: {run.why('engines')}"]}
    e, k = s["ctl_per_request_engine"], s.get("ctl_per_request_kernel")
    lines = [f"- naive: {e:.3f} epoll_ctl per request counted by the engine, "
             f"{value_text(k, '.3f')} by the kernel (perf tracepoint)"]
    other = (run.get("engines") or {}).get("summary") or {}
    lines.append("- others: " + ", ".join(f"{n} "
                                          f"{value_text(v.get('ctl_per_request_engine'), '.3f')}"
                                          for n, v in other.items() if n != "naive"))
    engine = F.exact("epoll_ctl per request, naive (engine count)", e, "", "engines")
    kernel = F.exact("epoll_ctl per request, naive (kernel tracepoint)", k, "", "engines")
    gap = F.exact("epoll_ctl per request, naive, kernel minus engine count (absolute)",
                  abs(k - e) if k is not None else None, "", "engines")
    figures = [engine, kernel]
    figures += [F.exact(f"epoll_ctl per request, {n} (engine count)",
                        v.get("ctl_per_request_engine"), "", "engines")
                for n, v in other.items() if n != "naive"]
    return {"lines": lines, "figures": figures, "engine": engine, "gap": gap,
            "numbers": {"naive epoll_ctl per request": (e, QUOTED_CTL)}}


def judge(m, t):
    e = m.get("engine")
    if e is None:
        return V.NOTRUN
    agrees = m["gap"]["value"] is None or t(m["gap"], "<=", TOLERANCE)
    if t(e, ">=", HOLDS_LOW) and t(e, "<=", HOLDS_HIGH) and agrees:
        return V.HOLDS
    if t(e, ">=", PARTLY_LOW) and t(e, "<=", PARTLY_HIGH):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
