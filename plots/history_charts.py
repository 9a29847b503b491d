"""history.py's charts: one per machine and figure, the figure's value in every run in commit
order with its 95% interval, the runs after a step of the series marked. Written the way every
chart of plots/ is (charts/files.py)."""
import charts.style as style  # before pyplot: it chooses the Agg backend
import matplotlib.pyplot as plt

from charts.files import PNG_DPI, write_png_svg


def run_label(run):
    sha = str(run["sha"])[:7] + ("+" if run["dirty"] else "")
    return "%s %s" % (sha, run["date"][:10])


def draw(path, figure, points, model):
    """path.png and path.svg: the figure's value in each run of one machine, in commit order,
    with its interval; a run after a step of the series drawn larger, red up, green down."""
    xs = list(range(len(points)))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * len(points) + 2), 3.4))
    for x, (run, f, move) in zip(xs, points):
        if f is None:
            ax.annotate("no figure", (x, 0), xycoords=("data", "axes fraction"),
                        xytext=(0, 4), textcoords="offset points", ha="center", fontsize=7,
                        color="0.5")
            continue
        color = {"up": "tab:red", "down": "tab:green"}.get(move, "tab:blue")
        ax.errorbar([x], [f.value], yerr=[[f.value - f.low], [f.high - f.value]], fmt="o",
                    color=color, capsize=4, markersize=6 if move else 4)
        if move:
            ax.annotate("moved " + move, (x, f.high), xytext=(0, 6), textcoords="offset points",
                        ha="center", fontsize=7, color=color)
    known = [f for _, f, _ in points if f]
    ax.plot([x for x, (_, f, _) in zip(xs, points) if f], [f.value for f in known],
            color="0.7", lw=0.8, zorder=0)
    ax.set_xticks(xs)
    ax.set_xticklabels([run_label(r) for r, _, _ in points], rotation=30, ha="right", fontsize=7)
    ax.set_xlim(-0.5, len(points) - 0.5)
    unit = known[0].unit if known else ""
    ax.set_ylabel(unit)
    lo = min(f.low for f in known) if known else 0
    hi = max(f.high for f in known) if known else 1
    ax.set_ylim(min(0, lo), hi * 1.15 if hi > 0 else 1)
    ax.set_title("%s on %s" % (figure, model), fontsize=9)
    style.grid(ax)
    ax.text(0.0, -0.42, "points in commit order; bars: 95% interval (exact counts have none); "
            "red/green: the first run after a step of the series", transform=ax.transAxes,
            fontsize=6.5, color="0.35")
    fig.tight_layout()
    write_png_svg(fig, path, svg_dpi=PNG_DPI)
