#!/usr/bin/python3
"""Cases for harness/experiments/sweep.py that need no echo-server: the limit checks of --dry-run,
argument errors, and a tiny real sweep against the harness test server standing in for
echo-server.

usage: sweep_cases.py CASE --load PATH/echo-load --server PATH/harness-test-server --out DIR

Each case writes under DIR.
"""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from cases import check, run  # noqa: E402  (harness/tests/cases.py)

SWEEP = Path(__file__).resolve().parent.parent / "experiments" / "sweep.py"
PY = "/usr/bin/python3"


def sweep(*args, timeout=60):
    p = subprocess.run([PY, str(SWEEP), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def case_dry_run_limits(a):
    rc, out, err = sweep("--dry-run", "--load", a.load, "--models", "thread,fork,epoll",
                         "--modes", "pingpong",
                         "--levels", "1,100,30000")
    print(out, end="")
    check(rc == 0, "dry run exits 0", err)
    lines = [l for l in out.splitlines() if l.startswith("[plan ")]
    check(len(lines) == 9, "one line per planned point", len(lines))
    for line in lines:
        if "conns=30000" in line:
            check("not run: fds:" in line, "30000 connections exceed the fd limit", line)
        else:
            check(line.endswith("would run"), "small points fit", line)


def case_plan_others(a):
    """A plan's '*' is every model the other groups leave out, each with that group's levels."""
    server = Path(a.load).parent / "echo-server"
    listed = [m["name"] for m in json.loads(subprocess.run(
        [server, "--list", "--json"], capture_output=True, check=True).stdout)["members"]]
    rc, out, err = sweep("--dry-run", "--load", a.load, "--plan",
                         "thread,epoll/pingpong/1,100;*/pingpong,churn/10")
    print(out, end="")
    check(rc == 0, "dry run exits 0", err)
    planned = [l.split()[2:5] for l in out.splitlines() if l.startswith("[plan ")]
    others = [m for m in listed if m not in ("thread", "epoll")]
    want = ([[m, "pingpong", f"conns={n}"] for m in ("thread", "epoll") for n in (1, 100)]
            + [[m, mode, "conns=10"] for m in others for mode in ("pingpong", "churn")])
    check(planned == want, "the named models at their levels, every other one at '*''s",
          planned)


def case_budget(a):
    """--budget-s against the stand-in: a budget of 30 s measures every point with its wall time
    per round and its plan; a budget of 2 s, less than one point's minimum, measures none and
    records each as over budget with its prediction."""
    Path(a.out).mkdir(parents=True, exist_ok=True)
    args = ["--server", a.server, "--load", a.load, "--plan", "test/pingpong/1,8",
            "--optional-plan", "test/churn/1", "--repeat", 3, "--duration", 0.2,
            "--warmup", 0.1, "--idle-samples", 1]
    outs = {}
    for budget in (30, 2):
        out_file = Path(tempfile.mkdtemp(prefix="sweep-", dir=a.out)) / "sweep.json"
        t0 = time.monotonic()
        rc, out, err = sweep(*args, "--budget-s", budget, "--out-file", out_file)
        print(out, end="")
        check(rc == 0, f"budget {budget}: sweep exits 0", err)
        check(time.monotonic() - t0 < budget + 15, f"budget {budget}: bounded in time")
        outs[budget] = json.loads(out_file.read_text())
    data = outs[30]
    check(data["config"]["budget_s"] == 30 and data["budget"]["spent_s"] <= 30,
          "the budget and what was spent recorded", data.get("budget"))
    points = data["points"]
    check([p["budget"]["deciding"] for p in points] == [True, True, False],
          "the plan's points, then the optional group's", [p.get("budget") for p in points])
    for p in points:
        check(p["status"] in ("ok", "client-bound", "contended"), "measured", p.get("reason"))
        check(len(p["rounds"]) == 3 and all(r["wall_s"] > 0 for r in p["rounds"]),
              "three rounds, each with its wall time", p["rounds"])
        check(p["budget"]["rounds_planned"] == 3 and p["budget"]["predicted_s"] > 0,
              "the plan and its prediction recorded", p["budget"])
    for p in outs[2]["points"]:
        check(p["status"] == "not run" and p["reason"].startswith("over budget (predicted "),
              "a point that does not fit is not run, with its prediction", p)
    bad = sweep("--server", a.server, "--load", a.load, "--budget-s", "0", "--dry-run")
    check(bad[0] == 2 and "positive" in bad[2], "a budget of 0 is refused", bad)
    bad = sweep("--server", a.server, "--load", a.load, "--optional-plan", "test/churn/1",
                "--dry-run")
    check(bad[0] == 2 and "--plan" in bad[2], "an optional plan needs a plan", bad)


def case_bad_args(a):
    server = Path(a.load).parent / "echo-server"
    listed = json.loads(subprocess.run([server, "--list", "--json"], capture_output=True,
                                       check=True).stdout)["members"]
    valid = ", ".join(m["name"] for m in listed)
    for args, needle in ((["--models", "bogus"], f"valid: {valid}"),
                         (["--modes", "burst"], "valid: pingpong, churn, slow"),
                         (["--levels", "1,x"], "whole numbers"),
                         (["--duration", "0"], "must be positive")):
        rc, out, err = sweep("--dry-run", "--load", a.load, *args)
        print(f"  {args} -> exit {rc}: {err.strip().splitlines()[-1]}")
        check(rc == 2, "exit status 2", rc)
        check(needle in err, f"message names the valid choices ({needle})", err)
    rc, out, err = sweep("--help")
    check(rc == 0 and "--levels" in out and "--quick" in out, "--help lists the options")


def case_stand_in(a):
    Path(a.out).mkdir(parents=True, exist_ok=True)
    out_file = Path(tempfile.mkdtemp(prefix="sweep-", dir=a.out)) / "sweep.json"
    args = ["--server", a.server, "--load", a.load, "--models", "test", "--modes",
            "pingpong,churn", "--levels", "1,8,30000", "--duration", 0.3, "--warmup", 0.1]
    t0 = time.monotonic()
    rc, out, err = sweep(*args, "--out-file", out_file)
    print(out, end="")
    check(rc == 0, "sweep exits 0", err)
    check(time.monotonic() - t0 < 30, "bounded in time")
    rc, again, err = sweep(*args, "--out-file", out_file)
    check(rc == 2 and "refusing to overwrite" in err, "an existing file is kept", err)
    progress = [l for l in out.splitlines() if l.startswith("[sweep ")]
    check(len(progress) == 6 and all("ETA" in l for l in progress), "a progress line per point")
    data = json.loads(out_file.read_text())
    for key in ("git_sha", "cpu_model", "cores", "kernel", "pinning", "date", "compiler"):
        check(key in data["meta"], f"meta.{key} present")
    check(data["meta"]["compiler"]["flags"] != "unknown", "compiler flags found", data["meta"])
    points = data["points"]
    check(len(points) == 6, "six points recorded", len(points))
    for p in points:
        where = f"{p['mode']} conns={p['conns']}"
        if p["conns"] == 30000:
            check(p["status"] == "limit" and "fds" in p["reasons"][0], "30000: limit (fds)", p)
            continue
        # A shared machine may make a point client-bound or contended: still measured.
        check(p["status"] in ("ok", "client-bound", "contended"), f"{where}: measured",
              p.get("reason"))
        check(p["load"]["requests"] > 0 and p["load_exit"] == 0, f"{where}: load ran clean")
        check(p["load"]["config"]["mode"] == p["mode"], f"{where}: the mode asked for")
        want = p["conns"] if p["mode"] == "pingpong" else 1
        check(p["server"]["max_concurrent"] >= want, f"{where}: server stats kept", p["server"])
        if data["meta"]["pinning"].get("load") == "1":  # pinned unless CPU 1 is missing
            check(p["load"]["meta"]["pinning"] == "1", f"{where}: load pinned to CPU 1")
        check(p["rss"]["peak_kb"] > 0, f"{where}: memory sampled")
        if data["meta"]["pinning"]:
            # The host's pace over each repetition's window alone (0.3 s at a sample per
            # 10 ms), not its ramp-up and warm-up (lib/host_pace.py).
            paces = [r.get("host_pace") or {} for r in p["rounds"]]
            check(all(10 <= h.get("samples", 0) <= 40 and h["span_s"] == 0.3 for h in paces),
                  f"{where}: the host's pace read over each window", paces)
        perf = p["perf"]
        check(perf["status"] == "ok" or perf["reason"], f"{where}: perf counted or why not")
        if perf["status"] == "ok":
            check("task-clock" in perf["events"], f"{where}: perf task-clock present", perf)


def case_repeat(a):
    """--plan and --repeat: every point is N echo-load runs, each recorded with its status, the
    point's `load` the median run's."""
    Path(a.out).mkdir(parents=True, exist_ok=True)
    out_file = Path(tempfile.mkdtemp(prefix="sweep-", dir=a.out)) / "sweep.json"
    rc, out, err = sweep("--server", a.server, "--load", a.load, "--plan",
                         "test/pingpong/1,4;test/churn/2", "--repeat", 3, "--duration", 0.2,
                         "--warmup", 0.05, "--idle-samples", 1, "--no-perf",
                         "--out-file", out_file)
    print(out, end="")
    check(rc == 0, "sweep exits 0", err)
    data = json.loads(out_file.read_text())
    check(data["config"]["repeat"] == 3 and data["config"]["plan"], "repeat and plan recorded")
    got = [(p["mode"], p["conns"]) for p in data["points"]]
    check(got == [("pingpong", 1), ("pingpong", 4), ("churn", 2)], "the plan's points", got)
    for p in data["points"]:
        check(len(p["rounds"]) == 3, "three runs per point", p["rounds"])
        check(isinstance(p["reasons"], list) and p["status"] in STATUSES, "status, reasons", p)
        rps = sorted(r["requests_per_sec"] for r in p["rounds"])
        check(p["load"]["requests_per_sec"] == rps[1], "load is the median run's", rps)
        check(p["load_round"] == p["load"]["round"], "load_round names it")
        for r in p["rounds"]:
            check(r["status"] in STATUSES and isinstance(r["reasons"], list), "round status", r)
        check(p["runnable"]["baseline"] is not None, "runnable recorded", p.get("runnable"))


STATUSES = ("ok", "client-bound", "contended", "limit", "failed", "not run")


def case_status_rules(a):
    """lib/status.py: every rule on made-up echo-load figures, and the A/A pair."""
    sys.path.insert(0, str(SWEEP.parent))
    from lib import rounds, status
    good = {"requests": 1000, "errors": {}, "cpu": {"cores_used": 0.5, "saturated": False}}
    cases = [
        ((good, 0, True), "ok"),
        (({**good, "cpu": {"cores_used": 0.95, "saturated": False}}, 0, True), "client-bound"),
        (({**good, "cpu": {"cores_used": 0.7, "saturated": True}}, 0, True), "client-bound"),
        (({**good, "requests": 0}, 0, True), "failed"),
        ((good, 4, True), "failed"),
        (({**good, "errors": {"fd_exhausted": 50}}, 4, True), "limit"),
        ((good, 0, False), "failed"),
        (({**good, "partial": True, "stopped_by": "gave up"}, 3, True), "failed"),
        (({"error": "echo-load: Too many open files"}, 3, True), "limit"),
        ((None, 1, True), "failed"),
    ]
    for args, want in cases:
        got, why = status.of_load(*args)
        check(got == want, f"{args} -> {want}", (got, why))
        check(want == "ok" or why, f"{want}: a reason given")
    # Contended: more runnable tasks than the run's own; two cores of load generator.
    check(status.of_load(good, 0, True, 1, 3, 1)[0] == "contended", "contended")
    check(status.of_load(good, 0, True, 1, 1, 1)[0] == "ok", "within the slack")
    check(status.of_load({**good, "cpu": {"cores_used": 1.2}}, 0, True, 2)[0] == "ok",
          "share of two cores")
    st, why = status.of_rounds([{"round": 0, "status": "ok", "reasons": []},
                                {"round": 1, "status": "client-bound", "reasons": ["x"]},
                                {"round": 2, "status": "failed", "reasons": ["y"]}])
    check(st == "failed" and why == ["round 2: x", "round 3: y"], "worst round", (st, why))
    check(status.skipped("fds: too many") == ("limit", ["fds: too many"]), "a limit skip")
    check(status.skipped("no uring")[0] == "not run", "another skip")
    aa = rounds.aa("merged", {0: 100.0, 1: 200.0}, {0: 110.0, 1: 180.0})
    check(aa["per_round"] == [1.1, 0.9] and aa["spread"] == [0.9, 1.1], "A/A ratios", aa)


def case_both_at_limit(a):
    """A load generator at its limit beside a server at its own is not client-bound (the
    server could not have gone faster); beside a server with room, or one whose share is not
    known, it is. The server's cores in a repetition come from the CPU-time readings over its
    warm-up and window, ramp-up left out, and only when the readings span enough time; the
    cores it may use are those it is pinned to."""
    sys.path.insert(0, str(SWEEP.parent))
    from types import SimpleNamespace
    from lib import status, sweep_point as SP
    busy = {"requests": 1000, "errors": {}, "cpu": {"cores_used": 0.96, "saturated": True}}
    st, why = status.of_load(busy, 0, True, 1, None, None, 0.97)
    check(st == "ok" and "both at their limit" in why[0], "both at their limit: ok, and why",
          (st, why))
    for share in (0.9, None):
        check(status.of_load(busy, 0, True, 1, None, None, share)[0] == "client-bound",
              f"server share {share}: client-bound")
    run = SimpleNamespace(warmup=0.2, duration=0.3, pin=True, server_cpu=0, load_cpu=1)
    doc = {"requests": 10, "ramp_up": {"seconds": 0.5}}
    # Readings every 0.1 s from t = 100: 0.2 CPU seconds a tenth during the ramp-up (thread
    # creation), 0.1 (one core) from the warm-up on, which starts at 100.5.
    readings, c = [], 0.0
    for k in range(12):
        t = 100.0 + k / 10
        readings.append((t, c))
        c += 0.2 if t < 100.5 else 0.1
    sample = (100.0, (0, 1, [], [], readings))
    check(SP.window_cores(sample, doc, run) == 1.0, "one core over the warm-up and window, "
          "the ramp-up left out", SP.window_cores(sample, doc, run))
    short = (100.0, (0, 1, [], [], [r for r in readings if r[0] < 100.55]))
    check(SP.window_cores(short, doc, run) is None, "readings too close together: not known")
    check(SP.window_cores(sample, {"error": "x"}, run) is None, "no echo-load figures: none")
    forked = (100.0, (0, 101, [], [], readings))
    check(SP.window_cores(forked, doc, run) is None, "a server of 101 processes: not known")
    check(SP.server_cores_of(run) == 1, "pinned to one CPU: one core")
    check(SP.server_cores_of(SimpleNamespace(pin=True, server_cpu="0-1,3")) == 3, "0-1,3: 3")
    check(SP.server_cores_of(SimpleNamespace(pin=False, server_cpu=0)) is None,
          "not pinned: its limit is not known")
    rec = SP.round_record(0, dict(busy, requests_per_sec=5000.0), 0, True,
                          SimpleNamespace(load_threads=1, pin=True, server_cpu=0), 0.98)
    check(rec["status"] == "ok" and rec["server_cores"] == 0.98, "a repetition's record",
          rec)


def case_ceiling_stand_in(a):
    ceiling = SWEEP.parent.parent / "tools" / "ceiling.py"
    Path(a.out).mkdir(parents=True, exist_ok=True)
    p = subprocess.run([PY, str(ceiling), "--server", a.server, "--load", a.load,
                        "--build-dir", str(Path(a.load).parent.parent), "--duration", "0.3",
                        "--warmup", "0.1", "--conns", "1,4", "--rate-conns", "4",
                        "--shares", "0.1,0.2"],
                       capture_output=True, text=True, timeout=60)
    print(p.stderr, end="")
    check(p.returncode == 0, "ceiling.py exits 0", p.stderr)
    data = json.loads(p.stdout)
    check(len(data["closed_loop"]) == 2 and len(data["open_loop"]) == 2, "every run recorded")
    for row in data["closed_loop"]:
        check(row["requests_per_sec"] > 0 and row["load_cores"] > 0, "closed loop measured", row)
    for row in data["open_loop"]:
        check(isinstance(row["sustained"], bool) and row["send_lag_p99_us"] is not None,
              "open loop judged", row)
    check("meta" in data and "sustained_rule" in data["config"], "meta and rule recorded")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--load", {"required": True}), ("--server", {"required": True}), ("--out", {"required": True})))
