#!/usr/bin/python3
"""Cases for harness/experiments/scale.py (claims C14, C16): a tiny run of the idle and churn
parts writes scale.json with a measured median per configuration and level, the part left
out recorded as not run, and each row says how long the server took to settle after its idle
connections opened; the wait for that, on a fake clock; bad arguments exit 2.

usage: scale_cases.py CASE --build-dir DIR --work DIR
"""
import json
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)
from experiments import scale  # noqa: E402

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
    # The rows measured (a short window on a 2-core machine may read client-bound: still
    # measured), every one of them.
    rows = [r for r in doc["idle"]["runs"] + doc["churn"]["runs"] if "requests" in r]
    check(sum(r in doc["idle"]["runs"] for r in rows) == 8 and
          sum(r in doc["churn"]["runs"] for r in rows) >= 4,
          "idle: 2 rounds x 2 levels x 2 configurations measured; churn: some", len(rows))
    check(all(r["settled"] and 0 < r["settle_s"] < scale.SETTLE_TIMEOUT_S and
              r["settle_cpu_ms"] >= 0 for r in rows),
          "every measured row waited for its server to settle, and it did",
          [(r["settle_s"], r["settle_cpu_ms"], r["settled"]) for r in rows if "settled" in r])
    check(all(r.get("host_pace", {}).get("samples", 0) > 0 for r in rows),
          "every measured window carries the host's pace over it (lib/host_pace.py)",
          [r.get("host_pace") for r in rows])
    churn = doc["churn"]["summary"]
    check(churn and all(pt["status"] == "ok" and pt["median"] > 0
                        for rows in churn.values() for pt in rows.values()),
          "churn: a rate per configuration and level", churn)


class FakeServer:
    """A server's CPU clock on a fake clock: busy (one CPU) until busy_until seconds, idle
    after, but for `tick` of CPU per second (a timer's wake-ups)."""

    def __init__(self, busy_until, tick=0.0):
        self.now, self.busy_until, self.tick = 0.0, busy_until, tick

    def sleep(self, s):
        self.now += s

    def clock(self):
        return self.now

    def cpu_ns(self):
        busy = min(self.now, self.busy_until)
        return int((busy + self.tick * max(0.0, self.now - self.busy_until)) * 1e9)


def case_settle(a):
    # Busy for 0.32 s after the idle connections opened: the first quiet step ends at 0.40 s,
    # and the server burned its 320 ms meanwhile, none of it charged to the measurement.
    srv = FakeServer(0.32)
    waited, burned, settled = scale.settle(srv.cpu_ns, clock=srv.clock, sleep=srv.sleep)
    check(settled and abs(waited - 0.40) < 1e-9 and abs(burned - 320) < 1e-6,
          "a busy server is waited for until one step is quiet", (waited, burned, settled))
    # A server already idle costs one step; one that wakes for its timers (2% busy) is idle.
    for busy, tick in ((0.0, 0.0), (0.0, 0.02)):
        srv = FakeServer(busy, tick)
        got = scale.settle(srv.cpu_ns, clock=srv.clock, sleep=srv.sleep)
        check(got[2] and abs(got[0] - scale.SETTLE_STEP_S) < 1e-9,
              f"an idle server (ticking at {tick:.0%}) settles in one step", got)
    # One that never quiets is measured after the timeout, and says so.
    srv = FakeServer(1e9)
    waited, _, settled = scale.settle(srv.cpu_ns, clock=srv.clock, sleep=srv.sleep)
    check(not settled and scale.SETTLE_TIMEOUT_S <= waited < scale.SETTLE_TIMEOUT_S + 0.1,
          "a server busy throughout ends the wait at the timeout, unsettled", (waited, settled))


def case_bad_args(a):
    refuses([PY, *MODULE, "--build-dir", a.build_dir], ["--parts", "bogus"],
            ["--rounds", "0"], ["--levels", "x"])


if __name__ == "__main__":
    raise SystemExit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                         ("--work", {"required": True})))
