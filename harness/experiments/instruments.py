#!/usr/bin/python3
"""instruments.py - independent instruments beside our own figures, in the same run.

Three instruments that share none of our timing code measure what three of our figures
measure, so a reader can see whether our harness agrees with someone else's:

  perf_sched_pipe     `perf bench sched pipe -T -l N` pinned to one CPU: two threads of one
                      process bounce a byte over two pipes. perf reports usecs per round trip;
                      the JSON also gives ns per one-way hand-off (half of it), the unit of
                      handoff.json (m=2) and of switch-bench's kernel/thread_pingpong/same_cpu.
  perf_syscall_basic  `perf bench syscall basic -l N`: getppid() in a loop, ns per call, beside
                      switch-bench's syscall/getppid.
  minimal_loop/<b>    build/bin/minimal-switch-loop: N switches of backend b timed by a plain
                      loop on the thread's CPU clock, no benchmark library, beside
                      switch-bench's switch/<b>.

Every instrument runs once per round, --rounds rounds, in an order rotated each round (the
instruments alternate; nothing else runs meanwhile), all pinned to --cpu. Per instrument the
JSON keeps every sample, their median and the 95% bootstrap interval of the median
(harness/lib/stats.py). An instrument that cannot run here (perf not installed, a `perf bench`
subcommand this perf lacks, the binary not built) is recorded as `not run` with perf's or
the system's own reason. The driver measures and never judges: the report
(plots/sections/instruments.py) sets these beside our figures.

perf bench has no machine-readable output: its figure is read from the one line ending in
`usecs/op`, and a run without that line counts as a failure, never as a number.

    /usr/bin/python3 harness/experiments/instruments.py [--rounds 5] [--cpu 0] [--pipe-loops 100000]
        [--syscall-loops 2000000] [--switch-loops 1000000] [--perf perf]
        [--build-dir build] [--out-file instruments.json]
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from lib import cli, cpu, meta, rounds, stats
from experiments._step import Experiment, driver, full_only

PER_OP = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s+usecs/op\s*$", re.M)
NOT_RUN, FAILED, OK = "not run", "failed", "ok"


def parse_args(argv):
    ap = cli.parser("instruments.py", __doc__, rounds=5, pin=False)
    ap.add_argument("--cpu", default="0", help="the CPU every instrument is pinned to")
    ap.add_argument("--pipe-loops", type=int, default=100000,
                    help="round trips per perf bench sched pipe run")
    ap.add_argument("--syscall-loops", type=int, default=2000000,
                    help="getppid calls per perf bench syscall basic run")
    ap.add_argument("--switch-loops", type=int, default=1000000,
                    help="round trips (2 switches each) per backend per minimal-switch-loop run")
    ap.add_argument("--perf", default="perf", help="the perf program (default: perf on PATH)")
    a = ap.parse_args(argv)
    if a.rounds < 1 or min(a.pipe_loops, a.syscall_loops, a.switch_loops) < 1:
        ap.error("--rounds and the loop counts must be at least 1")
    return a


def last_line(*texts):
    for t in texts:
        lines = [x.strip() for x in (t or "").splitlines() if x.strip()]
        if lines:
            return lines[-1]
    return ""


def run(cmd, timeout):
    """(exit status, stdout, stderr); status None when the program could not start or timed
    out, stderr then saying why."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except OSError as e:
        return None, "", str(e)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"
    return p.returncode, p.stdout, p.stderr


class PerfBench:
    """One `perf bench` subcommand: its samples, converted from usecs/op by `scale`."""

    def __init__(self, name, args, loops, unit, scale, raw_unit, measures):
        self.name, self.args, self.loops = name, args, loops
        self.unit, self.scale, self.raw_unit, self.measures = unit, scale, raw_unit, measures

    def command(self, a):
        return cpu.pinned([a.perf_path, "bench", *self.args, "-l", str(self.loops)], a.cpu)

    def sample(self, a):
        """(value, raw value) or (None, reason)."""
        rc, out, err = run(self.command(a), timeout=60 + self.loops * 1e-4)
        m = PER_OP.search(out or "")
        if rc != 0 or not m:
            why = last_line(err, out) or f"exit {rc}"
            return None, f"perf bench {' '.join(self.args)}: {why}"
        raw = float(m.group(1))
        return raw * self.scale, raw


class MinimalLoop:
    """minimal-switch-loop for one backend: ns per switch on the thread's CPU clock."""

    unit, raw_unit = "ns per switch", None

    def __init__(self, exe, backend, loops):
        self.exe, self.backend, self.loops = exe, backend, loops
        self.name = f"minimal_loop/{backend}"
        self.measures = (f"{2 * loops} switches of backend {backend} (sw_jump_direct) timed "
                         "with CLOCK_THREAD_CPUTIME_ID around a plain loop")

    def command(self, a):
        return cpu.pinned([self.exe, "--loops", self.loops, "--backend", self.backend], a.cpu)

    def sample(self, a):
        rc, out, err = run(self.command(a), timeout=120)
        try:
            r = json.loads(out.strip().splitlines()[-1])["backends"][self.backend]
        except (IndexError, KeyError, json.JSONDecodeError):
            return None, f"minimal-switch-loop: {last_line(err) or f'exit {rc}'}"
        if r.get("status") != OK:
            return None, f"minimal-switch-loop: {r.get('reason', r.get('status'))}"
        return r["ns_per_switch"], None


def switch_backends(exe):
    """The backends minimal-switch-loop was built with (its own JSON, a one-loop run), or
    (None, reason)."""
    if not Path(exe).exists():
        return None, f"{exe} not built"
    rc, out, err = run([str(exe), "--loops", "1"], timeout=30)
    try:
        return list(json.loads(out.strip().splitlines()[-1])["backends"]), None
    except (IndexError, KeyError, json.JSONDecodeError):
        return None, f"minimal-switch-loop: {last_line(err) or f'exit {rc}'}"


def plan(a):
    """({name: instrument}, {name: not-run reason}) in the order they run in round 0."""
    todo, skipped = {}, {}
    a.perf_path = shutil.which(a.perf)
    perf = [PerfBench("perf_sched_pipe", ["sched", "pipe", "-T"], a.pipe_loops,
                      "ns per one-way hand-off", 1000.0 / 2, "usecs per round trip",
                      "two threads of one process bounce a byte over two pipes, one round "
                      "trip = two one-way hand-offs (write wakes the peer, read blocks)"),
            PerfBench("perf_syscall_basic", ["syscall", "basic"], a.syscall_loops,
                      "ns per getppid", 1000.0, "usecs per getppid",
                      "getppid() in a loop, wall time over the loop")]
    for p in perf:
        if a.perf_path:
            todo[p.name] = p
        else:
            skipped[p.name] = f"perf not installed ({a.perf!r} not found on PATH)"
    exe = Path(a.build_dir) / "bin" / "minimal-switch-loop"
    names, why = switch_backends(exe)
    if names is None:
        skipped["minimal_loop"] = why
    for b in names or []:
        todo[f"minimal_loop/{b}"] = MinimalLoop(str(exe), b, a.switch_loops)
    return todo, skipped


def summary(inst, samples, raws, reason, a):
    """One instrument's entry of the JSON."""
    out = {"status": OK if samples and not reason else (FAILED if samples else NOT_RUN),
           "command": " ".join(str(c) for c in inst.command(a)), "measures": inst.measures,
           "unit": inst.unit, "samples": samples}
    if reason:
        out["reason"] = reason
    if samples:
        low, high = stats.bootstrap_ci(samples, stats.median, 0.95)
        out.update(median=stats.median(samples), ci95=[low, high], n=len(samples))
    if inst.raw_unit:
        out.update(raw_unit=inst.raw_unit, raw_samples=raws)
    return out


def main(argv=None):
    a = parse_args(argv)
    say = cli.reporter(a)
    todo, skipped = plan(a)
    samples = {n: [] for n in todo}
    raws = {n: [] for n in todo}
    reasons, runs = {}, []
    for rnd, name in rounds.interleaved(a.rounds, list(todo)):
        if name in reasons:
            continue
        value, extra = todo[name].sample(a)
        if value is None:
            reasons[name] = extra
            say(f"[instruments round {rnd + 1}/{a.rounds}] {name}: "
                + (f"not run: {extra}" if not samples[name] else f"failed: {extra}"))
            continue
        samples[name].append(value)
        raws[name].append(extra)
        runs.append({"round": rnd, "instrument": name, "value": value, "raw": extra,
                     "loadavg": meta.loadavg()})
        say(f"[instruments round {rnd + 1}/{a.rounds}] {name:28} {value:10.2f} "
            f"{todo[name].unit}")
    instruments = {n: summary(i, samples[n], raws[n], reasons.get(n), a)
                   for n, i in todo.items()}
    for n, why in skipped.items():
        instruments[n] = {"status": NOT_RUN, "reason": why, "samples": []}
    perf_version = None
    if a.perf_path:
        rc, out, _ = run([a.perf_path, "--version"], timeout=10)
        perf_version = out.strip() if rc == 0 else None
    result = {"experiment": "instruments",
              "meta": meta.collect(meta.REPO_ROOT, a.build_dir,
                                   pinning={"instruments": a.cpu, "tool": "taskset"}),
              "config": {"rounds": a.rounds, "cpu": a.cpu, "pipe_loops": a.pipe_loops,
                         "syscall_loops": a.syscall_loops, "switch_loops": a.switch_loops,
                         "perf": a.perf_path, "perf_version": perf_version,
                         "order": "every instrument once a round, the order rotated each "
                                  "round",
                         "interval": "95% percentile bootstrap of the median over the "
                                     "rounds (harness/lib/stats.py)"},
              "instruments": instruments, "runs": runs}
    cli.emit(result, a, "instruments")
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
# No verdict reads it, and on a 2-core AMD EPYC VM its quick preset took 32 s (8 s on the
# Intel Xeon VM it was sized on): the quick suite spends its minutes on the figures verdicts use.
QUICK_WHY = ("not run in the quick preset (no verdict reads it; 8 to 32 s); the full preset "
             "does")

EXPERIMENT = Experiment(
    name="instruments",
    measures="independent instruments beside C5, C9 and C15's figures (no verdict): perf "
             "bench sched pipe (one CPU), perf bench syscall basic, a minimal switch loop",
    # Set beside the claims' figures in a section of their own; no verdict reads them.
    claims=(),
    binaries=("minimal-switch-loop",),
    output="instruments.json",
    presets={
        "quick": ["--rounds", "5", "--pipe-loops", "50000", "--syscall-loops", "1000000",
                  "--switch-loops", "1000000"],
        "full": ["--rounds", "10", "--pipe-loops", "200000", "--syscall-loops", "5000000",
                 "--switch-loops", "2000000"],
    },
    # Full: 125 s in the full run on the AMD EPYC VM (e361cd3, 2026-12-05).
    budget_s={"quick": 1, "full": 130},
    run=full_only(QUICK_WHY, driver(timeout=300)),
)


if __name__ == "__main__":
    sys.exit(main())
