#!/usr/bin/python3
"""fibermem.py - memory per idle fiber, guarded stacks against copy stacks (claims C1, C12).

Runs build/bin/fiber-mem once per (stack mode, fiber count): N fibers each touch a small frame
and park, and the process's Rss, Pss and memory maps are read before the first spawn and once
all are parked. Guarded stacks cost two memory maps each, so at counts where they exceed
vm.max_map_count the point says `not run: ...` (fiber-mem's own words); --guarded-levels
adds smaller counts that fit, so the guarded cost per fiber is still measured. Each run is its
own process, so no point inherits another's heap.

    /usr/bin/python3 harness/experiments/fibermem.py [--levels 100000,1000000]
        [--guarded-levels 10000,30000] [--modes guarded,copy] [--switch asm]
        [--build-dir build] [--out-file fibermem.json]
"""
import json
import subprocess
import sys
from pathlib import Path

from lib import cli, meta
from experiments._step import Experiment, driver


def parse_args(argv):
    ap = cli.parser("fibermem.py", __doc__, pin=False)
    ap.add_argument("--levels", type=cli.counts, default=[100000, 1000000])
    ap.add_argument("--guarded-levels", type=cli.counts, default=[10000, 30000],
                    help="extra counts for guarded stacks only (ones that fit the map limit)")
    ap.add_argument("--modes", default="guarded,copy",
                    help="comma list of stack modes (guarded, copy, copy:K)")
    ap.add_argument("--switch", default=None, help="switch backend (default: the first)")
    return ap.parse_args(argv)


def one(exe, mode, n, switch):
    cmd = [str(exe), "--fibers", str(n), "--stack", mode] + (["--switch", switch] if switch else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    try:
        point = json.loads(line)
    except ValueError:
        point = {"stack": mode, "fibers": n,
                 "status": f"failed: fiber-mem exited {p.returncode}: {p.stderr.strip()[-300:]}"}
    if p.returncode != 0 and point.get("status") == "ok":
        point["status"] = f"failed: fiber-mem exited {p.returncode}"
    point["command"] = " ".join(cmd[1:])
    return point


def main(argv=None):
    a = parse_args(argv)
    say = cli.reporter(a)
    exe = Path(a.build_dir) / "bin" / "fiber-mem"
    if not exe.exists():
        print(f"fibermem.py: {exe} is missing: build first (./run.sh build)", file=sys.stderr)
        return 2
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    points = []
    for mode in modes:
        counts = sorted(set(a.levels) | (set(a.guarded_levels) if mode == "guarded" else set()))
        for n in counts:
            pt = one(exe, mode, n, a.switch)
            points.append(pt)
            if pt["status"] == "ok":
                say(f"[fibermem] {mode:10s} {n:>8d} fibers: {pt['pss_bytes_per_fiber']:8.0f} B "
                    f"PSS, {pt['rss_bytes_per_fiber']:8.0f} B RSS, "
                    f"{pt['maps_per_fiber']:.3f} maps per fiber")
            else:
                say(f"[fibermem] {mode:10s} {n:>8d} fibers: {pt['status']}")
    doc = {"experiment": "fibermem", "meta": meta.collect(meta.REPO_ROOT, Path(a.build_dir)),
           "config": {"levels": a.levels, "guarded_levels": a.guarded_levels, "modes": modes,
                      "switch": a.switch, "idle_fiber": "a 128-byte frame touched, then parked"},
           "points": points}
    cli.emit(doc, a, "fibermem")
    return 1 if any(p["status"].startswith("failed") for p in points) else 0


# The suite's declaration of this experiment (experiments/__init__.py lists it).
EXPERIMENT = Experiment(
    name="fibermem",
    measures="PSS, RSS and memory maps per idle fiber with guarded and with copy stacks",
    claims=("C12",),
    binaries=("fiber-mem",),
    output="fibermem.json",
    presets={
        "quick": ["--levels", "100000,1000000", "--guarded-levels", "10000,30000"],
        "full": ["--levels", "100000,1000000", "--guarded-levels", "1000,10000,30000"],
    },
    budget_s={"quick": 7, "full": 6},
    run=driver(),
    times=False,
)


if __name__ == "__main__":
    sys.exit(main())
