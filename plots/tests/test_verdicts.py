#!/usr/bin/python3
"""Verdicts on intervals: a figure against a threshold (above, below, straddling; exact
counts; single samples), inconclusive when a straddle decides, a wide interval that still
clears its threshold, verdicts.json's fields and its agreement with REPORT.md's table, and
the two-sided Mann-Whitney test against scipy's."""
import json
import random
import re
import sys
import tempfile
import unittest
from pathlib import Path
from formatting import figure_text, interval_text

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import claims  # noqa: E402
import data as D  # noqa: E402
import figures as F  # noqa: E402
import report  # noqa: E402
import synth  # noqa: E402
import verdict as V  # noqa: E402

C2_TPUT = "throughput merged/naive (median of paired rounds)"


def sampled(value, rel, n=5):
    """n samples spread evenly +-rel around value."""
    return F.timing("x", value, "", "test",
                    samples=[value * (1 + rel * (2 * i / (n - 1) - 1)) for i in range(n)])


class Compare(unittest.TestCase):
    def outcome(self, fig, op, threshold):
        return F.compare(fig, op, threshold)["outcome"]

    def test_interval_above_below_straddles(self):
        f = sampled(1.2, 0.02)  # 1.176 ... 1.224
        self.assertLess(f["low"], f["value"])
        self.assertGreater(f["high"], f["value"])
        self.assertEqual(f["n"], 5)
        self.assertEqual(self.outcome(f, ">=", 1.15), F.YES)
        self.assertEqual(self.outcome(f, ">=", 1.3), F.NO)
        self.assertEqual(self.outcome(f, ">=", 1.2), F.STRADDLES)
        self.assertEqual(self.outcome(f, "<=", 1.3), F.YES)
        self.assertEqual(self.outcome(f, "<", 1.15), F.NO)
        self.assertEqual(self.outcome(f, "<", 1.2), F.STRADDLES)

    def test_never_rounds_first(self):
        # C14's case: 1.0487 prints as 1.05 but is below 1.05; an exact count shows it.
        self.assertEqual(self.outcome(F.exact("g", 1.0487, "", "t"), ">=", 1.05), F.NO)
        self.assertEqual(figure_text(F.timing("g", 1.0487, "", "t")), "1.05")

    def test_exact_interval_is_the_value(self):
        e = F.exact("c", 2.0, "", "t")
        self.assertEqual((e["low"], e["high"], e["exact"]), (2.0, 2.0, True))
        self.assertEqual(self.outcome(e, ">=", 2.0), F.YES)
        self.assertEqual(self.outcome(e, ">", 2.0), F.NO)
        self.assertEqual(interval_text(e), " (exact)")

    def test_single_sample(self):
        once = F.once("o", 100.0, "", "t")
        self.assertEqual((once["low"], once["high"], once["n"]), (None, None, 1))
        self.assertEqual(interval_text(once), " (n=1, no interval)")
        test = F.compare(once, ">=", 90.0)
        self.assertEqual((test["outcome"], test["basis"]), (F.YES, "one sample"))
        # Within SINGLE_MARGIN of the threshold a single sample cannot decide.
        self.assertEqual(self.outcome(once, ">=", 100.0 * (1 + F.SINGLE_MARGIN / 2)),
                         F.STRADDLES)
        self.assertEqual(self.outcome(once, ">=", 100.0 * (1 + 2 * F.SINGLE_MARGIN)), F.NO)

    def test_bound_confirms_never_refutes(self):
        share = F.estimate("s", 0.4, 0.35, 0.45, 5, "x", "t")
        at_most = F.bounded(share, F.AT_MOST)
        self.assertEqual((at_most["low"], at_most["high"], at_most["bound"]), (0.35, 0.45,
                                                                              F.AT_MOST))
        self.assertIn("at most", at_most["name"])
        # Below the threshold on its closed side: confirmed, as the measurement would be.
        self.assertEqual(self.outcome(at_most, "<=", 0.5), F.YES)
        # Where the measurement says no, an upper bound cannot: the truth may lie lower.
        self.assertEqual(self.outcome(share, "<=", 0.3), F.NO)
        self.assertEqual(self.outcome(at_most, "<=", 0.3), F.STRADDLES)
        self.assertEqual(self.outcome(at_most, ">", 0.3), F.STRADDLES)
        at_least = F.bounded(share, F.AT_LEAST)
        self.assertEqual(self.outcome(at_least, ">=", 0.3), F.YES)
        self.assertEqual(self.outcome(at_least, ">=", 0.5), F.STRADDLES)
        self.assertEqual(F.compare(at_least, ">=", 0.5)["bound"], F.AT_LEAST)
        self.assertIn("at least this", interval_text(at_least))

    def test_interval_is_deterministic(self):
        self.assertEqual(F.interval([1.0, 2.0, 3.0, 4.0]), F.interval([1.0, 2.0, 3.0, 4.0]))


class Decide(synth.SyntheticRuns):
    def c2(self, **engines):
        run = D.Run(self.new_folder(engines=synth.engines(**engines)))
        return claims.by_id("C2").verdict(run)

    def test_straddling_run_is_inconclusive(self):
        r = self.c2(ratio=1.15, rounds=5, jitter=0.03)
        self.assertEqual(r["verdict"], V.INCONCLUSIVE)
        self.assertEqual(r["possible"], [V.HOLDS, V.PARTLY])
        self.assertEqual([(t["figure"], t["threshold"]) for t in r["straddled"]],
                         [(C2_TPUT, 1.15)])
        self.assertRegex(V.why(r), r"^inconclusive: throughput merged/naive \(median of paired "
                                   r"rounds\) 1\.15 \[1\.1\d*, 1\.1\d*\] straddles 1\.15 "
                                   r"\(it could be holds or holds partly\)$")

    def test_a_straddle_that_does_not_decide_is_ignored(self):
        # Throughput clears 1.15: naive/merged CPU, which straddles its 1.15, is never read.
        r = self.c2(ratio=1.3, cpu_ratio=1.15, rounds=5, jitter=0.01)
        self.assertEqual(r["verdict"], V.HOLDS)
        # Throughput between 1.0 and 1.15: the CPU straddle could only add a reason for partly.
        r = self.c2(ratio=1.08, cpu_ratio=1.15, rounds=5, jitter=0.01)
        self.assertEqual(r["verdict"], V.PARTLY)

    def test_wide_but_clear_interval_holds(self):
        r = self.c2(ratio=1.6, rounds=5, jitter=0.2)  # rounds 1.28 ... 1.92
        tput = F.by_name(r["figures"])[C2_TPUT]
        self.assertGreater(tput["high"] - tput["low"], 0.3)
        self.assertGreaterEqual(tput["low"], 1.15)
        self.assertEqual(r["verdict"], V.HOLDS)
        self.assertEqual(r["single_sample"], [])
        self.assertEqual(r["margin"]["threshold"], 1.15)

    def test_single_sample_verdict_says_so(self):
        r = self.c2(ratio=1.3)
        self.assertEqual(r["verdict"], V.HOLDS)
        self.assertIn(C2_TPUT, r["single_sample"])
        self.assertTrue(V.why(r).startswith("rests on figures measured once: "))

    def test_every_way_through_the_rule(self):
        """Two straddles leading to three verdicts: all are found."""
        a, b = F.once("a", 1.0, "", "t"), F.once("b", 1.0, "", "t")

        def judge(m, t):
            if t(a, ">=", 1.0 + F.SINGLE_MARGIN / 2):
                return V.HOLDS
            return V.PARTLY if t(b, ">=", 1.0 + F.SINGLE_MARGIN / 2) else V.NOT
        r = V.decide("rule", {"lines": [], "figures": []}, judge)
        self.assertEqual((r["verdict"], r["possible"]), (V.INCONCLUSIVE,
                                                         [V.HOLDS, V.PARTLY, V.NOT]))
        self.assertEqual([t["figure"] for t in r["straddled"]], ["a", "b"])

    def test_noise_that_cannot_change_the_verdict(self):
        """A ratio clear of 1.05 by its own interval, but overlapping an A/A floor that
        reaches across 1.05: inconclusive when that threshold can change the verdict, decided
        when another comparison already settled it."""
        ratio = F.estimate("cpu ratio", 1.08, 1.055, 1.1, 5, "x", "t")
        aa = F.estimate("A/A", 1.0, 0.95, 1.06, 5, "x", "t")

        def decide(calls):
            count = F.exact("calls", calls, "", "t")

            def judge(m, t):
                holds = t(ratio, "<=", 1.05) and t(count, "<=", 2.1)
                return V.HOLDS if holds else V.PARTLY if t(ratio, "<=", 1.25) else V.NOT
            return V.decide("rule", {"lines": [], "figures": [ratio, count],
                                     "noise_floor": [V.noise_entry(ratio, aa)]}, judge)
        r = decide(2.0)
        self.assertEqual((r["verdict"], r["possible"]), (V.INCONCLUSIVE, [V.HOLDS, V.PARTLY]))
        self.assertIn("within that noise it could be holds or holds partly", V.why(r))
        # 2.2 calls a request rule "holds" out on either side of 1.05.
        r = decide(2.2)
        self.assertEqual(r["verdict"], V.PARTLY)
        self.assertIn("the verdict is the same on either side of it", "\n".join(r["measured"]))

    def test_rules_say_intervals_are_compared(self):
        for c in claims.CLAIMS:
            self.assertIn("compared with the figure's 95% interval", c.verdict(
                D.Run(synth.full(Path(self.tmp.name) / f"r{c.ID}")))["rule"], c.ID)


class VerdictsJson(unittest.TestCase):
    FIELDS = {"id", "verdict", "possible", "rule", "quoted", "figures", "thresholds",
              "comparisons", "margin", "straddled", "single_sample",
              "open", "not_run", "would_decide"}  # the last three: tests/test_undecided.py
    FIGURE = {"name", "value", "low", "high", "n", "unit", "exact", "source", "bound"}

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="verdicts-json-")
        self.dir = synth.full(Path(self.tmp.name) / "run",
                          engines=synth.engines(ratio=1.15, rounds=5, jitter=0.03))
        self.assertEqual(report.main([str(self.dir), "--no-charts", "--no-reference"]), 0)
        self.doc = json.loads((self.dir / "verdicts.json").read_text())

    def tearDown(self):
        self.tmp.cleanup()

    def test_fields(self):
        self.assertEqual([c["id"] for c in self.doc["claims"]], [c.ID for c in claims.CLAIMS])
        for c in self.doc["claims"]:
            self.assertEqual(set(c), self.FIELDS, c["id"])
            for f in c["figures"]:
                self.assertEqual(set(f), self.FIGURE, c["id"])
        c2 = next(c for c in self.doc["claims"] if c["id"] == "C2")
        self.assertEqual(c2["verdict"], V.INCONCLUSIVE)
        self.assertEqual(c2["thresholds"], {"HOLDS_AT": 1.15, "PARTLY_AT": 1.0,
                                            "PARTLY_CPU_AT": 1.15})
        self.assertEqual(c2["straddled"][0]["threshold"], 1.15)
        self.assertEqual(c2["margin"]["figure"], C2_TPUT)
        tput = next(f for f in c2["figures"] if f["name"] == C2_TPUT)
        self.assertEqual((tput["n"], tput["exact"]), (5, False))
        self.assertLess(tput["low"], 1.15)
        self.assertGreater(tput["high"], 1.15)
        c3 = next(c for c in self.doc["claims"] if c["id"] == "C3")
        self.assertTrue(all(f["exact"] and f["low"] == f["value"] for f in c3["figures"]))
        self.assertNotIn("verdicts.csv", [p.name for p in self.dir.iterdir()])

    def test_equals_the_report_table(self):
        text = (self.dir / "REPORT.md").read_text()
        # The summary's columns: claim, in brief, quoted, measured, verdict, ...
        table = dict(re.findall(r"^\| \[(C\d+)\]\(#c\d+\) \|(?: [^|]* \|){3} ([a-z ]+) \|", text,
                                re.M))
        self.assertEqual(table, {c["id"]: c["verdict"] for c in self.doc["claims"]})
        self.assertIn(V.INCONCLUSIVE, table.values())


class MannWhitney(unittest.TestCase):
    def test_two_sided_matches_scipy(self):
        try:
            from scipy.stats import mannwhitneyu
        except ImportError:
            self.skipTest("scipy not installed")
        rng = random.Random(7)
        for trial in range(200):
            digits = 1 if trial % 3 == 0 else 6  # every third with ties
            a = [round(rng.gauss(0, 1), digits) for _ in range(rng.randint(1, 12))]
            b = [round(rng.gauss(0.7, 1), digits) for _ in range(rng.randint(1, 12))]
            want = mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue
            self.assertAlmostEqual(F.stats.mann_whitney_two_sided(a, b), want, places=12,
                                   msg=f"{a} {b}")

    def test_small_samples(self):
        self.assertAlmostEqual(F.stats.mann_whitney_two_sided([1, 2, 3], [4, 5, 6]), 0.1)
        self.assertAlmostEqual(F.stats.mann_whitney_two_sided([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
                               2 / 252)
        self.assertEqual(F.stats.mann_whitney_two_sided([], [1.0]), 1.0)


if __name__ == "__main__":
    unittest.main()
