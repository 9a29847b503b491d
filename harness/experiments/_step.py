"""What every experiment's run function shares: its declaration, the suite's context, running a
program with its output in the suite's log, and the record of a failed step. Not an experiment
(the underscore keeps it out of the registry's names)."""
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from lib import meta
from lib.meta import write_json

ROOT = meta.REPO_ROOT
PY = "/usr/bin/python3"
# Progress lines of the drivers that the suite passes through to the terminal: a driver's
# bracketed or named progress, round lines and "not run" reasons.
PROGRESS = re.compile(r"\s*(\[[a-z_]+|  round|[a-z_]+(\.py)?: |[a-z ]+ round|profile|"
                      r"not run)")


@dataclass(frozen=True)
class Experiment:
    name: str                     # the step's name, its file's name and --only's word
    measures: str                 # one line: what it measures
    claims: tuple                 # the claims its figures feed ("C13")
    binaries: tuple               # programs it needs in the build's bin/
    output: str                   # the file it writes into the run folder
    budget_s: dict                # {preset: seconds the step may take}
    run: Callable                 # run(ctx, experiment) -> status ("ok", "failed: ...")
    presets: Optional[dict] = field(default=None)  # {preset: size knobs}, None: no knobs
    # The driver sizes itself to budget_s (it takes --budget-s); otherwise budget_s is what
    # its fixed size was measured to take, and the suite records a step that overran it.
    budgeted: bool = False
    # It times something (the suite waits for the calibration probe before it); counting
    # steps (instructions, properties) need no quiet machine.
    times: bool = True
    # {preset: the seconds a budgeted step takes at its least (its minimum rounds, whatever
    # its budget) on the machine its budget was sized on}; a preset not named: unknown, 0.
    # A fixed step's least is its budget.
    least_s: Optional[dict] = field(default=None)

    def preset(self, name):
        return (self.presets or {}).get(name)


class Ctx:
    """One suite run: the preset, the build folders, the run folder and the log."""

    def __init__(self, preset, build_dir, cross_build_dir, run_dir, tmp):
        self.preset = preset
        self.build = Path(build_dir).resolve()
        self.bin = self.build / "bin"
        self.cross_build = Path(cross_build_dir).resolve()
        self.dir = Path(run_dir)
        self.tmp = tmp
        self.log = self.dir / "suite.log"
        self._meta = None
        self.budgets = {}  # step -> the seconds the suite's plan gives it (lib/budget.SuitePlan)

    def budget(self, exp):
        """The seconds experiment `exp` may take in this run: the suite's plan, else declared."""
        return self.budgets.get(exp.name, exp.budget_s[self.preset])

    def meta(self):
        if self._meta is None:
            self._meta = meta.collect(ROOT, self.build)
        return dict(self._meta, date=meta.date_utc())


def say(msg):
    print(f"[suite] {msg}", flush=True)


def run(cmd, log, timeout, env=None):
    """Runs a program with its output teed into the log; returns the exit status (or None on a
    timeout). Progress lines of the drivers are passed through so the user sees them. env:
    variables added to the suite's environment for this program alone."""
    say("$ " + " ".join(str(c) for c in cmd))
    with open(log, "a") as lf:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                env=dict(os.environ, **env) if env else None)
        deadline = time.monotonic() + timeout
        for line in proc.stdout:
            lf.write(line)
            if PROGRESS.match(line):
                print("    " + line.rstrip(), flush=True)
            if time.monotonic() > deadline:
                proc.kill()
                lf.write(f"suite: killed after {timeout} s\n")
                proc.wait()
                return None
        return proc.wait()


def fail(ctx, name, reason):
    """The record of a step that failed, in its own output file, so the report can say why."""
    write_json(ctx.dir / f"{name}.json", {"experiment": name, "meta": ctx.meta(),
                                          "status": "failed", "reason": reason,
                                          "log": "suite.log"})
    return "failed: " + reason


def full_only(why, step):
    """The run function of an experiment the quick preset leaves out (no verdict reads it, or
    it costs more than the quick suite has): in quick, its output file says "not run" and why;
    in full, `step` measures."""
    def run_step(ctx, exp):
        if ctx.preset == "quick":
            write_json(ctx.dir / exp.output, {"experiment": exp.name, "meta": ctx.meta(),
                                              "status": "not run", "reason": why})
            return "not run: " + why
        return step(ctx, exp)
    run_step.quick_skips = True  # the suite waits for no calibration before it in quick
    return run_step


def module_cmd(name):
    """The command that runs experiment NAME's driver: its module, found through the
    PYTHONPATH run.sh and CTest set (harness/ and plots/)."""
    return [PY, "-m", f"experiments.{name}"]


def driver(timeout=3600):
    """The run function of an experiment measured by its own module's driver: the module with
    the build folder, the preset's arguments and --out-file into the run folder."""
    def step(ctx, exp):
        out = ctx.dir / exp.output
        budget = ["--budget-s", ctx.budget(exp)] if exp.budgeted else []
        rc = run([*module_cmd(exp.name), "--build-dir", ctx.build,
                  *(exp.preset(ctx.preset) or []), *budget, "--out-file", out], ctx.log,
                 timeout)
        if not out.exists():
            return fail(ctx, exp.name,
                        f"experiments/{exp.name}.py exited {rc} without writing {out.name}")
        return "ok" if rc == 0 else f"exit {rc}"
    return step


def counted(args, timeout):
    """The run function of an experiment whose driver writes JSON without the run's meta block
    (instruction counts): its result filed with the experiment's name and the meta block."""
    def step(ctx, exp):
        out = Path(ctx.tmp) / exp.output
        rc = run([*module_cmd(exp.name), *args(ctx), "--out-file", out], ctx.log, timeout)
        if rc != 0 or not out.exists():
            return fail(ctx, exp.name, f"experiments/{exp.name}.py exited {rc}")
        data = json.loads(out.read_text())
        data.update(experiment=exp.name, meta=ctx.meta())
        write_json(ctx.dir / exp.output, data)
        return "ok"
    return step
