#!/usr/bin/python3
"""suite.py - runs every Switchyard experiment into ONE run folder, then the charts and report.

    /usr/bin/python3 harness/suite.py quick|full [--reference] [--build-dir build]
                                     [--only STEP,...] [--skip STEP,...] [--run-dir DIR]

Steps (each writes one JSON file with a `meta` block into the run folder):

  switch    switch-bench: call, syscall, switch, create, sched star/ring, kernel hand-offs
            -> switch.json (Google Benchmark JSON; medians of interleaved repetitions)
  icount    callgrind instructions per switch, create and hop      -> icount.json
  props     syscalls per switch and the guard-page overflow check per backend, the copy-stack
            question (claims C4, C12)                               -> props.json
  asm_count instructions per switch counted from the assembly, per architecture
            (harness/asm_count.py)                                  -> asm_count.json
  switch_emulated  the aarch64 switch-bench (build-aarch64) under qemu-user: EMULATED
            times, never compared with native rows                  -> switch_emulated.json
  engines   naive/merged/oneshot/edge/libevent (harness/engines_bench.py) -> engines.json
  scale     idle connections, churn, readiness vs completion (engines_scale.py) -> scale.json
  sweep     echo servers x load modes x concurrency (harness/sweep.py) -> sweep.json; each
            point reports the ramp-up apart from the steady state, and the kernel's memory
  slow      slow clients (echo-load --mode slow: requests sent in chunks, a think time
            between them) against every model (harness/sweep.py)   -> slow.json
  handoff   CPU time per hand-off, m kernel threads vs m fibers in pairs on one CPU
            (harness/handoff.py, claim C15)                          -> handoff.json
  maxconns  the most connections a fiber server holds on one core, P processes pinned to one
            CPU (harness/maxconns.py, C10; quick: 100,000 in copy mode, full: both modes)
  threads   fiber server with 1 vs 2 scheduler threads (harness/threads_scale.py, C11)
  fibermem  memory per idle fiber, guarded against copy stacks (harness/fibermem.py, C1, C12)
  fiberio   fiber read policies x engines beside the epoll, libevent and thread servers:
            syscalls, epoll_ctl, CPU per request, throughput (harness/fiberio_bench.py, C13)
  hooks     hooked libc calls against direct fiber calls (ns and instructions per call, echo
            CPU per request) and the fiber locks (harness/hooks_bench.py) -> hooks.json
  report    charts (PNG, SVG) and REPORT.md (plots/report.py)

`quick` aims at five minutes on a 2-core machine (measured: plots/README.md) and reaches a
verdict on every claim (fewer repetitions, shorter points; its sweep and slow steps run the
models the claims name, QUICK_MODELS); `full` runs every
experiment at full size. A step that fails is recorded as failed (the report then says
"not run" for what depended on it) and the suite goes on. Results go to
results/runs/<host>/<UTC date>-<sha>/, or with --reference to results/reference/ (replaced).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)

ROOT = meta.REPO_ROOT
PY = "/usr/bin/python3"
STEPS = ["switch", "icount", "props", "asm_count", "switch_emulated",
         "engines", "scale", "sweep", "slow", "maxconns",
         "threads", "handoff", "fibermem", "fiberio", "hooks", "report"]
# The slow clients' pace, the same in both presets: 64 B requests in 16 B chunks 20 ms apart
# (60 ms to send one), then half a second of thinking.
SLOW_LOAD = "--chunk 16 --chunk-delay 0.02 --think 0.5"

QUICK_MODELS = "thread,fork,fiber,libevent,epoll"

# Every size knob per preset, in one place, so the report can quote what was run.
PRESETS = {
    "quick": {
        "switch": {"filter": r"^(call|syscall|switch|create|kernel|copystack)/|"
                             r"^sched/.*/fibers:(2|16|256)$|^sched/(star|ring)/asm/fibers:100000$",
                   "min_time": 0.05, "repetitions": 3},
        "engines": ["--rounds", "1", "--duration", "1", "--warmup", "0.3"],
        "scale": ["--quick"],
        # The models the claims name (C6, C7: thread and fork; the fiber server and the
        # callback yardsticks beside them); the full preset sweeps every model.
        "sweep": ["--models", QUICK_MODELS, "--levels", "1,100,1000,10000", "--duration", "1",
                  "--warmup", "0.3", "--idle-samples", "3"],
        "slow": ["--models", QUICK_MODELS, "--modes", "slow", "--levels", "10,1000",
                 "--duration", "1", "--warmup", "0.3", "--idle-samples", "3", "--load-args",
                 SLOW_LOAD, "--out-name", "slow.json", "--no-perf"],
        "handoff": ["--levels", "2,16,256,2048", "--rounds", "1", "--seconds", "0.3"],
        "maxconns": ["--levels", "100000", "--stacks", "copy", "--duration", "2",
                     "--rate", "1000"],
        "threads": ["--rounds", "1", "--duration", "2"],
        "fibermem": ["--levels", "100000,1000000", "--guarded-levels", "10000,30000"],
        "fiberio": ["--rounds", "1", "--duration", "0.4", "--warmup", "0.2",
                    "--count-requests", "20000", "--conns-large", "0"],
        "hooks": ["--rounds", "2", "--duration", "1", "--warmup", "0.3", "--repetitions", "3",
                  "--min-time", "0.03", "--icount-loops", "1280,12800"],
        "emulated": {"filter": r"^switch/", "min_time": 0.05, "repetitions": 3},
        "estimate_s": {"switch": 30, "icount": 10, "props": 5, "asm_count": 5,
                       "switch_emulated": 5, "engines": 25, "scale": 40,
                       "sweep": 100,
                       "slow": 20, "handoff": 5,
                       "maxconns": 45, "threads": 10, "fibermem": 10, "fiberio": 30, "hooks": 30,
                       "report": 20},
    },
    "full": {
        "switch": {"filter": "", "min_time": 0.1, "repetitions": 5},
        "engines": ["--rounds", "5", "--duration", "3", "--sat-conns", "300"],
        "scale": ["--rounds", "3", "--duration", "1.5"],
        "sweep": ["--duration", "5", "--warmup", "1"],
        "slow": ["--modes", "slow", "--levels", "10,100,1000,10000", "--duration", "5",
                 "--warmup", "1", "--load-args", SLOW_LOAD, "--out-name", "slow.json"],
        "handoff": ["--levels", "2,4,16,64,256,1024,4096,10000", "--rounds", "5",
                    "--seconds", "1"],
        "maxconns": ["--levels", "1000,10000,19900,100000", "--duration", "5",
                     "--rate", "2000"],
        "threads": ["--rounds", "3", "--duration", "4"],
        "fibermem": ["--levels", "100000,1000000", "--guarded-levels", "1000,10000,30000"],
        "fiberio": ["--engines", "all", "--rounds", "5", "--duration", "1",
                    "--count-requests", "30000"],
        "hooks": ["--rounds", "5", "--duration", "3", "--repetitions", "5"],
        "emulated": {"filter": r"^switch/|^sched/.*/fibers:16$", "min_time": 0.1,
                     "repetitions": 5},
        "estimate_s": {"switch": 120, "icount": 10, "props": 5, "asm_count": 5,
                       "switch_emulated": 15, "engines": 240, "scale": 600,
                       "sweep": 1550,
                       "slow": 260, "handoff": 100,
                       "maxconns": 70, "threads": 45, "fibermem": 5, "fiberio": 980, "hooks": 60,
                       "report": 30},
    },
}


def say(msg):
    print(f"[suite] {msg}", flush=True)


class LoadSampler(threading.Thread):
    """Samples the 1-minute load average every few seconds while the suite runs, so the
    report can say how busy the machine was during the measurements, not only between them."""

    def __init__(self, every=5.0):
        super().__init__(daemon=True)
        self.every, self.samples, self.stop = every, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            la = meta.loadavg()
            if la:
                self.samples.append(la[0])
            self.stop.wait(self.every)

    def summary(self):
        if not self.samples:
            return None
        return {"every_s": self.every, "samples": len(self.samples),
                "max_1min": max(self.samples),
                "mean_1min": round(sum(self.samples) / len(self.samples), 2)}


def write_json(path, data):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def run(cmd, log, timeout):
    """Runs a driver with its output teed into the log; returns the exit status (or None on a
    timeout). Progress lines of the drivers are passed through so the user sees them."""
    say("$ " + " ".join(str(c) for c in cmd))
    with open(log, "a") as lf:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        deadline = time.monotonic() + timeout
        for line in proc.stdout:
            lf.write(line)
            if re.match(r"\s*(\[sweep|\[maxconns|\[threads|\[handoff|\[fibermem|  round|"
                        r"engines_bench:|icount:|fiberio_bench:|profile|sweep:|not run)", line):
                print("    " + line.rstrip(), flush=True)
            if time.monotonic() > deadline:
                proc.kill()
                lf.write(f"suite: killed after {timeout} s\n")
                proc.wait()
                return None
        return proc.wait()


# ---- steps --------------------------------------------------------------------------------

def step_switch(ctx):
    p = ctx.preset["switch"]
    raw = Path(ctx.tmp) / "switch-bench.json"
    cmd = [ctx.bin / "switch-bench", f"--benchmark_min_time={p['min_time']}",
           f"--benchmark_repetitions={p['repetitions']}",
           "--benchmark_enable_random_interleaving=true",
           # The file keeps every repetition (the report's noise bands are their range); the
           # console shows only the aggregates.
           "--benchmark_display_aggregates_only=true",
           f"--benchmark_out={raw}", "--benchmark_out_format=json"]
    if p["filter"]:
        cmd.append(f"--benchmark_filter={p['filter']}")
    say(f"switch-bench: {p['repetitions']} interleaved repetitions of every row, "
        f"{p['min_time']} s each; its table prints when all are done")
    rc = run(cmd, ctx.log, 1800)
    if rc != 0 or not raw.exists():
        return fail(ctx, "switch", f"switch-bench exited {rc}")
    data = json.loads(raw.read_text())
    data.update(experiment="switch", meta=ctx.meta(),
                config={"min_time": p["min_time"], "repetitions": p["repetitions"],
                        "filter": p["filter"] or "all rows", "interleaved": True,
                        "aggregates": "median, mean, stddev, cv of the repetitions, and each "
                              "repetition (run_type iteration, repetition_index)"})
    write_json(ctx.dir / "switch.json", data)
    return "ok"


def counted_step(ctx, name, script, args, timeout):
    """A harness script that writes its own JSON (--out): run it, then file its result as
    NAME.json with the experiment's name and the run's meta block."""
    out = Path(ctx.tmp) / f"{name}.json"
    rc = run([PY, ROOT / "harness" / script, *args, "--out", out], ctx.log, timeout)
    if rc != 0 or not out.exists():
        return fail(ctx, name, f"{script} exited {rc}")
    data = json.loads(out.read_text())
    data.update(experiment=name, meta=ctx.meta())
    write_json(ctx.dir / f"{name}.json", data)
    return "ok"


def step_icount(ctx):
    return counted_step(ctx, "icount", "icount.py", ["--bin", ctx.bin], 900)


def step_props(ctx):
    """Syscalls per switch (measured with perf by the switch tests) and the guard-page
    overflow check, for every compiled backend; and whether a copy-stack mode exists, as the
    switch layer declares it (switch-info --list --json: a stack mode that shares stacks)."""
    exe = ctx.bin / "switch-tests"
    info = subprocess.run([ctx.bin / "switch-info"], capture_output=True, text=True, timeout=30)
    listing = json.loads(subprocess.run([ctx.bin / "switch-info", "--list", "--json"],
                                        capture_output=True, text=True, timeout=30,
                                        check=True).stdout)
    names = [m["name"] for m in listing["members"]]
    backends = {}
    for b in names:
        entry = {}
        p = subprocess.run([exe, "syscalls", b], capture_output=True, text=True, timeout=120)
        m = re.search(r"([\d.]+) per switch", p.stdout + p.stderr)
        entry["syscalls_per_switch"] = float(m.group(1)) if m and p.returncode == 0 else None
        entry["syscalls_output"] = (p.stdout + p.stderr).strip().splitlines()[-2:]
        if p.returncode != 0 or not m:
            entry["syscalls_status"] = "not run" if "not run" in p.stdout + p.stderr else "failed"
        o = subprocess.run([exe, "overflow", b], capture_output=True, text=True, timeout=120)
        text = (o.stdout + o.stderr).strip()
        msg = [ln for ln in text.splitlines() if "fiber stack overflow" in ln]
        entry["overflow"] = {"test": f"switch-tests overflow {b}", "exit": o.returncode,
                             "passed": o.returncode == 0 and bool(msg),
                             "message": msg[0] if msg else None,
                             "output": text.splitlines()[-3:]}
        backends[b] = entry
    shared = [m["name"] for m in listing["stack_modes"] if m["shares_stack"]]
    setjmp_src = ROOT / "switch" / "switch_setjmp.c"
    first = setjmp_src.read_text().splitlines()[0] if setjmp_src.exists() else ""
    flags = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines()
             if ln.startswith("flags")]
    data = {"experiment": "props", "meta": ctx.meta(), "backends": backends,
            "switch_info": info.stdout.strip().splitlines(), "switch_registry": listing,
            "setjmp_new_stack": first.strip("/* ").rstrip("*/ ") or None,
            "virtualized": bool(flags) and " hypervisor" in flags[0],
            "copy_stack": {"implemented": bool(shared),
                           "note": f"stack modes that share stacks: {', '.join(shared)}" if shared
                           else "not implemented: every declared stack mode runs each context on "
                           "its own guarded stack; there is no shared (copying) stack mode to "
                           "measure"}}
    write_json(ctx.dir / "props.json", data)
    return "ok"


def cross_emulator():
    """The emulator command of the aarch64 toolchain file (CMAKE_CROSSCOMPILING_EMULATOR)."""
    text = (ROOT / "cmake" / "aarch64-linux-gnu.cmake").read_text()
    m = re.search(r"set\(CMAKE_CROSSCOMPILING_EMULATOR\s+([^)]*)\)", text)
    return m.group(1).strip().split(";") if m else None


def step_asm_count(ctx):
    """Instructions per switch counted from each architecture's assembly: exact, and needing
    no hardware of that architecture."""
    return counted_step(ctx, "asm_count", "asm_count.py", [], 300)


def step_switch_emulated(ctx):
    """The aarch64 switch-bench under qemu-user, whose times are EMULATED (qemu's translation
    of the code on this x86_64 host, not an aarch64 core)."""
    bench = ctx.cross_build / "bin" / "switch-bench"
    emulator = cross_emulator()
    if not os.access(bench, os.X_OK) or not emulator:
        write_json(ctx.dir / "switch_emulated.json",
                   {"experiment": "switch_emulated", "meta": ctx.meta(), "status": "not run",
                    "reason": f"no aarch64 switch-bench at {bench} (built by ./run.sh with "
                              "the cross compiler and arm64 Google Benchmark installed)"})
        return "not run: no aarch64 switch-bench"
    p = ctx.preset["emulated"]
    raw = Path(ctx.tmp) / "switch-emulated.json"
    cmd = emulator + [bench, f"--benchmark_min_time={p['min_time']}",
                      f"--benchmark_repetitions={p['repetitions']}",
                      "--benchmark_enable_random_interleaving=true",
                      "--benchmark_report_aggregates_only=true",
                      f"--benchmark_filter={p['filter']}",
                      f"--benchmark_out={raw}", "--benchmark_out_format=json"]
    say("switch-bench (aarch64) under qemu-user: EMULATED times, not hardware figures")
    rc = run(cmd, ctx.log, 1200)
    if rc != 0 or not raw.exists():
        return fail(ctx, "switch_emulated", f"emulated switch-bench exited {rc}")
    data = json.loads(raw.read_text())
    if not (data.get("context") or {}).get("emulated"):
        return fail(ctx, "switch_emulated", "the aarch64 switch-bench did not report itself "
                    "as emulated; refusing to store its times")
    data.update(experiment="switch_emulated", meta=ctx.meta(), emulated=True,
                emulator=" ".join(str(c) for c in emulator), arch="aarch64",
                note="times measured under qemu-user (dynamic binary translation on the "
                     "x86_64 host): they rank nothing about real aarch64 cores and are never "
                     "compared with native rows",
                config={"min_time": p["min_time"], "repetitions": p["repetitions"],
                        "filter": p["filter"], "interleaved": True})
    write_json(ctx.dir / "switch_emulated.json", data)
    return "ok"


def step_driver(script, name, out_flag):
    def step(ctx):
        args = [PY, ROOT / "harness" / script, "--build-dir", ctx.build, *ctx.preset[name]]
        out = ctx.dir / f"{name}.json"
        args += [out_flag, ctx.dir if out_flag in ("--out", "--run-dir") else out]
        rc = run(args, ctx.log, 3600)
        if not out.exists():
            return fail(ctx, name, f"{script} exited {rc} without writing {out.name}")
        return "ok" if rc == 0 else f"exit {rc}"
    return step


def step_report(ctx):
    rc = run([PY, ROOT / "plots" / "report.py", ctx.dir], ctx.log, 600)
    return "ok" if rc == 0 else f"report.py exited {rc}"


def fail(ctx, name, reason):
    write_json(ctx.dir / f"{name}.json", {"experiment": name, "meta": ctx.meta(),
                                          "status": "failed", "reason": reason,
                                          "log": "suite.log"})
    return "failed: " + reason


STEP_FUNCS = {
    "switch": step_switch, "icount": step_icount, "props": step_props,
    "asm_count": step_asm_count, "switch_emulated": step_switch_emulated,
    "engines": step_driver("engines_bench.py", "engines", "--out"),
    "scale": step_driver("engines_scale.py", "scale", "--out"),
    "sweep": step_driver("sweep.py", "sweep", "--run-dir"),
    "slow": step_driver("sweep.py", "slow", "--run-dir"),
    "handoff": step_driver("handoff.py", "handoff", "--out-file"),
    "maxconns": step_driver("maxconns.py", "maxconns", "--out-file"),
    "threads": step_driver("threads_scale.py", "threads", "--out-file"),
    "fibermem": step_driver("fibermem.py", "fibermem", "--out-file"),
    "fiberio": step_driver("fiberio_bench.py", "fiberio", "--out"),
    "hooks": step_driver("hooks_bench.py", "hooks", "--out"),
    "report": step_report,
}


class Ctx:
    def __init__(self, a, run_dir, tmp):
        self.preset = PRESETS[a.preset]
        self.build = Path(a.build_dir).resolve()
        self.bin = self.build / "bin"
        self.cross_build = Path(a.cross_build_dir).resolve()
        self.dir = run_dir
        self.tmp = tmp
        self.log = run_dir / "suite.log"
        self._meta = None

    def meta(self):
        if self._meta is None:
            self._meta = meta.collect(ROOT, self.build)
        return dict(self._meta, date=meta.date_utc())


def csv_steps(text):
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in STEPS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown step {', '.join(bad)} "
                                         f"(valid: {', '.join(STEPS)})")
    return items


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="suite.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("preset", choices=["quick", "full"])
    ap.add_argument("--reference", action="store_true",
                    help="write into results/reference/ (replacing it) instead of results/runs/")
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--cross-build-dir", default=str(ROOT / "build-aarch64"),
                    help="the aarch64 cross build, for the switch_emulated step")
    ap.add_argument("--run-dir", help="write into this folder (created if missing)")
    ap.add_argument("--only", type=csv_steps, help=f"comma list of steps ({','.join(STEPS)})")
    ap.add_argument("--skip", type=csv_steps, default=[], help="comma list of steps to skip")
    return ap.parse_args(argv)


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


def main(argv=None):
    a = parse_args(argv)
    build = Path(a.build_dir)
    for exe in ("switch-bench", "switch-icount", "switch-tests", "switch-info", "engine-info",
                "echo-server", "echo-load", "handoff-scale"):
        if not os.access(build / "bin" / exe, os.X_OK):
            print(f"suite: {build / 'bin' / exe} is missing: build first (./run.sh build)",
                  file=sys.stderr)
            return 2
    steps = [s for s in (a.only or STEPS) if s not in a.skip]
    run_dir = prepare_run_dir(a)
    est = PRESETS[a.preset]["estimate_s"]
    say(f"{a.preset} suite: {', '.join(steps)} -> {run_dir} "
        f"(estimate {sum(est[s] for s in steps) // 60} min)")
    record = {"experiment": "suite", "preset": a.preset, "reference": a.reference,
              "presets": {k: v for k, v in PRESETS[a.preset].items() if k != "estimate_s"},
              # What the full preset would run, so a reduced run's report can say per claim
              # what a full run changes.
              "full_presets": {k: v for k, v in PRESETS["full"].items() if k != "estimate_s"},
              "loadavg_start": meta.loadavg(), "steps": {}}
    started = time.monotonic()
    sampler = LoadSampler()
    sampler.start()
    with tempfile.TemporaryDirectory(prefix="suite-") as tmp:
        ctx = Ctx(a, run_dir, tmp)
        record["meta"] = ctx.meta()
        for i, s in enumerate(steps, 1):
            record["loadavg_during"] = sampler.summary()
            if s == "report":  # the report reads suite.json: finish the record first
                record["loadavg_end"] = meta.loadavg()
                record["seconds"] = round(time.monotonic() - started, 1)
                write_json(run_dir / "suite.json", record)
            left = sum(est[x] for x in steps[i - 1:])
            say(f"step {i}/{len(steps)}: {s} (elapsed {fmt(time.monotonic() - started)}, "
                f"about {fmt(left)} left)")
            t0 = time.monotonic()
            try:
                status = STEP_FUNCS[s](ctx)
            except (OSError, subprocess.SubprocessError, ValueError) as e:
                status = fail(ctx, s, f"{type(e).__name__}: {e}")
            record["steps"][s] = {"status": status, "seconds": round(time.monotonic() - t0, 1),
                                  "loadavg_after": meta.loadavg()}
            say(f"step {s}: {status} in {fmt(time.monotonic() - t0)}")
            if s != "report":
                record["loadavg_end"] = meta.loadavg()
                record["seconds"] = round(time.monotonic() - started, 1)
                write_json(run_dir / "suite.json", record)
    sampler.stop.set()
    write_json(run_dir / "suite.json", record)
    say(f"done in {fmt(time.monotonic() - started)}; load average at start "
        f"{record['loadavg_start']}, at end {record['loadavg_end']}")
    report = run_dir / "REPORT.md"
    say(f"report: {report if report.exists() else 'not written (see suite.log)'}")
    return 0


def fmt(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


if __name__ == "__main__":
    sys.exit(main())
