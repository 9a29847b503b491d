"""handoff.json: kernel thread against fiber hand-offs as the contexts grow."""
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
    for kind, color, mk in (("thread", "tab:red", "o"), ("fiber", "tab:blue", "^")):
        pts = [p for p in series.get(kind, []) if p.get("status") == "ok"]
        ax.plot([p["contexts"] for p in pts], [p["cpu_ns_per_handoff"] for p in pts],
                marker=mk, color=color, label=f"{kind} (median)")
        raw = [r for r in ho.get("runs", []) if r.get("kind") == kind and r.get("status") == "ok"]
        ax.plot([r["contexts"] for r in raw], [r["cpu_ns_per_handoff"] for r in raw], ".",
                color=color, alpha=0.4, ms=4, label=f"{kind}, each round")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("contexts m handing off in m/2 pairs on one CPU (log scale)")
    ax.set_ylabel("CPU time per hand-off (ns, log scale)")
    ax.legend(fontsize=8)
    grid(ax)
    return ("thread: FUTEX_WAKE of the partner, then FUTEX_WAIT; fiber: fb_wake + fb_park on "
            "one runtime; process CPU time (getrusage) / hand-offs")
