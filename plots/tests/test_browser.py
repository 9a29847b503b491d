#!/usr/bin/python3
"""REPORT.html in a real browser: plots/report.py writes it for a synthetic run, headless
Chromium renders it, and the rendered DOM has every claim's section and every chart as
inline SVG (the checks of tests/test_page.py), with nothing logged to the console.

    test_browser.py [KEEP_DIR]

The run folder is KEEP_DIR (emptied first) when given, so its REPORT.html and the
screenshot REPORT.png stay there to be looked at; a temporary folder otherwise. Without
Chromium the test prints `not run: chromium not installed` and exits 77 (CTest: skipped)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))
import report as R  # noqa: E402
import synth as S  # noqa: E402
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
        shutil.rmtree(cls.folder, ignore_errors=True)
        S.full(cls.folder)
        assert R.main([str(cls.folder), "--no-reference"]) == 0
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
