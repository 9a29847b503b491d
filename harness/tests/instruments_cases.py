#!/usr/bin/python3
"""Cases for harness/experiments/instruments.py: a tiny run gives every instrument its samples or a
not-run reason; without perf, and with a perf whose `perf bench` lacks the subcommand, perf's
instruments say `not run` with the reason while the minimal loop still measures.

usage: instruments_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
import sys
from pathlib import Path
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)

DRIVER = Path(__file__).resolve().parent.parent / "experiments" / "instruments.py"
PY = "/usr/bin/python3"
TINY = ["--rounds", "5", "--pipe-loops", "2000", "--syscall-loops", "20000",
        "--switch-loops", "2000"]
PERF = ("perf_sched_pipe", "perf_syscall_basic")


def problems(doc, rounds=5):
    """What is wrong with a driver's JSON: an instrument with neither its samples nor a
    not-run reason, a median outside its samples, an interval that misses the median."""
    out = []
    insts = doc.get("instruments") or {}
    if not any(n.startswith("minimal_loop") for n in insts) or not all(p in insts for p in PERF):
        out.append(f"instruments missing: {sorted(insts)}")
    for name, i in insts.items():
        if i.get("status") == "ok":
            s = i.get("samples") or []
            if len(s) != rounds:
                out.append(f"{name}: {len(s)} samples, want {rounds}")
            elif not (min(s) <= i.get("median", -1) <= max(s)):
                out.append(f"{name}: median {i.get('median')} outside its samples")
            elif not (i["ci95"][0] <= i["median"] <= i["ci95"][1]):
                out.append(f"{name}: interval {i['ci95']} misses the median")
        elif not str(i.get("reason", "")).strip():
            out.append(f"{name}: status {i.get('status')} without a reason")
    return out


def drive(a, *extra, out="instruments.json"):
    path = Path(a.work) / out
    p = subprocess.run([PY, DRIVER, "--build-dir", a.build_dir, *TINY, *extra,
                        "--out-file", path], capture_output=True, text=True, timeout=120)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr})")
    return json.loads(path.read_text())


def case_tiny(a):
    doc = drive(a)
    check(problems(doc) == [], f"every instrument complete: {problems(doc)}")
    insts = doc["instruments"]
    loops = [n for n in insts if n.startswith("minimal_loop/")]
    check(loops and all(insts[n]["status"] == "ok" for n in loops),
          f"the minimal loop measured every backend: {loops}")
    for n in PERF:
        i = insts[n]
        check(i["status"] == "ok" or i["reason"].startswith(("perf", "perf bench")),
              f"{n}: measured, or perf's reason ({i})")
        if i["status"] == "ok":
            check(len(i["raw_samples"]) == 5, f"{n}: perf's own figures kept")
    # The same check on a copy with one instrument's samples and reason taken away must fail:
    # it can tell.
    broken = json.loads(json.dumps(doc))
    victim = broken["instruments"][loops[0]]
    victim.update(status="not run", samples=[])
    check(problems(broken) != [], "the check finds an instrument with no samples and no reason")


def case_no_perf(a):
    doc = drive(a, "--perf", "/nonexistent/perf", out="no-perf.json")
    for n in PERF:
        i = doc["instruments"][n]
        check(i["status"] == "not run" and "perf not installed" in i["reason"],
              f"{n}: not run, perf not installed ({i})")
    check(problems(doc) == [], f"the rest complete: {problems(doc)}")
    check(doc["config"]["perf"] is None, "config says no perf")


def case_no_subcommand(a):
    # A perf whose bench has neither subcommand, as an older perf answers for an unknown one.
    fake = Path(a.work) / "perf"
    fake.write_text("#!/bin/sh\necho \"Unknown collection: '$2'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    doc = drive(a, "--perf", str(fake), out="no-subcommand.json")
    for n in PERF:
        i = doc["instruments"][n]
        check(i["status"] == "not run" and "Unknown collection" in i["reason"],
              f"{n}: not run with perf's own words ({i})")
        check(i["samples"] == [], f"{n}: no samples")
    check(not any(r["instrument"] in PERF for r in doc["runs"]), "no run recorded for perf")
    check(problems(doc) == [], f"the rest complete: {problems(doc)}")


def case_bad_args(a):
    refuses([PY, DRIVER, "--build-dir", a.build_dir], ["--rounds", "0"], ["--pipe-loops", "0"])


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                 ("--work", {"required": True})))
