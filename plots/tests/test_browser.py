#!/usr/bin/python3
"""REPORT.html in a real browser: plots/report.py writes it for a synthetic run, headless
Chromium renders it, and the rendered DOM has every claim's section and every chart as
inline SVG (the checks of tests/test_page.py), with nothing logged to the console. The same
page and the committed reference's, rendered again from its measurements, fit the screen:
at 1,280 x 800 and at 390 x 800 (a phone) nothing is wider than the viewport, with every
claim's details open too (wide tables scroll inside their own box), and at 1,280 the summary
table starts within the first 800 px.

    test_browser.py [KEEP_DIR]

The run folder is KEEP_DIR (emptied first) when given, so its REPORT.html and the
screenshot REPORT.png stay there to be looked at; a temporary folder otherwise. Without
Chromium the test prints `not run: chromium not installed` and exits 77 (CTest: skipped)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from html import escape
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import report  # noqa: E402
import synth_reported  # noqa: E402
import test_page  # noqa: E402

CHROMIUM = os.environ.get("SWITCHYARD_CHROMIUM", "/usr/bin/chromium")
SKIP = 77
# A cold start of Chromium on a loaded 2-core machine takes a few seconds; a hang must still
# end the test.
TIMEOUT_S = 90
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


def chromium(page, *args):
    """(stdout, stderr) of one headless Chromium run on `page`, with a profile of its own."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args,
                               page.as_uri()], capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    return done.stdout, done.stderr


# Run in a copy of the page only (REPORT.html itself runs no script), inside a frame of the
# width tested (headless Chromium keeps a window at least 500 px wide): the widths of the page
# and of the elements that stick out of the viewport, with the claims closed and then open,
# and where the summary table starts, written on the frame's parent.
MEASURE = """<script>
function wide() {
  const w = document.documentElement.clientWidth, out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.closest('.scroll') || e.closest('svg')) continue;
    if (e.getBoundingClientRect().right > w + 1) out.push(e.tagName + '#' + (e.id || ''));
  }
  return {page: document.documentElement.scrollWidth, viewport: w, wide: out.slice(0, 5)};
}
const closed = wide();
document.querySelectorAll('details').forEach(d => d.open = true);
const opened = wide();
const s = document.getElementById('summary');
const t = s ? s.parentElement.querySelector('table') : null;
parent.document.body.setAttribute('data-measure-' + window.name, JSON.stringify(
  {closed: closed, opened: opened, summary_top: t ? t.getBoundingClientRect().top + scrollY : -1}));
</script>"""
WIDTHS = (1280, 390)
SCREEN_HEIGHT = 800


def measure(html):
    """{width: the measurements of MEASURE on a copy of the page at width x 800} for each of
    WIDTHS, one frame per width in one Chromium run (a start costs seconds)."""
    probe = html.with_name("measure.html")
    page = escape(html.read_text().replace("</body>", MEASURE + "</body>"))
    frames = "".join(f'<iframe name="{w}" width="{w}" height="{SCREEN_HEIGHT}" '
                     f'style="border:0;display:block" srcdoc="{page}"></iframe>'
                     for w in WIDTHS)
    probe.write_text(f'<!DOCTYPE html><html><body style="margin:0">{frames}</body></html>')
    dom, _ = chromium(probe, "--dump-dom",
                      f"--window-size={max(WIDTHS) + 100},{SCREEN_HEIGHT * len(WIDTHS)}")
    probe.unlink()
    got = {}
    for width in WIDTHS:
        found = re.search(rf'data-measure-{width}="([^"]*)"', dom)
        got[width] = json.loads(found.group(1).replace("&quot;", '"')) if found else None
    return got


def console_lines(stderr):
    """The page's console messages in Chromium's log. The page runs no script, so any message
    at all (an uncaught error, a failed load, a parse complaint) is one too many."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class Browser(unittest.TestCase):
    folder = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = None
        if cls.folder is None:
            cls.tmp = tempfile.TemporaryDirectory(prefix="browser-test-")
            cls.folder = Path(cls.tmp.name) / "run"
        synth_reported.reported(cls.folder)
        cls.html = cls.folder / "REPORT.html"
        cls.dom, cls.dom_log = chromium(cls.html, "--dump-dom")
        cls.shot = cls.folder / "REPORT.png"
        _, cls.shot_log = chromium(cls.html, f"--screenshot={cls.shot}",
                                   "--window-size=1280,4000")

    @classmethod
    def tearDownClass(cls):
        if cls.tmp is not None:
            cls.tmp.cleanup()

    def test_rendered_dom_has_every_claim_and_chart(self):
        self.assertIn("<h1>Switchyard report</h1>", self.dom)
        test_page.check_page(self, self.dom)

    def test_console_is_silent(self):
        self.assertEqual(console_lines(self.dom_log) + console_lines(self.shot_log), [])

    def check_fits(self, html, summary=True):
        measured = measure(html)
        for width in WIDTHS:
            got = measured[width]
            self.assertIsNotNone(got, f"no measurement at {width} px")
            for state in ("closed", "opened"):
                m = got[state]
                self.assertLessEqual(m["page"], m["viewport"], (width, state, m["wide"]))
                self.assertEqual(m["wide"], [], (width, state))
            if width == 1280 and summary:
                self.assertGreaterEqual(got["summary_top"], 0)
                self.assertLess(got["summary_top"], SCREEN_HEIGHT - 100)

    def test_page_fits_both_widths(self):
        self.check_fits(self.html)

    def test_reference_page_fits_both_widths(self):
        ref = self.folder.parent / "reference"
        shutil.rmtree(ref, ignore_errors=True)
        shutil.copytree(report.REFERENCE, ref)
        assert report.main([str(ref), "--no-charts", "--no-reference"]) == 0
        self.check_fits(ref / "REPORT.html")
        # C13's page holds the widest measured table (76 rows of read policies).
        self.check_fits(ref / "claim-C13.html", summary=False)
        _, log = chromium(ref / "claim-C13.html", "--dump-dom")
        self.assertEqual(console_lines(log), [])

    def test_screenshot_kept(self):
        self.assertTrue(self.shot.exists(), self.shot_log[-2000:])
        self.assertEqual(self.shot.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    if not Path(CHROMIUM).exists():
        print("not run: chromium not installed")
        sys.exit(SKIP)
    if len(sys.argv) > 1:
        Browser.folder = Path(sys.argv.pop(1)).resolve()
    unittest.main()
