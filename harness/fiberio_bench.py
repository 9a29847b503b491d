#!/usr/bin/python3
"""Fiber IO read policies against the callback yardsticks: syscalls, CPU and throughput.

Claim C13 (shared/CLAIMS.md). The fiber echo server under each read policy (eager, wait,
adaptive; engines/io.h) and engine, beside the raw-epoll and libevent callback servers and
thread-per-connection, all measured in the same interleaved rounds (the order rotates every
round, so slow drifts of this shared VM hit every server alike). The raw-epoll server also runs
level-triggered (epoll-level, `--trigger level`): a control for what level triggering costs in
the kernel with no fiber runtime on top, beside the level-triggered merged engine; and walking 8
cache lines of a page of its own per connection after each read (epoll-touch8, `--touch-lines
8`): a control for what per-connection memory on the request path costs, as a fiber's record
and frames are. Loads:

  pingpong     --conns connections (default 100) x 64-byte requests, one in flight each;
  pingpong-1k  the same with --conns-large connections (default 1000), for the default
               policy, eager, and the yardsticks;
  stream       --stream-conns connections each keeping --pipeline requests of --stream-size
               bytes in flight (echo-load --pipeline): reads that fill the server's buffer,
               where trying the read first should pay.

For every server and load, two runs per round:

  count  --count-requests requests (a tenth of that for stream) with `perf stat -e
         raw_syscalls:sys_enter,syscalls:sys_enter_epoll_ctl` attached to the server: system
         calls and epoll_ctl per request served, as the kernel counted them;
  tput   --duration seconds with only task-clock attached (a syscall tracepoint puts every
         task of the machine on the slow system-call path): requests/s and the server's CPU
         time per request.

The server is pinned to one CPU and echo-load to the other; /proc/loadavg is recorded with
every run. Medians of the rounds and per-round paired ratios are reported. Output:
results/runs/<host>/<date>-<sha>/fiberio.json (or --out DIR) and a table on stdout. A target
that is not met is reported as such; nothing is retried until it passes.
"""
import argparse
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import meta  # noqa: E402  (the harness's shared meta module, beside this file)
from echoserver import EchoServer  # noqa: E402
from perfstat import PerfStat  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SYS_EVENT = "raw_syscalls:sys_enter"
CTL_EVENT = "syscalls:sys_enter_epoll_ctl"
POLICIES = ["eager", "wait", "adaptive"]
DEFAULT_ENGINE = "merged"
YARDSTICKS = ["epoll", "epoll-level", "epoll-touch8", "libevent", "thread"]
# A yardstick variant that is not a model of its own: its model and flags. Each is a control
# of the epoll yardstick, reported as a ratio to it.
YARDSTICK_FLAGS = {"epoll-level": ["--model", "epoll", "--trigger", "level"],
                   "epoll-touch8": ["--model", "epoll", "--touch-lines", "8"]}


def yardstick_args(variant):
    """echo-server's flags for a yardstick variant; the model name is the second."""
    return YARDSTICK_FLAGS.get(variant, ["--model", variant])


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="fiberio_bench.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--engines", default=DEFAULT_ENGINE,
                    help="comma list of fiber engines, or 'all' (default: merged)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--conns-large", type=int, default=1000,
                    help="connections of the pingpong-1k load (0: skip it)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--stream-conns", type=int, default=100)
    ap.add_argument("--stream-size", type=int, default=16384)
    ap.add_argument("--pipeline", type=int, default=4)
    ap.add_argument("--count-requests", type=int, default=200000,
                    help="requests of each count run (default 200000)")
    ap.add_argument("--duration", type=float, default=3.0, help="seconds per tput run")
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--sched", default="ring", choices=["star", "ring"])
    ap.add_argument("--switch", default="asm")
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--load-cpu", default="1")
    ap.add_argument("--out", help="output folder (default: a new results/runs/... folder)")
    a = ap.parse_args(argv)
    if min(a.rounds, a.conns, a.size, a.stream_conns, a.stream_size, a.pipeline,
           a.count_requests) < 1 or a.duration <= 0 or a.conns_large < 0:
        ap.error("rounds, connections, sizes, --pipeline, --count-requests and --duration "
                 "must be positive")
    return a


# ---- processes ------------------------------------------------------------------------------

def pinned(cmd, cpu):
    return (["taskset", "-c", cpu] + cmd) if cpu and shutil.which("taskset") else cmd


def valid_choices(server, *args):
    """The values echo-server accepts for an option, from its one-line error."""
    p = subprocess.run([server, *args], capture_output=True, text=True, timeout=10)
    m = re.search(r"valid: ([^)]*)\)", p.stderr)
    if not m:
        sys.exit(f"fiberio_bench: cannot list choices for {args}: {p.stderr.strip()}")
    return [e.strip() for e in m.group(1).split(",") if e.strip()]


def server_cmd(a, variant):
    """variant: 'fiber/<policy>/<engine>' or a yardstick model name."""
    if variant.startswith("fiber/"):
        _, policy, engine = variant.split("/")
        return [a.server, "--model", "fiber", "--engine", engine, "--read-policy", policy,
                "--sched", a.sched, "--switch", a.switch]
    return [a.server, *yardstick_args(variant)]


class Server(EchoServer):
    """One server variant of the comparison; a failure ends the run."""

    def __init__(self, a, variant):
        try:
            super().__init__(pinned(server_cmd(a, variant), a.server_cpu))
        except RuntimeError as e:
            sys.exit(f"fiberio_bench: {variant}: {e}")

    def stop(self):
        try:
            return super().stop(timeout=30)
        except RuntimeError as e:
            sys.exit(f"fiberio_bench: {e}")


def load_args(a, load):
    if load == "stream":
        return ["--conns", a.stream_conns, "--size", a.stream_size, "--pipeline", a.pipeline]
    return ["--conns", a.conns_large if load == "pingpong-1k" else a.conns, "--size", a.size]


def request_size(a, load):
    return a.stream_size if load == "stream" else a.size


def run_load(a, port, load, requests=None):
    cmd = [a.load, "--port", port, *load_args(a, load), "--json"]
    cmd += ["--requests", requests, "--warmup", 0.2] if requests else \
        ["--duration", a.duration, "--warmup", a.warmup]
    p = subprocess.run(pinned([str(c) for c in cmd], a.load_cpu), capture_output=True,
                       text=True, timeout=900)
    if p.returncode != 0:
        sys.exit(f"fiberio_bench: echo-load failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)



# ---- one measured run -------------------------------------------------------------------------

def count_run(a, variant, load, tmpdir):
    la = meta.loadavg()
    srv = Server(a, variant)
    perf = PerfStat(srv.pid, f"{SYS_EVENT},{CTL_EVENT}", tmpdir) if a.perf_ok else None
    # Streamed requests are 256 times larger: a tenth as many keeps the run about as long.
    want = a.count_requests // 10 if load == "stream" else a.count_requests
    ld = run_load(a, srv.port, load, requests=max(want, 100))
    sj = srv.stop()
    counts = perf.result() if perf else {}
    n = sj["bytes"] // request_size(a, load)
    sysc, ctl = counts.get(SYS_EVENT), counts.get(CTL_EVENT)
    reads = sj.get("fiber_reads")
    return {
        "variant": variant, "load": load, "kind": "count", "loadavg": la, "conns":
        load_args(a, load)[1],
        "requests_served": n, "load_requests": ld["requests"],
        "syscalls": sysc, "epoll_ctl_kernel": ctl,
        "syscalls_per_request": sysc / n if sysc is not None and n else None,
        "epoll_ctl_per_request": ctl / n if ctl is not None and n else None,
        "eagain_per_request": reads["again"] / n if reads and n else None,
        "waited_first_per_request": reads["waited_first"] / n if reads and n else None,
        "server_json": {k: sj.get(k) for k in ("read_policy", "engine", "epoll_ctl",
                                               "fiber_reads", "kernel_switches")},
    }


def tput_run(a, variant, load, tmpdir):
    la = meta.loadavg()
    srv = Server(a, variant)
    perf = PerfStat(srv.pid, "task-clock", tmpdir) if a.perf_ok else None
    ld = run_load(a, srv.port, load)
    sj = srv.stop()
    counts = perf.result() if perf else {}
    n = sj["bytes"] // request_size(a, load)
    task_ms = counts.get("task-clock")
    cpu_us = task_ms * 1000.0 / n if task_ms and n else None
    if cpu_us is None and n:  # without perf: the server's own rusage, whole life
        cpu_us = (sj["cpu_user_s"] + sj["cpu_sys_s"]) * 1e6 / n
    return {
        "variant": variant, "load": load, "kind": "tput", "loadavg": la, "conns":
        load_args(a, load)[1],
        "requests_per_sec": ld["requests_per_sec"], "requests_served": n,
        "server_cpu_us_per_request": cpu_us,
        "cpu_source": "perf task-clock" if task_ms else "server rusage",
        "load_saturated": ld["cpu"]["saturated"], "load_cores_used": ld["cpu"]["cores_used"],
        "latency_us": {k: ld["latency_us"][k] for k in ("p50", "p99", "max")},
        "stalled": ld["latency_us"]["max"] >= 100000,
        "errors": {k: v for k, v in ld["errors"].items() if v},
    }


# ---- summary ------------------------------------------------------------------------------------

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(runs):
    out = {}
    for r in runs:
        out.setdefault(r["load"], {}).setdefault(r["variant"], None)
    for load, variants in out.items():
        for v in variants:
            mine = [r for r in runs if r["load"] == load and r["variant"] == v]
            c = [r for r in mine if r["kind"] == "count"]
            t = [r for r in mine if r["kind"] == "tput"]
            variants[v] = {
                "rounds": len(t),
                "syscalls_per_request": med([r["syscalls_per_request"] for r in c]),
                "epoll_ctl_per_request": med([r["epoll_ctl_per_request"] for r in c]),
                "eagain_per_request": med([r["eagain_per_request"] for r in c]),
                "server_cpu_us_per_request": med([r["server_cpu_us_per_request"] for r in t]),
                "requests_per_sec": med([r["requests_per_sec"] for r in t]),
                "stalled_runs": sum(1 for r in t if r["stalled"]),
                "load_saturated_runs": sum(1 for r in t if r["load_saturated"]),
            }
    return out


def paired(runs, load, key, num, den):
    """num/den per round (both ran in the same round), and the median."""
    def by_round(v):
        return {r["round"]: r[key] for r in runs
                if r["load"] == load and r["variant"] == v and r["kind"] == "tput"}
    x, y = by_round(num), by_round(den)
    rs = [x[k] / y[k] for k in sorted(x) if k in y and x[k] and y[k]]
    return {"load": load, "num": num, "den": den, "key": key, "per_round": rs,
            "median": med(rs)}


def ratios(runs, default):
    out = {}
    loads = sorted({r["load"] for r in runs})
    have = {(r["load"], r["variant"]) for r in runs}
    cpu, tput = "server_cpu_us_per_request", "requests_per_sec"
    for load in loads:
        for ys in YARDSTICKS:
            if (load, default) in have and (load, ys) in have:
                out[f"{load} cpu {default}/{ys}"] = paired(runs, load, cpu, default, ys)
                out[f"{load} tput {default}/{ys}"] = paired(runs, load, tput, default, ys)
        for control in YARDSTICK_FLAGS:
            if (load, control) in have and (load, "epoll") in have:
                out[f"{load} cpu {control}/epoll"] = paired(runs, load, cpu, control, "epoll")
        eng = default.split("/")[2]
        for pol in POLICIES:
            v, e = f"fiber/{pol}/{eng}", f"fiber/eager/{eng}"
            if pol != "eager" and (load, v) in have and (load, e) in have:
                out[f"{load} cpu {v}/{e}"] = paired(runs, load, cpu, v, e)
                out[f"{load} tput {v}/{e}"] = paired(runs, load, tput, v, e)
    return out


def targets(summary, rat, default, a):
    """The figures issue #11 asks for, each with its target and whether it holds."""
    out = []

    def bar(name, value, target, ok):
        out.append({"bar": name, "measured": value, "target": target,
                    "holds": None if value is None else bool(ok(value))})

    eng = default.split("/")[2]
    pp = summary.get("pingpong", {})
    for pol in POLICIES:
        v = pp.get(f"fiber/{pol}/{eng}", {}).get("syscalls_per_request")
        if pol == "eager":
            bar(f"syscalls/request, pingpong, eager ({eng})", v, "near 3 (2.8-3.2)",
                lambda x: 2.8 <= x <= 3.2)
        elif f"fiber/{pol}/{eng}" == default or pol == "adaptive":
            bar(f"syscalls/request, pingpong, {pol} ({eng})", v, "<= 2.1", lambda x: x <= 2.1)
    for load, conns in (("pingpong", a.conns), ("pingpong-1k", a.conns_large)):
        if not conns:
            continue
        r = rat.get(f"{load} cpu {default}/epoll", {}).get("median")
        bar(f"server CPU/request {default} / epoll, {conns} conns", r, "<= 1.05",
            lambda x: x <= 1.05)
        r = rat.get(f"{load} tput {default}/epoll", {}).get("median")
        bar(f"throughput {default} / epoll, {conns} conns", r, ">= 0.95", lambda x: x >= 0.95)
        r = rat.get(f"{load} cpu {default}/thread", {}).get("median")
        bar(f"server CPU/request {default} / thread, {conns} conns", r, "reported (< 1: fiber "
            "cheaper)", lambda x: x < 1)
    r = rat.get(f"stream cpu fiber/adaptive/{eng}/fiber/eager/{eng}", {}).get("median")
    bar("stream: CPU/request adaptive / eager", r, "<= 1.05", lambda x: x <= 1.05)
    r = rat.get(f"stream cpu fiber/wait/{eng}/fiber/eager/{eng}", {}).get("median")
    bar("stream: CPU/request wait / eager (what waiting first costs)", r, "reported",
        lambda x: True)
    return out


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def print_table(summary, rat, bars):
    for load, variants in summary.items():
        print(f"\n{load}: {'server':24} {'sys/req':>8} {'ctl/req':>8} {'EAGAIN':>7} "
              f"{'cpu us/req':>10} {'req/s':>9}")
        for v, s in variants.items():
            print(f"{'':{len(load) + 2}}{v:24} {fmt(s['syscalls_per_request']):>8} "
                  f"{fmt(s['epoll_ctl_per_request']):>8} {fmt(s['eagain_per_request'], '.2f'):>7} "
                  f"{fmt(s['server_cpu_us_per_request'], '.2f'):>10} "
                  f"{fmt(s['requests_per_sec'], '.0f'):>9}")
    print()
    for name, r in rat.items():
        print(f"{name}: median {fmt(r['median'])} (rounds: "
              f"{', '.join(fmt(x) for x in r['per_round'])})")
    for b in bars:
        verdict = {True: "holds", False: "does NOT hold", None: "not measured"}[b["holds"]]
        print(f"target {b['bar']}: {fmt(b['measured'])} (target {b['target']}): {verdict}")


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    build = Path(a.build_dir)
    a.server, a.load = meta.echo_binaries(build, "fiberio_bench")
    declared = meta.registry(build / "bin" / "engine-info", "fiberio_bench")
    engines = [m["name"] for m in declared]
    # A completion engine performs the reads itself: the read policies do not apply to it,
    # so it is measured once.
    completion = {m["name"] for m in declared if (m.get("props") or {}).get("completion")}
    models = [m["name"] for m in meta.registry(a.server, "fiberio_bench")]
    policies = valid_choices(a.server, "--model", "fiber", "--read-policy", "?")
    wanted = engines if a.engines == "all" else a.engines.split(",")
    bad = [e for e in wanted if e not in engines]
    if bad:
        print(f"fiberio_bench: unknown engine {', '.join(bad)} (valid: {', '.join(engines)})",
              file=sys.stderr)
        return 2
    # The server's default read policy, from its own statistics line.
    probe = subprocess.Popen([a.server, "--model", "fiber"], stdout=subprocess.PIPE,
                             text=True)
    probe.stdout.readline()
    probe.send_signal(signal.SIGINT)
    default_policy = json.loads(probe.communicate(timeout=10)[0].splitlines()[-1])["read_policy"]
    default = f"fiber/{default_policy}/{DEFAULT_ENGINE}"
    a.perf_ok, why = meta.perf_available(SYS_EVENT)
    if not a.perf_ok:
        print(f"fiberio_bench: not run: perf counts ({why}); CPU from the server's rusage")
    fibers = [f"fiber/{p}/{e}" for e in wanted for p in policies
              if e not in completion or p == policies[0]]
    yard = [m for m in YARDSTICKS if yardstick_args(m)[1] in models]
    plan = [("pingpong", fibers + yard), ("stream", fibers + yard)]
    if a.conns_large:
        big = [f"fiber/{p}/{DEFAULT_ENGINE}" for p in policies] + yard
        plan.append(("pingpong-1k", list(dict.fromkeys([default] + big))))
    info = meta.collect(ROOT, build, pinning={"server": a.server_cpu, "load": a.load_cpu})
    out_dir = Path(a.out) if a.out else meta.new_run_dir(ROOT / "results" / "runs", info)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"fiberio_bench: default {default}; engines {', '.join(wanted)}; {a.rounds} rounds; "
          f"server on CPU {a.server_cpu}, load on CPU {a.load_cpu}; load average {meta.loadavg()}")
    runs = []
    la_start = meta.loadavg()
    with tempfile.TemporaryDirectory(prefix="fiberio-bench-") as tmp:
        for rnd in range(a.rounds):
            for load, variants in plan:
                k = rnd % len(variants)
                for v in variants[k:] + variants[:k]:
                    c = dict(count_run(a, v, load, tmp), round=rnd)
                    t = dict(tput_run(a, v, load, tmp), round=rnd)
                    runs += [c, t]
                    print(f"  round {rnd + 1}/{a.rounds} {load:11} {v:24} sys/req "
                          f"{fmt(c['syscalls_per_request'])} cpu "
                          f"{fmt(t['server_cpu_us_per_request'], '.2f')} us/req "
                          f"{fmt(t['requests_per_sec'], '.0f')} req/s (load {t['loadavg']})",
                          flush=True)
    summary = summarise(runs)
    rat = ratios(runs, default)
    bars = targets(summary, rat, default, a)
    result = {"experiment": "fiberio", "meta": info,
              "config": {k: v for k, v in vars(a).items() if k not in ("perf_ok",)},
              "default": default, "policies": policies, "engines": wanted,
              "perf": a.perf_ok, "loadavg_start": la_start, "loadavg_end": meta.loadavg(),
              "summary": [dict(load=ld, variant=v, **st) for ld, vs in summary.items()
                          for v, st in vs.items()],
              "ratios": rat, "targets": bars, "runs": runs}
    path = out_dir / "fiberio.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print_table(summary, rat, bars)
    print(f"fiberio_bench: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
