#!/usr/bin/python3
"""Cases for the project's JSON: what it writes is valid RFC 8259 JSON (no NaN or Infinity:
they become null), and what reads a run's JSON takes null where NaN was.

usage: json_cases.py CASE --work DIR
"""
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
ROOT = HARNESS.parent
sys.path.insert(0, str(HARNESS))
import json_fuzz as Z  # noqa: E402
from lib import meta  # noqa: E402
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from experiments import _step  # noqa: E402

PY = "/usr/bin/python3"


def strict(text):
    """json.loads that refuses NaN, Infinity and -Infinity, as RFC 8259 does."""
    def refuse(c):
        raise ValueError(f"{c} is not JSON")
    return json.loads(text, parse_constant=refuse)


def case_writer_maps_nan_to_null(a):
    doc = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": (2, math.nan), "e": "NaN"}
    want = {"a": None, "b": [1.5, None, {"c": None}], "d": [2, None], "e": "NaN"}
    check(strict(meta.json_text(doc)) == want, "meta.json_text: NaN and infinities as null")
    path = Path(a.work) / "step.json"
    _step.write_json(path, doc)
    check(strict(path.read_text()) == want, "an experiment's file (switch.json's writer)")
    path = Path(a.work) / "emit.json"
    meta.emit_json(doc, path)
    check(strict(path.read_text()) == want, "a driver's --out-file")


def nan_counters(doc):
    """doc with every Google Benchmark counter of its `benchmarks` rows that is null written
    as NaN, as the project wrote a counter the library could not compute before its writer
    turned NaN into null; how many were."""
    n = 0
    for row in doc.get("benchmarks") or []:
        for key, value in row.items():
            if value is None:
                row[key] = math.nan
                n += 1
    return doc, n


def case_reference_with_null_for_nan(a):
    """A run folder from before the writer turned NaN into null held NaN where Google
    Benchmark could not compute a counter; the reference written either way, NaN there or
    null, reaches the same verdicts. Both are made from the committed reference, whichever
    way it was written."""
    verdicts = {}
    for name in ("nan", "null"):
        folder = Path(a.work) / name
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(ROOT / "results" / "reference", folder)
        made = 0
        for p in folder.glob("*.json"):
            doc = json.loads(p.read_text())  # takes NaN, as the readers do
            if name == "nan":
                doc, n = nan_counters(doc)
                made += n + p.read_text().count("NaN")
                p.write_text(json.dumps(doc, indent=1))
            else:
                p.write_text(meta.json_text(doc))
        if name == "nan":
            check(made, "the reference has counters Google Benchmark could not compute, as NaN "
                  "or null (else this case tests nothing)")
        else:
            check(not [p for p in folder.glob("*.json") if "NaN" in p.read_text()],
                  "no NaN left")
        p = subprocess.run([PY, ROOT / "plots" / "report.py", folder, "--no-charts",
                            "--no-reference"], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"report on the reference ({name})", p.stderr[-2000:])
        doc = strict((folder / "verdicts.json").read_text())
        verdicts[name] = {c["id"]: c["verdict"] for c in doc["claims"]}
    check(verdicts["nan"] == verdicts["null"], "the same verdicts", verdicts)


# Fields the reader does not read (what they hold is told, never judged), by path prefix: a
# malformed value there may pass; everywhere else it must be refused.
NOT_READ = {"regress": ("meta.", "cpu.arch", "cpu.family", "cpu.model_number",
                        "counts.icount_context", "timing.unit", "timing.config"),
            "history": ("meta.", "cpu.arch", "cpu.family", "cpu.model_number",
                        "counts.icount_context", "timing.unit", "timing.config", "experiment")}


def same_type(original, what, text, kinds):
    """Whether a variant put a value of the type that was there, of those in kinds ("x" for a
    string; 0 for a number, [] for a list: a value to a reader that does not judge figures,
    and where an empty list means no data it may refuse it), or an equal one."""
    path = what.split(" = ")[0]
    was = Z.value_at(original, path)
    for new, kind in kinds:
        if what == f"{path} = {new}" and isinstance(was, kind) and not isinstance(was, bool):
            return True
    return " = " in what and json.loads(text) == original


STRING = (('"x"', str),)
VALUE = STRING + (("0", (int, float)), ("[]", list))


def shard(every):
    """Which of `every` variants a case that takes one in `every` takes (0 to every - 1):
    SWITCHYARD_FUZZ_SHARD when set, to run a failure's again, else the commit's hash modulo
    `every`. The runs of one commit take the same variants; successive commits' CI runs take
    different ones, and between them every variant."""
    if every <= 1:
        return 0
    given = os.environ.get("SWITCHYARD_FUZZ_SHARD")
    if given is not None:
        return int(given) % every
    p = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                       text=True)
    head = p.stdout.strip() if p.returncode == 0 else ""
    return int(head[:8], 16) % every if head else 0


def fuzz(target, main, argv, not_read, every=1, kinds=STRING):
    """The variants of target's file (json_fuzz.variants) through main, one in `every` (which
    one: shard()): never a traceback; a refusal (one line, exit 2) unless the variant only
    changes a field the reader does not read or puts a value of the type that was there
    (kinds: see same_type). Returns the problems and the number run."""
    good = target.read_text()
    original = json.loads(good)
    problems, n, offset = [], 0, shard(every)
    for i, (what, text) in enumerate(Z.variants(good)):
        if i % every != offset:
            continue
        target.write_text(text)
        n += 1
        rc, err, tb = Z.outcome(main, argv)
        path = what.split(" = ")[0]
        lenient = f"{target.name} {path}".startswith(not_read) or path.startswith(
            not_read) or same_type(original, what, text, kinds) or (
            f"{target.name} {path}".startswith(NULLABLE) and what.endswith(("= null", "= NaN")))
        why = Z.judged(f"{target.name} {what}", rc, err, tb)
        if tb or (why and not lenient) or (lenient and rc not in (0, 2)):
            problems.append(why)
    target.write_text(good)
    return problems, n


def regress_files(work):
    """A baseline folder and a measurement from the committed baselines."""
    base = Path(work) / "baselines"
    shutil.rmtree(base, ignore_errors=True)
    (base / "timing").mkdir(parents=True)
    timing = sorted((ROOT / "results" / "baseline" / "timing").glob("*.json"))[0]
    (base / "timing" / timing.name).write_text(timing.read_text())
    counts = ROOT / "results" / "baseline" / "counts.json"
    (base / "counts.json").write_text(counts.read_text())
    t, c = json.loads(timing.read_text()), json.loads(counts.read_text())
    cur = Path(work) / "current.json"
    cur.write_text(json.dumps({"kind": "switchyard-regress", "meta": t["meta"], "cpu": t["cpu"],
                               "counts": c["counts"], "timing": t["timing"]}))
    return base, base / "timing" / timing.name, cur


def case_fuzz_regress(a):
    from gate import regress
    base, timing, cur = regress_files(a.work)
    argv = ["--compare", str(cur), "--baseline-dir", str(base)]
    check(Z.outcome(regress.main, argv)[0] == 0, "the unchanged files pass")
    problems, n = [], 0
    for target in (base / "counts.json", timing, cur):
        found, count = fuzz(target, regress.main, argv, NOT_READ["regress"])
        problems, n = problems + found, n + count
    check(n > 300 and not problems, f"{len(problems)} of {n} variants", problems[:5])


def case_fuzz_history(a):
    import history  # plots/history.py, on the PYTHONPATH
    _, _, cur = regress_files(a.work)
    run_dir = Path(a.work) / "runs" / "r1"
    shutil.rmtree(run_dir.parent, ignore_errors=True)
    run_dir.mkdir(parents=True)
    (run_dir / "switch-regress.json").write_text(cur.read_text())
    verdicts = {"experiment": "verdicts", "meta": {"git_sha": "c1", "date": "2026-01-01"},
                "claims": [{"id": "C2", "verdict": "holds", "figures": [
                    {"name": "f", "value": 1.3, "low": 1.2, "high": 1.4, "n": 5}],
                    "comparisons": [{"figure": "f", "op": ">=", "threshold": 1.15}]}]}
    (run_dir / "verdicts.json").write_text(json.dumps(verdicts))
    argv = [str(run_dir), "--runs-root", str(Path(a.work) / "none"), "--no-charts",
            "--out", str(Path(a.work) / "out")]
    check(Z.outcome(history.main, argv)[0] == 0, "the unchanged run is charted")
    problems, n = [], 0
    for name in ("switch-regress.json", "verdicts.json"):
        found, count = fuzz(run_dir / name, history.main, argv, NOT_READ["history"], 2)
        problems, n = problems + found, n + count
    check(n > 75 and not problems, f"{len(problems)} of {n} variants (shard {shard(2)} of 2)",
          problems[:5])


# A run folder's files the synthetic run (plots/tests/synth.py) does not make, from the
# reference run; and per file, the fields report.py and compare.py tell but never judge.
FROM_REFERENCE = ("asm_count", "switch_emulated", "instruments")
REPORT_NOT_READ = ("meta.", "experiment", "maxconns.json config.procs",
                   "peers.json config.conns")
# Fields (by prefix) the experiment writes as null when it has no figure (nothing held, no
# ratio, no perf): null or NaN (what older runs wrote for null) there is a value.
NULLABLE = ("maxconns.json max_held", "maxconns.json per_conn_at_max",
            "threads.json ratio_t2_over_t1_shared", "instruments.json config.perf")


def run_folder(work, name="run"):
    sys.path.insert(0, str(ROOT / "plots" / "tests"))
    import synth
    folder = Path(work) / name
    shutil.rmtree(folder, ignore_errors=True)
    synth.full(folder)
    for stem in FROM_REFERENCE:
        shutil.copy(ROOT / "results" / "reference" / f"{stem}.json", folder)
    return folder


def fuzz_run(folder, main, argv, every):
    """Every experiment file of folder through fuzz(), one variant in `every` of each (a
    report costs a fraction of a second; a refusal costs less)."""
    problems, n = [], 0
    for target in sorted(folder.glob("*.json")):
        if target.name == "verdicts.json":
            continue
        found, count = fuzz(target, main, argv, REPORT_NOT_READ, every, VALUE)
        problems, n = problems + found, n + count
    return problems, n


def case_fuzz_report(a):
    """report.py with one variant in four (about 640 of 2,540; shard() says which): every
    path of every experiment file still gets one or two of the five replacements, and the
    paths next to it the others."""
    sys.path.insert(0, str(ROOT / "plots"))
    import report
    folder = run_folder(a.work)
    argv = [str(folder), "--no-charts", "--no-reference"]
    check(Z.outcome(report.main, argv)[0] == 0, "the unchanged run is reported")
    problems, n = fuzz_run(folder, report.main, argv, 4)
    check(n > 600 and not problems, f"{len(problems)} of {n} variants (shard {shard(4)} of 4)",
          problems[:8])


def case_fuzz_compare(a):
    """compare.py with the variants in A, one in six of them (a comparison costs twice a
    report): every experiment file is still fuzzed at its every level."""
    sys.path.insert(0, str(ROOT / "plots"))
    import compare
    folder, other = run_folder(a.work, "a"), run_folder(a.work, "b")
    argv = [str(folder), str(other), "--no-charts", "--out", str(Path(a.work) / "out"),
            "--runs-root", str(Path(a.work))]
    check(Z.outcome(compare.main, argv)[0] == 0, "the unchanged runs are compared")
    problems, n = fuzz_run(folder, compare.main, argv, 6)
    check(n > 400 and not problems, f"{len(problems)} of {n} variants (shard {shard(6)} of 6)",
          problems[:8])


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
