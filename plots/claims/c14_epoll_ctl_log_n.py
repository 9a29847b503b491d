"""C14: epoll's red-black tree makes EPOLL_CTL_ADD/DEL cost O(log n) in the registered fds."""
import math

import data as D
import figures as F
import verdict as V
from harness_api import stats
from formatting import figure_with_interval, threshold_text, value_text
from switch_figures import rows_ratio, switch_fig

ID = "C14"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("epoll keeps registered fds in a red-black tree, so EPOLL_CTL_ADD/DEL cost O(log n) "
         "in the registered fds; with very many connections, very short connections pay for it.")
BRIEF = 'epoll_ctl ADD/DEL cost O(log n) in registered fds.'
QUOTED = "O(log n) per ADD/DEL (no figure quoted)"
CHARTS = ["epoll_ctl_scaling"]

FEW_FDS, MOST_FDS = 10, 19000  # the registered fds switch-bench compares
GROWS_AT = 1.05  # a churned connection's CPU, most idle connections held over none
LOG_BOUND = math.log2(MOST_FDS) / math.log2(FEW_FDS)  # logarithmic growth, at most
RISING = 0.0  # ns per doubling of the registered fds, above which the pair's cost rises
MIN_LEVELS = 3  # registered-fd levels a trend needs
# The two-sided p below which Kendall's test over every level's repetitions says the cost
# moves with the fds at all: a slope whose interval clears 0 while the levels go up and down
# (1864, 1862, 1719, 1796, 2081 ns on one VM) is a pattern of the levels, not a trend.
TREND_P = 0.05

RULE = ("the pair part: one epoll_ctl ADD+DEL pair's cost rises with log2 of the registered "
        "fds when the median over passes (each a block of every level in alternation) of each "
        "pass's Theil-Sen slope of ns against log2(fds) (at least "
        f"{MIN_LEVELS} levels; interval: the passes resampled) is > "
        f"{threshold_text(RISING)} ns per doubling and Kendall's trend test stratified by pass "
        f"(each pass's S and variance summed) gives p < {TREND_P} (its interval resampled the "
        "same way), and it grows no faster than logarithmically: the most "
        f"fds ({MOST_FDS:,}) over the fewest ({FEW_FDS}) at most {LOG_BOUND:.1f}x (log2 "
        f"{MOST_FDS} / log2 {FEW_FDS}; a linear structure would be {MOST_FDS // FEW_FDS}x); "
        f"the churn part: a churning merged server spends >= {GROWS_AT}x the CPU per "
        "connection with the most idle connections held as with none. Holds when both show, "
        "holds partly when one does; does not hold when the pair grows faster than "
        "logarithmically or neither shows. Per-level medians with their intervals are shown "
        "beside")


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
            f"{n}: {v:.0f}/s, {value_text(c.get(n), '.3g')} us" for n, v in series))
    m = dict(cpu.get("merged", []))
    if not (m.get(0) and len(m) > 1):
        return None
    top = max(m)
    name = f"merged CPU per churned connection, {top} idle held over none"
    # CPU per connection: a client-bound round counts (the server's cost is its own).
    runs = [r for r in churn.get("runs") or [] if r.get("status") in D.SERVER_CPU]
    rounds = D.paired(runs, "server_cpu_us_per_request",
                      {"config": "merged", "idle": top}, {"config": "merged", "idle": 0}
                      )["per_round"]
    fig = F.paired(name, rounds, "x", "scale") if rounds else \
        F.once(name, m[top] / m[0], "x", "scale")
    lines.append(f"- merged: CPU per churned connection with {top} idle held is "
                 f"{fig['value']:.3g}x that with none")
    return fig


def trend(run, pts):
    """The trend of ns against log2(registered fds) within each pass over the levels
    (epoll-ctl-pairs' blocks, or switch-bench's interleaved repetitions): the median over
    passes of each pass's Theil-Sen slope (ns per doubling), and Kendall's test stratified by
    pass (kendall_blocked), both with intervals from resampling whole passes. Over the
    per-level medians when the file kept no repetitions."""
    reps = D.bench_reps(run.get("switch"))
    rows = {n: reps.get(row_name(n), {}) for n, _ in pts}
    passes = sorted(set.intersection(*(set(r) for r in rows.values())))
    xs = [math.log2(n) for n in rows]
    p_name = "epoll_ctl pair: Kendall trend p against log2(registered fds)"
    name = "epoll_ctl pair: Theil-Sen slope over log2(registered fds)"
    if len(passes) < 2:
        ys = [v for _, v in pts]
        return F.once(name, stats.theil_sen(xs, ys), "ns", "switch"), \
            F.exact(p_name, stats.kendall_trend(xs, ys)[1], "", "switch")
    # Each pass's slope and S, once: the resamples below only combine them.
    per_pass = [(stats.theil_sen(xs, ys), *stats.kendall_s(xs, ys))
                for ys in ([rows[n][i] for n in rows] for i in passes)]

    def slope_and_p(sample):
        return stats.median([t[0] for t in sample]), \
            stats.kendall_blocked([t[1:] for t in sample])[1]
    slope, p = slope_and_p(per_pass)
    # The p of the passes that ran is one draw: resampled as the slope is, a p near TREND_P
    # straddles it, and the trend is neither shown nor shown absent.
    (low, high), (p_low, p_high) = stats.bootstrap_cis(per_pass, slope_and_p, F.LEVEL)
    return F.estimate(name, slope, low, high, len(passes), "ns", "switch"), \
        F.estimate(p_name, p, p_low, p_high, len(passes), "", "switch")


def row_name(n):
    return f"syscall/epoll_ctl_add_del/registered:{n}"


def measure(run):
    pts = D.epoll_ctl_rows(D.bench_rows(run.get("switch")))
    churn = (run.get("scale") or {}).get("churn")
    lines = []
    levels = [switch_fig(run, row_name(n), f"epoll_ctl pair at {n} registered") for n, _ in pts]
    if pts:
        lines.append("- one ADD+DEL pair (epoll-ctl-pairs, CPU time), median and 95% interval by "
                     "registered fds: " + ", ".join(
                         f"{n}: {figure_with_interval(f)}" for (n, _), f in zip(pts, levels)))
    cg = churn_lines(churn, lines) if churn else None
    if len(pts) < MIN_LEVELS:
        pairs = ((run.get("switch") or {}).get("config") or {}).get("epoll_ctl_pairs") or {}
        why = pairs.get("status") if pairs.get("status") not in (None, "ok") else \
            run.why("switch")
        return {"lines": lines + [f"- fewer than {MIN_LEVELS} epoll_ctl levels: {why}"]}
    g = rows_ratio(run, row_name(pts[-1][0]), row_name(pts[0][0]),
                     f"epoll_ctl pair {pts[-1][0]} vs {pts[0][0]} registered")
    slope, p_fig = trend(run, pts)
    rises = V.settled_text(*V.settle(lambda t: rising(slope, p_fig, t)), "rises",
                           "shows no trend")
    lines.append(f"- trend over all {len(pts)} levels: Theil-Sen slope "
                 f"{figure_with_interval(slope)} per doubling of the registered fds, Kendall "
                 f"p = {p_fig['value']:.2g}: the pair's cost {rises}; end points {pts[-1][0]} "
                 f"over {pts[0][0]}: {figure_with_interval(g)} (read only against the "
                 "logarithmic bound)")
    if cg is not None and pts[-1][1]:
        lines.append(f"- one ADD+DEL pair is {pts[-1][1] / 10:.3g}% of 1 us; a churned "
                     "connection costs the server the figures above")
    figures = F.present(*levels, slope, p_fig, g, cg)
    return {"lines": lines, "figures": figures, "pair_growth": g, "slope": slope, "p": p_fig,
            "churn_growth": cg,
            "numbers": {f"epoll_ctl pair {MOST_FDS} vs {FEW_FDS} registered":
                        (g["value"], LOG_BOUND)}}


def rising(slope, p, t):
    return t(slope, ">", RISING) and t(p, "<", TREND_P)


def judge(m, t):
    g, cg = m.get("pair_growth"), m.get("churn_growth")
    if g is None:
        return V.NOTRUN
    if t(g, ">", LOG_BOUND):
        return V.NOT
    a = rising(m["slope"], m["p"], t)
    b = cg is not None and t(cg, ">=", GROWS_AT)
    if a and b:
        return V.HOLDS
    return V.PARTLY if a or b else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
