#!/usr/bin/python3
"""plots/compare.py on synthetic run folders: verdict changes, the noise reading of timings,
the run-to-run band (the effect floor, a band learned from a machine's other runs and from the
runs recorded for its CPU model), exact counts, the exit status, bad folders, and a claim added to the report."""
import io
import json
import math
import random
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import bands  # noqa: E402
import compare  # noqa: E402
import compare_diff  # noqa: E402
import figures as F  # noqa: E402
import claims  # noqa: E402
import synth  # noqa: E402
import verdict as V  # noqa: E402


class Compare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="compare-test-")
        self.dir = Path(self.tmp.name)
        self.n = 0

    def tearDown(self):
        self.tmp.cleanup()

    def folder(self, **docs):
        self.n += 1
        return synth.full(self.dir / f"run{self.n}", **docs)

    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = compare.main([str(a) for a in argv])
        return rc, out.getvalue(), err.getvalue()

    def rows(self, a, b, cid, values=None):
        ra, rb = claims.evaluate(compare_diff.load(a)), claims.evaluate(compare_diff.load(b))
        return {name: (ratio, cls, note) for name, _, _, ratio, cls, note, _ in
                compare_diff.claim_rows(ra[cid]["figures"], rb[cid]["figures"], cid, values)}

    def test_same_run_changes_nothing(self):
        a = self.folder(switch=synth.repeated(synth.switch()))
        rc, out, _ = self.main(a, a, "--out", self.dir / "same", "--fail-on-verdict-change",
                               "--no-charts")
        self.assertEqual(rc, 0)
        self.assertIn("0 verdict(s) changed", out)
        text = (self.dir / "same" / "COMPARE.md").read_text()
        for cid in (c.ID for c in claims.CLAIMS):
            self.assertIn(f"## {cid}\n", text)
        self.assertEqual(text.count("### A:"), 1)
        self.assertEqual(text.count("### B:"), 1)
        self.assertNotIn("beyond noise |", text)

    def test_verdict_change_and_exit_status(self):
        a = self.folder(engines=synth.engines(ratio=1.3))
        b = self.folder(engines=synth.engines(ratio=0.9, cpu_ratio=1.0))
        rc, out, _ = self.main(a, b, "--out", self.dir / "c", "--no-charts")
        self.assertEqual(rc, 0)
        self.assertIn("C2: holds -> does not hold  CHANGED (verdict changed, noise unknown)",
                      out)
        rc, _, _ = self.main(a, b, "--out", self.dir / "c", "--no-charts",
                             "--fail-on-verdict-change")
        self.assertEqual(rc, 1)
        text = (self.dir / "c" / "COMPARE.md").read_text()
        self.assertIn("| [C2](#c2) | holds | does not hold | **yes** | verdict changed, noise "
                      "unknown |", text)
        ratio, _, _ = self.rows(a, b, "C2")["throughput merged/naive (median of paired rounds)"]
        self.assertAlmostEqual(ratio, 0.9 / 1.3)

    def test_timings_overlapping_samples_are_within_noise(self):
        a = self.folder(switch=synth.repeated(synth.switch(), rel=0.05, n=5))
        near = synth.repeated(synth.switch({"asm": 5.1, "fcontext": 6.0, "setjmp": 17.0,
                                    "ucontext": 280.0}), rel=0.05, n=5)
        far = {"asm": 9.0, "fcontext": 6.0, "setjmp": 17.0, "ucontext": 280.0}
        _, cls, note = self.rows(a, self.folder(switch=near), "C5")["switch/asm"]
        self.assertEqual(cls, F.WITHIN)
        self.assertTrue(note.startswith("within noise (U test p="), note)
        _, cls, note = self.rows(a, self.folder(switch=synth.repeated(synth.switch(far), rel=0.05, n=5)),
                                 "C5")["switch/asm"]
        self.assertEqual((cls, note), (F.BEYOND, "higher beyond noise (U test p=0.00794, "
                                                 "intervals apart; 80.0% apart, past the "
                                                 "floor 10%)"))
        # With 3 repetitions a side the U test cannot reach 0.05: apart, but unclear.
        a3 = self.folder(switch=synth.repeated(synth.switch(), rel=0.05))
        _, cls, note = self.rows(a3, self.folder(switch=synth.repeated(synth.switch(far), rel=0.05)),
                                 "C5")["switch/asm"]
        self.assertEqual((cls, note), (F.UNCLEAR, "unclear: U test p=0.1 but intervals apart"))
        # Without repetitions a timing has no band, and the comparison says so.
        self.assertEqual(self.rows(self.folder(), self.folder(switch=synth.switch(far)),
                                   "C5")["switch/asm"][1:],
                         (F.UNKNOWN, "noise unknown (n=1 in A and B; 80.0% apart, past the "
                                     "floor 10%)"))
        # ... and one closer than the floor is within run-to-run noise, its n=1 said.
        self.assertEqual(self.rows(self.folder(), self.folder(switch=synth.switch(ASM(5.2))),
                                   "C5")["switch/asm"][1:],
                         (F.RUN_TO_RUN, "within run-to-run noise (4.0% apart, within the floor "
                                        "10%; n=1 in A and B)"))

    def test_exact_counts_compare_for_equality(self):
        a = self.folder()
        b = self.folder(engines=synth.engines(naive_ctl=2.2))
        notes = self.rows(a, b, "C3")
        self.assertEqual(notes["epoll_ctl per request, naive (engine count)"][2],
                         "exact: differs by +0.2")
        self.assertEqual(notes["epoll_ctl per request, merged (engine count)"][2],
                         "exact: same")

    def test_missing_and_malformed_folders_exit_2(self):
        good = self.folder()
        rc, out, err = self.main(good, self.dir / "nowhere")
        self.assertEqual((rc, out), (2, ""))
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("no such run folder", err)
        bad = self.dir / "bad"
        bad.mkdir()
        (bad / "switch.json").write_text("{not json")
        rc, _, err = self.main(bad, good)
        self.assertEqual(rc, 2)
        self.assertIn("not valid JSON", err)
        (bad / "switch.json").write_text("[1, 2]")
        self.assertEqual(self.main(bad, good)[0], 2)
        empty = self.dir / "empty"
        empty.mkdir()
        rc, _, err = self.main(good, empty)
        self.assertEqual(rc, 2)
        self.assertIn("not a run folder", err)
        self.assertEqual(self.main(good)[0], 2)
        self.assertEqual(self.main(good, good, "--bogus")[0], 2)

    def test_every_measurement_paired_and_charts(self):
        a = self.folder()
        b = self.folder(sweep=synth.sweep(levels=(1, 10, 100, 1000, 10000)))
        rc, _, _ = self.main(a, b, "--out", self.dir / "m")
        self.assertEqual(rc, 0)
        rows = (self.dir / "m" / "compare.csv").read_text().splitlines()
        self.assertEqual(rows[0], "file,record,field,A,B,B/A")
        point = [r for r in rows if r.startswith(
            "sweep.json,points[model=fiber mode=pingpong conns=10000]")]
        self.assertTrue(point)
        self.assertTrue(all(",," in r for r in point))  # only in B: A's cell is empty
        same = [r for r in rows if "points[model=fiber mode=pingpong conns=100]" in r
                and ",load.requests_per_sec," in r]
        self.assertEqual(same, ["sweep.json,points[model=fiber mode=pingpong conns=100],"
                                "load.requests_per_sec,100000.0,100000.0,1"])
        for stem in ("compare_switch_cost", "compare_sweep_throughput", "compare_figures"):
            self.assertTrue((self.dir / "m" / f"{stem}.png").stat().st_size > 1000, stem)

    def test_a_claim_added_to_the_report_is_compared(self):
        def verdict_cx(run):
            v = (run.get("threads") or {}).get("ratio_t2_over_t1_shared")
            return V.result(V.HOLDS if v and v > 1.2 else V.NOT, "synthetic", [],
                            numbers={"made-up ratio": (v, 1.0)})
        added = synth.claim(verdict_cx)
        claims.CLAIMS.append(added)
        try:
            a, b = self.folder(), self.folder(threads=synth.threads(ratio=1.5))
            rc, out, _ = self.main(a, b, "--out", self.dir / "x", "--no-charts")
            self.assertIn("CX: does not hold -> holds  CHANGED", out)
            text = (self.dir / "x" / "COMPARE.md").read_text()
            self.assertIn("| made-up ratio | 1 (n=1, no interval) | 1.5 (n=1, no interval) | 1.5 |",
                          text)
        finally:
            claims.CLAIMS.remove(added)

    def test_run_sh_compare(self):
        a = self.folder()
        root = HERE.parent.parent
        r = subprocess.run([str(root / "run.sh"), "compare", str(a), str(self.dir / "none")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = subprocess.run([str(root / "run.sh"), "compare", str(a), str(a), "--no-charts",
                            "--out", str(self.dir / "sh")], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue((self.dir / "sh" / "COMPARE.md").exists())

    def test_differ(self):
        t = F.timing("t", 10, "ns", "switch", samples=[9, 10, 11])
        self.assertEqual(F.differ(t, F.timing("t", 12, "ns", "switch", samples=[10.5, 12, 13]))
                         [1:], (F.WITHIN, "within noise (U test p=0.2, intervals overlap)"))
        self.assertEqual(F.differ(t, None), (None, "one side only", "only in A"))
        self.assertEqual(F.differ(F.exact("e", 2.0, "", "x"), F.exact("e", 2.0001, "", "x"))[1],
                         "exact same")
        # Intervals without samples (a claim's own estimate): the intervals alone decide.
        e = F.estimate("share", 1.0, 0.9, 1.0, 8, "", "switch")
        self.assertEqual(F.differ(e, F.estimate("share", 0.5, 0.4, 0.6, 8, "", "switch"))[1],
                         F.BEYOND)
        # Intervals apart by less than the floor, no samples: within run-to-run noise.
        self.assertEqual(F.differ(e, F.estimate("share", 1.05, 1.01, 1.1, 8, "", "switch"))[1],
                         F.RUN_TO_RUN)
        # How far apart: the same either way round; a sign change or a 0 is past any band.
        self.assertAlmostEqual(F.apart_by(1.0, 1.25), 0.25)
        self.assertAlmostEqual(F.apart_by(1.25, 1.0), 0.25)
        self.assertEqual((F.apart_by(-1.0, 1.0), F.apart_by(0.0, 1.0), F.apart_by(0, 0)),
                         (float("inf"), float("inf"), 0.0))
        self.assertEqual(F.run_band()["share"], F.FLOOR)
        self.assertEqual(F.run_band([1.0, 1.5])["text"], "floor 10% (2 run(s): fewer than 3)")
        self.assertEqual(F.run_band([1.0, 1.01, 0.99])["text"], "learned 15.1% (3 runs)")
        self.assertEqual(F.run_band([1.0] * 20 + [1.02])["text"],
                         "floor 10% (learned 2.0%, 21 runs)")
        self.assertEqual(F.run_band([0.0, 0.0, 0.1])["text"], "floor 10% (3 runs, their median 0)")
        self.assertAlmostEqual(F.run_band([1.0, 1.0, 1.0], [0.1, 0.2, 0.3])["share"],
                               2 ** 0.5 * 0.2)

    def changed(self, eng_a, eng_b):
        a, b = self.folder(engines=eng_a), self.folder(engines=eng_b)
        _, verdicts, _ = compare.build(compare_diff.load(a), compare_diff.load(b))
        return verdicts["C2"]

    def test_verdict_change_within_noise(self):
        # A's rounds straddle 1.15 (inconclusive), B's clear it (holds): the same noise.
        self.assertEqual(self.changed(synth.engines(ratio=1.16, rounds=5, jitter=0.03),
                                      synth.engines(ratio=1.17, rounds=5, jitter=0.015)),
                         (V.INCONCLUSIVE, V.HOLDS, compare_diff.CHANGED_WITHIN))

    def test_a_figure_that_settled_alike_changed_nothing(self):
        """A kernel count measured under load differs in its third decimal, far from its
        threshold: it came out the same against it in both runs, so the verdict's change is
        the other figure's, which stayed within the noise."""
        rows = [("count", {"decides": True}, {"decides": True}, 0.998, "exact differs", "", None),
                ("ratio", {"decides": True}, {"decides": True}, 1.02, F.WITHIN, "", None)]

        def tests(count, ratio):
            return [{"figure": "count", "op": "<=", "threshold": 2.1, "outcome": count},
                    {"figure": "ratio", "op": "<=", "threshold": 1.05, "outcome": ratio}]
        change = compare_diff.claim_change
        self.assertEqual(change(V.HOLDS, V.INCONCLUSIVE, rows, tests("yes", "yes"),
                                tests("yes", F.STRADDLES)), (compare_diff.CHANGED_WITHIN, []))
        # Without the comparisons, the differing count is taken for the cause.
        self.assertEqual(change(V.HOLDS, V.INCONCLUSIVE, rows),
                         (compare_diff.CHANGED_BEYOND, ["count"]))
        # A count that came out otherwise against its threshold did change the verdict.
        self.assertEqual(change(V.HOLDS, V.NOT, rows, tests("yes", "yes"), tests("no", "yes")),
                         (compare_diff.CHANGED_BEYOND, ["count"]))

    def test_verdict_change_beyond_noise(self):
        self.assertEqual(self.changed(synth.engines(ratio=1.12, rounds=5, jitter=0.02),
                                      synth.engines(ratio=1.25, rounds=5, jitter=0.02)),
                         (V.PARTLY, V.HOLDS, compare_diff.CHANGED_BEYOND))
        self.assertEqual(self.changed(synth.engines(ratio=1.25, rounds=5, jitter=0.02),
                                      synth.engines(ratio=1.25, rounds=5, jitter=0.02))[2],
                         compare_diff.UNCHANGED)
        rc, out, _ = self.main(self.folder(engines=synth.engines(ratio=1.12, rounds=5, jitter=0.02)),
                               self.folder(engines=synth.engines(ratio=1.25, rounds=5, jitter=0.02)),
                               "--out", self.dir / "b", "--no-charts",
                               "--fail-on-verdict-change")
        self.assertEqual(rc, 1)
        self.assertIn("C2: holds partly -> holds  CHANGED (verdict changed beyond noise)", out)
        text = (self.dir / "b" / "COMPARE.md").read_text()
        self.assertIn("(verdict changed beyond noise: throughput merged/naive (median of paired "
                      "rounds))", text)


def ASM(ns):
    """switch-bench times with switch/asm at ns (C5 reads it)."""
    return {"asm": ns, "fcontext": 6.0, "setjmp": 17.0, "ucontext": 280.0}


def five(ns, rel=0.005):
    """A switch document with switch/asm at ns, 5 repetitions within +-rel (0.5%: two of them
    a few percent apart never overlap, so the U test gives its least p, 0.0079)."""
    return synth.repeated(synth.switch(ASM(ns)), rel=rel, n=5)


def retag(folder, model=None, preset=None, finished=True):
    """Rewrites a synthetic run folder's CPU model (every meta block) or suite preset, and
    whether its suite.json names the report step (the suite's last: the run is finished)."""
    for path in Path(folder).glob("*.json"):
        doc = json.loads(path.read_text())
        if model:
            doc["meta"] = dict(doc.get("meta") or {}, cpu_model=model)
        if path.name == "suite.json":
            doc["preset"] = preset or doc["preset"]
            doc["steps"] = dict(doc["steps"], report={"status": "ok", "seconds": 1})
            if not finished:
                doc["steps"].pop("report")
        path.write_text(json.dumps(doc))
    return folder


class RunToRun(unittest.TestCase):
    """A difference is beyond noise only past the run-to-run band: the effect floor, or the
    band learned from the machine's other runs (results/runs/<host>/*/) when wider."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="compare-band-")
        self.root = Path(self.tmp.name) / "runs"
        self.n = 0

    def tearDown(self):
        self.tmp.cleanup()

    def test_two_runs_of_one_commit_stay_inside_the_band(self):
        """Two further runs drawn as the recorded ones were land beyond the learned band in
        about 1% of figures (BAND_LEVEL), from 3 recorded runs as from 10, for noise of 10%
        (normal) and 20% (log-normal) of the figure; the floor is left out, so the band alone
        is tested. A band of 3 sigmas of one run (2.1 sigmas of a difference) lets 3-7% past."""
        rng = random.Random(11)
        draws = {"normal 10%": lambda: rng.gauss(1.0, 0.1),
                 "log-normal 20%": lambda: math.exp(rng.gauss(0.0, 0.2))}
        for name, draw in draws.items():
            for runs in (3, 10):
                past = 0
                for _ in range(2000):
                    band = F.band_width([draw() for _ in range(runs)])
                    past += F.apart_by(draw(), draw()) > band
                self.assertLessEqual(past / 2000, 0.02, f"{name}, {runs} runs: {past} of 2000")

    def run_folder(self, ns, model=None, root=None, rel=0.005):
        """A run of switch/asm at ns under the runs root (<host>/<run>/, as the suite writes
        one), or under another root."""
        self.n += 1
        return retag(synth.full((root or self.root) / "synth" / f"2026-12-0{self.n}-run{self.n}",
                            switch=five(ns, rel)), model)

    def history(self, *ns, model=None, rel=0.005):
        return [self.run_folder(v, model, rel=rel) for v in ns]

    def asm(self, a, b, bands_dir=bands.BANDS_DIR):
        """(class, reading, band) of switch/asm, A against B, learning from the runs root (and
        the runs recorded under bands_dir)."""
        ra, rb = compare_diff.load(a), compare_diff.load(b)
        values, _ = compare_diff.learn(ra, rb, self.root, bands_dir)
        res_a, res_b = claims.evaluate(ra), claims.evaluate(rb)
        row = {r[0]: r for r in compare_diff.claim_rows(res_a["C5"]["figures"], res_b["C5"]["figures"],
                                             "C5", values)}["switch/asm"]
        return row[4], row[5], row[6]

    def test_same_commit_two_percent_is_within_the_floor(self):
        a, b = self.run_folder(5.0), self.run_folder(5.1)
        cls, note, band = self.asm(a, b)
        self.assertEqual(cls, F.RUN_TO_RUN)
        self.assertEqual(note, "within run-to-run noise (2.0% apart, within the floor 10%; "
                               "U test p=0.00794, intervals apart)")
        self.assertEqual(band["text"], "floor 10%")
        # The same difference the other way round reads the same.
        self.assertEqual(self.asm(b, a)[0], F.RUN_TO_RUN)

    def test_fifteen_percent_is_beyond_noise(self):
        a, b = self.run_folder(5.0), self.run_folder(5.75)
        cls, note, _ = self.asm(a, b)
        self.assertEqual((cls, note), (F.BEYOND, "higher beyond noise (U test p=0.00794, "
                                                 "intervals apart; 15.0% apart, past the floor "
                                                 "10%)"))
        self.assertEqual(self.asm(b, a)[0], F.BEYOND)

    def test_learned_band_from_four_runs(self):
        # Four runs 4% apart (their logarithms' standard deviation 0.052): the 99% prediction
        # bound of two runs' difference, expm1(5.84 x sqrt(2) x 0.052) = 53.3%.
        self.history(4.7, 4.9, 5.1, 5.3)
        a, elsewhere = self.run_folder(5.0), Path(self.tmp.name) / "elsewhere"
        cls, note, band = self.asm(a, self.run_folder(5.4, root=elsewhere))
        self.assertEqual((band["runs"], band["text"]), (4, "learned 53.3% (4 runs)"))
        self.assertEqual(cls, F.RUN_TO_RUN)
        self.assertIn("8.0% apart, within the learned 53.3% (4 runs)", note)
        # Past the floor, inside the learned band: the band decides.
        cls, note, band = self.asm(a, self.run_folder(5.7, root=elsewhere))
        self.assertEqual(cls, F.RUN_TO_RUN)
        self.assertIn("14.0% apart, within the learned 53.3% (4 runs)", note)
        cls, note, band = self.asm(a, self.run_folder(8.0, root=elsewhere))
        self.assertEqual(cls, F.BEYOND)
        self.assertIn("60.0% apart, past the learned 53.3% (4 runs)", note)

    def test_runs_that_agree_by_chance_keep_their_own_noise(self):
        # Three runs whose medians agree exactly but whose repetitions spread +-15%: each
        # median's interval is +-15% (5 samples: the outer two), so two runs' medians may lie
        # 21% apart (sqrt(2) x 15%), though the medians alone would learn a band of 0.
        self.history(5.0, 5.0, 5.0, rel=0.15)
        elsewhere = Path(self.tmp.name) / "elsewhere"
        a = self.run_folder(5.0, root=elsewhere)
        half = (lambda lo, hi: (hi - lo) / 2 / 5.0)(*F.interval([4.25, 4.625, 5.0, 5.375, 5.75]))
        self.assertAlmostEqual(half, 0.15)
        cls, note, band = self.asm(a, self.run_folder(5.75, root=elsewhere))
        self.assertAlmostEqual(band["learned"], 2 ** 0.5 * half)
        self.assertEqual((cls, band["text"]), (F.RUN_TO_RUN, f"learned {band['learned']:.1%} "
                                                             "(3 runs)"))
        self.assertEqual(self.asm(a, self.run_folder(6.5, root=elsewhere))[0], F.BEYOND)

    def test_another_cpu_model_does_not_count(self):
        self.history(4.95, 5.0, 5.0, 5.05)
        self.history(9.0, 2.0, 15.0, model="Another CPU")
        a, b = self.run_folder(5.0), self.run_folder(6.5)
        values, source = compare_diff.learn(compare_diff.load(a), compare_diff.load(b), self.root)
        self.assertEqual(sorted(v for v, _ in values[("C5", "switch/asm")]),
                         [4.95, 5.0, 5.0, 5.05])
        self.assertIn("4 other run(s) of Synthetic CPU, the quick preset", source)
        cls, _, band = self.asm(a, b)
        self.assertEqual((cls, band["text"]), (F.BEYOND, "floor 10% (learned 7.0%, 4 runs)"))
        # Runs of another preset do not count either, when A and B share one, nor a run still
        # going (its suite.json does not name the report step yet).
        retag(self.history(2.0)[0], preset="full")
        retag(self.history(2.0)[0], finished=False)
        self.assertEqual(len(compare_diff.learn(compare_diff.load(a), compare_diff.load(b), self.root)[0][("C5", "switch/asm")]),
                         4)
        # A and B on different CPU models: no band is learned, the floor alone applies.
        values, source = compare_diff.learn(compare_diff.load(a), compare_diff.load(retag(b, "Another CPU")), self.root)
        self.assertEqual(values, {})
        self.assertIn("different CPU models", source)

    def test_a_and_b_are_left_out_of_their_band(self):
        # With A and B, four runs would learn a band of 31% and hide B's 20% rise in it.
        self.history(5.0, 5.75)
        a, b = self.run_folder(5.0), self.run_folder(6.0)
        values, source = compare_diff.learn(compare_diff.load(a), compare_diff.load(b), self.root)
        self.assertEqual(sorted(v for v, _ in values[("C5", "switch/asm")]), [5.0, 5.75])
        self.assertIn("2 other run(s)", source)
        cls, _, band = self.asm(a, b)
        self.assertEqual((cls, band["text"]), (F.BEYOND, "floor 10% (2 run(s): fewer than 3)"))
        self.assertGreater(F.run_band([5.0, 5.75, 5.0, 6.0])["share"], 0.2)

    def record(self, *ns, runs_root=None):
        """Runs of switch/asm at ns under another root (another machine of the same model),
        recorded by bands.py into a band folder: that folder."""
        other = Path(self.tmp.name) / (runs_root or "other-machine")
        for v in ns:
            self.run_folder(v, root=other)
        out = Path(self.tmp.name) / "bands"
        with redirect_stdout(io.StringIO()):
            self.assertEqual(bands.main(["--runs-root", str(other), "--out", str(out)]), 0)
        return out

    def test_recorded_runs_give_a_fresh_clone_its_band(self):
        # No run of its own under the runs root: the four recorded runs learn 53.3%, so a
        # 14% move that the floor alone calls beyond noise is within the machine's band.
        recorded = self.record(4.7, 4.9, 5.1, 5.3)
        self.assertTrue((recorded / "synthetic-cpu-quick.json").exists())
        elsewhere = Path(self.tmp.name) / "fresh-clone"
        a, b = self.run_folder(5.0, root=elsewhere), self.run_folder(5.7, root=elsewhere)
        self.assertEqual(self.asm(a, b)[0], F.BEYOND)
        cls, note, band = self.asm(a, b, recorded)
        self.assertEqual((cls, band["text"]), (F.RUN_TO_RUN, "learned 53.3% (4 runs)"))
        values, source = compare_diff.learn(compare_diff.load(a), compare_diff.load(b),
                                            self.root, recorded)
        self.assertIn("(0 found, 4 recorded;", source)
        self.assertEqual(self.asm(a, self.run_folder(8.0, root=elsewhere), recorded)[0],
                         F.BEYOND)

    def test_a_run_found_and_recorded_counts_once_and_a_and_b_stay_out(self):
        recorded = self.record(4.7, 4.9, 5.1, 5.3, runs_root="runs")  # the runs root itself
        a, b = self.run_folder(5.0), self.run_folder(5.4)
        values, source = compare_diff.learn(compare_diff.load(a), compare_diff.load(b),
                                            self.root, recorded)
        self.assertEqual(sorted(v for v, _ in values[("C5", "switch/asm")]), [4.7, 4.9, 5.1, 5.3])
        self.assertIn("(4 found, 0 recorded;", source)
        # Recorded with A and B among them (recorded after they ran): A and B are left out.
        recorded = self.record(runs_root="runs")
        values, _ = compare_diff.learn(compare_diff.load(a), compare_diff.load(b),
                                       Path(self.tmp.name) / "empty", recorded)
        self.assertEqual(sorted(v for v, _ in values[("C5", "switch/asm")]), [4.7, 4.9, 5.1, 5.3])

    def test_recording_merges_and_refuses_what_it_cannot_learn_from(self):
        recorded = self.record(4.7, 4.9, 5.1)
        self.record(5.3, 5.5, 5.6, runs_root="third-machine")
        doc = json.loads((recorded / "synthetic-cpu-quick.json").read_text())
        self.assertEqual(len(doc["runs"]), 6)  # the file's three kept beside the new three
        self.assertEqual((doc["kind"], doc["preset"]), (bands.KIND, "quick"))
        # Two runs are too few: nothing written, exit 1; a missing root is a usage error.
        few = Path(self.tmp.name) / "few"
        self.run_folder(5.0, root=few), self.run_folder(5.0, root=few)
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            self.assertEqual(bands.main(["--runs-root", str(few), "--out", str(few / "b")]), 1)
            self.assertEqual(bands.main(["--runs-root", str(few / "none")]), 2)
            self.assertEqual(bands.main(["--out"]), 2)
        self.assertFalse((few / "b").exists())
        self.assertIn("no CPU model and preset has 3 finished runs", err.getvalue())
        # A malformed band file: compare says so in one line, exit 2.
        (recorded / "synthetic-cpu-quick.json").write_text('{"kind": "' + bands.KIND +
                                                          '", "runs": [{"id": 1}]}')
        a, b = self.run_folder(5.0), self.run_folder(5.4)
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            rc = compare.main([str(a), str(b), "--bands-dir", str(recorded), "--no-charts",
                               "--out", str(Path(self.tmp.name) / "c")])
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.getvalue().strip().splitlines()), 1)
        self.assertIn("synthetic-cpu-quick.json: malformed", err.getvalue())

    def test_compare_md_names_each_band(self):
        self.history(4.7, 4.9, 5.1, 5.3)
        a, b = self.run_folder(5.0), self.run_folder(5.4)
        out = io.StringIO()
        with redirect_stdout(out):
            rc = compare.main([str(a), str(b), "--runs-root", str(self.root), "--no-charts",
                         "--out", str(Path(self.tmp.name) / "c")])
        self.assertEqual(rc, 0)
        text = (Path(self.tmp.name) / "c" / "COMPARE.md").read_text()
        self.assertIn("| reading | run-to-run band |", text)
        self.assertIn("within run-to-run noise (8.0% apart, within the learned 53.3% (4 runs); "
                      "U test p=0.00794, intervals apart) | learned 53.3% (4 runs) |", text)
        self.assertIn("Run-to-run bands learned from: 4 other run(s) of Synthetic CPU, the "
                      "quick preset", text)
        self.assertIn("the effect floor of 10%", text)
        self.assertIn("| exact |", text)
        self.assertIn("0 figure(s) beyond noise", out.getvalue())
        # A runs root that does not exist is a usage error; the default may be missing.
        self.assertEqual(compare.parse([str(a), str(b)])[4], compare.RUNS_ROOT)
        with redirect_stderr(io.StringIO()):
            self.assertEqual(compare.main([str(a), str(b), "--runs-root", str(self.root / "no")]), 2)
            self.assertEqual(compare.main([str(a), str(b), "--runs-root"]), 2)


if __name__ == "__main__":
    unittest.main()
