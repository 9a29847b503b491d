#!/usr/bin/python3
"""list_json.py - switch-tests --list and --list-backends with --json: valid JSON naming what
the plain listings name (the backends: exactly the registry's, in its order), and any other
word after a listing flag refused with exit 2.

usage: list_json.py REGISTRY_CSV SWITCH_TESTS [EMULATOR ...]
"""
import json
import subprocess
import sys


def strict(text):
    def refuse(c):
        raise ValueError(f"{c} is not JSON")
    return json.loads(text, parse_constant=refuse)


def out(cmd, *args):
    p = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout, p.stderr


def main():
    registry, cmd = sys.argv[1].split(","), sys.argv[2:]
    problems = []
    plain = out(cmd, "--list")[1].split()
    rc, text, err = out(cmd, "--list", "--json")
    tests = [t["name"] for t in strict(text)["tests"]] if rc == 0 else None
    if tests != plain or not plain:
        problems.append(f"--list --json names {tests}, --list {plain} ({err.strip()})")
    rc, text, err = out(cmd, "--list-backends", "--json")
    backends = strict(text)["backends"] if rc == 0 else None
    if backends != registry or out(cmd, "--list-backends")[1].split() != registry:
        problems.append(f"--list-backends --json lists {backends}, the registry {registry}")
    for args in (("--list", "--bogus"), ("--list-backends", "--json", "x")):
        rc, text, err = out(cmd, *args)
        if rc != 2 or len(err.strip().splitlines()) != 1:
            problems.append(f"{' '.join(args)}: exit {rc}, stderr {err!r}: want 2 and one line")
    for p in problems:
        print("FAIL " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
