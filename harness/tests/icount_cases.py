#!/usr/bin/python3
"""Cases for callgrind's counting (harness/lib/callgrind.py): switch-icount's rows counted in
one process (--batch) give the counts a process per run gives, and --batch refuses what it
cannot count.

usage: icount_cases.py CASE --bin DIR
"""
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)
from lib import callgrind  # noqa: E402

# One row of each kind: a switch pair, a create, a scheduler hop.
ROWS = ["switch/asm", "create/cc", "sched/ring/asm/fibers:16"]
LOOPS = (100, 1100)
# Instructions per unit the two ways may differ by: a process per run also counts its exit,
# whose output differs by a digit between the two loop lengths (about 0.003 per unit at
# 1,000 units); a row counted with its set-up, or without its warm-up, is off by tens to
# hundreds.
AGREE = 0.05


def case_batch_agrees(a):
    """Every row's instructions per unit from one --batch process match two processes'."""
    exe = str(Path(a.bin) / "switch-icount")
    with tempfile.TemporaryDirectory(prefix="icount-cases.") as work:
        batch = callgrind.measure_batch(exe, ROWS, LOOPS, work, 0)
        alone = [callgrind.measure(exe, row, LOOPS, work) for row in ROWS]
    for b, s in zip(batch, alone):
        check(b["row"] == s["row"] and b["units"] == s["units"], "the same row and units",
              (b, s))
        check(abs(b["per_unit"] - s["per_unit"]) <= AGREE,
              f"{s['row']}: batched {b['per_unit']:.4f} against {s['per_unit']:.4f} alone")


def case_batch_usage(a):
    """Loop counts out of order, no row, or no callgrind underneath: exit 2 and a message."""
    exe = Path(a.bin) / "switch-icount"
    refuses([exe, "--batch"], ["1100", "100", "switch/asm"], ["100", "1100"],
            ["x", "1100", "switch/asm"])
    p = subprocess.run([str(exe), "--batch", "100", "1100", "switch/asm"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 2 and "valgrind" in p.stderr, "outside callgrind: exit 2, says why",
          (p.returncode, p.stderr))


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--bin", {"required": True})))
