#!/usr/bin/python3
"""Scanning, readiness and completion engines under idle connections (claims C14, C16).

Three experiments, each server pinned to one CPU and echo-load to the other, variants
interleaved within every round (the order rotates), medians over rounds:

  idle        a fixed ping-pong load (--conns x --size bytes) while 0 .. 19,000 idle
              connections stay open; server CPU time per request (C16). Configurations:
              the fiber server on select (up to FD_SETSIZE), poll, every epoll engine and
              uring-poll, and the epoll and uring yardsticks.
  churn       echo-load --mode churn (connect, one request, close) while N idle connections
              are held: connections per second and server CPU per connection (C14).
  completion  readiness against completion at 1, 10, 100 and 1,000 connections: throughput,
              server CPU per request, and kernel entries per request (every system call of
              the server, counted by perf on raw_syscalls:sys_enter in a separate counted run,
              since a tracepoint taxes the calls it counts).

Idle connections are held by this driver (a separate process from the server and from
echo-load); each process stays within RLIMIT_NOFILE. Levels a configuration cannot reach are
recorded as "not run: <reason>" (select: FD_SETSIZE; any: the fd limit).

Output: the JSON (scale.json in the suite) to --out-file or standard output.
Example: /usr/bin/python3 harness/experiments/scale.py --quick --out-file scale.json
"""
import argparse
import os
import resource
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lib import cli, cpu, host_pace, load, meta, perf, rounds, server, status
from lib import budget as B
from experiments._step import Experiment, driver

PROG = "engines_scale"
# The parts of a run, in the order they run (--parts picks among them).
PARTS = ("idle", "churn", "completion")
FD_SETSIZE = 1024
FD_MARGIN = 64  # server fds besides connections (listeners, eventfds, reserve), with room
SYSCALL_EVENT = "raw_syscalls:sys_enter"

# The yardstick servers measured beside the fiber engines (label, echo-server arguments).
YARDSTICKS = [("epoll (model)", ["--model", "epoll"]), ("uring (model)", ["--model", "uring"])]


def idle_configs(build):
    """(label, echo-server arguments, engine-info entry or None) for every compiled-in engine,
    in the registry's order (engine-info --list --json), then the yardsticks. The labels are
    what the report and charts show."""
    engines = meta.registry(Path(build) / "bin" / "engine-info", PROG)
    return [(e["name"], ["--model", "fiber", "--engine", e["name"]], e) for e in engines] + \
        [(label, args, None) for label, args in YARDSTICKS]


CHURN_CONFIGS = ["naive", "merged", "edge", "uring-poll", "uring", "epoll (model)",
                 "uring (model)"]
COMPLETION_CONFIGS = ["merged", "uring-poll", "uring", "epoll (model)", "uring (model)"]
NOT_BUILT = {}
# Each part's share of the step, as the parts' measured times divide it (results/notes/
# harness.md): with a budget, each part's rounds end by its cumulative share of it, so a
# slower machine cuts rounds from every part alike.
PART_WEIGHTS = {"quick": {"idle": 0.56, "churn": 0.44, "completion": 0.1},
                "full": {"idle": 0.55, "churn": 0.25, "completion": 0.2}}


def parse_args(argv):
    ap = cli.parser("experiments/scale.py", __doc__, rounds=5, duration=2.0, budget=True)
    ap.formatter_class = argparse.RawDescriptionHelpFormatter
    ap.add_argument("--quick", action="store_true",
                    help="reduced sizes: levels 0,1000,10000, fewer configurations, 5 rounds "
                         "of 0.3 s (merged's churn up to 13, the completion part once)")
    ap.add_argument("--levels", default="0,10,100,1000,10000,19000",
                    help="idle connections (idle and churn experiments)")
    ap.add_argument("--churn-levels", default="0,1000,10000,19000")
    ap.add_argument("--conc", default="1,10,100,1000", help="connections (completion experiment)")
    ap.add_argument("--configs", default=None, help="comma list of idle configurations")
    ap.add_argument("--parts", default="idle,churn,completion")
    ap.add_argument("--completion-rounds", type=int, default=None,
                    help="rounds of the completion part (default: --rounds)")
    ap.add_argument("--churn-rounds", type=int, default=None,
                    help="rounds of the churn part (default: --rounds)")
    ap.add_argument("--conns", type=int, default=10, help="active ping-pong connections (idle)")
    ap.add_argument("--size", type=int, default=64)
    a = ap.parse_args(argv)
    if a.quick:
        a.levels, a.churn_levels, a.conc = "0,1000,10000", "0,10000", "10,1000"
        # 5 rounds of what C16 (poll against the epoll engines at 0 and 10,000 idle) decides
        # on; the completion part once (its counts are exact). C14 reads merged's churn alone,
        # a ratio near 1 against a threshold of 1.05: its rounds ranged 0.91 to 1.08, so it
        # gets up to 13 rounds as the step's budget allows, paid for by leaving uring's churn
        # (shown, not judged) to the full run. 9 rounds of 1.6 s ended with 5.5 s of the
        # step's 40 unused on the AMD EPYC VM, where the interval's width asked for about 12
        # (results/notes/harness.md); the budget, not the figures, sets how many run.
        a.rounds, a.duration = 5, 0.3
        if a.completion_rounds is None:
            a.completion_rounds = 1
        if a.churn_rounds is None:
            a.churn_rounds = 13
        if not a.configs:
            a.configs = "select,poll,merged"
        a.churn_configs = ["merged"]
    try:
        a.levels, a.churn_levels, a.conc = ([int(x) for x in text.split(",")]
                                            for text in (a.levels, a.churn_levels, a.conc))
    except ValueError as e:
        ap.error(f"--levels, --churn-levels and --conc want comma lists of counts ({e})")
    a.idle_configs = idle_configs(a.build_dir)
    known = [c[0] for c in a.idle_configs]
    a.configs = a.configs.split(",") if a.configs else known
    bad = [c for c in a.configs if c not in known]
    if a.churn_rounds is None:
        a.churn_rounds = a.rounds
    if bad or min(a.rounds, a.churn_rounds) < 1 or a.duration <= 0:
        ap.error(f"unknown configuration {', '.join(bad)} (valid: {', '.join(known)})" if bad
                 else "--rounds, --churn-rounds and --duration must be positive")
    a.parts = a.parts.split(",")
    unknown = [x for x in a.parts if x not in PARTS]
    if unknown:
        ap.error(f"unknown part {', '.join(unknown)} (valid: {', '.join(PARTS)})")
    return a


def server_args(a, label):
    return next(args for name, args, _ in a.idle_configs if name == label)


class Server(server.EchoServer):
    """One configuration's server; a failure raises RuntimeError, which makes its points
    `not run` with the server's reason."""

    def __init__(self, a, label):
        self.label = label
        try:
            super().__init__(cpu.pinned([a.server] + server_args(a, label), a.server_cpu))
        except RuntimeError as e:
            raise RuntimeError(f"{' '.join(server_args(a, label))}: {e}") from None
        self.base_fds = self.fds()

    def fds(self):
        try:
            return len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError:
            return 0

    def cpu_ns(self):
        """CPU time of every thread so far, from schedstat (nanoseconds, exact)."""
        total = 0
        for t in os.listdir(f"/proc/{self.pid}/task"):
            try:
                total += int(open(f"/proc/{self.pid}/task/{t}/schedstat").read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return total

    def stop(self, timeout=60):
        return self.stats(timeout=timeout)


# The server counts as settled once it burns less than SETTLE_QUIET of a SETTLE_STEP_S step.
# When the accept count reaches the level, the server may still be at work on the connections
# just opened; measured right away, that work is charged to the active requests of the level
# (a fixed cost that grows with the connections opened, so a short window reads an epoll
# engine's cost as growing with idle connections; results/notes/harness.md). An idle engine
# server burns next to nothing, so a tenth of a step tells the two states apart.
SETTLE_STEP_S = 0.05
SETTLE_QUIET = 0.1
SETTLE_TIMEOUT_S = 5.0


def settle(cpu_ns, step=SETTLE_STEP_S, quiet=SETTLE_QUIET, timeout=SETTLE_TIMEOUT_S,
           clock=time.monotonic, sleep=time.sleep):
    """Waits until the server's CPU time (cpu_ns(), in ns) grows by less than quiet x step over
    one step, at most timeout seconds: (seconds waited, server CPU ms meanwhile, settled)."""
    t0, c0 = clock(), cpu_ns()
    last = c0
    while True:
        sleep(step)
        c = cpu_ns()
        quiet_now = c - last < quiet * step * 1e9
        if quiet_now or clock() - t0 >= timeout:
            return clock() - t0, (c - c0) / 1e6, quiet_now
        last = c


class Idle:
    """Idle connections held by this process: connected, never written to."""

    def __init__(self):
        self.socks = []

    def grow(self, port, n, server, timeout=60.0):
        """Hold n connections in all, and wait until the server has accepted them."""
        while len(self.socks) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            # Spread the sources over 127.0.0.0/8 like echo-load, so ports never run out.
            k = len(self.socks)
            s.bind((f"127.0.{1 + k // 20000 % 250}.{2 + k % 250}", 0))
            s.connect(("127.0.0.1", port))
            self.socks.append(s)
        end = time.monotonic() + timeout
        while server.fds() < server.base_fds + n and time.monotonic() < end:
            time.sleep(0.02)
        return server.fds() >= server.base_fds + n

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []


def run_load(a, port, conns, mode="pingpong", duration=None):
    return load.run(a.load, port, ["--conns", conns, "--size", a.size, "--duration",
                                   duration or a.duration, "--warmup", "0", "--mode", mode],
                    a.load_cpu)


def limit_reason(label, idle, active, hard):
    need = idle + active + FD_MARGIN
    if label == "select" and idle + active + 10 >= FD_SETSIZE:
        return f"not run: FD_SETSIZE ({idle} idle + {active} active fds >= {FD_SETSIZE})"
    if need > hard:
        return f"not run: RLIMIT_NOFILE ({need} fds needed, hard limit {hard})"
    return None


def measure(a, srv, conns, mode):
    """One load run against srv: (requests, seconds, requests/s, CPU ns)."""
    c0 = srv.cpu_ns()
    load = run_load(a, srv.port, conns, mode)
    cpu = srv.cpu_ns() - c0
    n = load["requests"]
    return {"requests": n, "requests_per_sec": load["requests_per_sec"],
            "server_cpu_us_per_request": cpu / 1e3 / n if n else None,
            "errors": sum(v for v in load.get("errors", {}).values() if isinstance(v, int)),
            "latency_p50_us": load["latency_us"]["p50"],
            "stalled": load["latency_us"]["max"] >= 100000,
            # What the load generator's own figures say of the run (status.of_load); the
            # row's status is set from it once the row is complete (classify).
            "load_status": status.of_load(load, 0, True, 1)}


# ---- the three experiments ------------------------------------------------------------------

def ladder(a, label, levels, conns, mode, hard):
    """One server, idle connections grown level by level, a load run at each level."""
    rows, idle = [], Idle()
    try:
        srv = Server(a, label)
    except RuntimeError as e:
        return [{"config": label, "idle": n, "status": f"not run: {e}"} for n in levels]
    try:
        for n in levels:
            why = limit_reason(label, n, conns, hard)
            if why:
                rows.append({"config": label, "idle": n, "status": why})
                continue
            if not idle.grow(srv.port, n, srv):
                rows.append({"config": label, "idle": n,
                             "status": f"not run: the server held {srv.fds() - srv.base_fds} "
                                       f"of {n} idle connections"})
                continue
            waited, burned, settled = settle(srv.cpu_ns)
            # Taken again while the host held the server's CPU back (lib/host_pace.py).
            r = host_pace.retaking(lambda: measure(a, srv, conns, mode), a.pace)
            r.update({"config": label, "idle": n, "status": "ok", "settle_s": round(waited, 3),
                      "settle_cpu_ms": round(burned, 3), "settled": settled})
            rows.append(r)
    finally:
        idle.close()
        try:
            sj = srv.stop()
            for r in rows:
                r.setdefault("server_refused", sj.get("refused"))
            if rows:
                rows[-1]["server_kernel_calls"] = sj.get("kernel_calls")
        except RuntimeError as e:
            for r in rows:
                if r["status"] == "ok":
                    r["status"] = f"failed: {e}"
    return rows


def part_idle(a, hard):
    runs = []
    for rnd, label in rounds.interleaved(a.rounds, a.configs, a.gates.get("idle")):
        for r in ladder(a, label, a.levels, a.conns, "pingpong", hard):
            r["round"] = rnd
            runs.append(r)
        a.say(f"  idle round {rnd + 1}/{a.rounds} {label}: " + ", ".join(
            f"{r['idle']}:{r['server_cpu_us_per_request']:.2f}us" if r["status"] == "ok"
            else f"{r['idle']}:{r['status'][:20]}" for r in runs if r["round"] == rnd
            and r["config"] == label))
    methods = {name: e["method"] for name, _, e in a.idle_configs if e and name in a.configs}
    return {"configs": a.configs, "levels": a.levels, "active_conns": a.conns,
            "methods": methods, "runs": runs,
            "summary": summarize(runs, "idle", "server_cpu_us_per_request"),
            "not_built": NOT_BUILT}


def part_churn(a, hard):
    configs = getattr(a, "churn_configs", None) or CHURN_CONFIGS
    runs = []
    for rnd, label in rounds.interleaved(a.churn_rounds, configs, a.gates.get("churn")):
        for r in ladder(a, label, a.churn_levels, a.conns, "churn", hard):
            r["round"] = rnd
            runs.append(r)
        a.say(f"  churn round {rnd + 1}/{a.churn_rounds} {label} done")
    return {"configs": configs, "levels": a.churn_levels, "conns": a.conns, "runs": runs,
            "summary": summarize(runs, "idle", "requests_per_sec",
                                 extra="server_cpu_us_per_request")}


def count_syscalls(a, label, conns):
    """A separate run under perf stat on raw_syscalls:sys_enter: kernel entries per request."""
    srv = Server(a, label)
    pf = perf.PerfStat(srv.pid, SYSCALL_EVENT, a.tmp)
    try:
        ld = run_load(a, srv.port, conns, duration=min(a.duration, 1.0))
    finally:
        sj = srv.stop()
        total = pf.result().get(SYSCALL_EVENT)
    n = sj["bytes"] // a.size
    kc = sj.get("kernel_calls")
    return {"config": label, "conns": conns, "requests_served": n,
            "load_requests": ld["requests"],
            "kernel_entries_per_request": total / n if total is not None and n else None,
            "event_loop_calls_per_request": kc["total"] / n if kc and n else None,
            "io_uring_sqes_per_request": kc["io_uring_sqes"] / n if kc and n else None,
            "kernel_calls": kc}


def part_completion(a, hard):
    configs = COMPLETION_CONFIGS
    runs, counts = [], []
    n_rounds = a.rounds if a.completion_rounds is None else a.completion_rounds
    gate = a.gates.get("completion")
    for rnd in range(n_rounds):
        if gate is not None and not gate(rnd):
            break
        for conns in a.conc:
            for label in rounds.rotated(configs, rnd):
                why = limit_reason(label, 0, conns, hard)
                if why:
                    runs.append({"config": label, "conns": conns, "round": rnd, "status": why})
                    continue
                try:
                    srv = Server(a, label)
                    try:
                        r = measure(a, srv, conns, "pingpong")
                        r["status"] = "ok"
                    finally:
                        srv.stop()
                except RuntimeError as e:
                    r = {"status": f"not run: {e}"}
                r.update({"config": label, "conns": conns, "round": rnd})
                runs.append(r)
        a.say(f"  completion round {rnd + 1}/{n_rounds} done")
    perf_ok, why = meta.perf_available(SYSCALL_EVENT)
    for conns in a.conc:
        for label in configs:
            try:
                c = count_syscalls(a, label, conns) if perf_ok else \
                    {"config": label, "conns": conns, "status": f"not run: {why}"}
            except RuntimeError as e:
                c = {"config": label, "conns": conns, "status": f"not run: {e}"}
            c.setdefault("status", "ok")
            counts.append(c)
    return {"configs": configs, "conns": a.conc, "runs": runs, "counts": counts,
            "summary": summarize(runs, "conns", "requests_per_sec",
                                 extra="server_cpu_us_per_request"),
            "not_built": NOT_BUILT}


def classify(runs):
    """Every row's status as one of lib.status.STATUSES with its reasons: a row skipped for a
    limit is "limit", a row that ran takes its load's status."""
    for r in runs:
        st = r.get("status", "")
        if st == "ok":
            r["status"], r["reasons"] = r.pop("load_status", ("ok", []))
        elif st.startswith("not run: "):
            r["status"], r["reasons"] = status.skipped(st[len("not run: "):])
        elif st.startswith("failed: "):
            r["status"], r["reasons"] = "failed", [st[len("failed: "):]]
        r.pop("load_status", None)
    return runs


def summarize(runs, key, field, extra=None):
    """{config: {level: {median, rounds, [extra median], status "ok", statuses} or {status,
    reasons}}}: a level is "ok" when a round measured it (client-bound or contended rounds count:
    the server's CPU is its own); `statuses` counts the rounds' own statuses."""
    out = {}
    classify(runs)
    for r in runs:
        out.setdefault(r["config"], {}).setdefault(str(r[key]), []).append(r)
    summary = {}
    for cfg, levels in out.items():
        summary[cfg] = {}
        for lvl, rs in levels.items():
            ok = [r for r in rs if r["status"] in status.MEASURED and r.get(field) is not None]
            if not ok:
                summary[cfg][lvl] = {"status": rs[0]["status"], "reasons": rs[0]["reasons"]}
                continue
            counts = {}
            for r in rs:
                counts[r["status"]] = counts.get(r["status"], 0) + 1
            s = {"median": statistics.median(r[field] for r in ok),
                 "rounds": [r[field] for r in ok], "status": "ok", "statuses": counts}
            if extra:
                vals = [r[extra] for r in ok if r.get(extra) is not None]
                s[extra] = statistics.median(vals) if vals else None
            summary[cfg][lvl] = s
    return summary


def part_gates(budget, names, quick):
    """{part: RoundGate}: each part's rounds end by its cumulative share of the budget, the
    shares in proportion to what the parts took of this preset's step (PART_WEIGHTS)."""
    weights = PART_WEIGHTS["quick" if quick else "full"]
    total, cum, gates = sum(weights[n] for n in names), 0.0, {}
    for n in names:
        cum += weights[n] / total
        gates[n] = B.RoundGate(budget, min(1.0, cum))
    return gates


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    a.say = cli.reporter(a)
    build = Path(a.build_dir)
    a.server, a.load = meta.echo_binaries(build, PROG)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits this too
    info = meta.collect(meta.REPO_ROOT, build, pinning={"server": a.server_cpu,
                                                        "load": a.load_cpu})
    load_before = open("/proc/loadavg").read().split()[:3]
    a.pace = host_pace.watch(build, a.server_cpu)
    a.say(f"{PROG}: {', '.join(a.parts)}; {a.rounds} rounds of {a.duration} s "
          f"({a.churn_rounds} of churn); server on "
          f"CPU {a.server_cpu}, load on CPU {a.load_cpu}; load average {' '.join(load_before)}")
    record = {"experiment": "scale", "meta": info, "quick": a.quick,
              "config": {"duration": a.duration, "rounds": a.rounds,
                         "churn_rounds": a.churn_rounds, "size": a.size,
                         "rlimit_nofile": hard},
              "loadavg_before": load_before}
    parts = {"idle": part_idle, "churn": part_churn, "completion": part_completion}
    budget = B.Budget(a.budget_s)
    a.gates = part_gates(budget, [n for n in parts if n in a.parts], a.quick)
    with tempfile.TemporaryDirectory(prefix="engines-scale-") as a.tmp:
        for name in parts:
            if name not in a.parts:
                record[name] = {"status": "not run",
                                "reason": f"left out of this run (--parts {','.join(a.parts)})"}
                continue
            t0 = time.monotonic()
            record[name] = parts[name](a, hard)
            record[name]["seconds"] = round(time.monotonic() - t0, 1)
            if a.budget_s:
                record[name]["budget"] = a.gates[name].record()
    record["budget"] = budget.record() if a.budget_s else None
    record["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
    cli.emit(record, a, PROG)
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="scale",
    measures="server CPU per request under idle connections, churn rate, kernel entries per "
             "request by engine",
    claims=("C14", "C16"),
    binaries=("echo-server", "echo-load", "engine-info"),
    output="scale.json",
    presets={
        # Readiness against completion (shown, no verdict reads it) is the full preset's.
        "quick": ["--quick", "--parts", "idle,churn"],
        "full": ["--rounds", "5", "--duration", "1"],
    },
    budget_s={"quick": 40, "full": 600},
    # Each part runs at least 3 rounds, up to the preset's while they fit its share.
    budgeted=True,
    # At its least: three idle rounds and three of churn (results/notes/harness.md).
    least_s={"quick": 25},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(main())
