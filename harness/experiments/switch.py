"""The switch-bench experiment: switch, create and scheduler rows, kernel hand-offs."""
import json
from pathlib import Path

from lib import budget as B, gbench
from experiments._step import Experiment, fail, run, say, write_json


# Rows measured in a pass of their own: epoll_ctl's cost depends on the kernel's state (its
# slab caches, RCU-deferred frees), which the other rows disturb when interleaved with them; in
# the quick suite that moved them by 700 to 1,100 ns a pair against 670 to 720 alone.
EPOLL_CTL = {"filter": r"^syscall/epoll_ctl_add_del/", "min_time": 0.1}
# C14 judges the pair's trend over these passes by Kendall's test, whose p it resamples over
# them: over the 4 passes of 0.1 s a quick run had room for, the p straddled 0.05 in several
# quick runs on the AMD EPYC VM (0.058 [0.0006, 0.27]); 9 passes of 0.05 s cost about 2 s more.
EPOLL_CTL_QUICK = dict(EPOLL_CTL, min_time=0.05, repetitions=9)
# Ring against star at 10^5 fibers on copy stacks: the prefetch of the next records hides most
# of the star's extra switch behind the memory it waits for, so ring wins by 2 to 3% there.
# Interleaved with the other rows, five pairs ranged 0.88 to 1.11 and C1's comparison straddled
# 1; apart, eleven pairs ranged 0.96 to 1.00 and their median's interval was 0.966
# [0.964, 0.971], 0.98 [0.968, 0.983] in two runs here, in under 2 s each.


def ring_star_100k(backends, min_time):
    return {"filter": rf"^sched/(star|ring)/{backends}/fibers:100000$", "min_time": min_time,
            "repetitions": 11}


def passes(p):
    """[(filter, min_time, repetitions)] of switch-bench's runs: the preset's rows, then each
    pass apart. The main filter leaves the apart rows out: an empty one (every row) by a
    negative filter, a positive one by construction (a preset never names them twice)."""
    apart = p.get("apart") or []
    main = p["filter"] or ("-" + "|".join(a["filter"] for a in apart) if apart else "")
    return [(main, p["min_time"], p["repetitions"])] + [
        (a["filter"], a["min_time"], a.get("repetitions", p["repetitions"])) for a in apart]


def invoke(ctx, name, flt, min_time, reps):
    """switch-bench over one filter for `reps` interleaved repetitions: its JSON, or None."""
    raw = Path(ctx.tmp) / f"switch-bench-{name}.json"
    cmd = [ctx.bin / "switch-bench", f"--benchmark_min_time={min_time}",
           f"--benchmark_repetitions={reps}",
           "--benchmark_enable_random_interleaving=true",
           # The file keeps every repetition (the report's noise bands are their range); the
           # console shows only the aggregates.
           "--benchmark_display_aggregates_only=true",
           f"--benchmark_out={raw}", "--benchmark_out_format=json"]
    if flt:
        cmd.append(f"--benchmark_filter={flt}")
    say(f"switch-bench: {reps} interleaved repetitions of "
        f"{flt or 'every row'}, {min_time} s each; its table prints when all are done")
    rc = run(cmd, ctx.log, 1800)
    return json.loads(raw.read_text()) if rc == 0 and raw.exists() else None


def measure(ctx, exp):
    """Every pass's minimum of repetitions first, timed; then the repetitions up to the
    preset's that the step's budget has room for, in proportion across the passes, each pass
    merged into one document (lib/gbench). On the machine the budget was sized on every
    pass gets all its repetitions; on a slower one, fewer, never below 3."""
    p = exp.preset(ctx.preset)
    budget = B.Budget(exp.budget_s[ctx.preset])
    todo = passes(p)
    docs, per_rep, first = [], [], [min(reps, B.MIN_ROUNDS) for _, _, reps in todo]
    for i, ((flt, min_time, _), n) in enumerate(zip(todo, first)):
        t0 = budget.spent()
        doc = invoke(ctx, f"{i}", flt, min_time, n)
        if doc is None:
            return fail(ctx, exp.name, "switch-bench failed (its output is in the log)")
        docs.append(doc)
        # The run's start and its estimate of the iterations cost about one repetition more.
        per_rep.append((budget.spent() - t0) / (n + 1))
    wanted = [reps - n for (_, _, reps), n in zip(todo, first)]
    extra = B.extra_repetitions(budget.left(), wanted, per_rep)
    for i, ((flt, min_time, _), k) in enumerate(zip(todo, extra)):
        if k:
            more = invoke(ctx, f"{i}-more", flt, min_time, k)
            if more is None:
                return fail(ctx, exp.name, "switch-bench failed (its output is in the log)")
            docs[i] = gbench.merge(docs[i], more)
    data = dict(docs[0], benchmarks=sum((d.get("benchmarks", []) for d in docs), []))
    data.update(experiment=exp.name, meta=ctx.meta(),
                config={"min_time": p["min_time"], "repetitions": p["repetitions"],
                        "filter": p["filter"] or "all rows", "interleaved": True,
                        "passes": [{"filter": f or "all rows", "min_time": m, "repetitions": n,
                                    "repetitions_run": a + k, "repetition_s": round(c, 3)}
                                   for (f, m, n), a, k, c in zip(todo, first, extra, per_rep)],
                        "budget": dict(budget.record(), cut=[
                            (f or "all rows") for (f, _, _), w, k in zip(todo, wanted, extra)
                            if k < w]),
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
                            r"^sched/.*/fibers:(2|16|256)$",
                  "min_time": 0.03, "repetitions": 5,
                  "apart": [EPOLL_CTL_QUICK, ring_star_100k("asm", 0.03)]},
        "full": {"filter": "", "min_time": 0.1, "repetitions": 5,
                 "apart": [EPOLL_CTL, ring_star_100k("[^/]+", 0.1)]},
    },
    budget_s={"quick": 46, "full": 200},
    # Each pass runs 3 repetitions, then up to the preset's as the budget has room for.
    budgeted=True,
    run=measure,
)
