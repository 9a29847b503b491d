"""What every chart shares: the Agg backend, registration, the "not run" panel, the machine
footnote and the grid."""
import matplotlib

matplotlib.use("Agg")  # no display; must be chosen before pyplot is imported anywhere

import data as D  # noqa: E402


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
    text = D.machine_line(run) + (("\n" + note) if note else "")
    fig.text(0.01, 0.005, text, fontsize=7, color="0.35", ha="left", va="bottom")


def grid(ax):
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
