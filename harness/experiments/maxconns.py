#!/usr/bin/python3
"""maxconns.py - how many connections a fiber server holds on ONE core (claim C10).

For each level and stack mode it starts `echo-server --model fiber --threads 1 --procs P
--stack MODE`: P single-threaded worker processes on one SO_REUSEPORT port, all pinned to one
CPU, P chosen (unless --procs says) so that each worker's share of the connections stays well
within its fd limit (RLIMIT_NOFILE, raised to the hard limit). It opens that many persistent
connections with echo-load (itself several processes when one may not hold them all, pinned
to the other CPU, spreading its source addresses over 127.0.0.2-254 so that the loopback
ephemeral ports never run out), sends a trickle of traffic over them (--rate requests/s in
total, open loop, every byte verified), and samples the server's processes while the
connections are held: resident memory (RSS and PSS, summed over the workers and their parent:
PSS counts pages the processes share once), open fds and memory maps. A level is "held" when
the server saw every connection at once and echo-load reports no error. The server's CPU time
comes from its statistics line.

Levels the machine cannot run (more workers than --threads x --procs listeners allow, more
processes than pid_max leaves) say `not run: <limit>`; the report then names every resource
the target would need, projected from the largest level held.

    /usr/bin/python3 harness/experiments/maxconns.py [--levels 1000,19900] [--target 100000]
        [--stacks guarded,copy] [--procs 0] [--rate 2000] [--duration 5]
        [--build-dir build] [--out-file maxconns.json]
"""
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from lib import cli, cpu, load, load_site, meta, server, status
from experiments._step import Experiment, driver

FD_MARGIN = 64  # fds the server keeps besides its connections (listener, epoll, reserve, stdio)
FD_SHARE = 0.8  # of a worker's fd room it is planned to use: SO_REUSEPORT spreads unevenly
MAX_LISTENERS = 64  # echo-server's bound on --threads x --procs (one listener each)


def parse_args(argv):
    ap = cli.parser("maxconns.py", __doc__, duration=5.0)
    ap.add_argument("--levels", default="1000,5000,10000,19900",
                    help="connection counts to try (comma list)")
    ap.add_argument("--target", type=int, default=100000, help="the claim's figure (100K)")
    ap.add_argument("--rate", type=float, default=2000, help="requests/s in total (trickle)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--server-args", default="", help="extra echo-server arguments")
    ap.add_argument("--stacks", default="guarded,copy",
                    help="fiber stack modes to run each level with (comma list)")
    ap.add_argument("--procs", type=int, default=0,
                    help="server worker processes (0: as many as the fd limit needs)")
    load_site.add_host_flags(ap)
    a = ap.parse_args(argv)
    try:
        a.levels = sorted({int(x) for x in a.levels.split(",") if x.strip()})
    except ValueError:
        ap.error(f"--levels must be whole numbers, got {a.levels!r}")
    if not a.levels or min(a.levels) < 1:
        ap.error("--levels must be positive")
    a.stacks = [x.strip() for x in a.stacks.split(",") if x.strip()]
    if not a.stacks or any(not (x == "guarded" or x.startswith("copy")) for x in a.stacks):
        ap.error(f"--stacks wants guarded and/or copy[:K], got {','.join(a.stacks)!r}")
    if a.procs < 0:
        ap.error("--procs must be 0 (automatic) or more")
    load_site.check_host_flags(ap, a)
    return a


def proc_count(pid, what):
    try:
        if what == "fds":
            return len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/maps") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def server_procs(a, conns, nofile):
    """The worker processes for `conns` connections: each keeps FD_SHARE of its fd room."""
    if a.procs:
        return a.procs
    room = int((nofile - FD_MARGIN) * FD_SHARE)
    return max(1, -(-conns // room))


def tree(pid):
    return [pid] + meta.descendants(pid)


def sample(pid):
    """RSS and PSS (KiB), fds and maps summed over the server's processes, and how many."""
    procs = tree(pid)
    out = {"rss_kb": 0, "pss_kb": 0, "fds": 0, "maps": 0, "procs": len(procs)}
    for p in procs:
        out["rss_kb"] += meta.rss_kb(p)
        out["pss_kb"] += meta.pss_kb(p) or 0
        out["fds"] += proc_count(p, "fds") or 0
        out["maps"] += proc_count(p, "maps") or 0
    return out


def kernel_samples(n=5):
    out = []
    for _ in range(n):
        out.append(meta.kernel_kb())
        time.sleep(0.1)
    return out


def measure(a, conns, procs, stack):
    kern_before = kernel_samples()  # machine-wide: before the server exists
    try:
        srv = server.EchoServer(cpu.pinned([a.server, "--model", "fiber", "--threads", "1",
                                            "--procs", procs, "--stack", stack, "--port", "0",
                                            *a.loader.server_flags, *a.server_args.split()],
                                           a.server_cpu))
    except server.NotStarted as e:
        why = f"server did not start: {e.reason}"
        return {"status": "failed", "reasons": [why], "reason": why}
    pid = srv.pid
    time.sleep(0.3)  # the workers report ready before their last pages settle
    base = sample(pid)
    ld = a.loader.start(srv.port, ["--conns", conns, "--size", a.size, "--rate", a.rate,
                                   "--duration", a.duration, "--warmup", "1"], a.load_cpu)
    peak = {"rss_kb": 0, "pss_kb": 0, "fds": 0, "maps": 0, "procs": 0}
    kern = []
    started = time.monotonic()
    deadline = started + a.duration + 60 + 120  # echo-load's ramp-up may take up to 60 s
    while ld.poll() is None and time.monotonic() < deadline:
        kern.append((time.monotonic(), meta.kernel_kb()))
        now = sample(pid)
        for k, v in now.items():
            if v > peak[k]:
                peak[k] = v
        time.sleep(0.5)
    try:
        out, err = ld.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        ld.kill()
        out, err = ld.communicate()
    stats = srv.stop(30)
    point = {"conns": conns, "stack": stack, "procs": procs, "load_exit": ld.returncode,
             "server": stats, "baseline": base, "peak": peak, "load": load.parse(out)}
    if point["load"] is None:
        why = "echo-load gave no JSON: " + (err.strip().splitlines() or ["?"])[-1]
        point.update(status="failed", reasons=[why], reason=why)
        return point
    st, why = status.of_load(point["load"], ld.returncode, srv.returncode == 0 and stats is not None,
                             1)
    ramp = point["load"].get("ramp_up") or {}
    w0 = started + (ramp.get("seconds") or 0) + 1  # after the ramp-up and the 1 s warm-up
    point["kernel"] = meta.kernel_growth(kern_before, [v for t, v in kern
                                                       if w0 <= t <= w0 + a.duration], conns)
    errors = sum(point["load"]["errors"].values()) + point["load"].get("mismatches", 0)
    held = (stats or {}).get("max_concurrent")
    point.update(
        status=st, reasons=why, errors=errors, held=held,
        all_held=bool(held is not None and held >= conns and errors == 0),
        rss_per_conn_kb=round((peak["rss_kb"] - base["rss_kb"]) / conns, 2),
        pss_per_conn_kb=round((peak["pss_kb"] - base["pss_kb"]) / conns, 2),
        maps_per_conn=round((peak["maps"] - base["maps"]) / conns, 3),
        fds_per_conn=round((peak["fds"] - base["fds"]) / conns, 3),
        server_cpu_s=round(cpu.rusage_s(stats), 3) if stats else None,
        server_cpus=a.server_cpu)
    if st != "ok":
        point["reason"] = "; ".join(why)
    return point


def projection(target, per_conn, limits, procs):
    """What `target` connections would need of each resource and which limit binds: fds per
    worker process, listeners, and the machine-wide memory maps and memory."""
    mem_avail = meta.meminfo_kb("MemAvailable")
    rows = [{"resource": "fds per worker (RLIMIT_NOFILE hard)",
             "needed": -(-target // procs) + FD_MARGIN, "available": limits["nofile_hard"]},
            {"resource": "listeners (--threads x --procs)", "needed": procs,
             "available": MAX_LISTENERS}]
    if per_conn:
        rows.append({"resource": "memory maps per worker (vm.max_map_count)",
                     "needed": int(target / procs * per_conn["maps_per_conn"]) + 1000,
                     "available": limits["max_map_count"]})
        rows.append({"resource": "memory (MemAvailable, KiB)",
                     "needed": int(target * per_conn["rss_per_conn_kb"]),
                     "available": mem_avail})
    for r in rows:
        r["binds"] = bool(r["available"] and r["needed"] > r["available"])
    return rows


def main(argv=None):
    a = parse_args(argv)
    say = cli.reporter(a)
    build = Path(a.build_dir)
    a.server, a.load = str(build / "bin" / "echo-server"), str(build / "bin" / "echo-load")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits this
    limits = meta.limits()
    info = meta.collect(meta.REPO_ROOT, build,
                        pinning={"server": a.server_cpu, "load": a.load_cpu, "tool": "taskset"})
    a.loader = load_site.runner(a, info, "maxconns")
    levels = sorted(set(a.levels) | {a.target})
    runs = [(conns, stack) for conns in levels for stack in a.stacks]
    points = []
    for i, (conns, stack) in enumerate(runs, 1):
        procs = server_procs(a, conns, limits["nofile_hard"])
        if procs > MAX_LISTENERS:
            p = {"conns": conns, "stack": stack, "procs": procs, "status": "limit",
                 "reason": f"listener limit: {procs} worker processes of "
                           f"{int((limits['nofile_hard'] - FD_MARGIN) * FD_SHARE)} connections "
                           f"each exceed echo-server's {MAX_LISTENERS} listeners"}
        elif a.procs and -(-conns // procs) + FD_MARGIN > limits["nofile_hard"]:
            p = {"conns": conns, "stack": stack, "procs": procs, "status": "limit",
                 "reason": f"fd limit: {-(-conns // procs)} connections per worker + "
                           f"{FD_MARGIN} exceed RLIMIT_NOFILE hard ({limits['nofile_hard']})"}
        elif limits.get("pid_max") and 2 * procs + 64 > limits["pid_max"]:
            p = {"conns": conns, "stack": stack, "procs": procs, "status": "limit",
                 "reason": f"pid limit: {procs} server workers (pid_max {limits['pid_max']})"}
        else:
            p = measure(a, conns, procs, stack)
        if "reasons" not in p:
            p["reasons"] = [p["reason"]]
        points.append(p)
        if p["status"] in status.MEASURED:
            kern = (p.get("kernel") or {}).get("per_conn_total_kb")
            line = (f"held {p['held']} (errors {p['errors']}), pss/conn {p['pss_per_conn_kb']} "
                    f"KiB, rss/conn {p['rss_per_conn_kb']} KiB, kernel/conn "
                    f"{kern if kern is not None else 'n/a'} KiB, maps/conn {p['maps_per_conn']}, "
                    f"server cpu {p['server_cpu_s']} s")
        else:
            line = f"{p['status']}: {p.get('reason', '')}"
        say(f"[maxconns {i}/{len(runs)}] conns={conns:<7} {stack:8s} procs={procs:<3} {line}")
    by_stack = {}
    for stack in a.stacks:
        ok = [p for p in points if p["stack"] == stack and p["status"] in status.MEASURED
              and p["all_held"]]
        best = max(ok, key=lambda p: p["conns"]) if ok else None
        by_stack[stack] = {
            "max_held": best["conns"] if best else None,
            "per_conn_at_max": ({k: best[k] for k in ("rss_per_conn_kb", "pss_per_conn_kb",
                                                      "maps_per_conn", "fds_per_conn")}
                                if best else None)}
    held = [p for p in points if p["status"] in status.MEASURED and p["all_held"]]
    best = max(held, key=lambda p: (p["conns"], -p["pss_per_conn_kb"])) if held else None
    result = {
        "experiment": "maxconns", "meta": info,
        "config": {"levels": a.levels, "target": a.target, "rate": a.rate,
                   "duration": a.duration, "size": a.size, "server_args": a.server_args,
                   "stacks": a.stacks, "procs": a.procs or "auto",
                   "server_cpus": a.server_cpu, "load_cpus": a.load_cpu,
                   "server": "echo-server --model fiber --threads 1 --procs P --stack MODE, "
                             "every process pinned to CPU " + a.server_cpu},
        "points": points,
        "max_held": best["conns"] if best else None,
        "per_conn_at_max": ({k: best[k] for k in ("rss_per_conn_kb", "pss_per_conn_kb",
                                                  "maps_per_conn", "fds_per_conn")}
                            if best else None),
        "by_stack": by_stack,
        "target_projection": projection(a.target, best, limits,
                                        server_procs(a, a.target, limits["nofile_hard"])),
    }
    cli.emit(result, a, "maxconns")
    return 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="maxconns",
    measures="connections held by fiber worker processes pinned to one CPU, and their memory "
             "per connection",
    claims=("C8", "C10"),
    binaries=("echo-server", "echo-load"),
    output="maxconns.json",
    presets={
        "quick": ["--levels", "100000", "--stacks", "copy", "--duration", "2", "--rate", "1000"],
        "full": ["--levels", "1000,10000,19900,100000", "--duration", "5", "--rate", "2000"],
    },
    # Full: 96 s in the full run on the AMD EPYC VM (e361cd3, 2026-12-05).
    budget_s={"quick": 14, "full": 100},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(main())
