#!/usr/bin/python3
"""The READMEs' tables of steps, engines, timer structures and models, the top README's
Layout block (the tree's folders, switch backends, server models) and the counts it states,
checked against the registries they describe: a member added to a registry, or renamed, or
declaring other properties than its README row says, fails here until the README says so.

usage: docs_tables.py --engine-info EXE --echo-server EXE --timer-info EXE --switch-info EXE
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


def listing(exe):
    """The registry's members as declared, built or not: a README describes every member
    declared, also on a machine that lacks a member's library (listed under left_out)."""
    out = json.loads(subprocess.run([exe, "--list", "--json"], capture_output=True, text=True,
                                    timeout=30, check=True).stdout)
    return out["members"] + out.get("left_out", [])


def members(exe):
    return [m["name"] for m in listing(exe)]


def table_rows(readme, header):
    """The cells of every row of the table whose header row starts with `header`, the first
    cell without its backquotes."""
    lines = (ROOT / readme).read_text().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(header)), None)
    if start is None:
        check(False, f"{readme}: no table headed {header!r}")
        return []
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        cells = [c.strip() for c in ln.split("|")[1:-1]]
        rows.append([re.sub(r"^`([^`]+)`.*", r"\1", cells[0])] + cells[1:])
    return rows


def first_column(readme, header):
    return [r[0] for r in table_rows(readme, header)]


def check_timers(exe):
    """engines/README.md's timer table against timer-info: the members, and per member what it
    declares: exact or not, FIFO or not, and the cost class of arm, cancel and expire."""
    declared = {m["name"]: m["props"] for m in listing(exe)}
    rows = {r[0]: r for r in table_rows("engines/README.md", "| timers |")}
    check(sorted(rows) == sorted(declared),
          f"engines/README.md's timer table {sorted(rows)} is not the registry's "
          f"{sorted(declared)}")
    for name, p in declared.items():
        row = rows.get(name)
        if not row or len(row) < 6:
            continue
        yes = {True: "yes", False: "no"}
        costs = f"{p['arm']} / {p['cancel']} / {p['expire']}"
        for col, want, got in (("exact", yes[p["exact"]], row[2].split(",")[0]),
                               ("FIFO", yes[p["fifo"]], row[4]), ("costs", costs, row[5])):
            check(got == want, f"engines/README.md: {name}'s {col} says {got!r}, timer-info "
                               f"declares {want!r}")


def stated_count(readme, noun):
    m = re.search(r"\b(\w+)\s+" + noun, (ROOT / readme).read_text().replace("\n", " "))
    return NUMBER_WORDS.index(m.group(1)) if m and m.group(1) in NUMBER_WORDS else None


def layout_block():
    """README.md's Layout block: {folder: its text}, a folder being a line's first word."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## Layout\n\n```\n(.*?)^```", text, re.S | re.M)
    if not m:
        check(False, "README.md: no Layout block (## Layout, then a fenced block)")
        return {}
    out, name = {}, None
    for ln in m.group(1).splitlines():
        word = re.match(r"^([a-z]+)/ ", ln)
        if word:
            name = word.group(1)
            out[name] = ""
        if name:
            out[name] += " " + ln
    return out


def check_layout(backends, models):
    """The Layout block names every folder of the tree's top level and of harness/, every
    switch backend and every server model, and nothing that is not there."""
    block = layout_block()
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True,
                             text=True, timeout=30).stdout.splitlines()
    if not tracked:  # not a git checkout: the folders on disk
        tracked = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
    top = sorted({t.split("/")[0] for t in tracked if "/" in t and not t.startswith(".")})
    check(sorted(block) == top, f"README.md's Layout names {sorted(block)}, the tree has {top}")
    sub = sorted({t.split("/")[1] for t in tracked if t.startswith("harness/") and
                  t.count("/") >= 2})
    missing = [d for d in sub if f"{d}/" not in block.get("harness", "")]
    check(not missing, f"README.md's Layout omits harness/ folders {missing}")
    for folder, names, what in (("switch", backends, "backends"), ("servers", models, "models")):
        words = set(re.findall(r"[a-z][a-z0-9-]*", block.get(folder, "")))
        missing = [n for n in names if n not in words]
        check(not missing, f"README.md's Layout omits {folder}/ {what} {missing}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine-info", required=True)
    ap.add_argument("--echo-server", required=True)
    ap.add_argument("--timer-info", required=True)
    ap.add_argument("--switch-info", required=True)
    a = ap.parse_args()
    engines, models = members(a.engine_info), members(a.echo_server)
    check_layout(members(a.switch_info), models)

    steps = first_column("harness/experiments/README.md", "| step |")
    check(steps == ORDER + ["report"],
          f"harness/experiments/README.md's step table {steps} is not the registry's "
          f"{ORDER} + report")
    table = first_column("engines/README.md", "| engine |")
    check(sorted(table) == sorted(engines),
          f"engines/README.md's engine table {table} is not the registry's {engines}")
    check_timers(a.timer_info)
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
