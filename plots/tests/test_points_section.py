#!/usr/bin/python3
"""The report's "Points that are not ok" section (plots/sections/points.py) and the sweep
charts' marks for such points: hollow markers for a measured point that is not ok, a marker on
the x axis for a point without a figure, each with a legend entry; never simply missing."""
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import charts.style  # noqa: E402,F401  (Agg before pyplot)
import matplotlib.pyplot as plt  # noqa: E402

import data as D  # noqa: E402
import synth  # noqa: E402
from charts import sweep as sweep_chart  # noqa: E402
from sections import points  # noqa: E402


def flagged_run(tmp):
    """A synthetic run whose sweep has one client-bound, one failed and one limit point (as
    the drivers now write them), and an engines run classified contended."""
    folder = synth.full(Path(tmp) / "run")
    run = D.Run(folder)
    pts = run.get("sweep")["points"]
    th = [p for p in pts if p["model"] == "thread" and p["mode"] == "pingpong"]
    th[1].update(status="client-bound", reasons=["round 2: echo-load used 0.97 of its 1 core"])
    th[2].update(status="failed", reasons=["round 1: no request completed"], load=None)
    pts.append({"model": "thread", "mode": "pingpong", "conns": 30000, "status": "limit",
                "reasons": ["fds: 30000 connections + 64 exceed RLIMIT_NOFILE"]})
    for r in (run.get("engines") or {}).get("runs", [])[:1]:
        r.update(status="contended", reasons=["2.0 more tasks runnable than the run's own"])
    return run, th


class Section(unittest.TestCase):
    def test_lists_every_point_that_is_not_ok_by_status(self):
        with tempfile.TemporaryDirectory(prefix="points-") as tmp:
            run, th = flagged_run(tmp)
            text = "\n".join(points.points_section(run))
        self.assertIn("## Points that are not ok", text)
        for status in ("failed", "limit", "client-bound"):
            self.assertIn(f"### {status} (", text)
        self.assertIn(f"thread pingpong {th[1]['conns']} conns", text)
        self.assertIn("echo-load used 0.97 of its 1 core", text)
        self.assertIn("fds: 30000 connections", text)
        # Grouped: failed before limit before client-bound.
        self.assertLess(text.index("### failed"), text.index("### limit"))
        self.assertLess(text.index("### limit"), text.index("### client-bound"))

    def test_clean_run_says_so(self):
        with tempfile.TemporaryDirectory(prefix="points-") as tmp:
            run = D.Run(synth.full(Path(tmp) / "run"))
            mc = run.get("maxconns")
            mc["points"] = [p for p in mc["points"] if p["status"] == "ok"]
            text = "\n".join(points.points_section(run))
        self.assertIn("Every point is ok.", text)

    def test_older_runs_are_classified(self):
        # A scale row of an older run: its reason in the status string.
        row = {"config": "select", "idle": 10000, "status": "not run: FD_SETSIZE (1034 fds)"}
        self.assertEqual(points.row_status(row), ("limit", ["not run: FD_SETSIZE (1034 fds)"]))
        self.assertEqual(points.row_status({"status": "ok"}), ("ok", []))

    def test_in_the_report(self):
        import document
        with tempfile.TemporaryDirectory(prefix="points-") as tmp:
            run, _ = flagged_run(tmp)
            parts = document.build(run).parts
        self.assertTrue(any(p.lines[0] == "## Points that are not ok" for p in parts))


class ChartMarks(unittest.TestCase):
    def test_hollow_and_axis_markers_with_legend(self):
        with tempfile.TemporaryDirectory(prefix="points-") as tmp:
            run, th = flagged_run(tmp)
            fig = plt.figure()
            sweep_chart.sweep_throughput(run, fig)
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertIn(charts.style.FLAGGED_LABEL, labels)
        self.assertIn("failed (no figure; on the axis)", labels)
        self.assertIn("limit (no figure; on the axis)", labels)
        hollow = [ln for ln in ax.lines if ln.get_markerfacecolor() == "none"
                  and th[1]["conns"] in list(ln.get_xdata())]
        self.assertTrue(hollow, "the client-bound point is drawn hollow")
        failed = [ln for ln in ax.lines if list(ln.get_xdata()) == [th[2]["conns"]]
                  and ln.get_marker() == "v"]
        self.assertTrue(failed, "the failed point is drawn on the axis, not left out")
        plt.close(fig)


if __name__ == "__main__":
    unittest.main()
