"""What every chart shares: the Agg backend, registration, the "not run" panel, the machine
footnote and the grid."""
import textwrap

import matplotlib

matplotlib.use("Agg")  # no display; must be chosen before pyplot is imported anywhere
# SVG text stays text (each glyph drawn as a path made every chart several times larger, and
# REPORT.html inlines them all).
matplotlib.rcParams["svg.fonttype"] = "none"

import data as D  # noqa: E402

# 7-point footnote text: about 17 characters fit in an inch, and a line takes 0.12 inch.
FOOT_CHARS_PER_INCH = 17
FOOT_INCHES_PER_LINE = 0.12

# The shared palette has ten colours and ten markers; a chart with more series (the scale
# experiment declares eleven configurations) would draw two of them alike. These extend both
# lists, so every series up to sixteen keeps a colour and a marker of its own.
SERIES_COLORS = D.PALETTE + ["black", "gold", "navy", "lime", "teal", "maroon"]
SERIES_MARKERS = D.MARKER_CYCLE + ["h", "p", "d", "8", "H", "x"]


def series_style(i):
    """(colour, marker) of the i-th series of a chart."""
    return SERIES_COLORS[i % len(SERIES_COLORS)], SERIES_MARKERS[i % len(SERIES_MARKERS)]


def register(charts, stem, title):
    """A decorator adding (stem, title, function) to a chart module's CHARTS list. The
    function draws into the figure it is given and returns a footnote (may be empty)."""
    def add(fn):
        charts.append((stem, title, fn))
        return fn
    return add


def not_run(ax, why):
    ax.text(0.5, 0.5, "not run\n" + why, ha="center", va="center", transform=ax.transAxes,
            fontsize=10, color="0.35", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def finish(fig, run, note=""):
    """Writes the machine and the note at the foot of the figure, wrapped to its width so no
    line runs off the edge; returns the height it takes, as a fraction of the figure's."""
    width = int(fig.get_figwidth() * FOOT_CHARS_PER_INCH)
    lines = [w for line in (D.machine_line(run) + ("\n" + note if note else "")).split("\n")
             for w in textwrap.wrap(line, width) or [""]]
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=7, color="0.35", ha="left", va="bottom")
    return (FOOT_INCHES_PER_LINE * len(lines) + 0.1) / fig.get_figheight()


def grid(ax):
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)


# How a point that is not ok is drawn: measured but flagged (client-bound, contended) hollow on
# its series' line; without a figure (failed, limit, not run) a marker on the x axis, so it is
# never simply missing.
FLAGGED_LABEL = "hollow: client-bound or contended (measured; not used for throughput)"
NO_FIGURE_MARK = {"failed": ("v", "tab:red"), "limit": ("v", "0.4"), "not run": ("v", "0.7")}


def plot_series(ax, run, model, points, value, ms=4):
    """One model's line through its measured points, a filled marker where the point is ok and
    a hollow one where it is flagged; returns whether any was hollow."""
    pts = sorted((p["conns"], value(p), D.point_status(p)[0]) for p in points
                 if p.get("load") and value(p) is not None)
    if not pts:
        return False
    color, marker = run.color("models", model), run.marker("models", model)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker=None, label=None)
    ok = [p for p in pts if p[2] == "ok"]
    hollow = [p for p in pts if p[2] != "ok"]
    ax.plot([p[0] for p in ok], [p[1] for p in ok], ls="none", marker=marker, color=color,
            ms=ms, label=model)
    if hollow:
        ax.plot([p[0] for p in hollow], [p[1] for p in hollow], ls="none", marker=marker,
                color=color, mfc="none", ms=ms + 2, label=None if ok else model)
    return bool(hollow)


def mark_unmeasured(ax, points):
    """Failed, limit and not-run points as markers on the x axis (below the lowest figure),
    one legend entry per status present; returns the statuses drawn."""
    drawn = []
    for p in points:
        st = D.point_status(p)[0]
        if st in NO_FIGURE_MARK and not (st in D.MEASURED and p.get("load")):
            marker, color = NO_FIGURE_MARK[st]
            ax.plot(p["conns"], 0, marker=marker, color=color, ms=8, ls="none",
                    transform=ax.get_xaxis_transform(), clip_on=False)
            drawn.append(st)
    for st in dict.fromkeys(drawn):
        marker, color = NO_FIGURE_MARK[st]
        ax.plot([], [], marker=marker, color=color, ls="none", ms=8,
                label=f"{st} (no figure; on the axis)")
    return drawn


def flagged_legend(ax):
    ax.plot([], [], "o", mfc="none", color="0.3", ls="none", label=FLAGGED_LABEL)
