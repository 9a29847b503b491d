"""peers.json (or, in a quick run, fiberio's first round): our fiber server beside the peers."""
from matplotlib.patches import Patch

import charts.style as style
from charts.style import not_run, register
from peerdata import rows

CHARTS = []

# A bar takes its server's colour (charts/style.py); the kind of server is its hatching.
KIND_HATCHES = {"ours": "", "callback": "..", "coroutine": "//"}


def measured(r):
    return not str(r.get("status", "ok")).startswith("not run") and r.get("cpu") is not None


@register(CHARTS, "peers", "Our fiber server beside the runtimes people already use: CPU and "
                           "throughput per request")
def peers(run, fig):
    table, source, note = rows(run)
    table = [r for r in table if measured(r)]
    if not table:
        for i in range(2):
            not_run(fig.add_subplot(1, 2, i + 1), note or "no data")
        return ""
    levels = sorted({r["conns"] for r in table})
    panels = [("cpu", "cpu_ci", "server CPU per request (us)"),
              ("rps", "rps_ci", "throughput (requests/s)")]
    for p, (key, ci_key, xlabel) in enumerate(panels):
        ax = fig.add_subplot(1, 2, p + 1)
        labels, pos, y = [], [], 0
        for conns in levels:
            for r in [q for q in table if q["conns"] == conns]:
                v, ci = r.get(key), r.get(ci_key)
                err = [[v - ci[0]], [ci[1] - v]] if ci and v is not None else None
                bar = ax.barh(y, v or 0, 0.7, color=style.color(r["server"]), xerr=err,
                              hatch=KIND_HATCHES.get(r["kind"], ""), edgecolor="white",
                              ecolor="k", capsize=2)
                style.tag_bars(bar, [r["server"]])
                labels.append(f"{r['server']} · {conns}")
                pos.append(y)
                y += 1
            y += 0.6  # a gap between the connection levels
        ax.set_yticks(pos)
        ax.set_yticklabels(labels if p == 0 else [""] * len(labels), fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel, fontsize=9)
        ax.grid(True, axis="x", alpha=0.35)
    # Above the panels: every spot inside one covers some server's bar.
    fig.axes[0].legend(handles=[Patch(facecolor="0.6", edgecolor="white", hatch=h, label=k)
                                for k, h in KIND_HATCHES.items()],
                       fontsize=8, loc="lower center", bbox_to_anchor=(1.0, 1.0), ncol=3,
                       title="server", title_fontsize=8, frameon=False)
    return (f"rows are server · connections; from {source}.json, {note}; whiskers: 95% "
            "bootstrap intervals of the median where the rounds allow one; ping-pong, 64 B")
