"""Architectures: instructions per switch counted in the x86_64 and aarch64 assembly, and the
aarch64 switch-bench under emulation, kept apart from every native figure."""
import data as D
from formatting import value_text


def arch_section(run):
    """Instructions per switch by architecture, counted from the assembly, and the aarch64
    switch-bench under emulation, in a table of its own: emulated times are never set beside
    native ones, in a table or a chart."""
    out = ["## Architectures: x86_64 and aarch64", ""]
    counts = run.get("asm_count")
    if not counts:
        out += [f"not run: {run.why('asm_count')}", ""]
    else:
        rows = counts.get("rows", [])
        cols = [("x86_64", ""), ("aarch64", "pac-bti"), ("aarch64", "plain")]
        heads = ["x86_64", "aarch64 (as built: PAC and BTI hints)", "aarch64 (no branch "
                 "protection)"]
        table = {}
        for r in rows:
            table.setdefault(r["backend"], {})[(r["arch"], r["variant"])] = r["instructions"]
        ic = D.icounts(run.get("icount"))
        out += ["Instructions on one switch, counted in the disassembly of the assembled "
                "source (`harness/experiments/asm_count.py`): exact and needing no hardware of that "
                "architecture. fcontext counts Boost's prebuilt `jump_fcontext` alone (the same "
                "object in both aarch64 columns: it has no PAC or BTI instructions); on x86_64 "
                "its inline call site adds four. The callgrind column (x86_64, this run) is "
                "measured per switch of the benchmark loop, so it includes the loop's own "
                "instructions.", "",
                "| backend | " + " | ".join(heads) + " | callgrind, x86_64 loop |",
                "|---|" + "---|" * (len(heads) + 1)]
        for b in run.order("switch", table):
            cells = []
            for arch, variant in cols:
                v = table[b].get((arch, variant))
                if v is None and b == "fcontext":
                    v = table[b].get((arch, ""))
                cells.append(str(v) if v is not None else "-")
            out.append(f"| `{b}` | " + " | ".join(cells) + " | "
                                                           f"{value_text(ic.get('switch/' + b))} |")
        for note in counts.get("not_counted", []):
            out.append(f"- {note}")
        out.append("")
    emu = run.get("switch_emulated")
    out += ["### aarch64 under qemu-user: EMULATED times", ""]
    if not emu:
        return out + [f"not run: {run.why('switch_emulated')}", ""]
    rows = D.bench_rows(emu)
    out += [f"Measured by the aarch64 `switch-bench` run under `{emu.get('emulator')}` on this "
            "x86_64 host. qemu translates each aarch64 instruction into host code, so these "
            "figures are the emulator's speed, not an aarch64 core's: they are kept apart "
            "from every native figure in this report and rank nothing. The binary's own "
            f"words: \"{(emu.get('context') or {}).get('emulated', '?')}\"", "",
            "| row (emulated, aarch64) | median ns (emulated) |", "|---|---|"]
    for name, e in rows.items():
        out.append(f"| `{name}` | {value_text(D.ns(e), '.4g')} |")
    return out + [""]
