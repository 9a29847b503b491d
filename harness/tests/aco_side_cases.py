#!/usr/bin/python3
"""Cases for harness/tools/aco_side.py (ours beside libaco, alternating processes): with stand-in
programs for switch-bench and peer-aco that print fixed times in Google Benchmark's JSON, it
alternates the two, pairs the rows by round, and says met, not met or inconclusive from the
whole interval; without peer-aco it says "not run" and why; bad usage is refused. The real
peer-aco needs a libaco checkout, which CI does not have.

usage: aco_side_cases.py CASE --work DIR
"""
import json
import subprocess
import sys
from pathlib import Path

from cases import check, refuses, run

PY = "/usr/bin/python3"
TOOL = Path(__file__).resolve().parent.parent / "tools" / "aco_side.py"

# A stand-in: prints TIMES[row] (a list: one per invocation, cycled) for each row it knows,
# 3 repetitions each, and appends its name to calls.log so the order can be read back.
STAND_IN = r'''#!/usr/bin/python3
import json, sys
from pathlib import Path
here = Path(__file__).parent
TIMES = %r
calls = here / "calls.log"
n = len(calls.read_text().split()) if calls.exists() else 0
with open(calls, "a") as f:
    f.write(%r + "\n")
rows = []
for row, ts in TIMES.items():
    t = ts[n %% len(ts)]
    rows += [{"name": row, "run_name": row, "run_type": "iteration", "repetition_index": i,
              "cpu_time": t, "time_unit": "ns"} for i in range(3)]
print(json.dumps({"context": {}, "benchmarks": rows}))
'''


def stand_ins(work, ours, aco):
    work.mkdir(parents=True, exist_ok=True)
    (work / "calls.log").unlink(missing_ok=True)  # a work folder is reused by the next run
    for name, times in (("switch-bench", ours), ("peer-aco", aco)):
        p = work / name
        if times is None:
            p.unlink(missing_ok=True)
            continue
        p.write_text(STAND_IN % (times, name))
        p.chmod(0o755)


def tool(*args):
    return subprocess.run([PY, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def case_verdicts(a):
    """Ratios per round of the stand-ins' times, and a verdict from each whole interval."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0, 10.2], "sched/ring/cc/fibers:16": [30.0],
                  "copystack/resume/bytes:8/fibers:100000": [15.0, 25.0]},
              {"aco/acosw": [20.0], "aco/resume/bytes:8/fibers:100000": [20.0]})
    out = w / "side.json"
    p = tool("--bin", w, "--rounds", 6, "--out", out)
    check(p.returncode == 0, "measured: exit 0", p.stderr[-300:])
    pairs = {r["ours"]: r for r in json.loads(out.read_text())["pairs"]}
    asm = pairs["switch/asm"]
    check(asm["verdict"] == "met" and 0.49 < asm["ratio"] < 0.52,
          "switch/asm at about 0.5x acosw meets 0.7", asm)
    ring = pairs["sched/ring/cc/fibers:16"]
    check(ring["verdict"] == "not met" and abs(ring["ratio"] - 1.5) < 1e-9,
          "a ring hop 1.5x acosw does not meet 0.5", ring)
    copy = pairs["copystack/resume/bytes:8/fibers:100000"]
    check(copy["verdict"] == "inconclusive" and copy["interval"][0] < 1.0 < copy["interval"][1],
          "rounds at 0.75 and 1.25 straddle 1.0: inconclusive", copy)
    check(len(copy["ratios"]) == 6, "one ratio per round", copy["ratios"])
    missing = pairs["switch/cc-nofpu"]
    check(missing["status"].startswith("not run"), "a row neither program gave: not run",
          missing)
    check("not met" in p.stdout and "inconclusive" in p.stdout, "the table shows the verdicts",
          p.stdout)


def case_alternates(a):
    """The two programs take turns, the order flipped every round."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0]}, {"aco/acosw": [20.0]})
    p = tool("--bin", w, "--rounds", 4)
    check(p.returncode == 0, "measured: exit 0", p.stderr[-300:])
    calls = (w / "calls.log").read_text().split()
    want = ["switch-bench", "peer-aco", "peer-aco", "switch-bench"] * 2
    check(calls == want, "ours, libaco's; libaco's, ours; ...", calls)


def case_not_built(a):
    """Without peer-aco: exit 1 and "not run" with what to do."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0]}, None)
    p = tool("--bin", w)
    check(p.returncode == 1 and "not run: peer-aco is not built" in p.stderr
          and "SWITCHYARD_LIBACO_DIR" in p.stderr, "not run, and how to build it",
          (p.returncode, p.stderr))
    check(not (w / "calls.log").exists(), "nothing was timed")


def case_bad_usage(a):
    """Rounds below 2, no repetitions, a minimum time out of range: exit 2 with a message."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0]}, {"aco/acosw": [20.0]})
    refuses([PY, TOOL, "--bin", w], ["--rounds", "1"], ["--repetitions", "0"],
            ["--min-time", "0"], ["--min-time", "11"], ["--rounds", "x"])


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
