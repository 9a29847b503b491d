"""C9: a trivial syscall costs about 10 cycles; virtual machines make it dearer."""
import math

import data as D
import figures as F
import verdict as V

ID = "C9"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = ("A trivial syscall is very cheap on modern systems (order of 10 cycles); virtual "
         "machines make it dearer.")
QUOTED = "about 10 cycles"
QUOTED_CYCLES = 10.0
CHARTS = ["switch_cost"]

HOLDS_CYCLES = 100  # the order of 10
PARTLY_CYCLES_VM = 1000

RULE = (f"holds when a trivial syscall costs <= {HOLDS_CYCLES} cycles (the order of "
        f"{QUOTED_CYCLES:g}); holds partly when it costs <= {PARTLY_CYCLES_VM} cycles on a "
        "virtual machine (the claim itself expects a VM to be dearer); otherwise does not hold")


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
    lines = [f"- getppid: {t:.3g} ns = {V.fmt(cycles, '.0f')} cycles at {V.fmt(mhz, '.0f')} MHz "
             f"(virtual machine: {'yes' if virt else 'no' if virt is not None else 'unknown'}; "
             f"Spectre v2: {ctx.get('spectre_v2', 'unknown')})"]
    if fastest and fastest != math.inf:
        lines.append(f"- that is {t / fastest:.0f}x the fastest user-space switch "
                     f"({fastest:.3g} ns)")
    if cycles is not None and cycles > HOLDS_CYCLES:
        lines.append(f"- the {QUOTED_CYCLES:g}-cycle figure does not hold here ({cycles:.0f} "
                     "cycles); how much of that the virtual machine adds cannot be separated "
                     "on one machine")
    # The clock is one reported figure; the cycles' noise is the repetitions' noise.
    reps = D.bench_samples(sw).get("syscall/getppid") or []
    cyc = F.timing("getppid (cycles)", cycles, "cycles", "switch",
                   samples=[x * mhz / 1e3 for x in reps] if mhz else None)
    figures = V.figs(V.switch_fig(run, "syscall/getppid"), cyc,
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
