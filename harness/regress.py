#!/usr/bin/python3
"""regress.py - the switch-cost regression gate behind `./run.sh regress`.

Measures (1) instructions per switch, create and hop with callgrind (harness/icount.py) and
(2) a short interleaved timing run of switch-bench (5 repetitions in random order, medians),
then compares them with results/baseline/switch.json:

  - an instruction count may not rise more than 3% above the baseline (they are
    deterministic, so the limit is tight);
  - times are never compared with the baseline (another day, another load on a shared VM);
    they are only checked as ratios inside this run, with loose limits that a noisy machine
    does not reach but real breakage does: asm <= 1.3 x fcontext, asm-nofpu <= 1.1 x
    fcontext, asm-nofpu <= 1.1 x switch/floor, asm <= 1.05 x switch/floor-fp, ring <= 0.85 x
    star per backend at 16 fibers, and switches per hop within
    1 +- 0.1 (ring) and 2 +- 0.1 (star). The ratios use CPU time: these rows are
    single-threaded, and CPU time does not count the moments other tenants of the VM held
    the CPU, which real time does.

Each failure prints one line: `FAIL <row>: baseline <b>, now <n>, change <c> (<limit>)`;
any failure makes the exit status 1. `--update` writes the new measurements as the baseline.
The measured JSON also goes to results/runs/<host>/<UTC time>-<git sha>/switch-regress.json.

  regress.py [--bin DIR] [--baseline FILE] [--update]     measure, then compare or update
  regress.py --compare CURRENT.json [--doctor ROW=FACTOR] [--expect-failure ROW]
                                                           compare a stored result only
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import icount  # noqa: E402  (harness/icount.py, beside this file)

BASELINE = os.path.join(ROOT, "results", "baseline", "switch.json")
ICOUNT_RISE = 0.03
FIBERS = 16
TIMING_FILTER = r"^(call/noinline|syscall/getppid|switch/[^/]+|sched/(star|ring)/[^/]+/fibers:%d)$" % FIBERS
TIMING_FLAGS = ["--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true",
                "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.1"]

# (numerator row, denominator row, limit): numerator/denominator must stay <= limit.
# The floor rows (harness/bench/floor_*.S) are references, not backends: asm-nofpu must stay
# within 1.1x of switch/floor and asm within 1.05x of switch/floor-fp.
SWITCH_RATIOS = [("switch/asm", "switch/fcontext", 1.3),
                 ("switch/asm-nofpu", "switch/fcontext", 1.1),
                 ("switch/asm-nofpu", "switch/floor", 1.1),
                 ("switch/asm", "switch/floor-fp", 1.05)]
RING_OVER_STAR = 0.85
TIME = "cpu_time"

SWITCHES_PER_HOP = {"star": (1.9, 2.1), "ring": (0.9, 1.1)}


def run_name(row):
    return row.get("run_name", row["name"])


def medians(doc):
    """{run_name: row} of the timing rows: the median aggregates (or plain iterations)."""
    out = {}
    for row in doc.get("benchmarks", []):
        name = run_name(row)
        if name.startswith("icount/"):
            continue
        if row.get("run_type") == "aggregate" and row.get("aggregate_name") != "median":
            continue
        out[name] = row
    return out


def icounts(doc):
    return {row["name"]: row for row in doc.get("benchmarks", [])
            if row["name"].startswith("icount/")}


def fmt(x):
    return "%.3f" % x if abs(x) < 10 else "%.1f" % x


def fail_line(row, base, now, limit):
    change = "n/a" if not base else "%+.1f%%" % (100.0 * (now - base) / base)
    return "FAIL %s: baseline %s, now %s, change %s (%s)" % (
        row, "n/a" if base is None else fmt(base), fmt(now), change, limit)


def check_icounts(base_doc, cur_doc):
    failures, notes = [], []
    base, cur = icounts(base_doc), icounts(cur_doc)
    for name, row in sorted(base.items()):
        if name not in cur:
            failures.append("FAIL %s: baseline %s, now missing, change n/a (row not measured)"
                            % (name, fmt(row["real_time"])))
            continue
        b, n = row["real_time"], cur[name]["real_time"]
        if n > b * (1 + ICOUNT_RISE):
            failures.append(fail_line(name, b, n, "instructions may rise at most 3%"))
        elif n < b * (1 - ICOUNT_RISE):
            notes.append("note: %s fell from %s to %s instructions; --update records it"
                         % (name, fmt(b), fmt(n)))
    for name in sorted(set(cur) - set(base)):
        notes.append("note: %s is new (not in the baseline); --update records it" % name)
    return failures, notes


def ratio_checks(doc):
    """[(label, value, limit-text, ok)] for every within-run check the rows allow."""
    t = medians(doc)
    out = []
    for num, den, limit in SWITCH_RATIOS:
        if num in t and den in t and t[den][TIME] > 0 and not t[num].get("error_occurred") \
                and not t[den].get("error_occurred"):
            r = t[num][TIME] / t[den][TIME]
            out.append(("%s / %s" % (num, den), r, "limit %.2f" % limit, r <= limit))
    for star_name in sorted(n for n in t if n.startswith("sched/star/")):
        ring_name = star_name.replace("sched/star/", "sched/ring/", 1)
        if ring_name in t:
            r = t[ring_name][TIME] / t[star_name][TIME]
            out.append(("%s / %s" % (ring_name, star_name), r, "limit %.2f" % RING_OVER_STAR,
                        r <= RING_OVER_STAR))
    for name in sorted(n for n in t if n.startswith("sched/")):
        policy = name.split("/")[1]
        lo, hi = SWITCHES_PER_HOP[policy]
        sph = t[name].get("switches_per_hop")
        if sph is not None:
            out.append(("%s switches_per_hop" % name, sph, "allowed %.1f..%.1f" % (lo, hi),
                        lo <= sph <= hi))
    return out


def compare(base_doc, cur_doc):
    failures, notes = check_icounts(base_doc, cur_doc)
    base_ratios = {label: value for label, value, _, _ in ratio_checks(base_doc)}
    for label, value, limit, ok in ratio_checks(cur_doc):
        if not ok:
            failures.append(fail_line(label, base_ratios.get(label), value, limit))
    return failures, notes


def git_sha():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty",
                               "--abbrev=12"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_timing(bin_dir):
    exe = os.path.join(bin_dir, "switch-bench")
    if not os.access(exe, os.X_OK):
        raise RuntimeError("%s not found: build first (./run.sh build)" % exe)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [exe, "--benchmark_filter=" + TIMING_FILTER, "--benchmark_out=" + out.name,
               "--benchmark_out_format=json"] + TIMING_FLAGS
        print("regress: timing: %s" % " ".join(cmd[1:]), file=sys.stderr)
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise RuntimeError("switch-bench failed (exit %d):\n%s" % (proc.returncode,
                                                                        proc.stderr[-2000:]))
        with open(out.name) as f:
            doc = json.load(f)
    doc["benchmarks"] = [r for r in doc["benchmarks"]
                         if r.get("run_type") != "aggregate" or r.get("aggregate_name") == "median"]
    return doc


def measure(bin_dir):
    print("regress: instruction counts (callgrind, two loop lengths)", file=sys.stderr)
    ic = icount.run(bin_dir)
    doc = run_timing(bin_dir)
    for key in ("loops", "valgrind", "measurement"):
        if key in ic["context"]:
            doc["context"]["icount_" + key] = ic["context"][key]
    doc["benchmarks"] = ic["benchmarks"] + doc["benchmarks"]
    return doc


def save_run(doc):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = os.path.join(ROOT, "results", "runs", platform.node() or "host",
                          "%s-%s" % (stamp, git_sha()))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "switch-regress.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return path


def doctor(doc, spec):
    name, _, factor = spec.partition("=")
    hits = [r for r in doc["benchmarks"] if r["name"] == name or
            (run_name(r) == name and r.get("aggregate_name", "median") == "median")]
    if not hits:
        raise RuntimeError("--doctor: no row named %s" % name)
    for r in hits:
        r["real_time"] *= float(factor)
        r["cpu_time"] *= float(factor)
    print("regress: doctored %s x %s" % (name, factor), file=sys.stderr)


def report(failures, notes, ratios):
    for label, value, limit, ok in ratios:
        print("regress: %-4s %-62s %8s  (%s)" % ("ok" if ok else "BAD", label, fmt(value), limit))
    for line in notes:
        print("regress: " + line)
    for line in failures:
        print(line)
    print("regress: %s" % ("pass" if not failures else "%d failure(s)" % len(failures)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--update", action="store_true", help="write the measurements as baseline")
    ap.add_argument("--compare", metavar="CURRENT", help="compare this stored result only")
    ap.add_argument("--doctor", metavar="ROW=FACTOR", help="scale one row first (self-test)")
    ap.add_argument("--expect-failure", metavar="ROW",
                    help="exit 0 only if the gate fails, and on ROW alone (self-test)")
    args = ap.parse_args()
    try:
        if args.compare:
            with open(args.compare) as f:
                current = json.load(f)
        else:
            current = measure(args.bin)
            print("regress: measurements in %s" % save_run(current), file=sys.stderr)
        if args.doctor:
            doctor(current, args.doctor)
        if args.update:
            os.makedirs(os.path.dirname(args.baseline), exist_ok=True)
            with open(args.baseline, "w") as f:
                json.dump(current, f, indent=2)
                f.write("\n")
            report([], [], ratio_checks(current))
            print("regress: baseline written to %s" % args.baseline)
            return 0
        with open(args.baseline) as f:
            baseline = json.load(f)
    except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as e:
        print("regress.py: %s" % e, file=sys.stderr)
        return 2
    failures, notes = compare(baseline, current)
    report(failures, notes, ratio_checks(current))
    if args.expect_failure:
        rows = [line[len("FAIL "):].split(": baseline")[0] for line in failures]
        ok = rows == [args.expect_failure]
        print("regress: self-test %s: expected exactly one failure on %s, got %s"
              % ("passed" if ok else "FAILED", args.expect_failure, rows or "none"))
        return 0 if ok else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
