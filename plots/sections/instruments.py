"""Independent instruments beside ours: perf bench's pipe ping-pong and getppid loop, and a
minimal switch loop with no benchmark library (harness/experiments/instruments.py, instruments.json), each
set beside the figure of ours that measures the same thing, with both 95% intervals. Where two
intervals are apart the section says they disagree and why the two differ by construction."""
import statistics

import data as D
import figures as F
from formatting import figure_text, figure_with_interval

SOURCE = "instruments"
HANDOFF_M = 2  # one pair on one CPU: the shape of perf's two threads
UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
# Our figures read on a CPU clock while perf reads the wall clock: for these, the same
# measurement's wall time is set beside a disagreement.
CPU_CLOCK = {"handoff", "syscall/getppid"}

# Why each instrument may differ from ours by construction: said when their intervals are
# apart, so a reader knows what the gap measures instead of which one to distrust.
WHY_PIPE = ("perf's one-way hand-off is a pipe write that wakes the peer and a pipe read "
            "that blocks: two pipe system calls, each taking the pipe's lock, copying the "
            "byte through its buffer and walking its wait queue; ours is one FUTEX_WAKE and "
            "one FUTEX_WAIT on a shared word, with no buffer. perf counts wall time (the "
            "loop's gettimeofday)")
WHY = {
    "handoff": WHY_PIPE + ", handoff-scale the process's CPU time (getrusage), so time the "
                          "hypervisor steals counts in perf's figure only.",
    "kernel/thread_pingpong/same_cpu": WHY_PIPE + "; switch-bench's kernel rows count wall "
                                                  "time too, so the gap is the mechanism.",
    "syscall/getppid": "Both time getppid in a loop. perf's figure is wall time over the loop "
                       "(gettimeofday) through glibc's getppid(), ours switch-bench's CPU "
                       "time through syscall(SYS_getppid): time stolen by the hypervisor or "
                       "other tenants counts in perf's only, and a busy shared machine "
                       "widens that gap.",
    "switch": "Both time the same jump (sw_jump_direct) on a CPU clock. The minimal loop runs "
              "a fixed count after a 10,000-round-trip warm-up in a fresh process and reads "
              "the thread's clock twice; switch-bench picks its iteration count itself and "
              "reads the process's clock around batches. A gap means one timing method, not "
              "the switch, is off: loop alignment, the clock, or a warm-up that did not "
              "reach a steady state.",
}


def instrument_fig(entry, name):
    """The instrument's figure: the median of its rounds with their bootstrap interval."""
    return F.timing(name, entry.get("median"), entry.get("unit", ""), SOURCE,
                    entry.get("samples"))


def row_fig(run, row):
    """(figure, None) for switch-bench row `row` of switch.json, over its repetitions, or
    (None, reason)."""
    doc = run.get("switch")
    if not doc:
        return None, run.why("switch")
    samples = D.bench_samples(doc).get(row)
    unit = "ns"
    if samples:
        return F.timing(row, statistics.median(samples), unit, "switch", samples), None
    entry = D.bench_rows(doc).get(row)
    if entry is None:
        return None, f"switch.json has no {row} row"
    return F.timing(row, D.ns(entry), unit, "switch"), None


def row_wall_fig(run, row):
    """switch-bench row `row` on the wall clock (its real_time per repetition), or None: the
    same measurement on perf's clock, to tell a gap of clocks from a gap of mechanisms."""
    samples = []
    for b in (run.get("switch") or {}).get("benchmarks", []):
        if b.get("run_name", b["name"]) == row and b.get("run_type") != "aggregate" \
                and not b.get("error_occurred") and b.get("repetitions", 1) > 1:
            samples.append(b["real_time"] * UNIT_NS[b.get("time_unit", "ns")])
    if not samples:
        return None
    return F.timing(f"{row} (wall)", statistics.median(samples), "ns", "switch", samples)


def handoff_wall_fig(run):
    samples = D.runs_of(run.get("handoff"), lambda r: r.get("wall_ns_per_handoff"),
                        kind="thread", contexts=HANDOFF_M)
    if not samples:
        return None
    return F.timing(f"handoff thread m={HANDOFF_M} (wall)", statistics.median(samples), "ns",
                    "handoff", samples)


def handoff_fig(run):
    doc = run.get("handoff")
    if not doc:
        return None, run.why("handoff")
    samples = D.runs_of(doc, lambda r: r.get("cpu_ns_per_handoff"), kind="thread",
                        contexts=HANDOFF_M)
    if not samples:
        return None, f"handoff.json has no thread level m={HANDOFF_M}"
    return F.timing(f"handoff thread m={HANDOFF_M}", statistics.median(samples), "ns", "handoff",
                    samples), None


def pairs(doc):
    """(instrument name, what of ours, why key, label of ours) for every instrument the run
    holds, in its order: perf's two, then the minimal loop per backend."""
    out = [("perf_sched_pipe", "handoff", "handoff",
            f"C15 hand-off, m={HANDOFF_M} threads (handoff.json, CPU time)"),
           ("perf_sched_pipe", "kernel/thread_pingpong/same_cpu",
            "kernel/thread_pingpong/same_cpu", "switch-bench `kernel/thread_pingpong/same_cpu`"),
           ("perf_syscall_basic", "syscall/getppid", "syscall/getppid",
            "switch-bench `syscall/getppid` (C9)")]
    for name in doc.get("instruments", {}):
        if name.startswith("minimal_loop/"):
            b = name.split("/", 1)[1]
            out.append((name, f"switch/{b}", "switch", f"switch-bench `switch/{b}`"))
    if "minimal_loop" in doc.get("instruments", {}):
        out.append(("minimal_loop", None, "switch", "switch-bench `switch/<backend>`"))
    return out


def apart(a, b):
    """Whether the two figures' intervals (a single sample: +- F.SINGLE_MARGIN) are apart."""
    alo, ahi, _ = F.bounds(a)
    blo, bhi, _ = F.bounds(b)
    return ahi < blo or bhi < alo


def reading(theirs, ours):
    """'disagree', 'agree' or 'no comparison', and the words after it."""
    if ours is None or theirs is None or theirs["value"] is None or ours["value"] is None:
        return "no comparison", ""
    single = [f["name"] for f in (theirs, ours) if f.get("low") is None]
    note = f" ({', '.join(single)} measured once: taken as +-{F.SINGLE_MARGIN:.0%})" \
        if single else ""
    if apart(theirs, ours):
        return "disagree", "intervals apart" + note
    return "agree", "intervals overlap" + note


def clock_note(run, what, theirs):
    """For a figure of ours read on a CPU clock: the same measurement on the wall clock, and
    whether the instrument agrees with that, i.e. whether the clock explains the gap."""
    if what not in CPU_CLOCK:
        return ""
    wall = handoff_wall_fig(run) if what == "handoff" else row_wall_fig(run, what)
    if wall is None:
        return ""
    if apart(theirs, wall):
        return (f" The same measurement of ours on the wall clock, {figure_with_interval(wall)}, "
                "is still apart from perf's: the clock does not explain the whole gap.")
    return (f" The same measurement of ours on the wall clock, {figure_with_interval(wall)}, "
            "overlaps perf's: the two clocks can account for the gap.")


def instruments_section(run):
    out = ["## Independent instruments beside ours", "",
           "Three instruments that share none of our timing code measure what three of our "
           "figures measure, in the same run (harness/experiments/instruments.py): `perf bench sched pipe "
           "-T` pinned to one CPU (its round trip halved: ns per one-way hand-off), `perf "
           "bench syscall basic` (ns per getppid) and `minimal-switch-loop` (ns per switch "
           "of each backend, a plain loop on the thread's CPU clock, no benchmark library). "
           "Each ran once a round in rotated order; its figure is the median of the rounds "
           "with the 95% bootstrap interval, ours the median of its repetitions or rounds "
           "with theirs. Where the intervals are apart the two disagree, and the reason they "
           "differ by construction is given below the table.", ""]
    doc = run.get(SOURCE)
    if not doc:
        return out + [f"not run: {run.why(SOURCE)}", ""]
    insts = doc.get("instruments") or {}
    out += ["| instrument | its figure | ours | our figure | instrument / ours | reading |",
            "|---|---|---|---|---|---|"]
    notes = []
    for name, what, why_key, label in pairs(doc):
        entry = insts.get(name) or {"status": "not run", "reason": "not in instruments.json"}
        if entry.get("status") != "ok" or not entry.get("samples"):
            out.append(f"| `{name}` | not run: {entry.get('reason', entry.get('status'))} | "
                       f"{label} | | | no comparison |")
            continue
        theirs = instrument_fig(entry, name)
        ours, why_not = handoff_fig(run) if what == "handoff" else row_fig(run, what)
        ours_cell = figure_with_interval(ours) if ours else f"not run: {why_not}"
        ratio = f"{theirs['value'] / ours['value']:.3g}" if ours and ours["value"] else ""
        verdict, words = reading(theirs, ours)
        out.append(f"| `{name}` | {figure_with_interval(theirs)} | {label} | {ours_cell} | "
                   f"{ratio} | {verdict}{': ' + words if words else ''} |")
        if verdict == "disagree":
            notes.append(f"- **`{name}` against {label}: disagree** ({figure_text(theirs)} against "
                         f"{figure_text(ours)}, {ratio}x). {WHY[why_key]}"
                         + clock_note(run, what, theirs))
    out.append("")
    if notes:
        out += ["Where they disagree, and why:", ""] + notes + [""]
    else:
        out += ["No instrument disagrees with ours beyond both intervals.", ""]
    return out
