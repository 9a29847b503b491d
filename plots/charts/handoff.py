"""handoff.json: kernel thread against fiber hand-offs as the contexts grow, with the two fits
of the thread series that claim C15 compares."""
import charts.style as style
import data as D
from claims import c15_cfs_log_m as C15
from charts.style import grid, not_run, register

CHARTS = []


@register(CHARTS, "handoff_scale", "Kernel thread vs fiber hand-offs against the contexts on one CPU")
def handoff_scale(run, fig):
    ax = fig.add_subplot(111)
    ho = run.get("handoff")
    series = (ho or {}).get("series") or {}
    if not any(p.get("status") == "ok" for pts in series.values() for p in pts):
        not_run(ax, run.why("handoff"))
        return ""
    for kind in ("thread", "fiber"):
        pts = [p for p in series.get(kind, []) if p.get("status") == "ok"]
        col, gid = style.color(kind), style.member_gid(kind)
        ax.plot([p["contexts"] for p in pts], [p["cpu_ns_per_handoff"] for p in pts],
                marker=style.marker(kind), color=col, label=f"{kind} (median)", gid=gid)
        raw = [r for r in ho.get("runs", []) if r.get("kind") == kind and r.get("status") == "ok"]
        ax.plot([r["contexts"] for r in raw], [r["cpu_ns_per_handoff"] for r in raw], ".",
                color=col, alpha=0.4, ms=4, label=f"{kind}, each round", gid=gid)
    fits(ax, D.handoff_series(run, "thread"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("contexts m handing off in m/2 pairs on one CPU (log scale)")
    ax.set_ylabel("CPU time per hand-off (ns, log scale)")
    ax.legend(fontsize=8, loc="upper left")
    grid(ax)
    return ("thread: FUTEX_WAKE of the partner, then FUTEX_WAIT; fiber: fb_wake + fb_park on "
            "one runtime; process CPU time (getrusage) / hand-offs; dashed: C15's fits of the "
            "thread medians")


def fits(ax, th):
    """C15's two least-squares fits of the thread series, drawn over the measured range."""
    if len(th) < C15.MIN_LEVELS:
        return
    ms = sorted({m for m, _ in th})
    grid_m = [ms[0] * (ms[-1] / ms[0]) ** (i / 60) for i in range(61)]
    for shape, fit, ls, words in (("log", C15.log_fit, "--", "a + b*log2(m)"),
                                  ("linear", C15.lin_fit, ":", "a + b*m")):
        a, b, r2 = fit(th)
        x = C15.math.log2 if shape == "log" else float
        ys = [a + b * x(m) for m in grid_m]
        keep = [(m, y) for m, y in zip(grid_m, ys) if y > 0]
        ax.plot([m for m, _ in keep], [y for _, y in keep], ls=ls, color="0.25", lw=1.3,
                label=f"thread, {shape} fit {words}: R^2 {r2:.2f}", gid=f"fit:{shape}")
