#!/usr/bin/python3
"""maxconns.py - how many connections one single-threaded fiber server process holds (claim C10).

For each level it starts `echo-server --model fiber --threads 1` (pinned to one CPU, its fd limit
raised to the hard limit), opens that many persistent connections with echo-load and sends a
trickle of traffic over them (--rate requests/s in total, open loop), and samples the server's
resident memory, open fds and memory maps while they are held. A level is "held" when the
server saw every connection at once and echo-load reports no error.

Levels beyond what this machine allows (fds against RLIMIT_NOFILE) are not run; instead the
report names every resource the level would need, what the machine has, and which one binds,
projected from the per-connection figures measured at the largest level that ran.

    /usr/bin/python3 harness/maxconns.py [--levels 1000,19900] [--target 100000]
        [--rate 2000] [--duration 5] [--build-dir build] [--out-file maxconns.json]
"""
import argparse
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)

FD_MARGIN = 64  # fds the server keeps besides its connections (listener, epoll, reserve, stdio)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="maxconns.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=str(meta.REPO_ROOT / "build"))
    ap.add_argument("--levels", default="1000,5000,10000,19900",
                    help="connection counts to try (comma list)")
    ap.add_argument("--target", type=int, default=100000, help="the claim's figure (100K)")
    ap.add_argument("--rate", type=float, default=2000, help="requests/s in total (trickle)")
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--server-args", default="", help="extra echo-server arguments")
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--load-cpu", default="1")
    ap.add_argument("--out-file", help="write the JSON here (default: stdout)")
    a = ap.parse_args(argv)
    try:
        a.levels = sorted({int(x) for x in a.levels.split(",") if x.strip()})
    except ValueError:
        ap.error(f"--levels must be whole numbers, got {a.levels!r}")
    if not a.levels or min(a.levels) < 1:
        ap.error("--levels must be positive")
    return a


def proc_count(pid, what):
    try:
        if what == "fds":
            return len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/maps") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def pinned(cmd, cpus):
    return ["taskset", "-c", cpus, *cmd] if cpus else cmd


def start_server(a):
    cmd = pinned([a.server, "--model", "fiber", "--threads", "1", "--port", "0",
                  *a.server_args.split()], a.server_cpu)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    line = proc.stdout.readline().strip() if ready else ""
    if not line.startswith("listening "):
        proc.kill()
        return proc, None
    return proc, int(line.rsplit(":", 1)[1])


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    lines = [ln for ln in (out or "").splitlines() if ln.startswith("{")]
    try:
        return json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None


def kernel_samples(n=5):
    out = []
    for _ in range(n):
        out.append(meta.kernel_kb())
        time.sleep(0.1)
    return out


def measure(a, conns):
    kern_before = kernel_samples()  # machine-wide: before the server exists
    server, port = start_server(a)
    if port is None:
        return {"status": "failed", "reason": "server did not start: "
                + (server.stderr.read().strip() or f"exit {server.returncode}")}
    pid = server.pid
    base = {"rss_kb": meta.rss_kb(pid), "fds": proc_count(pid, "fds"),
            "maps": proc_count(pid, "maps")}
    load = subprocess.Popen(
        pinned([a.load, "--port", str(port), "--conns", str(conns), "--size", str(a.size),
                "--rate", str(a.rate), "--duration", str(a.duration), "--warmup", "1",
                "--json"], a.load_cpu),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = {"rss_kb": 0, "fds": 0, "maps": 0}
    kern = []
    started = time.monotonic()
    deadline = started + a.duration + 60 + 60  # echo-load's ramp-up may take up to 60 s
    while load.poll() is None and time.monotonic() < deadline:
        kern.append((time.monotonic(), meta.kernel_kb()))
        for k, v in (("rss_kb", meta.rss_kb(pid)), ("fds", proc_count(pid, "fds")),
                     ("maps", proc_count(pid, "maps"))):
            if v is not None and v > peak[k]:
                peak[k] = v
        time.sleep(0.2)
    try:
        out, err = load.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        load.kill()
        out, err = load.communicate()
    stats = stop_server(server)
    point = {"conns": conns, "load_exit": load.returncode, "server": stats,
             "baseline": base, "peak": peak}
    try:
        point["load"] = json.loads(out)
    except json.JSONDecodeError:
        point.update(status="failed", load=None,
                     reason="echo-load gave no JSON: " + (err.strip().splitlines() or ["?"])[-1])
        return point
    ramp = point["load"].get("ramp_up") or {}
    w0 = started + (ramp.get("seconds") or 0) + 1  # after the ramp-up and the 1 s warm-up
    point["kernel"] = meta.kernel_growth(kern_before, [v for t, v in kern
                                                       if w0 <= t <= w0 + a.duration], conns)
    errors = sum(point["load"]["errors"].values()) + point["load"].get("mismatches", 0)
    held = (stats or {}).get("max_concurrent")
    point.update(
        status="ok", errors=errors, held=held,
        all_held=bool(held is not None and held >= conns and errors == 0),
        rss_per_conn_kb=round((peak["rss_kb"] - base["rss_kb"]) / conns, 2),
        maps_per_conn=round((peak["maps"] - base["maps"]) / conns, 3),
        fds_per_conn=round((peak["fds"] - base["fds"]) / conns, 3))
    return point


def projection(target, per_conn, limits):
    """What `target` connections would need of each resource and which limit binds."""
    mem_avail = meta.meminfo_kb("MemAvailable")
    rows = [{"resource": "fds (RLIMIT_NOFILE hard)", "needed": target + FD_MARGIN,
             "available": limits["nofile_hard"]}]
    if per_conn:
        rows.append({"resource": "memory maps (vm.max_map_count)",
                     "needed": int(target * per_conn["maps_per_conn"]) + 1000,
                     "available": limits["max_map_count"]})
        rows.append({"resource": "memory (MemAvailable, KiB)",
                     "needed": int(target * per_conn["rss_per_conn_kb"]),
                     "available": mem_avail})
    for r in rows:
        r["binds"] = bool(r["available"] and r["needed"] > r["available"])
    return rows


def main(argv=None):
    a = parse_args(argv)
    build = Path(a.build_dir)
    a.server, a.load = str(build / "bin" / "echo-server"), str(build / "bin" / "echo-load")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits this
    limits = meta.limits()
    info = meta.collect(meta.REPO_ROOT, build,
                        pinning={"server": a.server_cpu, "load": a.load_cpu, "tool": "taskset"})
    levels = sorted(set(a.levels) | {a.target})
    points = []
    for i, conns in enumerate(levels, 1):
        if conns + FD_MARGIN > limits["nofile_hard"]:
            p = {"conns": conns, "status": "not run",
                 "reason": f"fd limit: {conns} connections + {FD_MARGIN} exceed RLIMIT_NOFILE "
                           f"hard ({limits['nofile_hard']}) of one server process"}
        else:
            p = measure(a, conns)
        points.append(p)
        if p["status"] == "ok":
            kern = (p.get("kernel") or {}).get("per_conn_total_kb")
            line = (f"held {p['held']} (errors {p['errors']}), rss/conn "
                    f"{p['rss_per_conn_kb']} KiB, kernel/conn "
                    f"{kern if kern is not None else 'n/a'} KiB, maps/conn "
                    f"{p['maps_per_conn']}, peak rss {p['peak']['rss_kb']} KiB")
        else:
            line = f"{p['status']}: {p.get('reason', '')}"
        print(f"[maxconns {i}/{len(levels)}] conns={conns:<7} {line}", flush=True)
    ok = [p for p in points if p["status"] == "ok" and p["all_held"]]
    best = max(ok, key=lambda p: p["conns"]) if ok else None
    result = {
        "experiment": "maxconns", "meta": info,
        "config": {"levels": a.levels, "target": a.target, "rate": a.rate,
                   "duration": a.duration, "size": a.size, "server_args": a.server_args,
                   "server": "echo-server --model fiber --threads 1"},
        "points": points,
        "max_held": best["conns"] if best else None,
        "per_conn_at_max": ({k: best[k] for k in ("rss_per_conn_kb", "maps_per_conn",
                                                  "fds_per_conn")} if best else None),
        "target_projection": projection(a.target, best, limits),
    }
    text = json.dumps(result, indent=1) + "\n"
    if a.out_file:
        Path(a.out_file).write_text(text)
        print(f"maxconns: wrote {a.out_file}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
