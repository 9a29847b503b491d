#!/usr/bin/python3
"""Cases for harness/tools/aco_side.py (ours beside libaco, alternating processes): with stand-in
programs for switch-bench and peer-aco that print fixed times in Google Benchmark's JSON, it
alternates the two (each process a fresh copy), pairs the rows by round and the rounds in
blocks of two, and says met, not met or inconclusive from the whole interval; without peer-aco
it says "not run" and why; bad usage is refused; with a stand-in host-pace that reports the
host holding a CPU back while some processes ran, their blocks are set aside. The real
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
# 3 repetitions each, and appends its name, the folder it ran from and the filter it was given
# to calls.log (in the work folder: the tool runs a copy of it elsewhere), so the order can be
# read back. In the invocations listed in HOLD it writes a held-back stretch into held.log for
# the stand-in host-pace: 0.3 s of its life, 0.1 s clear of either end (a stretch found by
# host_pace.stalls() may begin and end up to 60 ms beyond the slow samples).
STAND_IN = r'''#!/usr/bin/python3
import json, sys, time
from pathlib import Path
TIMES = %r
calls = Path(%r)
name = %r
HOLD = %r
n = sum(1 for line in calls.read_text().splitlines() if line.startswith(name + " ")) \
    if calls.exists() else 0
with open(calls, "a") as f:
    f.write("%%s %%s %%s\n" %% (name, Path(__file__).resolve().parent,
                             [a for a in sys.argv if a.startswith("--benchmark_filter=")][0]))
if n in HOLD:
    time.sleep(0.1)
    t0 = time.monotonic_ns()
    time.sleep(0.3)
    with open(calls.parent / "held.log", "a") as f:
        f.write("%%d %%d\n" %% (t0, time.monotonic_ns()))
    time.sleep(0.1)
rows = []
for row, ts in TIMES.items():
    t = ts[n %% len(ts)]
    rows += [{"name": row, "run_name": row, "run_type": "iteration", "repetition_index": i,
              "cpu_time": t, "time_unit": "ns"} for i in range(3)]
print(json.dumps({"context": {}, "benchmarks": rows}))
'''


# A stand-in host-pace: once its standard input ends, it reports a sample every 10 ms of its
# life, 3 us where held.log puts it in a held-back stretch and 1 us elsewhere.
HOST_PACE = r'''#!/usr/bin/python3
import json, sys, time
from pathlib import Path
t0 = time.monotonic_ns()
sys.stdin.read()
t1 = time.monotonic_ns()
held = Path(%r)
stretches = [tuple(map(int, line.split())) for line in held.read_text().splitlines()] \
    if held.exists() else []
at = list(range(t0, t1, 10 ** 7))
print(json.dumps({"samples_ns": [3000 if any(a <= t < b for a, b in stretches) else 1000
                                 for t in at], "at_ns": at}))
'''


def stand_ins(work, ours, aco, hold=(), pace=False):
    """The two programs' stand-ins (None: that one missing); ours writes a held-back stretch
    in its invocations `hold`; with `pace`, a stand-in host-pace beside them."""
    work.mkdir(parents=True, exist_ok=True)
    for log in ("calls.log", "held.log"):
        (work / log).unlink(missing_ok=True)  # a work folder is reused by the next run
    for name, times in (("switch-bench", ours), ("peer-aco", aco)):
        p = work / name
        if times is None:
            p.unlink(missing_ok=True)
            continue
        p.write_text(STAND_IN % (times, str(work.resolve() / "calls.log"), name,
                                 tuple(hold) if name == "switch-bench" else ()))
        p.chmod(0o755)
    p = work / "host-pace"
    p.unlink(missing_ok=True)
    if pace:
        p.write_text(HOST_PACE % str(work.resolve() / "held.log"))
        p.chmod(0o755)


def tool(*args):
    return subprocess.run([PY, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def case_verdicts(a):
    """Ratios per round of the stand-ins' times, blocks of two rounds, and a verdict from each
    block interval as a whole."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0, 10.2], "sched/ring/cc/fibers:16": [30.0],
                  "copystack/resume/bytes:8/fibers:100000": [15.0, 15.0, 25.0, 25.0]},
              {"aco/acosw": [20.0], "aco/resume/bytes:8/fibers:100000": [20.0]})
    out = w / "side.json"
    p = tool("--bin", w, "--rounds", 12, "--out", out)
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
          "blocks at 0.75 and 1.25 straddle 1.0: inconclusive", copy)
    check(len(copy["ratios"]) == 12 and len(copy["blocks"]) == 6,
          "one ratio per round, one figure per two rounds", copy)
    missing = pairs["switch/cc-nofpu"]
    check(missing["status"].startswith("not run"), "a row neither program gave: not run",
          missing)
    check("not met" in p.stdout and "inconclusive" in p.stdout, "the table shows the verdicts",
          p.stdout)
    check("not watched: no host-pace" in p.stdout, "without host-pace: says it did not watch",
          p.stdout)


def case_held(a):
    """A ring hop at 0.45x acosw, but 1.5x in three processes of ours that ran while the host
    held a CPU back (the stand-in host-pace says so): judged over all ten blocks the verdict
    would be inconclusive; the three blocks are set aside and the seven left meet 0.5."""
    w = Path(a.work)
    ring = "sched/ring/cc/fibers:16"
    hold = (2, 8, 14)  # rounds 3, 9 and 15: blocks 1, 4 and 7
    times = [30.0 if i in hold else 9.0 for i in range(20)]
    stand_ins(w, {ring: times}, {"aco/acosw": [20.0]}, hold=hold, pace=True)
    out = w / "side.json"
    p = tool("--bin", w, "--rounds", 20, "--only", ring, "--out", out)
    check(p.returncode == 0, "measured: exit 0", p.stderr[-300:])
    doc = json.loads(out.read_text())
    held = doc["host_pace"]["held_blocks"]
    check(held == [i in (1, 4, 7) for i in range(10)], "the three blocks were held back",
          doc["host_pace"])
    r = doc["pairs"][0]
    check(r["blocks_judged"] == 7 and r["verdict"] == "met" and abs(r["ratio"] - 0.45) < 1e-9,
          "the seven calm blocks meet 0.5", r)
    check("held a CPU back in 3 of 10 blocks: those set aside" in p.stdout, "and it says so",
          p.stdout)
    # Too many held: with 12 rounds, setting aside 3 of 6 blocks would leave 3.
    stand_ins(w, {ring: times}, {"aco/acosw": [20.0]}, hold=hold[:1] + (4, 8), pace=True)
    p = tool("--bin", w, "--rounds", 12, "--only", ring, "--out", out)
    r = json.loads(out.read_text())["pairs"][0]
    check(p.returncode == 0 and r["blocks_judged"] == 6 and r["held_kept"]
          and "too many to set aside" in p.stdout, "too many held: every block judged, said",
          (r, p.stdout))


def case_place_cancels(a):
    """Processes that read slower at one parity of the sequence (here ours: 25 at its 1st,
    3rd, ... run, which come first in their rounds, 15 at the others) give rounds at 1.25 and
    0.75; each block has one of each and reads their geometric mean, so the verdict is
    decided."""
    w = Path(a.work)
    stand_ins(w, {"copystack/resume/bytes:8/fibers:100000": [25.0, 15.0]},
              {"aco/resume/bytes:8/fibers:100000": [20.0]})
    out = w / "side.json"
    p = tool("--bin", w, "--rounds", 12, "--out", out)
    check(p.returncode == 0, "measured: exit 0", p.stderr[-300:])
    copy = {r["ours"]: r for r in json.loads(out.read_text())["pairs"]}[
        "copystack/resume/bytes:8/fibers:100000"]
    check(sorted(set(copy["ratios"])) == [0.75, 1.25], "the rounds alternate", copy["ratios"])
    check(all(abs(b - 0.75 ** 0.5 * 1.25 ** 0.5) < 1e-9 for b in copy["blocks"])
          and copy["verdict"] == "met", "every block reads sqrt(0.75 x 1.25): met", copy)


def case_alternates(a):
    """The two programs take turns, the order flipped every round, each process a copy of its
    program outside the build's folder, removed afterwards."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0]}, {"aco/acosw": [20.0]})
    p = tool("--bin", w, "--rounds", 12)
    check(p.returncode == 0, "measured: exit 0", p.stderr[-300:])
    lines = [line.split() for line in (w / "calls.log").read_text().splitlines()]
    want = ["switch-bench", "peer-aco", "peer-aco", "switch-bench"] * 6
    check([x[0] for x in lines] == want, "ours, libaco's; libaco's, ours; ...", lines)
    folders = {x[1] for x in lines}
    check(str(w.resolve()) not in folders and len(folders) == 1,
          "every process ran a copy, in one folder", folders)
    check(not Path(folders.pop()).exists(), "the copies' folder is gone")


def case_only(a):
    """--only: the pairs of the rows named, and their processes asked for those rows alone."""
    w = Path(a.work)
    row = "copystack/resume/bytes:8/fibers:100000"
    stand_ins(w, {"switch/asm": [10.0], row: [15.0]},
              {"aco/acosw": [20.0], "aco/resume/bytes:8/fibers:100000": [20.0]})
    out = w / "side.json"
    p = tool("--bin", w, "--rounds", 12, "--only", row, "--out", out)
    check(p.returncode == 0, "measured: exit 0", p.stderr[-300:])
    pairs = json.loads(out.read_text())["pairs"]
    check([r["ours"] for r in pairs] == [row] and pairs[0]["verdict"] == "met",
          "one pair, and its verdict", pairs)
    filters = {line.split()[2] for line in (w / "calls.log").read_text().splitlines()}
    want = {"--benchmark_filter=^(%s)$" % r for r in (row, "aco/resume/bytes:8/fibers:100000")}
    check(filters == want, "each program asked for its row of the pair alone", filters)


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
    """Rounds odd or below 12, no repetitions, a row without a pair, a minimum time out of
    range: exit 2 with a message."""
    w = Path(a.work)
    stand_ins(w, {"switch/asm": [10.0]}, {"aco/acosw": [20.0]})
    refuses([PY, TOOL, "--bin", w], ["--rounds", "1"], ["--rounds", "10"], ["--rounds", "13"],
            ["--repetitions", "0"], ["--only", "switch/none"],
            ["--min-time", "0"], ["--min-time", "11"], ["--rounds", "x"])


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
