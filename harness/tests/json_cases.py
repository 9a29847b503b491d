#!/usr/bin/python3
"""Cases for the project's JSON: what it writes is valid RFC 8259 JSON (no NaN or Infinity:
they become null), and what reads a run's JSON takes null where NaN was.

usage: json_cases.py CASE --work DIR
"""
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
ROOT = HARNESS.parent
sys.path.insert(0, str(HARNESS))
import meta  # noqa: E402
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from experiments import _step  # noqa: E402

PY = "/usr/bin/python3"


def strict(text):
    """json.loads that refuses NaN, Infinity and -Infinity, as RFC 8259 does."""
    def refuse(c):
        raise ValueError(f"{c} is not JSON")
    return json.loads(text, parse_constant=refuse)


def case_writer_maps_nan_to_null(a):
    doc = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": (2, math.nan), "e": "NaN"}
    want = {"a": None, "b": [1.5, None, {"c": None}], "d": [2, None], "e": "NaN"}
    check(strict(meta.json_text(doc)) == want, "meta.json_text: NaN and infinities as null")
    path = Path(a.work) / "step.json"
    _step.write_json(path, doc)
    check(strict(path.read_text()) == want, "an experiment's file (switch.json's writer)")
    path = Path(a.work) / "emit.json"
    meta.emit_json(doc, path)
    check(strict(path.read_text()) == want, "a driver's --out-file")


def case_reference_with_null_for_nan(a):
    """The committed reference run holds NaN (Google Benchmark's counters it could not
    compute); written as the project now writes it, null in their place, its report reaches
    the same verdicts."""
    verdicts = {}
    for name, rewrite in (("as-is", False), ("null", True)):
        folder = Path(a.work) / name
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(ROOT / "results" / "reference", folder)
        nan_files = [p for p in folder.glob("*.json") if "NaN" in p.read_text()]
        if rewrite:
            check(nan_files, "the reference holds NaN somewhere (else this case tests nothing)")
            for p in nan_files:
                p.write_text(meta.json_text(json.loads(p.read_text())))
            check(not [p for p in folder.glob("*.json") if "NaN" in p.read_text()],
                  "no NaN left")
        p = subprocess.run([PY, ROOT / "plots" / "report.py", folder, "--no-charts",
                            "--no-reference"], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"report on the reference ({name})", p.stderr[-2000:])
        doc = strict((folder / "verdicts.json").read_text())
        verdicts[name] = {c["id"]: c["verdict"] for c in doc["claims"]}
    check(verdicts["as-is"] == verdicts["null"], "the same verdicts", verdicts)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
