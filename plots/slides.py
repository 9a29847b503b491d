#!/usr/bin/python3
"""Slides for a classroom, and an index of every run's verdicts.

    /usr/bin/python3 plots/slides.py RUN_FOLDER [--runs DIR]

Writes RUN_FOLDER/slides/NN-<chart>.png: one 16:9 slide (1920 x 1080) in large type per chart
that carries a claim, with the claims' verdicts and their deciding figure under the title and
the chart's caption at the foot; and DIR/index.html (default: the repository's results/runs/):
a verdict matrix, one row per claim and one column per run folder under DIR that has a
verdicts.json (written by report.py), the committed reference's first. Exit 0; bad usage or a
folder that is no run folder: one line on stderr, exit 2.
"""
import html
import re
import sys
import textwrap
from pathlib import Path

import charts  # before pyplot: charts.style chooses the Agg backend
import charts.marks as marks
import charts.style as style
import claims
import data as D
import matplotlib.pyplot as plt
from charts import captions
from matplotlib.text import Text

PLOTS = Path(__file__).resolve().parent

USAGE = "usage: slides.py RUN_FOLDER [--runs DIR]"
REPO = PLOTS.parent
SIZE, DPI = (16, 9), 120  # 1920 x 1080
TEXT_SCALE, MIN_PT, TICK_PT = 1.6, 12, 14
# Charts with a row per server need their rows more than large labels.
TICK_PT_OF = {"fiberio": 9}


def key_charts():
    """The charts that carry a claim's verdict strip, in the charts' order."""
    carried = {marks.carrier(c) for c in claims.CLAIMS if c.CHARTS}
    carried |= {stem for routes in marks.ROUTED.values() for stem in routes.values()}
    return [(stem, text, fn) for stem, text, fn in charts.CHARTS if stem in carried]


def verdict_lines(run, stem):
    """One line per claim the chart carries: its verdict and the figure nearest to deciding it."""
    out, seen = [], set()
    for cid, verdict, tests, _ in marks.rows(run, stem):
        if cid in seen:
            continue
        seen.add(cid)
        t = tests[0]
        lo, hi = t.get("low"), t.get("high")
        spread = "" if lo is None or t.get("basis") == "exact" else f" [{lo:.3g}, {hi:.3g}]"
        out.append(f"{cid} {verdict}: {t['figure']} = {t['value']:.3g}{spread}, "
                   f"threshold {t['op']} {t['threshold']:.3g}")
    return out


def draw_slide(run, stem, text, fn):
    """One slide as an open figure: the chart drawn by its own function, then resized to
    16:9 with every text enlarged."""
    fig = plt.figure(figsize=SIZE)
    try:
        note = fn(run, fig)
    except Exception as e:  # a chart bug costs its slide, not the others and the index
        fig.clf()
        style.not_run(fig.add_subplot(111), f"chart failed: {type(e).__name__}: {e}")
        note = ""
    fig.set_size_inches(*SIZE)
    for t in fig.findobj(Text):
        t.set_fontsize(max(t.get_fontsize() * TEXT_SCALE, MIN_PT))
    for ax in fig.axes:
        ax.tick_params(labelsize=TICK_PT_OF.get(stem, TICK_PT))
    lines = verdict_lines(run, stem)
    fig.suptitle(charts.title(stem, text), fontsize=26, y=0.985)
    head = "\n".join(textwrap.shorten(x, 140) for x in lines)
    fig.text(0.5, 0.925, head, ha="center", va="top", fontsize=15, gid="verdicts")
    # A slide has no verdict strip: its verdicts are the lines under the title.
    words = re.sub(r"\b[Tt]he strip( below)?", "The line under the title",
                   captions.caption(stem)).replace("see the strip", "see the line under the title")
    cap = textwrap.fill(words, 115)
    fig.text(0.01, 0.01, cap, ha="left", va="bottom", fontsize=16, gid="caption")
    top = 0.92 - 0.035 * len(lines)
    bottom = 0.03 + 0.035 * (cap.count("\n") + 1)
    fig.tight_layout(rect=(0, bottom, 1, top))
    return fig, note


def write_slides(folder):
    """The run's slides; returns their paths."""
    run = D.Run(folder)
    out = Path(folder) / "slides"
    out.mkdir(exist_ok=True)
    paths = []
    for k, (stem, text, fn) in enumerate(key_charts(), 1):
        fig, _ = draw_slide(run, stem, text, fn)
        path = out / f"{k:02d}-{stem}.png"
        fig.savefig(path, dpi=DPI)
        plt.close(fig)
        paths.append(path)
    return paths


def read_verdicts(path):
    """{claim id: verdict} of a verdicts.json, or None when it cannot be read as one."""
    import json
    try:
        doc = json.loads(Path(path).read_text())
        return {c["id"]: c["verdict"] for c in doc["claims"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_columns(runs_dir):
    """[(label, link to its report or None, {claim: verdict})]: the reference, then every run
    under runs_dir with a readable verdicts.json, newest last."""
    cols = []
    ref = REPO / "results" / "reference" / "verdicts.json"
    if read_verdicts(ref) is not None:
        cols.append(("reference", None, read_verdicts(ref)))
    for path in sorted(Path(runs_dir).rglob("verdicts.json")):
        v = read_verdicts(path)
        if v is not None:
            rel = path.parent.relative_to(runs_dir)
            cols.append((str(rel), f"{rel.as_posix()}/REPORT.html", v))
    return cols


CELL_CLASS = {"holds": "h", "holds partly": "p", "does not hold": "n",
              "inconclusive": "i", "not run": "x"}
STYLE = ("body{font:16px sans-serif;margin:1em}table{border-collapse:collapse}"
         "td,th{border:1px solid #bbb;padding:.3em .5em;text-align:left}"
         "th{background:#eee}.h{background:#d9f0d3}.p{background:#fdf1c7}.n{background:#f6d0d0}"
         ".i{background:#e4e4f4}.x{color:#777}.wrap{overflow-x:auto}")


def index_html(runs_dir):
    cols = run_columns(runs_dir)
    head = "".join(f'<th><a href="{html.escape(link)}">{html.escape(label)}</a></th>'
                   if link else f"<th>{html.escape(label)}</th>" for label, link, _ in cols)
    rows = []
    for c in claims.CLAIMS:
        cells = "".join(
            f'<td class="{CELL_CLASS.get(v.get(c.ID, "not run"), "x")}">'
            f'{html.escape(v.get(c.ID, "-"))}</td>' for _, _, v in cols)
        rows.append(f"<tr><th>{c.ID}</th><td>{html.escape(textwrap.shorten(c.CLAIM, 90))}</td>"
                    f"{cells}</tr>")
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width"><title>Switchyard runs: verdicts</title>'
            f"<style>{STYLE}</style></head><body><h1>Verdicts by run</h1>"
            f"<p>{len(cols)} run(s) under {html.escape(str(runs_dir))}; each column links to its "
            "report.</p><div class=\"wrap\"><table><tr><th>claim</th><th></th>"
            f"{head}</tr>{''.join(rows)}</table></div></body></html>\n")


def fail(msg):
    print(f"slides.py: {msg}", file=sys.stderr)
    return 2


def main(argv):
    args, runs_dir = [], REPO / "results" / "runs"
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if arg == "--runs":
            runs_dir = Path(next(it, ""))
            if not runs_dir.is_dir():
                return fail(f"--runs {D.shown(runs_dir)}: no such folder; {USAGE}")
        elif arg.startswith("-"):
            return fail(f"unknown option {D.shown(arg)}; {USAGE}")
        else:
            args.append(arg)
    if len(args) != 1:
        return fail(f"give one run folder; {USAGE}")
    problem = D.folder_problem(args[0])
    if problem:
        return fail(problem)
    try:
        paths = write_slides(args[0])
        index = Path(runs_dir) / "index.html"
        index.write_text(index_html(runs_dir))
    except OSError as e:
        return fail(f"cannot write: {e.strerror or e}: {D.shown(e.filename or '')}")
    print(f"slides: {len(paths)} slides in {Path(args[0]) / 'slides'}; index {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
