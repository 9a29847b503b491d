"""Small synthetic run folders for the plots/report tests: the same JSON shapes the harness
writes, with numbers chosen by each test so a verdict rule can be driven to every outcome."""
import json
import math
import tempfile
import types
import unittest
from pathlib import Path

META = {"host": "synth", "cpu_model": "Synthetic CPU", "cores": 2, "kernel": "Linux 0.0",
        "git_sha": "0123456789ab", "git_dirty": False, "date": "2026-01-01T00:00:00Z",
        "limits": {"nofile_hard": 20000, "pid_max": 32768, "max_map_count": 65530,
                   "mem_total_kb": 8388608},
        "compiler": {"version": "gcc 12", "build_type": "Release", "flags": "-O2"}}
BACKENDS = ["asm", "fcontext", "setjmp", "ucontext"]


def bench(name, ns, **counters):
    return dict({"name": name + "_median", "run_name": name, "run_type": "aggregate",
                 "aggregate_name": "median", "real_time": ns, "cpu_time": ns,
                 "time_unit": "ns"}, **counters)


def switch(switch_ns=None, call=1.4, syscall=200.0, ring_factor=0.5, fibers=(2, 16),
           ctl_growth=1.2, floors=None, copy_ns=None, chain=None, ctl_levels=(10, 1000, 19000)):
    """chain: ns of the `call/chain` row (a call's latency), left out when None, as older
    runs have it; ctl_growth: the epoll_ctl pair's cost at the last of ctl_levels over the
    first, linear in the fds between, or a function of the fds giving the cost in ns."""
    switch_ns = switch_ns or {"asm": 5.0, "fcontext": 6.0, "setjmp": 17.0, "ucontext": 280.0}
    rows = [bench("call/noinline", call), bench("syscall/getppid", syscall)]
    if chain is not None:
        rows.append(bench("call/chain", chain))
    rows += [bench(f"switch/{b}", t) for b, t in switch_ns.items()]
    rows += [bench(f"switch/{f}", t) for f, t in (floors or {}).items()]
    # copy_ns(bytes, fibers) -> ns per resume; default: 40 ns plus 0.02 ns per byte.
    cost = copy_ns or (lambda n, f: 40.0 + 0.02 * n + (20.0 if f > 1 else 0.0))
    for f in (1, 100000):
        for n in (8, 64, 256, 1024, 4096, 8192):
            rows.append(bench(f"copystack/resume/bytes:{n}/fibers:{f}", cost(n, f), fibers=f,
                              live_bytes=n + 248.0, restores_per_op=1.0, saves_per_op=1.0))
    for b, t in switch_ns.items():
        for f in fibers:
            rows.append(bench(f"sched/star/{b}/fibers:{f}", 2.2 * t, fibers=f,
                              switches_per_hop=2.0))
            rows.append(bench(f"sched/ring/{b}/fibers:{f}", 2.2 * t * ring_factor, fibers=f,
                              switches_per_hop=1.0))
    for k in ("thread", "process"):
        rows.append(bench(f"kernel/{k}_pingpong/same_cpu", 2500.0))
        rows.append(bench(f"kernel/{k}_pingpong/cross_cpu", 25000.0))
    lo, hi = ctl_levels[0], ctl_levels[-1]
    ctl = ctl_growth if callable(ctl_growth) else \
        (lambda n: 500.0 * (1 + (ctl_growth - 1) * (n - lo) / (hi - lo)))
    for n in ctl_levels:
        rows.append(bench(f"syscall/epoll_ctl_add_del/registered:{n}", ctl(n), registered=n))
    return {"experiment": "switch", "meta": META, "benchmarks": rows,
            "context": {"mhz_per_cpu": 2000, "spectre_v2": "none"}}


def icount():
    rows = [{"name": "icount/call/noinline", "instructions_per_unit": 5.0}]
    for b, n in zip(BACKENDS, (29, 33, 109, 62)):
        rows.append({"name": f"icount/switch/{b}", "instructions_per_unit": float(n)})
        rows.append({"name": f"icount/sched/star/{b}/fibers:16",
                     "instructions_per_unit": 3.5 * n})
        rows.append({"name": f"icount/sched/ring/{b}/fibers:16",
                     "instructions_per_unit": 2.0 * n})
    return {"experiment": "icount", "meta": META, "benchmarks": rows}


def props(uc_syscalls=1.0, overflow_ok=True, copy_stack=False, virtualized=True):
    backends = {}
    for b in BACKENDS:
        backends[b] = {"syscalls_per_switch": uc_syscalls if b == "ucontext" else 0.0,
                       "overflow": {"test": f"switch-tests overflow {b}", "exit": 0,
                                    "passed": overflow_ok or b != "asm",
                                    "message": "fiber stack overflow: fault at 0x1"}}
    return {"experiment": "props", "meta": META, "backends": backends,
            "virtualized": virtualized, "setjmp_new_stack": "x.c - a one-time bootstrap",
            "copy_stack": {"implemented": copy_stack, "note": "synthetic"}}


def engines(ratio=1.2, naive_ctl=2.0, cpu_ratio=1.1, rounds=1, jitter=0.0):
    """rounds > 1: merged's throughput in round i is off its median by up to +-jitter
    (relative), so the paired ratio has an interval."""
    base = 50000.0
    summary = {}
    for e, ctl in (("naive", naive_ctl), ("merged", 0.01), ("oneshot", 1.0), ("edge", 0.01),
                   ("libevent", 1.04)):
        tput = base * (ratio if e == "merged" else 1.0)
        summary[e] = {"ctl_per_request_engine": ctl, "ctl_per_request_kernel": ctl,
                      "requests_per_sec": tput,
                      "server_cpu_us_per_request": 8.0 * (cpu_ratio if e == "naive" else 1.0)}
    def off(e, i):
        return 1 + jitter * (2 * i / (rounds - 1) - 1) if e == "merged" and rounds > 1 else 1
    runs = [{"engine": e, "kind": k, "round": i,
             "requests_per_sec": s["requests_per_sec"] * off(e, i),
             "ctl_per_request_engine": s["ctl_per_request_engine"],
             "server_cpu_us_per_request": s["server_cpu_us_per_request"]}
            for i in range(rounds) for e, s in summary.items() for k in ("count", "tput")]
    return {"experiment": "engines", "meta": META, "summary": summary,
            "ratios": {"tput merged/naive": {"per_round": [ratio], "median": ratio},
                       "cpu per request naive/merged": {"per_round": [cpu_ratio],
                                                        "median": cpu_ratio}},
            "profile": {"naive": {"engine": "naive", "samples": 1000, "epoll_ctl_share": 0.2,
                                  "epoll_wait_share": 0.02},
                        "merged": {"engine": "merged", "samples": 900, "epoll_ctl_share": 0.0,
                                   "epoll_wait_share": 0.03}},
            "config": {"server_cpu": "0", "load_cpu": "1", "conns": 50, "size": 64,
                       "rounds": 1},
            "runs": runs}


def point(model, mode, conns, rps, errors=0, rss_kb=10.0, p99_us=1000.0, kernel_kb=None,
          ramp_s=0.01, ramp_errors=0):
    p = {"model": model, "mode": mode, "conns": conns, "status": "ok",
         "load": {"requests_per_sec": rps, "requests": int(rps * 5), "unfinished": 0,
                  "errors": {"timeout": errors}, "mismatches": 0,
                  "latency_us": {"p99": p99_us},
                  "ramp_up": {"seconds": ramp_s, "complete": True, "unfinished": 0,
                              "errors_total": ramp_errors,
                              "errors": {"timeout": ramp_errors}}},
         "rss": {"per_conn_kb": rss_kb, "pss_per_conn_kb": rss_kb * 0.95},
         "server": {"cpu_user_s": 0.1, "cpu_sys_s": 0.4, "bytes": 64 * 100000,
                    "max_concurrent": conns}}
    if kernel_kb is not None:
        parts = {"KernelStack": kernel_kb / 2, "SUnreclaim": kernel_kb / 2 - 0.5,
                 "PageTables": 0.5}
        p["kernel"] = {"per_conn_kb": parts, "per_conn_total_kb": kernel_kb}
    return p


def sweep(thread=None, fork=None, levels=(1, 10, 100, 1000), thread_rss=10.0, extra=(),
          thread_kernel=20.0):
    thread = thread or {1: 10000, 10: 40000, 100: 40000, 1000: 39000}
    fork = fork or {c: 3000 for c in levels}
    pts = []
    for mode in ("pingpong", "churn"):
        for c, r in thread.items():
            pts.append(point("thread", mode, c, r, rss_kb=thread_rss, kernel_kb=thread_kernel,
                             ramp_s=0.001 * c))
        for c, r in fork.items():
            pts.append(point("fork", mode, c, r, rss_kb=900.0))
        for c in levels:
            pts.append(point("fiber", mode, c, 100000, rss_kb=10.0))
            pts.append(point("epoll", mode, c, 120000, rss_kb=0.1))
    pts += list(extra)
    return {"experiment": "echo sweep", "meta": META, "config": {"levels": list(levels)},
            "points": pts}


def maxconns(held=19900, errors=0, target=100000, held_target=False, copy_pss=3.5):
    """One fiber server on one CPU: 19900 connections held in both stack modes (one worker),
    and the target either held by 7 workers (held_target) or not run at a machine limit."""
    def point(conns, stack, procs, pss, maps, ok_held):
        return {"conns": conns, "stack": stack, "procs": procs, "status": "ok",
                "held": ok_held, "errors": errors, "all_held": ok_held >= conns and errors == 0,
                "rss_per_conn_kb": pss + 0.5, "pss_per_conn_kb": pss, "maps_per_conn": maps,
                "fds_per_conn": 1.0, "server_cpu_s": 2.0}
    pts = [point(19900, "guarded", 1, 9.0, 2.0, held), point(19900, "copy", 1, copy_pss, 0.0, held)]
    if held_target:
        pts += [point(target, "guarded", 7, 9.0, 2.0, target),
                point(target, "copy", 7, copy_pss, 0.0, target)]
    elif target > 19900:
        pts += [{"conns": target, "stack": s, "procs": 7, "status": "not run",
                 "reason": "listener limit: synthetic"} for s in ("guarded", "copy")]
    top = target if held_target else 19900
    all_ok = all(p["all_held"] for p in pts if p["status"] == "ok")
    per = {"rss_per_conn_kb": copy_pss + 0.5, "pss_per_conn_kb": copy_pss, "maps_per_conn": 0.0,
           "fds_per_conn": 1.0}
    return {"experiment": "maxconns", "meta": META,
            "config": {"target": target, "levels": [19900], "stacks": ["guarded", "copy"],
                       "procs": "auto", "server_cpus": "0", "load_cpus": "1"},
            "points": pts,
            "max_held": top if all_ok else None,
            "per_conn_at_max": per if all_ok else None,
            "by_stack": {s: {"max_held": top if all_ok else None,
                             "per_conn_at_max": per if all_ok else None}
                         for s in ("guarded", "copy")},
            "target_projection": [
                {"resource": "fds per worker (RLIMIT_NOFILE hard)", "needed": target // 7 + 64,
                 "available": 20000, "binds": False},
                {"resource": "memory (MemAvailable, KiB)", "needed": target * 9,
                 "available": 8000000, "binds": target * 9 > 8000000}]}


def threads(ratio=1.0, load_cores=0.5, server_cores=1.0, cpu2=6.0, rounds=1, t1_cores=1.0,
            aa=None):
    """threads.json: 2 scheduler threads at `ratio` times 1 thread's throughput on shared CPUs;
    with rounds > 1 every variant has per-round records (server and load cores each round,
    the ratio spread +-1% over the rounds); aa: the A/A per-round ratios, left out when None."""
    s = {"t1-pinned": {"threads": 1, "runs": rounds, "requests_per_sec": 100000.0,
                       "server_cores_used": 1.0, "server_cpu_us_per_request": 6.0},
         "t1-shared": {"threads": 1, "runs": rounds, "requests_per_sec": 100000.0,
                       "server_cores_used": t1_cores, "server_cpu_us_per_request": 6.0},
         "t2-shared": {"threads": 2, "runs": rounds, "requests_per_sec": 100000.0 * ratio,
                       "server_cores_used": server_cores, "server_cpu_us_per_request": cpu2}}
    runs = [{"variant": "t2-shared", "status": "ok", "load_cores_used": load_cores}]
    if rounds > 1:
        runs = [dict(v, variant=name, status="ok", round=i, load_cores_used=load_cores,
                     requests_per_sec=v["requests_per_sec"] * (
                         1 + (0.01 * (2 * i / (rounds - 1) - 1) if name == "t2-shared" else 0)))
                for i in range(rounds) for name, v in s.items()]
    doc = {"experiment": "threads", "meta": META, "config": {"cores": 2}, "summary": s,
           "ratio_t2_over_t1_shared": ratio, "runs": runs}
    if aa is not None:
        doc["aa"] = {"requests_per_sec t1-shared/t1-shared": {"per_round": list(aa)}}
    return doc


def scale_part(values, levels, extra=None):
    """A scale.json part: values {config: {level: median or "not run: ..."}}."""
    summary = {}
    for cfg, per in values.items():
        summary[cfg] = {}
        for n, v in per.items():
            if isinstance(v, str):
                summary[cfg][str(n)] = {"status": v}
            else:
                summary[cfg][str(n)] = {"status": "ok", "median": v, "rounds": [v]}
                if extra:
                    summary[cfg][str(n)][extra] = extra_value(cfg, n, v)
    return {"levels": list(levels), "configs": list(values), "summary": summary, "runs": []}


def extra_value(cfg, n, v):
    return v.get("cpu") if isinstance(v, dict) else 20.0


def scale(poll_growth=100.0, epoll_growth=1.0, churn_growth=1.2):
    levels = (0, 1000, 10000)
    idle = {"select": {0: 4.0, 1000: 30.0, 10000: "not run: FD_SETSIZE (synthetic)"},
            "poll": {0: 4.0, 1000: 4.0 * poll_growth / 10, 10000: 4.0 * poll_growth}}
    for e in ("naive", "merged", "oneshot", "edge", "libevent", "uring-poll", "epoll (model)",
              "uring (model)"):
        idle[e] = {0: 4.0, 1000: 4.0, 10000: 4.0 * epoll_growth}
    idle_part = scale_part(idle, levels)
    idle_part.update({"active_conns": 10, "not_built": {"uring": "not run: synthetic"},
                      "methods": {e: "poll" if e == "poll" else "select" if e == "select"
                                  else "io_uring" if e == "uring-poll" else "epoll"
                                  for e in idle if "(model)" not in e}})
    churn = scale_part({"merged": {0: 5000.0, 10000: 4500.0},
                        "edge": {0: 5000.0, 10000: 4800.0}}, (0, 10000),
                       extra="server_cpu_us_per_request")
    churn["summary"]["merged"]["0"]["server_cpu_us_per_request"] = 20.0
    churn["summary"]["merged"]["10000"]["server_cpu_us_per_request"] = 20.0 * churn_growth
    comp = scale_part({c: {10: 20000.0, 1000: 40000.0} for c in
                       ("merged", "uring-poll", "epoll (model)", "uring (model)")},
                      (10, 1000), extra="server_cpu_us_per_request")
    comp["conns"] = [10, 1000]
    comp["counts"] = [{"config": c, "conns": n, "status": "ok",
                       "kernel_entries_per_request": 3.0 if "uring" not in c else 0.5,
                       "event_loop_calls_per_request": 0.5}
                      for c in comp["configs"] for n in (10, 1000)]
    return {"experiment": "scale", "meta": META, "config": {"rounds": 1, "duration": 0.4},
            "idle": idle_part, "churn": churn, "completion": comp}
def slow(levels=(10, 1000)):
    pts = [dict(point(m, "slow", c, c * 1.8, p99_us=80000.0, kernel_kb=4.0), load_args="x")
           for m in ("thread", "prefork", "fiber", "epoll") for c in levels]
    return {"experiment": "echo sweep", "meta": META,
            "config": {"models": ["thread", "prefork", "fiber", "epoll"], "modes": ["slow"],
                       "levels": list(levels), "size": 64,
                       "load_args": "--chunk 16 --chunk-delay 0.02 --think 0.5"},
            "points": pts}


def handoff(thread_ns=None, levels=(2, 16, 256, 4096), rounds=1):
    """thread_ns(m) -> ns per hand-off; default: 700 + 150 log2(m), the claim's shape. With
    rounds > 1 each round's figures are off by up to +-2%, differently at each level."""
    thread_ns = thread_ns or (lambda m: 700 + 150 * math.log2(m))
    series = {"thread": [{"contexts": m, "status": "ok", "cpu_ns_per_handoff": thread_ns(m)}
                         for m in levels],
              "fiber": [{"contexts": m, "status": "ok", "cpu_ns_per_handoff": 10.0 + m / 1000}
                        for m in levels]}
    runs = [dict(p, kind=k, round=i, cpu_ns_per_handoff=p["cpu_ns_per_handoff"] * (
                1 + 0.02 * math.sin(3 * i + j) if rounds > 1 else 1))
            for i in range(rounds) for k, pts in series.items() for j, p in enumerate(pts)]
    return {"experiment": "handoff", "meta": META,
            "config": {"levels": list(levels), "rounds": rounds},
            "series": series, "runs": runs}


def fiberio(cpu=1.0, tput=1.0, sysc=2.05, cpu_1k=None, tput_1k=None, touch8_1k=None,
            stream_sysc=None, stream_cpu=1.0):
    """The read-policy experiment: the default fiber server's ratios to the epoll server;
    touch8_1k: the default's CPU ratio to epoll-touch8 at 1000 connections (left out when
    None, as older runs); stream_sysc: the default's system calls per request in the stream
    (sysc when None)."""
    default = "fiber/adaptive/merged"
    cpu_1k = cpu if cpu_1k is None else cpu_1k
    tput_1k = tput if tput_1k is None else tput_1k
    summary, ratios = {}, {}
    for load, c, t in (("pingpong", cpu, tput), ("pingpong-1k", cpu_1k, tput_1k),
                       ("stream", stream_cpu, 1.0)):
        summary[load] = {
            "fiber/eager/merged": {"syscalls_per_request": 3.05, "epoll_ctl_per_request": 0.01,
                                   "eagain_per_request": 1.0, "server_cpu_us_per_request": 4.0,
                                   "requests_per_sec": 40000.0},
            default: {"syscalls_per_request": sysc, "epoll_ctl_per_request": 0.01,
                      "eagain_per_request": 0.0, "server_cpu_us_per_request": 3.0 * c,
                      "requests_per_sec": 50000.0 * t},
            "epoll": {"syscalls_per_request": 2.02, "epoll_ctl_per_request": 0.0,
                      "server_cpu_us_per_request": 3.0, "requests_per_sec": 50000.0},
            "thread": {"syscalls_per_request": 2.05, "server_cpu_us_per_request": 9.0,
                       "requests_per_sec": 20000.0}}
        if load == "stream" and stream_sysc is not None:
            summary[load][default]["syscalls_per_request"] = stream_sysc
        if load == "pingpong-1k" and touch8_1k is not None:
            summary[load]["epoll-touch8"] = {"syscalls_per_request": 2.02,
                                             "server_cpu_us_per_request": 3.0 * c / touch8_1k,
                                             "requests_per_sec": 50000.0 * t}
        ratios[f"{load} cpu {default}/epoll"] = {"per_round": [c], "median": c}
        ratios[f"{load} tput {default}/epoll"] = {"per_round": [t], "median": t}
    rows = [dict(load=ld, variant=v, **st) for ld, vs in summary.items() for v, st in vs.items()]
    runs = [dict(row, kind="tput", round=0) for row in rows]
    return {"experiment": "fiberio", "meta": META, "default": default, "summary": rows,
            "engines": ["merged"], "policies": ["eager", "wait", "adaptive"],
            "ratios": ratios, "runs": runs, "loadavg_start": [1.0, 1.0, 1.0], "loadavg_end": [1.0, 1.0, 1.0],
            "config": {"rounds": 1, "server_cpu": "0", "load_cpu": "1", "conns": 100,
                       "conns_large": 1000, "size": 64, "stream_conns": 100, "pipeline": 4,
                       "stream_size": 16384}}


C13_DECIDE = [("cpu", [1.05, 1.25]), ("tput", [0.95, 0.8])]  # the presets' --decide


def fiberio_sampled(cpu, tput, cpu_1k, tput_1k, first=5, max_rounds=20, stopped=None,
                    over_budget=None):
    """fiberio.json of a run that sampled until decided (experiments/fiberio.py --decide): the
    per-round ratios of the default fiber server over epoll on ping-pong (cpu, tput) and over
    epoll-touch8 at 1000 connections (cpu_1k, tput_1k), one list entry per round; rounds from
    `first` on are the added ones (`sequential` true). The `sequential` block is the driver's
    own (lib/fiberio_sequential.sequential_record over these runs, design(max_rounds, first)); a pair
    stops as the driver says (decided, max looks) unless `stopped` ({load: why}, with
    over_budget {load: ...}) says otherwise. The stream is shown, not judged."""
    from lib import fiberio_sequential as FB  # harness/, on the PYTHONPATH
    from lib import sequential
    doc = fiberio(touch8_1k=1.0, stream_sysc=5.0)
    default = doc["default"]
    runs = []
    for load, den, cs, ts in (("pingpong", "epoll", cpu, tput),
                              ("pingpong-1k", "epoll-touch8", cpu_1k, tput_1k)):
        for i, (c, t) in enumerate(zip(cs, ts)):
            for v, cv, tv in ((default, 3.0 * c, 50000.0 * t), (den, 3.0, 50000.0)):
                runs.append({"load": load, "variant": v, "kind": "tput", "round": i,
                             "status": "ok", "server_cpu_us_per_request": cv,
                             "requests_per_sec": tv, "sequential": i >= first})
    a = types.SimpleNamespace(decide=C13_DECIDE, rounds=first, budget_s=None)
    design = sequential.design(max(first, max_rounds), first=first)
    pairs = [("pingpong", default, "epoll"), ("pingpong-1k", default, "epoll-touch8")]
    why, over = {}, {}
    for p in pairs:
        state = FB.pair_state(a, runs, p, design)
        why[p] = (stopped or {}).get(p[0]) or (
            "decided" if all(f["decided"] for f in state.values()) else
            "max looks" if FB.pending(state) is None else "budget")
        if (over_budget or {}).get(p[0]):
            over[p] = over_budget[p[0]]
    added = max(len(cpu), len(cpu_1k)) - first
    doc.update(runs=runs, ratios={},
               sequential=FB.sequential_record(a, runs, pairs, design, why, over, added, 1.0))
    doc["config"] = dict(doc["config"], rounds=first, decide=[[f, ts] for f, ts in C13_DECIDE],
                         sequential_max_rounds=max_rounds)
    return doc


def hooks(direct_ns=150.0, hooked_ns=152.0, cpu=(4.0, 4.2), deadlocked=True, echo_ok=True):
    """hooks.json (harness/hooks_bench.py): hook/ and sync/ rows, icount, echo, deadlock."""
    rows = {}
    for call in ("read", "write"):
        for how, t in (("syscall", 120.0), ("fallthrough", 122.0), ("direct", direct_ns),
                       ("hooked", hooked_ns)):
            rows[f"hook/{call}/pipe/{how}"] = {"ns_median": t, "cpu_ns_median": t,
                                               "real_ns_median": t, "counters": {}}
    for lock, t in (("fiber_mutex", 8.0), ("event_lock", 12.0), ("pthread_mutex", 4.0)):
        rows[f"sync/{lock}/uncontended"] = {"ns_median": t, "counters": {}}
    rows["sync/fiber_mutex/contended/fibers:2"] = {"ns_median": 600.0,
                                                   "counters": {"other_pairs_per_pair": 1.0}}
    rows["sync/event_lock/contended/fibers:2"] = {
        "ns_median": 900.0, "counters": {"other_pairs_per_pair": 1.0, "wakeups_per_pair": 1.0}}
    rows["sync/pthread_mutex/contended/fibers:2"] = {"not_run": "not run: blocks the thread"}
    rows["sync/fiber_mutex/contended/threads:2"] = {"not_run": "not run: one runtime only"}
    rows["sync/event_lock/contended/threads:2"] = {
        "ns_median": 60.0, "counters": {"other_pairs_per_pair": 1.2, "wakeups_per_pair": 0.01}}
    rows["sync/pthread_mutex/contended/threads:2"] = {"ns_median": 90.0, "counters": {}}
    icount = {"hook/read/pipe/direct": 117.0, "hook/read/pipe/hooked": 98.0}
    echo = {"status": "ok",
            "config": {"engine": "merged", "conns": 50, "size": 64, "rounds": 5,
                       "duration_s": 3.0, "server_cpu": "0", "load_cpu": "1"},
            "summary": {"direct": {"requests_per_sec": 40000.0,
                                   "server_cpu_us_per_request": cpu[0],
                                   "hook_calls_per_request": None},
                        "hooked": {"requests_per_sec": 39000.0,
                                   "server_cpu_us_per_request": cpu[1],
                                   "hook_calls_per_request": 2.0}},
            "ratios": {"cpu per request hooked/direct": {"median": cpu[1] / cpu[0],
                                                         "rounds": [cpu[1] / cpu[0]] * 5},
                       "throughput hooked/direct": {"median": 0.975, "rounds": [0.975] * 5}}}
    dl = {"status": "ok",
          "pthread_mutex": {"test_passed": True, "deadlocked": deadlocked,
                            "outcome": "DEADLOCK detected after 1000 ms (bound 1000 ms):"
                            if deadlocked else "finished after 41 ms"},
          "event_lock": {"test_passed": True, "deadlocked": False,
                         "outcome": "finished after 41 ms (bound 5000 ms):"}}
    return {"experiment": "hooks", "meta": META, "load_average": {"start": [1.0, 1.0, 1.0]},
            "bench": {"status": "ok", "rows": rows},
            "icount": {"status": "ok", "instructions_per_unit": icount},
            "echo": echo if echo_ok else {"status": "not run: echo-load failed"},
            "deadlock": dl}


def suite():
    return {"experiment": "suite", "meta": META, "preset": "quick", "seconds": 60,
            "loadavg_start": [0.5, 0.5, 0.5], "loadavg_end": [1.0, 0.8, 0.6],
            "steps": {"switch": {"status": "ok", "seconds": 10}}}


def write(folder, **docs):
    """Writes each given document as <name>.json; a value of None leaves the file out."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in docs.items():
        if doc is not None:
            (folder / f"{name}.json").write_text(json.dumps(doc))
    return folder


def fibermem(copy_pss=776.0, guarded_pss=4500.0):
    pts = [{"stack": "guarded", "fibers": 30000, "status": "ok", "pss_bytes_per_fiber": guarded_pss,
            "rss_bytes_per_fiber": guarded_pss, "maps_per_fiber": 2.0},
           {"stack": "guarded", "fibers": 100000,
            "status": "not run: fiber 32743 of 100000 could not be made (synthetic)"}]
    for n in (100000, 1000000):
        pts.append({"stack": "copy", "fibers": n, "status": "ok", "pss_bytes_per_fiber": copy_pss,
                    "rss_bytes_per_fiber": copy_pss, "maps_per_fiber": 0.0})
    return {"experiment": "fibermem", "meta": META, "config": {}, "points": pts}


TIMER_STRUCTURES = ["heap", "rbtree", "wheel"]


def timers(wheel_late=1003.0, tree_late=81.0, floor=78.0, wheel_over_tree=(0.9,) * 5,
           cyclictest=True, conns=10000):
    """A timers.json (claim C17): per round the server without timeouts at 5 us per request,
    the tree 5% dearer, the wheel `wheel_over_tree[r]` times the tree, at `conns` connections;
    lateness p50 per structure, 1% apart round to round."""
    cpu = []
    for r, w in enumerate(wheel_over_tree):
        none = 5.0 * (1 + 0.01 * r)
        for v, us in (("none", none), ("heap", none * 1.03), ("rbtree", none * 1.05),
                      ("wheel", none * 1.05 * w)):
            cpu.append({"variant": v, "conns": conns, "kind": "tput", "round": r, "status": "ok",
                        "reasons": [], "server_cpu_us_per_request": us})
    late = []
    for r in range(3):
        for v, p50 in (("heap", tree_late), ("rbtree", tree_late), ("wheel", wheel_late),
                       ("cyclictest", floor)):
            if v == "cyclictest" and not cyclictest:
                late.append({"variant": v, "round": r, "status": "not run",
                             "why": "cyclictest not installed (Debian's rt-tests)"})
                continue
            late.append({"variant": v, "round": r, "status": "ok", "p50": p50 * (1 + 0.01 * r),
                         "p99": p50 * 3, "max": p50 * 10})
    summary = [{"variant": v, "rounds": 3,
                **{q: {"median": 100.0, "low": 90.0, "high": 110.0, "n": 3}
                   for q in ("p50", "p99", "max")}} for v in TIMER_STRUCTURES + ["cyclictest"]]
    return {"experiment": "timers", "structures": TIMER_STRUCTURES, "config": {},
            "cpu": {"runs": cpu, "read_timeout_ms": 30000, "skipped": {},
                    "summary": [{"conns": conns, "variant": "none", "server_cpu_us_per_request":
                                 {"median": 5.0, "low": 4.9, "high": 5.1, "n": 5}}],
                    "ratios": {}},
            "lateness": {"status": "ok", "sleeps": 300, "sleep_us": 1000, "pending": 1000,
                         "runs": late, "summary": summary},
            "idle": {"status": "ok", "conns": 100, "window_s": 1.0, "summary": [
                {"variant": "fiber", "wakeups_per_s": {"median": 0.0, "n": 1},
                 "wait_calls_per_s": {"median": 0.0, "n": 1}},
                {"variant": "fiber --poll-tick 1", "wakeups_per_s": {"median": 900.0, "n": 1},
                 "wait_calls_per_s": {"median": 900.0, "n": 1}}]}}


# (server, kind, CPU per request in us) of the synthetic peers.json.
PEERS = [("fiber", "ours", 4.0), ("epoll", "callback", 3.8), ("libevent", "callback", 6.0),
         ("libuv", "callback", 4.2), ("libev", "callback", 4.1), ("asio-coro", "coroutine", 6.5),
         ("pth", "coroutine", 14.0)]


def peers(levels=(100, 1000)):
    """peers.json: the fiber server and the six peers at each level, pth not run beyond its
    ceiling, intervals and paired ratios (fiber CPU 4.0 us over each peer's)."""
    summary, ratios, not_run = [], [], []
    for conns in levels:
        for name, kind, cpu in PEERS:
            if name == "pth" and conns > 1008:
                not_run.append({"conns": conns, "server": name, "status": "not run",
                                "reason": "pth serves at most 1008 connections"})
                continue
            summary.append({"conns": conns, "server": name, "kind": kind, "rounds": 5,
                            "syscalls_per_request": 2.1, "status": "ok",
                            "server_cpu_us_per_request": cpu,
                            "server_cpu_us_per_request_ci": [cpu * 0.95, cpu * 1.05],
                            "requests_per_sec": 1e6 / cpu / 5,
                            "requests_per_sec_ci": [1e6 / cpu / 5.5, 1e6 / cpu / 4.5]})
            if name != "fiber":
                for key, r in (("server_cpu_us_per_request", 4.0 / cpu),
                               ("requests_per_sec", cpu / 4.0)):
                    ratios.append({"conns": conns, "num": "fiber", "den": name, "kind": kind,
                                   "key": key, "per_round": [r] * 5, "median": r,
                                   "ci": [r * 0.98, r * 1.02]})
    return {"experiment": "peers", "meta": META,
            "config": {"rounds": 5, "conns": list(levels), "server_cpu": "0", "load_cpu": "1"},
            "perf": True, "servers": [{"name": n, "kind": k, "built": True}
                                      for n, k, _ in PEERS],
            "not_built": [], "not_run": not_run, "summary": summary, "ratios": ratios,
            "runs": []}


def full(folder, **override):
    docs = {"suite": suite(), "switch": switch(), "icount": icount(), "props": props(),
            "engines": engines(), "scale": scale(), "sweep": sweep(), "maxconns": maxconns(),
            "threads": threads(), "slow": slow(), "handoff": handoff(),
            "fibermem": fibermem(), "fiberio": fiberio(), "hooks": hooks(), "timers": timers(),
            "peers": peers()}
    docs.update(override)
    return write(folder, **docs)


def repeated(doc, rel=0.02, n=3):
    """A switch document whose every median row also has n per-repetition entries spread
    +-rel around the median (what switch-bench writes without --report_aggregates_only)."""
    doc = json.loads(json.dumps(doc))
    reps = []
    for b in doc["benchmarks"]:
        for i in range(n):
            f = 1 + rel * (2 * i / (n - 1) - 1)
            reps.append(dict(b, name=b["run_name"], run_type="iteration", repetitions=n,
                             repetition_index=i, real_time=b["real_time"] * f,
                             cpu_time=b["cpu_time"] * f))
    doc["benchmarks"] += reps
    return doc


def claim(verdict, cid="CX"):
    """A made-up claim with a claim module's shape, for tests that add one to the list."""
    return types.SimpleNamespace(ID=cid, SOURCE="no seed", CLAIM="a synthetic claim",
                                 QUOTED="n/a", CHARTS=[], verdict=verdict)


class SyntheticRuns(unittest.TestCase):
    """A test case with a temporary folder of its own for the synthetic run folders it makes."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="plots-test-")
        self.n = 0

    def tearDown(self):
        self.tmp.cleanup()

    def new_folder(self, **docs):
        """A full synthetic run folder with some documents replaced (None: left out)."""
        self.n += 1
        return full(Path(self.tmp.name) / str(self.n), **docs)
