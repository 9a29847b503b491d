#!/usr/bin/python3
"""suite.py - runs every Switchyard experiment into ONE run folder, then the charts and report.

    /usr/bin/python3 harness/suite.py quick|full [--reference] [--build-dir build]
                                     [--only STEP,...] [--skip STEP,...] [--run-dir DIR]
    /usr/bin/python3 harness/suite.py --list

./run.sh sets the PYTHONPATH this needs (harness/ and plots/). The steps are the experiments
of the registry (harness/experiments/: one module each, run in the order of
harness/experiments/__init__.py), each writing one JSON file with a `meta` block into
the run folder, then `report`: charts (PNG, SVG) and REPORT.md (plots/report.py). `--list`
prints the step names, one a line; `--help` lists them with what each measures.

`quick` aims at five minutes on a 2-core machine (measured: plots/README.md) and reaches a
verdict on every claim (fewer repetitions, shorter points); `full` runs every experiment at
full size. A step that fails is recorded as failed (the report then says "not run" for what
depended on it) and the suite goes on. On a machine too slow for the steps still to come to
keep to the run's total even at their least, whole steps are left out (experiments.SHED's
order) and recorded "not run" with the reason. Results go to
results/runs/<host>/<UTC date>-<sha>/, or with --reference to results/reference/ (replaced).

One run measures on a machine at a time: a second one refuses while the first holds the lock
(suite_guard.py). SIGTERM, SIGINT or SIGHUP stops every process the run started and leaves
suite.json with status "interrupted" beside the outputs of the steps that finished; a run
folder that cannot be written stops the run the same way. Exit status: 0 every step ok (or
left out by the preset), 1 a step failed or the run folder could not be written, 2 usage,
3 another run holds the lock, 128 + N stopped by signal N.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import experiments
from lib import budget as B, host_pace, meta, probe, runnable
from lib import suite_guard as guard
from experiments._step import PY, ROOT, Ctx, fail, run, say

EXPERIMENTS = experiments.load()
PRESET_NAMES = ("quick", "full")
# The report is the last step, not an experiment: it reads what the experiments wrote. A quick
# run's took 9.4-13.4 s on the 2-core AMD EPYC VM with two processes drawing the charts.
REPORT = "report"
REPORT_BUDGET_S = {"quick": 14, "full": 30}
# Before a step, the runnable-task count must come back to within this of the suite's
# starting baseline (an earlier step's threads and processes winding down), or this many
# seconds pass.
SETTLE_SLACK, SETTLE_TIMEOUT_S = 1, 60
# Before a step that times, the calibration probe (lib/probe.py) must be back within its
# tolerance of the run's start, or this many seconds pass; all the waits of a run together at
# most the second figure (a machine that stays slow is measured anyway, and says so).
CALIBRATE_TIMEOUT_S = {"quick": 8, "full": 60}
CALIBRATE_TOTAL_S = {"quick": 20, "full": 300}
STEPS = [e.name for e in EXPERIMENTS] + [REPORT]
# What a preset's steps may take together (lib/budget.SuitePlan): the budgeted steps shrink, in
# proportion, when the fixed ones run slower than declared. For a suite started by hand: the
# run's total (RUN_BUDGET_S) less the 22-25 s an incremental build and setup check took on the
# 2-core AMD EPYC VM, and 5 s to spare (a suite of 336 s made ./run.sh 6m01s there).
SUITE_BUDGET_S = {"quick": 330, "full": 4470}
# What ./run.sh may take as a whole, its setup check and its build included: a fresh clone's
# first build (about 65 s on the AMD EPYC VM, the aarch64 cross build in it) comes out of the
# suite's share, not on top of the 6 (75) minutes. run.sh passes its start (--started-at); a
# suite started by hand has SUITE_BUDGET_S. RUN_SPARE_S is kept at the end.
RUN_BUDGET_S = {"quick": 360, "full": 75 * 60}
RUN_SPARE_S = 5
# The least a suite is given, however long ./run.sh took before it (a setup installing
# packages): below it the budgeted steps fall to their minimums and decide little, so such a
# run goes over its total instead, and says by how much.
SUITE_FLOOR_S = {"quick": 240, "full": 3600}
# Exit statuses besides 0 (every step ok or left out by the preset) and 2 (usage); a stop
# signal N gives 128 + N.
EXIT_FAILED = 1  # a step failed, or the run folder could not be made or written
EXIT_BUSY = 3    # another suite run holds the machine's lock
# Every size knob per preset, as the experiments declare them, so the report can quote what
# was run.
PRESETS = {p: {e.name: e.preset(p) for e in EXPERIMENTS if e.presets} for p in PRESET_NAMES}


def load_sampler():
    """The 1-minute load average every few seconds while the suite runs, so the report can say
    how busy the machine was during the measurements, not only between them."""
    return runnable.Sampler(every=5.0, read=lambda: (meta.loadavg() or [None])[0])


def loadavg_during(sampler):
    """suite.json's `loadavg_during` from the load-average sampler (None before a sample)."""
    s = sampler.summary()
    if not s["samples"]:
        return None
    return {"every_s": s["every_s"], "samples": s["samples"], "max_1min": s["max"],
            "mean_1min": s["mean"]}


def step_report(ctx):
    rc = run([PY, ROOT / "plots" / "report.py", ctx.dir], ctx.log, 600)
    return "ok" if rc == 0 else f"report.py exited {rc}"


def experiment(step):
    """The registry's declaration of experiment `step`."""
    return next(e for e in EXPERIMENTS if e.name == step)


def budget(step, preset):
    """The seconds a step may take in a preset: a budgeted driver sizes itself to it, the
    others were measured to fit it."""
    if step == REPORT:
        return REPORT_BUDGET_S[preset]
    return experiment(step).budget_s[preset]


def budgeted(step):
    """Whether the step sizes itself to the budget it is given."""
    return step != REPORT and experiment(step).budgeted


def least(step, preset):
    """The seconds a step takes at its least on the machine its budget was sized on: a fixed
    step its budget, a budgeted one its declared least (0 when it declares none for the
    preset), a step the preset leaves out nothing."""
    if step == REPORT:
        return REPORT_BUDGET_S[preset]
    exp = experiment(step)
    if preset == "quick" and getattr(exp.run, "quick_skips", False):
        return 0.0
    if not exp.budgeted:
        return exp.budget_s[preset]
    return (exp.least_s or {}).get(preset, 0.0)


def plan_steps(steps, preset):
    """lib/budget.SuitePlan's steps: (name, declared seconds, budgeted, least seconds)."""
    return [(s, budget(s, preset), budgeted(s), least(s, preset)) for s in steps]


def left_out(ctx, step, why):
    """Records that the plan left step `step` out of this run: its output file says "not run"
    and why, as the steps a preset leaves out do."""
    exp = experiment(step)
    meta.write_json(ctx.dir / exp.output, {"experiment": exp.name, "meta": ctx.meta(),
                                           "status": "not run", "reason": why})
    say(f"step {step}: not run: {why}")
    return {"status": "not run: " + why, "seconds": 0.0, "budget_s": None,
            "declared_budget_s": budget(step, ctx.preset), "over_budget": False,
            "calibration": None, "left_out": True}


def times(step, preset):
    """Whether the step times anything in this preset (a step the quick preset leaves out
    measures nothing there, and waits for no probe)."""
    if step == REPORT:
        return False
    exp = experiment(step)
    return exp.times and not (preset == "quick" and getattr(exp.run, "quick_skips", False))


def calibrate(record, step, preset):
    """Waits, before a step that times, until the calibration probe is back near the run's
    start; returns the step record's `probe` block."""
    ref = record.get("probe_reference") or {}
    start = ref.get("probe")
    if not times(step, preset) or not start:
        return None
    spent = sum((r.get("calibration") or {}).get("waited_s", 0) for r in record["steps"].values())
    timeout = max(0.0, min(CALIBRATE_TIMEOUT_S[preset], CALIBRATE_TOTAL_S[preset] - spent))
    waited, now, settled = probe.wait_calibrated(start, ref["tolerance"], timeout)
    if not settled:
        say(f"step {step}: the calibration probe is still {probe.slower(now, start)} of the "
            f"start's after {waited:.0f} s; measuring anyway")
    return {"waited_s": waited, "settled": settled, "probe": now,
            "over_start": probe.slower(now, start)}


def csv_steps(text):
    """A comma list of step names; an empty list or name, or one named twice, is refused
    rather than read as every step or run twice."""
    items = [x.strip() for x in text.split(",")]
    valid = f"(valid: {', '.join(STEPS)})"
    if not any(items):
        raise argparse.ArgumentTypeError(f"an empty list of steps {valid}")
    if "" in items:
        raise argparse.ArgumentTypeError(f"an empty step name in {text!r}")
    bad = [x for x in items if x not in STEPS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown step {', '.join(bad)} {valid}")
    twice = sorted({x for x in items if items.count(x) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"step named twice: {', '.join(twice)}")
    return items


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line (the full usage is --help's)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def step_table():
    rows = [f"  {e.name:16} {e.measures}" + (f" ({', '.join(e.claims)})" if e.claims else "")
            for e in EXPERIMENTS]
    return "steps:\n" + "\n".join(rows) + f"\n  {REPORT:16} charts and REPORT.md (plots/report.py)"


def parse_args(argv):
    ap = OneLineParser(prog="suite.py", description=__doc__.split("\n\n")[0],
                       epilog=step_table(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("preset", nargs="?", choices=PRESET_NAMES)
    ap.add_argument("--list", action="store_true", help="print the step names, one a line")
    ap.add_argument("--lock-path", action="store_true",
                    help=f"print the machine's suite lock file ({guard.LOCK_ENV} or "
                         f"{guard.DEFAULT_LOCK})")
    ap.add_argument("--reference", action="store_true",
                    help="write into results/reference/ (replacing it) instead of results/runs/")
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--cross-build-dir", default=str(ROOT / "build-aarch64"),
                    help="the aarch64 cross build, for the switch_emulated step")
    ap.add_argument("--run-dir", help="write into this folder (created if missing)")
    ap.add_argument("--only", type=csv_steps, help=f"comma list of steps ({','.join(STEPS)})")
    ap.add_argument("--skip", type=csv_steps, default=[], help="comma list of steps to skip")
    ap.add_argument("--started-at", type=epoch_seconds, metavar="EPOCH",
                    help="when ./run.sh started (seconds since the epoch): the suite's total "
                         "is then the run's (quick 6 minutes, full 75) less what it spent "
                         "before the suite")
    a = ap.parse_args(argv)
    if not a.list and not a.lock_path and not a.preset:
        ap.error(f"a preset is required ({' or '.join(PRESET_NAMES)})")
    return a


def prepare_run_dir(a):
    if a.run_dir:
        d = Path(a.run_dir)
        d.mkdir(parents=True, exist_ok=True)
        return d
    if a.reference:
        d = ROOT / "results" / "reference"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        return d
    return meta.new_run_dir(ROOT / "results" / "runs", meta.collect(ROOT))


def run_step(ctx, name):
    if name == REPORT:
        return step_report(ctx)
    exp = experiment(name)
    return exp.run(ctx, exp)


def failed_steps(record):
    """Steps that neither measured nor were left out by the preset's design ("not run: ...")."""
    return [s for s, r in record["steps"].items()
            if r["status"] != "ok" and not r["status"].startswith("not run")]


def suite_total(preset, started_at, now):
    """(the seconds the suite may take, the seconds ./run.sh spent before it or None, a note
    when the run cannot keep to its total or None) for a suite starting at wall time `now`,
    from a ./run.sh that started at `started_at` (None: suite.py was started by hand)."""
    run_s, floor = RUN_BUDGET_S[preset], SUITE_FLOOR_S[preset]
    if started_at is None:
        return SUITE_BUDGET_S[preset], None, None
    before = max(0.0, now - started_at)
    total = run_s - RUN_SPARE_S - before
    if total >= floor:
        return round(total, 1), round(before, 1), None
    return floor, round(before, 1), (
        f"./run.sh spent {before:.0f} s before the suite (setup, build): the suite takes "
        f"{floor} s, the least its steps decide with, so the run goes at least "
        f"{floor - total:.0f} s over its {run_s} s (more where the steps' least rounds take "
        "longer than that on this machine)")


def epoch_seconds(text):
    """--started-at: the wall-clock second ./run.sh started at (its $EPOCHREALTIME)."""
    try:
        t = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time in seconds since the epoch: {text!r}")
    now = time.time()
    if not now - 86400 <= t <= now + 1:
        raise argparse.ArgumentTypeError(f"{text} is not within the last day")
    return t


def start_record(a, steps):
    """suite.json's fields known before anything is measured."""
    return {"experiment": "suite", "preset": a.preset, "reference": a.reference,
            "status": "running",
            "presets": PRESETS[a.preset],
            # What the full preset would run, so a reduced run's report can say per claim
            # what a full run changes.
            "full_presets": PRESETS["full"],
            "loadavg_start": meta.loadavg(), "steps": {},
            "budgets": {s: budget(s, a.preset) for s in steps}}


def reference_state(record, build_dir):
    """The machine's state before the first step, into the record."""
    # procs_running at the start, nothing of the suite measuring yet.
    record["runnable_baseline"] = runnable.baseline(20, 0.05)
    # The calibration probe with nothing of the suite run yet: what "back to the state the
    # run started in" means for the steps after, and how far the machine moves on its own
    # (the tolerance).
    record["probe_reference"] = probe.reference()
    # The host's pace on each CPU a step may watch (the switch step watches up to
    # MAX_WATCHED), for the steps' watches to begin from (lib/host_pace.Watch): the steps run
    # as children, so the environment carries it.
    cpus = sorted(os.sched_getaffinity(0))[:host_pace.MAX_WATCHED]
    floors = record["host_pace_floor"] = host_pace.start_floors(build_dir, cpus)
    if floors:
        os.environ[host_pace.FLOOR_ENV] = host_pace.floor_text(floors)


def run_one(ctx, record, s, preset, planned):
    """Measures one step after the machine settled, given `planned` seconds (its budget,
    declared); returns its record entry."""
    # Step isolation: wait until what an earlier step started has wound down, before a step
    # that times (a count, a build of charts or a step the preset leaves out needs no quiet
    # machine, and the wait's three readings cost 0.4 s each time).
    waited, before, settled = runnable.wait_settled(
        record["runnable_baseline"], SETTLE_SLACK, SETTLE_TIMEOUT_S) \
        if times(s, preset) else (0.0, runnable.now(), True)
    if not settled:
        say(f"step {s}: {before} tasks still runnable after {waited:.0f} s "
            f"(baseline {record['runnable_baseline']}); measuring anyway")
    calibrated = calibrate(record, s, preset)
    t0 = time.monotonic()
    sampler_r = runnable.Sampler()
    sampler_r.start()
    try:
        status = run_step(ctx, s)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        status = fail(ctx, s, f"{type(e).__name__}: {e}")
    during = sampler_r.stop()
    guard.reap()  # orphans a driver left that have exited since
    took = round(time.monotonic() - t0, 1)
    limit, declared = planned
    say(f"step {s}: {status} in {fmt(took)} (budget {fmt(limit)}"
        + (f" of the declared {fmt(declared)}" if limit != declared else "")
        + (", OVER" if took > limit else "") + ")")
    return {"status": status, "seconds": took, "budget_s": limit, "declared_budget_s": declared,
            "over_budget": took > limit, "calibration": calibrated,
            "loadavg_after": meta.loadavg(), "runnable_before": before, "waited_s": waited,
            "settled": settled, "runnable_max": during["max"], "runnable_mean": during["mean"]}


def run_suite(a, steps, state):
    """Every step into the run folder; `state` keeps the folder, the record and the step under
    way for a stop. Returns the exit status."""
    state["dir"] = run_dir = prepare_run_dir(a)
    state["record"] = record = start_record(a, steps)
    # Written before anything is measured: a folder that cannot hold it stops the run here,
    # and a run stopped from now on has a record saying so.
    guard.write_record(run_dir / "suite.json", record)
    reference_state(record, a.build_dir)
    total, before, over = suite_total(a.preset, a.started_at, time.time())
    plan = B.SuitePlan(plan_steps(steps, a.preset), total, experiments.SHED)
    # Every preset has a total (suite_total), so the plan's is never None here.
    say(f"{a.preset} suite: {', '.join(steps)} -> {run_dir} (budget "
        f"{fmt(sum(budget(s, a.preset) for s in steps))}; the suite's {fmt(total)}"
        + (f", ./run.sh's {fmt(RUN_BUDGET_S[a.preset])} less the {before:.0f} s before it"
           if before is not None else "")
        + ", the budgeted steps shrinking when the others run slow)")
    if over:
        say(over)
    record.update(suite_budget_s=total, run_budget_s=RUN_BUDGET_S[a.preset],
                  run_before_suite_s=before, run_over_budget=over)
    started = state["started"] = time.monotonic()
    sampler = load_sampler()
    sampler.start()
    with tempfile.TemporaryDirectory(prefix="suite-") as tmp:
        ctx = Ctx(a.preset, a.build_dir, a.cross_build_dir, run_dir, tmp)
        record["meta"] = ctx.meta()
        for i, s in enumerate(steps, 1):
            record["loadavg_during"] = loadavg_during(sampler)
            if s == REPORT:  # the report reads suite.json: finish the record first
                record.update(loadavg_end=meta.loadavg(),
                              seconds=round(time.monotonic() - started, 1))
                guard.write_record(run_dir / "suite.json", record)
            elapsed = time.monotonic() - started
            why = plan.out(s, elapsed)
            if why:
                record["steps"][s] = left_out(ctx, s, why)
                guard.write_record(run_dir / "suite.json", record)
                continue
            planned = plan.budget(s, elapsed)
            ctx.budgets[s] = planned[0]
            say(f"step {i}/{len(steps)}: {s} (elapsed {fmt(elapsed)}, "
                f"about {fmt(plan.left(elapsed))} left)")
            state["step"] = s
            record["steps"][s] = r = run_one(ctx, record, s, a.preset, planned)
            plan.finished(s, r["seconds"],
                          r["waited_s"] + ((r["calibration"] or {}).get("waited_s") or 0.0))
            state["step"] = None
            if s != REPORT:
                record["loadavg_end"] = meta.loadavg()
                record["seconds"] = round(time.monotonic() - started, 1)
                guard.write_record(run_dir / "suite.json", record)
    sampler.stop()
    record["status"] = "done"
    guard.write_record(run_dir / "suite.json", record)
    say(f"done in {fmt(time.monotonic() - started)}; load average at start "
        f"{record['loadavg_start']}, at end {record['loadavg_end']}")
    report = run_dir / "REPORT.md"
    say(f"report: {report if report.exists() else 'not written (see suite.log)'}")
    bad = failed_steps(record) + ([] if REPORT not in steps or report.exists() else [REPORT])
    if bad:
        print(f"suite: {len(bad)} step(s) failed: {', '.join(sorted(set(bad)))} "
              f"(suite.json and suite.log in {run_dir})", file=sys.stderr)
        return EXIT_FAILED
    return 0


def stopped(state, status, why, code):
    """Ends a run that could not go on: its processes stopped, suite.json saying so beside
    what the finished steps wrote, one line on standard error; returns `code`."""
    guard.ignore_signals()
    left = guard.stop_descendants()
    line = f"suite: {why}"
    rec, d = state.get("record"), state.get("dir")
    if rec is not None:
        rec.update(status=status, stopped_by=why, stopped_step=state.get("step"),
                   seconds=round(time.monotonic() - state["started"], 1))
        try:
            guard.write_record(d / "suite.json", rec)
            line += f"; suite.json in {d} records the {len(rec['steps'])} step(s) that finished"
        except OSError as e:
            line += f"; suite.json in {d} not updated ({e.strerror})"
    elif d is not None:
        line += f"; nothing measured yet in {d}"
    if left:
        line += f"; processes still alive: {' '.join(map(str, left))}"
    print(line, file=sys.stderr, flush=True)
    return code


def main(argv=None):
    a = parse_args(argv)
    if a.list:
        print("\n".join(STEPS))
        return 0
    if a.lock_path:
        print(guard.lock_path())
        return 0
    steps = [s for s in (a.only or STEPS) if s not in a.skip]
    if not steps:
        print("suite: --skip leaves no step to run", file=sys.stderr)
        return 2
    build = Path(a.build_dir)
    needed = sorted({b for e in EXPERIMENTS if e.name in steps for b in e.binaries})
    for exe in needed:
        if not (build / "bin" / exe).is_file():
            print(f"suite: {build / 'bin' / exe} is missing: build first (./run.sh build)",
                  file=sys.stderr)
            return 2
    try:
        guard.take_lock()
    except guard.Busy as e:
        print(f"suite: {e}; not starting a second", file=sys.stderr)
        return EXIT_BUSY
    except OSError as e:
        print(f"suite: cannot take the suite lock {guard.lock_path()}: {e.strerror}",
              file=sys.stderr)
        return EXIT_FAILED
    guard.become_subreaper()
    guard.on_signals()
    state = {"started": time.monotonic()}
    try:
        return run_suite(a, steps, state)
    except guard.Interrupted as e:
        where = f" during step {state['step']}" if state.get("step") else ""
        return stopped(state, "interrupted", f"interrupted by {e.name}{where}", 128 + e.signum)
    except OSError as e:  # the run folder cannot be made or written: nothing more to record
        what = f"{e.filename}: " if e.filename else ""
        return stopped(state, "stopped", f"stopped: {what}{e.strerror or e}", EXIT_FAILED)


def fmt(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


if __name__ == "__main__":
    sys.exit(main())
