#!/usr/bin/python3
"""The charts draw on a small synthetic run without failing, and say "not run" without data;
every claim's chart draws the figures its verdict compared and their thresholds (the reference
run's and a synthetic run's), and a member name has one colour in every chart."""
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))
import charts  # noqa: E402
import charts.marks as marks  # noqa: E402
import charts.style as style  # noqa: E402
import claims  # noqa: E402
import data as D  # noqa: E402
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
import report  # noqa: E402
import synth  # noqa: E402

REPO = HERE.parent.parent
REFERENCE = REPO / "results" / "reference"


def figures(folder):
    """{stem: open figure} of every chart of a run folder, drawn as draw_all draws them."""
    run = D.Run(folder)
    return {stem: charts.draw_one(run, stem, text, fn)[0] for stem, text, fn in charts.CHARTS}


def artists(fig):
    return [a for ax in fig.axes for a in list(ax.lines) + list(ax.patches)]


def gids(fig):
    return {a.get_gid() for a in artists(fig) if a.get_gid()}


def rgb(artist):
    c = artist.get_color() if hasattr(artist, "get_color") and not hasattr(
        artist, "get_facecolor") else artist.get_facecolor()
    return mcolors.to_hex(c, keep_alpha=False)


def registry_members():
    """Every registry_member name of the server, engine, timer and switch registries."""
    names = set()
    for sub in ("servers", "engines", "switch"):
        text = (REPO / sub / "CMakeLists.txt").read_text()
        names |= set(re.findall(r"^registry_member\(\w+ ([\w-]+)", text, re.M))
    return names


class ClaimCharts(unittest.TestCase):
    """On the committed reference run: each claim's chart carries its deciding figures (a dot,
    gid deciding:<claim>) and thresholds (a line, gid threshold:<claim>), and each member name
    is drawn in its one colour wherever it appears."""

    @classmethod
    def setUpClass(cls):
        cls.figs = figures(REFERENCE)

    @classmethod
    def tearDownClass(cls):
        plt.close("all")

    def test_every_claim_chart_draws_threshold_and_deciding_figure(self):
        charted = [c for c in claims.CLAIMS if c.CHARTS]
        self.assertGreaterEqual(len(charted), 16)
        for c in charted:
            stem = marks.carrier(c)
            self.assertIn(stem, c.CHARTS, c.ID)
            found = gids(self.figs[stem])
            self.assertIn(f"threshold:{c.ID}", found, f"{c.ID} on {stem}: no threshold drawn")
            self.assertIn(f"deciding:{c.ID}", found, f"{c.ID} on {stem}: no deciding figure")

    def test_drawn_threshold_is_the_verdicts(self):
        run = D.Run(REFERENCE)
        for c in claims.CLAIMS:
            if not c.CHARTS:
                continue
            tested = {t["threshold"] for t in c.verdict(run)["tests"]}
            drawn = {a.get_xdata()[0] for stem in c.CHARTS for a in artists(self.figs[stem])
                     if a.get_gid() == f"threshold:{c.ID}"}
            self.assertTrue(drawn and drawn <= tested, (c.ID, drawn, tested))
            values = {t["value"] for t in c.verdict(run)["tests"]}
            dots = {a.get_xdata()[0] for stem in c.CHARTS for a in artists(self.figs[stem])
                    if a.get_gid() == f"deciding:{c.ID}"}
            self.assertTrue(dots and dots <= values, (c.ID, dots, values))

    def test_one_colour_per_member_name_across_charts(self):
        seen = {}
        for stem, fig in self.figs.items():
            in_chart = {}
            for a in artists(fig):
                gid = a.get_gid() or ""
                if gid.startswith("member:"):
                    name = gid.split(":", 1)[1]
                    seen.setdefault(name, set()).add((rgb(a), stem))
                    in_chart.setdefault(rgb(a), set()).add(name)
            for colour, names in in_chart.items():
                self.assertEqual(len(names), 1, f"{stem}: {sorted(names)} share {colour}")
        self.assertGreaterEqual(len(seen), 20, sorted(seen))  # models, engines, switch, timers
        for name, uses in seen.items():
            colours = {c for c, _ in uses}
            self.assertEqual(colours, {mcolors.to_hex(style.color(name))},
                             f"{name}: {sorted(uses)}")

    def test_no_bars_on_log_axes(self):
        for stem, fig in self.figs.items():
            for ax in fig.axes:
                bars = [r for r in ax.patches if isinstance(r, Rectangle)
                        and r.get_width() > 0 and r.get_height() > 0]
                if bars:
                    self.assertEqual((ax.get_xscale(), ax.get_yscale()), ("linear", "linear"),
                                     f"{stem}: bars on a log axis")

    def test_the_chart_defects_of_issue_38_are_gone(self):
        f = self.figs
        switch_labels = [t.get_text() for t in f["switch_cost"].axes[0].get_yticklabels()]
        self.assertTrue(any("chain" in t for t in switch_labels), switch_labels)
        self.assertTrue({"fit:log", "fit:linear"} <= gids(f["handoff_scale"]))
        left, right = f["epoll_ctl_scaling"].axes[:2]
        self.assertGreater(left.get_ylim()[0], 0, "epoll_ctl axis from zero flattens the rise")
        self.assertIn("CPU per churned connection", right.get_ylabel())
        self.assertTrue({"member:wheel", "member:rbtree"} <= gids(f["timers_cpu"]))
        self.assertIn("judged:C13", gids(f["fiberio"]))
        idle = f["timers_idle"].axes[0]
        self.assertEqual((idle.get_xscale(), len(idle.get_yticks())), ("linear", 2))
        foot = " ".join(t.get_text() for t in f["star_ring"].texts)
        self.assertIn("copy stacks", foot)
        models = set(D.Run(REFERENCE).members("models"))
        for ax in f["sweep_throughput"].axes[:2]:
            legend = ax.get_legend()
            labels = [t.get_text() for t in legend.get_texts()] if legend else []
            self.assertFalse(models & set(labels), "model names belong at the lines' ends")
            self.assertEqual(len(labels), len(set(labels)), labels)
        stack = f["rss_per_conn"].axes[1]
        fork = [r for r in stack.patches if r.get_gid() == "member:fork"]
        self.assertEqual([r.get_height() for r in fork], [0.0], "fork's summed VmRSS stacked")

    def test_every_registry_member_has_its_own_style(self):
        missing = registry_members() - set(style.MEMBER_STYLE)
        self.assertEqual(missing, set())
        colours = [mcolors.to_hex(c) for c, _ in style.MEMBER_STYLE.values()]
        self.assertEqual(len(colours), len(set(colours)), "two names share a colour")
        self.assertNotIn(mcolors.to_hex(style.UNKNOWN_STYLE[0]), colours)

    def test_every_chart_has_a_caption_of_two_sentences(self):
        for stem, fig in self.figs.items():
            text = charts.captions.caption(stem)
            self.assertEqual(len(re.findall(r"[.!?](\s|$)", text)), 2, stem)
            shown = [t.get_text() for t in fig.texts if t.get_gid() == "caption"]
            self.assertEqual(" ".join(shown[0].split()), " ".join(text.split()), stem)


class Charts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="charts-test-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def files(self, folder):
        return {p.name for p in folder.iterdir()}

    def test_full_synthetic_run(self):
        run = synth.full(self.dir / "full")
        status = charts.draw_all(run)
        self.assertEqual(list(status), charts.STEMS)
        self.assertIn("copystack", charts.STEMS)
        self.assertEqual(status, {stem: "ok" for stem, _, _ in charts.CHARTS})
        for stem, _, _ in charts.CHARTS:
            for ext in ("png", "svg"):
                path = run / f"{stem}.{ext}"
                self.assertTrue(path.exists() and path.stat().st_size > 1000, path)

    def test_synthetic_claim_charts_draw_their_verdicts(self):
        run_dir = synth.full(self.dir / "marks")
        run = D.Run(run_dir)
        for c in claims.CLAIMS:
            if not c.CHARTS or not c.verdict(run)["tests"]:
                continue
            fig, status = charts.draw_one(run, marks.carrier(c), *next(
                (t, f) for s, t, f in charts.CHARTS if s == marks.carrier(c)))
            self.assertEqual(status, "ok", c.ID)
            self.assertTrue({f"threshold:{c.ID}", f"deciding:{c.ID}"} <= gids(fig), c.ID)
            plt.close(fig)

    def test_missing_data_says_not_run(self):
        empty = self.dir / "empty"
        empty.mkdir()
        status = charts.draw_all(empty)
        self.assertEqual(set(status.values()), {"not run"})
        self.assertIn("switch_cost.png", self.files(empty))

    def test_report_main_writes_report_and_links_charts(self):
        run = synth.full(self.dir / "rep", sweep=None)
        self.assertEqual(report.main([str(run)]), 0)
        text = (run / "REPORT.md").read_text()
        self.assertIn("](star_ring.png)", text)
        self.assertIn("[copystack.png](copystack.png)", text)  # every drawn chart is linked
        self.assertRegex(text, r"\| \[C6\]\(#c6\) \|.* \| not run \|")
        self.assertEqual(report.main([str(run), "--bogus"]), 2)


if __name__ == "__main__":
    unittest.main()
