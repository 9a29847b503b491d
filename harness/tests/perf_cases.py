#!/usr/bin/python3
"""Cases for perf stat attached to a process (harness/lib/perf.py PerfStat): counting has begun
when the constructor returns and the counts are final once the process has gone, through
perf's control pipe and through the old start (a perf that refuses --control). Skipped (77)
where perf cannot count the syscall tracepoints (not root, no perf).

usage: perf_cases.py CASE --work DIR
"""
import os
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from lib import meta, perf  # noqa: E402

EVENT = "syscalls:sys_enter_getppid"
CALLS = 5000
# Says it has started, waits for a line on stdin, then makes CALLS getppid system calls (glibc
# does not cache it) and exits: every one of them comes after the attachment, and none waits for
# the interpreter's start-up, which would give a late attachment time to catch up.
TARGET = ("import os, sys\nprint('ready', flush=True)\nsys.stdin.readline()\n"
          f"for _ in range({CALLS}):\n    os.getppid()\n")


def need_perf():
    ok, why = meta.perf_available(EVENT)
    if not ok:
        print(f"not run: perf cannot count {EVENT}: {why}")
        raise SystemExit(77)


def counted(work):
    """getppid calls perf counted of a target told to start only once PerfStat returned."""
    target = subprocess.Popen([sys.executable, "-c", TARGET], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        check(target.stdout.readline().strip() == "ready", "the target started")
        pf = perf.PerfStat(target.pid, EVENT, work)
        target.stdin.write("go\n")
        target.stdin.close()
        check(target.wait(timeout=60) == 0, "the target exits 0")
        return pf, pf.result(wait=60).get(EVENT)
    finally:
        target.kill()
        target.wait()


def case_control(a):
    """Through the control pipe: every call counted, none missed before the enable."""
    need_perf()
    pf, n = counted(a.work)
    check(pf.controlled, "perf acknowledged the enable on its control pipe")
    check(n == CALLS, f"perf counted the target's {CALLS} getppid calls", n)


def case_no_control(a):
    """A perf without --control (a wrapper refusing it, first on PATH) is started the old way
    and counts the same."""
    need_perf()
    real = subprocess.run(["sh", "-c", "command -v perf"], capture_output=True,
                          text=True).stdout.strip()
    wrapper = Path(a.work) / "perf"
    wrapper.write_text("#!/bin/sh\n"
                       'for x in "$@"; do [ "$x" = --control ] && exit 129; done\n'
                       f'exec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    os.environ["PATH"] = f"{a.work}:{os.environ['PATH']}"
    pf, n = counted(a.work)
    check(not pf.controlled, "the refusal is noticed")
    check(n == CALLS, f"perf counted the target's {CALLS} getppid calls", n)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
