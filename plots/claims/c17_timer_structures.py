"""C17: timeouts in a time wheel (libco) or in red-black trees keyed by deadline (NtyCo): the
wheel arms and cancels in O(1) at millisecond precision, a tree pays O(log n) and stays exact;
a server with a timeout on every read arms and cancels one timer per request."""
import math
import re

import data as D
import figures as F
import verdict as V
from formatting import figure_with_interval

ID = "C17"
SOURCE = "seeds 001 (NtyCo), 004 (libco)"
CLAIM = ("libco keeps timeouts in a time wheel (60,000 one-millisecond slots, longer timeouts "
         "parked in the last slot and re-added), NtyCo in red-black trees keyed by deadline (a "
         "sleep tree and a wait tree, after nginx). The wheel arms and cancels in O(1) at "
         "millisecond precision; a tree pays O(log n) per timer but stays exact. A server that "
         "puts a timeout on every read arms and cancels one timer per request.")
BRIEF = 'A timer wheel arms in O(1) at ms precision; a tree, O(log n) exactly.'
QUOTED = "O(1) and millisecond precision (wheel) against O(log n) and exact (tree); no figure"
CHARTS = ["timers_cpu", "timers_lateness", "timers_idle"]

WHEEL, TREE, NONE = "wheel", "rbtree", "none"  # libco's, NtyCo's, and no timeouts at all
# Precision: a sleep's median lateness beyond the kernel's own (cyclictest's median, the floor).
# The wheel rounds up to its 1 ms slots, so a 1 ms sleep comes late by a good share of a slot;
# an exact structure stays within the engine's and the scheduler's own cost of the floor.
ROUNDED_US = 300.0  # the wheel's median lateness beyond the floor, at least (us)
EXACT_US = 200.0  # the tree's median lateness beyond the floor, at most (us)
# Cost where a server pays it: the echo server's CPU per request with a read timeout on every
# read, the wheel over the tree, paired by round, at the most connections measured from
# SERVER_AT up (one timer pending per connection: below a thousand a tree is a few levels deep
# and the difference cannot show; smaller levels are shown, not judged).
SERVER_AT = 1000
CHEAPER = 0.97  # wheel/tree CPU per request at most: the wheel's O(1) shows in a server
# Cost in isolation: callgrind's instructions per operation (icount.json's rows
# `timers/<workload>/<op>/<structure>/pending:N`, exact) of the mostly-cancelled workload, as a
# slope: instructions added per doubling of the pending timers, from the fewest to the most. A
# tree's arm descends one more level per doubling, each level at least a compare and a branch;
# an O(1) arm or cancel adds nothing. (Cancel and expire of a node a tree already holds search
# nothing, so its O(log n) is the arm's.) Times per operation (switch-bench's rows) grow with
# cache misses for every structure alike, so they are shown beside, not judged.
WHEEL_OPS, TREE_OPS = ("arm", "cancel"), ("arm",)
FLAT = 1.0  # instructions per doubling, at most: O(1)
GROWS = 2.0  # instructions per doubling, at least: O(log n)

RULE = ("precision: the median lateness of 1 ms sleeps beyond cyclictest's median on the same "
        f"CPU (the kernel's floor) is at least {ROUNDED_US:g} us for libco's wheel (it rounds "
        f"to 1 ms slots) and at most {EXACT_US:g} us for NtyCo's red-black tree (exact); "
        "cost in isolation: callgrind's instructions per operation of the mostly-cancelled "
        "workload, added per doubling of the pending timers (fewest to most), at most "
        f"{FLAT:g} for the wheel's arm and cancel (O(1)) and at least {GROWS:g} for the tree's "
        "arm (O(log n): a compare and a branch per level; a tree's cancel and expire of a node "
        "it holds search nothing); cost where a server pays it: the echo server's CPU per "
        "request with a read timeout on every read, the wheel over the tree, paired by round "
        f"at the most connections measured from {SERVER_AT:,} up, at most {CHEAPER}. Holds "
        "when precision and every cost measured hold; holds partly when precision or a cost "
        "holds; does not hold when none does; not run without the lateness figures "
        "(cyclictest's included) or without any cost figure")

# Google Benchmark appends a fixed iteration count (`/iterations:N`) and the time it reports to a
# row timed by hand (`/manual_time`).
ROW = re.compile(r"^timers/([^/]+)/([^/]+)/([^/]+)/pending:(\d+)(?:/iterations:\d+)?"
                 r"(?:/manual_time|/real_time)?$")


def lateness_fig(doc, variant, q="p50"):
    runs = [r for r in ((doc or {}).get("lateness") or {}).get("runs", [])
            if r.get("variant") == variant and r.get("status") == "ok"]
    if not runs:
        return None
    return F.repeated(f"sleep lateness {q}, {variant}", [r.get(q) for r in runs], "us", "timers")


def cpu_levels(doc):
    return sorted({r["conns"] for r in ((doc or {}).get("cpu") or {}).get("runs", [])})


def cpu_ratio(doc, conns, num, den):
    runs = [r for r in ((doc or {}).get("cpu") or {}).get("runs", [])
            if r.get("status") in ("ok", "client-bound", "contended")]
    p = D.paired(runs, "server_cpu_us_per_request", {"variant": num}, {"variant": den},
                 conns=conns, kind="tput")
    if not p["per_round"]:
        return None
    return F.paired(f"{conns} connections: CPU per request with a read timeout, {num}/{den}",
                    p["per_round"], "x", "timers")


def _real_ns(entry):
    """ns of a row timed by hand: its real time is the phase it reports (its CPU time is the
    whole loop's, set-up included), whatever data.ns takes for other rows."""
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[entry.get("time_unit", "ns")]
    return entry["real_time"] * scale


def bench_ratio(doc, num_row, den_row, name):
    """num/den of two switch-bench rows by real time, paired by repetition when the file kept
    them (switch-bench interleaves repetitions), else the medians' ratio measured once."""
    reps = {}
    for b in (doc or {}).get("benchmarks", []):
        if b.get("run_type") != "aggregate" and not b.get("error_occurred") \
                and b.get("repetitions", 1) > 1:
            reps.setdefault(b.get("run_name", b["name"]), {})[b.get("repetition_index", 0)] = \
                _real_ns(b)
    a, b = reps.get(num_row, {}), reps.get(den_row, {})
    per_rep = [a[i] / b[i] for i in sorted(a) if i in b and a[i] and b[i]]
    if per_rep:
        return F.paired(name, per_rep, "x", "switch")
    rows = D.bench_rows(doc)
    x, y = _real_ns(rows[num_row]), _real_ns(rows[den_row])
    return F.timing(name, x / y if x and y else None, "x", "switch")


def timer_rows(names):
    """{(workload, op, structure): {pending: row name}} of the rows among names."""
    rows = {}
    for name in names:
        m = ROW.match(name)
        if m:
            rows.setdefault((m[1], m[2], m[3]), {})[int(m[4])] = name
    return rows


def judged_rows(rows):
    """The rows the rule reads: the mostly-cancelled workload's, the wheel's arm and cancel and
    the tree's arm, each measured at two sizes at least."""
    loads = sorted({w for w, _, _ in rows})
    load = next((w for w in loads if "cancel" in w), loads[0] if loads else None)
    return {(op, s): by_n for (w, op, s), by_n in sorted(rows.items())
            if w == load and len(by_n) >= 2
            and op in (WHEEL_OPS if s == WHEEL else TREE_OPS if s == TREE else ())}


def op_growth(run):
    """{(op, structure): figure}: instructions added per doubling of the pending timers, from
    the fewest to the most (icount.json's timers/ rows: exact); {} without them."""
    counted = {k: v for k, v in D.icounts(run.get("icount")).items() if ROW.match(k)}
    out = {}
    for (op, s), by_n in judged_rows(timer_rows(counted)).items():
        lo, hi = min(by_n), max(by_n)
        slope = (counted[by_n[hi]] - counted[by_n[lo]]) / math.log2(hi / lo)
        out[(op, s)] = F.exact(f"{op}, {s}: instructions added per doubling of the pending "
                               f"timers ({lo:,} to {hi:,})", slope, "instructions", "icount")
    return out


def op_times(run):
    """Shown beside the counts: switch-bench's ns per operation at the most pending timers over
    the fewest, paired by repetition, for the same rows."""
    doc = run.get("switch")
    return {(op, s): bench_ratio(doc, by_n[max(by_n)], by_n[min(by_n)],
                                 f"{op}, {s}: ns at {max(by_n):,} pending over {min(by_n):,}")
            for (op, s), by_n in judged_rows(timer_rows(D.bench_rows(doc))).items()}


def measure(run):
    doc = run.get("timers")
    if not doc:
        return {"lines": [f"no timers experiment: {run.why('timers')}"]}
    lines, figures = [], []
    cfg = doc.get("config", {})
    lines.append(f"- structures {', '.join(doc.get('structures', []))}; load average "
                 f"{doc.get('loadavg_start')} at start, {doc.get('loadavg_end')} at end")
    # Precision.
    floor = lateness_fig(doc, "cyclictest")
    late = {s: lateness_fig(doc, s) for s in doc.get("structures", [])}
    lt = doc.get("lateness") or {}
    if lt.get("runs"):
        lines.append(f"- sleep lateness: {lt.get('sleeps')} sleeps of {lt.get('sleep_us')} us "
                     f"with {lt.get('pending')} other timers pending, per structure, beside "
                     "cyclictest (same CPU, interval and count)")
        for s, f in list(late.items()) + [("cyclictest", floor)]:
            if f:
                figures.append(f)
                lines.append(f"  - {s}: p50 {figure_with_interval(f)}")
        why = next((r["why"] for r in lt["runs"]
                    if r.get("variant") == "cyclictest" and r.get("why")), "no figure")
        if not floor:
            lines.append(f"  - cyclictest: not run: {why}")
    # Cost in a server.
    levels = cpu_levels(doc)
    for n in levels:
        for s in doc.get("structures", []):
            f = cpu_ratio(doc, n, s, NONE)
            if f:
                figures.append(f)
                lines.append(f"- {f['name']}: {figure_with_interval(f)}")
    for n, why in ((doc.get("cpu") or {}).get("skipped") or {}).items():
        lines.append(f"- {n} connections: not run: {why}")
    pair = None
    for n in reversed([n for n in levels if n >= SERVER_AT]):
        pair = cpu_ratio(doc, n, WHEEL, TREE)
        if pair:
            figures.append(pair)
            lines.append(f"- {pair['name']}: {figure_with_interval(pair)} (deciding)")
            break
    if not pair:
        lines.append(f"- the server's cost is judged from {SERVER_AT:,} connections up: not "
                     "measured in this run" + (f" (levels {', '.join(map(str, levels))})"
                                               if levels else ""))
    aa = F.noise_floor(doc.get("cpu"), "timers")
    if aa:
        figures.append(aa)
        lines.append(f"- {aa['name']}: {figure_with_interval(aa)}")
    # Cost in isolation.
    ops = op_growth(run)
    figures += list(ops.values())
    lines += [f"- {f['name']}: {figure_with_interval(f)}" for f in ops.values()]
    if not ops:
        lines.append("- instructions per arm, cancel and expire in isolation: not in this run "
                     "(icount's `timers/` rows)")
    for f in op_times(run).values():
        lines.append(f"- {f['name']}: {figure_with_interval(f)} (shown: cache misses grow it "
                     "for every structure)")
    # Idle wake-ups: shown, not judged (a fixed tick is a loop's choice, not a structure's).
    for e in ((doc.get("idle") or {}).get("summary") or []):
        w = e.get("wakeups_per_s") or {}
        if w.get("median") is not None:
            lines.append(f"- idle, {e['variant']}: {w['median']:.1f} wake-ups/s "
                         f"({(doc.get('idle') or {}).get('conns')} connections open)")
    return {"lines": lines, "figures": figures, "floor": floor, "wheel": late.get(WHEEL),
            "tree": late.get(TREE), "pair": pair, "ops": ops, "config": cfg,
            "numbers": {"wheel/tree CPU per request": (pair["value"] if pair else None, None)}}


def judge(m, t):
    floor, wheel, tree = m.get("floor"), m.get("wheel"), m.get("tree")
    ops = m.get("ops") or {}
    if not (floor and wheel and tree) or not (m.get("pair") or ops):
        return V.NOTRUN
    base = floor["value"]
    precise = t(wheel, ">=", base + ROUNDED_US) and t(tree, "<=", base + EXACT_US)
    costs = [t(m["pair"], "<=", CHEAPER)] if m.get("pair") else []
    if ops:
        costs.append(all(t(f, "<=", FLAT) for (op, s), f in ops.items() if s == WHEEL) and
                     all(t(f, ">=", GROWS) for (op, s), f in ops.items() if s == TREE))
    if precise and all(costs):
        return V.HOLDS
    if precise or any(costs):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
