"""Instructions counted by callgrind (lib/callgrind.py), of the switches (switch-icount) and of
the timer structures' operations that claim C17 reads (timer-icount); its command line is the
one harness/bench's counting tests and the regression gate's rows run. In the suite the step
also files the IO path's counts per request of claim C13's pair (gate/iopath.py) as its
`iopath` block:

    python3 -m experiments.icount [--bin DIR] [--exe switch-icount|timer-icount|peer-icount]
        [--rows ROW,...] [--loops A,B] [--jobs N] [--out-file FILE] [--expect ROW=LO..HI]
"""
import argparse
import json
import sys
from pathlib import Path

from experiments._step import PY, Experiment, counted, module_cmd, run, write_json
from lib import callgrind, meta

# C17's isolated cost: the wheel's arm and cancel and the tree's arm, mostly-cancelled
# workload, from 10^2 pending timers to 10^4 (quick) or 10^6 (full: setting up a million timers
# under callgrind takes about a minute). Short loops: a row's batches are 512 operations each.
TIMER_OPS = (("arm", "wheel"), ("cancel", "wheel"), ("arm", "rbtree"))
TIMER_PENDING = {"quick": (100, 10000), "full": (100, 10000, 1000000)}
TIMER_LOOPS = "20,120"
# Claim C13's pair counted per request on the IO path (gate/iopath.py, the regression gate's
# rows): the fiber server under its default read policy and the epoll yardstick. Where the
# fiber server's CPU per request exceeds the yardstick's, these say by how much of what. User
# space only: fiberio counts C13's system calls under its own load, and the kernel's half
# would add 2 s to a quick suite with none to spare.
IOPATH_CONFIGS = "fiber/adaptive,epoll"


def timer_rows(preset):
    return [f"timers/cancelled/{op}/{structure}/pending:{n}" for op, structure in TIMER_OPS
            for n in TIMER_PENDING.get(preset, TIMER_PENDING["quick"])]


def count(ctx, exp):
    status = counted(lambda c: ["--bin", c.bin], timeout=900)(ctx, exp)
    if status != "ok":
        return status
    out = ctx.dir / exp.output
    doc = json.loads(out.read_text())
    timers = Path(ctx.tmp) / "icount-timers.json"
    if not (ctx.bin / "timer-icount").exists():
        doc["timers"] = {"status": "not run", "reason": "timer-icount is not built"}
    else:
        rows = timer_rows(ctx.preset)
        rc = run([*module_cmd("icount"), "--bin", ctx.bin, "--exe",
                  "timer-icount", "--loops", TIMER_LOOPS, "--rows", ",".join(rows),
                  "--out-file", timers], ctx.log, 900)
        if rc == 0 and timers.exists():
            doc["benchmarks"] += json.loads(timers.read_text()).get("benchmarks", [])
            doc["timers"] = {"status": "ok", "rows": rows, "loops": TIMER_LOOPS}
        else:
            doc["timers"] = {"status": "not run",
                             "reason": f"experiments/icount.py --exe timer-icount exited {rc}"}
    doc["iopath"] = iopath_block(ctx)
    write_json(out, doc)
    return "ok"


def iopath_block(ctx):
    """The IO path's counts per request of C13's pair, or "not run" and why."""
    got = Path(ctx.tmp) / "icount-iopath.json"
    rc = run([PY, "-m", "gate.iopath", "--bin", ctx.bin, "--configs", IOPATH_CONFIGS,
              "--user-space-only", "--out-file", got], ctx.log, 600)
    if rc != 0 or not got.exists():
        return {"status": "not run", "reason": f"gate/iopath.py exited {rc}"}
    return json.loads(got.read_text())


EXPERIMENT = Experiment(
    name="icount",
    measures="callgrind instructions per switch, create and hop of every switch backend, and "
             "per arm and cancel of the wheel and the tree from 10^2 to 10^4 (full: 10^6) "
             "pending timers; the IO path's user-space instructions and own cache lines per "
             "request of the default fiber server and the epoll yardstick",
    claims=("C1", "C5", "C13", "C17"),
    binaries=("switch-icount",),
    output="icount.json",
    budget_s={"quick": 13, "full": 38},
    run=count,
    times=False,
)


def main():
    ap = argparse.ArgumentParser(description=callgrind.__doc__.split("\n")[0])
    ap.add_argument("--bin", default=callgrind.DEFAULT_BIN, help="directory with switch-icount")
    ap.add_argument("--exe", default="switch-icount",
                    help="the counting program: switch-icount, timer-icount for the timers/ "
                         "rows (instructions per arm, cancel or expire), or peer-icount for the "
                         "peer/ rows")
    ap.add_argument("--rows", help="comma-separated rows (default: all backends)")
    ap.add_argument("--loops", default="1000,11000", help="the two loop lengths")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out-file", metavar="FILE", help="write the JSON here (default: stdout)")
    ap.add_argument("--expect", action="append", default=[], metavar="ROW=LO..HI",
                    help="sanity range for one row's count (tests)")
    args = ap.parse_args()
    try:
        loops = callgrind.two_loops(args.loops)
    except ValueError as e:
        print("icount.py: %s" % e, file=sys.stderr)
        return 2
    try:
        doc = callgrind.run(args.bin, args.rows.split(",") if args.rows else None, loops, args.jobs,
                  exe_name=args.exe)
    except RuntimeError as e:
        print("icount.py: %s" % e, file=sys.stderr)
        return 1
    meta.emit_json(doc, args.out_file)
    return check_expectations(doc, args.expect)


def check_expectations(doc, specs):
    counts = {r["name"][len("icount/"):]: r["real_time"] for r in doc["benchmarks"]}
    bad = 0
    for spec in specs:
        row, _, bounds = spec.partition("=")
        lo, _, hi = bounds.partition("..")
        value = counts.get(row)
        ok = value is not None and float(lo) <= value <= float(hi)
        print("icount.py: %s %s = %s (expected %s..%s)" % ("ok" if ok else "FAIL", row,
                                                          value, lo, hi), file=sys.stderr)
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
