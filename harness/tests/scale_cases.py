#!/usr/bin/python3
"""Cases for harness/experiments/scale.py (claims C14, C16): a tiny run of the idle and churn
parts writes scale.json with a measured median per configuration and level, the part left
out recorded as not run; bad arguments exit 2.

usage: scale_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
from pathlib import Path

from cases import check, refuses, run

PY = "/usr/bin/python3"
MODULE = ["-m", "experiments.scale"]


def case_tiny(a):
    out = Path(a.work) / "scale.json"
    p = subprocess.run([PY, *MODULE, "--build-dir", a.build_dir, "--parts", "idle,churn",
                        "--configs", "poll,merged", "--levels", "0,50",
                        "--churn-levels", "0,50", "--rounds", "2", "--churn-rounds", "2",
                        "--duration", "0.1", "--out-file", out],
                       capture_output=True, text=True, timeout=150)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr.strip()})")
    doc = json.loads(out.read_text())
    check(doc["experiment"] == "scale", "scale.json names its experiment", doc["experiment"])
    check(doc["completion"]["status"] == "not run", "the part left out is not run",
          doc["completion"])
    idle = doc["idle"]["summary"]
    check({"poll", "merged"} <= set(idle), "an idle row per configuration asked for",
          sorted(idle))
    for config in ("poll", "merged"):
        for level, point in idle[config].items():
            check(point["status"] == "ok" and point["median"] > 0,
                  f"idle {config} at {level} idle connections: a CPU per request", point)
    churn = doc["churn"]["summary"]
    check(churn and all(pt["status"] == "ok" and pt["median"] > 0
                        for rows in churn.values() for pt in rows.values()),
          "churn: a rate per configuration and level", churn)


def case_bad_args(a):
    refuses([PY, *MODULE, "--build-dir", a.build_dir], ["--parts", "bogus"],
            ["--rounds", "0"], ["--levels", "x"])


if __name__ == "__main__":
    raise SystemExit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                         ("--work", {"required": True})))
