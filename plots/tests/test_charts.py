#!/usr/bin/python3
"""The charts draw on a small synthetic run without failing, and say "not run" without data."""
import os
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))
import charts as C  # noqa: E402
import report as R  # noqa: E402
import synth as S  # noqa: E402


class Charts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="charts-test-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def files(self, folder):
        return {p.name for p in folder.iterdir()}

    def test_full_synthetic_run(self):
        run = S.full(self.dir / "full")
        status = C.draw_all(run)
        self.assertEqual(list(status), C.STEMS)
        self.assertIn("copystack", C.STEMS)
        self.assertEqual(status, {stem: "ok" for stem, _, _ in C.CHARTS})
        for stem, _, _ in C.CHARTS:
            for ext in ("png", "svg"):
                path = run / f"{stem}.{ext}"
                self.assertTrue(path.exists() and path.stat().st_size > 1000, path)

    def test_missing_data_says_not_run(self):
        empty = self.dir / "empty"
        empty.mkdir()
        status = C.draw_all(empty)
        self.assertEqual(set(status.values()), {"not run"})
        self.assertIn("switch_cost.png", self.files(empty))

    def test_report_main_writes_report_and_links_charts(self):
        run = S.full(self.dir / "rep", sweep=None)
        self.assertEqual(R.main([str(run)]), 0)
        text = (run / "REPORT.md").read_text()
        self.assertIn("](star_ring.png)", text)
        self.assertIn("[copystack.png](copystack.png)", text)  # every drawn chart is linked
        self.assertRegex(text, r"\| \[C6\]\(#c6\) \|.* \| not run \|")
        self.assertEqual(R.main([str(run), "--bogus"]), 2)


if __name__ == "__main__":
    unittest.main()
