#!/usr/bin/python3
"""REPORT.html: the Markdown subset converts and escapes as written, chart SVGs go inline with
ids of their own, and a whole report has every claim's section, every chart and no resource
from elsewhere. The page in a real browser: tests/test_browser.py."""
import re
import sys
import tempfile
import unittest
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import charts  # noqa: E402
import claims  # noqa: E402
import data as D  # noqa: E402
import document  # noqa: E402
import glossary  # noqa: E402
import page  # noqa: E402
import synth_reported  # noqa: E402


class Elements(HTMLParser):
    """Every start tag as (tag, attributes), the figure each <svg> lies in, and the ids."""

    def __init__(self):
        super().__init__()
        self.tags, self.svg_in, self.figure = [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "figure":
            self.figure = attrs.get("data-chart")
        elif tag == "svg":
            self.svg_in.append(self.figure)

    def handle_endtag(self, tag):
        if tag == "figure":
            self.figure = None

    def ids(self):
        return [a["id"] for _, a in self.tags if "id" in a]


def parse(text):
    e = Elements()
    e.feed(text)
    return e


def check_page(test, text):
    """What every REPORT.html must have; shared with tests/test_browser.py, which runs it on
    the DOM Chromium rendered."""
    e = parse(text)
    ids = e.ids()
    test.assertEqual(sorted(i for i in set(ids) if ids.count(i) > 1), [], "duplicate ids")
    for c in claims.CLAIMS:
        test.assertIn(c.ID.lower(), ids, f"no section for {c.ID}")
    test.assertEqual(sorted(set(s for s in e.svg_in if s)), sorted(charts.STEMS),
                     "every chart inline as SVG")
    test.assertIn("glossary", ids)
    loaders = [(t, a) for t, a in e.tags if t in ("script", "img", "link", "iframe", "object",
                                                  "embed", "video", "audio", "source")]
    test.assertEqual(loaders, [], "the page loads nothing")
    outside = [u for u in re.findall(r"(?:href|src)=\"([^\"]*)\"", text)
               if re.match(r"[a-z]+:", u)]
    test.assertEqual(outside, [], "links point into the run folder or the page only")


class Markdown(unittest.TestCase):
    def test_inline_escapes_text_and_keeps_code_literal(self):
        self.assertEqual(page.inline("a < b & `x**y**<z>` **bold `c`** [C1](#c1)"),
                         "a &lt; b &amp; <code>x**y**&lt;z&gt;</code> "
                         "<strong>bold <code>c</code></strong> <a href=\"#c1\">C1</a>")
        self.assertEqual(page.inline('[x"y](a"b.png)'), '<a href="a&quot;b.png">x&quot;y</a>')

    def test_blocks(self):
        lines = ["## What: x86_64 & aarch64", "", "one", "two", "", "- a", "  - b", "- c", "",
                 "| k | v |", "|---|---|", "| <1> | **2** |", "", "![star_ring](star_ring.png)",
                 "### sub", ""]
        got = page.blocks(lines, lambda stem: f"[figure {stem}]")
        self.assertEqual(got.split("\n"), [
            '<h2 id="what-x86_64--aarch64">What: x86_64 &amp; aarch64</h2>',
            "<p>one two</p>",
            "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>",
            '<div class="scroll"><table><thead><tr><th>k</th><th>v</th></tr></thead><tbody><tr>'
            "<td>&lt;1&gt;</td><td><strong>2</strong></td></tr></tbody></table></div>",
            "[figure star_ring]",
            '<h3 id="sub">sub</h3>'])

    def test_slug_matches_the_markdown_links(self):
        self.assertEqual(page.slug("C10"), "c10")
        self.assertEqual(page.slug("Ramp-up"), "ramp-up")
        self.assertEqual(page.slug("Architectures: x86_64 and aarch64"),
                         "architectures-x86_64-and-aarch64")

    def test_inline_svg_gets_ids_of_its_own(self):
        svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg width="10pt" height="5pt" '
               'viewBox="0 0 10 5"><metadata>m</metadata><defs><clipPath id="c1"/>'
               '<path id="g"/></defs><g clip-path="url(#c1)"><use xlink:href="#g"/></g></svg>')
        self.assertEqual(page.inline_svg(svg, "x-0-"),
                         '<svg viewBox="0 0 10 5"><defs><clipPath id="x-0-c1"/><path id="x-0-g"/>'
                         '</defs><g clip-path="url(#x-0-c1)"><use xlink:href="#x-0-g"/></g></svg>')

    def test_inline_svg_drops_indentation_not_text(self):
        svg = '<svg viewBox="0 0 1 1">\n <g>\n  <text x="0"> 1.5 ns </text>\n </g>\n</svg>\n'
        self.assertEqual(page.inline_svg(svg, "p-"),
                         '<svg viewBox="0 0 1 1"><g><text x="0"> 1.5 ns </text></g></svg>\n')

    def test_glossary_is_alphabetical_and_short(self):
        terms = [t for t, _ in glossary.TERMS]
        self.assertEqual(terms, sorted(terms, key=str.lower))
        for term, text in glossary.TERMS:
            self.assertTrue(text.endswith(".") and text.count(". ") <= 2, term)


class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="page-test-")
        cls.folder = synth_reported.reported(Path(cls.tmp.name) / "run")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_whole_report(self):
        report = document.build(D.Run(self.folder), D.Run(self.folder))
        text = page.render(report)
        check_page(self, text)
        e = parse(text)
        links = {a["href"] for t, a in e.tags if t == "a"}
        for c in claims.CLAIMS:  # the summary links each claim to its section and charts
            self.assertIn(f"#{c.ID.lower()}", links)
            for stem in c.CHARTS:
                self.assertIn(f"#fig-{stem}", links)
        self.assertIn("<th>reference</th>", text)
        self.assertIn(page.inline(report.results["C1"]["rule"]), text)

    def test_a_chart_without_svg_says_so(self):
        (self.folder / "star_ring.svg").rename(self.folder / "kept.svg")
        try:
            text = page.render(document.build(D.Run(self.folder)))
        finally:
            (self.folder / "kept.svg").rename(self.folder / "star_ring.svg")
        self.assertIn("not run: star_ring.svg is not in this run folder", text)


class Reference(unittest.TestCase):
    def test_committed_page_is_at_most_2_mib(self):
        """The committed reference page at most 2 MiB: a teacher opens it from a file."""
        html = HERE.parent.parent / "results" / "reference" / "REPORT.html"
        self.assertLessEqual(html.stat().st_size, 2 * 1024 * 1024, html)


if __name__ == "__main__":
    unittest.main()
