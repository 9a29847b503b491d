#!/usr/bin/python3
"""The charts draw on a small synthetic run without failing, each written as an SVG that parses,
carries its title and its verdict strip and is the PNG's figure, and say "not run" without data;
every claim's chart draws the figures its verdict compared and their thresholds (the reference
run's and a synthetic run's), and a member name has one colour in every chart."""
import re
import shutil
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import charts  # noqa: E402
import charts.marks as marks  # noqa: E402
import charts.style as style  # noqa: E402
from charts import files  # noqa: E402
import claims  # noqa: E402
import data as D  # noqa: E402
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.image as mimage  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
import report  # noqa: E402
import synth  # noqa: E402
import synth_reported  # noqa: E402

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


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG = "{http://www.w3.org/2000/svg}"


def png_size(path):
    """(width, height) in pixels from a PNG's header; ValueError when it is no PNG."""
    head = path.read_bytes()[:24]
    if head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        raise ValueError(f"{path.name}: not a PNG")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def svg_texts(root):
    """Every text element's words, its tspans joined, whitespace collapsed."""
    return [" ".join("".join(t.itertext()).split()) for t in root.iter(f"{SVG}text")]


def chart_file_problems(folder, stem, title, strip):
    """What is wrong with one chart's two files, as a list of sentences: the SVG does not parse
    or is not an SVG, lacks its title or a verdict row of its strip (`strip`: (claim, verdict)
    pairs), repeats an element id or keeps a test's gid (REPORT.html inlines every chart), or
    is not the PNG's figure (sizes at 72 points and PNG_DPI pixels an inch differ); the PNG is
    blank (one colour)."""
    problems = []
    try:
        root = ET.parse(folder / f"{stem}.svg").getroot()
    except (OSError, ET.ParseError) as e:
        return [f"{stem}.svg does not parse: {e}"]
    if root.tag != f"{SVG}svg":
        return [f"{stem}.svg: root element {root.tag}"]
    texts = svg_texts(root)
    if title not in texts:
        problems.append(f"{stem}.svg: no title {title!r}")
    for cid, verdict in strip:
        if not any(t.startswith(f"{cid}, {verdict}:") for t in texts):
            problems.append(f"{stem}.svg: no verdict row '{cid}, {verdict}'")
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    if len(ids) != len(set(ids)) or any(":" in i for i in ids):
        problems.append(f"{stem}.svg: repeated or test ids")
    width, height = png_size(folder / f"{stem}.png")
    inches = [float(root.get(k).removesuffix("pt")) / 72 for k in ("width", "height")]
    if abs(inches[0] * files.PNG_DPI - width) > 1 or abs(inches[1] * files.PNG_DPI - height) > 1:
        problems.append(f"{stem}: SVG {inches} in, PNG {width}x{height} px")
    pixels = mimage.imread(folder / f"{stem}.png")[::8, ::8, :3].reshape(-1, 3)
    if len({tuple(p) for p in pixels.tolist()}) < 2:
        problems.append(f"{stem}.png is blank")
    return problems


class Charts(unittest.TestCase):
    """The full synthetic run as report.main reported it, every chart drawn into its folder as
    ./run.sh report draws them (synth_reported.py); its files checked, then the cheaper
    cases."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="charts-test-")
        cls.dir = Path(cls.tmp.name)
        cls.full = synth_reported.reported(cls.dir / "full")
        cls.said = (cls.full / synth_reported.LOG).read_text()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def files(self, folder):
        return {p.name for p in folder.iterdir()}

    def test_full_synthetic_run(self):
        status = dict(re.findall(r"^report: chart (\S+): (.*)$", self.said, re.M))
        self.assertEqual(list(status), charts.STEMS)
        self.assertIn("copystack", charts.STEMS)
        self.assertEqual(status, {stem: "ok" for stem, _, _ in charts.CHARTS})
        run = D.Run(self.full)
        problems = []
        for stem, text, _ in charts.CHARTS:
            strip = [(cid, verdict) for cid, verdict, _, _ in marks.rows(run, stem)]
            problems += chart_file_problems(self.full, stem, charts.title(stem, text), strip)
        self.assertEqual(problems, [])

    def test_a_wrong_chart_file_is_told(self):
        # switch_cost is 10 inches wide, every other chart 11: another's SVG is not its PNG's.
        stem = "switch_cost"
        text = next(t for s, t, _ in charts.CHARTS if s == stem)
        other = next(s for s, _, _ in charts.CHARTS if s != stem)
        title = charts.title(stem, text)
        self.assertEqual(chart_file_problems(self.full, stem, title, []), [])
        told = chart_file_problems(self.full, stem, title + " x", [("C0", "holds")])
        self.assertEqual(len(told), 2, told)
        bad = self.dir / "bad"
        bad.mkdir()
        shutil.copy(self.full / f"{stem}.png", bad)
        (bad / f"{stem}.svg").write_text("<svg")
        self.assertIn("does not parse", chart_file_problems(bad, stem, title, [])[0])
        shutil.copy(self.full / f"{other}.svg", bad / f"{stem}.svg")
        told = chart_file_problems(bad, stem, title, [])
        self.assertTrue(any("PNG" in x for x in told), told)

    def test_synthetic_claim_charts_draw_their_verdicts(self):
        run = D.Run(self.full)
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
        text = (self.full / "REPORT.md").read_text()
        self.assertIn("](star_ring.png)", text)
        self.assertIn("[copystack.png](copystack.png)", text)  # every drawn chart is linked
        run = synth.full(self.dir / "rep", sweep=None)
        self.assertEqual(report.main([str(run), "--no-charts"]), 0)
        self.assertRegex((run / "REPORT.md").read_text(), r"\| \[C6\]\(#c6\) \|.* \| not run \|")
        self.assertEqual(report.main([str(run), "--bogus"]), 2)


if __name__ == "__main__":
    unittest.main()
