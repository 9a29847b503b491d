"""The charts of one run folder, written beside its data as PNG and SVG: one module per
experiment, each with its CHARTS list; MODULES below is their order, and the one list the
report's chart links come from.

Every chart has a title (ending with the claims that show it), axis labels with units, a
legend and the machine in a footnote; when its data is missing it still gets drawn, saying
"not run" and why, so a partial run never crashes the report. Uses Debian's
python3-matplotlib with the Agg backend (no display).
"""
import concurrent.futures
import importlib
import multiprocessing
import os
import textwrap
import warnings
from pathlib import Path

import charts.style as style
import matplotlib.pyplot as plt
from charts import captions, marks
from charts.files import write_png_svg

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


CAPTION_INCHES_PER_LINE = 0.17
CAPTION_CHARS_PER_INCH = 13  # 9-point caption text


def draw_one(run, stem, text, fn):
    """One chart as a matplotlib figure (left open for the caller to save or inspect):
    (figure, "ok" | "not run" | "failed: ..."). Under the chart, from the top: the verdict
    strip of the claims it carries (charts/marks.py), its caption, the machine footnote."""
    fig = plt.figure(figsize=(11, 6.2) if stem != "switch_cost" else (10, 6.2))
    try:
        note = fn(run, fig)
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        status = "not run" if any(t.startswith("not run") for t in texts) else "ok"
        strip = marks.rows(run, stem) if status == "ok" else []
    except Exception as e:  # a chart bug must not cost the other charts and the report
        fig.clf()
        style.not_run(fig.add_subplot(111), f"chart failed: {type(e).__name__}: {e}")
        note, status, strip = "", f"failed: {type(e).__name__}: {e}", []
    words = textwrap.wrap(captions.caption(stem),
                          int(fig.get_figwidth() * CAPTION_CHARS_PER_INCH))
    cap_in = CAPTION_INCHES_PER_LINE * len(words) + (0.1 if words else 0)
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + marks.height(strip) + cap_in)
    fig.suptitle(title(stem, text), fontsize=12)
    foot = style.finish(fig, run, note)
    foot_in = foot * fig.get_figheight()
    if words:
        fig.text(0.01, (foot_in + 0.04) / fig.get_figheight(), "\n".join(words), fontsize=9,
                 ha="left", va="bottom", gid="caption")
    below = foot_in + cap_in + marks.height(strip)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # tight_layout on crowded panels
        fig.tight_layout(rect=(0, max(0.06, below / fig.get_figheight()), 1, 0.95))
    marks.draw(fig, strip, foot_in + cap_in)
    return fig, status


def draw_some(run, run_dir, stems):
    """Draws the charts named in stems into run_dir: {stem: status}."""
    status = {}
    for stem, text, fn in CHARTS:
        if stem in stems:
            fig, status[stem] = draw_one(run, stem, text, fn)
            write_png_svg(fig, Path(run_dir) / stem)
    return status


def draw_all(run_dir, only=None):
    """Draws every chart into run_dir; returns {stem: "ok" | "not run" | "failed: ..."}, in
    CHARTS order. Drawing is most of the report's time and each chart is independent: with
    a second CPU, a forked worker draws every other chart (the report step runs after every
    measurement, so it times nothing it could disturb)."""
    run = D.Run(run_dir)
    stems = [stem for stem in STEMS if not only or stem in only]
    if len(stems) < 2 or (os.cpu_count() or 1) < 2:
        status = draw_some(run, run_dir, stems)
    else:
        # The verdict strips read the claims' intervals, cached process-wide (figures.py):
        # computed once here, the worker inherits them instead of resampling them again.
        for c in claims.CLAIMS:
            c.verdict(run)
        fork = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=fork) as pool:
            theirs = pool.submit(draw_some, run, run_dir, stems[1::2])
            status = {**draw_some(run, run_dir, stems[0::2]), **theirs.result()}
    return {stem: status[stem] for stem in stems}
