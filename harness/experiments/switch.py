"""The switch-bench experiment: switch, create and scheduler rows, kernel hand-offs."""
import json
from pathlib import Path

from experiments._step import Experiment, fail, run, say, write_json


# Rows measured in a pass of their own: epoll_ctl's cost depends on the kernel's state (its
# slab caches, RCU-deferred frees), which the other rows disturb when interleaved with them; in
# the quick suite that moved them by 700 to 1,100 ns a pair against 670 to 720 alone.
APART = {"filter": r"^syscall/epoll_ctl_add_del/", "min_time": 0.1}


def passes(p):
    """[(filter, min_time)] of switch-bench's runs: the preset's rows, then those apart. An
    empty main filter (every row) leaves the apart rows out by a negative filter."""
    apart = p.get("apart")
    main = p["filter"] or (f"-{apart['filter']}" if apart else "")
    return [(main, p["min_time"])] + ([(apart["filter"], apart["min_time"])] if apart else [])


def measure(ctx, exp):
    p = exp.preset(ctx.preset)
    data = None
    for i, (flt, min_time) in enumerate(passes(p)):
        raw = Path(ctx.tmp) / f"switch-bench-{i}.json"
        cmd = [ctx.bin / "switch-bench", f"--benchmark_min_time={min_time}",
               f"--benchmark_repetitions={p['repetitions']}",
               "--benchmark_enable_random_interleaving=true",
               # The file keeps every repetition (the report's noise bands are their range);
               # the console shows only the aggregates.
               "--benchmark_display_aggregates_only=true",
               f"--benchmark_out={raw}", "--benchmark_out_format=json"]
        if flt:
            cmd.append(f"--benchmark_filter={flt}")
        say(f"switch-bench: {p['repetitions']} interleaved repetitions of "
            f"{flt or 'every row'}, {min_time} s each; its table prints when all are done")
        rc = run(cmd, ctx.log, 1800)
        if rc != 0 or not raw.exists():
            return fail(ctx, exp.name, f"switch-bench exited {rc}")
        part = json.loads(raw.read_text())
        if data is None:
            data = part
        else:
            data["benchmarks"] += part.get("benchmarks", [])
    data.update(experiment=exp.name, meta=ctx.meta(),
                config={"min_time": p["min_time"], "repetitions": p["repetitions"],
                        "filter": p["filter"] or "all rows", "interleaved": True,
                        "passes": [{"filter": f or "all rows", "min_time": m}
                                   for f, m in passes(p)],
                        "aggregates": "median, mean, stddev, cv of the repetitions, and each "
                              "repetition (run_type iteration, repetition_index)"})
    write_json(ctx.dir / exp.output, data)
    return "ok"


EXPERIMENT = Experiment(
    name="switch",
    measures="switch-bench: call, syscall, switch, create, sched star/ring, kernel hand-offs "
             "(medians of interleaved repetitions)",
    claims=("C1", "C4", "C5", "C9", "C14"),
    binaries=("switch-bench",),
    output="switch.json",
    presets={
        # The copy-stack rows C12 reads (8 B against 8 KiB) with one size between, and the
        # guarded yardstick.
        "quick": {"filter": r"^(call|syscall/getppid|switch|create|kernel|copystack/guarded)"
                            r"(/|$)|^copystack/resume/bytes:(8|512|8192)/|"
                            r"^sched/.*/fibers:(2|16|256)$|^sched/(star|ring)/asm/fibers:100000$",
                  "min_time": 0.03, "repetitions": 5, "apart": APART},
        "full": {"filter": "", "min_time": 0.1, "repetitions": 5, "apart": APART},
    },
    estimate_s={"quick": 30, "full": 120},
    run=measure,
)
