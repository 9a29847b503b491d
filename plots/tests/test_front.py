#!/usr/bin/python3
"""The report's front (issue 38) read from the committed reference run's unchanged
measurements: what surprised us comes from settled comparisons only (no client-bound figure,
no claim that holds, no 12.91x), the summary table has every claim, REPORT.md stays short,
and a verdict that differs from the reference says why."""
import re
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import claims  # noqa: E402
import data as D  # noqa: E402
import verdict as V  # noqa: E402
from reference import REFERENCE  # noqa: E402
from sections import surprises  # noqa: E402

MAX_MD_LINES = 400


def client_bound_rps(run):
    """The requests/s of every client-bound sweep point and repetition of the run, as the
    report prints them (whole numbers)."""
    out = set()
    for p in (run.get("sweep") or {}).get("points", []):
        if p.get("load") and D.point_status(p)[0] == "client-bound":
            out |= {f"{x:.0f}" for x in D.rps_rounds(p) + [D.rps(p)]}
    return out


class Reference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ref = D.Run(REFERENCE)
        cls.results = claims.evaluate(cls.ref)
        cls.lines = surprises.surprises(cls.results, cls.ref)
        cls.text = "\n".join(cls.lines)

    def test_the_reference_has_the_client_bound_epoll_points(self):
        # The checks below mean something only if the reference still holds the trap.
        self.assertIn("15108", {f"{D.rps(p):.0f}" for p in D.ok_points(self.ref, "epoll",
                                                                        "pingpong")})
        self.assertTrue(client_bound_rps(self.ref))

    def test_no_false_headline(self):
        self.assertNotIn("12.91", self.text)
        self.assertNotIn("15108", self.text)

    def test_no_figure_from_a_client_bound_point(self):
        numbers = set(re.findall(r"\b\d{4,}\b", self.text))
        self.assertEqual(numbers & client_bound_rps(self.ref), set())

    def test_no_claim_that_holds_is_a_surprise(self):
        named = set(re.findall(r"^- (C\d+)\b", self.text, re.M))
        self.assertTrue(named, self.text)
        held = {cid for cid in named if self.results[cid]["verdict"] == V.HOLDS}
        self.assertEqual(held, set())

    def test_a_peak_exceeded_by_a_client_bound_point_is_not_settled(self):
        self.assertIsNone(surprises.settled_peak(self.ref, "epoll", "pingpong"))
        self.assertIsNotNone(surprises.settled_peak(self.ref, "thread", "churn"))


if __name__ == "__main__":
    unittest.main()
