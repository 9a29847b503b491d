#!/usr/bin/python3
"""results/README.md documents every JSON file the suite writes and every field the reference
run's files carry; the CSV export writes one row per measurement for any JSON file."""
import csv
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
import data as D  # noqa: E402
import export  # noqa: E402
import report  # noqa: E402
import suite  # noqa: E402
import synth  # noqa: E402

PAGE = ROOT / "results" / "README.md"
REFERENCE = ROOT / "results" / "reference"


def sections(text):
    """{heading: section text} for the page's `## ` sections."""
    parts = re.split(r"^## ", text, flags=re.M)
    return {p.split("\n", 1)[0].strip(): p for p in parts[1:]}


def undocumented(page, name, doc):
    """The fields of results file `name` that neither its own section nor a shared block
    section ("The meta block", "The load and server blocks") of the page names."""
    secs = sections(page)
    text = secs.get(name, "") + "".join(t for h, t in secs.items() if h.startswith("The "))
    return sorted(f for f in documented_fields(doc) if f"`{f}`" not in text)


def documented_fields(doc):
    """The top-level keys of a results file, and the keys of its records (entries of lists
    of objects and of objects of objects): what the page must name."""
    keys = set()
    for k, v in doc.items():
        if k == "meta":
            continue
        keys.add(k)
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            keys |= {f for x in v for f in x}
        elif isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            keys |= {f for x in v.values() for f in x}
    return keys


class Documented(unittest.TestCase):
    def setUp(self):
        self.page = PAGE.read_text()
        self.sections = sections(self.page)

    def suite_files(self):
        """Every JSON file the suite writes: one per step but the report, plus suite.json,
        plus whatever the report reads and the reference run holds."""
        names = {f"{s}.json" for s in suite.STEPS if s != "report"} | {"suite.json"}
        names |= {f"{n}.json" for n in D.EXPERIMENTS}
        names |= {p.name for p in REFERENCE.glob("*.json")}
        return names

    def test_every_file_has_a_section(self):
        missing = sorted(self.suite_files() - set(self.sections))
        self.assertEqual(missing, [], f"not documented in {PAGE}: {missing}")

    def test_every_reference_field_is_named(self):
        for path in sorted(REFERENCE.glob("*.json")):
            self.assertEqual(undocumented(self.page, path.name, json.loads(path.read_text())),
                             [], f"{path.name}: fields not on {PAGE}")

    def test_every_synthetic_field_is_named(self):
        # The synthetic files stand in for fields a fresh run has and the reference may not.
        with tempfile.TemporaryDirectory(prefix="results-doc-") as tmp:
            for path in sorted(synth.full(tmp).glob("*.json")):
                self.assertEqual(undocumented(self.page, path.name,
                                              json.loads(path.read_text())),
                                 [], f"{path.name}: fields not on {PAGE}")

    def test_verdicts_json_is_named(self):
        """verdicts.json, written by the report: its fields and those of its nested records
        (figures, comparisons, margin) are on the page."""
        # threads.json with A/A pairs: C11's entry gets a `noise_floor`.
        with tempfile.TemporaryDirectory(prefix="results-doc-") as tmp:
            folder = synth.full(Path(tmp) / "run", engines=synth.engines(ratio=1.15, rounds=5,
                                                                  jitter=0.03),
                            threads=synth.threads(ratio=1.5, rounds=5,
                                              aa=[0.99, 1.0, 1.01, 1.0, 0.995]))
            self.assertEqual(report.main([str(folder), "--no-charts", "--no-reference"]), 0)
            doc = json.loads((folder / "verdicts.json").read_text())
        self.assertIn("verdicts.json", self.sections)
        self.assertEqual(undocumented(self.page, "verdicts.json", doc), [])
        floors = [e for c in doc["claims"] for e in c.get("noise_floor", [])]
        self.assertTrue(floors)
        nested = {k for c in doc["claims"] for part in ("figures", "comparisons", "straddled",
                                                        "noise_floor")
                  for x in c.get(part, []) for k in x}
        nested |= {"noise_floor"} if floors else set()
        nested |= {k for e in floors for k in e["aa"]}
        nested |= {k for c in doc["claims"] if c["margin"] for k in c["margin"]}
        text = self.sections["verdicts.json"]
        self.assertEqual(sorted(k for k in nested if f"`{k}`" not in text), [])
        self.assertTrue(any(c["straddled"] for c in doc["claims"]))

    def test_the_check_can_fail(self):
        self.assertNotIn("brand-new.json", self.sections)
        page = self.page.replace("`ratio_t2_over_t1_shared`", "the ratio")
        self.assertEqual(undocumented(page, "threads.json", synth.threads()),
                         ["ratio_t2_over_t1_shared"])
        self.assertEqual(undocumented(self.page, "brand-new.json", {"figure": 1}), ["figure"])


class Export(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="export-test-")
        self.dir = synth.full(Path(self.tmp.name) / "run")

    def tearDown(self):
        self.tmp.cleanup()

    def read(self, name):
        with open(self.dir / name, newline="") as f:
            return list(csv.DictReader(f))

    def test_every_json_gets_a_csv(self):
        status = export.write_all(self.dir)
        self.assertEqual(set(status), {p.name for p in self.dir.glob("*.json")})
        for name in status:
            self.assertTrue((self.dir / name).with_suffix(".csv").exists(), name)

    def test_one_row_per_measurement(self):
        export.write_all(self.dir)
        rows = self.read("sweep.csv")
        points = [r for r in rows if r["table"] == "points"]
        self.assertEqual(len(points), len(synth.sweep()["points"]))
        fiber = [r for r in points if r["model"] == "fiber" and r["mode"] == "churn"
                 and r["conns"] == "100"]
        self.assertEqual(len(fiber), 1)
        self.assertEqual(float(fiber[0]["load.requests_per_sec"]), 100000.0)
        self.assertEqual(float(fiber[0]["load.latency_us.p99"]), 1000.0)
        self.assertNotIn("meta.host", rows[0])
        summary = {r["key"]: r for r in self.read("engines.csv") if r["table"] == "summary"}
        self.assertEqual(float(summary["naive"]["ctl_per_request_engine"]), 2.0)
        top = self.read("threads.csv")[0]
        self.assertEqual((top["table"], float(top["ratio_t2_over_t1_shared"])), ("", 1.0))

    def test_a_new_file_exports_without_code(self):
        (self.dir / "brand-new.json").write_text(json.dumps(
            {"experiment": "brand-new", "meta": {"host": "x"}, "figure": 3.5,
             "items": [{"n": 1, "v": {"a": 2}}, {"n": 2, "tags": ["x", "y"]}]}))
        export.write_all(self.dir)
        rows = self.read("brand-new.csv")
        self.assertEqual([r["table"] for r in rows], ["", "items", "items"])
        self.assertEqual((rows[0]["figure"], rows[1]["v.a"], rows[2]["tags"]),
                         ("3.5", "2", "x;y"))

    def test_unreadable_json_is_reported_not_fatal(self):
        (self.dir / "broken.json").write_text("{nope")
        status = export.write_all(self.dir)
        self.assertTrue(status["broken.json"].startswith("not exported"))
        self.assertTrue((self.dir / "switch.csv").exists())

    def test_report_step_writes_the_csv(self):
        self.assertEqual(report.main([str(self.dir), "--no-charts", "--no-reference"]), 0)
        self.assertTrue((self.dir / "sweep.csv").exists())
        self.assertTrue((self.dir / "REPORT.md").exists())


if __name__ == "__main__":
    unittest.main()
