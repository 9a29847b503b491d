"""C14: epoll's red-black tree makes EPOLL_CTL_ADD/DEL cost O(log n) in the registered fds."""
import math

import data as D
import figures as F
import verdict as V

ID = "C14"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("epoll keeps registered fds in a red-black tree, so EPOLL_CTL_ADD/DEL cost O(log n) "
         "in the registered fds; with very many connections, very short connections pay for it.")
QUOTED = "O(log n) per ADD/DEL (no figure quoted)"
CHARTS = ["epoll_ctl_scaling"]

FEW_FDS, MOST_FDS = 10, 19000  # the registered fds switch-bench compares
GROWS_AT = 1.05  # the pair's cost, and a churned connection's CPU, most over fewest
LOG_BOUND = math.log2(MOST_FDS) / math.log2(FEW_FDS)  # logarithmic growth, at most

RULE = (f"holds when one epoll_ctl ADD+DEL pair costs >= {GROWS_AT}x more with the most fds "
        f"registered ({MOST_FDS:,}) than with {FEW_FDS} but at most {LOG_BOUND:.1f}x (log2 "
        f"{MOST_FDS} / log2 {FEW_FDS}: logarithmic, a linear structure would be "
        f"{MOST_FDS // FEW_FDS}x), and a churning merged server spends >= {GROWS_AT}x the CPU "
        "per connection with the most idle connections held as with none; holds partly when "
        "only one of the two shows; does not hold when the pair's cost grows faster than "
        "logarithmically or neither shows")


def churn_lines(churn, lines):
    """Appends the churn figures; returns merged's CPU per churned connection, most idle
    connections held over none, paired by round (None when not measured)."""
    cpu = D.scale_series(churn, "server_cpu_us_per_request")
    tput = D.scale_series(churn, "median")
    lines.append("- churn (connect, one request, close) while N idle connections are held, "
                 "connections/s and server CPU per connection (us):")
    for cfg, series in tput.items():
        c = dict(cpu.get(cfg, []))
        lines.append(f"  - {cfg}: " + ", ".join(
            f"{n}: {v:.0f}/s, {V.fmt(c.get(n), '.3g')} us" for n, v in series))
    m = dict(cpu.get("merged", []))
    if not (m.get(0) and len(m) > 1):
        return None
    top = max(m)
    name = f"merged CPU per churned connection, {top} idle held over none"
    rounds = D.paired(churn.get("runs"), "server_cpu_us_per_request",
                      {"config": "merged", "idle": top}, {"config": "merged", "idle": 0},
                      status="ok")["per_round"]
    fig = F.paired(name, rounds, "x", "scale") if rounds else \
        F.once(name, m[top] / m[0], "x", "scale")
    lines.append(f"- merged: CPU per churned connection with {top} idle held is "
                 f"{fig['value']:.3g}x that with none")
    return fig


def measure(run):
    pts = D.epoll_ctl_rows(D.bench_rows(run.get("switch")))
    churn = (run.get("scale") or {}).get("churn")
    lines = []
    if pts:
        lines.append("- one ADD+DEL pair (switch-bench, CPU time), by registered fds: " +
                     ", ".join(f"{n}: {t:.0f} ns" for n, t in pts))
    cg = churn_lines(churn, lines) if churn else None
    if not pts or len(pts) < 2:
        return {"lines": lines + [f"- no epoll_ctl rows: {run.why('switch')}"]}
    row = "syscall/epoll_ctl_add_del/registered:{}".format
    g = V.rows_ratio(run, row(pts[-1][0]), row(pts[0][0]),
                     f"epoll_ctl pair {pts[-1][0]} vs {pts[0][0]} registered")
    lines.append(f"- ADD+DEL at {pts[-1][0]} registered over {pts[0][0]}: {g['value']:.4g}x "
                 "(median of paired repetitions)")
    if cg is not None and pts[-1][1]:
        lines.append(f"- one ADD+DEL pair is {pts[-1][1] / 10:.3g}% of 1 us; a churned "
                     "connection costs the server the figures above")
    figures = V.figs(V.switch_fig(run, row(pts[0][0])), V.switch_fig(run, row(pts[-1][0])), g,
                     cg)
    return {"lines": lines, "figures": figures, "pair_growth": g, "churn_growth": cg,
            "numbers": {f"epoll_ctl pair {MOST_FDS} vs {FEW_FDS} registered":
                        (g["value"], LOG_BOUND)}}


def judge(m, t):
    g, cg = m.get("pair_growth"), m.get("churn_growth")
    if g is None:
        return V.NOTRUN
    if t(g, ">", LOG_BOUND):
        return V.NOT
    a = t(g, ">=", GROWS_AT)
    b = cg is not None and t(cg, ">=", GROWS_AT)
    if a and b:
        return V.HOLDS
    return V.PARTLY if a or b else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
