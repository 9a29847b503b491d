#!/usr/bin/python3
"""The experiment registry (harness/experiments/) and the suite's reading of it: every
experiment file is in the ordered list and the list names only files; each declaration is
complete; `suite.py --list` and `--only` follow the list (an empty or repeated name refused);
a failed step fails the suite's exit status; switch-bench's passes measure each row once.

usage: suite_cases.py CASE [--bin DIR] [--work DIR]
"""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
import experiments  # noqa: E402
from cases import check, run  # noqa: E402  (harness/tests/cases.py)

PY = "/usr/bin/python3"
PRESETS = ("quick", "full")


def case_registry(a):
    files = sorted(p.stem for p in (HARNESS / "experiments").glob("*.py")
                   if not p.stem.startswith("_"))
    check(sorted(experiments.ORDER) == files, "every experiment file is listed once, and only "
          "files are listed", f"files {files}, list {experiments.ORDER}")
    loaded = experiments.load()
    outputs = [e.output for e in loaded]
    check(len(set(outputs)) == len(outputs), "each experiment writes its own file", outputs)
    for e in loaded:
        check(e.measures and callable(e.run), f"{e.name}: says what it measures, has a run")
        check(all(c.startswith("C") for c in e.claims), f"{e.name}: claims are ids", e.claims)
        check(set(e.budget_s) == set(PRESETS), f"{e.name}: a budget per preset",
              e.budget_s)
        check(e.presets is None or set(e.presets) == set(PRESETS),
              f"{e.name}: presets for both or neither", e.presets)
        if e.budgeted:
            least = (e.least_s or {}).get("quick")
            check(least is not None and 0 < least <= e.budget_s["quick"],
                  f"{e.name}: a budgeted step declares its least in quick, within its budget",
                  e.least_s)
    check(set(experiments.SHED) <= set(experiments.ORDER)
          and len(set(experiments.SHED)) == len(experiments.SHED),
          "the steps a run may leave out are experiments, each named once", experiments.SHED)
    print(f"{len(loaded)} experiments: {', '.join(experiments.ORDER)}; left out first on a "
          f"slow machine: {', '.join(experiments.SHED)}")


def case_left_out(a):
    """A step the suite's plan leaves out writes its file as "not run" with the plan's reason,
    its record says so without failing the run, and the report's claims fed by it say "not
    run" with that reason."""
    sys.path.insert(0, str(HARNESS.parent / "plots"))
    import suite
    import claims
    import data as D
    from experiments._step import Ctx
    from lib import meta
    run_dir = Path(a.work) / "run"
    run_dir.mkdir(parents=True, exist_ok=True)
    ctx = Ctx("quick", a.bin + "/..", a.bin + "/..", run_dir, a.work)
    why = "over the run's total (a test's reason)"
    rec = {"experiment": "suite", "preset": "quick", "status": "done",
           "steps": {"handoff": suite.left_out(ctx, "handoff", why)}}
    meta.write_json(run_dir / "suite.json", rec)
    doc = json.loads((run_dir / "handoff.json").read_text())
    check(doc["status"] == "not run" and doc["reason"] == why, "handoff.json: not run, why",
          doc)
    check(rec["steps"]["handoff"]["status"] == "not run: " + why
          and not suite.failed_steps(rec), "the record says not run, and fails nothing",
          rec["steps"])
    res = claims.evaluate(D.Run(run_dir), True)["C15"]
    check(res["verdict"] == "not run" and why in json.dumps(res), "C15: not run, with the "
          "plan's reason", {k: res.get(k) for k in ("verdict", "not_run", "measured")})


def case_cli(a):
    p = subprocess.run([PY, str(HARNESS / "suite.py"), "--list"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0, "suite.py --list exits 0", p.stderr)
    check(p.stdout.split() == experiments.ORDER + ["report"], "--list is the registry's "
          "order, then report", p.stdout)
    p = subprocess.run([PY, str(HARNESS / "suite.py"), "quick", "--only", "switch,bogus"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "unknown step bogus" in p.stderr, "--only refuses a name the "
          "registry lacks", p.stderr)
    # An empty list or name is not read as every step, nor a repeated name as two runs;
    # run.sh refuses them before it sets up or builds anything. The lock is held here
    # meanwhile, so a check that let one through ends at the lock (exit 3), not in a run.
    bad = [["--only", ""], ["--only", ","], ["--only", "props,,switch"],
           ["--only", "props,"], ["--only", "props,props"]]
    with tempfile.NamedTemporaryFile(prefix="suite-lock-") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        env = dict(os.environ, SWITCHYARD_SUITE_LOCK=lock.name, SWITCHYARD_SKIP_BUILD="1")
        for cmd in ([PY, str(HARNESS / "suite.py"), "quick"],
                    [str(HARNESS.parent / "run.sh"), "quick"]):
            for args in bad + [["--only", "props", "--skip", "props"]] * (cmd[0] == PY):
                p = subprocess.run(cmd + args, capture_output=True, text=True, timeout=30,
                                   env=env)
                check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
                      and any(w in p.stderr for w in ("empty", "twice", "at least one",
                                                      "no step")),
                      f"{cmd[-2]} {args}: exit 2 with one line saying why",
                      f"{p.returncode}: {p.stderr}")


def case_exit_status(a):
    """A step that fails makes the suite's exit status 1 and says which (a build whose
    switch-info fails makes props fail)."""
    work = Path(a.work)
    (work / "build" / "bin").mkdir(parents=True, exist_ok=True)
    for exe in ("switch-info", "switch-tests"):
        f = work / "build" / "bin" / exe
        f.write_text("#!/bin/sh\nexit 1\n")
        f.chmod(0o755)
    env = dict(os.environ, SWITCHYARD_SUITE_LOCK=str(work / "suite.lock"))
    p = subprocess.run([PY, str(HARNESS / "suite.py"), "quick", "--only", "props",
                        "--build-dir", str(work / "build"), "--run-dir", str(work / "run")],
                       capture_output=True, text=True, timeout=60, env=env)
    rec = json.loads((work / "run" / "suite.json").read_text())
    check(rec["steps"]["props"]["status"].startswith("failed"), "props is recorded failed",
          rec["steps"])
    check(p.returncode == 1, "a failed step makes the exit status 1", p.returncode)
    check(len(p.stderr.strip().splitlines()) == 1 and "props" in p.stderr,
          "one line naming the failed step", p.stderr)


def case_switch_passes(a):
    """Every switch-bench row a preset's main filter names, or every row for an empty one, is
    run by exactly one of its passes, and each pass apart names at least one row."""
    from experiments import switch

    def rows(flt):
        p = subprocess.run([str(Path(a.bin) / "switch-bench"), "--benchmark_list_tests=true",
                            f"--benchmark_filter={flt}"], capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == 0, f"switch-bench lists {flt!r}", p.stderr)
        return p.stdout.split()
    every = rows("")
    for preset in PRESETS:
        p = switch.EXPERIMENT.presets[preset]
        passes = switch.passes(p)
        apart = [rows(f) for f, _, _ in passes[1:]]
        check(all(apart), f"{preset}: each pass apart names rows", apart)
        named = every if not p["filter"] else rows(p["filter"]) + sum(apart, [])
        ran = rows(passes[0][0]) + sum(apart, [])
        check(sorted(ran) == sorted(set(named)), f"{preset}: each named row runs exactly once",
              sorted(set(ran) ^ set(named))[:10] or "a row runs twice")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--bin", {"default": ""}), ("--work", {"default": ""})))
