#!/usr/bin/python3
"""misscount.py - cache misses per unit of a switch-icount row, counted by cachegrind.

Runs build/bin/switch-icount under `valgrind --tool=cachegrind` twice per row, with two loop
lengths, and divides the difference of the two runs' miss totals by the difference of their
units (experiments/icount.py's differencing: set-up and teardown cancel out). The cache is the
2-core AMD EPYC VM's (family 23 model 1): 32 KiB 8-way L1 for data and for instructions, and for the last
level the 8 MiB 16-way L3 (cachegrind models two levels; its 512 KiB L2 as the last level gave
the same counts for the copy-stack rows, whose records at 10^5 fibers fit neither). A copy-stack
resume's misses are the distinct lines it reads that no recent resume left in the cache: with
10^5 fibers, every line of the resumed fiber's record and saved live part. Cachegrind ignores
software prefetches, so these counts are the lines a prefetch has to hide, not what is left.

Each row gives two figures: `<row>/D1` (first-level data misses, reads and writes) and
`<row>/LL` (last-level data misses), per unit.

usage: misscount.py [--bin DIR] [--rows ROW,...] [--loops A,B]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from lib import callgrind, meta

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "bin")
GEOMETRY = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]
ROWS = ["copystack/resume/bytes:8/fibers:%d" % f for f in (1, 100000)]
LOOPS = (20000, 220000)


def run_once(exe, row, loops, workdir):
    """(events {name: total}, units {name: count}) of one cachegrind run."""
    out_file = os.path.join(workdir, "cg.%d" % loops)
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *GEOMETRY,
           "--cachegrind-out-file=" + out_file, exe, row, str(loops)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), proc.returncode,
                                                          proc.stderr[-2000:]))
    with open(out_file) as f:
        text = f.read()
    os.unlink(out_file)
    try:
        events = callgrind.event_totals(text)
    except RuntimeError:
        raise RuntimeError("no event summary in cachegrind's output of " + row) from None
    return events, callgrind.units_of(proc.stdout)


def measure(exe, row, loops):
    with tempfile.TemporaryDirectory(prefix="misscount.") as workdir:
        (ea, ua), (eb, ub) = [run_once(exe, row, n, workdir) for n in loops]
    unit = next(iter(ua))
    done = ub[unit] - ua[unit]
    if done <= 0:
        raise RuntimeError("%s: the two loop lengths ran the same number of %s" % (row, unit))

    def per(*events):
        return sum(eb[e] - ea[e] for e in events) / done
    return {"%s/D1" % row: per("D1mr", "D1mw"), "%s/LL" % row: per("DLmr", "DLmw")}


def run(bin_dir, rows=None, loops=LOOPS, log=sys.stderr):
    """{"<row>/D1": misses per unit, "<row>/LL": ...} for every row."""
    exe = os.path.join(bin_dir, "switch-icount")
    if not os.access(exe, os.X_OK):
        raise RuntimeError("%s not found: build first (./run.sh build)" % exe)
    if not shutil.which("valgrind"):
        raise RuntimeError("not run: valgrind is not installed")
    out = {}
    for row in rows or ROWS:
        figures = measure(exe, row, loops)
        for name, value in figures.items():
            print("misscount: %-44s %7.3f misses per unit" % (name, value), file=log)
        out.update(figures)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=DEFAULT_BIN, help="directory with switch-icount")
    ap.add_argument("--rows", help="comma-separated switch-icount rows (default: %s)"
                    % ",".join(ROWS))
    ap.add_argument("--loops", default="%d,%d" % LOOPS, help="the two loop lengths")
    args = ap.parse_args()
    try:
        loops = callgrind.two_loops(args.loops)
    except ValueError as e:
        print("misscount.py: %s" % e, file=sys.stderr)
        return 2
    try:
        figures = run(args.bin, args.rows.split(",") if args.rows else None, loops)
    except RuntimeError as e:
        print("misscount.py: %s" % e, file=sys.stderr)
        return 1
    meta.emit_json(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
