"""regress_gate.py - the decisions of the switch-cost regression gate (harness/regress.py).

A measurement (what regress.py writes) has two parts, checked by what they depend on:

  counts  deterministic and portable: callgrind instructions per switch, create and hop,
          switches per hop, system calls per switch. Gated on every machine against
          results/baseline/counts.json.
  timing  CPU time per switch and hop, repeated in several separate processes. A time, and a
          ratio of two instruction sequences, are properties of the microarchitecture, so
          timings are gated only against a baseline recorded on the same CPU model
          (results/baseline/timing/<cpu key>.json); with none, the timing part says
          "not gated" and the gate decides on the counts alone.

Timing figures are each row's CPU time over the run's own reference, the geometric mean of
the two floor rows (harness/bench/floor_*.S: a bare register save and restore, code no
backend change touches). Dividing by it cancels what moves every row at once (clock, a
noisy neighbour on the host). One sample of a figure per process (the median of that
process's repetitions), so the spread includes what differs between processes (stack and
heap placement), which repetitions inside one process never show.

A figure fails when, against its baseline samples B, the current samples C
  - have a median above median(B) * (1 + tolerance), where the tolerance is the baseline's
    own spread: the larger of 3 robust sigmas of B and B's largest excursion above its
    median, but never below MIN_TIMING_TOLERANCE (see there), and
  - are larger than B by a one-sided Mann-Whitney U test at ALPHA.
Both must hold: the first keeps differences inside the noise from failing, the second keeps
one odd process from failing the gate.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stats  # noqa: E402

# Instruction counts are exact for one binary, but glibc's string functions are chosen per
# CPU (ifunc), and the create rows reach them: the AMD EPYC and Intel Xeon VMs agreed within
# this on every row.
ICOUNT_RISE = 0.03
SWITCHES_PER_HOP = {"star": 2.0, "ring": 1.0}
SWITCHES_PER_HOP_SLACK = 0.1
# System calls per switch are whole numbers per switch (0 or 1 today); perf's start-up noise
# cancels in the two-length difference.
SYSCALLS_SLACK = 0.05

REFERENCE_ROWS = ("switch/floor", "switch/floor-fp")
# A spread measured in one sitting cannot see what moves between VMs of the same CPU model
# (the host, its other tenants, the microcode): the Intel Xeon VMs of 2026-12-01 moved single
# figures by up to 6.5% (results/baseline/NOTES.md). The tolerance never goes below that.
MIN_TIMING_TOLERANCE = 0.10
SPREAD_SIGMAS = 3.0
ALPHA = 0.05


def fmt(x):
    return "%.3f" % x if abs(x) < 10 else "%.1f" % x


def fail_line(check, base, now, limit):
    change = "n/a" if not base else "%+.1f%%" % (100.0 * (now - base) / base)
    return "FAIL %s: baseline %s, now %s, change %s (%s)" % (
        check, "n/a" if base is None else fmt(base), fmt(now), change, limit)


# ---- counts: every machine ------------------------------------------------------------------

def check_counts(base, cur):
    """(failures, notes, lines) for the deterministic part; base and cur are `counts` blocks."""
    failures, notes, lines = [], [], []
    b_ic, c_ic = base.get("instructions", {}), cur.get("instructions", {})
    for row, b in sorted(b_ic.items()):
        n = c_ic.get(row)
        if n is None:
            failures.append("FAIL icount/%s: baseline %s, now missing, change n/a (row not "
                            "measured)" % (row, fmt(b)))
            continue
        ok = n <= b * (1 + ICOUNT_RISE)
        lines.append((ok, "icount/" + row, n, "baseline %s, may rise 3%%" % fmt(b)))
        if not ok:
            failures.append(fail_line("icount/" + row, b, n, "instructions may rise at most 3%"))
        elif n < b * (1 - ICOUNT_RISE):
            notes.append("note: icount/%s fell from %s to %s instructions; --update records it"
                         % (row, fmt(b), fmt(n)))
    for row in sorted(set(c_ic) - set(b_ic)):
        notes.append("note: icount/%s is new (not in the baseline); --update records it" % row)

    for row, sph in sorted(cur.get("switches_per_hop", {}).items()):
        want = SWITCHES_PER_HOP[row.split("/")[1]]
        ok = abs(sph - want) <= SWITCHES_PER_HOP_SLACK
        lines.append((ok, row + " switches_per_hop", sph, "must be %.0f" % want))
        if not ok:
            failures.append(fail_line(row + " switches_per_hop", want, sph,
                                      "must be %.0f +- %.1f" % (want, SWITCHES_PER_HOP_SLACK)))

    b_sc, c_sc = base.get("syscalls_per_switch", {}), cur.get("syscalls_per_switch", {})
    if cur.get("syscalls_not_run"):
        notes.append("note: system calls per switch not gated: %s" % cur["syscalls_not_run"])
    else:
        for backend, b in sorted(b_sc.items()):
            label = "syscalls/switch/" + backend
            n = c_sc.get(backend)
            if n is None:
                failures.append("FAIL %s: baseline %s, now missing, change n/a (backend not "
                                "measured)" % (label, fmt(b)))
                continue
            ok = abs(n - b) <= SYSCALLS_SLACK
            lines.append((ok, label, n, "baseline %s" % fmt(b)))
            if not ok:
                failures.append(fail_line(label, b, n, "system calls per switch must stay "
                                          "within %.2f" % SYSCALLS_SLACK))
    return failures, notes, lines


# ---- timing: same CPU model only ------------------------------------------------------------

def reference_times(samples, invocation):
    """The reference of one process: geometric mean of its floor rows' medians, or None."""
    meds = [stats.median(samples[r][invocation]) for r in REFERENCE_ROWS if r in samples]
    if len(meds) != len(REFERENCE_ROWS):
        return None
    product = 1.0
    for m in meds:
        product *= m
    return product ** (1.0 / len(meds))


def figures(timing):
    """{row: [one figure per process]}: the row's median CPU time over the reference."""
    samples = timing["samples"]
    if not samples:
        return {}
    count = min(len(v) for v in samples.values())
    refs = [reference_times(samples, i) for i in range(count)]
    if any(r is None for r in refs):
        return {}
    return {row: [stats.median(per[i]) / refs[i] for i in range(count)]
            for row, per in samples.items() if row not in REFERENCE_ROWS}


def tolerance(base_samples):
    m = stats.median(base_samples)
    excursion = (max(base_samples) - m) / m
    return max(SPREAD_SIGMAS * stats.robust_spread(base_samples), excursion,
               MIN_TIMING_TOLERANCE)


def check_timing(base_timing, cur_timing):
    """(failures, notes, lines) of the timing figures against a same-model baseline."""
    failures, notes, lines = [], [], []
    base, cur = figures(base_timing), figures(cur_timing)
    if not base or not cur:
        notes.append("note: timing not gated: the floor rows are missing from the %s"
                     % ("baseline" if not base else "measurement"))
        return failures, notes, lines
    for row in sorted(base):
        if row not in cur:
            failures.append("FAIL %s: baseline %s, now missing, change n/a (row not measured)"
                            % (row, fmt(stats.median(base[row]))))
            continue
        b, c = base[row], cur[row]
        tol = tolerance(b)
        limit = stats.median(b) * (1 + tol)
        p = stats.mann_whitney_greater(c, b)
        slower = stats.median(c) > limit and p < ALPHA
        text = "baseline %s, limit %s (+%.1f%%), U-test p=%.3f" % (
            fmt(stats.median(b)), fmt(limit), 100 * tol, p)
        lines.append((not slower, row + " / floor", stats.median(c), text))
        if slower:
            failures.append(fail_line(row + " / floor", stats.median(b), stats.median(c),
                                      "limit %s from the baseline's spread, +%.1f%%; U-test "
                                      "p=%.3f" % (fmt(limit), 100 * tol, p)))
        elif stats.median(c) < stats.median(b) * (1 - tol) and \
                stats.mann_whitney_greater(b, c) < ALPHA:
            notes.append("note: %s / floor fell from %s to %s beyond noise; --update records it"
                         % (row, fmt(stats.median(b)), fmt(stats.median(c))))
    return failures, notes, lines


def timing_baseline_path(baseline_dir, cpu):
    return Path(baseline_dir) / "timing" / ("%s.json" % cpu["key"])


def gate(counts_base, timing_base, cur):
    """Everything regress.py prints and decides: (failures, notes, lines).

    timing_base is the baseline of cur's CPU model, or None when there is none."""
    failures, notes, lines = check_counts(counts_base.get("counts", {}), cur["counts"])
    if timing_base is None:
        notes.append("not gated: no baseline for %s (record one with ./run.sh regress --update)"
                     % cur["cpu"]["model"])
    elif timing_base["cpu"]["key"] != cur["cpu"]["key"]:
        raise ValueError("timing baseline is for %s, the measurement for %s"
                         % (timing_base["cpu"]["key"], cur["cpu"]["key"]))
    else:
        f, n, ln = check_timing(timing_base["timing"], cur["timing"])
        failures += f
        notes += n
        lines += ln
    return failures, notes, lines
