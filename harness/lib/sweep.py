"""The sweep (experiments/sweep.py, and experiments/slow.py in slow mode): echo-server models x
load modes x concurrency levels, measured with echo-load.

For every point it starts a fresh echo-server (pinned to one CPU when asked), waits until it is
ready (lib.server), attaches `perf stat` to it, runs echo-load (pinned to another CPU) and
samples the server's resident memory (summed over its child processes) and the kernel's memory
(KernelStack, SUnreclaim, PageTables in /proc/meminfo: before the server started against the
measured window), then stops the server and keeps its JSON statistics. echo-load first connects
every connection and echoes once on each (the ramp-up, reported in its own block), then warms up
and measures: the window's errors are steady-state errors. A point that would exceed a limit of
this machine (fds, pids, memory, memory maps) is recorded as "not run" with the reason, never
shrunk silently.

The JSON goes to --out-file (rewritten after every point, so an interrupted sweep keeps what it
measured; the servers' error output beside it in logs/) or, at the end, to standard output.
"""
import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from lib import agents, cli, host_pace, load_site, meta, runnable, status
from lib import budget as B
from lib.memory import kernel_resolution
from lib.limits import RSS_GUESS_KB, limit_verdict
from lib.sweep_point import LEVEL_ARGS, PERF_EVENTS, measure_point

MODES = ["pingpong", "churn", "slow"]
DEFAULT_MODES = ["pingpong", "churn"]  # slow clients are their own experiment (--modes slow)
LEVELS = [1, 2, 4, 10, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
OTHERS = "*"  # in a --plan, every model no other group names
QUICK_LEVELS = [1, 10, 100, 1000]
IDLE_SAMPLES = 5  # /proc/meminfo reads, 0.1 s apart, before the server starts and once idle
# What a point costs before anything of this run has been measured (the budget's priors):
# one repetition is echo-load's start and exit besides its warm-up and window, plus its
# ramp-up, one connection after another at a cost per connection by declared concurrency (a
# fork, a thread, or only the connect and the first echo); a point adds the server's start,
# perf and the memory baselines. They matter only for a model's first level: the plans run
# each model's levels in ascending order, and from its first level of 100 connections on its
# own rounds predict the next (lib/budget.RoundCosts). The figures are the ramp-ups of a
# quick run on the slower of the machines measured (results/notes/harness.md).
ROUND_START_S = 0.3
PER_CONN_PRIOR_S = {"process-per-connection": 2e-3, "process-pool": 2e-3,
                    "thread-per-connection": 3e-4}
PER_CONN_PRIOR_DEFAULT_S = 1e-4
SETUP_PRIOR_S = 1.5


def declared_models(server):
    """{model: declared properties} in the registry's order, from `echo-server --list --json`."""
    return {m["name"]: m["props"] for m in meta.registry(server, "sweep")}


def declared_limit(props, conns):
    """The reason a model cannot serve conns connections by its own declaration (conns_ceiling:
    a select-based runtime's FD_SETSIZE less its own fds), or None."""
    ceiling = props.get("conns_ceiling")
    if ceiling and conns > ceiling:
        return (f"the model serves at most {ceiling} connections (conns_ceiling: it waits with "
                f"select)")
    return None


def csv_list(kind, valid=None):
    def parse(text):
        items = [x.strip() for x in text.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"empty {kind} list")
        if valid is True:  # names, checked once the binary is known
            return items
        if valid:
            bad = [x for x in items if x not in valid]
            if bad:
                raise argparse.ArgumentTypeError(
                    f"unknown {kind} {', '.join(bad)} (valid: {', '.join(valid)})")
            return items
        try:
            levels = [int(x) for x in items]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be whole numbers, got {text!r}")
        if min(levels) < 1:
            raise argparse.ArgumentTypeError(f"{kind} must be at least 1")
        return levels
    return parse


def parse_plan(text):
    """'MODELS/MODES/LEVELS;...' -> [(models, modes, levels)]."""
    groups = []
    for g in [x for x in text.split(";") if x.strip()]:
        parts = g.strip().split("/")
        if len(parts) != 3:
            raise argparse.ArgumentTypeError(f"want MODELS/MODES/LEVELS, got {g!r}")
        groups.append((csv_list("model", valid=True)(parts[0]), csv_list("mode", MODES)(parts[1]),
                       csv_list("levels")(parts[2])))
    if not groups:
        raise argparse.ArgumentTypeError("empty plan")
    return groups


def expand_others(groups, declared):
    """A plan's '*' stands for every declared model no other group names, so that a model
    added to echo-server is swept without editing the plan."""
    named = {m for ms, _, _ in groups for m in ms if m != OTHERS}
    others = [m for m in declared if m not in named]
    return [([x for m in ms for x in (others if m == OTHERS else [m])], modes, levels)
            for ms, modes, levels in groups]


def parse_args(argv):
    ap = cli.parser("sweep.py", __doc__, pin=False)
    ap.epilog = "Example: python3 -m experiments.sweep --quick --models epoll,thread"
    ap.set_defaults(build_dir=None)
    ap.add_argument("--server", help="echo-server binary (default: BUILD_DIR/bin/echo-server)")
    ap.add_argument("--load", help="echo-load binary (default: BUILD_DIR/bin/echo-load)")
    ap.add_argument("--models", type=csv_list("model", valid=True), default=None,
                    help="comma list of server models (default: every model echo-server lists)")
    ap.add_argument("--modes", type=csv_list("mode", MODES), default=None,
                    help="pingpong (persistent connections), churn (one per request), slow "
                         "(persistent, requests sent in chunks; see --load-args) "
                         f"(default: {','.join(DEFAULT_MODES)})")
    ap.add_argument("--levels", type=csv_list("levels"), default=None,
                    help=f"concurrency levels (default: {','.join(map(str, LEVELS))})")
    ap.add_argument("--plan", type=parse_plan, default=None,
                    help="instead of --models x --modes x --levels: groups 'MODELS/MODES/LEVELS' "
                         "separated by ';', each a cross product, e.g. "
                         "'thread,fork/pingpong,churn/1,100;epoll/pingpong/100'; a MODELS of * "
                         "is every model no other group names")
    ap.add_argument("--optional-plan", type=parse_plan, default=None,
                    help="groups as in --plan that no verdict needs: run after every point of "
                         "the plan, while the budget lasts")
    ap.add_argument("--budget-s", type=cli.positive, default=None,
                    help="seconds the sweep may take: each point gets the repetitions that fit "
                         "(at least 3) beside the least the deciding points still to come "
                         "need; a point that cannot have 3 is recorded as 'not run: over "
                         "budget (predicted N s)' (default: no budget, --repeat each)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="echo-load runs per point, back to back against the same server, each "
                         "with its own ramp-up, warm-up and window; the point's `load` is the "
                         "median run's, every run is in its `rounds` (default 1)")
    ap.add_argument("--size", type=int, default=64, help="bytes per request (default 64)")
    ap.add_argument("--duration", type=cli.positive, default=None,
                    help="measured seconds per point (default 5; --quick: 1)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="warm-up seconds per point (default 1; --quick: 0.5)")
    ap.add_argument("--load-threads", type=int, default=1, help="echo-load --threads")
    ap.add_argument("--server-args", default="",
                    help="extra echo-server arguments, e.g. '--engine merged --switch asm'")
    ap.add_argument("--load-args", default="",
                    help="extra echo-load arguments, e.g. '--chunk 16 --chunk-delay 0.02'")
    ap.add_argument("--ramp-timeout", type=float, default=60.0,
                    help="echo-load --ramp-timeout: seconds to connect and echo once on every "
                         "connection before measuring (default 60)")
    ap.add_argument("--idle-samples", type=int, default=IDLE_SAMPLES,
                    help="/proc/meminfo reads, 0.1 s apart, for each of a point's two kernel "
                         f"memory baselines (default {IDLE_SAMPLES}; their median is used)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="do not pin (default: server on CPU 0, load on CPU 1 when both exist)")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    ap.add_argument("--no-perf", dest="perf", action="store_false",
                    help="skip the perf stat counts")
    ap.add_argument("--quick", action="store_true",
                    help=f"preset: levels {','.join(map(str, QUICK_LEVELS))}, 1 s per point")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the plan and the limit verdict of every point; start nothing")
    load_site.add_host_flags(ap)
    a = ap.parse_args(argv)
    load_site.check_host_flags(ap, a)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if a.optional_plan and not a.plan:
        ap.error("--optional-plan needs --plan")
    if a.plan:
        groups = a.plan + (a.optional_plan or [])
        a.modes = list(dict.fromkeys(m for _, ms, _ in groups for m in ms))
        a.levels = sorted({n for _, _, ns in groups for n in ns})
    a.modes = a.modes or DEFAULT_MODES
    a.levels = a.levels or (QUICK_LEVELS if a.quick else LEVELS)
    a.duration = a.duration or (1.0 if a.quick else 5.0)
    a.warmup = a.warmup if a.warmup is not None else (0.5 if a.quick else 1.0)
    if not a.build_dir:
        a.build_dir = str(Path(a.load).resolve().parent.parent if a.load
                          else meta.REPO_ROOT / "build")
    a.server = a.server or str(Path(a.build_dir) / "bin" / "echo-server")
    if not os.access(a.server, os.X_OK):
        ap.error(f"{a.server} is missing: build first (./run.sh build)")
    a.declared = declared_models(a.server)
    if a.plan:
        # '*' is every model neither the plan nor the optional groups name.
        both = expand_others(a.plan + (a.optional_plan or []), a.declared)
        a.plan, a.optional_plan = both[:len(a.plan)], both[len(a.plan):]
        a.models = list(dict.fromkeys(m for ms, _, _ in both for m in ms))
    bad = [m for m in a.models or [] if m not in a.declared]
    if bad:
        ap.error(f"argument --models: unknown model {', '.join(bad)} "
                 f"(valid: {', '.join(a.declared)})")
    a.models = a.models or list(a.declared)
    a.load = a.load or str(Path(a.build_dir) / "bin" / "echo-load")
    if a.size < 1:
        ap.error("--size must be at least 1")
    if a.load_threads < 1:
        ap.error("--load-threads must be at least 1")
    cpus = os.sched_getaffinity(0)
    if a.pin and not {a.server_cpu, a.load_cpu} <= cpus:
        print(f"sweep: CPUs {a.server_cpu} and {a.load_cpu} are not both available "
              f"(have {meta.cpu_list(cpus)}); running unpinned", file=sys.stderr)
        a.pin = False
    return a


# ---- the sweep ---------------------------------------------------------------------------

def summary(point):
    r = point.get("load")
    if point["status"] not in status.MEASURED or not r:
        return f"{point['status']}: {point.get('reason', '')}"
    rounds = [x["requests_per_sec"] for x in point.get("rounds", []) if "requests_per_sec" in x]
    errs = sum(r["errors"].values())
    ramp = r.get("ramp_up") or {}
    kern = (point.get("kernel") or {}).get("per_conn_total_kb")
    res = kernel_resolution(point.get("conns"))
    kern = "n/a" if kern is None else f"< {res:.3g}" if kern < res else kern
    return (f"{r['requests_per_sec']:>9.0f} req/s  p99 {r['latency_us']['p99']:>9.1f} us  "
            f"errors {errs}  rss/conn {point['rss']['per_conn_kb']} KiB  kernel/conn "
            f"{kern} KiB"
            + (f"  ramp {ramp['seconds']:.2f} s ({ramp.get('errors_total', 0)} errors)"
               if ramp else "")
            + (f"  rounds {min(rounds):.0f}-{max(rounds):.0f}" if len(rounds) > 1 else "")
            + ("" if point["status"] == "ok" else f"  [{point['status']}]"))


def fmt_secs(s):
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def write_json(path, data):
    """The sweep so far, replaced in one step: a reader never sees half a file."""
    if path is None:
        return
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(meta.json_text(data))
    tmp.replace(path)


def plan(a):
    """[(model, mode, conns, deciding)]: the plan's points, then the optional groups' (not
    deciding) in their order."""
    if a.plan:
        main = [(model, mode, conns, True) for models, modes, levels in a.plan
                for model in models for mode in modes for conns in levels]
        extra = [(model, mode, conns, False) for models, modes, levels in a.optional_plan or []
                 for model in models for mode in modes for conns in levels]
        return main + [p for p in extra if p[:3] not in {q[:3] for q in main}]
    return [(model, mode, conns, True) for model in a.models for mode in a.modes
            for conns in a.levels]


def scheduler(a, clock=time.monotonic):
    """The sweep's budget (lib/budget.Scheduler) with this machine's priors."""
    fixed = ROUND_START_S + a.warmup + a.duration

    def prior(key):
        c = a.declared[key[0]]["concurrency"]
        return fixed, PER_CONN_PRIOR_S.get(c, PER_CONN_PRIOR_DEFAULT_S)
    return B.Scheduler(B.Budget(a.budget_s, clock), B.RoundCosts(prior), a.repeat,
                       SETUP_PRIOR_S + 0.2 * a.idle_samples)


def point_limit(a, model, conns, limits, rss_seen):
    """Why a point cannot run on this machine (its declaration, or a limit with the memory its
    model showed so far), or None."""
    c = a.declared[model]["concurrency"]
    return declared_limit(a.declared[model], conns) or limit_verdict(
        c, conns, limits, rss_seen.get(model, RSS_GUESS_KB.get(c, 128)))


def run_points(a, points, limits, measure, sched, say, save, out):
    """Measures `points` in order, each as the budget allows: a point a limit of the machine
    rules out is recorded with its reason, a point the budget has no room for as over
    budget with its prediction. measure(model, mode, conns) -> the point's record (with
    a.point_rounds and a.another_round set for it); save() after every point; the records are
    appended to `out`."""
    rss_seen = {}
    clock = sched.budget.clock
    for i, (model, mode, conns, deciding) in enumerate(points, 1):
        t0 = clock()
        key = (model, mode)
        rest = [((m, md), n) for m, md, n, d in points[i:] if d
                and not point_limit(a, m, n, limits, rss_seen)]
        why = point_limit(a, model, conns, limits, rss_seen)
        rounds, over, predicted = (0, None, None) if why else sched.plan(key, conns, rest)
        if why or over:
            st, reasons = status.skipped(why or over)
            point = {"status": st, "reasons": reasons, "reason": why or over}
        else:
            a.point_rounds, a.another_round = rounds, sched.gate(key, conns, rest)
            point = measure(model, mode, conns)
            walls = [r["wall_s"] for r in point.get("rounds", []) if "wall_s" in r]
            sched.done(key, conns, walls, clock() - t0)
            if point["status"] in status.MEASURED:
                # PSS counts pages shared by fork children once, so it predicts memory use
                # better than summed VmRSS; both were sampled at this point.
                mem = point["rss"]
                per = next(v for v in (mem["pss_per_conn_kb"], mem["pss_peak_per_conn_kb"],
                                       mem["per_conn_kb"]) if v is not None)
                rss_seen[model] = max(rss_seen.get(model, 0), int(per * 1.5) + 1)
        if predicted is not None:
            point["budget"] = {"rounds_planned": rounds, "rounds_wanted": sched.wanted,
                               "predicted_s": predicted, "deciding": deciding,
                               "left_before_s": round(sched.budget.left(), 1)
                               if a.budget_s else None}
        point.update(model=model, mode=mode, conns=conns, seconds=round(clock() - t0, 3))
        out.append(point)
        save()
        left = sum(sched.predict((m, md), n) for m, md, n, _ in points[i:]
                   if not point_limit(a, m, n, limits, rss_seen))
        say(f"[sweep {i}/{len(points)}] {model:8} {mode:8} conns={conns:<6} "
            f"{summary(point)}  (elapsed {fmt_secs(sched.budget.spent())}, "
            f"ETA {fmt_secs(min(left, max(0, sched.budget.left())))})")


def main(argv=None):
    a = parse_args(argv)
    # Servers inherit this: let them have every fd the hard limit allows.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    limits = meta.limits()
    points = plan(a)
    if a.dry_run:
        for i, (model, mode, conns, deciding) in enumerate(points, 1):
            why = point_limit(a, model, conns, limits, {})
            print(f"[plan {i}/{len(points)}] {model:8} {mode:8} conns={conns:<6} "
                  f"{'not run: ' + why if why else 'would run'}"
                  + ("" if deciding else " (optional: while the budget lasts)"))
        return 0
    for path in (a.server, a.load):
        if not os.access(path, os.X_OK):
            print(f"sweep: not run: {path} is not built (build with ./run.sh build)",
                  file=sys.stderr)
            return 2
    say = cli.reporter(a)
    a.perf_ok, perf_why = meta.perf_available() if a.perf else (False, "--no-perf")
    if not a.perf_ok:
        say(f"sweep: perf stat not run: {perf_why}")
    pinning = ({"server": str(a.server_cpu), "load": str(a.load_cpu), "tool": "taskset"}
               if a.pin else None)
    info = meta.collect(meta.REPO_ROOT, a.build_dir, pinning)
    # Each repetition is taken again while the host holds the server's CPU back; unpinned, no
    # one CPU is the server's to watch.
    a.pace = host_pace.watch(a.build_dir, a.server_cpu) if a.pin else None
    out_path = Path(a.out_file) if a.out_file else None
    if out_path and out_path.exists():
        print(f"sweep: {out_path} exists; refusing to overwrite it", file=sys.stderr)
        return 2
    result = {"meta": info, "experiment": "echo sweep",
              "config": {"models": a.models, "modes": a.modes, "levels": a.levels,
                         "size": a.size, "duration": a.duration, "warmup": a.warmup,
                         "load_threads": a.load_threads, "server_args": a.server_args,
                         "load_args": a.load_args, "ramp_timeout": a.ramp_timeout,
                         "idle_samples": a.idle_samples, "repeat": a.repeat,
                         "plan": ["/".join(",".join(map(str, x)) for x in g) for g in a.plan]
                         if a.plan else None,
                         "optional_plan": ["/".join(",".join(map(str, x)) for x in g)
                                           for g in a.optional_plan or []],
                         "budget_s": a.budget_s,
                         "level_args": {c: " ".join(LEVEL_ARGS[c]("N")) for c in LEVEL_ARGS},
                         "server": a.server, "load": a.load, "perf_events": PERF_EVENTS,
                         "load_hosts": a.load_host, "bind": a.bind,
                         "perf": a.perf_ok},
              "points": []}
    try:
        with load_site.fleet(a) as a.fleet:
            if a.fleet:
                result["meta"]["load_hosts"] = a.fleet.described
                say("sweep: load from " + ", ".join(
                    f"{h['host']} ({h['cores']} cores, rtt {h['rtt_ms']} ms)"
                    for h in a.fleet.described))
            run_sweep(a, points, limits, result, out_path, say)
    except agents.AgentError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 1
    if not out_path:
        cli.emit(result, a, "sweep")
    return 0


def run_sweep(a, points, limits, result, out_path, say):
    say(f"sweep: {len(points)} points -> {out_path or 'standard output'}"
        + (f" (budget {a.budget_s:.0f} s)" if a.budget_s else ""))
    started = time.monotonic()
    base_runnable = runnable.baseline()
    result["config"]["runnable_baseline"] = base_runnable
    sched = scheduler(a)
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmpdir:
        # The servers' error output: beside the JSON, or thrown away with it on stdout.
        a.logs = out_path.parent / "logs" if out_path else Path(tmpdir)
        a.logs.mkdir(parents=True, exist_ok=True)

        def measure(model, mode, conns):
            # Other tasks runnable just before the point, beyond the sweep's baseline: what
            # the point will compete with besides itself.
            before = runnable.baseline(5, 0.02)
            a.extra_runnable = (before - base_runnable) if None not in (
                before, base_runnable) else None
            point = measure_point(a, model, mode, conns, tmpdir)
            point["runnable"] = {"baseline": base_runnable, "before": before}
            return point
        run_points(a, points, limits, measure, sched, say,
                   lambda: write_json(out_path, result), result["points"])
        result["budget"] = dict(sched.budget.record(), setup_s=round(sched.setup_s(), 2))
        write_json(out_path, result)
        if out_path and not any(a.logs.iterdir()):
            a.logs.rmdir()
    say(f"sweep: done in {fmt_secs(time.monotonic() - started)}")

