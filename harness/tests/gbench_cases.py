#!/usr/bin/python3
"""Cases for lib/gbench.py, which merges two invocations of a Google Benchmark program into
one document: the aggregates it computes are Google Benchmark's own, and a run of 5
repetitions split into 3 and 2 merges back into the same document.

The fixture, tests/data/switch_gbench.json, is switch-bench's own output (the Intel reference
run of deea303, two rows of each family kept): 5 interleaved repetitions per row, with Google
Benchmark's mean, median, stddev and cv. Not a run folder's switch.json: the suite's are
merged by lib/gbench.py itself, so their aggregates would be checked against themselves.

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

FIXTURE = HARNESS / "tests" / "data" / "switch_gbench.json"


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
        check({e.get("label") for e in got[name]} == {want[0].get("label")},
              f"{name}: the label on every entry, aggregates included")
        check([e["cpu_time"] for e in have] == [e["cpu_time"] for e in want],
              f"{name}: each repetition's figures kept")
        aggs = [e for e in entries if e["run_type"] == "aggregate"]
        if aggs:
            compare_aggregates(aggs, [e for e in got[name] if e["run_type"] == "aggregate"],
                               name)
    check(gbench.merge(first, None) is first and gbench.merge(None, second) is second,
          "a missing invocation leaves the other as it is")


def case_set_aside(a):
    """gbench.set_aside: the repetitions held() picks leave their row, whose aggregates are
    computed again over the rest, unless fewer than `keep` would be left; the stamp counters
    leave every entry."""
    def rep(row, i, ns):
        return {"name": row, "run_name": row, "run_type": "iteration", "repetitions": 5,
                "repetition_index": i, "threads": 1, "iterations": 100, "real_time": ns,
                "cpu_time": ns, "time_unit": "ns", "fibers": 2.0,
                "host_t0_s": 100.0 + i, "host_t1_s": 100.5 + i}
    a_reps = [rep("a", i, ns) for i, ns in enumerate([4.0, 4.1, 10.0, 4.2, 4.05])]
    b_reps = [rep("b", i, ns) for i, ns in enumerate([8.0, 8.1, 8.2, 8.3, 8.4])]
    doc = {"context": {}, "benchmarks": a_reps + gbench.aggregates(a_reps) + b_reps
           + gbench.aggregates(b_reps)}
    held = {("a", 2), ("b", 0), ("b", 1), ("b", 2)}
    out, listed = gbench.set_aside(
        doc, lambda e: (e["run_name"], e["repetition_index"]) in held, keep=3)
    rows = {}
    for b in out["benchmarks"]:
        rows.setdefault((b["run_name"], b["run_type"]), []).append(b)
    a_left = rows[("a", "iteration")]
    check([e["repetition_index"] for e in a_left] == [0, 1, 3, 4] and
          all(e["repetitions"] == 4 for e in a_left), "a: the held repetition set aside", a_left)
    med = {e["aggregate_name"]: e for e in rows[("a", "aggregate")]}["median"]
    check(same(med["real_time"], 4.075) and med["repetitions"] == 4,
          "a: its median over the 4 left", med)
    check(len(rows[("b", "iteration")]) == 5, "b: 3 held of 5 would leave 2: all kept",
          rows[("b", "iteration")])
    check(sorted((x["row"], x["repetition_index"], x["kept"]) for x in listed) ==
          [("a", 2, False), ("b", 0, True), ("b", 1, True), ("b", 2, True)], "listed", listed)
    check(not any(k in b for b in out["benchmarks"] for k in gbench.STAMPS),
          "no stamp counter left, aggregates included")
    check(all(b.get("fibers") == 2.0 for b in out["benchmarks"]
              if b.get("aggregate_name") in (None, "mean", "median")), "other counters kept")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
