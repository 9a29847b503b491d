"""The switch backends' properties: system calls per switch, the guard-page overflow check,
and whether a copy-stack mode exists."""
import json
import subprocess
from pathlib import Path

from drive import perf
from experiments._step import Experiment, write_json

SYSCALL_EVENT = "raw_syscalls:sys_enter"
LOOP = 20000  # switches of the shorter run; the longer makes twice as many


def syscalls_per_switch(ctx, backend):
    """System calls per switch as the kernel counts them: perf around `switch-tests
    syscall-loop` with LOOP and 2 x LOOP switches, so start-up and teardown cancel out."""
    exe = ctx.bin / "switch-tests"
    counts = []
    for n in (LOOP, 2 * LOOP):
        try:
            got, rc = perf.count([exe, "syscall-loop", backend, n], SYSCALL_EVENT, ctx.tmp)
        except OSError as e:
            got, rc = {}, e.strerror
        if got.get(SYSCALL_EVENT) is None:
            return {"syscalls_per_switch": None, "syscalls_status": "not run",
                    "syscalls_output": [f"not run: perf did not count {SYSCALL_EVENT}"]}
        if rc != 0:
            return {"syscalls_per_switch": None, "syscalls_status": "failed",
                    "syscalls_output": [f"switch-tests syscall-loop {backend} {n} exited {rc}"]}
        counts.append(int(got[SYSCALL_EVENT]))
    return {"syscalls_per_switch": (counts[1] - counts[0]) / LOOP,
            "syscalls_output": [f"perf stat -e {SYSCALL_EVENT}: {counts[0]} system calls for "
                                f"{LOOP} switches, {counts[1]} for {2 * LOOP}"]}


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
    estimate_s={"quick": 5, "full": 5},
    run=measure,
)
