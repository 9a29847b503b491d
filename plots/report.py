#!/usr/bin/python3
"""report.py - REPORT.md for one run folder: the machine, then the claims with verdicts.

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
import figures as F  # noqa: E402

HOLDS, NOT, PARTLY, NOTRUN = "holds", "does not hold", "holds partly", "not run"


def fmt(v, spec=".3g", unit=""):
    if v is None:
        return "n/a"
    return format(v, spec) + unit


def result(verdict, rule, measured, notes=None, numbers=None, figures=None):
    """measured: markdown lines; numbers: {name: (ours, quoted)} for the surprises section;
    figures: the named figures the rule read (plots/figures.py), which the report sets beside
    the reference run's and plots/compare.py beside another run's. A rule that names no
    figures gets its `numbers` as figures."""
    numbers = numbers or {}
    return {"verdict": verdict, "rule": rule, "measured": measured, "notes": notes or [],
            "numbers": numbers,
            "figures": figures if figures is not None else F.from_numbers(numbers)}


def switch_fig(run, row, name=None):
    """A timing figure for one switch-bench row, with the spread of its repetitions."""
    doc = run.get("switch")
    entry = D.bench_rows(doc).get(row)
    if entry is None:
        return None
    return F.timing(name or row, D.ns(entry), "ns", "switch",
                    spread=D.bench_spread(doc).get(row))


def figs(*items):
    return [f for f in items if f is not None]


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
    rows = D.bench_rows(run.get("switch"))
    copied = sorted({int(n.rsplit(":", 1)[1]) for n, e in rows.items() if n.startswith("sched/")
                     and (e.get("shared_stacks") or 0) > 0})
    if most >= 100000:
        lines.append(f"- largest run queue measured: {most} fibers"
                     + (f"; at {', '.join(map(str, copied))} fibers on shared (copy) stacks, "
                        "since guarded stacks (2 memory maps each) exceed vm.max_map_count: "
                        "every hop there also moves one live part of a stack" if copied else ""))
    else:
        lines.append(f"- largest run queue measured: {most} fibers; the claim's 10^5 is not run "
                     "here: each fiber has a guarded stack (2 memory maps) and vm.max_map_count "
                     "(65530) bounds them near 32K")
    # The median ratio pools different backends and fiber counts, not repeated samples of one
    # quantity, so it carries no noise band; the per-backend hop times below do.
    figures = [F.once("ring/star time per hop (median over backends x fibers)",
                      median(ratios), "", "switch"),
               F.once("ring faster (share of comparisons)", wins / total if total else None,
                      "", "switch")]
    figures += [F.exact(f"switches per hop, {p}", sph[p], "", "switch") for p in ("ring", "star")]
    for b in backends:
        for p in ("ring", "star"):
            figures.append(F.exact(f"instructions per hop, {p}/{b}, 16 fibers",
                                   ic.get(f"sched/{p}/{b}/fibers:16"), "", "icount"))
        for p in ("ring", "star"):
            figures.append(switch_fig(run, f"sched/{p}/{b}/fibers:16"))
    figures = figs(*figures)
    if total == 0:
        return result(NOTRUN, rule, lines, figures=figures)
    if wins == total and sph_ok:
        v = HOLDS
    elif wins >= 0.75 * total:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"ring/star time per hop": (median(ratios), 0.5)},
                  figures=figures)


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
    cpu_r = (eng["ratios"].get("cpu per request naive/merged") or {})
    figures = [F.timing("throughput merged/naive (median of paired rounds)", r["median"], "",
                        "engines", samples=r.get("per_round")),
               F.timing("server CPU per request naive/merged", cpu, "", "engines",
                        samples=cpu_r.get("per_round"))]
    for e in ("naive", "merged"):
        figures.append(F.timing(f"throughput, {e}", s.get(e, {}).get("requests_per_sec"),
                                "req/s", "engines",
                                samples=D.runs_of(eng, lambda x: x.get("requests_per_sec"),
                                                  engine=e, kind="tput")))
        figures.append(F.once(f"share of {e}'s perf samples under epoll_ctl",
                              (prof.get(e) or {}).get("epoll_ctl_share"), "", "engines"))
    if r["median"] is None:
        v = NOTRUN
    elif r["median"] >= 1.15:
        v = HOLDS
    elif r["median"] >= 1.0 or (cpu is not None and cpu >= 1.15):
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"merged/naive throughput": (r["median"], 1.2)},
                  figures=figs(*figures))


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
    figures = [F.exact("epoll_ctl per request, naive (engine count)", e, "", "engines"),
               F.exact("epoll_ctl per request, naive (kernel tracepoint)", k, "", "engines")]
    figures += [F.exact(f"epoll_ctl per request, {n} (engine count)",
                        v.get("ctl_per_request_engine"), "", "engines")
                for n, v in other.items() if n != "naive"]
    if abs(e - 2.0) <= 0.1 and (k is None or abs(k - e) <= 0.1):
        v = HOLDS
    elif 1.5 <= e <= 2.1:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"naive epoll_ctl per request": (e, 2.0)},
                  figures=figures)


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
    figures = [F.exact(f"syscalls per switch, {b}", p.get("syscalls_per_switch"), "", "props")
               for b, p in props.items()]
    figures += figs(switch_fig(run, "switch/ucontext"), switch_fig(run, "switch/setjmp"),
                    F.once("ucontext/setjmp time per switch", ratio, "", "switch"))
    if sys_ok and ratio is not None and ratio >= 3:
        v = HOLDS
    elif sys_ok:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"ucontext syscalls per switch": (uc, 1.0)},
                  figures=figures)


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
    floors = [f"{b}/{f} {sw[b] / D.ns(rows[f'switch/{f}']):.2f}"
              for b, f in D.FLOOR_OF.items() if b in sw and D.ns(rows.get(f"switch/{f}"))]
    if floors:
        lines.append("- against the reference floor (the six callee-saved registers pushed, an "
                     "indirect jmp; floor-fp also MXCSR and x87 CW; not ABI-complete): "
                     + ", ".join(floors))
    ok = [25 <= sw[fastest] <= 100, 1 <= call <= 4]
    lines.append(f"- the switch figure {'matches' if ok[0] else 'does not match'}: the fastest "
                 f"switch is {50 / sw[fastest]:.3g}x {'below' if sw[fastest] < 50 else 'above'} "
                 f"50 ns; the call figure {'matches' if ok[1] else 'does not match'} "
                 f"({call:.3g} ns against 2 ns)")
    v = HOLDS if all(ok) else PARTLY if any(ok) else NOT
    figures = figs(switch_fig(run, "call/noinline"),
                   *(switch_fig(run, f"switch/{b}") for b in sw),
                   F.exact("instructions per call", D.icounts(run.get("icount")).get(
                       "call/noinline"), "", "icount"),
                   *(F.exact(f"instructions per switch, {b}",
                             D.icounts(run.get("icount")).get(f"switch/{b}"), "", "icount")
                     for b in sw))
    return result(v, rule, lines, numbers={"fastest switch (ns)": (sw[fastest], 50.0),
                                           "call (ns)": (call, 2.0)}, figures=figures)


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
    sp = D.bench_spread(sw).get("syscall/getppid")
    figures = figs(switch_fig(run, "syscall/getppid"),
                   F.timing("getppid (cycles)", cycles, "cycles", "switch",
                            spread=(sp[0] * mhz / 1e3, sp[1] * mhz / 1e3) if sp and mhz
                            else None),
                   F.once("CPU clock (reported)", mhz, "MHz", "switch"))
    return result(v, rule, lines, numbers={"syscall (cycles)": (cycles, 10.0)},
                  figures=figures)


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


def ramp_errors(p):
    return D.ramp(p).get("errors_total") or 0


def ramp_beside(p):
    """The ramp-up of a point, for the lines of C6 and C7: never hidden, never mixed in."""
    r = D.ramp(p)
    if not r:
        return ""
    return (f"; ramp-up {r['seconds']:.2f} s, {r.get('errors_total', 0)} ramp-up errors"
            + ("" if r.get("complete", True) else f", {r.get('unfinished')} never echoed"))


def verdict_c6(run):
    rule = ("on the steady state (the measured window, after echo-load's ramp-up; ramp-up "
            "errors are listed beside): thread-per-connection 'rises then collapses' when its "
            "peak lies past level 1 at >= 1.5x the level-1 figure and a later level falls to "
            "<= half the peak or has errors; fork is 'far lower' when its peak is <= half "
            "thread's. Holds when both hold in some mode, holds partly when one does, "
            "otherwise does not hold")
    if not run.get("sweep"):
        return result(NOTRUN, rule, [f"no sweep: {run.why('sweep')}"])
    lines, shape, lower, figures = [], False, False, []
    for mode in ("pingpong", "churn"):
        th, fk = ok_points(run, "thread", mode), ok_points(run, "fork", mode)
        if not th:
            continue
        figures += [F.once(f"thread {mode} req/s at {th[0]['conns']} connection(s)",
                           rps(th[0]), "req/s", "sweep"),
                    F.once(f"thread {mode} peak req/s", max(rps(p) for p in th), "req/s",
                           "sweep"),
                    F.once(f"thread {mode} req/s at the highest level",
                           rps(th[-1]), "req/s", "sweep"),
                    F.once(f"fork {mode} peak req/s", max((rps(p) for p in fk), default=None),
                           "req/s", "sweep")]
        rises, collapses = rise_then_collapse(th)
        shape |= bool(rises and collapses)
        fk_peak = max((rps(p) for p in fk), default=None)
        th_peak = max(rps(p) for p in th)
        lower |= bool(fk_peak is not None and fk_peak <= 0.5 * th_peak)
        lines.append(f"- {mode}: thread req/s by level: " + ", ".join(
            f"{p['conns']}: {rps(p):.0f}" + (f" ({D.point_errors(p)} errors)"
                                             if D.point_errors(p) else "")
            + (f" [ramp-up errors {ramp_errors(p)}]" if ramp_errors(p) else "") for p in th))
        lines.append(f"  - thread rises: {rises}, collapses: {collapses}; fork peak "
                     f"{fmt(fk_peak, '.0f')} vs thread peak {th_peak:.0f} req/s")
    if not lines:
        return result(NOTRUN, rule, ["no thread-per-connection points measured"])
    v = HOLDS if shape and lower else PARTLY if shape or lower else NOT
    return result(v, rule, lines, figures=figures)


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
    rule = ("three sub-claims on the persistent-connection sweep's steady state (the window "
            "after echo-load's ramp-up; ramp-up time and errors listed beside): thread fails at "
            "its highest level >= 5000, fork fails there ('fails': the server never held 90% of "
            "the connections at once, window errors, not runnable on this machine, throughput "
            "< half its own peak, or p99 > 1 s), and thread's best figure past 1000 "
            "connections is < half its best up to 1000. All three -> holds, some -> holds "
            "partly, none -> does not hold; not run when no level >= 5000 was tried")
    if not run.get("sweep"):
        return result(NOTRUN, rule, [f"no sweep: {run.why('sweep')}"])
    subs, lines, figures = [], [], []
    for model in run.members("models"):
        pts = sweep_points(run, model, "pingpong")
        high = [p for p in pts if p["conns"] >= 5000]
        if not high:
            continue
        peak = max((rps(p) for p in pts if p.get("status") == "ok" and p.get("load")),
                   default=0.0)
        top = high[-1]
        why = fails_at(top, peak)
        if top.get("status") == "ok" and top.get("load"):
            at = f"at {top['conns']} connections"
            figures += [F.once(f"{model} req/s {at}", rps(top), "req/s", "sweep"),
                        F.once(f"{model} connections held at once {at}",
                               (top.get("server") or {}).get("max_concurrent"), "", "sweep"),
                        F.once(f"{model} errors {at}", D.point_errors(top), "", "sweep")]
        held = (top.get("server") or {}).get("max_concurrent")
        lines.append(f"- {model} at {top['conns']} connections: "
                     + (f"fails ({why})" if why else f"works ({rps(top):.0f} req/s, p99 "
                        f"{top['load']['latency_us']['p99'] / 1000:.1f} ms, held {held})")
                     + ramp_beside(top))
        if model in ("thread", "fork"):
            subs.append(why is not None)
    if not subs:
        return result(NOTRUN, rule, ["the sweep did not try 5000 or more connections "
                                     "(its --levels stop below)"])
    th = ok_points(run, "thread", "pingpong")
    low = max((rps(p) for p in th if p["conns"] <= 1000), default=None)
    high = max((rps(p) for p in th if p["conns"] > 1000), default=None)
    if low and high is not None:
        subs.append(high < 0.5 * low)
        lines.append(f"- thread best up to 1000 connections {low:.0f} req/s, past 1000 "
                     f"{high:.0f} req/s")
        figures += [F.once("thread best req/s up to 1000 connections", low, "req/s", "sweep"),
                    F.once("thread best req/s past 1000 connections", high, "req/s", "sweep")]
    v = HOLDS if all(subs) else PARTLY if any(subs) else NOT
    return result(v, rule, lines, figures=figures)


def memory_points(run):
    """{model: (conns, user KiB, PSS KiB, kernel KiB, {kernel field: KiB})} per connection at
    each model's largest persistent level >= 100, error-free when it has one."""
    per = {}
    for model in run.members("models"):
        pts = [p for p in ok_points(run, model, "pingpong") if p["conns"] >= 100
               and (p.get("rss") or {}).get("per_conn_kb") is not None]
        # A point with errors may not have held every connection at once: prefer clean ones.
        pts = [p for p in pts if not D.point_errors(p)] or pts
        if pts:
            top = pts[-1]
            kern, parts = D.kernel_per_conn(top)
            per[model] = (top["conns"], top["rss"]["per_conn_kb"],
                          top["rss"].get("pss_per_conn_kb"), kern, parts)
    return per


def user_kb(rss_kb, pss_kb):
    """User memory per connection: PSS (fork's children share most of their pages, which a sum
    of VmRSS counts once per child) or VmRSS where there is no PSS."""
    return pss_kb if pss_kb is not None else rss_kb


def verdict_c8(run):
    rule = ("holds when a thread-per-connection server's memory per connection, user (PSS "
            "growth, which counts pages shared between processes once; VmRSS growth where there "
            "is no PSS) plus kernel (growth of KernelStack, SUnreclaim and PageTables in "
            "/proc/meminfo), at its largest error-free persistent level >= 100, is <= 1 MiB "
            "(an 8 MiB stack is virtual, only touched pages count); does not hold when it is "
            ">= 4 MiB; holds partly between. Without a kernel figure the user part alone is "
            "used, and the report says so")
    per = memory_points(run)
    if "thread" not in per:
        return result(NOTRUN, rule, [f"no thread memory figure: {run.why('sweep')}"])
    lines = []
    for m, (n, kb, pss, kern, parts) in per.items():
        k = (f" + {kern:.1f} KiB kernel (" + ", ".join(f"{f} {v:.1f}" for f, v in parts.items())
             + ")") if kern is not None else " (no kernel figure)"
        lines.append(f"- {m}: {user_kb(kb, pss):.1f} KiB user ("
                     + ("PSS" if pss is not None else "VmRSS") + ")" + k
                     + f" per connection at {n} connections; VmRSS {kb:.1f} KiB")
    lines.append("- kernel figures are machine-wide: medians of /proc/meminfo read 5 times "
                 "before the server started and about 4 times a second in the measured window; "
                 "they include echo-load's own end of every connection (the same for every "
                 "model) and whatever other jobs allocated meanwhile, so they are trustworthy "
                 "only where they are large against that noise (thousands of connections)")
    mc = (run.get("maxconns") or {}).get("per_conn_at_max")
    if mc:
        lines.append(f"- fiber holding {run.get('maxconns').get('max_held')} mostly idle "
                     f"connections: {mc['rss_per_conn_kb']:.1f} KiB each (C10 run)")
    n, kb, pss, kern, _ = per["thread"]
    total = user_kb(kb, pss) + (kern or 0)
    if kern is None:
        lines.append("- no kernel figure for thread: the verdict uses its user memory only")
    v = HOLDS if total <= 1024 else NOT if total >= 4096 else PARTLY
    figures = [F.once(f"{m} resident memory per connection", k, "KiB", "sweep")
               for m, (_, k, _, _, _) in per.items()]
    figures += [F.once(f"{m} kernel memory per connection", k, "KiB", "sweep")
                for m, (_, _, _, k, _) in per.items() if k is not None]
    if mc:
        figures.append(F.once("fiber resident memory per idle connection (C10 run)",
                              mc["rss_per_conn_kb"], "KiB", "maxconns"))
    nums = {"thread memory per connection vs libco's 8 MB per pthread (KiB)": (total, 8192.0)}
    if "fiber" in per:
        nums["fiber RSS per connection vs libco's 128 KB stack (KiB)"] = (per["fiber"][1],
                                                                        128.0)
    return result(v, rule, lines, numbers=nums, figures=figures)


# ---- C10, C11, C12 --------------------------------------------------------------------------

def verdict_c10(run):
    rule = ("one core: holds when the fiber server, every one of its processes pinned to one "
            "CPU, held the target (100K) connections with no error under a trickle of verified "
            "traffic, in at least one stack mode; holds partly when the target could not run "
            "because of a machine limit, every level that ran was held without error, and the "
            "memory projected for the target fits in MemAvailable; does not hold when a level "
            "within the limits was not held; otherwise not run")
    mc = run.get("maxconns")
    if not mc:
        return result(NOTRUN, rule, [f"no max-connections run: {run.why('maxconns')}"])
    target = mc["config"]["target"]
    pts = mc.get("points", [])
    ran = [p for p in pts if p.get("status") == "ok"]
    cpus = mc["config"].get("server_cpus")
    lines = []
    for p in pts:
        where = (f" ({p['stack']} stacks, {p['procs']} process{'es' if p['procs'] > 1 else ''}"
                 + (f" on CPU {cpus}" if cpus is not None else "") + ")") if "stack" in p else ""
        if p.get("status") == "ok":
            pss = p.get("pss_per_conn_kb")
            lines.append(f"- {p['conns']} connections{where}: held {p.get('held')}, errors "
                         f"{p.get('errors')}, "
                         + (f"{fmt(pss, '.2f')} KiB PSS, " if pss is not None else "")
                         + f"{fmt(p.get('rss_per_conn_kb'), '.2f')} KiB RSS and "
                         f"{fmt(p.get('maps_per_conn'), '.3f')} memory maps per connection"
                         + (f", server CPU {fmt(p.get('server_cpu_s'), '.2f')} s"
                            if p.get("server_cpu_s") is not None else ""))
        else:
            lines.append(f"- {p['conns']} connections{where}: {p['status']}: "
                         f"{p.get('reason', '')}")
    proj = mc.get("target_projection") or []
    if proj:
        lines.append(f"- what {target} connections would need: " + "; ".join(
            f"{r['resource']} {r['needed']} of {r['available']}"
            + (" (binds)" if r["binds"] else "") for r in proj))
    copy_at = [p for p in ran if str(p.get("stack", "")).startswith("copy") and p.get("all_held")
               and p["conns"] >= target and p.get("pss_per_conn_kb") is not None]
    if copy_at:
        kb = min(p["pss_per_conn_kb"] for p in copy_at)
        lines.append(f"- aim: at most 4 KiB per connection in copy mode at {target}: "
                     f"{kb:.2f} KiB, {'met' if kb <= 4 else 'not met'}")
    held = mc.get("max_held")
    nums = {"connections held on one core": (held, float(target))} if held else {}
    at = mc.get("per_conn_at_max") or {}
    figures = [F.once("most connections held on one core", held, "", "maxconns"),
               F.once("resident memory per connection there", at.get("rss_per_conn_kb"), "KiB",
                      "maxconns"),
               F.exact("memory maps per connection there", at.get("maps_per_conn"), "",
                       "maxconns")]
    for stack, b in sorted((mc.get("by_stack") or {}).items()):
        pc = b.get("per_conn_at_max") or {}
        figures += [F.once(f"most connections held on one core, {stack} stacks",
                           b.get("max_held"), "", "maxconns"),
                    F.once(f"PSS per connection there, {stack} stacks",
                           pc.get("pss_per_conn_kb"), "KiB", "maxconns")]
    figures = figs(*figures)
    if held and held >= target:
        return result(HOLDS, rule, lines, numbers=nums, figures=figures)
    if any(not p.get("all_held") for p in ran):
        return result(NOT, rule, lines, numbers=nums, figures=figures)
    tgt = [p for p in pts if p["conns"] == target]
    mem = [r for r in proj if r["resource"].startswith("memory (")]
    if ran and tgt and all(t.get("status") == "not run" for t in tgt) and mem \
            and not mem[0]["binds"]:
        return result(PARTLY, rule, lines, numbers=nums, figures=figures)
    return result(NOTRUN, rule, lines, numbers=nums, figures=figures)


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
    by_round = {}
    for x in th.get("runs", []):
        if x.get("status") == "ok" and x.get("variant") in ("t1-shared", "t2-shared"):
            by_round.setdefault(x.get("round"), {})[x["variant"]] = x.get("requests_per_sec")
    per_round = [d["t2-shared"] / d["t1-shared"] for d in by_round.values()
                 if d.get("t1-shared") and d.get("t2-shared")]
    figures = [F.timing("throughput 2 threads / 1 thread (shared CPUs)", r, "", "threads",
                        samples=per_round),
               F.once("cores used by server and load with 2 threads", busy, "", "threads")]
    for name, x in s.items():
        figures += [F.timing(f"throughput, {name}", x.get("requests_per_sec"), "req/s",
                             "threads", samples=D.runs_of(th, lambda y: y.get("requests_per_sec"),
                                                          variant=name)),
                    F.timing(f"server CPU per request, {name}",
                             x.get("server_cpu_us_per_request"), "us", "threads",
                             samples=D.runs_of(th, lambda y: y.get("server_cpu_us_per_request"),
                                               variant=name))]
    return result(v, rule, lines, numbers={"2 vs 1 scheduler threads": (r, 2.0)},
                  figures=figures)


def copystack_points(run):
    """{fibers: [(bytes, ns per op, live bytes), ...]} of the copystack/resume rows."""
    out = {}
    for name, e in D.bench_rows(run.get("switch")).items():
        parts = name.split("/")
        if len(parts) == 4 and parts[:2] == ["copystack", "resume"]:
            n, f = int(parts[2].split(":")[1]), int(parts[3].split(":")[1])
            out.setdefault(f, []).append((n, D.ns(e), e.get("live_bytes")))
    return {f: sorted(v) for f, v in out.items()}


def fibermem_points(run):
    """{stack mode: {fibers: point}} of fibermem.json."""
    out = {}
    for p in (run.get("fibermem") or {}).get("points", []):
        out.setdefault(p["stack"], {})[p["fibers"]] = p
    return out


def verdict_c12(run):
    rule = ("holds when the guard-page overflow check passes for every backend (the one-line "
            "message, then abort) and the copy-stack trade was measured both ways: a resume "
            "costs more the more live bytes it copies (8 KiB against 8 B) and an idle fiber "
            "costs less memory (PSS) on a copy stack than on a guarded one; holds partly when "
            "the guard pages pass but the trade was not measured; does not hold when a guard "
            "check fails or a measured side of the trade goes the other way")
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
    figures = [F.exact(f"guard-page overflow check passed, {b} (1 = yes)",
                       float(bool((p.get("overflow") or {}).get("passed"))), "", "props")
               for b, p in props["backends"].items()]
    figures.append(F.exact("copy-stack mode implemented (1 = yes)",
                           float(bool(cs.get("implemented"))), "", "props"))
    if not passed:
        return result(NOTRUN, rule, lines, figures=figures)
    cp = copystack_points(run)
    time_trade = None
    for f, pts in sorted(cp.items()):
        lines.append(f"- copy-stack resume + yield at {f} fibers, ns by live bytes: " + ", ".join(
            f"{n} B {fmt(t, '.3g')}" for n, t, _ in pts)
            + (f" (live part incl. the runtime's frames: {fmt(pts[0][2], '.0f')} B at "
               f"{pts[0][0]} B)" if pts and pts[0][2] else ""))
        by = {n: t for n, t, _ in pts}
        if 8 in by and 8192 in by and by[8] and by[8192]:
            rises = by[8192] > by[8]
            time_trade = rises if time_trade is None else time_trade and rises
    nums = {}
    at = {n: t for n, t, _ in cp.get(100000, [])}
    if at.get(8):
        lines.append(f"- aim: 8 B at 10^5 fibers under 20 ns per round trip: {at[8]:.3g} ns, "
                     f"{'met' if at[8] < 20 else 'not met'}")
    fm = fibermem_points(run)
    mem_trade, copy_best, guarded_ok = None, None, {}
    for mode, pts in sorted(fm.items()):
        cells = []
        for n, p in sorted(pts.items()):
            if p.get("status") == "ok":
                cells.append(f"{n}: {p['pss_bytes_per_fiber']:.0f} B PSS, "
                             f"{p['rss_bytes_per_fiber']:.0f} B RSS, "
                             f"{p['maps_per_fiber']:.3g} maps")
                if mode == "guarded":
                    guarded_ok[n] = p["pss_bytes_per_fiber"]
                elif copy_best is None or n >= copy_best[0]:
                    copy_best = (n, p["pss_bytes_per_fiber"])
            else:
                cells.append(f"{n}: {p.get('status')}")
        lines.append(f"- memory per idle fiber, {mode}: " + "; ".join(cells))
    if guarded_ok and copy_best:
        g = guarded_ok[max(guarded_ok)]
        mem_trade = copy_best[1] < g
        lines.append(f"- copy ({copy_best[0]} fibers) against guarded ({max(guarded_ok)}, the "
                     f"largest that ran): {copy_best[1]:.0f} against {g:.0f} B per fiber "
                     f"({g / copy_best[1]:.1f}x less)" if copy_best[1] else "")
        lines.append(f"- aim: an idle fiber in copy mode under 1 KiB: {copy_best[1]:.0f} B, "
                     f"{'met' if copy_best[1] < 1024 else 'not met'}")
        nums["idle fiber, copy stack (B)"] = (copy_best[1], 1024.0)
    for f, pts in sorted(cp.items()):
        for n, _, _ in pts:
            figures.append(switch_fig(run, f"copystack/resume/bytes:{n}/fibers:{f}"))
    for mode, pts in sorted(fm.items()):
        for n, p in sorted(pts.items()):
            if p.get("status") == "ok":
                figures.append(F.once(f"PSS per idle fiber, {mode}, {n} fibers",
                                      p["pss_bytes_per_fiber"], "B", "fibermem"))
    figures = figs(*figures)
    if not all(passed) or time_trade is False or mem_trade is False:
        return result(NOT, rule, lines, numbers=nums, figures=figures)
    if time_trade and mem_trade:
        return result(HOLDS, rule, lines, numbers=nums, figures=figures)
    if not cs.get("implemented"):
        lines.append("- the trade cannot be measured: no stack mode shares stacks")
    return result(PARTLY, rule, lines, numbers=nums, figures=figures)


# ---- C14, C16: registered fds and idle connections (scale.json, switch-bench) --------------

TLPI_POLL_EPOLL = 990 / 0.66  # TLPI table 63-9: 100,000 operations with 10,000 fds, CPU seconds


def scale_table(part, configs, field="median", spec=".3g"):
    """Markdown rows: one per configuration, one column per level (not run cells say why)."""
    levels = (part or {}).get("levels") or []
    out = ["| configuration | " + " | ".join(str(n) for n in levels) + " |",
           "|---|" + "---:|" * len(levels)]
    for cfg in configs:
        cells = []
        for n in levels:
            v = D.scale_at(part, cfg, n, field)
            st = D.scale_status(part, cfg, n)
            cells.append(fmt(v, spec) if v is not None else
                         ("FD_SETSIZE" if "FD_SETSIZE" in st else "not run"))
        out.append(f"| {cfg} | " + " | ".join(cells) + " |")
    return out


def verdict_c16(run):
    rule = ("at 10^4 idle connections (else the largest idle level poll and merged both "
            "reached, at least 10^3): holds when poll's server CPU per request is >= 3x its own "
            "with no idle connection and >= 3x merged's at that level while every epoll engine "
            "stays within 1.5x of its own with none; holds partly when poll grows >= 1.5x with "
            "the epoll engines within 1.5x, or poll grows >= 3x while some epoll engine grows "
            "more; otherwise does not hold. select is reported up to its FD_SETSIZE limit")
    sc = run.get("scale")
    idle = (sc or {}).get("idle")
    if not idle:
        return result(NOTRUN, rule, [f"no idle-scaling runs: {run.why('scale')}"])
    series = D.scale_series(idle)
    both = [n for n, _ in series.get("poll", []) if D.scale_at(idle, "merged", n) is not None]
    level = 10000 if 10000 in both else max([n for n in both if n >= 1000], default=None)
    lines = [f"- server CPU per request (us) of {idle.get('active_conns')} active ping-pong "
             "connections while N idle connections are open (columns: N), medians of "
             f"{sc.get('config', {}).get('rounds')} interleaved rounds:", ""]
    lines += scale_table(idle, list(series) or D.scale_configs(sc)) + [""]
    for cfg, why in (idle.get("not_built") or {}).items():
        lines.append(f"- {cfg}: {why}")
    if level is None or D.scale_at(idle, "poll", 0) is None:
        return result(NOTRUN, rule, lines + ["- poll and merged were not both measured at "
                                             ">= 10^3 idle connections and at 0"])
    poll0, pollL = D.scale_at(idle, "poll", 0), D.scale_at(idle, "poll", level)
    mergedL = D.scale_at(idle, "merged", level)
    growth = pollL / poll0
    vs_epoll = pollL / mergedL
    ep_growth = {e: D.scale_at(idle, e, level) / D.scale_at(idle, e, 0)
                 for e in D.epoll_family(idle)
                 if D.scale_at(idle, e, level) and D.scale_at(idle, e, 0)}
    lines.append(f"- at {level} idle connections: poll {pollL:.3g} us per request, "
                 f"{growth:.3g}x its own with none; poll/merged {vs_epoll:.3g}")
    lines.append("- epoll engines, CPU per request at that level over none: " + ", ".join(
        f"{e} {g:.2f}x" for e, g in ep_growth.items()))
    sel = [(n, v) for n, v in series.get("select", [])]
    if sel and sel[0][0] == 0 and len(sel) > 1:
        lines.append(f"- select: {sel[-1][1]:.3g} us at {sel[-1][0]} idle, "
                     f"{sel[-1][1] / sel[0][1]:.3g}x its own with none; beyond that "
                     "not run: FD_SETSIZE")
    for cfg in ("uring-poll", "uring (model)", "epoll (model)"):
        a0, aL = D.scale_at(idle, cfg, 0), D.scale_at(idle, cfg, level)
        if a0 and aL:
            lines.append(f"- {cfg}: {aL:.3g} us at {level} idle, {aL / a0:.2f}x its own with "
                         "none")
    lines.append(f"- anchor (TLPI): poll/epoll {TLPI_POLL_EPOLL:.0f}x in CPU for 100,000 "
                 "monitoring calls over 10,000 fds; ours divides whole requests (the echo's "
                 "read and write included), so the ratio is smaller by construction")
    calm = ep_growth and all(g <= 1.5 for g in ep_growth.values())
    if growth >= 3 and vs_epoll >= 3 and calm:
        v = HOLDS
    elif (growth >= 1.5 and calm) or growth >= 3:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={f"poll/merged CPU per request at {level} idle":
                                           (vs_epoll, TLPI_POLL_EPOLL)})


def verdict_c14(run):
    log_bound = math.log2(19000) / math.log2(10)
    rule = ("holds when one epoll_ctl ADD+DEL pair costs >= 1.05x more with the most fds "
            f"registered (19,000) than with 10 but at most {log_bound:.1f}x (log2 19000 / log2 "
            "10: logarithmic, a linear structure would be 1900x), and a churning merged server "
            "spends >= 1.05x the CPU per connection with the most idle connections held as with "
            "none; holds partly when only one of the two shows; does not hold when the pair's "
            "cost grows faster than logarithmically or neither shows")
    pts = D.epoll_ctl_rows(D.bench_rows(run.get("switch")))
    churn = (run.get("scale") or {}).get("churn")
    lines = []
    if pts:
        lines.append("- one ADD+DEL pair (switch-bench, CPU time), by registered fds: " +
                     ", ".join(f"{n}: {t:.0f} ns" for n, t in pts))
    cg = None
    if churn:
        cpu = D.scale_series(churn, "server_cpu_us_per_request")
        tput = D.scale_series(churn, "median")
        lines.append("- churn (connect, one request, close) while N idle connections are held, "
                     "connections/s and server CPU per connection (us):")
        for cfg, series in tput.items():
            c = dict(cpu.get(cfg, []))
            lines.append(f"  - {cfg}: " + ", ".join(
                f"{n}: {v:.0f}/s, {fmt(c.get(n), '.3g')} us" for n, v in series))
        m = dict(cpu.get("merged", []))
        if m.get(0) and len(m) > 1:
            top = max(m)
            cg = m[top] / m[0]
            lines.append(f"- merged: CPU per churned connection with {top} idle held is "
                         f"{cg:.3g}x that with none")
    if not pts or len(pts) < 2:
        return result(NOTRUN, rule, lines + [f"- no epoll_ctl rows: {run.why('switch')}"])
    g = pts[-1][1] / pts[0][1]
    lines.append(f"- ADD+DEL at {pts[-1][0]} registered over {pts[0][0]}: {g:.3g}x")
    if cg is not None and pts[-1][1]:
        lines.append(f"- one ADD+DEL pair is {pts[-1][1] / 10:.3g}% of 1 us; a churned "
                     "connection costs the server the figures above")
    a = 1.05 <= g <= log_bound
    b = cg is not None and cg >= 1.05
    if g > log_bound:
        v = NOT
    elif a and b:
        v = HOLDS
    elif a or b:
        v = PARTLY
    else:
        v = NOT
    return result(v, rule, lines, numbers={"epoll_ctl pair 19000 vs 10 registered":
                                           (g, math.log2(19000) / math.log2(10))})


def completion_section(run):
    """Readiness against completion: measured beside the claims, no verdict (the published
    comparisons disagree: +49% and +42% for io_uring in two echo benchmarks, -3% to -12% in
    others)."""
    comp = (run.get("scale") or {}).get("completion")
    out = ["## Readiness against completion", ""]
    if not comp:
        return out + [f"not run: {run.why('scale')}", ""]
    out += ["Throughput (requests/s), server CPU per request (us) and kernel entries per "
            "request (every system call of the server: perf on raw_syscalls:sys_enter in a "
            "separate counted run) by connections; medians of interleaved rounds. Published "
            "comparisons disagree (io_uring +49% and +42% in two echo benchmarks, -3% to -12% "
            "in others), so nothing is assumed here.", "",
            "| configuration | connections | requests/s | CPU us/request | kernel entries/request "
            "| event-loop calls/request |", "|---|---:|---:|---:|---:|---:|"]
    counts = {(c["config"], c["conns"]): c for c in comp.get("counts", [])}
    for cfg in comp.get("configs", []):
        for n in comp.get("conns", []):
            s = ((comp.get("summary") or {}).get(cfg) or {}).get(str(n)) or {}
            c = counts.get((cfg, n), {})
            if s.get("status") != "ok":
                out.append(f"| {cfg} | {n} | {s.get('status', 'not run')} | | | |")
                continue
            out.append(f"| {cfg} | {n} | {s['median']:.0f} | "
                       f"{fmt(s.get('server_cpu_us_per_request'), '.3g')} | "
                       f"{fmt(c.get('kernel_entries_per_request'), '.3g')} | "
                       f"{fmt(c.get('event_loop_calls_per_request'), '.3g')} |")
    out.append("")
    for cfg, why in (comp.get("not_built") or {}).items():
        out.append(f"- {cfg}: {why}")
    out.append("")
    if (run.dir / "completion.png").exists():
        out += ["![completion](completion.png)", ""]
    return out
# ---- C13: synchronous code, asynchronous efficiency ----------------------------------------------

def verdict_c13(run):
    rule = ("the fiber server (its default read policy, merged engine) against the raw-epoll "
            "callback server, medians of paired interleaved rounds, at every ping-pong level "
            "measured (100 and 1000 connections): holds when it needs at most 1.05x the epoll "
            "server's CPU per request, reaches at least 0.95x its throughput, and makes at most "
            "2.1 system calls per request (kernel count); holds partly when the CPU ratio is at "
            "most 1.25 and the throughput ratio at least 0.8 everywhere (\"slightly below\", "
            "seed 004's words); otherwise does not hold")
    doc = run.get("fiberio")
    if not doc or not doc.get("summary"):
        return result(NOTRUN, rule, [f"no read-policy experiment: {run.why('fiberio')}"])
    summ, rat, default = D.fiberio_summary(doc), doc.get("ratios") or {}, doc.get("default", "")
    cfg = doc.get("config", {})
    names = D.fiberio_variants(doc)
    lines = [f"- default: `{default}`; {cfg.get('rounds', '?')} interleaved rounds, server on "
             f"CPU {cfg.get('server_cpu', '?')}, load on CPU {cfg.get('load_cpu', '?')}; load "
             f"average {doc.get('loadavg_start')} at start, {doc.get('loadavg_end')} at end",
             "", "| load | server | syscalls/req | epoll_ctl/req | EAGAIN/req | CPU us/req | "
             "req/s |", "|---|---|---:|---:|---:|---:|---:|"]
    for load in D.FIBERIO_LOADS:
        for v in names:
            s = summ.get(load, {}).get(v)
            if s:
                lines.append(f"| {load} | {v} | {fmt(s.get('syscalls_per_request'), '.3f')} | "
                             f"{fmt(s.get('epoll_ctl_per_request'), '.3f')} | "
                             f"{fmt(s.get('eagain_per_request'), '.2f')} | "
                             f"{fmt(s.get('server_cpu_us_per_request'), '.2f')} | "
                             f"{fmt(s.get('requests_per_sec'), '.0f')} |")
    lines.append("")
    for name, r in rat.items():
        lines.append(f"- {name}: median **{fmt(r.get('median'), '.3f')}** (rounds: "
                     + ", ".join(fmt(x, ".3f") for x in r.get("per_round", [])) + ")")
    cpu, tput, levels = [], [], []
    for load in ("pingpong", "pingpong-1k"):
        c = (rat.get(f"{load} cpu {default}/epoll") or {}).get("median")
        t = (rat.get(f"{load} tput {default}/epoll") or {}).get("median")
        if c is not None and t is not None:
            cpu.append(c)
            tput.append(t)
            levels.append(load)
    sysc = (summ.get("pingpong", {}).get(default) or {}).get("syscalls_per_request")
    nums = {}
    if cpu:
        nums["fiber/epoll CPU per request"] = (max(cpu), 1.0)
    if not cpu:
        return result(NOTRUN, rule, lines + ["- no paired fiber/epoll ping-pong rounds"])
    lines.append(f"- worst over {', '.join(levels)}: CPU per request {default}/epoll "
                 f"{fmt(max(cpu), '.3f')}, throughput {fmt(min(tput), '.3f')}; syscalls per "
                 f"request (ping-pong) {fmt(sysc, '.3f')}")
    if max(cpu) <= 1.05 and min(tput) >= 0.95 and sysc is not None and sysc <= 2.1:
        v = HOLDS
    elif max(cpu) <= 1.25 and min(tput) >= 0.8:
        v = PARTLY
    else:
        v = NOT
    figs = [F.exact("syscalls per request, ping-pong, default fiber", sysc, "", "fiberio"),
            F.exact("syscalls per request, ping-pong, eager fiber",
                    (summ.get("pingpong", {}).get("fiber/eager/" + default.split("/")[-1])
                     or {}).get("syscalls_per_request"), "", "fiberio")]
    for load in levels:
        for what in ("cpu", "tput"):
            r = rat.get(f"{load} {what} {default}/epoll") or {}
            figs.append(F.timing(f"{load}: {'CPU per request' if what == 'cpu' else 'throughput'}"
                                 " fiber/epoll", r.get("median"), "x", "fiberio",
                                 samples=r.get("per_round")))
    return result(v, rule, lines, numbers=nums, figures=figs)


# ---- C15: kernel hand-offs against the number of contexts -----------------------------------

def handoff_series(run, kind):
    """[(m, CPU ns per hand-off)] of one kind, measured levels only, by m."""
    pts = ((run.get("handoff") or {}).get("series") or {}).get(kind) or []
    return [(p["contexts"], p["cpu_ns_per_handoff"]) for p in pts if p.get("status") == "ok"]


def log_fit(pts):
    """Least squares ns = a + b * log2(m); returns (a, b, R^2)."""
    xs = [math.log2(m) for m, _ in pts]
    ys = [v for _, v in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    sst = sum((y - my) ** 2 for y in ys)
    sse = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return a, b, 1 - sse / sst if sst else 0.0


def verdict_c15(run):
    rule = ("on CPU time per kernel thread hand-off (m threads in m/2 futex pairs on one CPU, "
            "medians of interleaved rounds): holds when it rises >= 1.25x from the fewest to "
            "the most contexts measured and a fit a + b*log2(m) with b > 0 explains >= 70% of "
            "its variance; holds partly when it rises >= 1.25x without that fit, or rises "
            "1.1-1.25x; does not hold when it rises < 1.1x; not run with fewer than 3 levels. "
            "Fiber hand-offs on one runtime are shown beside for contrast")
    th = handoff_series(run, "thread")
    if len(th) < 3:
        return result(NOTRUN, rule, [f"fewer than 3 thread levels measured: "
                                     f"{run.why('handoff')}"])
    fb = dict(handoff_series(run, "fiber"))
    lines = ["- CPU ns per hand-off by contexts m (thread / fiber): " + ", ".join(
        f"{m}: {v:.0f} / {fmt(fb.get(m), '.1f')}" for m, v in th)]
    ratio = th[-1][1] / th[0][1]
    a, b, r2 = log_fit(th)
    lines.append(f"- thread: {th[0][1]:.0f} ns at m={th[0][0]} to {th[-1][1]:.0f} ns at "
                 f"m={th[-1][0]} ({ratio:.2f}x); fit {a:.0f} + {b:.0f}*log2(m) ns, R^2 "
                 f"{r2:.2f}")
    both = [m for m, _ in th if m in fb]
    if both:
        lines.append(f"- a kernel thread hand-off costs {dict(th)[both[0]] / fb[both[0]]:.0f}x a "
                     f"fiber hand-off at m={both[0]} and {dict(th)[both[-1]] / fb[both[-1]]:.0f}x "
                     f"at m={both[-1]}")
    skipped = [p for p in ((run.get("handoff") or {}).get("series") or {}).get("thread", [])
               if p.get("status") != "ok"]
    for p in skipped:
        lines.append(f"- m={p['contexts']}: {p['status']}: {p.get('reason', '')}")
    lines.append("- what grows with m is not the red-black tree alone: every hand-off also "
                 "touches another thread's stack and task structure, which stop fitting in the "
                 "caches as m grows; the fit says how well log2(m) describes the whole")
    if ratio >= 1.25 and b > 0 and r2 >= 0.7:
        v = HOLDS
    elif ratio >= 1.1:
        v = PARTLY
    else:
        v = NOT
    runs = (run.get("handoff") or {}).get("runs") or []

    def rounds(kind, m):
        return [r["cpu_ns_per_handoff"] for r in runs if r.get("kind") == kind
                and r.get("contexts") == m and r.get("status") == "ok"]
    figures = [F.timing(f"thread hand-off at m={m}", ns, "ns", "handoff",
                        samples=rounds("thread", m)) for m, ns in th]
    figures += [F.timing(f"fiber hand-off at m={m}", ns, "ns", "handoff",
                         samples=rounds("fiber", m)) for m, ns in sorted(fb.items())]
    figures.append(F.once("thread hand-off growth, most/fewest contexts", ratio, "x", "handoff"))
    return result(v, rule, lines, figures=figures)


# ---- ramp-up and slow clients (sections beside the claims) ----------------------------------

def ramp_section(run):
    out = ["## Ramp-up", "",
           "echo-load connects every connection and completes one verified echo on each "
           "before its window opens; this is how long that took per model (seconds, "
           "persistent connections), with its errors. C6 and C7 read only the window.", ""]
    sweep = run.get("sweep")
    pts = [p for p in (sweep or {}).get("points", []) if p.get("mode") == "pingpong"
           and p.get("status") == "ok" and D.ramp(p)]
    if not pts:
        return out + [f"not run: no ramp-up figures ({run.why('sweep')})", ""]
    levels = sorted({p["conns"] for p in pts})
    out += ["| model | " + " | ".join(str(c) for c in levels) + " |",
            "|---" * (len(levels) + 1) + "|"]
    for m in run.order("models", {p["model"] for p in pts}):
        cells = []
        for c in levels:
            q = [p for p in pts if p["model"] == m and p["conns"] == c]
            if not q:
                cells.append("-")
                continue
            r = D.ramp(q[0])
            cells.append(f"{r['seconds']:.2f}" + (f" ({r['errors_total']} err)"
                                                   if r.get("errors_total") else "")
                         + ("" if r.get("complete", True) else " incomplete"))
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    out.append("")
    if (run.dir / "ramp_time.png").exists():
        out += ["![ramp_time](ramp_time.png)", ""]
    return out


def slow_section(run):
    out = ["## Slow clients", "",
           "The articles' core argument: a blocking model ties a thread or process to each "
           "slow connection. Here the slowness is made by the client, not the link: echo-load "
           "--mode slow sends each request in chunks with a delay between them and thinks "
           "between requests (this kernel has no netem qdisc, so a slow network cannot be "
           "emulated). Every byte is still verified.", ""]
    slow = run.get("slow")
    if not slow:
        return out + [f"not run: {run.why('slow')}", ""]
    cfg = slow.get("config") or {}
    size = cfg.get("size") or 64
    out += [f"Requests of {size} B; echo-load flags `{cfg.get('load_args', '')}`. Server CPU "
            "per request is its getrusage (children included) over every request it echoed.",
            "", "| model | conns | req/s | p99 (ms) | errors | server CPU/request (us) | "
            "RSS/conn (KiB) | kernel/conn (KiB) |", "|---|---|---|---|---|---|---|---|"]
    pts = slow.get("points", [])
    for m in run.order("models", {p["model"] for p in pts}):
        for p in sorted((q for q in pts if q["model"] == m), key=lambda q: q["conns"]):
            if p.get("status") != "ok" or not p.get("load"):
                out.append(f"| {m} | {p['conns']} | {p.get('status')}: "
                           f"{p.get('reason', '')} | | | | | |")
                continue
            kern, _ = D.kernel_per_conn(p)
            out.append(f"| {m} | {p['conns']} | {rps(p):.0f} | "
                       f"{p['load']['latency_us']['p99'] / 1000:.1f} | {D.point_errors(p)} | "
                       f"{fmt(D.server_cpu_us_per_request(p, size), '.1f')} | "
                       f"{p['rss']['per_conn_kb']:.1f} | {fmt(kern, '.1f')} |")
    out.append("")
    if (run.dir / "slow_clients.png").exists():
        out += ["![slow_clients](slow_clients.png)", ""]
    return out


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
     "switch time for memory.", "seed 004 (libco)", "no figure quoted", verdict_c12,
     ["copystack"]),
    ("C13", "\"Synchronous code, asynchronous efficiency\": a coroutine server written as "
     "blocking read/write loops performs like an asynchronous callback server; coroutine IO "
     "sits \"slightly below\" asynchronous calls.", "seeds 001 (NtyCo, its title), 004 (libco)",
     "like a callback server; \"slightly below\" (no figure quoted)", verdict_c13,
     ["fiberio"]),
    ("C14", "epoll keeps registered fds in a red-black tree, so EPOLL_CTL_ADD/DEL cost O(log n) "
     "in the registered fds; with very many connections, very short connections pay for it.",
     "seed 003 (PyCon 2014 talk)", "O(log n) per ADD/DEL (no figure quoted)", verdict_c14,
     ["epoll_ctl_scaling"]),
    ("C15", "The kernel scheduler (CFS) keeps runnable tasks in a red-black tree, so every "
     "block and wake costs O(log m), m the active contexts; thread-per-connection pays it on "
     "every IO.", "seed 003 (PyCon 2014 talk)", "O(log m) per block and wake (no figure)",
     verdict_c15, ["handoff_scale"]),
    ("C16", "select/poll scan every watched fd on every call; epoll's cost follows only the "
     "ready fds (level-triggered returns every ready fd each time, edge-triggered fewer).",
     "seed 003 (PyCon 2014 talk); anchor: TLPI", "TLPI: 100,000 operations over 10,000 fds cost "
     "poll 990 s, select 930 s, epoll 0.66 s of CPU", verdict_c16, ["idle_scaling"]),
]


CHART_LIST = ["switch_cost", "instructions", "star_ring", "sweep_throughput", "sweep_p99",
              "engines", "rss_per_conn", "epoll_ctl_share", "idle_scaling", "epoll_ctl_scaling",
              "completion", "ramp_time", "slow_clients", "handoff_scale", "fiberio"]


# ---- hooked calls and fiber locks (seeds 000, 004; no figure quoted) ------------------------

HOOK_HOWS = ["syscall", "fallthrough", "direct", "hooked"]
LOCKS = ["fiber_mutex", "event_lock", "pthread_mutex"]
LOCK_MODES = ["uncontended", "contended/fibers:2", "contended/threads:2"]


def not_run(why):
    """'not run: <why>', whether or not the recorded reason already starts that way."""
    why = str(why or "no data")
    return why if why.startswith("not run") else f"not run: {why}"


def hooks_section(run):
    """Measured costs of the hooked libc calls and of the fiber locks. The seeds describe both
    mechanisms without a figure, so this section reports what was measured, with no verdict."""
    out = ["## Hooked calls and fiber locks", "",
           "Seeds 000 (libfiber) and 004 (libco) describe hooking the libc IO calls so that "
           "unmodified blocking code runs cooperatively on fibers, and the locks fibers need "
           "(a mutex within one scheduler, an event lock across schedulers built from an "
           "atomic and an eventfd, a condition variable, a semaphore). They quote no number "
           "for either, so there is no verdict here: this section states what this run "
           "measured and how (harness/hooks_bench.py).", ""]
    h = run.get("hooks")
    if not h:
        return out + [f"not run: {run.why('hooks')}", ""]
    bench = h.get("bench") or {}
    rows = bench.get("rows") or {}
    ic = (h.get("icount") or {}).get("instructions_per_unit") or {}
    la = h.get("load_average") or {}
    if la.get("start"):
        out += [f"Load average (1/5/15 min) at the start of this step: "
                f"{'/'.join(f'{x:.1f}' for x in la['start'])}.", ""]

    def ns(name):
        r = rows.get(name) or {}
        return r.get("ns_median", r.get("cpu_ns_median"))

    if bench.get("status") != "ok":
        out += [f"- switch-bench rows: {not_run(bench.get('reason', bench.get('status')))}"]
    else:
        out += ["**One call** (1 byte on a pipe that is always ready, so nothing waits: the "
                "price of the path, not of a wait; switch-bench `hook/` rows, CPU time, median "
                "of interleaved repetitions; instructions: callgrind, user space only, two "
                "loop counts differenced):", "",
                "| call | raw syscall | hooks linked, off | fiber IO (direct) | hooked | "
                "hooked / direct (time) | hooked / direct (instructions) |",
                "|---|---|---|---|---|---|---|"]
        for call in ("read", "write"):
            cells, names = [], [f"hook/{call}/pipe/{w}" for w in HOOK_HOWS]
            for n in names:
                t, i = ns(n), ic.get(n)
                cells.append(fmt(t, ".0f", " ns") + (f" ({i:.0f} instr.)" if i else ""))
            d, hk = ns(names[2]), ns(names[3])
            di, hi = ic.get(names[2]), ic.get(names[3])
            cells.append(fmt(hk / d if d and hk else None, ".3f"))
            cells.append(fmt(hi / di if di and hi else None, ".3f"))
            out.append(f"| {call} | " + " | ".join(cells) + " |")
        out += ["", "A hooked call does what the direct fiber call does (try the call, wait "
                "in the engine on EAGAIN) behind libc's name: the difference per call is a "
                "few instructions either way, inside the noise of a ~150 ns system call. "
                "For comparison, issue #13 cites 10-41 ns per call for a binary-rewriting "
                "hook (zpoline).", ""]
    e = h.get("echo") or {}
    if e.get("status") != "ok":
        out += [f"- echo: {not_run(e.get('status'))}", ""]
    else:
        c, su = e.get("config") or {}, e.get("summary") or {}
        cpu = (e.get("ratios") or {}).get("cpu per request hooked/direct") or {}
        tput = (e.get("ratios") or {}).get("throughput hooked/direct") or {}
        out += [f"**Echo server** (`echo-server --model fiber --engine {c.get('engine')}`, "
                f"`--io direct` against `--io hooked`, {c.get('conns')} connections x "
                f"{c.get('size')} B ping-pong, {c.get('rounds')} interleaved rounds of "
                f"{c.get('duration_s')} s, server on CPU {c.get('server_cpu')}, load on CPU "
                f"{c.get('load_cpu')}; CPU from perf task-clock on the server):", "",
                "| io | requests/s (median) | server CPU per request (median) | "
                "hooked calls per request |", "|---|---|---|---|"]
        for m in ("direct", "hooked"):
            v = su.get(m) or {}
            out.append(f"| {m} | {fmt(v.get('requests_per_sec'), '.0f')} | "
                       f"{fmt(v.get('server_cpu_us_per_request'), '.2f', ' us')} | "
                       f"{fmt(v.get('hook_calls_per_request'), '.2f')} |")
        out += ["", f"Server CPU per request hooked/direct: median of the paired rounds "
                f"{fmt(cpu.get('median'), '.3f')} (rounds "
                f"{', '.join(fmt(x, '.3f') for x in cpu.get('rounds', []))}); throughput "
                f"hooked/direct {fmt(tput.get('median'), '.3f')}.", ""]
    if rows:
        out += ["**Locks** (ns per lock/unlock pair of the measuring fiber, median; "
                "`fibers:2`: a second fiber of the same runtime wants the lock and each holder "
                "keeps it across one yield, so every lock finds it taken, and each pass of the "
                "scheduler includes its non-blocking poll of the engine; `threads:2`: a "
                "second thread locks and unlocks in a tight loop meanwhile, real time; "
                "\"other side\": pairs the contender completed per measured pair, 1 when "
                "the lock is shared evenly):", "",
                "| lock | " + " | ".join(LOCK_MODES) + " |", "|---|---|---|---|"]
        notes = []
        for lock in LOCKS:
            cells = []
            for mode in LOCK_MODES:
                r = rows.get(f"sync/{lock}/{mode}")
                if not r:
                    cells.append("n/a")
                elif r.get("not_run"):
                    cells.append("not run")
                    notes.append(f"- {lock} {mode}: {r['not_run']}")
                else:
                    cnt = r.get("counters") or {}
                    extra = []
                    if mode != "uncontended" and cnt.get("other_pairs_per_pair") is not None:
                        extra.append(f"other side {cnt['other_pairs_per_pair']:.2f} pairs/pair")
                    if mode != "uncontended" and cnt.get("wakeups_per_pair") is not None:
                        extra.append(f"{cnt['wakeups_per_pair']:.3g} eventfd wake-ups/pair")
                    cells.append(fmt(ns(f"sync/{lock}/{mode}"), ".1f", " ns")
                                 + (f" ({'; '.join(extra)})" if extra else ""))
            out.append(f"| {lock} | " + " | ".join(cells) + " |")
        out += [""] + notes + ([""] if notes else [])
    dl = h.get("deadlock") or {}
    if dl.get("status") != "ok":
        out += [f"- deadlock scenario: {not_run(dl.get('status'))}", ""]
    else:
        out += ["**The deadlock of seed 000** (two scheduler threads, each with a fiber "
                "holding one lock across a fiber switch and a fiber wanting the other "
                "thread's lock; the test watches with a bounded wait):", ""]
        for lock in ("pthread_mutex", "event_lock"):
            d = dl.get(lock) or {}
            state = ("deadlocked, detected and reported" if d.get("deadlocked") else
                     "completed") if d else "not run"
            out.append(f"- {lock}: {state}: `{d.get('outcome', '')}` (the test "
                       f"{'passed' if d.get('test_passed') else 'FAILED'})")
        out.append("")
    return out


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


REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"


def reference_for(folder, ref_dir=REFERENCE):
    """The committed reference run to set beside `folder`'s figures, or None when `folder`
    is the reference itself or the reference holds no data."""
    ref_dir = Path(ref_dir)
    if not ref_dir.is_dir() or Path(folder).resolve() == ref_dir.resolve():
        return None
    ref = D.Run(ref_dir)
    return ref if ref.data else None


def evaluate(run, tolerant=False):
    """{claim id: result} for every claim of the report. tolerant: a rule that cannot read
    the run (an older run whose files lack what today's rule expects, such as the committed
    reference before it is regenerated) gives `not run` saying why, instead of failing the
    whole report."""
    out = {}
    for cid, _, _, _, fn, _ in CLAIMS:
        try:
            out[cid] = fn(run)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                ZeroDivisionError) as e:
            if not tolerant:
                raise
            out[cid] = result(NOTRUN, "", [f"- this run's files do not have what the rule "
                                           f"reads ({type(e).__name__}: {e})"])
    return out


def figure_table(figures, ref_figures=None):
    """The figures a rule read, as a table; with a reference, its figure of the same name in
    a column beside ("n/a" where the reference did not measure it)."""
    # A claim this run could not measure still shows the reference's figures, beside n/a.
    shown = F.names(figures, ref_figures if not figures else None)
    if not shown:
        return []
    head = "| figure | this run |" + (" reference |" if ref_figures is not None else "")
    out = [head, "|---|---|" + ("---|" if ref_figures is not None else "")]
    mine, ref = F.by_name(figures), F.by_name(ref_figures)
    for name in shown:
        f = mine.get(name)
        row = f"| {name} | {F.fmt(f)}{F.fmt_spread(f)} |"
        if ref_figures is not None:
            r = ref.get(name)
            row += f" {F.fmt(r)}{F.fmt_spread(r)} |"
        out.append(row)
    return out + [""]


def preset_text(v):
    """A step's preset as one table cell: command-line arguments joined, a dict as `key value`
    pairs (an empty value: every row), with `|` escaped for the Markdown table."""
    if isinstance(v, list):
        text = " ".join(str(x) for x in v)
    elif isinstance(v, dict):
        text = ", ".join(f"{k} {x if x != '' else '(all rows)'}" for k, x in v.items())
    else:
        text = str(v)
    return text.replace("|", "\\|")


def sharpen_section(run, results):
    """For a run at reduced size: per claim, the steps its figures come from and what the full
    preset runs differently there, from the presets suite.json records."""
    suite = run.get("suite") or {}
    preset = suite.get("preset")
    if not suite or preset == "full":
        return []
    mine, full = suite.get("presets") or {}, suite.get("full_presets") or {}
    out = ["## What a full run may sharpen", "",
           f"This run used the `{preset}` preset: the same experiments and verdict rules as "
           "`./run.sh full`, at smaller sizes. A verdict whose figures lie near a threshold of "
           "its rule may change with the full preset's longer points and more repetitions; "
           "exact counts (instructions, syscalls, epoll_ctl per request) do not.", "",
           "| claim | verdict | figures from | the full preset runs |", "|---|---|---|---|"]
    for cid, r in results.items():
        srcs = []
        for f in r["figures"]:
            if f.get("source") and f["source"] not in srcs:
                srcs.append(f["source"])
        kinds = {f["kind"] for f in r["figures"]}
        diffs = [f"{src}: `{preset_text(full[src])}` (here `{preset_text(mine.get(src))}`)"
                 for src in srcs if src in full and mine.get(src) != full[src]]
        if r["verdict"] == NOTRUN:
            why = r["measured"][0].lstrip("- ") if r["measured"] else "no data"
            change = f"may reach a verdict where this run did not ({why})"
        elif diffs:
            why = []
            if F.TIMING in kinds:
                why.append("more repetitions narrow the noise bands of its timings")
            if F.ONCE in kinds:
                why.append("its single-sample figures come from longer points or more levels")
            change = "; ".join(diffs) + ": " + ("; ".join(why) or
                                                "its figures are exact counts, which the size "
                                                "does not change")
        elif not srcs:
            change = "unknown (its rule names no sources)"
        elif not full:
            change = "unknown (this run's suite.json does not record the full preset)"
        elif kinds == {F.EXACT}:
            change = "the same: exact counts at the same size"
        else:
            change = "the same sizes"
        out.append(f"| {cid} | {r['verdict']} | {', '.join(srcs) or '?'} | {change} |")
    return out + [""]


def arch_section(run):
    """Instructions per switch by architecture, counted from the assembly, and the aarch64
    switch-bench under emulation, in a table of its own: emulated times are never set beside
    native ones, in a table or a chart."""
    out = ["## Architectures: x86_64 and aarch64", ""]
    counts = run.get("asm_count")
    if not counts:
        out += [f"not run: {run.why('asm_count')}", ""]
    else:
        rows = counts.get("rows", [])
        cols = [("x86_64", ""), ("aarch64", "pac-bti"), ("aarch64", "plain")]
        heads = ["x86_64", "aarch64 (as built: PAC and BTI hints)", "aarch64 (no branch "
                 "protection)"]
        table = {}
        for r in rows:
            table.setdefault(r["backend"], {})[(r["arch"], r["variant"])] = r["instructions"]
        ic = D.icounts(run.get("icount"))
        out += ["Instructions on one switch, counted in the disassembly of the assembled "
                "source (`harness/asm_count.py`): exact and needing no hardware of that "
                "architecture. fcontext counts Boost's prebuilt `jump_fcontext` alone (the same "
                "object in both aarch64 columns: it has no PAC or BTI instructions); on x86_64 "
                "its inline call site adds four. The callgrind column (x86_64, this run) is "
                "measured per switch of the benchmark loop, so it includes the loop's own "
                "instructions.", "",
                "| backend | " + " | ".join(heads) + " | callgrind, x86_64 loop |",
                "|---|" + "---|" * (len(heads) + 1)]
        for b in run.order("switch", table):
            cells = []
            for arch, variant in cols:
                v = table[b].get((arch, variant))
                if v is None and b == "fcontext":
                    v = table[b].get((arch, ""))
                cells.append(str(v) if v is not None else "-")
            out.append(f"| `{b}` | " + " | ".join(cells) + f" | {fmt(ic.get('switch/' + b))} |")
        for note in counts.get("not_counted", []):
            out.append(f"- {note}")
        out.append("")
    emu = run.get("switch_emulated")
    out += ["### aarch64 under qemu-user: EMULATED times", ""]
    if not emu:
        return out + [f"not run: {run.why('switch_emulated')}", ""]
    rows = D.bench_rows(emu)
    out += [f"Measured by the aarch64 `switch-bench` run under `{emu.get('emulator')}` on this "
            "x86_64 host. qemu translates each aarch64 instruction into host code, so these "
            "figures are the emulator's speed, not an aarch64 core's: they are kept apart "
            "from every native figure in this report and rank nothing. The binary's own "
            f"words: \"{(emu.get('context') or {}).get('emulated', '?')}\"", "",
            "| row (emulated, aarch64) | median ns (emulated) |", "|---|---|"]
    for name, e in rows.items():
        out.append(f"| `{name}` | {fmt(D.ns(e), '.4g')} |")
    return out + [""]


def build_report(run, reference=None):
    """(REPORT.md text, results). `reference`: a D.Run whose figures and verdicts are set
    beside this run's (None: no reference column)."""
    results = evaluate(run)
    ref_results = evaluate(reference, tolerant=True) if reference is not None else None
    lines = ["# Switchyard report", "",
             "Generated by `plots/report.py` from the JSON files in this folder; do not edit. "
             "Each verdict comes from the rule printed under it, so a run on other hardware may "
             "reach another verdict.", ""]
    lines += machine_section(run)
    if reference is not None:
        lines[-1:-1] = [f"- reference column: the committed run in `results/reference` "
                        f"({D.machine_line(reference)}, preset "
                        f"`{(reference.get('suite') or {}).get('preset', '?')}`)"]
        lines += ["## Verdicts", "", "| claim | verdict | reference |", "|---|---|---|"]
        lines += [f"| [{cid}](#{cid.lower()}) | {results[cid]['verdict']} | "
                  f"{ref_results[cid]['verdict']} |" for cid, *_ in CLAIMS]
    else:
        lines += ["## Verdicts", "", "| claim | verdict |", "|---|---|"]
        lines += [f"| [{cid}](#{cid.lower()}) | {results[cid]['verdict']} |"
                  for cid, *_ in CLAIMS]
    lines.append("")
    for cid, claim, source, quoted, _, charts in CLAIMS:
        r = results[cid]
        lines += [f"## {cid}", "", f"**Claim** ({source}): {claim}", "",
                  f"**Quoted:** {quoted}", "", "**Measured:**", ""]
        lines += r["measured"] + [""]
        lines += figure_table(r["figures"],
                              ref_results[cid]["figures"] if ref_results else None)
        lines += [f"**Verdict: {r['verdict']}** (rule: {r['rule']})", ""]
        for c in charts:
            if (run.dir / f"{c}.png").exists():
                lines += [f"![{c}]({c}.png)", ""]
    lines += completion_section(run)
    lines += ramp_section(run)
    lines += slow_section(run)
    lines += arch_section(run)
    lines += hooks_section(run)
    lines += surprises(results, run)
    lines += sharpen_section(run, results)
    drawn = [c for c in CHART_LIST if (run.dir / f"{c}.png").exists()]
    if drawn:
        lines += ["## All charts", ""]
        lines += [f"- [{c}.png]({c}.png) ([SVG]({c}.svg))" for c in drawn]
        lines.append("")
    return "\n".join(lines), results


USAGE = "usage: report.py RUN_FOLDER [--no-charts] [--reference-dir DIR | --no-reference]"


def main(argv):
    args, opts, ref_dir = [], set(), REFERENCE
    it = iter(argv)
    for a in it:
        if a == "--reference-dir":
            ref_dir = next(it, None)
            if ref_dir is None:
                print(USAGE, file=sys.stderr)
                return 2
        elif a in ("--no-charts", "--no-reference"):
            opts.add(a)
        elif a.startswith("--"):
            print(f"report.py: unknown option {a}; {USAGE}", file=sys.stderr)
            return 2
        else:
            args.append(a)
    if len(args) != 1 or not Path(args[0]).is_dir():
        print(USAGE, file=sys.stderr)
        return 2
    folder = Path(args[0])
    if "--no-charts" not in opts:
        import charts
        for stem, st in charts.draw_all(folder).items():
            print(f"report: chart {stem}: {st}")
    import export
    for name, st in export.write_all(folder).items():
        print(f"report: csv {name}: {st}")
    reference = None if "--no-reference" in opts else reference_for(folder, ref_dir)
    text, results = build_report(D.Run(folder), reference)
    (folder / "REPORT.md").write_text(text + "\n")
    for cid, r in results.items():
        print(f"report: {cid}: {r['verdict']}")
    print(f"report: wrote {folder / 'REPORT.md'}"
          + (f" (reference column from {ref_dir})" if reference is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
