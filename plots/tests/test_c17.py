#!/usr/bin/python3
"""Claim C17 (timer structures) on synthetic timers.json documents: each verdict its rule
allows, an interval straddling a threshold, a threshold moved, the isolated per-operation
rows when switch-bench has them, and its charts and section with and without data."""
import math
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import charts  # noqa: E402
import claims  # noqa: E402
import data as D  # noqa: E402
import synth  # noqa: E402
import verdict as V  # noqa: E402
from sections import timers as section  # noqa: E402

C17 = claims.by_id("C17")
def switch_with_timer_rows(tree_growth, wheel_growth=1.1):
    """switch-bench rows of the mostly-cancelled workload: the wheel's arm growing
    `wheel_growth` times and its cancel flat, the tree's arm growing `tree_growth` times; the
    tree's cancel and expire flat, which the rule does not read (they search nothing)."""
    doc = synth.switch()
    for s, op, growth in (("wheel", "arm", wheel_growth), ("wheel", "cancel", 1.0),
                          ("rbtree", "arm", tree_growth), ("rbtree", "cancel", 1.0),
                          ("rbtree", "expire", 1.0)):
        for n, ns in ((100, 20.0), (1000000, 20.0 * growth)):
            name = f"timers/cancelled/{op}/{s}/pending:{n}/iterations:{256 * n // 200}/manual_time"
            # CPU time: the whole loop's, set-up included; the row's own phase is its real time.
            doc["benchmarks"].append({"name": name + "_median", "run_name": name,
                                      "run_type": "aggregate", "aggregate_name": "median",
                                      "real_time": ns, "cpu_time": 1000.0, "time_unit": "ns"})
    return doc


class Verdicts(synth.SyntheticRuns):
    def verdict(self, **docs):
        return C17.verdict(D.Run(self.new_folder(**docs)))

    def test_holds(self):
        r = self.verdict(timers=synth.timers())
        self.assertEqual(r["verdict"], V.HOLDS, r["measured"])
        names = [f["name"] for f in r["figures"]]
        self.assertIn("10000 connections: CPU per request with a read timeout, wheel/rbtree",
                      names)
        self.assertIn("sleep lateness p50, cyclictest", names)

    def test_partly_when_the_cost_does_not_show_in_a_server(self):
        self.assertEqual(self.verdict(timers=synth.timers(wheel_over_tree=(1.0,) * 5))["verdict"],
                         V.PARTLY)

    def test_partly_when_only_the_cost_shows(self):
        self.assertEqual(self.verdict(timers=synth.timers(wheel_late=80.0))["verdict"], V.PARTLY)

    def test_does_not_hold_when_the_wheel_is_exact_and_not_cheaper(self):
        r = self.verdict(timers=synth.timers(wheel_late=80.0, wheel_over_tree=(1.0,) * 5))
        self.assertEqual(r["verdict"], V.NOT)

    def test_a_straddling_interval_is_inconclusive(self):
        r = self.verdict(timers=synth.timers(wheel_over_tree=(0.93, 0.99, 0.96, 1.0, 0.95)))
        self.assertEqual(r["verdict"], V.INCONCLUSIVE)
        self.assertTrue(any(t["threshold"] == C17.CHEAPER for t in r["straddled"]))

    def test_not_run_without_data_or_floor(self):
        self.assertEqual(self.verdict(timers=None)["verdict"], V.NOTRUN)
        r = self.verdict(timers=synth.timers(cyclictest=False))
        self.assertEqual(r["verdict"], V.NOTRUN)
        self.assertTrue(any("cyclictest: not run: cyclictest not installed" in ln
                            for ln in r["measured"]), r["measured"])

    def test_threshold_decides(self):
        doc = synth.timers()
        saved = C17.ROUNDED_US
        C17.ROUNDED_US = 2000.0  # the wheel's 1 ms rounding no longer counts as rounded
        try:
            self.assertEqual(self.verdict(timers=doc)["verdict"], V.PARTLY)
        finally:
            C17.ROUNDED_US = saved

    def test_server_cost_below_a_thousand_connections_is_shown_not_judged(self):
        few = synth.timers(conns=100, wheel_over_tree=(1.2,) * 5)
        r = self.verdict(timers=few)
        self.assertEqual(r["verdict"], V.NOTRUN)  # no cost figure the rule reads
        self.assertTrue(any("judged from 1,000 connections up" in ln for ln in r["measured"]))
        # With the counts, those decide; the 100-connection ratio (1.2) does not.
        self.assertEqual(self.verdict(timers=few, icount=icount_with_timer_rows(8.0))["verdict"],
                         V.HOLDS)

    def test_instruction_counts_decide_the_isolated_cost(self):
        self.assertEqual(self.verdict(timers=synth.timers(),
                                      icount=icount_with_timer_rows(8.0))["verdict"], V.HOLDS)
        r = self.verdict(timers=synth.timers(), icount=icount_with_timer_rows(0.5))
        self.assertEqual(r["verdict"], V.PARTLY)
        fig = next(f for f in r["figures"] if f["name"].startswith("arm, rbtree"))
        self.assertTrue(fig["exact"])
        self.assertAlmostEqual(fig["value"], 0.5)
        names = [f["name"] for f in r["figures"]]
        self.assertIn("cancel, wheel: instructions added per doubling of the pending timers "
                      "(100 to 1,000,000)", names)
        self.assertFalse(any(n.startswith("cancel, rbtree") for n in names))

    def test_times_per_operation_are_shown_not_judged(self):
        # switch-bench's ns say the tree's arm grows 5x and the wheel's 3x (cache misses):
        # listed, while the counts decide.
        r = self.verdict(timers=synth.timers(), switch=switch_with_timer_rows(5.0, 3.0),
                         icount=icount_with_timer_rows(8.0))
        self.assertEqual(r["verdict"], V.HOLDS)
        self.assertTrue(any("arm, wheel: ns at 1,000,000 pending over 100" in ln
                            for ln in r["measured"]), r["measured"])


def icount_with_timer_rows(tree_per_doubling):
    """icount.json's timers/ rows: the wheel's arm and cancel flat, the tree's arm adding
    `tree_per_doubling` instructions per doubling from 100 to 10^6 pending."""
    icount = synth.icount()
    doublings = math.log2(1000000 / 100)
    for s, op, per in (("wheel", "arm", 0.1), ("wheel", "cancel", -0.5),
                       ("rbtree", "arm", tree_per_doubling), ("rbtree", "cancel", 0.0)):
        for n, ins in ((100, 120.0), (1000000, 120.0 + per * doublings)):
            icount["benchmarks"].append({"name": f"icount/timers/cancelled/{op}/{s}/pending:{n}",
                                         "instructions_per_unit": ins})
    return icount


class Drawn(synth.SyntheticRuns):
    STEMS = ["timers_cpu", "timers_lateness", "timers_idle"]

    def test_charts_and_section(self):
        folder = self.new_folder(timers=synth.timers())
        status = charts.draw_all(folder, only=self.STEMS)
        self.assertEqual(status, {s: "ok" for s in self.STEMS})
        lines = section.timers_section(D.Run(folder))
        self.assertIn("| cyclictest | 100 [90, 110] (n=3) | 100 [90, 110] (n=3) | "
                      "100 [90, 110] (n=3) |", lines)
        self.assertIn("| fiber --poll-tick 1 | 900.0 | 900.0 |", lines)

    def test_not_run_without_data(self):
        folder = self.new_folder(timers=None)
        status = charts.draw_all(folder, only=self.STEMS)
        self.assertEqual(status, {s: "not run" for s in self.STEMS})
        self.assertTrue(section.timers_section(D.Run(folder))[2].startswith("not run"))


if __name__ == "__main__":
    unittest.main()
