"""cases.py - what every case script of harness/tests shares: one assertion and the command
line that runs one of the script's case_ functions by name.

    from cases import Failed, check, run
    def case_something(a): check(cond, "what must hold", detail)
    if __name__ == "__main__":
        sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
"""
import argparse
import subprocess
import sys
from pathlib import Path


class Failed(Exception):
    """A check that did not hold: the case stops here and the script exits 1."""


def check(cond, what, detail=""):
    if not cond:
        raise Failed(what + (f": {detail}" if detail != "" else ""))


def refuses(cmd, *arg_sets):
    """Each of arg_sets, appended to cmd, is bad usage: exit status 2 and a message."""
    for args in arg_sets:
        p = subprocess.run([*map(str, cmd), *args], capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and p.stderr.strip(), f"{args}: exit 2 with a message",
              p.returncode)


def run(scope, doc, *options):
    """Runs the case the command line names. scope: the script's globals(), whose case_<name>
    functions are its cases (spelled with '-' for '_' on the command line); options: (flag,
    argparse keywords) pairs. A --work folder is made before the case runs. Exit status 0, 1
    when a check failed, 2 for an unknown case."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("case")
    for flag, kwargs in options:
        ap.add_argument(flag, **kwargs)
    a = ap.parse_args()
    cases = {n[5:].replace("_", "-"): fn for n, fn in scope.items() if n.startswith("case_")}
    if a.case not in cases:
        print(f"unknown case {a.case!r} (valid: {', '.join(sorted(cases))})", file=sys.stderr)
        return 2
    if getattr(a, "work", None):
        Path(a.work).mkdir(parents=True, exist_ok=True)
    try:
        cases[a.case](a)
    except Failed as e:
        print(f"FAIL {a.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok {a.case}")
    return 0
