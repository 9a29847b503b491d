#!/usr/bin/python3
"""Cases for harness/experiments/engines.py (claims C2, C3): a tiny interleaved run of two
epoll engines writes engines.json with each engine's exact epoll_ctl count per request, its
throughput and CPU per request, a paired ratio per round and the A/A pair; bad arguments exit 2.

usage: engines_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
import sys
from pathlib import Path

from cases import check, refuses, run

PY = "/usr/bin/python3"
MODULE = ["-m", "experiments.engines"]


def case_tiny(a):
    out = Path(a.work) / "engines.json"
    p = subprocess.run([PY, *MODULE, "--build-dir", a.build_dir, "--engines",
                        "naive,merged,edge", "--rounds", "2", "--full-rounds", "1",
                        "--duration", "0.1", "--warmup", "0.05",
                        "--conns", "10", "--count-requests", "2000", "--count-rounds", "1",
                        "--profile", "", "--out-file", out],
                       capture_output=True, text=True, timeout=150)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr.strip()})")
    doc = json.loads(out.read_text())
    check(doc["experiment"] == "engines" and doc["rounds_run"] == 2, "two rounds of engines",
          (doc["experiment"], doc["rounds_run"]))
    check(set(doc["summary"]) == {"naive", "merged", "edge"},
          "a summary row per engine asked for", sorted(doc["summary"]))
    check(sorted(r["round"] for r in doc["runs"] if r["engine"] == "edge") == [0, 0],
          "edge, not judged, runs (count and throughput) in the full round only",
          [(r["round"], r["kind"]) for r in doc["runs"] if r["engine"] == "edge"])
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
    timed = [r for r in doc["runs"] if r["kind"] != "count"]
    check(timed and all((r.get("host_pace") or {}).get("samples", 0) > 0 for r in timed),
          "every timed window carries the host's pace over it (lib/host_pace.py)",
          [(r["kind"], r.get("host_pace")) for r in timed])


def case_order(a):
    """Each round runs naive and merged back to back, in alternating order, with merged's A/A
    run on merged's other side; full rounds add every other engine once, the others run that
    block alone; without both judged engines every round rotates them all."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from experiments.engines import round_order
    items = ["naive", "merged", "oneshot", "edge", "libevent", "merged (A/A)"]
    firsts = set()
    for rnd in range(8):
        full = rnd < 3
        got = round_order(items, "merged (A/A)", rnd, full)
        check(sorted(got) == sorted(items if full else ["naive", "merged", "merged (A/A)"]),
              f"round {rnd}: {'every engine' if full else 'the block'} once", got)
        m = got.index("merged")
        check({got[m - 1], got[m + 1]} == {"naive", "merged (A/A)"} if 0 < m < len(got) - 1
              else False, f"round {rnd}: merged between naive and its A/A run", got)
        firsts.add(got.index("naive") < m)
    check(firsts == {True, False}, "naive runs before merged in some rounds, after in others")
    check(round_order(["oneshot", "edge"], None, 1, False) == ["edge", "oneshot"],
          "no judged pair: every engine, rotated")


def case_bad_args(a):
    refuses([PY, *MODULE, "--build-dir", a.build_dir], ["--engines", "bogus"],
            ["--rounds", "0"], ["--conns", "x"], ["--full-rounds", "0"])


if __name__ == "__main__":
    raise SystemExit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                         ("--work", {"required": True})))
