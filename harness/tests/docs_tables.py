#!/usr/bin/python3
"""The READMEs' tables of steps, engines and models, and the counts the top README states,
checked against the registries they describe: a member added to a registry, or renamed,
fails here until its README says so.

usage: docs_tables.py --engine-info EXE --echo-server EXE
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "harness"))
from experiments import ORDER  # noqa: E402

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def members(exe):
    """The registry's members, built or not: a README describes every member declared, also on
    a machine that lacks a member's library (listed under left_out)."""
    out = json.loads(subprocess.run([exe, "--list", "--json"], capture_output=True, text=True,
                                    timeout=30, check=True).stdout)
    return [m["name"] for m in out["members"] + out.get("left_out", [])]


def first_column(readme, header):
    """The first cell of every row of the table whose header row starts with `header`."""
    lines = (ROOT / readme).read_text().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(header)), None)
    if start is None:
        check(False, f"{readme}: no table headed {header!r}")
        return []
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        cell = ln.split("|")[1].strip()
        rows.append(re.sub(r"^`([^`]+)`.*", r"\1", cell))
    return rows


def stated_count(readme, noun):
    m = re.search(r"\b(\w+)\s+" + noun, (ROOT / readme).read_text().replace("\n", " "))
    return NUMBER_WORDS.index(m.group(1)) if m and m.group(1) in NUMBER_WORDS else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine-info", required=True)
    ap.add_argument("--echo-server", required=True)
    a = ap.parse_args()
    engines, models = members(a.engine_info), members(a.echo_server)

    steps = first_column("plots/README.md", "| step |")
    check(steps == ORDER + ["report"],
          f"plots/README.md's step table {steps} is not the registry's {ORDER} + report")
    table = first_column("engines/README.md", "| engine |")
    check(sorted(table) == sorted(engines),
          f"engines/README.md's engine table {table} is not the registry's {engines}")
    table = first_column("servers/README.md", "| model |")
    check(sorted(table) == sorted(models),
          f"servers/README.md's model table {table} is not the registry's {models}")
    for noun, names in (("event engines", engines), ("execution models", models)):
        n = stated_count("README.md", noun)
        check(n == len(names), f"README.md says {n} {noun}, the registry has {len(names)}")
    for line in failures:
        print("FAIL " + line)
    print("ok docs tables" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
