"""regress_gate.py - the decisions of the switch-cost regression gate (harness/gate/regress.py).

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

  paired  the same rows of the head against a base commit's build, measured in alternating
          processes of the same sitting (harness/gate/regress_paired.py): no stored baseline,
          so on any CPU. Each row's median CPU time per process, as measured (no reference:
          both builds share the sitting). A row fails when its median is above the base's
          by more than PAIRED_FLOOR at every look (PAIRED_LOOKS) up to one where Holm's
          procedure over all rows rejects it on the one-sided U test of the head's times
          against the base's (family-wise PAIRED_ALPHA).

Every figure is one line (Verdicts): ok, its value, its limit and why it passed, or its FAIL
line; then the notes (what was not gated) and a summary line.
"""
from pathlib import Path

from lib import stats

# Instruction counts are exact for one binary, but glibc's string functions are chosen per
# CPU (ifunc), and the create rows reach them: the AMD EPYC and Intel Xeon VMs agreed within
# this on every row.
ICOUNT_RISE = 0.03
SWITCHES_PER_HOP = {"star": 2.0, "ring": 1.0}
SWITCHES_PER_HOP_SLACK = 0.1
# System calls per switch are whole numbers per switch (0 or 1 today); perf's start-up noise
# cancels in the two-length difference.
SYSCALLS_SLACK = 0.05
# Cache misses per copy-stack resume are whole lines per resume under cachegrind, whose model
# is the same on every machine; the two-length difference leaves a few hundredths at most.
MISSES_SLACK = 0.25
# A request's own cache lines on the IO path (gate/iopath.py) are whole lines per request too,
# deterministic to 0.1 on one machine; glibc's string functions are chosen per CPU (ifunc) and
# may lay out their stack differently, so a rise of half a line is allowed: a line more per
# request is twice that.
LINES_SLACK = 0.5

REFERENCE_ROWS = ("switch/floor", "switch/floor-fp")
# A spread measured in one sitting cannot see what moves between VMs of the same CPU model
# (the host, its other tenants, the microcode): VMs of one model have moved single figures by
# several percent between sittings (results/baseline/NOTES.md). The tolerance never goes
# below that.
MIN_TIMING_TOLERANCE = 0.10
SPREAD_SIGMAS = 3.0
ALPHA = 0.05
# The paired gate compares builds measured in alternating processes of one sitting, so the
# moves between VMs that MIN_TIMING_TOLERANCE allows for do not arise: its floor is the
# smallest slowdown worth failing a commit for, kept under the 10% that issue 36 asks the gate
# to catch in at least 18 runs of 20 (results/baseline/NOTES.md has the measured rates). A
# row fails only with its median beyond the floor, so a shift too small to matter never fails
# however many processes agree on it.
PAIRED_FLOOR = 0.05
# The false-alarm rate of the whole gate, not of one row: Holm's procedure over every paired
# row of a run, on the exact one-sided U test of the head's processes against the base's.
# Right after the test suite, where processes of one build scatter by 10-40%, the floor stops
# mattering, and a level per row let one row of 21 fail CI on identical code (a no-FPU star
# hop, +17.7%, its 5 processes all above the base's). 0.01 rather than 0.05: the gate's
# false alarms may come close to its level (3 and 6 in 100 synthetic A/A pairings at 0.05),
# and at 1 in 20 a run of 20 A/A pairings shows 2 or more one time in four, which issue 36
# asks it not to; on the synthetic pairings 0.01 keeps the 10% catches.
PAIRED_ALPHA = 0.01
# Processes a side at each look, and the share of PAIRED_ALPHA each look may spend. A row
# cleared inside the floor at a look passes and is not looked at again (PAIRED_CLEAR); any
# other row is open, and the pairing runs on while a row is open
# (regress_paired.run_until_decided), the later processes running the open rows alone. A look
# with a share fails the rows Holm's procedure rejects at PAIRED_ALPHA * share over all rows;
# the shares sum to 1, so over the looks the gate's false alarms stay within PAIRED_ALPHA (a
# union bound, whatever the looks before did). 5 processes a side cannot reach a twenty-first
# of the level (the least one-sided p is 1/252), so the first look only clears. The second
# decides steady rows: at 0.0025 over 21 rows it needs at most 6 of the 100 pairs of
# processes out of order, which a real 10% slowdown of switch/asm gives. The last, most of
# the level, with the samples a scattered slowdown needs: 10% builds whose processes scatter
# measured +8.2% and +9.9% over 20 processes a side on the AMD EPYC VM at p = 0.00027 and
# 0.00042, short of Holm's 0.00036; processes of a few open rows take a fraction of a
# second, so 30 more a side cost about as much as 5 of every row.
PAIRED_LOOKS = (5, 10, 40)
PAIRED_SHARES = (0.0, 0.25, 0.75)
# A row whose median is inside the floor at a look before the last passes there only when
# its processes support it: the base's times larger than the head's over 1 + PAIRED_FLOOR at
# this level. On the median alone a 10% build that measured +4.4% over its first 5 processes
# a side passed the gate. A wrong clearance costs a missed slowdown, not a false alarm, so
# it spends nothing of PAIRED_ALPHA.
PAIRED_CLEAR = 0.05


def fmt(x):
    return "%.3f" % x if abs(x) < 10 else "%.1f" % x


def fail_line(check, base, now, limit):
    change = "n/a" if not base else "%+.1f%%" % (100.0 * (now - base) / base)
    return "FAIL %s: baseline %s, now %s, change %s (%s)" % (
        check, "n/a" if base is None else fmt(base), fmt(now), change, limit)


# ---- what the gate says: one line per figure ------------------------------------------------

PART_NAMES = {"count": "counts", "timing": "timings against this CPU model's baseline",
              "paired": "timings paired with the base build"}


class Verdicts:
    """Every figure's line, in the order checked: `ok` lines say the figure, its limit and why
    it passed; a failing figure's line is its FAIL line. Notes are what was not gated."""

    def __init__(self):
        self.figures = []   # (part, ok, line)
        self.notes = []

    def ok(self, part, label, value, limit, why):
        self.figures.append((part, True, "regress: ok   %-46s %9s  limit %s: %s"
                             % (label, fmt(value), limit, why)))

    def fail(self, part, line):
        self.figures.append((part, False, line))

    def note(self, text):
        self.notes.append(text)

    @property
    def failures(self):
        return [line for _, ok, line in self.figures if not ok]

    def summary(self):
        by_part = {}
        for part, _, _ in self.figures:
            by_part[part] = by_part.get(part, 0) + 1
        parts = ", ".join("%d %s" % (n, PART_NAMES[part]) for part, n in by_part.items()) \
            or "none"
        bad = self.failures
        if bad:
            names = [line[len("FAIL "):].split(": baseline")[0] for line in bad]
            return "regress: FAIL: %d of %d figures (%s): %s" % (
                len(bad), len(self.figures), parts, ", ".join(names))
        return "regress: pass: %d figures within their limits (%s)" % (len(self.figures), parts)


# ---- counts: every machine ------------------------------------------------------------------
# One entry per kind of count: its block in `counts`, the label of a row, and how a row is
# judged (limit_and_check(baseline, now) -> (limit text, passed, why, fail limit text)). A new
# kind of count (IO-path instructions, say) is one more entry.

def _rise(b, n):
    top = b * (1 + ICOUNT_RISE)
    why = "equal" if n == b else ("%+.1f%%, inside +3%%" % (100.0 * (n - b) / b))
    return "%s (baseline %s +3%%)" % (fmt(top), fmt(b)), n <= top, why, \
        "instructions may rise at most 3%"


def _syscalls(b, n):
    return "%s +- %.2f (baseline)" % (fmt(b), SYSCALLS_SLACK), abs(n - b) <= SYSCALLS_SLACK, \
        "within %.2f of the baseline" % SYSCALLS_SLACK, \
        "system calls per switch must stay within %.2f" % SYSCALLS_SLACK


def _misses(b, n):
    top = b + MISSES_SLACK
    return "%s (baseline %s + %.2f)" % (fmt(top), fmt(b), MISSES_SLACK), n <= top, \
        "within %.2f lines of the baseline" % MISSES_SLACK, \
        "cache misses per unit may rise at most %.2f lines" % MISSES_SLACK


def _lines(b, n):
    top = b + LINES_SLACK
    return "%s (baseline %s + %.1f)" % (fmt(top), fmt(b), LINES_SLACK), n <= top, \
        "within %.1f lines of the baseline" % LINES_SLACK, \
        "a request's own cache lines may rise at most %.1f" % LINES_SLACK


COUNT_KINDS = (
    {"block": "instructions", "label": "icount/%s", "judge": _rise, "what": "row"},
    {"block": "syscalls_per_switch", "label": "syscalls/switch/%s", "judge": _syscalls,
     "what": "backend", "skip_if": "syscalls_not_run"},
    # The IO path per request, under the schedule that fixes its timing (harness/gate/iopath.py):
    # one read more per request is +1 system call, twenty times the slack.
    {"block": "io_instructions", "label": "iopath/%s/instructions", "judge": _rise,
     "what": "configuration", "skip_if": "iopath_not_run"},
    {"block": "io_syscalls", "label": "iopath/%s/syscalls", "judge": _syscalls,
     "what": "configuration", "skip_if": "iopath_not_run"},
    {"block": "io_epoll_ctl", "label": "iopath/%s/epoll_ctl", "judge": _syscalls,
     "what": "configuration", "skip_if": "iopath_not_run"},
    {"block": "io_lines", "label": "iopath/%s/lines", "judge": _lines,
     "what": "configuration", "skip_if": "iopath_not_run"},
    # Data cache misses per copy-stack resume under the AMD EPYC VM's geometry
    # (harness/gate/misscount.py): a line more read per resume is a whole miss, four times the slack.
    {"block": "cache_misses", "label": "cachegrind/%s", "judge": _misses, "what": "row"},
)


def _check_count_kind(kind, base, cur, out):
    if kind.get("skip_if") and cur.get(kind["skip_if"]):
        out.note("not gated: %s: %s" % (kind["block"], cur[kind["skip_if"]]))
        return
    b_rows, c_rows = base.get(kind["block"], {}), cur.get(kind["block"], {})
    for row, b in sorted(b_rows.items()):
        label, n = kind["label"] % row, c_rows.get(row)
        if n is None:
            out.fail("count", "FAIL %s: baseline %s, now missing, change n/a (%s not measured)"
                     % (label, fmt(b), kind["what"]))
            continue
        limit, passed, why, fail_limit = kind["judge"](b, n)
        if passed:
            out.ok("count", label, n, limit, why)
        else:
            out.fail("count", fail_line(label, b, n, fail_limit))
        if kind["judge"] is _rise and n < b * (1 - ICOUNT_RISE):
            out.note("note: %s fell from %s to %s; --update records it" % (label, fmt(b), fmt(n)))
    for row in sorted(set(c_rows) - set(b_rows)):
        out.note("note: %s is new (not in the baseline); --update records it"
                 % (kind["label"] % row))


def check_counts(base, cur, out):
    """The deterministic part into out (a Verdicts); base and cur are `counts` blocks."""
    for kind in COUNT_KINDS:
        _check_count_kind(kind, base, cur, out)
    for row, sph in sorted(cur.get("switches_per_hop", {}).items()):
        want = SWITCHES_PER_HOP[row.split("/")[1]]
        label = row + " switches_per_hop"
        if abs(sph - want) <= SWITCHES_PER_HOP_SLACK:
            out.ok("count", label, sph, "%.0f +- %.1f" % (want, SWITCHES_PER_HOP_SLACK),
                   "a %s hop switches %.0f time(s)" % (row.split("/")[1], want))
        else:
            out.fail("count", fail_line(label, want, sph, "must be %.0f +- %.1f"
                                        % (want, SWITCHES_PER_HOP_SLACK)))


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


def check_timing(base_timing, cur_timing, out):
    """The timing figures against a same-model baseline, into out (a Verdicts)."""
    base, cur = figures(base_timing), figures(cur_timing)
    if not base or not cur:
        out.note("note: timing not gated: the floor rows are missing from the %s"
                 % ("baseline" if not base else "measurement"))
        return
    for row in sorted(base):
        label = row + " / floor"
        if row not in cur:
            out.fail("timing", "FAIL %s: baseline %s, now missing, change n/a (row not "
                     "measured)" % (label, fmt(stats.median(base[row]))))
            continue
        b, c = base[row], cur[row]
        tol = tolerance(b)
        mb, mc = stats.median(b), stats.median(c)
        limit = mb * (1 + tol)
        p = stats.mann_whitney_greater(c, b)
        limit_text = "%s (baseline %s +%.1f%%, its spread)" % (fmt(limit), fmt(mb), 100 * tol)
        if mc > limit and p < ALPHA:
            out.fail("timing", fail_line(label, mb, mc, "limit %s from the baseline's spread, "
                                         "+%.1f%%; U-test p=%.3f" % (fmt(limit), 100 * tol, p)))
        elif mc > limit:
            out.ok("timing", label, mc, limit_text,
                   "above it, but U-test p=%.3f >= %.2f: not significant" % (p, ALPHA))
        else:
            out.ok("timing", label, mc, limit_text, "%+.1f%%, below the limit" % (
                100.0 * (mc - mb) / mb))
        if mc < mb * (1 - tol) and stats.mann_whitney_greater(b, c) < ALPHA:
            out.note("note: %s fell from %s to %s beyond noise; --update records it"
                     % (label, fmt(mb), fmt(mc)))


# ---- paired timing: a base build against the head, on this machine --------------------------

def process_medians(timing):
    """{row: [median CPU time of each process]}, the reference rows left out. The paired gate
    compares these as they are: base and head share the sitting, so dividing by the floor
    rows (which the stored baselines need across VMs) would only add the floor's own
    scatter between processes (up to 17% in one process of 20 on the AMD EPYC VM)."""
    return {row: [stats.median(times) for times in per]
            for row, per in timing["samples"].items() if row not in REFERENCE_ROWS and per}


def paired_look(base, cur, last):
    """("floor" | "unsure" | "beyond", base median, head median, p) of one row's processes at
    one look: the head's median beyond the floor over the base's, or inside it, and then
    cleared when this is the last look or the processes support it (the base's times larger
    than the head's over 1 + PAIRED_FLOOR, one-sided U test at PAIRED_CLEAR), else unsure;
    p is the one-sided exact U test of the head's times against the base's."""
    mb, mc = stats.median(base), stats.median(cur)
    p = stats.mann_whitney_greater_exact(cur, base)
    if mc > mb * (1 + PAIRED_FLOOR):
        return "beyond", mb, mc, p
    if last or stats.mann_whitney_greater_exact(
            base, [c / (1 + PAIRED_FLOOR) for c in cur]) < PAIRED_CLEAR:
        return "floor", mb, mc, p
    return "unsure", mb, mc, p


def look_plan(n, looks=PAIRED_LOOKS, shares=PAIRED_SHARES):
    """[(processes, share of PAIRED_ALPHA)] of the looks that n processes a side allow: the
    looks up to n as they are, the later ones folded into one at n with their shares."""
    plan = {}
    for k, share in zip(looks, shares):
        k = min(k, n)
        plan[k] = plan.get(k, 0.0) + share
    return sorted(plan.items())


def paired_decisions(base, cur, looks=PAIRED_LOOKS, shares=PAIRED_SHARES, final=True):
    """{row: (state, base median, head median, p, processes)} of every row both sides have
    ({row: per-process medians} each): "floor" at the first look that clears it inside the
    floor, "fail" at the first look whose Holm procedure rejects it, else "beyond" (or, while
    the pairing runs, "unsure") at the last look the samples allow. final: no more processes
    will come, so the looks beyond them spend their shares on what there is (look_plan);
    while the pairing runs, a look spends its own share only."""
    rows = sorted(r for r in base if r in cur)
    if not rows:
        return {}
    # Processes of the pairing: the later looks run the rows still open alone.
    n = max(min(len(base[r]), len(cur[r])) for r in rows)
    plan = look_plan(n, looks, shares) if final else \
        [(k, share) for k, share in zip(looks, shares) if k <= n]
    out = {}
    for i, (k, share) in enumerate(plan):
        last = i == len(plan) - 1 and (final or k >= max(looks))
        beyond, undecided = {}, False
        for r in rows:
            if r not in out or out[r][0] in ("beyond", "unsure"):
                state, mb, mc, p = paired_look(base[r][:k], cur[r][:k], last)
                out[r] = (state, mb, mc, p, k)
                undecided = undecided or state != "floor"
                if state == "beyond":
                    beyond[r] = p
        if not undecided:
            break
        if share > 0:
            # Rows passed count among the m at p = 1, rows failed before at p = 0.
            family = {r: 0.0 if out[r][0] == "fail" else 1.0 for r in rows}
            family.update(beyond)
            for r in holm(family, PAIRED_ALPHA * share) & set(beyond):
                out[r] = ("fail",) + out[r][1:]
    return out


def holm(pvalues, alpha):
    """The names Holm's step-down procedure rejects at family-wise level alpha, of
    {name: p}."""
    m = len(pvalues)
    rejected = set()
    for i, (name, p) in enumerate(sorted(pvalues.items(), key=lambda kv: (kv[1], kv[0]))):
        if p > alpha / (m - i):
            break
        rejected.add(name)
    return rejected


def open_rows(base_timing, head_timing, looks=PAIRED_LOOKS, shares=PAIRED_SHARES):
    """The rows the paired timing has not decided yet: beyond the floor and not failed,
    while a later look remains that more processes a side would reach."""
    base, cur = process_medians(base_timing), process_medians(head_timing)
    decided = paired_decisions(base, cur, looks, shares, final=False)
    return sorted(row for row, d in decided.items()
                  if d[0] in ("beyond", "unsure") and d[4] < max(looks))


def check_paired(paired, cur_timing, out, looks=PAIRED_LOOKS, shares=PAIRED_SHARES):
    """The head's timings against the base's, measured alternately on this machine
    (regress_paired.py), into out. A row fails when its median over the base's is beyond
    PAIRED_FLOOR at every look up to one whose Holm procedure over all rows rejects it on
    the one-sided U test of the head's times against the base's: a slowdown the processes
    support, of a size that matters, with the whole gate's false alarms held at
    PAIRED_ALPHA (paired_decisions)."""
    base, cur = process_medians(paired["timing"]), process_medians(cur_timing)
    who = "base %s" % paired["base_sha"][:12]
    if not base or not cur:
        out.note("note: paired timing not gated: nothing measured at the %s"
                 % ("base" if not base else "head"))
        return
    for row in sorted(set(base) - set(cur)):
        out.note("note: paired %s is not measured at the head (the base has it)" % row)
    decided = paired_decisions(base, cur, looks, shares)
    m = len(decided)
    for row, (state, mb, mc, p, k) in decided.items():
        label = "paired " + row
        limit_text = "%s ns (%s %s +%.0f%%), and Holm's U test at %.2f over %d rows" % (
            fmt(mb * (1 + PAIRED_FLOOR)), who, fmt(mb), 100 * PAIRED_FLOOR, PAIRED_ALPHA, m)
        change = 100.0 * (mc - mb) / mb
        if state == "fail":
            out.fail("paired", fail_line(label, mb, mc, "%s: beyond the %.0f%% floor, U-test "
                                         "p=%.2g, rejected by Holm at %.2f over %d rows, %d "
                                         "processes a side" % (who, 100 * PAIRED_FLOOR, p,
                                                               PAIRED_ALPHA, m, k)))
        elif state == "beyond":
            out.ok("paired", label, mc, limit_text, "%+.1f%%, beyond the floor, but U-test "
                   "p=%.2g at %d processes a side: not significant by Holm" % (change, p, k))
        else:
            at = " at %d processes a side" % k if k > min(looks) else ""
            out.ok("paired", label, mc, limit_text, "%+.1f%%, inside the %.0f%% floor%s"
                   % (change, 100 * PAIRED_FLOOR, at))
    for row in sorted(set(cur) - set(base)):
        out.note("note: paired %s is new (the base has no such row)" % row)


def timing_baseline_path(baseline_dir, cpu):
    return Path(baseline_dir) / "timing" / ("%s.json" % cpu["key"])


def gate(counts_base, timing_base, cur):
    """Everything regress.py prints and decides, as a Verdicts.

    timing_base is the baseline of cur's CPU model, or None when there is none; cur's
    `paired` block, when it has one, holds the base build's timing measured beside it, and
    `paired_not_run` why there is none."""
    out = Verdicts()
    check_counts(counts_base.get("counts", {}), cur["counts"], out)
    if timing_base is None:
        out.note("not gated: no baseline for %s (record one with ./run.sh regress --update)"
                 % cur["cpu"]["model"])
    elif timing_base["cpu"]["key"] != cur["cpu"]["key"]:
        raise ValueError("timing baseline is for %s, the measurement for %s"
                         % (timing_base["cpu"]["key"], cur["cpu"]["key"]))
    else:
        check_timing(timing_base["timing"], cur["timing"], out)
    if cur.get("paired"):
        check_paired(cur["paired"], cur["timing"], out)
    elif cur.get("paired_not_run"):
        out.note("paired timing not run: %s" % cur["paired_not_run"])
    return out
