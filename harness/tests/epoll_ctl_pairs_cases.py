#!/usr/bin/python3
"""Cases for epoll-ctl-pairs (harness/bench/epoll_ctl_pairs.c) and the switch step's reading of
it (lib/gbench.from_blocks): its blocks, its own count of epoll_ctl calls against the kernel's
tracepoint, its refusals, and the rows the switch step makes of its blocks.

usage: epoll_ctl_pairs_cases.py CASE --exe PATH --work DIR
"""
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)
from lib import gbench, meta, perf  # noqa: E402

EVENT = "syscalls:sys_enter_epoll_ctl"
SMALL = ["--levels", "10,100,1000", "--blocks", "7", "--pairs", "20"]


def measured(a, *args):
    p = subprocess.run([a.exe, *args], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"exit 0 (got {p.returncode}: {p.stderr.strip()})")
    return json.loads(p.stdout)


def case_blocks(a):
    """The blocks asked for, a positive time per pair for every level of every block, and the
    calls the setup and the blocks make: every level's registrations, then two per pair for
    the warm-up block's 100 pairs and the blocks' pairs on every level."""
    doc = measured(a, *SMALL)
    levels, rows = doc["levels"], doc["ns_per_pair"]
    check(doc["status"] == "ok" and levels == [10, 100, 1000], "ok, the levels asked for", doc)
    check(doc["blocks"] == 7 and len(rows) == 7, "7 blocks", len(rows))
    check(all(len(r) == 3 and all(v > 0 for v in r) for r in rows),
          "every level timed in every block", rows)
    want = sum(levels) + 2 * 3 * (100 + 7 * 20)
    check(doc["epoll_ctl_calls"] == want, "the calls it made", (doc["epoll_ctl_calls"], want))


def case_sized_by_time(a):
    """Without --pairs, the blocks are sized from the warm-up's price of each level's pair so
    that they take the seconds asked for: the pairs per block follow from the prices it
    reports, for a short and a four times longer budget, and the CPU time it says the blocks
    took is what its rows add up to. Nothing here depends on how fast the machine is."""
    for seconds in (0.1, 0.4):
        doc = measured(a, "--levels", "10,1000", "--blocks", "20", "--seconds", str(seconds))
        price = doc["warm_ns_per_pair"]
        check(len(price) == 2 and all(p > 0 for p in price), "a price for every level", price)
        want = min(max(round(seconds * 1e9 / (20 * sum(price))), 1), 1000000)
        check(abs(doc["pairs_per_block"] - want) <= max(1, want * 1e-3),
              f"the pairs that fill {seconds} s at the warm-up's prices",
              (doc["pairs_per_block"], want))
        rows = sum(sum(r) for r in doc["ns_per_pair"]) * doc["pairs_per_block"] / 1e9
        check(abs(doc["measured_s"] - rows) <= rows * 0.01 + 1e-5,
              "the seconds measured are the rows' sum", (doc["measured_s"], rows))


def case_kernel_count(a):
    """Its own count of epoll_ctl calls is the kernel's (the syscall tracepoint under perf
    stat), exactly; not run (77) where perf cannot count the tracepoint."""
    ok, why = meta.perf_available(EVENT)
    if not ok:
        print(f"not run: perf cannot count {EVENT}: {why}")
        raise SystemExit(77)
    out = Path(a.work) / "perf.txt"
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", EVENT, "-o", str(out), a.exe, *SMALL],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"perf stat exits 0 ({p.stderr.strip()})")
    ours = json.loads(p.stdout)["epoll_ctl_calls"]
    kernel = perf.parse_csv(out.read_text()).get(EVENT)
    check(kernel == ours, "the kernel counted the calls it says it made", (kernel, ours))


def case_fd_limit(a):
    """Too few file descriptors for the largest level: "not run" with the limit named, exit
    0 (a limit of the machine, not a failure)."""
    p = subprocess.run(["prlimit", "--nofile=200:200", a.exe, *SMALL], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"exit 0 (got {p.returncode}: {p.stderr.strip()})")
    status = json.loads(p.stdout)["status"]
    check(status.startswith("not run: RLIMIT_NOFILE 200 <"), "the limit named", status)


def case_bad_usage(a):
    refuses([a.exe], ["--pairs", "0"], ["--blocks", "x"], ["--levels", "10"],
            ["--levels", "100,10"], ["--levels", "10,,x"], ["--seconds", "0"],
            ["--seconds", "nan"], ["--bogus", "1"], ["--blocks"])


def case_rows(a):
    """The switch step's rows of its blocks: block b is repetition b of every level's row, so
    two rows pair by block, and each row's median is its blocks' median."""
    doc = measured(a, *SMALL)
    names = [f"syscall/epoll_ctl_add_del/registered:{n}" for n in doc["levels"]]
    entries = gbench.from_blocks(names, doc["ns_per_pair"], doc["pairs_per_block"],
                                 [{"registered": n} for n in doc["levels"]])
    reps = {}
    for e in entries:
        if e["run_type"] == "iteration":
            reps.setdefault(e["run_name"], {})[e["repetition_index"]] = e["cpu_time"]
    for i, name in enumerate(names):
        check(reps[name] == {b: row[i] for b, row in enumerate(doc["ns_per_pair"])},
              f"{name}: one repetition per block")
        med = next(e for e in entries if e["run_name"] == name and
                   e.get("aggregate_name") == "median")
        col = sorted(row[i] for row in doc["ns_per_pair"])
        check(med["cpu_time"] == col[len(col) // 2] and med["registered"] == doc["levels"][i],
              f"{name}: the median of its blocks, and its counter", med)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--exe", {"required": True}),
                 ("--work", {"required": True})))
