#!/usr/bin/python3
"""Every measured point's status (data.point_status): what a verdict may use it for. A point
whose load generator was the bottleneck, that served nothing, that lost more than 1% of its
requests or that hit a machine limit is never counted as ok."""
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import data as D  # noqa: E402
import synth  # noqa: E402
import validate  # noqa: E402


def point(**load):
    p = synth.point("thread", "pingpong", 100, 10000)
    p["load"].update(load)
    return p


class PointStatus(unittest.TestCase):
    def test_kernel_unmeasured_is_a_point(self):
        # The sweep writes kernel null when /proc/meminfo gave no sample in the window (thread
        # at 10,000 connections on a loaded VM): the file is read, the figure is missing.
        doc = synth.sweep()
        doc["points"][0]["kernel"] = None
        self.assertIsNone(validate.file_problem("sweep", doc))
        doc["points"][0]["kernel"] = 3
        self.assertIn("points.0.kernel", validate.file_problem("sweep", doc))

    def test_clean_point_is_ok(self):
        self.assertEqual(D.point_status(point()), ("ok", []))

    def test_saturated_load_generator_is_client_bound(self):
        warn = "echo-load saturated its CPU (0.97 cores used, busiest worker 0.97 of a core)"
        status, why = D.point_status(point(warnings=[warn]))
        self.assertEqual((status, why), ("client-bound", [warn]))
        self.assertEqual(D.point_status(point(cpu={"saturated": True}))[0], "client-bound")

    def test_nothing_served_is_failed(self):
        status, why = D.point_status(point(requests=0))
        self.assertEqual(status, "failed")
        self.assertIn("no request completed", why[0])

    def test_failed_share(self):
        # 0.06% timeouts (C6's reference point) stay ok; 2% do not.
        self.assertEqual(D.point_status(point(requests=104768, errors={"timeout": 67}))[0], "ok")
        status, why = D.point_status(point(requests=1000, errors={"timeout": 20}))
        self.assertEqual(status, "failed")
        self.assertIn("20 of 1020", why[0])
        self.assertEqual(D.point_status(point(requests=1000, unfinished=50))[0], "failed")

    def test_out_of_fds_is_a_limit(self):
        status, why = D.point_status(point(requests=1000, errors={"fd_exhausted": 800}))
        self.assertEqual(status, "limit")
        p = synth.point("fiber", "churn", 10000, 0)
        p.update(status="not run", reason="needs 20002 fds, RLIMIT_NOFILE allows 20000")
        self.assertEqual(D.point_status(p)[0], "limit")

    def test_a_drivers_own_classification_wins(self):
        p = point()
        p.update(status="contended", reasons=["12 runnable tasks besides the run's own"])
        self.assertEqual(D.point_status(p), ("contended", ["12 runnable tasks besides the run's own"]))

    def test_throughput_uses_ok_points_memory_also_client_bound(self):
        saturated = point(cpu={"saturated": True})
        saturated["conns"] = 1000
        with tempfile.TemporaryDirectory() as tmp:
            run = D.Run(synth.write(tmp, sweep={"experiment": "echo sweep", "meta": synth.META,
                                            "points": [point(), saturated]}))
        self.assertEqual([p["conns"] for p in D.ok_points(run, "thread", "pingpong")], [100])
        self.assertEqual([p["conns"] for p in D.ok_points(run, "thread", "pingpong",
                                                          ("ok", "client-bound"))], [100, 1000])


if __name__ == "__main__":
    unittest.main()
