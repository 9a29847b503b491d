"""The switch backends' properties: system calls per switch, the guard-page overflow check,
and whether a copy-stack mode exists."""
import json
import subprocess
from pathlib import Path

from lib import perf
from experiments._step import Experiment, write_json

def syscalls_per_switch(ctx, backend):
    """props.json's fields for lib.perf.syscalls_per_switch."""
    r = perf.syscalls_per_switch(ctx.bin / "switch-tests", backend, ctx.tmp)
    if r["status"] != "ok":
        return {"syscalls_per_switch": None, "syscalls_status": r["status"],
                "syscalls_output": [f"{r['status']}: {r['why']}" if r["status"] == "not run"
                                    else r["why"]]}
    short, long = r["counts"]
    return {"syscalls_per_switch": r["per_switch"],
            "syscalls_output": [f"perf stat -e {perf.SYSCALL_EVENT}: {short} system calls for "
                                f"{perf.SWITCH_LOOP} switches, {long} for "
                                f"{2 * perf.SWITCH_LOOP}"]}


def overflow(ctx, backend):
    o = subprocess.run([ctx.bin / "switch-tests", "overflow", backend], capture_output=True,
                       text=True, timeout=120)
    text = (o.stdout + o.stderr).strip()
    msg = [ln for ln in text.splitlines() if "fiber stack overflow" in ln]
    return {"test": f"switch-tests overflow {backend}", "exit": o.returncode,
            "passed": o.returncode == 0 and bool(msg),
            "message": msg[0] if msg else None, "output": text.splitlines()[-3:]}


def measure(ctx, exp):
    """Per compiled backend, as the switch layer declares them (switch-info --list --json)."""
    info = subprocess.run([ctx.bin / "switch-info"], capture_output=True, text=True, timeout=30)
    listing = json.loads(subprocess.run([ctx.bin / "switch-info", "--list", "--json"],
                                        capture_output=True, text=True, timeout=30,
                                        check=True).stdout)
    backends = {m["name"]: dict(syscalls_per_switch(ctx, m["name"]),
                                overflow=overflow(ctx, m["name"]))
                for m in listing["members"]}
    shared = [m["name"] for m in listing["stack_modes"] if m["shares_stack"]]
    setjmp = next((m for m in listing["members"] if m["name"] == "setjmp"), None)
    flags = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines()
             if ln.startswith("flags")]
    data = {"experiment": exp.name, "meta": ctx.meta(), "backends": backends,
            "switch_info": info.stdout.strip().splitlines(), "switch_registry": listing,
            # How setjmp reaches a new stack, as the backend's own summary declares it.
            "setjmp_new_stack": setjmp["summary"] if setjmp else None,
            "virtualized": bool(flags) and " hypervisor" in flags[0],
            "copy_stack": {"implemented": bool(shared),
                           "note": f"stack modes that share stacks: {', '.join(shared)}" if shared
                           else "not implemented: every declared stack mode runs each context on "
                           "its own guarded stack; there is no shared (copying) stack mode to "
                           "measure"}}
    write_json(ctx.dir / exp.output, data)
    return "ok"


EXPERIMENT = Experiment(
    name="props",
    measures="system calls per switch (perf) and the guard-page overflow check per backend, "
             "and whether a copy-stack mode exists",
    claims=("C4", "C9", "C12"),
    binaries=("switch-tests", "switch-info"),
    output="props.json",
    budget_s={"quick": 2, "full": 5},
    run=measure,
    times=False,
)
