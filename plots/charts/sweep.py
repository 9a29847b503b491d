"""sweep.json: throughput, p99 and ramp-up time against concurrency, per server model."""
import charts.style as S
import data as D
from claims import c06_thread_collapse as C6
from charts.style import (flagged_legend, grid, mark_unmeasured, not_run, plot_series,
                          register)

CHARTS = []



def sweep_panels(run, fig, value, ylabel, pycon):
    sweep = run.get("sweep")
    axes = [fig.add_subplot(121), fig.add_subplot(122)]
    titles = {"pingpong": "persistent connections (ping-pong)",
              "churn": "one connection per request (churn)"}
    notes = []
    for ax, mode in zip(axes, ("pingpong", "churn")):
        ax.set_title(titles[mode], fontsize=10)
        series = D.sweep_series(sweep, mode, value)
        if not series:
            not_run(ax, run.why("sweep") if not sweep else f"no {mode} points measured")
            continue
        points = [p for p in (sweep or {}).get("points", []) if p.get("mode") == mode]
        hollow = False
        for m in run.order("models", series):
            mine = [p for p in points if p.get("model") == m]
            hollow |= plot_series(ax, run, m, mine, value)
            errs = [p for p in mine if p.get("load") and D.point_errors(p)]
            for p in errs:
                v = value(p)
                if v is not None:
                    ax.plot(p["conns"], v, "x", color="k", ms=8)
        if any(D.point_errors(p) for p in points if p.get("load")):
            ax.plot([], [], "x", color="k", ms=8, label="point with errors")
        if hollow:
            flagged_legend(ax)
        mark_unmeasured(ax, points)
        skipped = D.sweep_not_run(sweep, mode)
        if skipped:
            notes.append(f"{mode}: not run: " + ", ".join(
                f"{p['model']}@{p['conns']}" for p in skipped[:8])
                + (" ..." if len(skipped) > 8 else ""))
        if pycon:
            for name, pts in C6.QUOTED_SERIES.items():
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color="0.55",
                        ls=":" if "physical" in name else "-.", lw=1.2,
                        marker="." if "fork" in name else None, label=f"PyCon 2014 {name}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("concurrent connections (log scale)")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
        grid(ax)
    return "; ".join(notes)


@register(CHARTS, "sweep_throughput", "Echo throughput against concurrency, per server model")
def sweep_throughput(run, fig):
    note = sweep_panels(run, fig, lambda p: p["load"].get("requests_per_sec") or None,
                        "requests per second (log scale)", True)
    return ("x = a point with errors; grey: PyCon 2014 (Python server, other hardware, load mode "
            "not stated; drawn for shape only)" + ("\n" + note if note else ""))


@register(CHARTS, "sweep_p99", "p99 latency against concurrency, per server model")
def sweep_p99(run, fig):
    def p99(p):
        v = (p["load"].get("latency_us") or {}).get("p99")
        return v / 1000.0 if v else None
    note = sweep_panels(run, fig, p99, "p99 latency (ms, log scale)", False)
    return "x = a point with errors" + ("; " + note if note else "")


@register(CHARTS, "ramp_time", "Ramp-up: time to connect and echo once on every connection")
def ramp_time(run, fig):
    ax = fig.add_subplot(111)
    sweep = run.get("sweep")
    series = D.sweep_series(sweep, "pingpong", lambda p: D.ramp(p).get("seconds") or None)
    if not series:
        not_run(ax, run.why("sweep") if not sweep else "no ramp-up figures in the sweep")
        return ""
    for m in run.order("models", series):
        pts = series[m]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=S.marker(m),
                color=S.color(m), label=m, ms=4, gid=S.member_gid(m))
    bad = [p for p in sweep.get("points", []) if p.get("mode") == "pingpong"
           and D.point_status(p)[0] in D.MEASURED and D.ramp(p).get("errors_total")]
    for p in bad:
        ax.plot(p["conns"], D.ramp(p)["seconds"], "x", color="k", ms=8)
    if bad:
        ax.plot([], [], "x", color="k", ms=8, label="ramp-up with errors")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("persistent connections (log scale)")
    ax.set_ylabel("ramp-up time (s, log scale)")
    ax.legend(fontsize=7)
    grid(ax)
    return ("from echo-load's start until every connection was established and had completed "
            "one verified echo (or --ramp-timeout); the measured window opens after it")
