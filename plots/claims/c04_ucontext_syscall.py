"""C4: swapcontext enters the kernel on every switch and is slow; setjmp is fast."""
import data as D
import figures as F
import verdict as V

ID = "C4"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("makecontext/swapcontext enter the kernel (sigprocmask) on every switch and are "
         "slow; setjmp/longjmp are fast but give no new stack.")
QUOTED = "one syscall per swapcontext"
QUOTED_SYSCALLS = 1.0
CHARTS = ["switch_cost"]

TOLERANCE = 0.1  # syscalls per switch around 1 for ucontext, under it for the others
SLOWER_AT = 3  # ucontext/setjmp time per switch

RULE = (f"holds when ucontext makes {QUOTED_SYSCALLS:g} +- {V.num(TOLERANCE)} syscalls per "
        f"switch, the other backends < {V.num(TOLERANCE)}, and a ucontext switch takes >= "
        f"{SLOWER_AT}x a setjmp switch; holds partly when the syscall part holds but the time "
        f"ratio is below {SLOWER_AT}; otherwise does not hold")


def measure(run):
    props = (run.get("props") or {}).get("backends") or {}
    rows = D.bench_rows(run.get("switch"))
    uc = (props.get("ucontext") or {}).get("syscalls_per_switch")
    if uc is None:
        return {"lines": [f"no syscall count for ucontext: {run.why('props')}"]}
    lines = ["- syscalls per switch (perf, raw_syscalls:sys_enter): " + ", ".join(
        f"{b} {V.fmt(p.get('syscalls_per_switch'), '.3f')}" for b, p in props.items())]
    tu, ts = D.ns(rows.get("switch/ucontext")), D.ns(rows.get("switch/setjmp"))
    ratio = tu / ts if tu and ts else None
    lines.append(f"- time per switch: ucontext {V.fmt(tu, '.3g', ' ns')}, setjmp "
                 f"{V.fmt(ts, '.3g', ' ns')} (ratio {V.fmt(ratio)})")
    how = (run.get("props") or {}).get("setjmp_new_stack")
    if how:
        how = how.split(" - ", 1)[-1].rstrip(".")
        lines.append(f"- how setjmp gets a new stack: {how} (switch/switch_setjmp.c)")
    others = [p.get("syscalls_per_switch") or 0 for b, p in props.items() if b != "ucontext"]
    figures = [F.exact(f"syscalls per switch, {b}", p.get("syscalls_per_switch"), "", "props")
               for b, p in props.items()]
    figures += V.figs(V.switch_fig(run, "switch/ucontext"), V.switch_fig(run, "switch/setjmp"),
                      F.once("ucontext/setjmp time per switch", ratio, "", "switch"))
    return {"lines": lines, "figures": figures, "ucontext": uc, "others": others,
            "ratio": ratio, "numbers": {"ucontext syscalls per switch": (uc, QUOTED_SYSCALLS)}}


def judge(m):
    if m.get("ucontext") is None:
        return V.NOTRUN
    sys_ok = abs(m["ucontext"] - QUOTED_SYSCALLS) <= TOLERANCE and \
        all(o < TOLERANCE for o in m["others"])
    if sys_ok and m["ratio"] is not None and m["ratio"] >= SLOWER_AT:
        return V.HOLDS
    return V.PARTLY if sys_ok else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
