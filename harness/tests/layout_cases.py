#!/usr/bin/python3
"""Cases for the harness's Python layout: no import cycle among its modules; imports run one
way (lib imports only lib; experiments, gate and tools import lib; no experiment imports
another; nothing imports the suite); plots/ reaches into harness/ only through a declared seam,
and harness/ never into plots/; every non-test Python file stays within 500 lines; a
README line that runs a harness module as a file sets its search path. The import
graph is read as plots/tests/test_layout.py reads plots'.

usage: layout_cases.py CASE [--work DIR]
"""
import re
import sys
from pathlib import Path

from cases import check, run

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS.parent / "plots" / "tests"))
import test_layout as L  # noqa: E402  (plots/tests: the one reader of an import graph)

MAX_LINES = 500
PLOTS = HARNESS.parent / "plots"
# Where plots reaches into harness/: through plots/harness_api.py alone, and only for the
# experiment registry, the statistics, memory resolution, points' statuses, the gate's floor
# and stored files, the change points of a series, the JSON writer and CPU key, and the
# sequential design's words, and which rounds' two legs ran at one pace of the host.
PLOTS_SEAM = {"harness_api": {"experiments", "gate.regress_files", "gate.regress_gate",
                              "lib.changepoint", "lib.host_pace", "lib.memory", "lib.meta",
                              "lib.sequential", "lib.stats", "lib.status"}}
# What each top-level package may import besides itself.
ALLOWED = {"lib": set(), "experiments": {"lib"}, "gate": {"lib"}, "tools": {"lib", "gate"},
           "suite": {"lib", "experiments"}}


def graph():
    return L.graph(HARNESS)


def case_no_cycle(a):
    g = graph()
    check(len(g) > 40, "the harness's modules are found", len(g))
    check(L.cycle(g) is None, "no import cycle among harness modules", L.cycle(g))
    check(L.cycle({"x": {"y"}, "y": {"x"}}) == ["x", "y", "x"], "the cycle finder finds one")


def case_one_way(a):
    bad = []
    for mod, deps in graph().items():
        top = mod.split(".")[0]
        check(top in ALLOWED, f"{mod}: in a known folder of harness/", sorted(ALLOWED))
        for dep in deps:
            dtop = dep.split(".")[0]
            if dtop != top and dtop not in ALLOWED[top]:
                bad.append(f"{mod} -> {dep}")
            # an experiment reaches what it shares through lib, not through another driver
            if top == dtop == "experiments" and mod not in ("experiments",) \
                    and dep not in ("experiments", "experiments._step"):
                bad.append(f"{mod} -> {dep}")
    check(not bad, "imports run one way", bad)


def case_plots_seam(a):
    """plots/ imports harness modules only where PLOTS_SEAM says, and nothing in harness/ imports
    plots/."""
    harness = set(L.modules(HARNESS))
    plots = L.modules(PLOTS)
    reached = {}
    for mod, path in plots.items():
        got = {m for m in L.imports(path, harness) if "." in m or m == "experiments"}
        got = {m for m in got if not any(o.startswith(m + ".") for o in got)} or got
        if got:
            reached[mod] = got
    extra = {m: sorted(got - PLOTS_SEAM.get(m, set())) for m, got in reached.items()
             if got - PLOTS_SEAM.get(m, set())}
    check(not extra, "plots reaches harness only through its declared seam", extra)
    back = [m for m, path in L.modules(HARNESS).items() if L.imports(path, set(plots))]
    check(not back, "no harness module imports plots", back)


def case_files_small(a):
    files = [p for p in HARNESS.rglob("*.py") if p.relative_to(HARNESS).parts[0] != "tests"]
    check(files, "harness has Python files")
    big = [f"{p.relative_to(HARNESS)}: {n} lines" for p in files
           if (n := len(p.read_text().splitlines())) > MAX_LINES]
    check(not big, f"every file within {MAX_LINES} lines", big)


def case_readme_commands(a):
    """A README line that runs a harness module as a file sets the package search path on the
    same line: without it the module's first import fails, and readers copy one line."""
    root = HARNESS.parent
    readmes = [p for p in root.rglob("*.md") if not p.relative_to(root).parts[0].startswith(
        ("build", "results"))]
    check(len(readmes) > 5, "the READMEs are found", readmes)
    bare = ["%s:%d" % (p.relative_to(root), i + 1) for p in readmes
            for i, line in enumerate(p.read_text().splitlines())
            if re.search(r"python3 harness/\S+\.py", line) and "PYTHONPATH=" not in line]
    check(not bare, "every `python3 harness/...py` line sets PYTHONPATH", bare)


def case_folders_only(a):
    top = sorted(p.name for p in HARNESS.iterdir() if p.is_file())
    check(all(n in ("CMakeLists.txt", "README.md", "suite.py") for n in top)
          or all(not n.endswith(".py") or n == "suite.py" for n in top),
          "harness/'s top level holds no Python but the suite's entry point", top)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"default": ""})))
