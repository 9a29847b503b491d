"""C9: a trivial syscall costs about 10 cycles; virtual machines make it dearer."""
import math

import data as D
import figures as F
import verdict as V
from formatting import figure_with_interval, value_text
from switch_figures import switch_fig

ID = "C9"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("A trivial syscall is very cheap on modern systems (order of 10 cycles); virtual "
         "machines make it dearer.")
BRIEF = 'A trivial syscall costs about 10 cycles; VMs make it dearer.'
QUOTED = "about 10 cycles"
QUOTED_CYCLES = 10.0
CHARTS = ["switch_cost"]

HOLDS_CYCLES = 100  # the order of 10
PARTLY_CYCLES_VM = 1000

RULE = ("two parts: (1) a trivial syscall costs the order of "
        f"{QUOTED_CYCLES:g} cycles, read as <= {HOLDS_CYCLES} cycles; (2) a virtual machine "
        "makes it dearer, which one machine cannot show, so on a virtual machine the rule only "
        f"asks that the cost stay within what a dearer VM explains, <= {PARTLY_CYCLES_VM} "
        "cycles. Holds when (1) holds; holds partly when (1) does not but (2) is consistent "
        "(the claim's figure fails, its excuse for a VM covers the gap); otherwise does not "
        "hold")


def measure(run):
    sw = run.get("switch")
    rows = D.bench_rows(sw)
    t = D.ns(rows.get("syscall/getppid"))
    if t is None:
        return {"lines": [f"no syscall row: {run.why('switch')}"]}
    ctx = (sw or {}).get("context", {})
    mhz = ctx.get("mhz_per_cpu")
    cycles = t * mhz / 1000.0 if mhz else None
    virt = (run.get("props") or {}).get("virtualized")
    fastest = min((D.ns(rows.get(f"switch/{b}")) or math.inf) for b in D.backends(run)) \
        if D.backends(run) else None
    lines = [f"- getppid: {t:.3g} ns = {value_text(cycles, '.0f')} cycles at "
             f"{value_text(mhz, '.0f')} MHz "
             f"(virtual machine: {'yes' if virt else 'no' if virt is not None else 'unknown'}; "
             f"Spectre v2: {ctx.get('spectre_v2', 'unknown')})"]
    if fastest and fastest != math.inf:
        lines.append(f"- that is {t / fastest:.0f}x the fastest user-space switch "
                     f"({fastest:.3g} ns)")
    # The clock is one reported figure; the cycles' noise is the repetitions' noise.
    reps = D.bench_samples(sw).get("syscall/getppid") or []
    cyc = F.timing("getppid (cycles)", cycles, "cycles", "switch",
                   samples=[x * mhz / 1e3 for x in reps] if mhz else None)
    if cycles is not None:
        # Each part's words from the comparison the verdict makes, on the interval.
        one = V.settled_text(*V.settle(lambda t: t(cyc, "<=", HOLDS_CYCLES)), "holds",
                             "does not hold")
        lines.append(f"- part 1, the order of {QUOTED_CYCLES:g} cycles (<= {HOLDS_CYCLES}): "
                     f"{one}, at {figure_with_interval(cyc)}")
        two = "no virtual machine here, so not tested" if not virt else V.settled_text(
            *V.settle(lambda t: t(cyc, "<=", PARTLY_CYCLES_VM)),
            f"consistent: within the {PARTLY_CYCLES_VM} cycles a dearer VM explains",
            f"not consistent: more than the {PARTLY_CYCLES_VM} cycles a dearer VM explains")
        lines.append(f"- part 2, a virtual machine makes it dearer: {two}; how much the virtual "
                     "machine adds cannot be separated on one machine")
    figures = F.present(switch_fig(run, "syscall/getppid"), cyc,
                     F.once("CPU clock (reported)", mhz, "MHz", "switch"))
    return {"lines": lines, "figures": figures, "cycles": cyc, "virtual": virt,
            "numbers": {"syscall (cycles)": (cycles, QUOTED_CYCLES)}}


def judge(m, t):
    cycles = m.get("cycles")
    if cycles is None or cycles["value"] is None:
        return V.NOTRUN
    if t(cycles, "<=", HOLDS_CYCLES):
        return V.HOLDS
    if m["virtual"] and t(cycles, "<=", PARTLY_CYCLES_VM):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
