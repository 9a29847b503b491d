"""Instructions per switch, per create and per hop, counted by callgrind.

Runs build/bin/switch-icount under `valgrind --tool=callgrind` twice per row, with two loop
lengths, and divides the difference of the two instruction totals by the difference of the
work units (switches, creates, hops, calls) the two runs did. Start-up, set-up and teardown
are the same in both runs and cancel out; what is left is the loop body: the switch itself
plus the loop's counter and the peer's stop check (a few instructions, the same for every
backend), or for sched rows the whole hop: yield, run queue and switch(es). switch-icount's
rows run in one callgrind process per job (`--batch`: each row warmed up once, then its two
runs counted as parts of their own), since callgrind's start-up, not the rows, was most of
the time: 29 rows took 19 s of two cores as 58 processes and take 4 s as two.

With --exe timer-icount the rows are timers/<workload>/<op>/<structure>/pending:N (switch-bench's
timers/ rows) and the unit is one arm, cancel or expire: timer-icount switches callgrind's
collection on only around that phase of each batch, so set-up and the other phases are not
counted, and the same differencing applies. With --exe peer-icount the rows are switch-bench's
peer/<runtime>/<loop> rows (our runtime, Boost.Fiber, GNU Pth: `peer-icount --list`), and the
unit is one hop, lock/unlock pair, signal or hand-off.

Counts are user-space instructions only (callgrind does not see the kernel), so ucontext's
rt_sigprocmask shows up as a handful of instructions, not as its real cost.

The JSON has Google Benchmark's shape so that compare.py can diff two of them, but there
real_time and cpu_time hold INSTRUCTIONS per unit, not nanoseconds ("time_unit" says "ns"
only because compare.py insists on a time unit).

usage: python3 -m experiments.icount [--bin DIR] [--exe switch-icount|timer-icount|peer-icount]
           [--rows ROW,...] [--loops A,B] [--jobs N] [--out-file FILE]
           [--expect ROW=LO..HI]   (exit 1 unless ROW's count lies in [LO, HI])
"""

import concurrent.futures
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BIN = os.path.join(ROOT, "build", "bin")
SCHED_FIBERS = 16
SINGULAR = {"switches": "switch", "hops": "hop", "calls": "call", "creates": "create",
            "pairs": "lock/unlock pair", "arms": "arm", "cancels": "cancel", "expires": "expire",
            "signals": "signal", "handoffs": "hand-off", "resumes": "resume"}


def two_loops(text):
    """The two loop lengths of a --loops argument ("A,B", 0 <= A < B): the counts are the
    difference of two runs, so the second must run more loops. ValueError otherwise."""
    try:
        loops = tuple(int(x) for x in text.split(","))
    except ValueError:
        loops = ()
    if len(loops) != 2 or loops[0] >= loops[1] or loops[0] < 0:
        raise ValueError(f"--loops wants two increasing counts, e.g. 1000,11000 (not {text!r})")
    return loops


def backends(icount_exe):
    out = subprocess.run([icount_exe, "--list"], check=True, capture_output=True, text=True)
    return out.stdout.split()


def default_rows(icount_exe):
    if os.path.basename(icount_exe) in ("timer-icount", "peer-icount"):
        return backends(icount_exe)  # their --list prints whole rows: timers/..., peer/...
    names = backends(icount_exe)
    rows = ["call/noinline"]
    rows += ["switch/" + b for b in names]
    rows += ["create/" + b for b in names]
    rows += ["sched/%s/%s/fibers:%d" % (p, b, SCHED_FIBERS) for p in ("star", "ring") for b in names]
    return rows


def callgrind_cmd(out_file, *args):
    """valgrind's command line for one counting run writing out_file (and, where the program
    dumps, out_file.1, .2, ...): totals only, uncompressed, for totals_of to read."""
    return ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_file,
            "--dump-line=no", "--compress-strings=no", "--compress-pos=no", *args]


def run_once(icount_exe, row, loops, workdir):
    """One callgrind run: returns (total instructions, {unit name: count})."""
    out_file = os.path.join(workdir, "cg.%s.%d" % (re.sub(r"[^A-Za-z0-9]+", "_", row), loops))
    cmd = callgrind_cmd(out_file, icount_exe, row, str(loops))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), proc.returncode,
                                                          proc.stderr[-2000:]))
    total = totals_of(out_file)
    os.unlink(out_file)
    if total is None:
        raise RuntimeError("no instruction total in callgrind output of " + row)
    return total, units_of(proc.stdout)


def totals_of(path):
    """The instruction total of one callgrind output file (None without one)."""
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
    return total


def event_totals(text):
    """{event: total} of a cachegrind (or callgrind) output file's text, from its `events:`
    and `summary:` lines; RuntimeError without both."""
    names = totals = None
    for line in text.splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith("summary:"):
            totals = [int(x) for x in line.split()[1:]]
    if not names or not totals or len(names) != len(totals):
        raise RuntimeError("no event summary in the output")
    return dict(zip(names, totals))


def instruction_counts(text):
    """{(object, function, address): instructions} of a callgrind output file's text, written
    with --dump-instr=yes --dump-line=no and uncompressed (callgrind_cmd): each cost line is
    "ADDRESS COUNT" under the latest ob= and fn=; the line after a calls= line is the call's
    inclusive cost, not the caller's own, and is skipped. A function that callgrind names once
    per recursion depth ("f'2") counts as one."""
    counts, obj, fn, skip = {}, None, None, False
    for line in text.splitlines():
        if skip:
            skip = False
        elif line.startswith("calls="):
            skip = True
        elif line.startswith("ob="):
            obj = line[3:]
        elif line.startswith("fn="):
            fn = line[3:].split("'")[0]
        elif line.startswith("0x"):
            addr, _, count = line.partition(" ")
            key = (obj, fn, int(addr, 16))
            counts[key] = counts.get(key, 0) + int(count.split()[0])
    return counts


def units_of(line):
    """{unit name: count} of a counting program's line "<row> <unit> <count> ..."."""
    words = line.split()
    return {words[i]: int(words[i + 1]) for i in range(1, len(words) - 1, 2)}


def result_of(row, short, long):
    """A row's result from its two runs, each (instructions, {unit: count})."""
    (short_ir, short_units), (long_ir, long_units) = short, long
    unit = next(iter(short_units))
    done = long_units[unit] - short_units[unit]
    result = {"row": row, "unit": unit, "per_unit": (long_ir - short_ir) / done,
              "units": done, "instructions": long_ir - short_ir}
    if "switches" in short_units and unit == "hops":
        result["switches_per_hop"] = (long_units["switches"] - short_units["switches"]) / done
    return result


# Programs that count many rows in one process (switch-icount --batch): callgrind's start-up,
# about half a second of a core, is then paid once per batch, not twice per row.
BATCHED = ("switch-icount",)


def measure_batch(icount_exe, rows, loops, workdir, tag):
    """Results of `rows` counted in one callgrind process: each row's two counted runs are
    the dumped parts 2i+1 and 2i+2 (part numbers from 1), its stdout lines 3i+1 and 3i+2 (line
    3i the uncounted warm-up's)."""
    out_file = os.path.join(workdir, "cg.batch.%d" % tag)
    cmd = callgrind_cmd(out_file, "--collect-atstart=no", icount_exe, "--batch", str(loops[0]),
                        str(loops[1]), *rows)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300 + 10 * len(rows))
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd[:8]) + " ...",
                                                          proc.returncode, proc.stderr[-2000:]))
    lines = proc.stdout.splitlines()
    if len(lines) != 3 * len(rows):
        raise RuntimeError("switch-icount --batch printed %d lines for %d rows" %
                           (len(lines), len(rows)))
    results = []
    for i, row in enumerate(rows):
        runs = []
        for k in (1, 2):
            part = "%s.%d" % (out_file, 2 * i + k)
            total = totals_of(part) if os.path.exists(part) else None
            if total is None:
                raise RuntimeError("no instruction total in callgrind's part %s (row %s)"
                                   % (part, row))
            runs.append((total, units_of(lines[3 * i + k])))
        results.append(result_of(row, *runs))
    return results


def measure(icount_exe, row, loops, workdir):
    return result_of(row, *[run_once(icount_exe, row, n, workdir) for n in loops])


def context(icount_exe, loops):
    ctx = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host_name": platform.node(), "executable": icount_exe,
           "measurement": "callgrind instruction counts: real_time and cpu_time are "
                          "INSTRUCTIONS per unit (switch, hop, create, call), not time",
           "loops": "%d and %d (differenced)" % tuple(loops),
           "kernel": "%s %s %s" % (platform.system(), platform.release(), platform.machine())}
    try:
        ctx["valgrind"] = subprocess.run(["valgrind", "--version"], capture_output=True,
                                         text=True).stdout.strip()
        out = subprocess.run([icount_exe, "--context"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(": ")
            ctx[key] = value
    except OSError:
        pass
    return ctx


def to_benchmarks(results):
    """Google Benchmark's JSON rows, one per measured row, named icount/<row>."""
    rows = []
    for i, r in enumerate(results):
        name = "icount/" + r["row"]
        row = {"name": name, "family_index": i, "per_family_instance_index": 0,
               "run_name": name, "run_type": "iteration", "repetitions": 1,
               "repetition_index": 0, "threads": 1, "iterations": 1,
               "real_time": r["per_unit"], "cpu_time": r["per_unit"], "time_unit": "ns",
               "instructions_per_unit": r["per_unit"], "unit": SINGULAR[r["unit"]]}
        if "switches_per_hop" in r:
            row["switches_per_hop"] = r["switches_per_hop"]
        rows.append(row)
    return rows


def run(bin_dir, rows=None, loops=(1000, 11000), jobs=2, log=sys.stderr,
        exe_name="switch-icount"):
    """Measure the rows; returns a Google-Benchmark-shaped dict. exe_name: switch-icount, or
    hook-icount for the hook/ and sync/ rows (harness/experiments/hooks.py)."""
    exe = os.path.join(bin_dir, exe_name)
    if not os.access(exe, os.X_OK):
        raise RuntimeError("%s not found: build first (./run.sh build)" % exe)
    if not shutil.which("valgrind"):
        raise RuntimeError("not run: valgrind is not installed")
    rows = rows or default_rows(exe)
    with tempfile.TemporaryDirectory(prefix="icount.") as workdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            if exe_name in BATCHED:
                # One process per job, the rows dealt round-robin: the rows' costs differ
                # by backend, and dealing mixes them.
                futures = [pool.submit(measure_batch, exe, rows[k::jobs], loops, workdir, k)
                           for k in range(min(jobs, len(rows)))]
                done = {r["row"]: r for f in futures for r in f.result()}
                results = [done[row] for row in rows]
            else:
                futures = [pool.submit(measure, exe, row, loops, workdir) for row in rows]
                results = [f.result() for f in futures]
            for r in results:
                print("icount: %-34s %8.2f instructions per %s" %
                      (r["row"], r["per_unit"], SINGULAR[r["unit"]]), file=log)
    return {"context": context(exe, loops), "benchmarks": to_benchmarks(results)}
