#!/usr/bin/python3
"""Cases for the switch-cost regression gate (harness/regress.py): what it gates on which
machine, and that every part of it can fail. No valgrind, perf or timing run: each case
gates a stored measurement made from the committed baselines, doctored where the case needs.

usage: regress_cases.py CASE --work DIR
"""
import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
import regress  # noqa: E402
import regress_gate as G  # noqa: E402
from cases import check, run  # noqa: E402  (harness/tests/cases.py)

PY = "/usr/bin/python3"
BASELINES = HARNESS.parent / "results" / "baseline"
OTHER_CPU = {"model": "Example CPU 9000", "family": "99", "model_number": "1",
             "arch": "x86_64", "key": "example-cpu-9000-99-1"}


def committed_measurement():
    """A measurement as regress.py writes one, from the committed counts and the first
    committed timing baseline (whichever CPU model it is: the cases name no machine)."""
    timing = sorted((BASELINES / "timing").glob("*.json"))
    check(timing, f"a committed timing baseline under {BASELINES / 'timing'}")
    t = json.loads(timing[0].read_text())
    c = json.loads((BASELINES / "counts.json").read_text())
    return {"kind": "switchyard-regress", "meta": t["meta"], "cpu": t["cpu"],
            "counts": c["counts"], "timing": t["timing"]}


def gate(work, doc, *flags, baselines=BASELINES):
    path = Path(work) / "current.json"
    path.write_text(json.dumps(doc))
    p = subprocess.run([PY, HARNESS / "regress.py", "--compare", path, "--baseline-dir",
                        baselines, *flags], capture_output=True, text=True, timeout=60)
    print(p.stdout + p.stderr, end="")
    return p


def fails_on(p, check_name):
    return [ln[5:].split(": baseline")[0] for ln in p.stdout.splitlines()
            if ln.startswith("FAIL ")] == [check_name]


def case_baseline_passes(a):
    p = gate(a.work, committed_measurement())
    check(p.returncode == 0, "the baselines gated against themselves pass")
    check("not gated" not in p.stdout, "the timing part is gated on its own CPU model")
    check(" / floor " in p.stdout, "timing figures are printed")


def case_slowed_fails(a):
    doc = committed_measurement()
    p = gate(a.work, doc, "--doctor", "switch/asm=1.3", "--expect-failure", "switch/asm / floor")
    check(p.returncode == 0, "a backend 30% slower fails its own CPU model's timing gate")
    p = gate(a.work, doc, "--doctor", "sched/ring/asm/fibers:16=1.3")
    check(p.returncode == 1 and fails_on(p, "sched/ring/asm/fibers:16 / floor"),
          "a hop 30% slower fails, on that hop alone")


def case_noise_passes(a):
    doc = committed_measurement()
    samples = doc["timing"]["samples"]["switch/asm"]
    # Half the processes 3% slower: inside the tolerance, whatever the test says.
    samples[: len(samples) // 2] = [[t * 1.03 for t in per] for per in
                                    samples[: len(samples) // 2]]
    p = gate(a.work, doc)
    check(p.returncode == 0, "a 3% shift in half the processes is noise, not a regression")


def case_other_cpu_not_gated(a):
    doc = committed_measurement()
    doc["cpu"] = dict(OTHER_CPU)
    p = gate(a.work, doc, "--doctor", "switch/asm=3")
    check(p.returncode == 0, "timings of a CPU model without a baseline do not fail the gate")
    want = ("not gated: no baseline for Example CPU 9000 (record one with ./run.sh regress "
            "--update)")
    lines = [ln for ln in p.stdout.splitlines() if "not gated" in ln]
    check(len(lines) == 1 and lines[0].endswith(want), f"one line says why: {lines}")
    check(" / floor " not in p.stdout, "no timing figure is compared with another model's")


def case_other_cpu_baseline_unused(a):
    """A timing baseline file of one model is never read for another, even when it is the
    only one there: copy the committed one under the other model's name and make it fail."""
    work = Path(a.work)
    base = work / "baselines"
    (base / "timing").mkdir(parents=True, exist_ok=True)
    (base / "counts.json").write_text((BASELINES / "counts.json").read_text())
    doc = committed_measurement()
    foreign = {"kind": "switchyard-regress-timing", "meta": doc["meta"], "cpu": OTHER_CPU,
               "timing": copy.deepcopy(doc["timing"])}
    foreign["timing"]["samples"]["switch/asm"] = [[t / 3 for t in per] for per in
                                                  foreign["timing"]["samples"]["switch/asm"]]
    (base / "timing" / ("%s.json" % OTHER_CPU["key"])).write_text(json.dumps(foreign))
    p = gate(a.work, doc, baselines=base)
    check(p.returncode == 0 and "not gated: no baseline for %s" % doc["cpu"]["model"] in p.stdout,
          "the other model's baseline (3x faster asm) is not used")
    doc["cpu"] = OTHER_CPU
    p = gate(a.work, doc, baselines=base)
    check(p.returncode == 1 and fails_on(p, "switch/asm / floor"),
          "the same baseline gates the model it was recorded on")


def fails_on_every_model(a, doctor, check_name, what):
    """A count doctored by `doctor` fails the gate on exactly `check_name`, on the committed
    baseline's CPU model and on one with no baseline alike."""
    for cpu in (None, OTHER_CPU):
        doc = committed_measurement()
        if cpu:
            doc["cpu"] = dict(cpu)
        p = gate(a.work, doc, "--doctor", doctor, "--expect-failure", check_name)
        check(p.returncode == 0, "%s fails on %s" % (what, doc["cpu"]["model"]))


def case_icount_fails_everywhere(a):
    fails_on_every_model(a, "icount/switch/asm=1.10", "icount/switch/asm",
                         "an instruction count 10% higher")


def case_syscalls_fail_everywhere(a):
    fails_on_every_model(a, "syscalls/switch/asm=1", "syscalls/switch/asm",
                         "a system call added to every switch")


def case_switches_per_hop_fails(a):
    doc = committed_measurement()
    row = "sched/ring/asm/fibers:16"
    doc["counts"]["switches_per_hop"][row] = 2.0
    p = gate(a.work, doc)
    check(p.returncode == 1 and fails_on(p, row + " switches_per_hop"),
          "a ring hop that switches twice fails")


def case_update_refuses_dirty(a):
    repo = Path(a.work) / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "f.c").write_text("int x;\n")
    subprocess.run(git + ["add", "f.c"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "c"], check=True)
    check(regress.dirty_reason(repo) is None, "a clean tree may record a baseline")
    (repo / "results").mkdir()
    (repo / "results" / "out.json").write_text("{}")
    check(regress.dirty_reason(repo) is None, "output under results/ does not make it dirty")
    (repo / "f.c").write_text("int y;\n")
    why = regress.dirty_reason(repo)
    check(why and "uncommitted" in why, f"a changed file refuses --update ({why})")
    p = subprocess.run([PY, HARNESS / "regress.py", "--update", "--compare", "x.json"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and p.stderr.count("\n") == 1, "--update with --compare: one line")


def case_tolerance_from_spread(a):
    """The tolerance grows with the baseline's spread and never falls below the floor."""
    tight = [1.0, 1.001, 0.999, 1.0, 1.002, 0.998, 1.0, 1.001]
    wide = [1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 1.0, 0.97]
    check(G.tolerance(tight) == G.MIN_TIMING_TOLERANCE, "tight spread: the floor")
    check(G.tolerance(wide) >= 0.2, f"wide spread: at least its largest excursion "
          f"({G.tolerance(wide):.3f})")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
