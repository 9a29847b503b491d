"""What every chart shares: the Agg backend, registration, the "not run" panel, the machine
footnote and the grid."""
import textwrap

import data as D
import matplotlib
from switch_figures import switch_fig

matplotlib.use("Agg")  # no display; must be chosen before pyplot is imported anywhere
# SVG text stays text (each glyph drawn as a path made every chart several times larger, and
# REPORT.html inlines them all).
matplotlib.rcParams["svg.fonttype"] = "none"
# The one font the charts are drawn in, named alone: SVG text names the whole fallback list on
# every label (about 150 bytes each, 1,300 labels in a report page); the viewer's sans-serif is
# the fallback.
matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans"]

# 7-point footnote text: about 17 characters fit in an inch, and a line takes 0.12 inch.
FOOT_CHARS_PER_INCH = 17
FOOT_INCHES_PER_LINE = 0.12

# One colour and marker per member name, the same in every chart: the registries' members
# (servers/, engines/, switch/ CMakeLists.txt registry_member lines: server models with the
# peers, engines, switch backends, timer structures) and the references drawn beside them. A
# name's style is written here, never taken from its place in a list, so adding a member does
# not repaint the others. A name in two registries (libevent, uring: model and engine) keeps one
# style; tests/test_charts.py checks every registry member is here and no two names share one.
MEMBER_STYLE = {
    # server models, then the peers
    "thread": ("#d62728", "o"), "fork": ("#ff7f0e", "s"), "prefork": ("#8c564b", "v"),
    "threadpool": ("#e377c2", "P"), "fiber": ("#1f77b4", "^"), "libevent": ("#2ca02c", "D"),
    "epoll": ("#9467bd", "X"), "uring": ("#17becf", "<"), "libuv": ("#bcbd22", ">"),
    "libev": ("#7f7f7f", "*"), "asio-coro": ("#393b79", "h"), "pth": ("#843c39", "p"),
    # engines (libevent and uring above)
    "naive": ("#bc80bd", "o"), "merged": ("#b15928", "s"), "oneshot": ("#fb9a99", "^"),
    "edge": ("#a6761d", "v"), "poll": ("#e7298a", "D"), "select": ("#66a61e", "P"),
    "uring-poll": ("#1b9e77", "X"),
    # switch backends and the reference floors drawn beside them
    "asm": ("#08519c", "o"), "asm-nofpu": ("#6baed6", "s"), "fcontext": ("#74c476", "^"),
    "setjmp": ("#fd8d3c", "D"), "ucontext": ("#756bb1", "v"), "floor": ("#969696", "x"),
    "floor-fp": ("#bdbdbd", "+"), "cc": ("#00441b", "P"), "cc-nofpu": ("#c994c7", "X"),
    "cc-pnone": ("#3f007d", "h"),
    # timer structures, none and the kernel's own sleep (cyclictest)
    "heap": ("#a50f15", "o"), "heap4": ("#d94801", "s"), "rbtree": ("#41ab5d", "^"),
    "wheel": ("#4292c6", "D"), "hwheel": ("#807dba", "v"), "none": ("#525252", "x"),
    "cyclictest": ("#737373", "*"),
}
UNKNOWN_STYLE = ("#b0b0b0", "d")  # a name not above: grey, so it never takes a member's colour


def member_key(name):
    """The member a series names: `uring (model)` is uring, `fiber/eager/naive` and
    `fiber --poll-tick 1` are fiber."""
    return str(name).split(" (")[0].split(" --")[0].split("/")[0]


def color(name):
    return MEMBER_STYLE.get(member_key(name), UNKNOWN_STYLE)[0]


def marker(name):
    return MEMBER_STYLE.get(member_key(name), UNKNOWN_STYLE)[1]


def level_style(i):
    """(shade, marker) of the i-th series that is no member (a connection level, a quantile, a
    fiber count): greys, so a member's colour always means that member."""
    return LEVEL_SHADES[i % len(LEVEL_SHADES)], LEVEL_MARKERS[i % len(LEVEL_MARKERS)]


def tag_bars(bars, names):
    """Gives each bar its member's gid (see member_gid)."""
    for bar, name in zip(bars, names):
        bar.set_gid(member_gid(name))


LEVEL_SHADES = ["0.15", "0.5", "0.75", "0.35", "0.62"]
LEVEL_MARKERS = ["o", "s", "^", "D", "v"]


def member_gid(name):
    """The gid a member's series carries, so a test can find each name's colour in a figure."""
    return f"member:{member_key(name)}"


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
NO_FIGURE_MARK = {"failed": ("v", "0.0"), "limit": ("v", "0.4"), "not run": ("v", "0.7")}


def plot_series(ax, run, model, points, value, ms=4):
    """One model's line through its measured points, a filled marker where the point is ok and
    a hollow one where it is flagged; returns whether any was hollow."""
    pts = sorted((p["conns"], value(p), D.point_status(p)[0]) for p in points
                 if p.get("load") and value(p) is not None)
    if not pts:
        return False
    col, mk, gid = color(model), marker(model), member_gid(model)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=col, marker=None, label=None,
            gid=gid)
    ok = [p for p in pts if p[2] == "ok"]
    hollow = [p for p in pts if p[2] != "ok"]
    ax.plot([p[0] for p in ok], [p[1] for p in ok], ls="none", marker=mk, color=col,
            ms=ms, label=model, gid=gid)
    if hollow:
        ax.plot([p[0] for p in hollow], [p[1] for p in hollow], ls="none", marker=mk,
                color=col, mfc="none", ms=ms + 2, label=None if ok else model, gid=gid)
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


def bench_interval(run, row):
    """(low, high): the 95% interval of a switch-bench row over its repetitions, or Nones."""
    f = switch_fig(run, row)
    return (f.get("low"), f.get("high")) if f else (None, None)


def whiskers(ax, xs, lows, highs, color, horizontal=False, gid=None):
    """A 95% interval per point: vertical segments at xs (horizontal ones at ys)."""
    for x, lo, hi in zip(xs, lows, highs):
        if lo is None or hi is None:
            continue
        seg = ([lo, hi], [x, x]) if horizontal else ([x, x], [lo, hi])
        ax.plot(*seg, color=color, lw=1.2, alpha=0.8, solid_capstyle="butt",
                gid=gid or "whisker")
