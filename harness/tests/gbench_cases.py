#!/usr/bin/python3
"""Cases for lib/gbench.py, which merges two invocations of a Google Benchmark program into
one document: the aggregates it computes are Google Benchmark's own, and a run of 5
repetitions split into 3 and 2 merges back into the same document.

The fixture is the committed reference's switch.json (switch-bench's own output: 5
interleaved repetitions per row, with Google Benchmark's mean, median, stddev and cv).

usage: gbench_cases.py CASE --work DIR
"""
import json
import math
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from lib import gbench  # noqa: E402

FIXTURE = HARNESS.parent / "results" / "reference" / "switch.json"


def fixture():
    doc = json.loads(FIXTURE.read_text())
    rows = {}
    for b in doc["benchmarks"]:
        rows.setdefault(b.get("run_name", b["name"]), []).append(b)
    return doc, rows


def same(a, b):
    """Two numbers equal to rounding; NaN (Google Benchmark's undefined cv) equals None."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a)) + 1e-6 * (a != 0 and
                                                                               abs(a) < 1e-3)


def compare_aggregates(expected, got, what):
    """Every number of every expected aggregate entry, in got's entry of the same name."""
    got = {e["aggregate_name"]: e for e in got}
    n = 0
    for e in expected:
        mine = got.get(e["aggregate_name"])
        check(mine is not None, f"{what}: a {e['aggregate_name']} aggregate")
        for k, v in e.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                check(same(v, mine.get(k)), f"{what} {e['aggregate_name']} {k}",
                      (v, mine.get(k)))
                n += 1
    return n


def case_aggregates(a):
    """gbench.aggregates of each row's repetitions equal Google Benchmark's aggregates."""
    _, rows = fixture()
    n = 0
    for name, entries in rows.items():
        aggs = [e for e in entries if e["run_type"] == "aggregate"]
        if aggs:
            n += compare_aggregates(aggs, gbench.aggregates(
                [e for e in entries if e["run_type"] != "aggregate"]), name)
    print(f"{n} aggregate figures of {len(rows)} rows agree")
    check(n > 1000, "the fixture has aggregates to compare", n)


def case_merge(a):
    """Repetitions 0-2 and 3-4 of every row, as two invocations would write them (the second
    numbering its own from 0), merge into the original document."""
    doc, rows = fixture()
    iters = [b for b in doc["benchmarks"] if b["run_type"] != "aggregate"]
    first = dict(doc, benchmarks=[dict(b, repetitions=3) for b in iters
                                  if b["repetition_index"] < 3])
    second = dict(doc, benchmarks=[dict(b, repetitions=2, repetition_index=b["repetition_index"]
                                        - 3) for b in iters if b["repetition_index"] >= 3])
    merged = gbench.merge(first, second)
    check(merged["context"] == doc["context"], "the first document's context is kept")
    got = {}
    for b in merged["benchmarks"]:
        got.setdefault(b.get("run_name", b["name"]), []).append(b)
    check(set(got) == set(rows), "the same rows", set(rows) ^ set(got))
    for name, entries in rows.items():
        want = sorted((e for e in entries if e["run_type"] != "aggregate"),
                      key=lambda e: e["repetition_index"])
        have = sorted((e for e in got[name] if e["run_type"] != "aggregate"),
                      key=lambda e: e["repetition_index"])
        check([e["repetition_index"] for e in have] == [e["repetition_index"] for e in want],
              f"{name}: repetitions 0-4 in order", [e["repetition_index"] for e in have])
        check(all(e["repetitions"] == len(want) for e in have), f"{name}: repetitions total")
        check([e["cpu_time"] for e in have] == [e["cpu_time"] for e in want],
              f"{name}: each repetition's figures kept")
        aggs = [e for e in entries if e["run_type"] == "aggregate"]
        if aggs:
            compare_aggregates(aggs, [e for e in got[name] if e["run_type"] == "aggregate"],
                               name)
    check(gbench.merge(first, None) is first and gbench.merge(None, second) is second,
          "a missing invocation leaves the other as it is")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
