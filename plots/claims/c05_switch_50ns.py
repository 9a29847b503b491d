"""C5: a coroutine switch costs about 50 ns at least, a plain call about 2 ns."""
import data as D
import figures as F
import verdict as V
from switch_figures import switch_fig

ID = "C5"
SOURCE = "seed 003 (PyCon 2014 talk)"
CLAIM = "A coroutine switch costs about 50 ns at least, a plain call about 2 ns."
BRIEF = 'A coroutine switch costs at least ~50 ns, a call ~2 ns.'
QUOTED = "switch >= ~50 ns, call ~2 ns"
QUOTED_SWITCH_NS = 50.0
QUOTED_CALL_NS = 2.0
CHARTS = ["switch_cost"]

FACTOR = 2  # the fastest switch matches within this factor of the quoted 50 ns
CALL_LOW_NS, CALL_HIGH_NS = 1, 4
SWITCH_LOW_NS, SWITCH_HIGH_NS = QUOTED_SWITCH_NS / FACTOR, QUOTED_SWITCH_NS * FACTOR

# A call's latency: each call takes the previous one's result, so no two calls overlap.
# call/noinline runs independent calls, which the CPU overlaps: its figure is a throughput
# (0.27 ns, under one cycle, on the reference), not what a call costs the code that waits.
LATENCY_ROW, THROUGHPUT_ROW = "call/chain", "call/noinline"

RULE = ("the quoted figures match when the fastest switch lies within a factor "
        f"{FACTOR} of {QUOTED_SWITCH_NS:g} ns ({QUOTED_SWITCH_NS / FACTOR:g}-"
        f"{QUOTED_SWITCH_NS * FACTOR:g} ns) and a call within {CALL_LOW_NS}-"
        f"{CALL_HIGH_NS} ns: both -> holds, one -> holds partly, neither -> does not hold. The "
        f"call is `{LATENCY_ROW}` (dependent calls: a call's latency, as a switch is); a run "
        f"without that row falls back to `{THROUGHPUT_ROW}` (independent calls: a "
        "throughput, which underestimates a call) and says so")


def measure(run):
    rows = D.bench_rows(run.get("switch"))
    sw = {b: D.ns(rows.get(f"switch/{b}")) for b in D.backends(run)}
    sw = {b: t for b, t in sw.items() if t}
    row = LATENCY_ROW if D.ns(rows.get(LATENCY_ROW)) else THROUGHPUT_ROW
    call = D.ns(rows.get(row))
    if not sw or call is None:
        return {"lines": [f"no switch rows: {run.why('switch')}"]}
    fastest = min(sw, key=sw.get)
    lines = ["- ns per switch: " + ", ".join(f"{b} {t:.3g}" for b, t in sw.items()),
             f"- fastest: {fastest} {sw[fastest]:.3g} ns; call ({row}) {call:.3g} ns"]
    if row == LATENCY_ROW and D.ns(rows.get(THROUGHPUT_ROW)):
        lines.append(f"- {THROUGHPUT_ROW} (independent calls, a throughput, not judged): "
                     f"{D.ns(rows[THROUGHPUT_ROW]):.3g} ns")
    else:
        lines.append(f"- this run has no `{LATENCY_ROW}` row (a call's latency): the call half "
                     f"reads `{THROUGHPUT_ROW}`, a throughput of independent calls the CPU "
                     "overlaps, which is lower than what one call costs code that waits for it")
    floors = [f"{b}/{f} {sw[b] / D.ns(rows[f'switch/{f}']):.2f}"
              for b, f in D.FLOOR_OF.items() if b in sw and D.ns(rows.get(f"switch/{f}"))]
    if floors:
        lines.append("- against the reference floor (the six callee-saved registers pushed, an "
                     "indirect jmp; floor-fp also MXCSR and x87 CW; not ABI-complete): "
                     + ", ".join(floors))
    sw_fig, call_fig = switch_fig(run, f"switch/{fastest}"), switch_fig(run, row)
    # The words come from the comparisons the verdict makes, on intervals.
    ok = [V.settled_text(*V.settle(lambda t, f=f, lo=lo, hi=hi: matches(f, lo, hi, t)),
                         "matches", "does not match")
          for f, lo, hi in ((sw_fig, SWITCH_LOW_NS, SWITCH_HIGH_NS),
                            (call_fig, CALL_LOW_NS, CALL_HIGH_NS))]
    lines.append(f"- the switch figure {ok[0]}: the fastest "
                 f"switch is {QUOTED_SWITCH_NS / sw[fastest]:.3g}x "
                 f"{'below' if sw[fastest] < QUOTED_SWITCH_NS else 'above'} "
                 f"{QUOTED_SWITCH_NS:g} ns; the call figure "
                 f"{ok[1]} "
                 f"({call:.3g} ns against {QUOTED_CALL_NS:g} ns, "
                 f"{'latency' if row == LATENCY_ROW else 'throughput'})")
    ic = D.icounts(run.get("icount"))
    figures = F.present(call_fig, switch_fig(run, THROUGHPUT_ROW) if row == LATENCY_ROW else None,
                     *(switch_fig(run, f"switch/{b}") for b in sw),
                     F.exact("instructions per call", ic.get("call/noinline"), "", "icount"),
                     *(F.exact(f"instructions per switch, {b}", ic.get(f"switch/{b}"), "",
                               "icount") for b in sw))
    return {"lines": lines, "figures": figures, "switch": sw_fig, "call": call_fig,
            "numbers": {"fastest switch (ns)": (sw[fastest], QUOTED_SWITCH_NS),
                        f"call, {row} (ns)": (call, QUOTED_CALL_NS)}}


def matches(fig, low, high, t):
    return t(fig, ">=", low) and t(fig, "<=", high)


def judge(m, t):
    if m.get("switch") is None:
        return V.NOTRUN
    ok = [matches(m["switch"], SWITCH_LOW_NS, SWITCH_HIGH_NS, t),
          matches(m["call"], CALL_LOW_NS, CALL_HIGH_NS, t)]
    return V.HOLDS if all(ok) else V.PARTLY if any(ok) else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
