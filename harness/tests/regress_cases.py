#!/usr/bin/python3
"""Cases for the switch-cost regression gate (harness/gate/regress.py): what it gates on which
machine, and that every part of it can fail. No valgrind, perf or timing run: each case
gates a stored measurement made from the committed baselines, doctored where the case needs.

usage: regress_cases.py CASE --work DIR
"""
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from gate import regress  # noqa: E402
from gate import regress_gate as G  # noqa: E402
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
    p = subprocess.run([PY, HARNESS / "gate" / "regress.py", "--compare", path, "--baseline-dir",
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


def case_io_read_path_fails_everywhere(a):
    """One read more per request of the fiber server (+1 system call per request, what the
    eager policy's empty read costs) fails the IO-path count gate on any CPU, and so do 5% more
    instructions per request."""
    doc = committed_measurement()
    check("io_syscalls" in doc["counts"], "the committed counts have IO-path rows")
    fails_on_every_model(a, "iopath/fiber/adaptive/syscalls=1", "iopath/fiber/adaptive/syscalls",
                         "a system call added to every request")
    fails_on_every_model(a, "iopath/fiber/adaptive/instructions=1.05",
                         "iopath/fiber/adaptive/instructions", "5% more instructions per request")


def case_cache_misses_fail_everywhere(a):
    """A cache line more read per copy-stack resume at 10^5 fibers (cachegrind, the AMD EPYC
    VM's geometry): what a record layout that spread its hot fields would cost."""
    doc = committed_measurement()
    check("cache_misses" in doc["counts"], "the committed counts have cache-miss rows")
    row = "cachegrind/copystack/resume/bytes:8/fibers:100000/LL"
    fails_on_every_model(a, row + "=1", row, "a line more missed per resume")


def case_switches_per_hop_fails(a):
    doc = committed_measurement()
    row = "sched/ring/asm/fibers:16"
    doc["counts"]["switches_per_hop"][row] = 2.0
    p = gate(a.work, doc)
    check(p.returncode == 1 and fails_on(p, row + " switches_per_hop"),
          "a ring hop that switches twice fails")


def scratch_repo(work):
    """work/repo: a fresh git repository with one committed file, f.c."""
    repo = Path(work) / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "f.c").write_text("int x;\n")
    subprocess.run(git + ["add", "f.c"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "c"], check=True)
    return repo


def case_update_refuses_dirty(a):
    repo = scratch_repo(a.work)
    check(regress.dirty_reason(repo) is None, "a clean tree may record a baseline")
    (repo / "results").mkdir()
    (repo / "results" / "out.json").write_text("{}")
    check(regress.dirty_reason(repo) is None, "output under results/ does not make it dirty")
    (repo / "f.c").write_text("int y;\n")
    why = regress.dirty_reason(repo)
    check(why and "uncommitted" in why, f"a changed file refuses --update ({why})")
    p = subprocess.run([PY, HARNESS / "gate" / "regress.py", "--update", "--compare", "x.json"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and p.stderr.count("\n") == 1, "--update with --compare: one line")


def one_line_refusal(p, needle):
    return p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and \
        needle in p.stderr and "Traceback" not in p.stderr


# Contents of a counts baseline the gate cannot judge by, by what is wrong with them.
BAD_COUNTS = {"empty object": "{}", "no rows": '{"counts": {}}', "null": "null", "list": "[]",
              "string": '"x"', "no instructions": '{"counts": {"instructions": {}}}',
              "null rows": '{"counts": {"instructions": null}}',
              "NaN": '{"counts": {"instructions": {"switch/asm": NaN}}}',
              "zero": '{"counts": {"instructions": {"switch/asm": 0}}}',
              "string value": '{"counts": {"instructions": {"switch/asm": "12"}}}',
              "bad hop": '{"counts": {"instructions": {"a": 1}, "switches_per_hop": {"x": 1}}}'}


def bad_timings(doc):
    """{what is wrong: text of a timing baseline} made from a good one."""
    def with_samples(fn):
        t = copy.deepcopy(doc)
        fn(t["timing"]["samples"])
        return json.dumps(t)
    out = {"null": "null", "list": "[]", "empty object": "{}", "timing null":
           json.dumps(dict(doc, timing=None)), "samples null": json.dumps(
               dict(doc, timing=dict(doc["timing"], samples=None)))}
    out["zero sample"] = with_samples(lambda s: s["switch/asm"][0].__setitem__(0, 0))
    out["string sample"] = with_samples(lambda s: s["switch/asm"][0].__setitem__(0, "1"))
    out["no processes"] = with_samples(lambda s: s.__setitem__("switch/asm", []))
    out["no floor"] = with_samples(lambda s: s.pop("switch/floor"))
    out["NaN sample"] = with_samples(lambda s: s["switch/asm"][0].__setitem__(0, 1e999)) \
        .replace("Infinity", "NaN")
    return out


def case_malformed_baseline_refused(a):
    """A baseline the gate cannot judge by is refused, never read as 'every row is new'."""
    doc = committed_measurement()
    base = Path(a.work) / "baselines"
    (base / "timing").mkdir(parents=True, exist_ok=True)
    timing = base / "timing" / ("%s.json" % doc["cpu"]["key"])
    good_timing = sorted((BASELINES / "timing").glob("*.json"))[0].read_text()
    timing.write_text(good_timing)
    good_counts = (BASELINES / "counts.json").read_text()
    for what, text in dict(BAD_COUNTS, truncated=good_counts[:len(good_counts) // 2]).items():
        (base / "counts.json").write_text(text)
        p = gate(a.work, doc, baselines=base)
        check(one_line_refusal(p, "counts.json"), f"counts.json {what}: one line, exit 2",
              (p.returncode, p.stderr))
    (base / "counts.json").write_text(good_counts)
    for what, text in bad_timings(json.loads(good_timing)).items():
        timing.write_text(text)
        p = gate(a.work, doc, baselines=base)
        check(one_line_refusal(p, timing.name), f"timing baseline {what}: one line, exit 2",
              (p.returncode, p.stderr))
    timing.write_text(good_timing)
    p = gate(a.work, doc, baselines=base)
    check(p.returncode == 0, "the good baselines restored pass")


def case_baseline_checked_before_measuring(a):
    """A malformed baseline is refused at once, before a minute of measuring: with no binaries
    at all, the refusal names the baseline, not the missing switch-bench."""
    base = Path(a.work) / "baselines"
    base.mkdir(parents=True, exist_ok=True)
    (base / "counts.json").write_text('{"counts": ')
    p = subprocess.run([PY, HARNESS / "gate" / "regress.py", "--bin", Path(a.work) / "no-bin",
                        "--baseline-dir", base], capture_output=True, text=True, timeout=60)
    print(p.stdout + p.stderr, end="")
    check(one_line_refusal(p, str(base / "counts.json")), "the baseline is named, exit 2",
          (p.returncode, p.stderr))
    check("regress: instruction counts" not in p.stderr, "nothing was measured")


def case_malformed_measurement_refused(a):
    doc = committed_measurement()
    for what, change in (("cpu null", ("cpu", None)), ("counts list", ("counts", [])),
                         ("timing string", ("timing", "x"))):
        p = gate(a.work, dict(doc, **{change[0]: change[1]}))
        check(one_line_refusal(p, "current.json"), f"a measurement with {what}: exit 2",
              (p.returncode, p.stderr))


def case_update_asks_git(a):
    """--update asks git whether the tree is clean even when SWITCHYARD_GIT_SHA (what CI sets)
    names the commit, and refuses when git cannot tell."""
    repo = scratch_repo(a.work)
    os.environ["SWITCHYARD_GIT_SHA"] = "c8fbe7bd380e"
    check(regress.dirty_reason(repo) is None, "a clean tree may record a baseline")
    (repo / "f.c").write_text("int y;\n")
    why = regress.dirty_reason(repo)
    check(why and "uncommitted" in why, f"the variable does not hide a changed file ({why})")
    (repo / ".git" / "index").write_bytes(b"not an index")
    why = regress.dirty_reason(repo)
    check(why and "cannot tell" in why, f"a tree git cannot read is refused ({why})")


def case_tolerance_from_spread(a):
    """The tolerance grows with the baseline's spread and never falls below the floor."""
    tight = [1.0, 1.001, 0.999, 1.0, 1.002, 0.998, 1.0, 1.001]
    wide = [1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 1.0, 0.97]
    check(G.tolerance(tight) == G.MIN_TIMING_TOLERANCE, "tight spread: the floor")
    check(G.tolerance(wide) >= 0.2, f"wide spread: at least its largest excursion "
          f"({G.tolerance(wide):.3f})")


def figure_lines(p):
    """{figure: its line} of a gate's output; a figure named twice fails the case."""
    out = {}
    for ln in p.stdout.splitlines():
        if ln.startswith("regress: ok "):
            name = ln[len("regress: ok "):].strip().split("  ")[0]
        elif ln.startswith("FAIL "):
            name = ln[len("FAIL "):].split(": baseline")[0]
        else:
            continue
        check(name not in out, f"{name}: one line", (out.get(name), ln))
        out[name] = ln
    return out


def case_one_line_per_figure(a):
    """Every figure the gate judges is one line: the value, the limit and why it passed, or
    its FAIL line alone; a summary line ends the output."""
    doc = committed_measurement()
    c = doc["counts"]
    want = sum(len(c.get(kind["block"], {})) for kind in G.COUNT_KINDS) + \
        len(c["switches_per_hop"]) + len(G.figures(doc["timing"]))
    p = gate(a.work, doc)
    lines = figure_lines(p)
    check(len(lines) == want, f"{want} figures, one line each", len(lines))
    check(all(" limit " in ln and ln.count(": ") >= 1 for ln in lines.values()),
          "each says its limit and why it passed", [ln for ln in lines.values()
                                                    if " limit " not in ln][:3])
    last = p.stdout.splitlines()[-1]
    check(last.startswith("regress: pass: %d figures" % want), "the summary last", last)
    p = gate(a.work, doc, "--doctor", "icount/switch/asm=1.5")
    lines = figure_lines(p)
    check(len(lines) == want and lines["icount/switch/asm"].startswith("FAIL "),
          "a failing figure is its FAIL line alone", lines.get("icount/switch/asm"))
    last = p.stdout.splitlines()[-1]
    check(last.startswith("regress: FAIL: 1 of %d figures" % want) and
          last.endswith(": icount/switch/asm"), "the summary names it", last)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
