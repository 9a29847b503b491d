"""sweep.json: throughput, p99 and ramp-up time against concurrency, per server model."""
import math

import charts.style as style
import data as D
import figures as F
from claims import c06_thread_collapse as C6
from charts.style import (flagged_legend, grid, mark_unmeasured, not_run, plot_series,
                          register)

CHARTS = []



def sweep_panels(run, fig, value, ylabel, pycon, rounds=None):
    """Both modes' panels. rounds(p): a point's per-repetition figures, drawn as its 95%
    whisker. Each model is named at the end of its line (no legend over the data); the keys
    (hollow, not run, PyCon) go in one legend under the panels."""
    sweep = run.get("sweep")
    fig.set_size_inches(12, 7.4)  # room for the line names right of each panel and the key
    axes = [fig.add_subplot(121), fig.add_subplot(122)]
    titles = {"pingpong": "persistent connections (ping-pong)",
              "churn": "one connection per request (churn)"}
    notes, keys = [], {}
    for ax, mode in zip(axes, ("pingpong", "churn")):
        ax.set_title(titles[mode], fontsize=10)
        series = D.sweep_series(sweep, mode, value)
        if not series:
            not_run(ax, run.why("sweep") if not sweep else f"no {mode} points measured")
            continue
        points = [p for p in (sweep or {}).get("points", []) if p.get("mode") == mode]
        hollow, ends = False, {}
        for m in run.order("models", series):
            mine = [p for p in points if p.get("model") == m]
            hollow |= plot_series(ax, run, m, mine, value)
            drawn = sorted((p["conns"], value(p)) for p in mine
                           if p.get("load") and value(p) is not None)
            if drawn:
                ends[m] = drawn[-1]
            if rounds:
                point_whiskers(ax, m, mine, value, rounds)
            for p in mine:
                v = value(p) if p.get("load") else None
                if v is not None and D.point_errors(p):
                    ax.plot(p["conns"], v, "x", color="k", ms=8)
        if any(D.point_errors(p) for p in points if p.get("load")):
            ax.plot([], [], "x", color="k", ms=8, label="point with errors")
        if hollow:
            flagged_legend(ax)
        mark_unmeasured(ax, points)
        skipped = D.sweep_not_run(sweep, mode)
        by_status = {}
        for p in skipped:  # the footer names each point by the status the legend draws
            by_status.setdefault(D.point_status(p)[0], []).append(f"{p['model']}@{p['conns']}")
        for st, names in by_status.items():
            notes.append(f"{mode}: {st}: " + ", ".join(names[:8])
                         + (" ..." if len(names) > 8 else ""))
        if pycon:
            for name, pts in C6.QUOTED_SERIES.items():
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color="0.55",
                        ls=":" if "physical" in name else "-.", lw=1.2,
                        marker="." if "fork" in name else None, label=f"PyCon 2014 {name}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("concurrent connections (log scale)")
        ax.set_ylabel(ylabel)
        grid(ax)
        name_line_ends(ax, ends)
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in run.order("models", series):
                keys.setdefault(lab, h)
    # Under the panels (inside one, a key covers data): the points' marks under the left, the
    # PyCon lines under the right, each no wider than its panel.
    pycon_keys = [k for k in keys if k.startswith("PyCon")]
    for ax, labels in ((axes[0], [k for k in keys if k not in pycon_keys]), (axes[1], pycon_keys)):
        if labels:
            ax.legend([keys[k] for k in labels], labels, loc="upper left", fontsize=7,
                      bbox_to_anchor=(0.0, -0.13), frameon=False)
    return "; ".join(notes)


def point_whiskers(ax, model, points, value, rounds):
    """Each measured point's 95% interval over its repetitions, in its model's colour."""
    for p in points:
        if not p.get("load") or value(p) is None:
            continue
        f = F.repeated(model, rounds(p), "", "sweep")
        style.whiskers(ax, [p["conns"]], [f.get("low")], [f.get("high")], style.color(model),
                   gid=style.member_gid(model))


def name_line_ends(ax, ends):
    """Each model's name right of the panel, at the height of its last point, nudged apart so
    no two overlap (a log axis: the gap is a ratio)."""
    if not ends:
        return
    lo, hi = ax.get_ylim()
    span = math.log10(hi / lo)
    names = sorted(ends, key=lambda m: ends[m][1])
    pos = [math.log10(ends[m][1] / lo) / span for m in names]
    gap = min(0.045, 1.0 / max(len(pos), 1))
    for k in range(1, len(pos)):  # upwards: each at least a gap above the one below
        pos[k] = max(pos[k], pos[k - 1] + gap)
    if pos[-1] > 1.0:  # past the top: shifted down, and apart again from the top
        pos[-1] = 1.0
        for k in range(len(pos) - 2, -1, -1):
            pos[k] = min(pos[k], pos[k + 1] - gap)
    placed = list(zip(names, pos))
    for m, pos in placed:
        ax.text(1.01, pos, m, transform=ax.transAxes, fontsize=7, color=style.color(m),
                va="center", ha="left", fontweight="bold")


@register(CHARTS, "sweep_throughput", "Echo throughput against concurrency, per server model")
def sweep_throughput(run, fig):
    note = sweep_panels(run, fig, lambda p: p["load"].get("requests_per_sec") or None,
                        "requests per second (log scale)", True, rounds=D.rps_rounds)
    return ("x = a point with errors; grey: PyCon 2014 (Python server, other hardware, load mode "
            "not stated; drawn for shape only); whiskers: 95% interval over the point's "
            "repetitions" + ("\n" + note if note else ""))


@register(CHARTS, "sweep_p99", "p99 latency against concurrency, per server model")
def sweep_p99(run, fig):
    def p99(p):
        v = (p["load"].get("latency_us") or {}).get("p99")
        return v / 1000.0 if v else None
    def p99_rounds(p):
        return [r["p99_us"] / 1000.0 for r in p.get("rounds") or [] if r.get("p99_us")]
    note = sweep_panels(run, fig, p99, "p99 latency (ms, log scale)", False, rounds=p99_rounds)
    return ("x = a point with errors; whiskers: 95% interval over the point's repetitions"
            + ("; " + note if note else ""))


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
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=style.marker(m),
                color=style.color(m), label=m, ms=4, gid=style.member_gid(m))
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
