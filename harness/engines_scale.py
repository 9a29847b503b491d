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

Writes scale.json into --out (default: a new results/runs/<host>/<date>-<sha>/).
Example: /usr/bin/python3 harness/engines_scale.py --quick
"""
import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402
from echoserver import EchoServer  # noqa: E402

ROOT = meta.REPO_ROOT
FD_SETSIZE = 1024
FD_MARGIN = 64  # server fds besides connections (listeners, eventfds, reserve), with room
SYSCALL_EVENT = "raw_syscalls:sys_enter"

# The yardstick servers measured beside the fiber engines (label, echo-server arguments).
YARDSTICKS = [("epoll (model)", ["--model", "epoll"]), ("uring (model)", ["--model", "uring"])]


def idle_configs(build):
    """(label, echo-server arguments, engine-info entry or None) for every compiled-in engine,
    in the registry's order (engine-info --list --json), then the yardsticks. The labels are
    what the report and charts show."""
    engines = meta.registry(Path(build) / "bin" / "engine-info", "engines_scale")
    return [(e["name"], ["--model", "fiber", "--engine", e["name"]], e) for e in engines] + \
        [(label, args, None) for label, args in YARDSTICKS]


CHURN_CONFIGS = ["naive", "merged", "edge", "uring-poll", "uring", "epoll (model)",
                 "uring (model)"]
COMPLETION_CONFIGS = ["merged", "uring-poll", "uring", "epoll (model)", "uring (model)"]
NOT_BUILT = {}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--quick", action="store_true",
                    help="reduced sizes (about 40 s): levels 0,1000,10000, fewer configurations")
    ap.add_argument("--levels", default="0,10,100,1000,10000,19000",
                    help="idle connections (idle and churn experiments)")
    ap.add_argument("--churn-levels", default="0,1000,10000,19000")
    ap.add_argument("--conc", default="1,10,100,1000", help="connections (completion experiment)")
    ap.add_argument("--configs", default=None, help="comma list of idle configurations")
    ap.add_argument("--parts", default="idle,churn,completion")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0, help="seconds per measured load run")
    ap.add_argument("--conns", type=int, default=10, help="active ping-pong connections (idle)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--load-cpu", default="1")
    ap.add_argument("--out", help="output folder")
    a = ap.parse_args(argv)
    if a.quick:
        a.levels, a.churn_levels, a.conc = "0,1000,10000", "0,10000", "10,1000"
        a.rounds, a.duration = 1, 0.4
        if not a.configs:
            a.configs = "select,poll,merged,edge,uring-poll,uring,epoll (model),uring (model)"
        a.churn_configs = ["merged", "uring-poll", "uring", "epoll (model)"]
    a.levels = [int(x) for x in a.levels.split(",")]
    a.churn_levels = [int(x) for x in a.churn_levels.split(",")]
    a.conc = [int(x) for x in a.conc.split(",")]
    a.idle_configs = idle_configs(a.build_dir)
    known = [c[0] for c in a.idle_configs]
    a.configs = a.configs.split(",") if a.configs else known
    bad = [c for c in a.configs if c not in known]
    if bad or a.rounds < 1 or a.duration <= 0:
        ap.error(f"unknown configuration {', '.join(bad)} (valid: {', '.join(known)})" if bad
                 else "--rounds and --duration must be positive")
    a.parts = a.parts.split(",")
    return a


def pinned(cmd, cpu):
    return (["taskset", "-c", cpu] + cmd) if cpu and shutil.which("taskset") else cmd


def server_args(a, label):
    return next(args for name, args, _ in a.idle_configs if name == label)


class Server(EchoServer):
    """One configuration's server; a failure raises RuntimeError, which makes its points
    `not run` with the server's reason."""

    def __init__(self, a, label):
        self.label = label
        try:
            super().__init__(pinned([a.server] + server_args(a, label), a.server_cpu))
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

    def stop(self):
        return super().stop(timeout=60)


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
    cmd = [a.load, "--port", str(port), "--conns", str(conns), "--size", str(a.size),
           "--duration", str(duration or a.duration), "--warmup", "0", "--json",
           "--mode", mode]
    p = subprocess.run(pinned(cmd, a.load_cpu), capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"echo-load failed ({p.returncode}): {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout)


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
            "stalled": load["latency_us"]["max"] >= 100000}


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
            r = measure(a, srv, conns, mode)
            r.update({"config": label, "idle": n, "status": "ok"})
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
    for rnd in range(a.rounds):
        order = a.configs[rnd % len(a.configs):] + a.configs[:rnd % len(a.configs)]
        for label in order:
            for r in ladder(a, label, a.levels, a.conns, "pingpong", hard):
                r["round"] = rnd
                runs.append(r)
            print(f"  idle round {rnd + 1}/{a.rounds} {label}: " + ", ".join(
                f"{r['idle']}:{r['server_cpu_us_per_request']:.2f}us" if r["status"] == "ok"
                else f"{r['idle']}:{r['status'][:20]}" for r in runs if r["round"] == rnd
                and r["config"] == label), flush=True)
    methods = {name: e["method"] for name, _, e in a.idle_configs if e and name in a.configs}
    return {"configs": a.configs, "levels": a.levels, "active_conns": a.conns,
            "methods": methods, "runs": runs,
            "summary": summarize(runs, "idle", "server_cpu_us_per_request"),
            "not_built": NOT_BUILT}


def part_churn(a, hard):
    configs = getattr(a, "churn_configs", None) or CHURN_CONFIGS
    runs = []
    for rnd in range(a.rounds):
        order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
        for label in order:
            for r in ladder(a, label, a.churn_levels, a.conns, "churn", hard):
                r["round"] = rnd
                runs.append(r)
        print(f"  churn round {rnd + 1}/{a.rounds} done", flush=True)
    return {"configs": configs, "levels": a.churn_levels, "conns": a.conns, "runs": runs,
            "summary": summarize(runs, "idle", "requests_per_sec",
                                 extra="server_cpu_us_per_request")}


def count_syscalls(a, label, conns):
    """A separate run under perf stat on raw_syscalls:sys_enter: kernel entries per request."""
    srv = Server(a, label)
    out = Path(a.tmp) / f"sys-{srv.pid}.csv"
    perf = subprocess.Popen(["perf", "stat", "-x", ",", "-e", SYSCALL_EVENT, "-o", str(out),
                             "-p", str(srv.pid)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        load = run_load(a, srv.port, conns, duration=min(a.duration, 1.0))
    finally:
        sj = srv.stop()
        perf.wait(timeout=30)
    n = sj["bytes"] // a.size
    total = None
    for line in out.read_text().splitlines() if out.exists() else []:
        f = line.split(",")
        if len(f) > 2 and f[2] == SYSCALL_EVENT:
            try:
                total = float(f[0])
            except ValueError:
                pass
    kc = sj.get("kernel_calls")
    return {"config": label, "conns": conns, "requests_served": n,
            "load_requests": load["requests"],
            "kernel_entries_per_request": total / n if total is not None and n else None,
            "event_loop_calls_per_request": kc["total"] / n if kc and n else None,
            "io_uring_sqes_per_request": kc["io_uring_sqes"] / n if kc and n else None,
            "kernel_calls": kc}


def part_completion(a, hard):
    configs = COMPLETION_CONFIGS
    runs, counts = [], []
    for rnd in range(a.rounds):
        order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
        for conns in a.conc:
            for label in order:
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
        print(f"  completion round {rnd + 1}/{a.rounds} done", flush=True)
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


def summarize(runs, key, field, extra=None):
    """{config: {level: {median, rounds, [extra median]} or {status}}}."""
    out = {}
    for r in runs:
        out.setdefault(r["config"], {}).setdefault(str(r[key]), []).append(r)
    summary = {}
    for cfg, levels in out.items():
        summary[cfg] = {}
        for lvl, rs in levels.items():
            ok = [r for r in rs if r["status"] == "ok" and r.get(field) is not None]
            if not ok:
                summary[cfg][lvl] = {"status": rs[0]["status"]}
                continue
            s = {"median": statistics.median(r[field] for r in ok),
                 "rounds": [r[field] for r in ok], "status": "ok"}
            if extra:
                vals = [r[extra] for r in ok if r.get(extra) is not None]
                s[extra] = statistics.median(vals) if vals else None
            summary[cfg][lvl] = s
    return summary


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    build = Path(a.build_dir)
    a.server, a.load = meta.echo_binaries(build, "engines_scale")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits this too
    info = meta.collect(ROOT, build, pinning={"server": a.server_cpu, "load": a.load_cpu})
    out_dir = Path(a.out) if a.out else meta.new_run_dir(ROOT / "results" / "runs", info)
    out_dir.mkdir(parents=True, exist_ok=True)
    a.tmp = str(out_dir)
    load_before = open("/proc/loadavg").read().split()[:3]
    print(f"engines_scale: {', '.join(a.parts)}; {a.rounds} rounds of {a.duration} s; server on "
          f"CPU {a.server_cpu}, load on CPU {a.load_cpu}; load average {' '.join(load_before)}",
          flush=True)
    record = {"experiment": "scale", "meta": info, "quick": a.quick,
              "config": {"duration": a.duration, "rounds": a.rounds, "size": a.size,
                         "rlimit_nofile": hard},
              "loadavg_before": load_before}
    parts = {"idle": part_idle, "churn": part_churn, "completion": part_completion}
    for name in a.parts:
        t0 = time.monotonic()
        record[name] = parts[name](a, hard)
        record[name]["seconds"] = round(time.monotonic() - t0, 1)
    record["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
    for f in Path(a.tmp).glob("sys-*.csv"):
        f.unlink()
    path = out_dir / "scale.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"engines_scale: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
