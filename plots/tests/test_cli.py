#!/usr/bin/python3
"""test_cli.py - report.py and compare.py on bad input: one line on stderr and exit 2, never a
traceback; --help answers with the usage and exit 0. Each tool runs as its own process, as a
user runs it."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import synth  # noqa: E402

PY = "/usr/bin/python3"
REPORT, COMPARE = str(HERE.parent / "report.py"), str(HERE.parent / "compare.py")
# A JSON file's content that is not one JSON object, by name.
BAD_FILES = {"null": "null", "list": "[]", "string": '"x"', "empty": "", "broken": "{nope",
             "number": "3"}


def run(*argv):
    p = subprocess.run([PY, *argv], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    return p.returncode, p.stdout, p.stderr


class Cli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.good = synth.full(self.dir / "good")

    def tearDown(self):
        self.tmp.cleanup()

    def assert_one_line(self, rc, out, err, *needles):
        self.assertEqual(rc, 2, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for n in needles:
            self.assertIn(n, err)

    def bad_folder(self, kind):
        d = self.dir / f"bad-{kind}"
        d.mkdir()
        (d / "switch.json").write_text(BAD_FILES[kind])
        return d

    def test_help(self):
        for tool in (REPORT, COMPARE):
            for flag in ("--help", "-h"):
                rc, out, err = run(tool, flag)
                self.assertEqual((rc, err), (0, ""), f"{tool} {flag}")
                self.assertIn("usage" if tool == REPORT else "compare.py A B", out)

    def test_report_bad_files(self):
        for kind in BAD_FILES:
            d = self.bad_folder(kind)
            rc, out, err = run(REPORT, str(d), "--no-charts", "--no-reference")
            self.assert_one_line(rc, out, err, "switch.json")
            self.assertFalse((d / "REPORT.md").exists())

    def test_report_missing_folder(self):
        rc, out, err = run(REPORT, str(self.dir / "nowhere"))
        self.assert_one_line(rc, out, err, "no such run folder")

    def test_report_unwritable_folder(self):
        if os.geteuid() == 0:
            self.skipTest("root writes into a read-only folder")
        self.good.chmod(0o555)
        try:
            rc, out, err = run(REPORT, str(self.good), "--no-charts", "--no-reference")
        finally:
            self.good.chmod(0o755)
        self.assert_one_line(rc, out, err, "cannot write")

    def test_compare_bad_files(self):
        for kind in BAD_FILES:
            d = self.bad_folder(kind)
            out_dir = self.dir / f"out-{kind}"
            for a, b in ((d, self.good), (self.good, d)):
                rc, out, err = run(COMPARE, str(a), str(b), "--no-charts", "--out", str(out_dir))
                self.assert_one_line(rc, out, err, "switch.json")

    def test_report_empty_folder(self):
        # No step's output at all: refused as compare refuses it, not a report of "not run".
        empty = self.dir / "empty"
        empty.mkdir()
        rc, out, err = run(REPORT, str(empty), "--no-charts", "--no-reference")
        self.assert_one_line(rc, out, err, "not a run folder")
        self.assertFalse((empty / "REPORT.md").exists())

    def test_long_path(self):
        long = "a/" * 50000
        for argv in ((REPORT, long, "--no-charts"), (COMPARE, str(self.good), long)):
            rc, out, err = run(*argv)
            self.assert_one_line(rc, out, err, "characters")
            self.assertLess(len(err), 500)

    def test_compare_missing_folder(self):
        rc, out, err = run(COMPARE, str(self.good), str(self.dir / "nowhere"), "--no-charts")
        self.assert_one_line(rc, out, err, "no such run folder")

    def test_compare_bad_out(self):
        existing = self.dir / "a-file"
        existing.write_text("x")
        for out_dir in (existing, Path("/proc/nope"), existing / "below"):
            rc, out, err = run(COMPARE, str(self.good), str(self.good), "--no-charts",
                               "--out", str(out_dir))
            self.assert_one_line(rc, out, err, "--out")
        self.assertEqual(existing.read_text(), "x")

    def test_good_folder_still_works(self):
        rc, out, err = run(REPORT, str(self.good), "--no-charts", "--no-reference")
        self.assertEqual(rc, 0, err)
        rc, out, err = run(COMPARE, str(self.good), str(self.good), "--no-charts",
                           "--out", str(self.dir / "cmp"))
        self.assertEqual(rc, 0, err)
        self.assertTrue((self.dir / "cmp" / "COMPARE.md").exists())


if __name__ == "__main__":
    unittest.main()
