#!/usr/bin/python3
"""Cases for harness/experiments/threads.py (claim C11): a tiny run of the fiber server with one
and two scheduler threads writes threads.json with every variant's throughput, server cores
and CPU per request, the two-thread over one-thread ratio and the A/A pair; bad arguments exit 2.

usage: threads_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
from pathlib import Path

from cases import check, refuses, run

PY = "/usr/bin/python3"
MODULE = ["-m", "experiments.threads"]


def case_tiny(a):
    out = Path(a.work) / "threads.json"
    p = subprocess.run([PY, *MODULE, "--build-dir", a.build_dir, "--rounds", "2",
                        "--duration", "0.2", "--warmup", "0.1", "--conns", "20",
                        "--out-file", out],
                       capture_output=True, text=True, timeout=150)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr.strip()})")
    doc = json.loads(out.read_text())
    check(doc["experiment"] == "threads", "threads.json names its experiment", doc["experiment"])
    names = {v["name"] for v in doc["config"]["variants"]}
    check({"t1-shared", "t2-shared"} <= names and set(doc["summary"]) == names,
          "a summary row per variant", sorted(doc["summary"]))
    for name, s in doc["summary"].items():
        check(s["runs"] == 2, f"{name}: both rounds measured", s)
        check(s["requests_per_sec"] > 0 and s["server_cores_used"] > 0
              and s["server_cpu_us_per_request"] > 0, f"{name}: throughput and CPU measured", s)
        check(s["errors"] == 0, f"{name}: no echo errors", s)
    check(doc["ratio_t2_over_t1_shared"] and doc["ratio_t2_over_t1_shared"] > 0,
          "the ratio C11 reads", doc["ratio_t2_over_t1_shared"])
    check(doc["aa"] and len(doc["aa_runs"]) == 2, "the A/A pair: one more run a round",
          len(doc["aa_runs"]))


def case_bad_args(a):
    refuses([PY, *MODULE, "--build-dir", a.build_dir], ["--rounds", "0"], ["--conns", "x"],
            ["--aa", "bogus"])


if __name__ == "__main__":
    raise SystemExit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                         ("--work", {"required": True})))
