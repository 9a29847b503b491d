#!/usr/bin/python3
"""Verdicts the machine cannot decide say why and what would (issue 35, item 5): an
inconclusive verdict names the figure that kept it open, its interval and n, the threshold it
straddles and about how many rounds the measured noise needs for the interval to clear it
(n x (half-width toward the threshold / distance to it)^2, at least n + 1), or that the
figure is at its threshold, or measured once, or a bound only a faster load generator lifts;
a not-run verdict names what stopped it and what would lift it. In REPORT.md (the claim's
section, the verdict table's cell and the note under it) and in verdicts.json."""
import json
import re
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import claims  # noqa: E402
import claims_table  # noqa: E402
import data as D  # noqa: E402
import document  # noqa: E402
import figures as F  # noqa: E402
import report as report_cli  # noqa: E402
import synth  # noqa: E402
import verdict as V  # noqa: E402

FIG = "synthetic ratio"


def decide(fig, op=">=", threshold=1.05):
    """A one-comparison rule: holds when fig op threshold, else does not hold."""
    def judge(m, t):
        return V.HOLDS if t(fig, op, threshold) else V.NOT
    return V.decide("rule", {"lines": [], "figures": [fig]}, judge)


class Rounds(unittest.TestCase):
    def test_straddling_figure_names_interval_and_rounds(self):
        # Half-width 0.10, distance 0.05: 5 x (0.10 / 0.05)^2 = 20 rounds.
        r = decide(F.estimate(FIG, 1.10, 1.00, 1.20, 5, "x", "t"))
        self.assertEqual(r["verdict"], V.INCONCLUSIVE)
        (e,) = r["open"]
        self.assertEqual((e["needs"], e["rounds"], e["n"], e["threshold"]), (V.ROUNDS, 20, 5, 1.05))
        self.assertAlmostEqual(e["half_width"], 0.10)
        self.assertAlmostEqual(e["distance"], 0.05)
        text = claims_table.would_decide(r)
        self.assertIn(f"{FIG} 1.1 [1, 1.2] (n=5) straddles 1.05", text)
        self.assertIn("about 20 rounds would decide it on this machine (this run has 5", text)
        self.assertIn("an estimate from the interval's width", text)
        self.assertIn("about 20 rounds would decide it (now 5)", claims_table.would_decide_short(r))

    def test_the_rule(self):
        est = V.rounds_to_clear
        self.assertEqual(est(1.10, 1.00, 1.20, 5, 1.05)[0], 20)
        self.assertEqual(est(1.10, 1.00, 1.20, 10, 1.05)[0], 40)  # proportional to n
        self.assertEqual(est(1.10, 1.00, 1.20, 5, 1.02)[0], 8)  # 5 x (0.1/0.08)^2 = 7.8
        self.assertEqual(est(1.10, 1.00, 1.20, 5, 1.01)[0], 7)  # 6.17: rounded up
        self.assertEqual(est(1.10, 1.00, 1.20, 5, 1.09)[0], 500)  # 5 x 10^2
        # Just inside the interval: at least one round more than now.
        self.assertEqual(est(1.10, 1.00, 1.20, 5, 1.0001)[0], 6)
        # Already clear: the rounds it has.
        self.assertEqual(est(1.10, 1.08, 1.12, 5, 1.05)[0], 5)
        # The half-width is the side facing the threshold: [1.09, 1.30] against 1.05 needs
        # 5 x (0.01/0.05)^2 (clear already), against 1.20 5 x (0.2/0.1)^2 = 20.
        self.assertEqual(est(1.10, 1.09, 1.30, 5, 1.05)[0], 5)
        self.assertEqual(est(1.10, 1.09, 1.30, 5, 1.20)[0], 20)
        # Floating point: 5 x (0.2 / 0.1)^2 computes as 20.00000000000003, still 20 rounds.
        self.assertEqual(est(0.9, 0.7, 1.1, 5, 1.0)[0], 20)
        # A threshold of 0 is measured against the half-width.
        self.assertEqual(est(0.1, -0.1, 0.3, 5, 0.0)[0], 20)

    def test_at_the_threshold(self):
        r = decide(F.estimate(FIG, 1.05, 1.00, 1.10, 5, "x", "t"))
        (e,) = r["open"]
        self.assertEqual((e["needs"], e["rounds"]), (V.AT, None))
        self.assertIn("at the threshold", claims_table.would_decide(r))
        self.assertIn("no number of rounds will decide it here", claims_table.would_decide(r))
        self.assertNotIn("rounds would decide", claims_table.would_decide(r))
        # Within 0.5% of it counts as on it; 1% off does not.
        self.assertEqual(decide(F.estimate(FIG, 1.054, 1.0, 1.1, 5, "x", "t"))["open"][0]
                         ["needs"], V.AT)
        self.assertEqual(decide(F.estimate(FIG, 1.0605, 1.0, 1.1, 5, "x", "t"))["open"][0]
                         ["needs"], V.ROUNDS)
        self.assertIn("at the threshold", claims_table.would_decide_short(r))

    def test_a_share_of_comparisons_names_the_open_ones(self):
        # C1's share of comparisons ring wins: 1 [0.955, 1] against 1.0 sits on its threshold,
        # but it is open only because one comparison straddles (0.72 [0.67, 1.01] against
        # 1.0, n=11): that comparison's rounds decide it, 11 x (0.29 / 0.28)^2 -> 12.
        part = F.compare(F.estimate("ring/star, asm at 100000 fibers", 0.72, 0.67, 1.01, 11,
                                    "x", "t"), "<", 1.0)
        share = F.estimate("ring faster (share of comparisons)", 1.0, 21 / 22, 1.0, 22, "", "t",
                           [part])
        (e,) = decide(share, threshold=1.0)["open"]
        self.assertEqual((e["needs"], e["rounds"], e["n"]), (V.ROUNDS, 12, 11))
        self.assertIn("(share of comparisons) 1 [0.955, 1] (n=22) straddles 1.0 because 1 of "
                      "its comparisons is open: ring/star, asm at 100000 fibers 0.72 [0.67, "
                      "1.01] (n=11) straddles 1.0: about 12 rounds", e["text"])
        # Without the parts it would read as sitting on its threshold.
        share.pop("open_parts")
        self.assertEqual(decide(share, threshold=1.0)["open"][0]["needs"], V.AT)
        # The part that needs most decides; a part on its own threshold leaves it there.
        near = F.compare(F.estimate("ring/star, setjmp at 16 fibers", 0.999, 0.98, 1.02, 5,
                                    "x", "t"), "<", 1.0)
        share["open_parts"] = [part, near]
        (e,) = decide(share, threshold=1.0)["open"]
        self.assertEqual((e["needs"], e["rounds"]), (V.AT, None))
        self.assertIn("2 of its comparisons are open", e["text"])

    def test_measured_once_needs_repetitions(self):
        r = decide(F.once(FIG, 1.06, "x", "t"))
        (e,) = r["open"]
        self.assertEqual((e["needs"], e["rounds"], e["basis"]), (V.REPETITIONS, None,
                                                                 "one sample"))
        self.assertIn(f"{FIG} 1.06 (n=1, measured once)", claims_table.would_decide(r))
        self.assertIn("needs repetitions", claims_table.would_decide(r))

    def test_bound_names_the_limit(self):
        # An upper bound whose value lies above the threshold: only the limit can decide.
        share = F.bounded(F.estimate("share of the peak", 0.6, 0.45, 0.7, 5, "x", "sweep"),
                          F.AT_MOST)
        r = decide(share, "<", 0.5)
        self.assertEqual(r["verdict"], V.INCONCLUSIVE)
        (e,) = r["open"]
        self.assertEqual((e["needs"], e["rounds"], e["bound"]), (V.LIMIT, None, F.AT_MOST))
        text = claims_table.would_decide(r)
        self.assertIn("0.6 [0.45, 0.7] (n=5; at most this) straddles 0.5", text)
        self.assertIn("the load generator (echo-load) saturated its core", text)
        self.assertIn("no number of rounds lifts that limit", text)
        self.assertNotIn("rounds would decide", text)
        self.assertIn("limit: client-bound", claims_table.would_decide_short(r))
        # Below the threshold an upper bound can be confirmed: rounds, and the bound named.
        r = decide(F.bounded(F.estimate("share", 0.45, 0.40, 0.55, 5, "x", "s"), F.AT_MOST),
                   "<", 0.5)
        (e,) = r["open"]
        self.assertEqual((e["needs"], e["rounds"]), (V.ROUNDS, 20))
        self.assertIn("a bound, read where the load generator (echo-load) saturated its core",
                      claims_table.would_decide(r))

    def test_noise_floor_needs_both_intervals_clear(self):
        # The ratio clears 1.05 (0.025 of 0.03: 5 rounds); its A/A floor 1.0 [0.95, 1.06]
        # does not: 5 x (0.06 / 0.05)^2 = 7.2 -> 8 rounds.
        ratio = F.estimate("cpu ratio", 1.08, 1.055, 1.1, 5, "x", "t")
        aa = F.estimate("A/A", 1.0, 0.95, 1.06, 5, "x", "t")
        count = F.exact("calls", 2.0, "", "t")

        def judge(m, t):
            holds = t(ratio, "<=", 1.05) and t(count, "<=", 2.1)
            return V.HOLDS if holds else V.PARTLY if t(ratio, "<=", 1.25) else V.NOT
        r = V.decide("rule", {"lines": [], "figures": [ratio, count],
                              "noise_floor": [V.noise_entry(ratio, aa)]}, judge)
        self.assertEqual(r["verdict"], V.INCONCLUSIVE)
        (e,) = r["open"]
        self.assertEqual((e["needs"], e["rounds"], e["noise_floor"], e["threshold"]),
                         (V.ROUNDS, 8, "A/A", 1.05))
        self.assertIn("cpu ratio 1.08 [1.05, 1.1] (n=5) and its A/A noise floor 1 [0.95, "
                      "1.06] (n=5) reach across 1.05: about 8 rounds", claims_table.would_decide(r))

    def test_decided_verdicts_say_nothing_more(self):
        r = decide(F.estimate(FIG, 1.10, 1.06, 1.20, 5, "x", "t"))
        self.assertEqual((r["verdict"], r["open"]), (V.HOLDS, []))
        self.assertEqual((claims_table.would_decide(r), claims_table.would_decide_short(r)), ("", ""))


class NotRun(synth.SyntheticRuns):
    def c11(self, **docs):
        run = D.Run(self.new_folder(**docs))
        return claims_table.annotate(run, {"C11": claims.by_id("C11").verdict(run)})["C11"]

    def test_step_status_as_recorded(self):
        why = "not run: over budget (predicted 412 s)"
        r = self.c11(threads={"experiment": "threads", "status": "not run",
                              "reason": "over budget (predicted 412 s)"},
                     suite=dict(synth.suite(), steps={"threads": {"status": why}}))
        self.assertEqual(r["verdict"], V.NOTRUN)
        self.assertEqual(r["not_run"]["steps"], [{"step": "threads", "status": why}])
        self.assertEqual(claims_table.would_decide(r), "not run: step `threads` not run: over budget "
                         "(predicted 412 s); what would lift it: a larger time budget for "
                         "the step (the full preset's) would run it")

    def test_quick_preset(self):
        quick = "not run in the quick preset (about 1 min); the full preset runs it"
        r = self.c11(threads={"experiment": "threads", "status": "not run", "reason": quick},
                     suite=dict(synth.suite(), steps={"threads": {"status": "not run: " + quick}}))
        self.assertEqual(claims_table.would_decide(r), f"not run: step `threads` {quick}")

    def test_missing_and_failed_step(self):
        r = self.c11(threads=None)
        self.assertEqual(claims_table.would_decide(r), "not run: step `threads`: threads.json not in the "
                         "run folder; what would lift it: a run that includes the step would "
                         "(`./run.sh full` runs every step)")
        r = self.c11(threads={"experiment": "threads", "status": "failed",
                              "reason": "threads_scale.py exited 1"})
        self.assertIn("threads failed: threads_scale.py exited 1; what would lift it: a run "
                      "in which the step succeeds", claims_table.would_decide(r))

    def test_a_limit_the_claim_names(self):
        # Every step ran; server and load filled both cores: the claim's own words say why.
        r = self.c11(threads=synth.threads(ratio=1.5, load_cores=1.0, server_cores=1.0,
                                       rounds=5))
        self.assertEqual((r["verdict"], r["not_run"]["steps"]), (V.NOTRUN, []))
        self.assertIn("not run: not measurable here: server and load filled every core",
                      claims_table.would_decide(r))
        self.assertIn("What would measure it: a machine with at least four cores",
                      claims_table.would_decide(r))


class InTheReport(unittest.TestCase):
    NEW = {"open", "not_run", "would_decide"}
    OPEN = {"figure", "value", "low", "high", "n", "op", "threshold", "basis", "bound",
            "noise_floor", "needs", "rounds", "half_width", "distance", "text"}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="undecided-")
        cls.dir = synth.full(Path(cls.tmp.name) / "run",
                         engines=synth.engines(ratio=1.17, rounds=5, jitter=0.05), threads=None)
        assert report_cli.main([str(cls.dir), "--no-charts", "--no-reference"]) == 0
        cls.doc = {c["id"]: c for c in
                   json.loads((cls.dir / "verdicts.json").read_text())["claims"]}
        cls.text = (cls.dir / "REPORT.md").read_text()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_verdicts_json_fields(self):
        c2, c11 = self.doc["C2"], self.doc["C11"]
        self.assertEqual((c2["verdict"], c11["verdict"]), (V.INCONCLUSIVE, V.NOTRUN))
        for c in self.doc.values():
            self.assertLessEqual(self.NEW, set(c), c["id"])
            if c["verdict"] not in (V.INCONCLUSIVE, V.NOTRUN):
                self.assertEqual((c["open"], c["not_run"], c["would_decide"]), ([], None, None))
        (e,) = c2["open"]
        self.assertEqual(set(e), self.OPEN)
        self.assertEqual((e["needs"], e["threshold"], e["n"]), (V.ROUNDS, 1.15, 5))
        self.assertGreater(e["rounds"], 5)
        self.assertIn(f"about {e['rounds']} rounds", c2["would_decide"])
        self.assertEqual(c11["not_run"]["steps"][0]["step"], "threads")
        self.assertIn("threads.json not in the run folder", c11["would_decide"])

    def test_report_table_note_and_section(self):
        # The summary's row: the verdict, then why, then what would decide it here.
        row = re.search(r"^\| \[C2\]\(#c2\) \| (.*) \|$", self.text, re.M).group(1)
        self.assertRegex(row, r"\(n=5\) \| inconclusive \| Its interval straddles >= 1\.15\. \| "
                              r"throughput merged/naive .*: about \d+ rounds would decide it "
                              r"\(now 5\)$")
        row = re.search(r"^\| \[C11\]\(#c11\) \| (.*) \|$", self.text, re.M).group(1)
        self.assertRegex(row, r"\| not run \| step `threads`: threads\.json not in the "
                              r"run folder\. \| a run that includes the step would")
        section = self.text.split("## C2\n", 1)[1].split("\n## ", 1)[0]
        self.assertIn("- what would decide it: throughput merged/naive", section)
        self.assertIn(self.doc["C2"]["would_decide"], section)

    def test_page_has_the_note(self):
        page = (self.dir / "REPORT.html").read_text()
        self.assertIn("what would decide it: throughput merged/naive", page)

    def test_fields_documented(self):
        page = (ROOT / "results" / "README.md").read_text()
        section = page.split("## verdicts.json", 1)[1].split("\n## ", 1)[0]
        keys = self.NEW | self.OPEN | {"reason", "lift", "steps", "step", "status"}
        keys |= {V.ROUNDS, V.AT, V.REPETITIONS, V.LIMIT}
        self.assertEqual(sorted(k for k in keys if f"`{k}`" not in section), [])

    def test_reference_renders(self):
        """The committed reference run renders with the new lines (never written to)."""
        ref = D.Run(ROOT / "results" / "reference")
        if not ref.data:
            self.skipTest("no committed reference")
        report = document.build(ref)
        for cid, r in report.results.items():
            if r["verdict"] in (V.INCONCLUSIVE, V.NOTRUN):
                self.assertTrue(claims_table.would_decide(r), cid)


if __name__ == "__main__":
    unittest.main()
