#!/usr/bin/python3
"""regress.py - the switch-cost regression gate behind `./run.sh regress`.

Measures, from build/bin:
  counts  instructions per switch, create and hop (callgrind, experiments/icount.py), switches
          per hop (the same runs), system calls per switch (perf's raw_syscalls:sys_enter
          over `switch-tests syscall-loop BACKEND N` at two lengths, differenced), and the
          data cache misses per copy-stack resume (cachegrind, harness/gate/misscount.py);
  timing  CPU time of every switch row and of the star and ring hops at 16 fibers, in
          PROCESSES separate runs of switch-bench, each REPETITIONS repetitions in random
          order, alternating with as many processes of the base commit's switch-bench
          (harness/gate/regress_paired.py: the merge base with main on a branch, else HEAD~1,
          built under build-base/; not when the two builds map the same code, byte for byte);
then gates them (harness/gate/regress_gate.py says how): the counts against
results/baseline/counts.json on every machine; the timings against the base build's, on any
machine (paired), and against results/baseline/timing/<cpu key>.json, the stored baseline of
this CPU model, where there is one. Without one, that part prints `not gated: no baseline for
<cpu model> (...)`; without a base commit (a shallow clone), `paired timing not run: ...`,
and with a base of the same code, `paired timing not run: the base ... builds the same
switch-bench code as the head ...`.

Each figure prints one line: `regress: ok <figure> <value> limit <limit>: <why it passed>`,
or `FAIL <check>: baseline <b>, now <n>, change <c> (<limit>)`; then what was not gated, and a
summary line. Any failure makes the exit status 1, bad input 2. The measurement goes to
results/runs/<host>/<UTC time>-<git sha>/switch-regress.json either way.

  regress.py [--bin DIR] [--baseline-dir DIR] [--base REF | --base-bin DIR | --no-base]
             [--update]                                    measure, then gate or record
  regress.py --compare CURRENT.json [--baseline-dir DIR] [--doctor ROW=FACTOR]
             [--expect-failure CHECK]                      gate a stored measurement

The baselines (and a --compare measurement) are checked before anything is measured
(harness/gate/regress_files.py): one that is malformed or holds nothing to judge by is refused,
exit 2. `--update` records the counts and this CPU model's timing baseline; it refuses a tree
with uncommitted changes (outside results/), as git says whatever SWITCHYARD_GIT_SHA says,
since a baseline must say which commit it measured.
`--doctor` scales one row of the stored measurement first (an icount row, a timing row of the
head, syscalls/switch/BACKEND, iopath/CONFIG/instructions|syscalls|epoll_ctl|lines, or
cachegrind/ROW/D1|LL, to which FACTOR misses are added) and `--expect-failure` exits 0 only if the gate then fails on
exactly that check: the self-tests that prove the gate can fail.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from gate import iopath, misscount
from gate import regress_files as RF
from gate import regress_gate as G
from gate import regress_paired as P
from lib import callgrind, meta, perf

ROOT = Path(__file__).resolve().parents[2]
BASELINE_DIR = ROOT / "results" / "baseline"
# Counted beside the switch rows (program, rows, the two loop lengths): the copy-stack resume
# of 8 live bytes at 1 and 10^5 fibers, and the timer operations C17 reads, arm and cancel of
# the mostly-cancelled workload and expire of the firing one, at 10^2 and 10^4 pending.
EXTRA_ICOUNT = (
    ("switch-icount", ["copystack/resume/bytes:8/fibers:%d" % f for f in (1, 100000)],
     (20000, 220000)),
    ("timer-icount", ["timers/%s/%s/%s/pending:%d" % (w, op, s, n)
                      for w, op in (("cancelled", "arm"), ("cancelled", "cancel"),
                                    ("firing", "expire"))
                      for s in ("wheel", "rbtree") for n in (100, 10000)], (20, 120)),
)
FIBERS = 16
TIMING_FILTER = r"^(switch/[^/]+|sched/(star|ring)/[^/]+/fibers:%d)$" % FIBERS
# 5 processes a side: with 4 against 4, one process the machine disturbed (an inversion more)
# leaves a real 10% slowdown short of the U test's 0.05 (results/baseline/NOTES.md). What
# scatters is the process (placement), not the repetition: 3 repetitions of 0.05 s decide as
# well as 5 of 0.1 s did and take a third of the time (results/baseline/NOTES.md, 2026-12-04).
TIMING_CONFIG = {"processes": 5, "repetitions": 3, "min_time": 0.05}
# A baseline is what every later run is judged by: twice the processes of a check.
BASELINE_PROCESSES = 8


def run_timing(bin_dir, processes, log):
    exe = P.check_bin(bin_dir)
    cfg = dict(TIMING_CONFIG, processes=processes, filter=TIMING_FILTER)
    samples = {}
    for i in range(processes):
        print("regress: timing, process %d of %d: %s" % (i + 1, processes, exe), file=log)
        for row, times in P.one_process(exe, cfg).items():
            samples.setdefault(row, []).append(times)
    return {"unit": "ns of CPU time per switch (switch rows) or per hop (sched rows)",
            "config": cfg, "samples": samples}


def paired_timing(bin_dir, base, log):
    """(head's timing, paired block or None, why not run or None). base: {"sha", "how"} of
    the commit to build, or {"bin", "sha", "how"} of a base already built, or {"why"} when
    there is none. The head's processes of the pairing are its timing samples for the stored
    baseline too, so the pairing costs the base's processes alone."""
    why = base.get("why")
    if why is None:
        try:
            base_bin = base.get("bin") or P.build_base(base["sha"], log=log)
            if P.same_code(base_bin, bin_dir):
                why = "the base %s builds the same switch-bench code as the head (every " \
                      "section the loader maps, byte for byte, the git sha compiled in and " \
                      "the build ID aside): no timing of it can differ but by the machine" \
                      % base["sha"][:12]
        except P.BaseUnavailable as e:
            why = str(e)
    if why:
        return run_timing(bin_dir, TIMING_CONFIG["processes"], log), None, why
    cfg = dict(TIMING_CONFIG, filter=TIMING_FILTER)
    base_t, head_t = P.run_until_decided(base_bin, bin_dir, cfg, G.PAIRED_LOOKS, G.open_rows,
                                         log)
    return head_t, {"base_sha": base["sha"], "base_how": base["how"], "timing": base_t}, None


def syscalls_per_switch(bin_dir):
    """({backend: system calls per switch}, None) or ({}, why not run)."""
    backends = [m["name"] for m in meta.registry(Path(bin_dir) / "switch-info", "regress")]
    out = {}
    with tempfile.TemporaryDirectory(prefix="regress.") as tmp:
        for backend in backends:
            r = perf.syscalls_per_switch(Path(bin_dir) / "switch-tests", backend, tmp)
            if r["status"] != "ok":
                return {}, r["why"]
            out[backend] = r["per_switch"]
    return out, None


def measure(bin_dir, processes, base=None, log=sys.stderr):
    print("regress: instruction counts (callgrind, two loop lengths)", file=log)
    ic = callgrind.run(str(bin_dir), log=log)
    rows = {r["name"][len("icount/"):]: r for r in ic["benchmarks"]}
    counts = {"instructions": {name: r["real_time"] for name, r in rows.items()},
              "switches_per_hop": {name: r["switches_per_hop"] for name, r in rows.items()
                                   if "switches_per_hop" in r},
              "icount_context": {k: ic["context"][k] for k in ("loops", "valgrind")
                                 if k in ic["context"]}}
    print("regress: copy-stack resumes and timer operations (callgrind)", file=log)
    for exe, rows, loops in EXTRA_ICOUNT:
        extra = callgrind.run(str(bin_dir), rows, loops, log=log, exe_name=exe)
        counts["instructions"].update({r["name"][len("icount/"):]: r["real_time"]
                                       for r in extra["benchmarks"]})
    print("regress: cache misses per copy-stack resume (cachegrind, AMD EPYC geometry)",
          file=log)
    counts["cache_misses"] = misscount.run(str(bin_dir), log=log)
    print("regress: system calls per switch (perf, two loop lengths)", file=log)
    counts["syscalls_per_switch"], why = syscalls_per_switch(bin_dir)
    if why:
        counts["syscalls_not_run"] = why
    print("regress: the IO path per request (gate/iopath.py: SCHED_FIFO on CPU 0)", file=log)
    why = iopath.unavailable()
    if why:
        counts["iopath_not_run"] = why
    else:
        io = iopath.measure(bin_dir, log=log)
        for block, _, fig, _ in RF.IO_FIGURES:
            counts[block] = {name: f[fig] for name, f in io.items() if fig in f}
    build_dir = Path(bin_dir).parent
    source = meta.source_root(build_dir) or ROOT
    doc = {"kind": "switchyard-regress", "meta": meta.collect(source, build_dir),
           "cpu": meta.cpu_identity(), "counts": counts}
    if base is None:
        doc["timing"] = run_timing(bin_dir, processes, log)
        return doc
    doc["timing"], paired, why = paired_timing(bin_dir, base, log)
    if paired:
        doc["paired"] = paired
    else:
        doc["paired_not_run"] = why
    return doc


def save_run(doc):
    folder = meta.new_run_dir(ROOT / "results" / "runs", doc["meta"])
    path = folder / "switch-regress.json"
    path.write_text(meta.json_text(doc))
    return path


def write_baselines(doc, baseline_dir):
    """counts.json (every machine) and timing/<cpu key>.json (this CPU model)."""
    counts = Path(baseline_dir) / "counts.json"
    timing = G.timing_baseline_path(baseline_dir, doc["cpu"])
    timing.parent.mkdir(parents=True, exist_ok=True)
    counts.write_text(meta.json_text({"kind": "switchyard-regress-counts", "meta": doc["meta"],
                                      "counts": doc["counts"]}))
    timing.write_text(meta.json_text({"kind": "switchyard-regress-timing", "meta": doc["meta"],
                                      "cpu": doc["cpu"], "timing": doc["timing"]}))
    return counts, timing


def load_baselines(baseline_dir, cpu):
    """(counts baseline, timing baseline of cpu's model or None), each checked before anything
    is measured: a baseline the gate cannot judge by is refused (regress_files.Malformed)."""
    counts = RF.counts_baseline(Path(baseline_dir) / "counts.json")
    path = G.timing_baseline_path(baseline_dir, cpu)
    if not path.exists():
        return counts, None
    timing = RF.timing_baseline(path, G.REFERENCE_ROWS)
    if timing["cpu"]["key"] != cpu["key"]:
        raise RF.Malformed("%s: recorded on %s, not %s" % (path, timing["cpu"]["key"],
                                                           cpu["key"]))
    return counts, timing


def doctor(doc, spec):
    row, _, factor = spec.partition("=")
    factor = float(factor)
    if row.startswith("icount/") and row[7:] in doc["counts"]["instructions"]:
        doc["counts"]["instructions"][row[7:]] *= factor
    elif row.startswith("syscalls/switch/") and \
            row[16:] in doc["counts"].get("syscalls_per_switch", {}):
        doc["counts"]["syscalls_per_switch"][row[16:]] += factor
    elif row.startswith("iopath/") and row.count("/") >= 2:
        # iopath/CONFIG/FIGURE: instructions scale; system calls, epoll_ctl and lines are
        # added to (one read more per request is +1), as for the switch's system calls.
        config, figure = row[len("iopath/"):].rsplit("/", 1)
        block = {name: blk for blk, name, _, _ in RF.IO_FIGURES}.get(figure)
        rows = doc["counts"].get(block, {}) if block else {}
        if config not in rows:
            raise RuntimeError("--doctor: no row named %s" % row)
        rows[config] = rows[config] * factor if figure == "instructions" else \
            rows[config] + factor
    elif row.startswith("cachegrind/") and row[11:] in doc["counts"].get("cache_misses", {}):
        doc["counts"]["cache_misses"][row[11:]] += factor  # lines added per unit
    elif row in doc["timing"]["samples"]:
        doc["timing"]["samples"][row] = [[t * factor for t in per]
                                         for per in doc["timing"]["samples"][row]]
    else:
        raise RuntimeError("--doctor: no row named %s" % row)
    print("regress: doctored %s by %s" % (row, factor), file=sys.stderr)


def dirty_reason(root=ROOT):
    """Why --update must refuse, or None. Always git's own answer: SWITCHYARD_GIT_SHA names a
    commit but says nothing of the tree, and a baseline must name the commit it measured."""
    sha, dirty = meta.git_tree(root)
    if sha == "unknown":
        return "not a git checkout: a baseline must name the commit it measured"
    if dirty is None:
        return "git cannot tell whether the tree has uncommitted changes: a baseline must " \
               "name the commit it measured"
    if dirty:
        return "the tree has uncommitted changes (git status): commit them first, a " \
               "baseline must name the commit it measured"
    return None


def report(verdicts):
    """One line per figure (ok with its limit and why, or FAIL), the notes, a summary."""
    for _, _, line in verdicts.figures:
        print(line)
    for line in verdicts.notes:
        print("regress: " + line)
    print(verdicts.summary())


def choose_base(args):
    """What the paired timing is measured against (see paired_timing), or None for none."""
    if args.update or args.no_base:
        return None
    if args.base_bin:
        sha = P.resolve(ROOT, args.base or "HEAD")
        return {"bin": args.base_bin, "sha": sha or "unknown", "how": "--base-bin"}
    if args.base:
        sha = P.resolve(ROOT, args.base)
        if sha is None:
            raise RuntimeError("--base %s: not a commit of this repository" % args.base)
        return {"sha": sha, "how": "--base " + args.base}
    sha, how = P.default_base(ROOT)
    return {"sha": sha, "how": how} if sha else {"why": how}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--baseline-dir", default=str(BASELINE_DIR))
    ap.add_argument("--update", action="store_true",
                    help="record the counts and this CPU model's timing baseline")
    ap.add_argument("--compare", metavar="CURRENT", help="gate this stored measurement")
    ap.add_argument("--base", metavar="REF", help="time the switch rows against this commit's "
                    "build, alternating processes (default: the merge base with main on a "
                    "branch, else HEAD~1)")
    ap.add_argument("--base-bin", metavar="DIR", help="the base's bin folder, already built "
                    "(no build; --base then only names its commit)")
    ap.add_argument("--no-base", action="store_true", help="no paired timing")
    ap.add_argument("--doctor", metavar="ROW=FACTOR", help="scale one row first (self-test)")
    ap.add_argument("--expect-failure", metavar="CHECK",
                    help="exit 0 only if the gate fails, and on CHECK alone (self-test)")
    args = ap.parse_args(argv)
    # The measurements run their programs from other working directories (iopath's servers,
    # valgrind's output folders): a relative folder would name nothing there.
    args.bin = str(Path(args.bin).resolve())
    if args.base_bin:
        args.base_bin = str(Path(args.base_bin).resolve())
    try:
        if args.update and (args.compare or args.doctor):
            raise RuntimeError("--update records a fresh measurement: no --compare or --doctor")
        if args.compare and (args.base or args.base_bin):
            raise RuntimeError("--compare gates a stored measurement: no --base or --base-bin")
        why = dirty_reason() if args.update else None
        if why:
            raise RuntimeError("--update refused: " + why)
        current = RF.measurement(args.compare, G.REFERENCE_ROWS) if args.compare else None
        cpu = current["cpu"] if current else meta.cpu_identity()
        if not args.update:
            counts_base, timing_base = load_baselines(args.baseline_dir, cpu)
        if current is None:
            processes = BASELINE_PROCESSES if args.update else TIMING_CONFIG["processes"]
            current = measure(args.bin, processes, None if args.compare else choose_base(args))
            print("regress: measurement in %s" % save_run(current), file=sys.stderr)
        if args.doctor:
            doctor(current, args.doctor)
        if args.update:
            current["meta"].update(zip(("git_sha", "git_dirty"), meta.git_tree(ROOT)))
            for path in write_baselines(current, args.baseline_dir):
                print("regress: baseline written to %s" % path)
            return 0
        verdicts = G.gate(counts_base, timing_base, current)
    except (OSError, ValueError, KeyError, RuntimeError, subprocess.SubprocessError) as e:
        print("regress.py: %s" % e, file=sys.stderr)
        return 2
    report(verdicts)
    failures = verdicts.failures
    if args.expect_failure:
        checks = [line[len("FAIL "):].split(": baseline")[0] for line in failures]
        ok = checks == [args.expect_failure]
        print("regress: self-test %s: expected exactly one failure on %s, got %s"
              % ("passed" if ok else "FAILED", args.expect_failure, checks or "none"))
        return 0 if ok else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
