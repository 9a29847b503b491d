"""The experiment of harness/icount.py: instructions counted by callgrind, of the switches
(switch-icount) and of the timer structures' operations that claim C17 reads (timer-icount)."""
import json
from pathlib import Path

from experiments._step import PY, ROOT, Experiment, counted, run, write_json

# C17's isolated cost: the wheel's arm and cancel and the tree's arm, mostly-cancelled
# workload, from 10^2 pending timers to 10^4 (quick) or 10^6 (full: setting up a million timers
# under callgrind takes about a minute). Short loops: a row's batches are 512 operations each.
TIMER_OPS = (("arm", "wheel"), ("cancel", "wheel"), ("arm", "rbtree"))
TIMER_PENDING = {"quick": (100, 10000), "full": (100, 10000, 1000000)}
TIMER_LOOPS = "20,120"


def timer_rows(preset):
    return [f"timers/cancelled/{op}/{structure}/pending:{n}" for op, structure in TIMER_OPS
            for n in TIMER_PENDING.get(preset, TIMER_PENDING["quick"])]


def count(ctx, exp):
    status = counted("icount.py", lambda c: ["--bin", c.bin], timeout=900)(ctx, exp)
    if status != "ok":
        return status
    out = ctx.dir / exp.output
    doc = json.loads(out.read_text())
    timers = Path(ctx.tmp) / "icount-timers.json"
    if not (ctx.bin / "timer-icount").exists():
        doc["timers"] = {"status": "not run", "reason": "timer-icount is not built"}
    else:
        rows = timer_rows(ctx.preset)
        rc = run([PY, ROOT / "harness" / "icount.py", "--bin", ctx.bin, "--exe",
                  "timer-icount", "--loops", TIMER_LOOPS, "--rows", ",".join(rows),
                  "--out-file", timers], ctx.log, 900)
        if rc == 0 and timers.exists():
            doc["benchmarks"] += json.loads(timers.read_text()).get("benchmarks", [])
            doc["timers"] = {"status": "ok", "rows": rows, "loops": TIMER_LOOPS}
        else:
            doc["timers"] = {"status": "not run",
                             "reason": f"icount.py --exe timer-icount exited {rc}"}
    write_json(out, doc)
    return "ok"


EXPERIMENT = Experiment(
    name="icount",
    measures="callgrind instructions per switch, create and hop of every switch backend, and "
             "per arm and cancel of the wheel and the tree from 10^2 to 10^4 (full: 10^6) "
             "pending timers",
    claims=("C1", "C5", "C17"),
    binaries=("switch-icount",),
    output="icount.json",
    budget_s={"quick": 17, "full": 35},
    run=count,
    times=False,
)
