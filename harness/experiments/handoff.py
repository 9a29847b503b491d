#!/usr/bin/python3
"""handoff.py - CPU time per hand-off against the number of contexts on one CPU (claim C15).

For every level m it runs `handoff-scale --kind thread` (m kernel threads, m/2 futex pairs)
and `handoff-scale --kind fiber` (m fibers of one runtime, m/2 park/wake pairs), both pinned
to one CPU, interleaved over --rounds with the order of the kinds alternating, and keeps the
median CPU time per hand-off of each (kind, m). Levels beyond pid_max (threads) or
vm.max_map_count (fibers: two maps per guarded stack) are recorded as not run.

With --budget-s it sizes itself: every run is timed whole (creating and joining ten thousand
threads pinned to one CPU takes far longer than its measured window), a run not yet made is
predicted from the same kind's largest level so far, the rounds up to the third are given to
the runs whose remaining minimum fits (the dearest left out first, recorded as `not run: over
budget (predicted N s ...)`), and a round past the third runs only while the last one's cost
still fits.

    python3 -m experiments.handoff [--levels 2,16,256,2048] [--rounds 3] [--seconds 0.5]
        [--cpu 0] [--build-dir build] [--out-file handoff.json]
"""
import json
import statistics
import subprocess
import sys
from pathlib import Path

from lib import cli, meta, rounds
from lib import budget as B
from experiments._step import Experiment, driver

KINDS = ["thread", "fiber"]
TASK_MARGIN = 512  # pids left for the rest of the machine
MAP_MARGIN = 1000
# What one run costs before any has been timed: the process's start and exit besides its
# measured window, and per context its creation and teardown: a thread costs about ten times a
# fiber (the measurements behind these priors: results/notes/harness.md).
RUN_START_S = 0.1
PER_CONTEXT_PRIOR_S = {"thread": 2.5e-4, "fiber": 2e-5}


def parse_args(argv):
    ap = cli.parser("handoff.py", __doc__, rounds=5, pin=False)
    ap.add_argument("--levels", default="2,4,16,64,256,1024,4096,10000",
                    help="contexts m, even numbers (comma list)")
    ap.add_argument("--seconds", type=float, default=1.0, help="measured seconds per run")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--budget-s", type=float, default=None,
                    help="seconds the runs may take: the dearest levels are left out first "
                         "(default: no budget)")
    a = ap.parse_args(argv)
    try:
        a.levels = sorted({int(x) for x in a.levels.split(",") if x.strip()})
    except ValueError:
        ap.error(f"--levels must be whole numbers, got {a.levels!r}")
    if not a.levels or min(a.levels) < 2 or any(m % 2 for m in a.levels):
        ap.error("--levels must be even numbers of at least 2")
    if a.rounds < 1 or a.seconds <= 0:
        ap.error("--rounds and --seconds must be positive")
    if a.budget_s is not None and a.budget_s <= 0:
        ap.error("--budget-s must be positive")
    return a


def limit(kind, m, limits):
    if kind == "thread":
        cap = min(x for x in (limits["pid_max"], limits["threads_max"], limits["nproc"]) if x)
        used = meta.tasks_in_use() or 0
        if m + used + TASK_MARGIN > cap:
            return f"pids: {m} threads + {used} tasks alive + {TASK_MARGIN} spare exceed {cap}"
    elif limits["max_map_count"] and 2 * m + MAP_MARGIN > limits["max_map_count"]:
        return f"memory maps: {m} guarded stacks need ~{2 * m + MAP_MARGIN}, " \
               f"vm.max_map_count is {limits['max_map_count']}"
    return None


def one(exe, kind, m, a):
    cmd = [exe, "--kind", kind, "--contexts", str(m), "--seconds", str(a.seconds),
           "--cpu", str(a.cpu)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60 + 4 * a.seconds)
    except subprocess.TimeoutExpired:
        return {"kind": kind, "contexts": m, "status": "failed", "reason": "timed out"}
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"kind": kind, "contexts": m, "status": "failed",
                "reason": (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]}
    r["loadavg"] = meta.loadavg()
    return r


def over_budget(budget, costs, todo, rnd, skipped):
    """Before round rnd: leaves out of this and later rounds the (kind, m) runs whose remaining
    minimum does not fit, dearest first (their reason in `skipped`); past the minimum, the
    reason to stop when a whole round no longer fits, else None."""
    if budget.seconds is None:
        return None
    cost = {k: costs.predict(*k) for k in todo}
    if rnd >= B.MIN_ROUNDS:
        need = sum(cost.values())
        return None if budget.fits(need) else f"after {rnd} rounds: " + budget.over(need)
    left_rounds = B.MIN_ROUNDS - rnd
    out = B.dearest_out(budget.left(), [left_rounds * cost[k] for k in todo])
    for i in out:
        kind, m = todo[i]
        skipped[f"{kind}:{m}"] = budget.over(left_rounds * cost[todo[i]])
    return None


def main(argv=None):
    a = parse_args(argv)
    exe = Path(a.build_dir) / "bin" / "handoff-scale"
    limits = meta.limits()
    info = meta.collect(meta.REPO_ROOT, a.build_dir,
                        pinning={"server": str(a.cpu), "tool": "sched_setaffinity"})
    runs, skipped = [], {}
    for kind in KINDS:
        for m in a.levels:
            why = limit(kind, m, limits)
            if why:
                skipped[f"{kind}:{m}"] = why
    say = cli.reporter(a)
    budget = B.Budget(a.budget_s)
    costs = B.RoundCosts(lambda kind: (RUN_START_S + a.seconds, PER_CONTEXT_PRIOR_S[kind]))
    stopped = None
    for rnd in range(a.rounds):
        todo = [(kind, m) for m in a.levels for kind in KINDS if f"{kind}:{m}" not in skipped]
        stopped = over_budget(budget, costs, todo, rnd, skipped)
        if stopped:
            break
        for m in a.levels:
            for kind in rounds.rotated(KINDS, rnd):
                if f"{kind}:{m}" in skipped:
                    continue
                t0 = budget.clock()
                r = one(str(exe), kind, m, a)
                r["round"], r["run_s"] = rnd, round(budget.clock() - t0, 3)
                costs.observe(kind, m, r["run_s"])
                runs.append(r)
                ns = r.get("cpu_ns_per_handoff")
                say(f"[handoff round {rnd + 1}/{a.rounds}] {kind:6} m={m:<6} "
                    + (f"{ns:9.1f} ns CPU per hand-off" if ns else
                       f"{r['status']}: {r.get('reason', '')}"))
    series = {}
    for kind in KINDS:
        pts = []
        for m in a.levels:
            key = f"{kind}:{m}"
            ok = [r for r in runs if r["kind"] == kind and r["contexts"] == m
                  and r.get("status") == "ok"]
            if key in skipped and not ok:
                pts.append({"contexts": m, "status": "not run", "reason": skipped[key]})
            elif not ok:
                bad = [r for r in runs if r["kind"] == kind and r["contexts"] == m]
                pts.append({"contexts": m, "status": "failed",
                            "reason": bad[-1].get("reason", "?") if bad else "no run"})
            else:
                pts.append({"contexts": m, "status": "ok", "runnable": m // 2,
                            "cpu_ns_per_handoff": statistics.median(
                                r["cpu_ns_per_handoff"] for r in ok),
                            "wall_ns_per_handoff": statistics.median(
                                r["wall_ns_per_handoff"] for r in ok),
                            "rounds": len(ok)})
                if key in skipped:  # measured, then left out of later rounds for time
                    pts[-1]["cut"] = skipped[key]
        series[kind] = pts
    result = {"experiment": "handoff", "meta": info,
              "budget": dict(budget.record(), rounds_stopped=stopped) if a.budget_s else None,
              "config": {"levels": a.levels, "rounds": a.rounds, "seconds": a.seconds,
                         "cpu": a.cpu, "binary": "handoff-scale",
                         "one_handoff": "a context hands the turn to its partner and gives "
                                        "up the CPU; m/2 pairs, so m/2 contexts runnable",
                         "figure": "median over rounds of process CPU time (getrusage) "
                                   "per hand-off"},
              "series": series, "runs": runs}
    cli.emit(result, a, "handoff")
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="handoff",
    measures="CPU time per hand-off, m kernel threads against m fibers in pairs on one CPU",
    claims=("C15",),
    binaries=("handoff-scale",),
    output="handoff.json",
    presets={
        # The full preset's ends (2 and 10,000): up to 2,048 neither of the two shapes C15
        # weighs fits better (R^2 linear minus logarithmic about 0, intervals from -0.05 to
        # 0.10 in two quick runs), and the rise past 4,096 is what tells them apart (0.24 with
        # 10,000 in place of 2,048, one run here; the full run 0.28).
        "quick": ["--levels", "2,16,256,10000", "--rounds", "5", "--seconds", "0.15"],
        "full": ["--levels", "2,4,16,64,256,1024,4096,10000", "--rounds", "5",
                  "--seconds", "1"],
    },
    budget_s={"quick": 20, "full": 100},
    budgeted=True,
    # At its least: three rounds (results/notes/harness.md).
    least_s={"quick": 17},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(main())
