#!/usr/bin/python3
"""asm_count.py - instructions on each hand-written switch path, counted from the disassembly.

For every switch/switch_<arch>_*_elf_gas.S in the tree (x86_64 and aarch64 today), assembles
the file with that architecture's compiler, disassembles the object with its objdump and
counts the instructions of sw_asm_jump and sw_asm_nofpu_jump from the symbol to the
instruction that leaves for the other context (`jmp *reg` on x86_64, `ret` on aarch64). The
path counted is the one a switch takes when the FP control words of the two contexts agree,
as they almost always do: a conditional branch on it counts as not taken (x86_64's asm skips
`fldcw` that way) and the row says how many it passed; any other branch before the exit is an
error, because the count would then depend on more than that. aarch64 is counted twice, as the cross build compiles it
(-mbranch-protection=standard: pointer authentication and BTI hints) and without those flags.
Boost's jump_fcontext is counted the same way from Debian's libboost_context.a of each
architecture when it is installed (its own instructions, not its call site's).

A count from the assembly is exact and needs no hardware: it is what this repository can
say about aarch64 without an aarch64 machine (timings under qemu-user are emulated and say
nothing about a real core). It is not the same measure as icount.py's callgrind counts,
which include the benchmark loop around the switch.

usage: asm_count.py [--out-file FILE] [--expect ROW=N | ROW=OTHER+N]...
ROW is <backend>/<arch>[/<variant>], e.g. asm/aarch64/pac-bti; --expect exits 1 unless ROW's
count is N, or OTHER's count plus N. The aarch64 object built with branch protection must
also carry the BTI and PAC bits in its GNU property note and start each switch with paciasp.
"""

import argparse
import datetime
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from experiments._step import Experiment, counted
from lib import meta

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWITCH = os.path.join(ROOT, "switch")

# Per architecture: the compiler and objdump to use, the instruction that leaves the switch
# for the other context, what any other branch looks like, the build variants (flags) to
# count, and where Debian puts Boost.Context's static library.
ARCHES = {
    "x86_64": {
        "cc": ["gcc"], "objdump": "objdump",
        "exit": re.compile(r"^jmp\s+\*%"), "branch": re.compile(r"^(j[a-z]+|call|ret|loop)"),
        "conditional": re.compile(r"^j(?!mp\b)[a-z]+\s"),
        "variants": {"": []},
        "boost": "/usr/lib/x86_64-linux-gnu/libboost_context.a",
    },
    "aarch64": {
        "cc": ["aarch64-linux-gnu-gcc"], "objdump": "aarch64-linux-gnu-objdump",
        "exit": re.compile(r"^ret\b"),
        "branch": re.compile(r"^(b|bl|br|blr|ret|cbn?z|tbn?z|b\.[a-z]+)\b"),
        "conditional": re.compile(r"^(cbn?z|tbn?z|b\.[a-z]+)\s"),
        "variants": {"pac-bti": ["-mbranch-protection=standard"], "plain": []},
        "boost": "/usr/lib/aarch64-linux-gnu/libboost_context.a",
    },
}
FUNCTIONS = {"asm": "sw_asm_jump", "asm-nofpu": "sw_asm_nofpu_jump"}


def disassemble(objdump, path):
    """{symbol: [instruction text, ...]} for every function in the object or archive."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(.*)$", line)
        if m and cur is not None:
            # objdump's trailing comments: "// ..." (aarch64), "# <address>" (x86_64).
            cur.append(re.sub(r"\s+(//|#\s).*$", "", m.group(1)).strip())
    return funcs


def path_length(insns, arch, name):
    """(instructions from the symbol to the exit, inclusive, the listing, conditional branches
    passed as not taken); refuses any other branch."""
    spec = ARCHES[arch]
    passed = 0
    for i, ins in enumerate(insns):
        if spec["exit"].match(ins):
            return i + 1, insns[:i + 1], passed
        if spec["conditional"].match(ins):
            passed += 1
        elif spec["branch"].match(ins):
            raise RuntimeError(f"{name} ({arch}): branch before the exit: '{ins}'")
    raise RuntimeError(f"{name} ({arch}): no exit instruction found")


def check_branch_protection(spec, obj, funcs):
    """Built for PAC and BTI, the object must say so in its GNU property note (or the linker
    drops BTI for the whole executable), and each switch must start with the landing pad
    that also signs the return address."""
    readelf = spec["objdump"].replace("objdump", "readelf")
    notes = subprocess.run([readelf, "-n", obj], check=True, capture_output=True,
                           text=True).stdout
    if not re.search(r"notes found in: \.note\.gnu\.property\n(.*\n){0,3}.*"
                     r"AArch64 feature: BTI, PAC", notes):
        raise RuntimeError(f"{obj}: no GNU property note with BTI and PAC:\n{notes}")
    for sym in FUNCTIONS.values():
        if not funcs[sym] or funcs[sym][0] != "paciasp":
            raise RuntimeError(f"{sym}: starts with '{funcs[sym][:1]}', not paciasp")


def count_arch(arch, spec, workdir):
    rows, skipped = [], []
    sources = sorted(glob.glob(os.path.join(SWITCH, f"switch_{arch}_*_elf_gas.S")))
    if not sources:
        return rows, [f"{arch}: no switch/switch_{arch}_*_elf_gas.S"]
    if not shutil.which(spec["cc"][0]) or not shutil.which(spec["objdump"]):
        return rows, [f"{arch}: not counted: {spec['cc'][0]} or {spec['objdump']} not installed"]
    for variant, flags in spec["variants"].items():
        obj = os.path.join(workdir, f"{arch}-{variant or 'default'}.o")
        subprocess.run(spec["cc"] + flags + ["-c", "-I", SWITCH, sources[0], "-o", obj],
                       check=True)
        funcs = disassemble(spec["objdump"], obj)
        if "-mbranch-protection=standard" in flags:
            check_branch_protection(spec, obj, funcs)
        for backend, sym in FUNCTIONS.items():
            n, listing, passed = path_length(funcs[sym], arch, sym)
            rows.append({"backend": backend, "arch": arch, "variant": variant,
                         "instructions": n, "source": os.path.relpath(sources[0], ROOT),
                         "flags": " ".join(flags), "listing": listing,
                         "branches_not_taken": passed})
    if os.path.exists(spec["boost"]):
        funcs = disassemble(spec["objdump"], spec["boost"])
        try:
            n, listing, passed = path_length(funcs.get("jump_fcontext", []), arch,
                                             "jump_fcontext")
            rows.append({"backend": "fcontext", "arch": arch, "variant": "",
                         "instructions": n, "source": spec["boost"], "flags": "",
                         "listing": listing, "branches_not_taken": passed})
        except RuntimeError as e:
            skipped.append(f"fcontext/{arch}: not counted: {e}")
    else:
        skipped.append(f"fcontext/{arch}: not counted: {spec['boost']} not installed")
    return rows, skipped


def row_name(r):
    return "/".join(x for x in (r["backend"], r["arch"], r["variant"]) if x)


def check_expectations(rows, specs):
    counts = {row_name(r): r["instructions"] for r in rows}
    bad = 0
    for spec in specs:
        row, _, want = spec.partition("=")
        base, plus, extra = want.partition("+")
        if plus:
            expected = counts.get(base, -1) + int(extra) if base in counts else None
        else:
            expected = int(want)
        ok = row in counts and counts[row] == expected
        print(f"asm_count.py: {'ok' if ok else 'FAIL'} {row} = {counts.get(row)} "
              f"(expected {want} = {expected})", file=sys.stderr)
        bad += not ok
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-file", metavar="FILE", help="write the JSON here (default: stdout)")
    ap.add_argument("--expect", action="append", default=[], metavar="ROW=N|ROW=OTHER+N")
    args = ap.parse_args()
    rows, skipped = [], []
    try:
        with tempfile.TemporaryDirectory(prefix="asm_count.") as workdir:
            for arch, spec in ARCHES.items():
                r, s = count_arch(arch, spec, workdir)
                rows += r
                skipped += s
    except (RuntimeError, subprocess.CalledProcessError, KeyError) as e:
        print(f"asm_count.py: {e}", file=sys.stderr)
        return 1
    for r in rows:
        print(f"asm_count: {row_name(r):28s} {r['instructions']:3d} instructions per switch",
              file=sys.stderr)
    for s in skipped:
        print(f"asm_count: {s}", file=sys.stderr)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "measurement": "instructions on the switch path, counted in the disassembly of "
                          "the assembled source (static, exact; not a timing)",
           "rows": rows, "not_counted": skipped}
    meta.emit_json(doc, args.out_file)
    return check_expectations(rows, args.expect)


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="asm_count",
    measures="instructions per switch counted from each architecture's assembly: exact, and "
             "needing no hardware of that architecture",
    claims=(),  # the report's architecture section reads it; no verdict does
    binaries=(),
    output="asm_count.json",
    budget_s={"quick": 2, "full": 5},
    run=counted(lambda ctx: [], timeout=300),
    times=False,
)


if __name__ == "__main__":
    sys.exit(main())
