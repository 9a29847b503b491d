#!/usr/bin/python3
"""report.py - REPORT.md for one run folder: the machine, then claims C1-C12 with verdicts.

    /usr/bin/python3 plots/report.py RUN_FOLDER [--no-charts]

Draws the charts (plots/charts.py) unless told not to, then writes RUN_FOLDER/REPORT.md. The
report is generated, never edited by hand: every verdict comes from an explicit rule in the
`verdict_*` functions below, applied to the JSON files of the run, so a run on other hardware
can reach another verdict honestly. Verdicts: holds, does not hold, holds partly, not run.
"""
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import data as D  # noqa: E402

HOLDS, NOT, PARTLY, NOTRUN = "holds", "does not hold", "holds partly", "not run"


def fmt(v, spec=".3g", unit=""):
    if v is None:
        return "n/a"
    return format(v, spec) + unit


def result(verdict, rule, measured, notes=None, numbers=None):
    """measured: markdown lines; numbers: {name: (ours, quoted)} for the surprises section."""
    return {"verdict": verdict, "rule": rule, "measured": measured, "notes": notes or [],
            "numbers": numbers or {}}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---- C1: star vs ring ----------------------------------------------------------------------

def verdict_c1(run):
    rule = ("holds when ring < star in time per hop for every backend at every fiber count, "
            "with switches_per_hop within 0.1 of 1 (ring) and 2 (star); holds partly when ring "
            "wins at least 75% of the comparisons; otherwise does not hold")
    series = D.sched_series(D.bench_rows(run.get("switch")))
    if not series:
        return result(NOTRUN, rule, [f"no scheduler rows: {run.why('switch')}"])
    wins, total, lines, sph_ok = 0, 0, [], True
    backends = run.order("switch", {b for _, b in series})
    ratios = []
    for b in backends:
        star = {f: (t, s) for f, t, s in series.get(("star", b), [])}
        ring = {f: (t, s) for f, t, s in series.get(("ring", b), [])}
        cells = []
        for f in sorted(set(star) & set(ring)):
            total += 1
            wins += ring[f][0] < star[f][0]
            ratios.append(ring[f][0] / star[f][0])
            cells.append(f"{f}: {ring[f][0]:.3g}/{star[f][0]:.3g}")
            for (t, s), want in ((ring[f], 1), (star[f], 2)):
                if s is None or abs(s - want) > 0.1:
                    sph_ok = False
        lines.append(f"- {b}: ring/star ns per hop by fibers: " + ", ".join(cells))
    sph = {p: median([s for (pp, _), pts in series.items() if pp == p for _, _, s in pts])
           for p in ("star", "ring")}
    lines.append(f"- switches per hop (median): ring {fmt(sph['ring'])}, star {fmt(sph['star'])}")
    ic = D.icounts(run.get("icount"))
    icl = [f"{b} {ic[f'sched/ring/{b}/fibers:16']:.0f} vs {ic[f'sched/star/{b}/fibers:16']:.0f}"
           for b in backends if f"sched/ring/{b}/fibers:16" in ic
           and f"sched/star/{b}/fibers:16" in ic]
    if icl:
        lines.append("- instructions per hop at 16 fibers, ring vs star: " + ", ".join(icl))
    lines.append(f"- ring faster in {wins} of {total} comparisons; median ring/star "
                 f"{fmt(median(ratios))}")
    most = max(f for pts in series.values() for f, _, _ in pts)
    lines.append(f"- largest run queue measured: {most} fibers; the claim's 10^5 is not run "
                 "here: each fiber has a guarded stack (2 memory maps) and vm.max_map_count "
                 "(65530) bounds them near 32K")
    if total == 0:
        return result(NOTRUN, rule, lines)
    if wins == total and sph_ok:
        v = HOLDS
    elif wins >= 0.75 * total:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"ring/star time per hop": (median(ratios), 0.5)})


# ---- C2, C3: engines -----------------------------------------------------------------------

def verdict_c2(run):
    rule = ("holds when merged/naive throughput (median of paired rounds) >= 1.15; holds partly "
            "when it is >= 1.0 or naive needs >= 1.15x merged's server CPU per request; "
            "otherwise does not hold")
    eng = run.get("engines")
    if not eng or not (eng.get("ratios") or {}).get("tput merged/naive"):
        return result(NOTRUN, rule, [f"no naive/merged comparison: {run.why('engines')}"])
    r = eng["ratios"]["tput merged/naive"]
    cpu = (eng["ratios"].get("cpu per request naive/merged") or {}).get("median")
    s = eng.get("summary", {})
    lines = [f"- throughput: naive {fmt(s.get('naive', {}).get('requests_per_sec'), '.0f')} "
             f"req/s, merged {fmt(s.get('merged', {}).get('requests_per_sec'), '.0f')} req/s; "
             f"merged/naive median **{fmt(r['median'])}** (rounds: "
             + ", ".join(fmt(x) for x in r.get("per_round", [])) + ")",
             f"- server CPU per request naive/merged: {fmt(cpu)}"]
    prof = eng.get("profile") or {}
    prof = prof if isinstance(prof, dict) else {p.get("engine"): p for p in prof}
    for e in ("naive", "merged"):
        p = prof.get(e) or {}
        if p.get("epoll_ctl_share") is not None:
            lines.append(f"- perf: {100 * p['epoll_ctl_share']:.1f}% of {e}'s samples under "
                         f"epoll_ctl ({p.get('samples')} samples)")
    if r["median"] is None:
        v = NOTRUN
    elif r["median"] >= 1.15:
        v = HOLDS
    elif r["median"] >= 1.0 or (cpu is not None and cpu >= 1.15):
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"merged/naive throughput": (r["median"], 1.2)})


def verdict_c3(run):
    rule = ("holds when the naive engine makes 2.0 +- 0.1 epoll_ctl per request (ping-pong) and "
            "the kernel's count agrees within 0.1; holds partly when it makes 1.5-2.1; "
            "otherwise does not hold")
    s = ((run.get("engines") or {}).get("summary") or {}).get("naive")
    if not s or s.get("ctl_per_request_engine") is None:
        return result(NOTRUN, rule, [f"no naive engine count: {run.why('engines')}"])
    e, k = s["ctl_per_request_engine"], s.get("ctl_per_request_kernel")
    lines = [f"- naive: {e:.3f} epoll_ctl per request counted by the engine, "
             f"{fmt(k, '.3f')} by the kernel (perf tracepoint)"]
    other = (run.get("engines") or {}).get("summary") or {}
    lines.append("- others: " + ", ".join(f"{n} {fmt(v.get('ctl_per_request_engine'), '.3f')}"
                                          for n, v in other.items() if n != "naive"))
    if abs(e - 2.0) <= 0.1 and (k is None or abs(k - e) <= 0.1):
        v = HOLDS
    elif 1.5 <= e <= 2.1:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"naive epoll_ctl per request": (e, 2.0)})


# ---- C4, C5, C9: switch costs ---------------------------------------------------------------

def verdict_c4(run):
    rule = ("holds when ucontext makes 1 +- 0.1 syscalls per switch, the other backends < 0.1, "
            "and a ucontext switch takes >= 3x a setjmp switch; holds partly when the syscall "
            "part holds but the time ratio is below 3; otherwise does not hold")
    props = (run.get("props") or {}).get("backends") or {}
    rows = D.bench_rows(run.get("switch"))
    uc = (props.get("ucontext") or {}).get("syscalls_per_switch")
    if uc is None:
        return result(NOTRUN, rule, [f"no syscall count for ucontext: {run.why('props')}"])
    lines = ["- syscalls per switch (perf, raw_syscalls:sys_enter): " + ", ".join(
        f"{b} {fmt(p.get('syscalls_per_switch'), '.3f')}" for b, p in props.items())]
    tu, ts = D.ns(rows.get("switch/ucontext")), D.ns(rows.get("switch/setjmp"))
    ratio = tu / ts if tu and ts else None
    lines.append(f"- time per switch: ucontext {fmt(tu, '.3g', ' ns')}, setjmp "
                 f"{fmt(ts, '.3g', ' ns')} (ratio {fmt(ratio)})")
    how = (run.get("props") or {}).get("setjmp_new_stack")
    if how:
        how = how.split(" - ", 1)[-1].rstrip(".")
        lines.append(f"- how setjmp gets a new stack: {how} (switch/switch_setjmp.c)")
    others_ok = all((p.get("syscalls_per_switch") or 0) < 0.1
                    for b, p in props.items() if b != "ucontext")
    sys_ok = abs(uc - 1.0) <= 0.1 and others_ok
    if sys_ok and ratio is not None and ratio >= 3:
        v = HOLDS
    elif sys_ok:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"ucontext syscalls per switch": (uc, 1.0)})


def verdict_c5(run):
    rule = ("the quoted figures match when the fastest switch lies within a factor 2 of 50 ns "
            "(25-100 ns) and a call within 1-4 ns: both -> holds, one -> holds partly, "
            "neither -> does not hold")
    rows = D.bench_rows(run.get("switch"))
    sw = {b: D.ns(rows.get(f"switch/{b}")) for b in D.backends(run)}
    sw = {b: t for b, t in sw.items() if t}
    call = D.ns(rows.get("call/noinline"))
    if not sw or call is None:
        return result(NOTRUN, rule, [f"no switch rows: {run.why('switch')}"])
    fastest = min(sw, key=sw.get)
    lines = ["- ns per switch: " + ", ".join(f"{b} {t:.3g}" for b, t in sw.items()),
             f"- fastest: {fastest} {sw[fastest]:.3g} ns; call {call:.3g} ns"]
    ok = [25 <= sw[fastest] <= 100, 1 <= call <= 4]
    lines.append(f"- the switch figure {'matches' if ok[0] else 'does not match'}: the fastest "
                 f"switch is {50 / sw[fastest]:.3g}x {'below' if sw[fastest] < 50 else 'above'} "
                 f"50 ns; the call figure {'matches' if ok[1] else 'does not match'} "
                 f"({call:.3g} ns against 2 ns)")
    v = HOLDS if all(ok) else PARTLY if any(ok) else NOT
    return result(v, rule, lines, numbers={"fastest switch (ns)": (sw[fastest], 50.0),
                                           "call (ns)": (call, 2.0)})


def verdict_c9(run):
    rule = ("holds when a trivial syscall costs <= 100 cycles (the order of 10); holds partly "
            "when it costs <= 1000 cycles on a virtual machine (the claim itself expects a VM "
            "to be dearer); otherwise does not hold")
    sw = run.get("switch")
    rows = D.bench_rows(sw)
    t = D.ns(rows.get("syscall/getppid"))
    if t is None:
        return result(NOTRUN, rule, [f"no syscall row: {run.why('switch')}"])
    ctx = (sw or {}).get("context", {})
    mhz = ctx.get("mhz_per_cpu")
    cycles = t * mhz / 1000.0 if mhz else None
    virt = (run.get("props") or {}).get("virtualized")
    fastest = min((D.ns(rows.get(f"switch/{b}")) or math.inf) for b in D.backends(run)) \
        if D.backends(run) else None
    lines = [f"- getppid: {t:.3g} ns = {fmt(cycles, '.0f')} cycles at {fmt(mhz, '.0f')} MHz "
             f"(virtual machine: {'yes' if virt else 'no' if virt is not None else 'unknown'}; "
             f"Spectre v2: {ctx.get('spectre_v2', 'unknown')})"]
    if fastest and fastest != math.inf:
        lines.append(f"- that is {t / fastest:.0f}x the fastest user-space switch "
                     f"({fastest:.3g} ns)")
    if cycles is not None and cycles > 100:
        lines.append(f"- the 10-cycle figure does not hold here ({cycles:.0f} cycles); how much "
                     "of that the virtual machine adds cannot be separated on one machine")
    if cycles is None:
        v = NOTRUN
    elif cycles <= 100:
        v = HOLDS
    elif cycles <= 1000 and virt:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"syscall (cycles)": (cycles, 10.0)})


# ---- C6, C7, C8: the sweep ------------------------------------------------------------------

def sweep_points(run, model, mode):
    return sorted((p for p in (run.get("sweep") or {}).get("points", [])
                   if p.get("model") == model and p.get("mode") == mode),
                  key=lambda p: p["conns"])


def ok_points(run, model, mode):
    return [p for p in sweep_points(run, model, mode) if p.get("status") == "ok" and p.get("load")]


def rps(p):
    return p["load"].get("requests_per_sec") or 0.0


def rise_then_collapse(pts):
    """(rises, collapses): the peak lies past the first level at >= 1.5x it, and some later
    level falls to <= half the peak or shows errors."""
    if len(pts) < 2:
        return None, None
    k = max(range(len(pts)), key=lambda i: rps(pts[i]))
    rises = k > 0 and rps(pts[k]) >= 1.5 * max(rps(pts[0]), 1e-9)
    collapses = any(rps(p) <= 0.5 * rps(pts[k]) or D.point_errors(p) for p in pts[k + 1:])
    return rises, collapses


def verdict_c6(run):
    rule = ("thread-per-connection 'rises then collapses' when its peak lies past level 1 at "
            ">= 1.5x the level-1 figure and a later level falls to <= half the peak or has "
            "errors; fork is 'far lower' when its peak is <= half thread's. Holds when both "
            "hold in some mode, holds partly when one does, otherwise does not hold")
    if not run.get("sweep"):
        return result(NOTRUN, rule, [f"no sweep: {run.why('sweep')}"])
    lines, shape, lower = [], False, False
    for mode in ("pingpong", "churn"):
        th, fk = ok_points(run, "thread", mode), ok_points(run, "fork", mode)
        if not th:
            continue
        rises, collapses = rise_then_collapse(th)
        shape |= bool(rises and collapses)
        fk_peak = max((rps(p) for p in fk), default=None)
        th_peak = max(rps(p) for p in th)
        lower |= bool(fk_peak is not None and fk_peak <= 0.5 * th_peak)
        lines.append(f"- {mode}: thread req/s by level: " + ", ".join(
            f"{p['conns']}: {rps(p):.0f}" + (f" ({D.point_errors(p)} errors)"
                                             if D.point_errors(p) else "") for p in th))
        lines.append(f"  - thread rises: {rises}, collapses: {collapses}; fork peak "
                     f"{fmt(fk_peak, '.0f')} vs thread peak {th_peak:.0f} req/s")
    if not lines:
        return result(NOTRUN, rule, ["no thread-per-connection points measured"])
    v = HOLDS if shape and lower else PARTLY if shape or lower else NOT
    return result(v, rule, lines)


def fails_at(p, peak):
    """Why a point counts as 'the model no longer works' (None when it worked)."""
    if p.get("status") == "not run":
        return "not run: " + p.get("reason", "")
    if p.get("status") != "ok" or not p.get("load"):
        return "failed: " + p.get("reason", "")
    held = (p.get("server") or {}).get("max_concurrent")
    if held is not None and held < 0.9 * p["conns"]:
        return (f"the server held at most {held} of {p['conns']} connections at once; "
                f"{D.point_errors(p)} errors")
    if D.point_errors(p):
        return f"{D.point_errors(p)} errors"
    if rps(p) < 0.5 * peak:
        return f"throughput {rps(p):.0f} < half its peak {peak:.0f}"
    if (p["load"].get("latency_us") or {}).get("p99", 0) > 1e6:
        return "p99 latency over 1 s"
    return None


def verdict_c7(run):
    rule = ("three sub-claims on the persistent-connection sweep: thread fails at its highest "
            "level >= 5000, fork fails there ('fails': the server never held 90% of the "
            "connections at once, errors, not runnable on this machine, throughput < half its "
            "own peak, or p99 > 1 s), and thread's best figure past 1000 "
            "connections is < half its best up to 1000. All three -> holds, some -> holds "
            "partly, none -> does not hold; not run when no level >= 5000 was tried")
    if not run.get("sweep"):
        return result(NOTRUN, rule, [f"no sweep: {run.why('sweep')}"])
    subs, lines = [], []
    for model in ("thread", "fork", "fiber", "epoll"):
        pts = sweep_points(run, model, "pingpong")
        high = [p for p in pts if p["conns"] >= 5000]
        if not high:
            continue
        peak = max((rps(p) for p in pts if p.get("status") == "ok" and p.get("load")),
                   default=0.0)
        top = high[-1]
        why = fails_at(top, peak)
        lines.append(f"- {model} at {top['conns']} connections: "
                     + (f"fails ({why})" if why else f"works ({rps(top):.0f} req/s, p99 "
                        f"{top['load']['latency_us']['p99'] / 1000:.1f} ms)"))
        if model in ("thread", "fork"):
            subs.append(why is not None)
    if not subs:
        return result(NOTRUN, rule, ["the sweep did not try 5000 or more connections "
                                     "(quick preset); run ./run.sh full"])
    th = ok_points(run, "thread", "pingpong")
    low = max((rps(p) for p in th if p["conns"] <= 1000), default=None)
    high = max((rps(p) for p in th if p["conns"] > 1000), default=None)
    if low and high is not None:
        subs.append(high < 0.5 * low)
        lines.append(f"- thread best up to 1000 connections {low:.0f} req/s, past 1000 "
                     f"{high:.0f} req/s")
    v = HOLDS if all(subs) else PARTLY if any(subs) else NOT
    return result(v, rule, lines)


def verdict_c8(run):
    rule = ("holds when a thread-per-connection server's resident memory per connection, at "
            "its largest error-free persistent level >= 100, is <= 1 MiB (an 8 MiB stack is "
            "virtual, only touched pages count); does not hold when it is >= 4 MiB; holds "
            "partly between")
    per = {}
    for model in run.members("models"):
        pts = [p for p in ok_points(run, model, "pingpong") if p["conns"] >= 100
               and (p.get("rss") or {}).get("per_conn_kb") is not None]
        # A point with errors may not have held every connection at once: prefer clean ones.
        pts = [p for p in pts if not D.point_errors(p)] or pts
        if pts:
            per[model] = (pts[-1]["conns"], pts[-1]["rss"]["per_conn_kb"],
                          pts[-1]["rss"].get("pss_per_conn_kb"))
    if "thread" not in per:
        return result(NOTRUN, rule, [f"no thread memory figure: {run.why('sweep')}"])
    lines = [f"- {m}: {kb:.1f} KiB per connection at {n} connections"
             + (f" (PSS {pss:.1f} KiB)" if pss is not None else "")
             for m, (n, kb, pss) in per.items()]
    mc = (run.get("maxconns") or {}).get("per_conn_at_max")
    if mc:
        lines.append(f"- fiber holding {run.get('maxconns').get('max_held')} mostly idle "
                     f"connections: {mc['rss_per_conn_kb']:.1f} KiB each (C10 run)")
    kb = per["thread"][1]
    v = HOLDS if kb <= 1024 else NOT if kb >= 4096 else PARTLY
    nums = {"thread RSS per connection vs libco's 8 MB per pthread (KiB)": (kb, 8192.0)}
    if "fiber" in per:
        nums["fiber RSS per connection vs libco's 128 KB stack (KiB)"] = (per["fiber"][1],
                                                                        128.0)
    return result(v, rule, lines, numbers=nums)


# ---- C10, C11, C12 --------------------------------------------------------------------------

def verdict_c10(run):
    rule = ("holds when one single-threaded fiber server held the target (100K) connections; "
            "holds partly when the target could not run because of a machine limit, every level "
            "that ran was held without error, and the memory projected for the target fits in "
            "MemAvailable (only tunable kernel limits stand in the way); does not hold when a "
            "level within the limits was not held; otherwise not run")
    mc = run.get("maxconns")
    if not mc:
        return result(NOTRUN, rule, [f"no max-connections run: {run.why('maxconns')}"])
    target = mc["config"]["target"]
    pts = mc.get("points", [])
    ran = [p for p in pts if p.get("status") == "ok"]
    lines = []
    for p in pts:
        if p.get("status") == "ok":
            lines.append(f"- {p['conns']} connections: held {p.get('held')}, errors "
                         f"{p.get('errors')}, {fmt(p.get('rss_per_conn_kb'), '.1f')} KiB and "
                         f"{fmt(p.get('maps_per_conn'), '.2f')} memory maps per connection")
        else:
            lines.append(f"- {p['conns']} connections: {p['status']}: {p.get('reason', '')}")
    proj = mc.get("target_projection") or []
    if proj:
        lines.append(f"- what {target} connections would need: " + "; ".join(
            f"{r['resource']} {r['needed']} of {r['available']}"
            + (" (binds)" if r["binds"] else "") for r in proj))
    held = mc.get("max_held")
    nums = {"connections held by one process": (held, float(target))} if held else {}
    if held and held >= target:
        return result(HOLDS, rule, lines, numbers=nums)
    if any(not p.get("all_held") for p in ran):
        return result(NOT, rule, lines, numbers=nums)
    tgt = [p for p in pts if p["conns"] == target]
    mem = [r for r in proj if r["resource"].startswith("memory (")]
    if ran and tgt and tgt[0].get("status") == "not run" and mem and not mem[0]["binds"]:
        return result(PARTLY, rule, lines, numbers=nums)
    return result(NOTRUN, rule, lines, numbers=nums)


def verdict_c11(run):
    rule = ("with server and load sharing the same CPUs: holds when 2 scheduler threads give "
            ">= 1.3x the throughput of 1; holds partly for 1.05-1.3x, or when server and load "
            "together fill every core (the load generator needs one of them, so no scaling "
            "can show) and 2 threads cost at most 15% more CPU per request at no lower "
            "throughput; otherwise does not hold")
    th = run.get("threads")
    if not th or th.get("ratio_t2_over_t1_shared") is None:
        return result(NOTRUN, rule, [f"no 1-vs-2 thread run: {run.why('threads')}"])
    s = th["summary"]
    lines = [f"- {name}: {fmt(v['requests_per_sec'], '.0f')} req/s, server "
             f"{fmt(v['server_cores_used'], '.2f')} cores, "
             f"{fmt(v['server_cpu_us_per_request'], '.2f')} us CPU per request "
             f"({v['runs']} runs)" for name, v in s.items()]
    r = th["ratio_t2_over_t1_shared"]
    lines.append(f"- 2 threads / 1 thread (shared CPUs): **{r:.2f}**; machine has "
                 f"{th['config'].get('cores')} cores")
    t1, t2 = s.get("t1-shared", {}), s.get("t2-shared", {})
    cores = th["config"].get("cores") or 2
    load = median([x.get("load_cores_used") for x in th.get("runs", [])
                   if x.get("variant") == "t2-shared" and x.get("status") == "ok"])
    busy = (t2.get("server_cores_used") or 0) + (load or 0)
    full = busy >= 0.85 * cores
    cpu1, cpu2 = t1.get("server_cpu_us_per_request"), t2.get("server_cpu_us_per_request")
    no_cost = cpu1 and cpu2 and cpu2 <= 1.15 * cpu1 and r >= 0.95
    lines.append(f"- with 2 threads the server and the load together used {busy:.2f} of "
                 f"{cores} cores" + (": the machine was full, so no scaling can show"
                                      if full else ""))
    if not full:
        lines.append("- caution: server and load left part of the machine idle, so other jobs "
                     "competed for the CPUs during this run; a process with two threads gets a "
                     "larger share of a contended machine, which inflates this ratio")
    if r >= 1.3:
        v = HOLDS
    elif (full and no_cost) or r >= 1.05:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"2 vs 1 scheduler threads": (r, 2.0)})


def verdict_c12(run):
    rule = ("holds when the guard-page overflow check passes for every backend (the one-line "
            "message, then abort) and a copy-stack mode was measured; holds partly when the "
            "guard pages pass but no copy-stack mode exists; does not hold when any guard check "
            "fails")
    props = run.get("props")
    if not props:
        return result(NOTRUN, rule, [f"no switch properties: {run.why('props')}"])
    lines = []
    for b, p in props["backends"].items():
        o = p.get("overflow") or {}
        lines.append(f"- {b}: `{o.get('test')}` {'passed' if o.get('passed') else 'FAILED'}"
                     + (f": `{o['message']}`" if o.get("message") else ""))
    cs = props.get("copy_stack") or {}
    lines.append(f"- copy stack: {cs.get('note', 'unknown')}")
    passed = [bool((p.get("overflow") or {}).get("passed")) for p in props["backends"].values()]
    if not passed:
        return result(NOTRUN, rule, lines)
    if not all(passed):
        return result(NOT, rule, lines)
    return result(HOLDS if cs.get("implemented") else PARTLY, rule, lines)


# ---- the document ---------------------------------------------------------------------------

CLAIMS = [
    ("C1", "Ring switching (a fiber hands the CPU straight to the next) beats star switching "
     "(every hop through the scheduler) by saving one switch per hop.", "seed 000 (libfiber)",
     "one switch per hop instead of two", verdict_c1, ["star_ring", "instructions"]),
    ("C2", "epoll_ctl ranked high in perf top; merging the cancel/re-register pair between a "
     "wake-up and the next wait raised IO throughput by about 20%.", "seed 000 (libfiber)",
     "about +20% throughput", verdict_c2, ["engines", "epoll_ctl_share"]),
    ("C3", "Naive engines delete the fd from epoll before the IO and add it back after, so "
     "one fd belongs to one context at a time.", "seed 001 (NtyCo)",
     "2 epoll_ctl per wait", verdict_c3, ["engines"]),
    ("C4", "makecontext/swapcontext enter the kernel (sigprocmask) on every switch and are "
     "slow; setjmp/longjmp are fast but give no new stack.", "seed 003 (PyCon 2014 talk)",
     "one syscall per swapcontext", verdict_c4, ["switch_cost"]),
    ("C5", "A coroutine switch costs about 50 ns at least, a plain call about 2 ns.",
     "seed 003 (PyCon 2014 talk)", "switch >= ~50 ns, call ~2 ns", verdict_c5,
     ["switch_cost"]),
    ("C6", "Thread-per-connection throughput rises with concurrency, then collapses; "
     "fork-per-connection stays far lower.", "seed 003 (PyCon 2014 talk)",
     "VM thread: 909 req/s at 1, 5000 at 4, 4603 at 100, 1778 at 500 (errors); physical "
     "thread: 6942 at 1, 2377 at 100; VM fork: 384-437 req/s, errors at 100",
     verdict_c6, ["sweep_throughput", "sweep_p99"]),
    ("C7", "Around 10K connections the thread and process models stop working; thread "
     "switching degrades badly past ~1K.", "seed 003 (PyCon 2014 talk)",
     "C10K breaks threads and processes; degradation past ~1K", verdict_c7,
     ["sweep_throughput", "sweep_p99"]),
    ("C8", "A thread's 8 MB stack is virtual, only touched pages are resident; libco measured "
     "about 8 MB per pthread and uses 128 KB coroutine stacks.", "seeds 003, 004 (PyCon, libco)",
     "8 MB per pthread (virtual), 128 KB per coroutine", verdict_c8, ["rss_per_conn"]),
    ("C9", "A trivial syscall is very cheap on modern systems (order of 10 cycles); virtual "
     "machines make it dearer.", "seed 003 (PyCon 2014 talk)", "about 10 cycles",
     verdict_c9, ["switch_cost"]),
    ("C10", "With multiplexing, one core can hold 100K concurrent connections.",
     "seed 000 (libfiber)", "100K connections on one core", verdict_c10, ["rss_per_conn"]),
    ("C11", "One single-threaded scheduler per thread (one per core) is how a fiber runtime "
     "uses many cores.", "seed 000 (libfiber)", "scales with cores (no figure quoted)",
     verdict_c11, []),
    ("C12", "Guard pages (mprotect) catch fiber stack overflows; a shared copy stack trades "
     "switch time for memory.", "seed 004 (libco)", "no figure quoted", verdict_c12, []),
]


CHART_LIST = ["switch_cost", "instructions", "star_ring", "sweep_throughput", "sweep_p99",
              "engines", "rss_per_conn", "epoll_ctl_share"]


def machine_section(run):
    m = run.meta()
    suite = run.get("suite") or {}
    props = run.get("props") or {}
    ctx = (run.get("switch") or {}).get("context", {})
    lim = m.get("limits", {})
    comp = m.get("compiler", {})
    out = ["## Machine", ""]
    if not m:
        return out + ["not run: no meta block in this run folder", ""]
    virt = props.get("virtualized")
    out += [
        f"- host `{m.get('host')}`: {m.get('cpu_model')}, {m.get('cores')} cores"
        + (f" at {ctx['mhz_per_cpu']} MHz" if ctx.get("mhz_per_cpu") else "")
        + (", virtual machine (hypervisor flag)" if virt else ""),
        f"- kernel {m.get('kernel')}; Spectre v2: {ctx.get('spectre_v2', 'unknown')}",
        f"- compiler {comp.get('version', '?')}, {comp.get('build_type', '?')}, flags "
        f"`{comp.get('flags', '?')}`",
        f"- git {m.get('git_sha')}" + (" (working tree had uncommitted changes)"
                                       if m.get("git_dirty") else ""),
        f"- limits: RLIMIT_NOFILE {lim.get('nofile_hard')} (hard), pid_max "
        f"{lim.get('pid_max')}, vm.max_map_count {lim.get('max_map_count')}, memory "
        f"{fmt((lim.get('mem_total_kb') or 0) / 1048576, '.1f')} GiB",
        f"- run: preset `{suite.get('preset', '?')}`, started {m.get('date')}, "
        f"{fmt((suite.get('seconds') or 0) / 60, '.1f')} min; load average (1/5/15 min) "
        f"at start {suite.get('loadavg_start')}, at end {suite.get('loadavg_end')} "
        f"(a server and its load keep about 2 runnable; figures well above that mean other "
        f"jobs competed for the {m.get('cores')} CPUs)",
        "- pinning: servers on CPU 0 and echo-load on CPU 1 for the engine comparison, sweep "
        "and max-connections runs; switch-bench unpinned except its kernel rows",
    ]
    steps = suite.get("steps") or {}
    during = suite.get("loadavg_during")
    if during:
        out.append(f"- 1-minute load average sampled every {during['every_s']:.0f} s during the "
                   f"run: mean {during['mean_1min']:.1f}, highest {during['max_1min']:.1f} "
                   f"({m.get('cores')} cores)")
    if any(v.get("loadavg_after") for v in steps.values()):
        out.append("- load average (1/5/15 min) after each step: " + "; ".join(
            f"{k} " + "/".join(f"{x:.1f}" for x in v["loadavg_after"])
            for k, v in steps.items() if v.get("loadavg_after")))
    if steps:
        out.append("- steps: " + ", ".join(f"{k} {v['status']} ({v['seconds']:.0f} s)"
                                           for k, v in steps.items()))
    missing = [f"{k}: {v}" for k, v in run.missing.items() if k != "suite"]
    if missing:
        out.append("- missing experiments: " + "; ".join(missing))
    return out + [""]


def peak(run, model, mode):
    pts = ok_points(run, model, mode)
    return max(pts, key=rps) if pts else None


def observations(run):
    """Comparisons between our own figures that the sources would not predict."""
    out = []
    for mode, label in (("pingpong", "persistent connections"), ("churn", "churn")):
        th, fk = peak(run, "thread", mode), peak(run, "fork", mode)
        if th and fk and rps(fk) > rps(th):
            out.append(f"- With {label}, fork-per-connection peaked higher than "
                       f"thread-per-connection ({rps(fk):.0f} req/s at {fk['conns']} vs "
                       f"{rps(th):.0f} at {th['conns']}), where the PyCon figures put fork "
                       "an order of magnitude below.")
    fb, ep = peak(run, "fiber", "pingpong"), peak(run, "epoll", "pingpong")
    if fb and ep and rps(ep):
        out.append(f"- The fiber server's best persistent-connection throughput is "
                   f"{rps(fb) / rps(ep):.2f}x the hand-written epoll server's "
                   f"({rps(fb):.0f} vs {rps(ep):.0f} req/s)"
                   + (": blocking-style code at event-loop speed." if rps(fb) >= 0.85 * rps(ep)
                      else ", below the 0.85 the project aims for."))
    summ = (run.get("engines") or {}).get("summary") or {}
    tput = {e: v.get("requests_per_sec") for e, v in summ.items() if v.get("requests_per_sec")}
    if tput:
        best = max(tput, key=tput.get)
        if best != "merged":
            out.append(f"- The fastest engine in the comparison was {best} "
                       f"({tput[best]:.0f} req/s), not merged ({fmt(tput.get('merged'), '.0f')})"
                       ".")
    return out


def surprises(results, run):
    """The largest deviations between our figures and the quoted ones, and the claims that
    did not hold, computed from the verdicts' numbers."""
    devs = []
    for cid, r in results.items():
        for name, (ours, quoted) in r["numbers"].items():
            if ours and quoted and ours > 0 and quoted > 0:
                devs.append((abs(math.log10(ours / quoted)), cid, name, ours, quoted))
    devs.sort(reverse=True)
    out = ["## What surprised us", ""]
    for _, cid, name, ours, quoted in devs[:4]:
        factor = ours / quoted
        out.append(f"- {cid}, {name}: we measured {ours:.3g} where the source suggests "
                   f"{quoted:.3g} ({factor:.3g}x, {'more' if factor > 1 else 'less'}).")
    out += observations(run)
    bad = [cid for cid, r in results.items() if r["verdict"] == NOT]
    if bad:
        out.append(f"- Claims that do not hold on this machine: {', '.join(bad)}.")
    notrun = [cid for cid, r in results.items() if r["verdict"] == NOTRUN]
    if notrun:
        out.append(f"- Not run here: {', '.join(notrun)}.")
    if len(out) == 2:
        out.append("- nothing measured yet")
    return out + [""]


def build_report(run):
    results = {cid: fn(run) for cid, _, _, _, fn, _ in CLAIMS}
    lines = ["# Switchyard report", "",
             "Generated by `plots/report.py` from the JSON files in this folder; do not edit. "
             "Each verdict comes from the rule printed under it, so a run on other hardware may "
             "reach another verdict.", ""]
    lines += machine_section(run)
    lines += ["## Verdicts", "", "| claim | verdict |", "|---|---|"]
    lines += [f"| [{cid}](#{cid.lower()}) | {results[cid]['verdict']} |"
              for cid, *_ in CLAIMS]
    lines.append("")
    for cid, claim, source, quoted, _, charts in CLAIMS:
        r = results[cid]
        lines += [f"## {cid}", "", f"**Claim** ({source}): {claim}", "",
                  f"**Quoted:** {quoted}", "", "**Measured:**", ""]
        lines += r["measured"] + [""]
        lines += [f"**Verdict: {r['verdict']}** (rule: {r['rule']})", ""]
        for c in charts:
            if (run.dir / f"{c}.png").exists():
                lines += [f"![{c}]({c}.png)", ""]
    lines += surprises(results, run)
    drawn = [c for c in CHART_LIST if (run.dir / f"{c}.png").exists()]
    if drawn:
        lines += ["## All charts", ""]
        lines += [f"- [{c}.png]({c}.png) ([SVG]({c}.svg))" for c in drawn]
        lines.append("")
    return "\n".join(lines), results


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1 or not Path(args[0]).is_dir() or \
            any(a not in ("--no-charts",) for a in argv if a.startswith("--")):
        print("usage: report.py RUN_FOLDER [--no-charts]", file=sys.stderr)
        return 2
    folder = Path(args[0])
    if "--no-charts" not in argv:
        import charts
        for stem, st in charts.draw_all(folder).items():
            print(f"report: chart {stem}: {st}")
    text, results = build_report(D.Run(folder))
    (folder / "REPORT.md").write_text(text + "\n")
    for cid, r in results.items():
        print(f"report: {cid}: {r['verdict']}")
    print(f"report: wrote {folder / 'REPORT.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
