#!/usr/bin/python3
"""The section "Independent instruments beside ours" renders from a synthetic instruments.json:
each instrument beside our figure with both intervals, "disagree" (and why) when the intervals
are apart and never when they overlap, "not run: <reason>" for an instrument that could not
run, and REPORT.md carries it; instruments.json's fields are on results/README.md."""
import json
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import data as D  # noqa: E402
import document  # noqa: E402
import report  # noqa: E402
import synth  # noqa: E402
import test_results  # noqa: E402
from sections import instruments as instruments_section  # noqa: E402

SWITCH_NS = {"asm": 5.0, "fcontext": 6.0, "setjmp": 17.0, "ucontext": 280.0}
SYSCALL_NS = 200.0
PINGPONG_NS = 2500.0  # synth.switch's kernel/thread_pingpong/same_cpu


def around(v, rel=0.01, n=5):
    """n samples spread +-rel around v, v their median."""
    return [v * (1 + rel * (2 * i / (n - 1) - 1)) for i in range(n)]


def entry(samples, unit, raw_unit=None):
    e = {"status": "ok", "command": "synthetic", "measures": "synthetic", "unit": unit,
         "samples": samples, "median": sorted(samples)[len(samples) // 2],
         "ci95": [min(samples), max(samples)], "n": len(samples)}
    if raw_unit:
        e.update(raw_unit=raw_unit, raw_samples=[s / 500 for s in samples])
    return e


def instruments(pipe_ns=PINGPONG_NS, syscall_ns=SYSCALL_NS, switch_factor=1.0, perf=True):
    """An instruments.json whose instruments read pipe_ns, syscall_ns and our switch rows
    times switch_factor; perf=False: perf's two not run, as without perf."""
    insts = {f"minimal_loop/{b}": entry(around(ns * switch_factor), "ns per switch")
             for b, ns in SWITCH_NS.items()}
    if perf:
        insts["perf_sched_pipe"] = entry(around(pipe_ns), "ns per one-way hand-off",
                                         "usecs per round trip")
        insts["perf_syscall_basic"] = entry(around(syscall_ns), "ns per getppid",
                                            "usecs per getppid")
    else:
        for n in ("perf_sched_pipe", "perf_syscall_basic"):
            insts[n] = {"status": "not run", "samples": [],
                        "reason": "perf not installed ('perf' not found on PATH)"}
    runs = [{"round": i, "instrument": n, "value": v, "raw": None, "loadavg": [0.1, 0.1, 0.1]}
            for n, e in insts.items() for i, v in enumerate(e["samples"])]
    return {"experiment": "instruments", "meta": synth.META,
            "config": {"rounds": 5, "cpu": "0", "perf": "/usr/bin/perf" if perf else None},
            "instruments": insts, "runs": runs}


def handoff(m2_ns, wall_ns=None):
    """handoff.json with five rounds of m=2 threads at m2_ns CPU (and wall_ns wall) each."""
    doc = synth.handoff(thread_ns=lambda m: m2_ns if m == 2 else 700 + 150 * m)
    doc["runs"] = [dict(r, round=i, cpu_ns_per_handoff=v,
                        wall_ns_per_handoff=wall_ns if wall_ns else v)
                   for r in doc["runs"] if r["kind"] == "thread" and r["contexts"] == 2
                   for i, v in enumerate(around(m2_ns))]
    return doc


class Section(synth.SyntheticRuns):
    def run_of(self, **docs):
        base = {"switch": synth.repeated(synth.switch(switch_ns=SWITCH_NS, syscall=SYSCALL_NS),
                                     rel=0.01, n=5),
                "handoff": handoff(PINGPONG_NS)}
        base.update(docs)
        return self.new_folder(**base)

    def section(self, **docs):
        return "\n".join(instruments_section.instruments_section(D.Run(self.run_of(**docs))))

    def disagreements(self, text):
        """The table's rows that read "disagree" and the notes that explain one (the intro
        uses the word too, so the test reads only these)."""
        return [line for line in text.splitlines()
                if "| disagree" in line or line.startswith("- **")]

    def rows(self, text):
        return {line.split("|")[1].strip().strip("`") + " / " + line.split("|")[3].strip(): line
                for line in text.splitlines() if line.startswith("| `")}

    def test_overlapping_intervals_agree(self):
        text = self.section(instruments=instruments())
        self.assertEqual(self.disagreements(text), [])
        self.assertIn("No instrument disagrees", text)
        rows = self.rows(text)
        self.assertEqual(len(rows), 3 + len(SWITCH_NS))
        ucontext = rows["minimal_loop/ucontext / switch-bench `switch/ucontext`"]
        # Both intervals are shown: the instrument's and ours (over switch.json's repetitions).
        self.assertEqual(ucontext.count("(n=5)"), 2, ucontext)
        self.assertIn("agree: intervals overlap", ucontext)

    def test_apart_intervals_disagree_and_say_why(self):
        text = self.section(instruments=instruments(pipe_ns=2 * PINGPONG_NS,
                                                    switch_factor=1.3))
        rows = self.rows(text)
        self.assertIn("| disagree: intervals apart", rows["perf_sched_pipe / switch-bench "
                                                         "`kernel/thread_pingpong/same_cpu`"])
        self.assertIn("| disagree", rows["minimal_loop/asm / switch-bench `switch/asm`"])
        self.assertIn("| agree", rows["perf_syscall_basic / switch-bench `syscall/getppid` (C9)"])
        # Both pipe rows, every backend: one note each.
        self.assertEqual(len([x for x in self.disagreements(text) if x.startswith("- **")]),
                         2 + len(SWITCH_NS))
        self.assertIn("Where they disagree, and why:", text)
        self.assertIn("FUTEX_WAKE", text)          # the pipe against the futex hand-off
        self.assertIn("one timing method", text)   # the minimal loop against switch-bench
        self.assertNotIn("Both time getppid", text)

    def test_a_gap_of_clocks_is_named(self):
        # Ours on the CPU clock 20% below perf, ours on the wall clock equal to perf's.
        text = self.section(instruments=instruments(pipe_ns=PINGPONG_NS),
                            handoff=handoff(0.8 * PINGPONG_NS, wall_ns=PINGPONG_NS))
        self.assertIn("| disagree", self.rows(text)[
            "perf_sched_pipe / C15 hand-off, m=2 threads (handoff.json, CPU time)"])
        self.assertIn("the two clocks can account for the gap", text)

    def test_one_sample_of_ours_is_taken_as_five_percent(self):
        text = self.section(instruments=instruments(), handoff=synth.handoff(
            thread_ns=lambda m: PINGPONG_NS * 1.03))
        row = self.rows(text)["perf_sched_pipe / C15 hand-off, m=2 threads (handoff.json, "
                              "CPU time)"]
        self.assertIn("| agree: intervals overlap", row)
        self.assertIn("measured once", row)

    def test_not_run_says_why(self):
        text = self.section(instruments=instruments(perf=False))
        self.assertIn("not run: perf not installed", text)
        self.assertEqual(self.disagreements(text), [])
        self.assertIn("not run: instruments.json not in the run folder",
                      self.section(instruments=None))

    def test_ours_missing_is_said(self):
        text = self.section(instruments=instruments(), handoff=None)
        self.assertIn("not run: handoff.json not in the run folder", text)

    def test_report_carries_the_section(self):
        folder = self.run_of(instruments=instruments(switch_factor=1.3))
        self.assertEqual(report.main([str(folder), "--no-charts", "--no-reference"]), 0)
        text = (folder / "REPORT.md").read_text()
        self.assertIn("## Independent instruments beside ours", text)
        # REPORT.md gives the section's first paragraph; its table is REPORT.html's.
        text = document.full_markdown(document.build(D.Run(folder), None))
        section = text.split("## Independent instruments")[1].split("\n## ")[0]
        self.assertTrue(self.disagreements(section))

    def test_fields_are_documented(self):
        page = test_results.PAGE.read_text()
        for doc in (instruments(), instruments(perf=False)):
            self.assertEqual(test_results.undocumented(page, "instruments.json",
                                             json.loads(json.dumps(doc))), [])


if __name__ == "__main__":
    unittest.main()
