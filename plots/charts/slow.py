"""slow.json: slow clients against every server model."""
import data as D
from charts.style import (flagged_legend, grid, mark_unmeasured, not_run, plot_series,
                          register)

CHARTS = []


@register(CHARTS, "slow_clients", "Slow clients (made by the client, no netem): per server model")
def slow_clients(run, fig):
    slow = run.get("slow")
    axes = [fig.add_subplot(2, 2, i) for i in range(1, 5)]
    size = ((slow or {}).get("config") or {}).get("size") or 64
    panels = [("requests per second", lambda p: p["load"].get("requests_per_sec") or None),
              ("p99 latency (ms)",
               lambda p: (p["load"].get("latency_us") or {}).get("p99", 0) / 1000 or None),
              ("server CPU per request (us)", lambda p: D.server_cpu_us_per_request(p, size)),
              ("user + kernel memory per connection (KiB)",
               lambda p: ((p.get("rss") or {}).get("per_conn_kb") or 0)
               + max(0.0, D.kernel_per_conn(p)[0] or 0) or None)]
    for ax, (label, value) in zip(axes, panels):
        series = D.sweep_series(slow, "slow", value)
        if not series:
            not_run(ax, run.why("slow") if not slow else "no slow-client points")
            continue
        points = [p for p in slow.get("points", []) if p.get("mode") == "slow"]
        hollow = False
        for m in run.order("models", series):
            hollow |= plot_series(ax, run, m, [p for p in points if p.get("model") == m], value)
        if hollow:
            flagged_legend(ax)
        mark_unmeasured(ax, points)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("slow connections (log scale)", fontsize=8)
        ax.set_ylabel(label, fontsize=8)
        grid(ax)
    axes[0].legend(fontsize=6)
    cfg = (slow or {}).get("config") or {}
    return (f"echo-load --mode slow {cfg.get('load_args', '')}: each request sent in chunks "
            "with a delay between them, a think time between requests; the p99 includes the "
            "time the client itself takes to send a request")
