#!/usr/bin/python3
"""Cases for harness/sweep.py that need no echo-server: the limit checks of --dry-run, argument
errors, and a tiny real sweep against the harness test server standing in for echo-server.

usage: sweep_cases.py CASE --load PATH/echo-load --server PATH/harness-test-server --out DIR

Each case writes under DIR.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SWEEP = Path(__file__).resolve().parent.parent / "sweep.py"
PY = "/usr/bin/python3"


class Failed(Exception):
    pass


def check(cond, what, detail=""):
    if not cond:
        raise Failed(what + (f": {detail}" if detail else ""))


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
            check(p["status"] == "not run" and "fds" in p["reason"], "30000: not run (fds)", p)
            continue
        check(p["status"] == "ok", f"{where}: ok", p.get("reason"))
        check(p["load"]["requests"] > 0 and p["load_exit"] == 0, f"{where}: load ran clean")
        check(p["load"]["config"]["mode"] == p["mode"], f"{where}: the mode asked for")
        want = p["conns"] if p["mode"] == "pingpong" else 1
        check(p["server"]["max_concurrent"] >= want, f"{where}: server stats kept", p["server"])
        if data["meta"]["pinning"].get("load") == "1":  # pinned unless CPU 1 is missing
            check(p["load"]["meta"]["pinning"] == "1", f"{where}: load pinned to CPU 1")
        check(p["rss"]["peak_kb"] > 0, f"{where}: memory sampled")
        perf = p["perf"]
        check(perf["status"] == "ok" or perf["reason"], f"{where}: perf counted or why not")
        if perf["status"] == "ok":
            check("task-clock" in perf["events"], f"{where}: perf task-clock present", perf)


def case_ceiling_stand_in(a):
    ceiling = SWEEP.with_name("ceiling.py")
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


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("case")
    ap.add_argument("--load", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    fn = globals().get("case_" + a.case.replace("-", "_"))
    if fn is None:
        print(f"unknown case {a.case!r}", file=sys.stderr)
        return 2
    try:
        fn(a)
    except Failed as e:
        print(f"FAIL {a.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
