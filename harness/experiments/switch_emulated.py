"""The aarch64 switch-bench under qemu-user: EMULATED times, never compared with native rows."""
import json
import os
import re
from pathlib import Path

from experiments._step import ROOT, Experiment, fail, run, say, write_json


def cross_emulator():
    """The emulator command of the aarch64 toolchain file (CMAKE_CROSSCOMPILING_EMULATOR)."""
    text = (ROOT / "cmake" / "aarch64-linux-gnu.cmake").read_text()
    m = re.search(r"set\(CMAKE_CROSSCOMPILING_EMULATOR\s+([^)]*)\)", text)
    return m.group(1).strip().split(";") if m else None


def measure(ctx, exp):
    """The times are qemu's translation of the code on this x86_64 host, not an aarch64
    core's: stored only when the binary says it ran emulated."""
    bench = ctx.cross_build / "bin" / "switch-bench"
    emulator = cross_emulator()
    if not os.access(bench, os.X_OK) or not emulator:
        write_json(ctx.dir / exp.output,
                   {"experiment": exp.name, "meta": ctx.meta(), "status": "not run",
                    "reason": f"no aarch64 switch-bench at {bench} (./run.sh full and "
                              "./run.sh test build it, with the cross compiler and arm64 "
                              "Google Benchmark installed; quick only brings one up to "
                              "date)"})
        return "not run: no aarch64 switch-bench"
    p = exp.preset(ctx.preset)
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
        return fail(ctx, exp.name, f"emulated switch-bench exited {rc}")
    data = json.loads(raw.read_text())
    if not (data.get("context") or {}).get("emulated"):
        return fail(ctx, exp.name, "the aarch64 switch-bench did not report itself as "
                    "emulated; refusing to store its times")
    data.update(experiment=exp.name, meta=ctx.meta(), emulated=True,
                emulator=" ".join(str(c) for c in emulator), arch="aarch64",
                note="times measured under qemu-user (dynamic binary translation on the "
                     "x86_64 host): they rank nothing about real aarch64 cores and are never "
                     "compared with native rows",
                config={"min_time": p["min_time"], "repetitions": p["repetitions"],
                        "filter": p["filter"], "interleaved": True})
    write_json(ctx.dir / exp.output, data)
    return "ok"


EXPERIMENT = Experiment(
    name="switch_emulated",
    measures="the aarch64 switch-bench (the cross build) under qemu-user: emulated times",
    claims=(),  # the report's architecture section reads it; no verdict does
    binaries=(),  # in the cross build: a missing one makes the step `not run`
    output="switch_emulated.json",
    presets={
        "quick": {"filter": r"^switch/", "min_time": 0.05, "repetitions": 3},
        "full": {"filter": r"^switch/|^sched/.*/fibers:16$", "min_time": 0.1, "repetitions": 5},
    },
    # Full: 17.7 s in the full run on the AMD EPYC VM (e361cd3, 2026-12-05).
    budget_s={"quick": 3, "full": 20},
    run=measure,
    times=False,
)
