"""C4: swapcontext enters the kernel on every switch and is slow; setjmp is fast."""
import data as D
import figures as F
import verdict as V
from formatting import threshold_text, value_text
from switch_figures import rows_ratio, switch_fig

ID = "C4"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("makecontext/swapcontext enter the kernel (sigprocmask) on every switch and are "
         "slow; setjmp/longjmp are fast but give no new stack.")
BRIEF = 'swapcontext enters the kernel every switch; setjmp is fast, stackless.'
QUOTED = "one syscall per swapcontext"
QUOTED_SYSCALLS = 1.0
CHARTS = ["switch_cost"]

TOLERANCE = 0.1  # syscalls per switch around 1 for ucontext, under it for the others
SLOWER_AT = 3  # ucontext/setjmp time per switch
# Rounded so that 1.0 + 0.1 is the 1.1 the rule means, not 1.1000000000000001.
SYSCALLS_LOW = round(QUOTED_SYSCALLS - TOLERANCE, 9)
SYSCALLS_HIGH = round(QUOTED_SYSCALLS + TOLERANCE, 9)

RULE = (f"holds when ucontext makes {QUOTED_SYSCALLS:g} +- {threshold_text(TOLERANCE)} syscalls "
        "per "
        f"switch, the other backends < {threshold_text(TOLERANCE)}, and a ucontext switch takes >= "
        f"{SLOWER_AT}x a setjmp switch; holds partly when the syscall part holds but the time "
        f"ratio is below {SLOWER_AT}; otherwise does not hold")


def measure(run):
    props = (run.get("props") or {}).get("backends") or {}
    rows = D.bench_rows(run.get("switch"))
    uc = (props.get("ucontext") or {}).get("syscalls_per_switch")
    if uc is None:
        return {"lines": [f"no syscall count for ucontext: {run.why('props')}"]}
    lines = ["- syscalls per switch (perf, raw_syscalls:sys_enter): " + ", ".join(
        f"{b} {value_text(p.get('syscalls_per_switch'), '.3f')}" for b, p in props.items())]
    tu, ts = D.ns(rows.get("switch/ucontext")), D.ns(rows.get("switch/setjmp"))
    ratio = rows_ratio(run, "switch/ucontext", "switch/setjmp",
                         "ucontext/setjmp time per switch")
    lines.append(f"- time per switch: ucontext {value_text(tu, '.3g', ' ns')}, setjmp "
                 f"{value_text(ts, '.3g', ' ns')} (ratio, median of paired repetitions, "
                 f"{value_text(ratio and ratio['value'])})")
    how = (run.get("props") or {}).get("setjmp_new_stack")
    if how:
        how = how.split(" - ", 1)[-1].rstrip(".")
        lines.append(f"- how setjmp gets a new stack: {how} (switch/switch_setjmp.c)")
    others = [p.get("syscalls_per_switch") or 0 for b, p in props.items() if b != "ucontext"]
    figures = [F.exact(f"syscalls per switch, {b}", p.get("syscalls_per_switch"), "", "props")
               for b, p in props.items()]
    figures += F.present(switch_fig(run, "switch/ucontext"), switch_fig(run, "switch/setjmp"),
                      ratio)
    return {"lines": lines, "figures": figures,
            "ucontext": F.exact("syscalls per switch, ucontext", uc, "", "props"),
            "others": F.exact("syscalls per switch, the most of the other backends",
                              max(others, default=0.0), "", "props"),
            "ratio": ratio, "numbers": {"ucontext syscalls per switch": (uc, QUOTED_SYSCALLS)}}


def judge(m, t):
    uc = m.get("ucontext")
    if uc is None:
        return V.NOTRUN
    sys_ok = t(uc, ">=", SYSCALLS_LOW) and t(uc, "<=", SYSCALLS_HIGH) and \
        t(m["others"], "<", TOLERANCE)
    if sys_ok and t(m["ratio"], ">=", SLOWER_AT):
        return V.HOLDS
    return V.PARTLY if sys_ok else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
