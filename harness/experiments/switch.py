"""The switch-bench experiment: switch, create and scheduler rows, kernel hand-offs."""
import json
import subprocess
import time
from pathlib import Path

from lib import budget as B, gbench, host_pace, server
from experiments._step import Experiment, fail, run, say, write_json


# C14's rows, syscall/epoll_ctl_add_del/registered:N, come from epoll-ctl-pairs, which times
# the levels in alternation (blocks of a few milliseconds over every level): the same pairs
# timed by switch-bench, each level's repetition in a pass of its own, rose about 10% from 10
# to 19,000 registered fds in +-15% of noise between passes on the AMD EPYC VM, and Kendall's
# trend p straddled 0.05 in most quick runs; in alternation the same machine showed a 16-20%
# rise, with nine blocks in ten at least 1.06x. It runs first, so the switch-bench passes get
# the rest of the step's budget.
EPOLL_CTL_PAIRS = {"quick": {"blocks": 100, "seconds": 1.0},
                   "full": {"blocks": 200, "seconds": 3.0}}
EPOLL_CTL_ROW = "syscall/epoll_ctl_add_del/registered:{}"
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


def watches(ctx):
    """A host-pace Watch (lib/host_pace.py) per CPU switch-bench may run on (it is not pinned),
    or [] with the reason."""
    return host_pace.watch_every_cpu(ctx.bin)


def invoke(ctx, name, flt, min_time, reps, ws=()):
    """switch-bench over one filter for `reps` interleaved repetitions: (its JSON, the
    stretches the host held a watched CPU back), or None. With watches, each run of a row is
    stamped (bench/bench_stamp.h) so that the step can tell which ran in such a stretch."""
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
    probes = [(w, w.start()) for w in ws]
    rc = run(cmd, ctx.log, 1800, env={"SWITCH_BENCH_STAMPS": "1"} if probes else None)
    stretches = sorted(st for w, proc in probes for st in w.stretches(proc))
    if rc != 0 or not raw.exists():
        return None
    return json.loads(raw.read_text()), stretches


def held_back(stretches):
    """held() for gbench.set_aside: whether a run of a row overlapped a held-back stretch (its
    stamps; a run without them was not watched)."""
    def held(entry):
        t0, t1 = entry.get("host_t0_s"), entry.get("host_t1_s")
        return t0 is not None and t1 is not None and host_pace.overlaps((t0, t1), stretches)
    return held


def epoll_ctl_pairs(ctx, preset):
    """epoll-ctl-pairs' blocks as switch-bench rows, and what it reported of itself: (entries,
    record), or (None, why)."""
    want = EPOLL_CTL_PAIRS[preset]
    cmd = [str(ctx.bin / "epoll-ctl-pairs"), "--blocks", str(want["blocks"]),
           "--seconds", str(want["seconds"])]
    say("$ " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 4 * want["seconds"])
    except subprocess.TimeoutExpired:
        return None, "epoll-ctl-pairs did not end in time"
    with open(ctx.log, "a") as lf:
        lf.write(p.stderr)
    doc = server.last_json(p.stdout) if p.returncode == 0 else None
    if doc is None:
        return None, (f"epoll-ctl-pairs failed (exit {p.returncode}): "
                      f"{(p.stderr.strip().splitlines() or ['no output'])[-1]}")
    if doc.get("status") != "ok":
        return [], {"status": doc.get("status")}
    levels = doc["levels"]
    entries = gbench.from_blocks([EPOLL_CTL_ROW.format(n) for n in levels], doc["ns_per_pair"],
                                 doc["pairs_per_block"], [{"registered": n} for n in levels])
    return entries, {k: doc[k] for k in ("status", "levels", "blocks", "pairs_per_block",
                                         "setup_s", "measured_s", "epoll_ctl_calls")}


def measure(ctx, exp):
    """Every pass's minimum of repetitions first, timed; then the repetitions up to the
    preset's that the step's budget has room for, in proportion across the passes, each pass
    merged into one document (lib/gbench). On the machine the budget was sized on every
    pass gets all its repetitions; on a slower one, fewer, never below 3."""
    p = exp.preset(ctx.preset)
    budget = B.Budget(ctx.budget(exp))
    pairs, pairs_record = epoll_ctl_pairs(ctx, ctx.preset)
    if pairs is None:
        return fail(ctx, exp.name, pairs_record)
    todo = passes(p)
    ws, unwatched = watches(ctx)
    stretches, step_t0 = [], time.monotonic()
    docs, per_rep, first = [], [], [min(reps, B.MIN_ROUNDS) for _, _, reps in todo]
    for i, ((flt, min_time, _), n) in enumerate(zip(todo, first)):
        t0 = budget.spent()
        got = invoke(ctx, f"{i}", flt, min_time, n, ws)
        if got is None:
            return fail(ctx, exp.name, "switch-bench failed (its output is in the log)")
        docs.append(got[0])
        stretches += got[1]
        # The run's start and its estimate of the iterations cost about one repetition more.
        per_rep.append((budget.spent() - t0) / (n + 1))
    wanted = [reps - n for (_, _, reps), n in zip(todo, first)]
    extra = B.extra_repetitions(budget.left(), wanted, per_rep)
    for i, ((flt, min_time, _), k) in enumerate(zip(todo, extra)):
        if k:
            more = invoke(ctx, f"{i}-more", flt, min_time, k, ws)
            if more is None:
                return fail(ctx, exp.name, "switch-bench failed (its output is in the log)")
            docs[i] = gbench.merge(docs[i], more[0])
            stretches += more[1]
    # The repetitions the host held back, set aside while a row keeps at least 3.
    listed = []
    if ws:
        for i, doc in enumerate(docs):
            docs[i], out = gbench.set_aside(doc, held_back(stretches), B.MIN_ROUNDS)
            listed += out
    host = {"watched_cpus": len(ws), "not_watched": unwatched,
            "held_back": [{"from_s": round(t0 - step_t0, 2), "seconds": round(t1 - t0, 2)}
                          for t0, t1 in host_pace.merged(stretches)],
            "repetitions_held_back": listed}
    data = dict(docs[0], benchmarks=sum((d.get("benchmarks", []) for d in docs), []) + pairs)
    data.update(experiment=exp.name, meta=ctx.meta(),
                config={"min_time": p["min_time"], "repetitions": p["repetitions"],
                        "filter": p["filter"] or "all rows", "interleaved": True,
                        "passes": [{"filter": f or "all rows", "min_time": m, "repetitions": n,
                                    "repetitions_run": a + k, "repetition_s": round(c, 3)}
                                   for (f, m, n), a, k, c in zip(todo, first, extra, per_rep)],
                        "epoll_ctl_pairs": pairs_record, "host_pace": host,
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
             "(medians of interleaved repetitions); epoll-ctl-pairs: the epoll_ctl pair against "
             "the registered fds (medians of blocks over every level in alternation)",
    claims=("C1", "C4", "C5", "C9", "C14"),
    binaries=("switch-bench", "epoll-ctl-pairs"),
    output="switch.json",
    presets={
        # The copy-stack rows C12 reads (8 B against 8 KiB) with one size between, and the
        # guarded yardstick.
        "quick": {"filter": r"^(call|syscall/getppid|switch|create|kernel|copystack/guarded)"
                            r"(/|$)|^copystack/resume/bytes:(8|512|8192)/|"
                            r"^sched/.*/fibers:(2|16|256)$",
                  "min_time": 0.03, "repetitions": 5,
                  "apart": [ring_star_100k("asm", 0.03)]},
        "full": {"filter": "", "min_time": 0.1, "repetitions": 5,
                 "apart": [ring_star_100k("[^/]+", 0.1)]},
    },
    # Full: its passes' 3 repetitions alone took 296 s in the full run on the AMD EPYC VM
    # (e361cd3, 2026-12-05), over the 200 s it had.
    budget_s={"quick": 46, "full": 300},
    # Each pass runs 3 repetitions, then up to the preset's as the budget has room for.
    budgeted=True,
    # At its least: 3 repetitions of every pass (results/notes/harness.md).
    least_s={"quick": 26, "full": 296},
    run=measure,
)
