"""The charts of one run folder, written beside its data as PNG and SVG: one module per
experiment, each with its CHARTS list; MODULES below is their order, and the one list the
report's chart links come from.

Every chart has a title (ending with the claims that show it), axis labels with units, a
legend and the machine in a footnote; when its data is missing it still gets drawn, saying
"not run" and why, so a partial run never crashes the report. Uses Debian's
python3-matplotlib with the Agg backend (no display).
"""
import importlib
from pathlib import Path

import charts.style as S
import matplotlib.pyplot as plt

import claims
import data as D

MODULES = [
    "switch",
    "sweep",
    "engines",
    "memory",
    "slow",
    "handoff",
    "copystack",
    "scale",
    "fiberio",
    "peers",
    "timers",
]

CHARTS = [c for m in MODULES for c in importlib.import_module(f"charts.{m}").CHARTS]
STEMS = [stem for stem, _, _ in CHARTS]


def claims_shown(stem):
    """The ids of the claims whose report section shows this chart."""
    return [c.ID for c in claims.CLAIMS if stem in c.CHARTS]


def title(stem, text):
    ids = claims_shown(stem)
    return text + (f" ({', '.join(ids)})" if ids else "")


def draw_all(run_dir, only=None):
    """Draws every chart into run_dir; returns {stem: "ok" | "not run" | "failed: ..."}."""
    run = D.Run(run_dir)
    status = {}
    for stem, text, fn in CHARTS:
        if only and stem not in only:
            continue
        fig = plt.figure(figsize=(11, 6.2) if stem != "switch_cost" else (10, 6.2))
        try:
            note = fn(run, fig)
            texts = [t.get_text() for ax in fig.axes for t in ax.texts]
            status[stem] = "not run" if any(t.startswith("not run") for t in texts) else "ok"
        except Exception as e:  # a chart bug must not cost the other charts and the report
            fig.clf()
            S.not_run(fig.add_subplot(111), f"chart failed: {type(e).__name__}: {e}")
            note, status[stem] = "", f"failed: {type(e).__name__}: {e}"
        fig.suptitle(title(stem, text), fontsize=12)
        foot = S.finish(fig, run, note)
        fig.tight_layout(rect=(0, max(0.06, foot), 1, 0.95))
        for ext in ("png", "svg"):
            fig.savefig(Path(run_dir) / f"{stem}.{ext}", dpi=110 if ext == "png" else None)
        plt.close(fig)
    return status
