"""C16: select/poll scan every watched fd on every call; epoll's cost follows the ready fds."""
import math

import data as D
import figures as F
import verdict as V
from formatting import value_text

ID = "C16"
SOURCE = "seed 003 (PyCon 2014 talk); anchor: TLPI"
CLAIM = ("select/poll scan every watched fd on every call; epoll's cost follows only the "
         "ready fds (level-triggered returns every ready fd each time, edge-triggered fewer).")
BRIEF = 'select/poll scan every fd per call; epoll follows only ready fds.'
QUOTED = ("TLPI: 100,000 operations over 10,000 fds cost poll 990 s, select 930 s, epoll "
          "0.66 s of CPU")
TLPI_POLL_S, TLPI_EPOLL_S = 990, 0.66  # TLPI table 63-9: CPU seconds
TLPI_POLL_EPOLL = TLPI_POLL_S / TLPI_EPOLL_S
CHARTS = ["idle_scaling"]

LEVEL, MIN_LEVEL = 10000, 1000  # idle connections judged at (else the largest >= MIN_LEVEL)
HOLDS_GROWTH = 3  # poll at LEVEL over poll with none, and over merged at LEVEL
PARTLY_GROWTH = 1.5
EPOLL_CALM = 1.5  # every epoll engine at LEVEL over itself with none, at most
ALSO_SHOWN = ("uring-poll", "uring (model)", "epoll (model)")


def power(n):
    return f"10^{round(math.log10(n))}"


RULE = (f"at {power(LEVEL)} idle connections (else the largest idle level poll and merged "
        f"both reached, at least {power(MIN_LEVEL)}): holds when poll's server CPU per request "
        f"is >= {HOLDS_GROWTH}x its own with no idle connection and >= {HOLDS_GROWTH}x "
        f"merged's at that level while every epoll engine stays within {EPOLL_CALM}x of its "
        f"own with none; holds partly when poll grows >= {PARTLY_GROWTH}x with the epoll "
        f"engines within {EPOLL_CALM}x, or poll grows >= {HOLDS_GROWTH}x while some epoll "
        "engine grows more; otherwise does not hold. select is reported up to its FD_SETSIZE "
        "limit")


def scale_table(part, configs, field="median", spec=".3g"):
    """Markdown rows: one per configuration, one column per level (not run cells say why)."""
    levels = (part or {}).get("levels") or []
    out = ["| configuration | " + " | ".join(str(n) for n in levels) + " |",
           "|---|" + "---:|" * len(levels)]
    for cfg in configs:
        cells = []
        for n in levels:
            v = D.scale_at(part, cfg, n, field)
            st = D.scale_status(part, cfg, n)
            cells.append(value_text(v, spec) if v is not None else
                         ("FD_SETSIZE" if "FD_SETSIZE" in st else "not run"))
        out.append(f"| {cfg} | " + " | ".join(cells) + " |")
    return out


def measure(run):
    sc = run.get("scale")
    idle = (sc or {}).get("idle")
    if not idle:
        return {"lines": [f"no idle-scaling runs: {run.why('scale')}"]}
    series = D.scale_series(idle)
    both = [n for n, _ in series.get("poll", []) if D.scale_at(idle, "merged", n) is not None]
    level = LEVEL if LEVEL in both else max([n for n in both if n >= MIN_LEVEL], default=None)
    lines = [f"- server CPU per request (us) of {idle.get('active_conns')} active ping-pong "
             "connections while N idle connections are open (columns: N), medians of "
             f"{sc.get('config', {}).get('rounds')} interleaved rounds:", ""]
    lines += scale_table(idle, list(series) or D.scale_configs(sc)) + [""]
    for cfg, why in (idle.get("not_built") or {}).items():
        lines.append(f"- {cfg}: {why}")
    if level is None or D.scale_at(idle, "poll", 0) is None:
        return {"lines": lines + [f"- poll and merged were not both measured at >= "
                                  f"{power(MIN_LEVEL)} idle connections and at 0"]}
    growth = ratio(idle, ("poll", level), ("poll", 0), f"poll at {level} idle over none")
    vs_epoll = ratio(idle, ("poll", level), ("merged", level), f"poll/merged at {level} idle")
    ep_growth = [ratio(idle, (e, level), (e, 0), f"{e} at {level} idle over none")
                 for e in D.epoll_family(idle)
                 if D.scale_at(idle, e, level) and D.scale_at(idle, e, 0)]
    lines.append(f"- at {level} idle connections: poll {D.scale_at(idle, 'poll', level):.3g} us "
                 f"per request, {growth['value']:.3g}x its own with none; poll/merged "
                 f"{vs_epoll['value']:.3g} (medians of paired rounds)")
    lines.append("- epoll engines, CPU per request at that level over none: " + ", ".join(
        f"{f['name'].split(' at ')[0]} {f['value']:.2f}x" for f in ep_growth))
    sel = [(n, v) for n, v in series.get("select", [])]
    if sel and sel[0][0] == 0 and len(sel) > 1:
        lines.append(f"- select: {sel[-1][1]:.3g} us at {sel[-1][0]} idle, "
                     f"{sel[-1][1] / sel[0][1]:.3g}x its own with none; beyond that "
                     "not run: FD_SETSIZE")
    for cfg in ALSO_SHOWN:
        a0, aL = D.scale_at(idle, cfg, 0), D.scale_at(idle, cfg, level)
        if a0 and aL:
            lines.append(f"- {cfg}: {aL:.3g} us at {level} idle, {aL / a0:.2f}x its own with "
                         "none")
    lines.append(f"- anchor (TLPI): poll/epoll {TLPI_POLL_EPOLL:.0f}x in CPU for 100,000 "
                 "monitoring calls over 10,000 fds; ours divides whole requests (the echo's "
                 "read and write included), so the ratio is smaller by construction")
    return {"lines": lines, "figures": [growth, vs_epoll] + ep_growth, "growth": growth,
            "vs_epoll": vs_epoll, "epoll": ep_growth,
            "numbers": {f"poll/merged CPU per request at {level} idle":
                        (vs_epoll["value"], TLPI_POLL_EPOLL)}}


def ratio(idle, num, den, name):
    """Server CPU per request of (config, idle level) num over den, paired by round (the
    configurations and levels of a round run interleaved), else the ratio of the medians."""
    # CPU per request: a client-bound round counts (the server's cost per request is its own).
    runs = [r for r in idle.get("runs") or [] if r.get("status") in D.SERVER_CPU]
    per = D.paired(runs, "server_cpu_us_per_request",
                   {"config": num[0], "idle": num[1]}, {"config": den[0], "idle": den[1]}
                   )["per_round"]
    if per:
        return F.paired(name, per, "x", "scale")
    return F.once(name, D.scale_at(idle, *num) / D.scale_at(idle, *den), "x", "scale")


def judge(m, t):
    growth = m.get("growth")
    if growth is None:
        return V.NOTRUN
    calm = bool(m["epoll"]) and all(t(f, "<=", EPOLL_CALM) for f in m["epoll"])
    if t(growth, ">=", HOLDS_GROWTH) and t(m["vs_epoll"], ">=", HOLDS_GROWTH) and calm:
        return V.HOLDS
    if (t(growth, ">=", PARTLY_GROWTH) and calm) or t(growth, ">=", HOLDS_GROWTH):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
