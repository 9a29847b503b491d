#!/usr/bin/python3
"""Cases for `./run.sh history` (plots/history.py): three run folders of two machines, one
of them a deliberately slowed run, made from the committed regression baselines.

usage: history_cases.py CASE --work DIR
"""
import copy
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from cases import check, run  # noqa: E402  (harness/tests/cases.py)

HARNESS = Path(__file__).resolve().parent.parent
BASELINES = HARNESS.parent / "results" / "baseline"
PY = "/usr/bin/python3"


def measurement(model, date, sha):
    t = json.loads(sorted((BASELINES / "timing").glob("*.json"))[0].read_text())
    c = json.loads((BASELINES / "counts.json").read_text())
    meta = dict(t["meta"], date=date, git_sha=sha, git_dirty=False, cpu_model=model)
    key = "-".join(model.lower().split())  # the gate's CPU key, as meta.cpu_identity words it
    return {"kind": "switchyard-regress", "meta": meta, "cpu": dict(t["cpu"], model=model, key=key),
            "counts": copy.deepcopy(c["counts"]), "timing": copy.deepcopy(t["timing"])}


def write_run(root, name, doc):
    folder = Path(root) / name
    folder.mkdir(parents=True)
    (folder / "switch-regress.json").write_text(json.dumps(doc))
    return folder


def make_runs(work):
    """Machine A: a run, the same again less one row, then asm 1.5x slower; machine B: one."""
    runs = Path(work) / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    a1 = measurement("Example A", "2026-01-01T00:00:00Z", "aaaaaaa00001")
    a2 = measurement("Example A", "2026-01-02T00:00:00Z", "aaaaaaa00002")
    del a2["timing"]["samples"]["switch/setjmp"]
    a3 = measurement("Example A", "2026-01-03T00:00:00Z", "aaaaaaa00003")
    a3["timing"]["samples"]["switch/asm"] = [[t * 1.5 for t in per] for per in
                                             a3["timing"]["samples"]["switch/asm"]]
    b1 = measurement("Example B", "2026-01-02T12:00:00Z", "bbbbbbb00001")
    # Written out of order: the history orders them, not the folder names.
    for name, doc in (("c", a3), ("z", a1), ("b", b1), ("m", a2)):
        write_run(runs, name, doc)
    return runs


def history(work, *args):
    p = subprocess.run([PY, HARNESS.parent / "plots" / "history.py", "--runs-root", Path(work) / "none",
                        "--out", Path(work) / "out", *map(str, args)],
                       capture_output=True, text=True, timeout=120, cwd=work)
    print(p.stdout + p.stderr, end="")
    return p


def case_slowed_run_marked(a):
    runs = make_runs(a.work)
    p = history(a.work, runs)
    check(p.returncode == 0, "history over three runs of two machines exits 0")
    out = Path(a.work) / "out"
    rows = list(csv.DictReader(open(out / "history.csv")))
    asm = [r for r in rows if r["figure"] == "switch/asm/floor" and r["machine"] ==
           "example-a"]
    check([r["commit"] for r in asm] == ["aaaaaaa00001", "aaaaaaa00002", "aaaaaaa00003"],
          f"machine A's runs in order: {[r['commit'] for r in asm]}")
    check([r["moved"] for r in asm] == ["", "", "up"], f"only the slowed run moved: "
          f"{[r['moved'] for r in asm]}")
    others = [r for r in rows if r["moved"] and r["figure"] != "switch/asm/floor"]
    check(not others, f"no other figure moved: {[(r['figure'], r['run']) for r in others]}")
    for machine in ("example-a", "example-b"):
        check((out / machine / "switch_asm_floor.png").exists(), f"{machine}: a chart")
    text = (out / "HISTORY.md").read_text()
    check("## Example A" in text and "## Example B" in text, "a section per machine")
    check("switch/setjmp/floor" in text.split("Figures a run lacks:")[1],
          "the run without switch/setjmp says so")


def case_one_run_and_choice(a):
    runs = make_runs(a.work)
    p = history(a.work, runs / "b", "icount/switch/asm")
    check(p.returncode == 0, "one run is enough")
    rows = list(csv.DictReader(open(Path(a.work) / "out" / "history.csv")))
    check({r["figure"] for r in rows} == {"icount/switch/asm"}, "only the chosen figure")
    p = history(a.work, runs, "icount/switch/nosuch")
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "nosuch" in p.stderr,
          "a figure no run has: one line, exit 2")
    p = history(a.work, runs, "--machine", "Example B", "--no-charts")
    rows = list(csv.DictReader(open(Path(a.work) / "out" / "history.csv")))
    check(p.returncode == 0 and {r["machine"] for r in rows} == {"example-b"}, "--machine")


def verdicts_doc(model, date, sha, value, low, high):
    meta = {"date": date, "git_sha": sha, "git_dirty": False, "cpu_model": model}
    fig = {"name": "throughput merged/naive", "value": value, "low": low, "high": high, "n": 5,
           "unit": "", "exact": False}
    other = {"name": "shown only", "value": value, "low": low, "high": high, "n": 5}
    return {"experiment": "verdicts", "meta": meta, "claims": [
        {"id": "C2", "verdict": "holds", "figures": [fig, other],
         "comparisons": [{"figure": fig["name"], "op": ">=", "threshold": 1.15}]}]}


def case_claim_figures(a):
    # A claim's deciding figure, read from verdicts.json: a move within its intervals is
    # noise, one that leaves them by more than the floor is marked; figures the rule did
    # not compare are not charted.
    runs = Path(a.work) / "claims"
    shutil.rmtree(runs, ignore_errors=True)
    for name, date, value, low, high in (("r1", "2026-01-01", 1.30, 1.25, 1.35),
                                         ("r2", "2026-01-02", 1.32, 1.27, 1.37),
                                         ("r3", "2026-01-03", 1.00, 0.97, 1.03)):
        folder = runs / name
        folder.mkdir(parents=True)
        (folder / "verdicts.json").write_text(json.dumps(verdicts_doc(
            "Example C", date + "T00:00:00Z", "c%011d" % int(name[1]), value, low, high)))
    p = history(a.work, runs)
    check(p.returncode == 0, "history over verdicts.json alone")
    rows = list(csv.DictReader(open(Path(a.work) / "out" / "history.csv")))
    figs = {r["figure"] for r in rows}
    check(figs == {"claim/C2: throughput merged/naive"}, f"the deciding figure only: {figs}")
    moves = [r["moved"] for r in rows]
    check(moves == ["", "", "down"], f"only the drop is marked: {moves}")
    check([r["n"] for r in rows] == ["5"] * 3, "n as the report computed it")


def case_bad_input(a):
    p = history(a.work, Path(a.work) / "empty-and-missing")
    check(p.returncode == 2 and p.stderr.count("\n") == 1, "no run folder: one line, exit 2")
    bad = Path(a.work) / "bad"
    shutil.rmtree(bad, ignore_errors=True)
    bad.mkdir(parents=True)
    (bad / "switch-regress.json").write_text("{not json")
    p = history(a.work, bad)
    check(p.returncode == 2 and "not valid JSON" in p.stderr, "malformed JSON: one line")


def refused(p, needle):
    return p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and \
        needle in p.stderr and "Traceback" not in p.stderr and len(p.stderr) < 500


def case_cpu_key_groups(a):
    """Two runs with one model string but other family/model numbers (the gate's CPU key) are
    two machines: asm 1.5x slower on the second is no move."""
    runs = Path(a.work) / "keys"
    shutil.rmtree(runs, ignore_errors=True)
    one = measurement("AMD EPYC Processor", "2026-01-01T00:00:00Z", "aaaaaaa00001")
    two = measurement("AMD EPYC Processor", "2026-01-02T00:00:00Z", "aaaaaaa00002")
    one["cpu"].update(family="23", model_number="1", key="amd-epyc-processor-23-1")
    two["cpu"].update(family="23", model_number="49", key="amd-epyc-processor-23-49")
    two["timing"]["samples"]["switch/asm"] = [[t * 1.5 for t in per] for per in
                                              two["timing"]["samples"]["switch/asm"]]
    write_run(runs, "one", one)
    write_run(runs, "two", two)
    p = history(a.work, runs, "switch/asm/", "--no-charts")
    rows = list(csv.DictReader(open(Path(a.work) / "out" / "history.csv")))
    machines = sorted({r["machine"] for r in rows})
    check(p.returncode == 0 and machines == ["amd-epyc-processor-23-1",
                                             "amd-epyc-processor-23-49"],
          f"one machine per CPU key: {machines}")
    check(not [r for r in rows if r["moved"]], "no move between two machines")


def case_malformed_run_files(a):
    bad = Path(a.work) / "malformed"
    good = measurement("Example A", "2026-01-01T00:00:00Z", "aaaaaaa00001")
    for name, text in (("verdicts.json", '{"claims": null}'),
                       ("switch.json", '{"benchmarks": null}'),
                       ("switch.json", '{"benchmarks": [{"run_type": "iteration"}]}'),
                       ("peers.json", '{"ratios": [{"per_round": ["x"]}]}'),
                       ("switch-regress.json", json.dumps(dict(good, timing=None))),
                       ("verdicts.json", json.dumps(verdicts_doc("M", "d", "s", "x", 1, 2)))):
        shutil.rmtree(bad, ignore_errors=True)
        bad.mkdir(parents=True)
        (bad / name).write_text(text)
        if name == "peers.json":  # read only beside a run's other files
            (bad / "switch-regress.json").write_text(json.dumps(good))
        p = history(a.work, bad, "--no-charts")
        check(refused(p, name), f"{name} {text[:60]}: one line naming it, exit 2",
              (p.returncode, p.stderr[-300:]))


def jittered(doc, rng, spread=0.02):
    """doc with each timing row's samples scaled by its own factor within 1 +- spread: runs
    of one machine never measure alike."""
    for row, per in doc["timing"]["samples"].items():
        f = 1 + rng.uniform(-spread, spread)
        doc["timing"]["samples"][row] = [[t * f for t in p] for p in per]
    return doc


def case_change_points(a):
    """Twelve runs of one machine, every row jittered by 2% a run: switch/asm 20% slower from
    the seventh run on, and one run (the third) with switch/setjmp 40% off on its own. The
    history marks the seventh run's switch/asm as the step up, and nothing else: one run far
    off is not a step (run against run before, it would be marked up, then down). An exact
    count steps too: the fiber server's eager policy makes one more system call a request
    from the ninth run on (a read added on purpose)."""
    import random
    rng = random.Random(5)
    runs = Path(a.work) / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    for i in range(12):
        doc = jittered(measurement("Example C", f"2026-02-{i + 1:02d}T00:00:00Z",
                                   f"ccccccc000{i:02d}"), rng)
        samples = doc["timing"]["samples"]
        if i >= 6:
            samples["switch/asm"] = [[t * 1.2 for t in per] for per in samples["switch/asm"]]
        if i == 2:
            samples["switch/setjmp"] = [[t * 1.4 for t in per] for per in
                                        samples["switch/setjmp"]]
        if i >= 8:
            doc["counts"]["io_syscalls"]["fiber/eager"] += 1
        write_run(runs, f"r{i:02d}", doc)
    p = history(a.work, runs, "--no-charts")
    check(p.returncode == 0, "history over twelve runs exits 0", p.stderr)
    rows = list(csv.DictReader(open(Path(a.work) / "out" / "history.csv")))
    marked = sorted((r["figure"], r["commit"], r["moved"]) for r in rows if r["moved"])
    print("marked:", marked)
    check(marked == [("iopath/fiber/eager/syscalls", "ccccccc00008", "up"),
                     ("switch/asm/floor", "ccccccc00006", "up")],
          "only the steps of switch/asm, at the seventh run, and of the eager policy's system"
          " calls, at the ninth", marked)
    text = (Path(a.work) / "out" / "HISTORY.md").read_text()
    check("change point" in text, "HISTORY.md says how a step is found")


def case_bad_paths(a):
    runs = make_runs(a.work)
    p = history(a.work, "/nonexistent")
    check(refused(p, "/nonexistent: no such run folder"), "a path that does not exist",
          p.stderr)
    p = history(a.work, "a/" * 50000)
    check(refused(p, "characters"), "a 100 KB path: one short line", p.stderr[:300])
    p = history(a.work, runs, "switch/", "--no-charts", "--out", "/dev/null/x")
    check(refused(p, "--out"), "an --out that cannot be made", p.stderr)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
