#!/usr/bin/python3
"""plots/compare.py on synthetic run folders: verdict changes, the noise reading of timings,
exact counts, the exit status, bad folders, and a claim added to the report."""
import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))
import compare as C  # noqa: E402
import figures as F  # noqa: E402
import claims  # noqa: E402
import synth as S  # noqa: E402
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
        return S.full(self.dir / f"run{self.n}", **docs)

    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = C.main([str(a) for a in argv])
        return rc, out.getvalue(), err.getvalue()

    def rows(self, a, b, cid):
        ra, rb = claims.evaluate(C.load(a)), claims.evaluate(C.load(b))
        return {name: (ratio, cls, note) for name, _, _, ratio, cls, note in
                C.claim_rows(ra[cid]["figures"], rb[cid]["figures"])}

    def test_same_run_changes_nothing(self):
        a = self.folder(switch=S.repeated(S.switch()))
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
        a = self.folder(engines=S.engines(ratio=1.3))
        b = self.folder(engines=S.engines(ratio=0.9, cpu_ratio=1.0))
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
        a = self.folder(switch=S.repeated(S.switch(), rel=0.05, n=5))
        near = S.repeated(S.switch({"asm": 5.1, "fcontext": 6.0, "setjmp": 17.0,
                                    "ucontext": 280.0}), rel=0.05, n=5)
        far = {"asm": 9.0, "fcontext": 6.0, "setjmp": 17.0, "ucontext": 280.0}
        _, cls, note = self.rows(a, self.folder(switch=near), "C5")["switch/asm"]
        self.assertEqual(cls, F.WITHIN)
        self.assertTrue(note.startswith("within noise (U test p="), note)
        _, cls, note = self.rows(a, self.folder(switch=S.repeated(S.switch(far), rel=0.05, n=5)),
                                 "C5")["switch/asm"]
        self.assertEqual((cls, note), (F.BEYOND, "higher beyond noise (U test p=0.00794, "
                                                 "intervals apart)"))
        # With 3 repetitions a side the U test cannot reach 0.05: apart, but unclear.
        a3 = self.folder(switch=S.repeated(S.switch(), rel=0.05))
        _, cls, note = self.rows(a3, self.folder(switch=S.repeated(S.switch(far), rel=0.05)),
                                 "C5")["switch/asm"]
        self.assertEqual((cls, note), (F.UNCLEAR, "unclear: U test p=0.1 but intervals apart"))
        # Without repetitions a timing has no band, and the comparison says so.
        self.assertEqual(self.rows(self.folder(), self.folder(switch=S.switch(far)),
                                   "C5")["switch/asm"][1:],
                         (F.UNKNOWN, "noise unknown (n=1 in A and B)"))

    def test_exact_counts_compare_for_equality(self):
        a = self.folder()
        b = self.folder(engines=S.engines(naive_ctl=2.2))
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
        b = self.folder(sweep=S.sweep(levels=(1, 10, 100, 1000, 10000)))
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
        added = S.claim(verdict_cx)
        claims.CLAIMS.append(added)
        try:
            a, b = self.folder(), self.folder(threads=S.threads(ratio=1.5))
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

    def changed(self, eng_a, eng_b):
        a, b = self.folder(engines=eng_a), self.folder(engines=eng_b)
        _, verdicts, _ = C.build(C.load(a), C.load(b))
        return verdicts["C2"]

    def test_verdict_change_within_noise(self):
        # A's rounds straddle 1.15 (inconclusive), B's clear it (holds): the same noise.
        self.assertEqual(self.changed(S.engines(ratio=1.16, rounds=5, jitter=0.03),
                                      S.engines(ratio=1.17, rounds=5, jitter=0.015)),
                         (V.INCONCLUSIVE, V.HOLDS, C.CHANGED_WITHIN))

    def test_verdict_change_beyond_noise(self):
        self.assertEqual(self.changed(S.engines(ratio=1.12, rounds=5, jitter=0.02),
                                      S.engines(ratio=1.25, rounds=5, jitter=0.02)),
                         (V.PARTLY, V.HOLDS, C.CHANGED_BEYOND))
        self.assertEqual(self.changed(S.engines(ratio=1.25, rounds=5, jitter=0.02),
                                      S.engines(ratio=1.25, rounds=5, jitter=0.02))[2],
                         C.UNCHANGED)
        rc, out, _ = self.main(self.folder(engines=S.engines(ratio=1.12, rounds=5, jitter=0.02)),
                               self.folder(engines=S.engines(ratio=1.25, rounds=5, jitter=0.02)),
                               "--out", self.dir / "b", "--no-charts",
                               "--fail-on-verdict-change")
        self.assertEqual(rc, 1)
        self.assertIn("C2: holds partly -> holds  CHANGED (verdict changed beyond noise)", out)
        text = (self.dir / "b" / "COMPARE.md").read_text()
        self.assertIn("(verdict changed beyond noise: throughput merged/naive (median of paired "
                      "rounds))", text)

if __name__ == "__main__":
    unittest.main()
