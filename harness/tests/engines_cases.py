#!/usr/bin/python3
"""Cases for harness/experiments/engines.py (claims C2, C3): a tiny interleaved run of two
epoll engines writes engines.json with each engine's exact epoll_ctl count per request, its
throughput and CPU per request, a paired ratio per round and the A/A pair; bad arguments exit 2.

usage: engines_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
from pathlib import Path

from cases import check, refuses, run

PY = "/usr/bin/python3"
MODULE = ["-m", "experiments.engines"]


def case_tiny(a):
    out = Path(a.work) / "engines.json"
    p = subprocess.run([PY, *MODULE, "--build-dir", a.build_dir, "--engines", "naive,merged",
                        "--rounds", "2", "--duration", "0.1", "--warmup", "0.05",
                        "--conns", "10", "--count-requests", "2000", "--count-rounds", "1",
                        "--profile", "", "--out-file", out],
                       capture_output=True, text=True, timeout=150)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr.strip()})")
    doc = json.loads(out.read_text())
    check(doc["experiment"] == "engines" and doc["rounds_run"] == 2, "two rounds of engines",
          (doc["experiment"], doc["rounds_run"]))
    check(set(doc["summary"]) == {"naive", "merged"}, "a summary row per engine asked for",
          sorted(doc["summary"]))
    for name, s in doc["summary"].items():
        check(s["requests_per_sec"] and s["requests_per_sec"] > 0
              and s["server_cpu_us_per_request"] and s["server_cpu_us_per_request"] > 0,
              f"{name}: throughput and CPU per request measured", s)
        if doc["perf"]:
            check(s["ctl_per_request_kernel"] is not None, f"{name}: epoll_ctl counted", s)
    naive, merged = (doc["summary"][e]["ctl_per_request_engine"] for e in ("naive", "merged"))
    check(naive is not None and merged is not None and merged < naive,
          "merged calls epoll_ctl less per request than naive", (naive, merged))
    check(doc["ratios"] and all(len(r["per_round"]) == 2 for r in doc["ratios"].values()),
          "every paired ratio has one value per round", doc["ratios"])
    check(doc["aa"], "the A/A pair of merged is recorded", doc["aa"])


def case_bad_args(a):
    refuses([PY, *MODULE, "--build-dir", a.build_dir], ["--engines", "bogus"],
            ["--rounds", "0"], ["--conns", "x"])


if __name__ == "__main__":
    raise SystemExit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                         ("--work", {"required": True})))
