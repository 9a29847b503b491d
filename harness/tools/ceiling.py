#!/usr/bin/python3
"""echo-load's own ceiling: how fast it can drive the fastest server here, and at what CPU cost.

Starts `echo-server --model epoll` (the yardstick) pinned to one CPU and echo-load pinned to the
other, then (1) runs closed-loop pingpong at a few connection counts, and (2) searches for the
highest open-loop rate echo-load sustains: achieved >= 99% of the rate asked, send lag p99
under 1 ms (the schedule was kept) and no errors: the search's own stopping rule, not a
claim's. The JSON, with a meta block, goes to --out-file (the servers' error output beside it
as ceiling.server.stderr) or standard output.
"""
import sys
from pathlib import Path

from lib import cli, cpu, load, meta, server

SUSTAINED_SHARE = 0.99   # achieved / asked
MAX_LAG_P99_US = 1000.0  # echo-load kept its schedule when its send lag p99 stays below this


def where(a, role):
    return (a.server_cpu if role == "server" else a.load_cpu) if a.pin else None


def one_run(a, conns, extra, log):
    """One echo-load run against a fresh server, so the server's CPU counts only this run."""
    try:
        srv = server.EchoServer(cpu.pinned([a.server, "--model", a.model, "--port", "0",
                                            *a.server_args.split()], where(a, "server")),
                                stderr=log)
    except server.NotStarted:
        raise SystemExit(f"ceiling: not run: {a.server} did not start ({a.model})") from None
    r = load.run(a.load, srv.port, ["--conns", conns, "--size", a.size, "--duration",
                                    a.duration, "--warmup", a.warmup, *extra],
                 where(a, "load"), timeout=a.warmup + a.duration + 60, check=False)
    return r, srv.stop(10)


def closed_loop(a, log):
    rows = []
    for conns in a.conns:
        r, stats = one_run(a, conns, [], log)
        row = {"conns": conns, "requests_per_sec": r.get("requests_per_sec"),
               "load_cores": r.get("cpu", {}).get("cores_used"),
               "load_busiest_worker_core": r.get("cpu", {}).get("busiest_worker_core"),
               "load_us_per_request": us_per_request(r),
               "server_cpu_s": cpu.rusage_s(stats) or 0,
               "server_bytes": (stats or {}).get("bytes"),
               "p99_us": r.get("latency_us", {}).get("p99"), "errors": r.get("errors"),
               "warnings": r.get("warnings")}
        rows.append(row)
        a.say(f"[ceiling] closed loop conns={conns:<5} {num(row['requests_per_sec'], '>9.0f')} "
              f"req/s  echo-load {num(row['load_cores'], '.2f')} cores "
              f"({num(row['load_us_per_request'], '.2f')} us CPU/request)  server "
              f"{num(row['server_cpu_s'], '.2f')} s CPU")
    return rows


def num(v, spec):
    """v formatted, or 'n/a' when the run gave no figure (echo-load failed, no statistics)."""
    return "n/a" if v is None else format(v, spec)


def us_per_request(r):
    cpu = r.get("cpu", {})
    n = r.get("requests") or 0
    return 1e6 * (cpu.get("user_s", 0) + cpu.get("sys_s", 0)) / n if n else None


def sustained(r):
    if "error" in r or sum(r["errors"].values()):
        return False
    lag = r["latency_us"]["send_lag"]["p99"]
    return (r["requests_per_sec"] >= SUSTAINED_SHARE * r["config"]["rate"]
            and lag <= MAX_LAG_P99_US)


def open_loop(a, top, log):
    rows, best = [], None
    for share in a.shares:
        rate = round(top * share)
        r, stats = one_run(a, a.rate_conns, ["--rate", str(rate)], log)
        ok = sustained(r)
        row = {"rate": rate, "share_of_closed_loop": share, "sustained": ok,
               "requests_per_sec": r.get("requests_per_sec"),
               "load_cores": r.get("cpu", {}).get("cores_used"),
               "load_us_per_request": us_per_request(r),
               "p99_us": r.get("latency_us", {}).get("p99"),
               "uncorrected_p99_us": r.get("latency_us", {}).get("uncorrected", {}).get("p99"),
               "send_lag_p99_us": r.get("latency_us", {}).get("send_lag", {}).get("p99"),
               "server_cpu_s": cpu.rusage_s(stats) or 0}
        rows.append(row)
        a.say(f"[ceiling] rate {rate:>7} req/s: achieved "
              f"{num(row['requests_per_sec'], '>9.0f')}, p99 {num(row['p99_us'], '.0f')} us, "
              f"send lag p99 {num(row['send_lag_p99_us'], '.0f')} us, "
              f"echo-load {num(row['load_cores'], '.2f')} cores -> "
              f"{'sustained' if ok else 'not sustained'}")
        if ok and (best is None or rate > best["rate"]):
            best = row
    return rows, best


def main(argv=None):
    ap = cli.parser("ceiling.py", __doc__, duration=3.0, warmup=0.5, pin=False)
    ap.add_argument("--server")
    ap.add_argument("--load")
    ap.add_argument("--model", default="epoll", help="server model (default: the yardstick)")
    ap.add_argument("--server-args", default="")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--conns", type=cli.counts, default=[1, 10, 100, 1000])
    ap.add_argument("--rate-conns", type=int, default=100)
    ap.add_argument("--shares", default="0.5,0.7,0.8,0.9,1.0,1.1",
                    help="open-loop rates to try, as shares of the best closed-loop rate")
    ap.add_argument("--no-pin", dest="pin", action="store_false")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    a = ap.parse_args(argv)
    a.shares = [float(x) for x in a.shares.split(",")]
    a.say = cli.reporter(a)
    a.server = a.server or str(Path(a.build_dir) / "bin" / "echo-server")
    a.load = a.load or str(Path(a.build_dir) / "bin" / "echo-load")
    pinning = {"server": str(a.server_cpu), "load": str(a.load_cpu)} if a.pin else None
    info = meta.collect(meta.REPO_ROOT, a.build_dir, pinning)
    out = Path(a.out_file) if a.out_file else None
    if out and out.exists():
        print(f"ceiling: {out} exists; refusing to overwrite it", file=sys.stderr)
        return 2
    log_path = out.with_name("ceiling.server.stderr") if out else Path("/dev/null")
    with open(log_path, "w") as log:
        closed = closed_loop(a, log)
        top = max(r["requests_per_sec"] or 0 for r in closed)
        rows, best = open_loop(a, top, log)
    result = {"meta": info, "experiment": "echo-load ceiling",
              "config": {"model": a.model, "server_args": a.server_args, "size": a.size,
                         "duration": a.duration, "warmup": a.warmup, "rate_conns": a.rate_conns,
                         "sustained_rule": f"achieved >= {SUSTAINED_SHARE:.0%} of asked, send "
                                           f"lag p99 <= {MAX_LAG_P99_US:.0f} us, no errors"},
              "closed_loop": closed, "open_loop": rows, "highest_sustained": best}
    if out and log_path.stat().st_size == 0:
        log_path.unlink()
    if best:
        a.say(f"[ceiling] highest sustained rate: {best['rate']} req/s, echo-load at "
              f"{num(best['load_cores'], '.2f')} cores")
    else:
        a.say("[ceiling] no rate was sustained")
    cli.emit(result, a, "ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
