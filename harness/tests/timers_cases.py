#!/usr/bin/python3
"""Cases for harness/experiments/timers.py and timer-lateness: bad arguments exit 2; cyclictest's
histogram and perf's idle counts are read right; a small lateness run never reports a sleep
woken early and names cyclictest's figure or why it is missing.

usage: timers_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
import sys
from pathlib import Path
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from experiments import timers as TB  # noqa: E402

DRIVER = HARNESS / "experiments" / "timers.py"
PY = "/usr/bin/python3"


def case_bad_args(a):
    refuses([PY, DRIVER, "--build-dir", a.build_dir], ["--parts", "cpu,sundial"],
            ["--timers", "sundial"], ["--cpu-timers", "sundial"], ["--rounds", "0"],
            ["--idle-window", "0"])
    exe = Path(a.build_dir) / "bin" / "timer-lateness"
    refuses([exe], [], ["--timers", "sundial"], ["--timers", "heap", "--sleeps", "0"],
            ["--timers", "heap", "--bogus", "1"])


def case_readers(a):
    hist = "\n".join(["# Histogram", "000010 000050", "000011 000049", "000090 000001",
                      "# Total: 000000100", "# Min Latencies: 00010",
                      "# Max Latencies: 00090", "# Histogram Overflows: 00000"])
    q = TB.histogram_quantiles(hist, 100)
    check(q == {"p50": 10.0, "p99": 11.0, "max": 90.0, "n": 100, "overflows": 0},
          "p50, p99 and max of a histogram", q)
    check(TB.histogram_quantiles("# Histogram\n", 100) is None, "an empty histogram is None")
    counts = TB.idle_counts("<not counted>,,context-switches,0,100.00,,\n"
                            "<not supported>,,syscalls:sys_enter_poll,0,100.00,,\n"
                            "12,,syscalls:sys_enter_epoll_wait,1000,100.00,,\n")
    check(counts == {"context-switches": 0.0, "syscalls:sys_enter_poll": None,
                     "syscalls:sys_enter_epoll_wait": 12.0},
          "a task that never ran counts 0; an unsupported event stays unknown", counts)


def case_lateness(a):
    out = Path(a.work) / "timers.json"
    p = subprocess.run([PY, DRIVER, "--build-dir", a.build_dir, "--parts", "lateness",
                        "--sleeps", "40", "--pending", "100", "--lateness-rounds", "1",
                        "--out-file", out], capture_output=True, text=True, timeout=120)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr})")
    doc = json.loads(out.read_text())
    rows = {e["variant"]: e for e in doc["lateness"]["summary"]}
    check(set(rows) == set(doc["structures"]) | {"cyclictest"},
          "a row per structure and cyclictest", sorted(rows))
    for s in doc["structures"]:
        check(rows[s]["p50"]["median"] is not None and rows[s]["p50"]["median"] >= 0,
              f"{s}: a lateness, never negative", rows[s])
    cyc = rows["cyclictest"]
    check(cyc["p50"]["median"] is not None or (cyc.get("status") == "not run" and cyc["why"]),
          "cyclictest measured, or not run with the reason", cyc)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                 ("--work", {"required": True})))
