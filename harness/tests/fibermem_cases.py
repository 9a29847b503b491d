#!/usr/bin/python3
"""Cases for harness/experiments/fibermem.py: a small grid measures both modes and reports a
guarded count beyond the memory-map limit as `not run`; bad arguments exit 2.

usage: fibermem_cases.py CASE --build-dir DIR --out FILE
"""
import json
import subprocess
import sys
from pathlib import Path
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)

DRIVER = Path(__file__).resolve().parent.parent / "experiments" / "fibermem.py"
PY = "/usr/bin/python3"


def case_grid(a):
    # 40000 guarded stacks need 80000 maps: beyond vm.max_map_count's default 65530.
    limit = int(Path("/proc/sys/vm/max_map_count").read_text())
    p = subprocess.run([PY, DRIVER, "--build-dir", a.build_dir, "--levels", "2000",
                        "--guarded-levels", "2000,40000", "--out-file", a.out],
                       capture_output=True, text=True, timeout=120)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr})")
    pts = {(q["stack"], q["fibers"]): q for q in json.loads(Path(a.out).read_text())["points"]}
    g, c = pts[("guarded", 2000)], pts[("copy", 2000)]
    check(g["status"] == "ok" and c["status"] == "ok", "both modes measured at 2000")
    check(1.9 < g["maps_per_fiber"] < 2.1, f"guarded: two maps per fiber ({g['maps_per_fiber']})")
    check(c["maps_per_fiber"] < 0.01, f"copy: no map per fiber ({c['maps_per_fiber']})")
    check(g["pss_bytes_per_fiber"] >= 4096, "guarded: at least the touched stack page per fiber")
    check(0 < c["pss_bytes_per_fiber"] < g["pss_bytes_per_fiber"] / 2,
          f"copy: a fraction of guarded ({c['pss_bytes_per_fiber']} vs "
          f"{g['pss_bytes_per_fiber']})")
    big = pts[("guarded", 40000)]["status"]
    if 2 * 40000 > limit:
        check(big.startswith("not run: ") and "vm.max_map_count" in big, f"limit named: {big}")


def case_bad_args(a):
    refuses([PY, DRIVER, "--build-dir", a.build_dir], ["--levels", "0"], ["--levels", "x"])


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                 ("--out", {"required": True})))
