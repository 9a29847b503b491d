#!/usr/bin/python3
"""Claims and sections read a measured point's status (data.point_status), never a raw
`status == "ok"`; sweep figures carry the 95% interval of a point's repeated runs (`rounds`);
a kernel difference below the resolution never reaches REPORT.md or the memory chart as a
negative figure."""
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import claims  # noqa: E402
import data as D  # noqa: E402
import document  # noqa: E402
import synth  # noqa: E402
import verdict as V  # noqa: E402
from charts import memory  # noqa: E402  (charts selects the Agg backend before pyplot)
import matplotlib.pyplot as plt  # noqa: E402
from sections import ramp, slow  # noqa: E402

C6, C7, C8, C10, C12 = (claims.by_id(c) for c in ("C6", "C7", "C8", "C10", "C12"))
THREAD = {1: 10000, 100: 40000, 1000: 39000, 2000: 15000}


def marked(p, status, why):
    """p as a driver marks it: status and reasons."""
    return dict(p, status=status, reasons=[why], reason=why)


def with_rounds(p, rel=0.02, n=5):
    """p with n repeated runs spread +-rel around its requests/s (what sweep.py --repeat
    writes), the median run's the point's own."""
    r = p["load"]["requests_per_sec"]
    return dict(p, rounds=[{"round": i, "status": "ok",
                            "requests_per_sec": r * (1 + rel * (2 * i / (n - 1) - 1)),
                            "p99_us": p["load"]["latency_us"]["p99"]} for i in range(n)])


class Base(synth.SyntheticRuns):
    def run_with(self, **docs):
        return D.Run(self.new_folder(**docs))


class Statuses(Base):
    def test_c7_client_bound_is_not_a_failure(self):
        # thread at 10,000 at a tenth of its peak and a 2 s p99, but the load generator was
        # the bottleneck: that says nothing about the server failing. fork hit a machine limit.
        slow_thread = synth.point("thread", "pingpong", 10000, 4000, p99_us=2e6)
        fork_limit = {"model": "fork", "mode": "pingpong", "conns": 10000, "status": "limit",
                      "reasons": ["pids: 10000 processes exceed pid_max"]}
        bound = marked(slow_thread, "client-bound", "echo-load used 1.00 of its 1 core(s)")
        peak = (synth.point("thread", "pingpong", 100, 40000), False)
        t = V.Tester({})
        self.assertIsNone(C7.fails_at("thread", bound, peak, t))
        self.assertIsNotNone(C7.fails_at("thread", slow_thread, peak, t))
        self.assertTrue(C7.fails_at("fork", fork_limit, peak, t).startswith("limit: pids"))
        failed = marked(synth.point("thread", "pingpong", 10000, 39000), "failed", "server died")
        self.assertTrue(C7.fails_at("thread", failed, peak, t).startswith("failed: server"))
        # Errors still count on a client-bound point: they are the server's.
        self.assertIsNotNone(C7.fails_at("thread", marked(
            synth.point("thread", "pingpong", 10000, 39000, errors=9), "client-bound", "x"), peak, t))
        r = C7.verdict(self.run_with(sweep=synth.sweep(thread=THREAD, extra=[bound, fork_limit])))
        # fork fails, thread does not (client-bound), thread degrades past 1000: holds partly.
        self.assertEqual(r["verdict"], V.PARTLY)
        self.assertTrue(any("client-bound" in ln for ln in r["measured"]), r["measured"])

    def test_c10_limit_points_make_it_limited(self):
        mc = synth.maxconns()
        for p in mc["points"]:
            if p["status"] == "not run":
                p.update(status="limit", reasons=[p.pop("reason")])
        self.assertEqual(C10.verdict(self.run_with(maxconns=mc))["verdict"], V.PARTLY)
        # A client-bound level held what it held: it still counts as run.
        mc["points"][0].update(status="client-bound", reasons=["echo-load used its core"])
        r = C10.verdict(self.run_with(maxconns=mc))
        self.assertEqual(r["verdict"], V.PARTLY)
        self.assertTrue(any("client-bound" in ln for ln in r["measured"]))
        self.assertTrue(any("limit: listener limit" in ln for ln in r["measured"]))

    def test_c12_reads_fibermem_statuses(self):
        fm = synth.fibermem()
        fm["points"][1].update(status="limit", reasons=["memory maps: vm.max_map_count 65530"])
        r = C12.verdict(self.run_with(fibermem=fm, props=synth.props(copy_stack=True)))
        self.assertIn("100000: limit: memory maps: vm.max_map_count 65530",
                      "\n".join(r["measured"]))
        fm["points"][0].update(status="failed", reasons=["fiber-mem exited 1"])
        r = C12.verdict(self.run_with(fibermem=fm, props=synth.props(copy_stack=True)))
        self.assertNotIn("PSS per idle fiber, guarded, 30000 fibers",
                         [f["name"] for f in r["figures"]])

    def test_ramp_section_keeps_client_bound_points_marked(self):
        pts = [marked(synth.point("thread", "pingpong", 10000, 9000, ramp_s=4.0), "client-bound",
                      "echo-load used its core"),
               marked(synth.point("fork", "pingpong", 10000, 10, ramp_s=9.0), "failed", "died")]
        text = "\n".join(ramp.ramp_section(self.run_with(sweep=synth.sweep(extra=pts))))
        self.assertIn("4.00 (client-bound)", text)
        self.assertNotIn("9.00", text)

    def test_slow_section_reads_memory_and_cpu_on_client_bound_points(self):
        doc = synth.slow()
        doc["points"][0] = marked(doc["points"][0], "client-bound", "echo-load used its core")
        doc["points"][1] = marked(doc["points"][1], "limit", "fds: 1000 exceed RLIMIT_NOFILE")
        text = "\n".join(slow.slow_section(self.run_with(slow=doc)))
        self.assertIn("| thread | 10 | (18, client-bound) | (80.0) | 0 | 5.0 | 10.0 |", text)
        self.assertIn("| thread | 1000 | limit: fds: 1000 exceed RLIMIT_NOFILE |", text)


class Rounds(Base):
    def test_sweep_figures_get_intervals_from_rounds(self):
        sw = synth.sweep(thread=THREAD)
        sw["points"] = [with_rounds(p) for p in sw["points"]]
        for claim in (C6, C7):
            extra = [with_rounds(synth.point("thread", "pingpong", 10000, 5000)),
                     with_rounds(synth.point("fork", "pingpong", 10000, 3000))] \
                if claim is C7 else []
            sw2 = dict(sw, points=sw["points"] + extra)
            figs = claim.verdict(self.run_with(sweep=sw2))["figures"]
            sweep_figs = [f for f in figs if f["source"] == "sweep" and not f["exact"]]
            self.assertTrue(sweep_figs)
            for f in sweep_figs:
                self.assertEqual(f["n"], 5, f["name"])
                self.assertIsNotNone(f["low"], f["name"])
                self.assertLessEqual(f["low"], f["high"], f["name"])
        # An older run without rounds keeps n=1, no interval.
        figs = C6.verdict(self.run_with(sweep=synth.sweep(thread=THREAD)))["figures"]
        self.assertTrue(all(f["n"] == 1 and f["low"] is None for f in figs
                            if f["source"] == "sweep" and not f["exact"]))

    def test_rounds_decide_a_threshold_a_single_sample_straddles(self):
        # fork's peak at 0.49 of thread's: within 5% of the 0.5 threshold, so one sample is
        # inconclusive; five tight rounds put the whole interval below it.
        sw = synth.sweep(thread=THREAD, fork={1: 3000, 10: 3000, 100: 19600, 1000: 3000})
        f = C6.measure(self.run_with(sweep=sw))["modes"]["pingpong"]["fork"]
        self.assertIsNone(f["low"])
        sw["points"] = [with_rounds(p, rel=0.005) for p in sw["points"]]
        f = C6.measure(self.run_with(sweep=sw))["modes"]["pingpong"]["fork"]
        self.assertLess(f["high"], C6.FAR_LOWER)


class Kernel(Base):
    def test_no_negative_kernel_figure_in_the_report(self):
        doc = synth.slow()
        for p in doc["points"]:
            p["kernel"] = {"per_conn_total_kb": -152.4, "per_conn_kb": {"KernelStack": -152.4}}
        sw = synth.sweep(thread_kernel=-188.8)
        run = self.run_with(slow=doc, sweep=sw)
        text = document.full_markdown(document.build(run))  # REPORT.html's tables
        self.assertNotIn("-152", text)
        self.assertNotIn("-188", text)
        slow_part = text[text.index("## Slow clients"):]
        self.assertIn("< 205 (below resolution)", slow_part)  # 2 MiB over 10 connections
        fig = plt.figure()
        ax = fig.add_subplot(111)
        memory.memory_stack(run, ax)
        hatched = [b for b in ax.patches if b.get_hatch()]
        self.assertTrue(hatched)
        heights = [b.get_height() for b in ax.patches]
        self.assertTrue(all(h >= 0 for h in heights), heights)
        plt.close(fig)


if __name__ == "__main__":
    unittest.main()
