#!/usr/bin/python3
"""slides.py: 16:9 slides in large type of the charts that carry a claim, each with the
claims' verdicts under its title; an index of every run's verdicts; bad input refused in one
line with exit 2."""
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import data as D  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import report  # noqa: E402
import slides  # noqa: E402
import synth  # noqa: E402
from matplotlib.text import Text  # noqa: E402

OTHER = {"claims": [{"id": "C1", "verdict": "does not hold"}, {"id": "C2", "verdict": "holds"}]}


def png_size(path):
    """(width, height) from a PNG's IHDR chunk."""
    head = Path(path).read_bytes()[:24]
    return struct.unpack(">II", head[16:24])


class Slides(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="slides-test-")
        cls.runs = Path(cls.tmp.name) / "runs"
        cls.folder = synth.full(cls.runs / "synth" / "run1")
        assert report.main([str(cls.folder), "--no-charts", "--no-reference"]) == 0
        other = cls.runs / "other" / "run2"
        other.mkdir(parents=True)
        (other / "verdicts.json").write_text(__import__("json").dumps(OTHER))
        cls.rc = slides.main([str(cls.folder), "--runs", str(cls.runs)])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_one_16_9_slide_per_claim_chart(self):
        self.assertEqual(self.rc, 0)
        made = sorted((self.folder / "slides").glob("*.png"))
        self.assertEqual([p.name.split("-", 1)[1][:-4] for p in made],
                         [stem for stem, _, _ in slides.key_charts()])
        self.assertIn("switch_cost", [stem for stem, _, _ in slides.key_charts()])
        for p in made:
            self.assertEqual(png_size(p), (1920, 1080), p.name)

    def test_large_type_and_verdicts_under_the_title(self):
        stem, text, fn = next(c for c in slides.key_charts() if c[0] == "switch_cost")
        fig, _ = slides.draw_slide(D.Run(self.folder), stem, text, fn)
        fig.canvas.draw()
        sizes = [t.get_fontsize() for t in fig.findobj(Text)
                 if t.get_text().strip() and t.get_visible()]
        self.assertGreaterEqual(min(sizes), slides.MIN_PT)
        head = [t.get_text() for t in fig.texts if t.get_gid() == "verdicts"][0]
        for cid in ("C4", "C5", "C9"):
            self.assertIn(cid, head)
        self.assertIn("threshold", head)
        plt.close(fig)

    def test_index_has_a_verdict_column_per_run(self):
        page = (self.runs / "index.html").read_text()
        self.assertIn("synth/run1", page)
        self.assertIn('<a href="other/run2/REPORT.html">other/run2</a>', page)
        row = next(r for r in page.split("<tr>") if r.startswith("<th>C1</th>"))
        self.assertIn('<td class="n">does not hold</td>', row)
        self.assertEqual(page.count("<tr><th>C"), 17)
        run1 = __import__("json").loads((self.folder / "verdicts.json").read_text())
        c2 = next(c["verdict"] for c in run1["claims"] if c["id"] == "C2")
        row2 = next(r for r in page.split("<tr>") if r.startswith("<th>C2</th>"))
        self.assertIn(f">{c2}</td>", row2)

    def test_bad_input_is_one_line_and_exit_2(self):
        missing = str(Path(self.tmp.name) / "nowhere")
        for argv in ([], [missing], [str(self.folder), "--bogus"],
                     [str(self.folder), "--runs", missing], [str(self.folder), str(self.folder)]):
            p = subprocess.run([sys.executable, str(HERE.parent / "slides.py"), *argv],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, (argv, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertNotIn("Traceback", p.stderr)


if __name__ == "__main__":
    unittest.main()
