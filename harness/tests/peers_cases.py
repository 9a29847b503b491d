#!/usr/bin/python3
"""Cases for harness/experiments/peers.py: a tiny run measures the fiber server and a peer in
interleaved rounds, with intervals and paired ratios, and leaves out a level beyond a model's
declared ceiling; bad arguments exit 2.

usage: peers_cases.py CASE --build-dir DIR --out FILE
"""
import json
import subprocess
from pathlib import Path
from cases import check, refuses, run  # noqa: E402  (harness/tests/cases.py)

DRIVER = Path(__file__).resolve().parent.parent / "experiments" / "peers.py"
PY = "/usr/bin/python3"


def listed(build_dir):
    out = subprocess.run([Path(build_dir) / "bin" / "echo-server", "--list", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return {m["name"]: m["props"] for m in json.loads(out)["members"]}


def case_tiny(a):
    models = listed(a.build_dir)
    peer = "pth" if "pth" in models else "epoll"  # pth declares a ceiling; epoll is always built
    ceiling = models[peer].get("conns_ceiling")
    big = (ceiling + 1) if ceiling else 20
    p = subprocess.run([PY, DRIVER, "--build-dir", a.build_dir, "--servers", f"fiber,{peer}",
                        "--conns", f"10,{big}", "--rounds", "2", "--duration", "0.1",
                        "--warmup", "0.05", "--count-rounds", "0", "--out-file", a.out],
                       capture_output=True, text=True, timeout=120)
    print(p.stdout, end="")
    check(p.returncode == 0, f"driver exits 0 (got {p.returncode}: {p.stderr})")
    doc = json.loads(Path(a.out).read_text())
    rows = {(r["conns"], r["server"]): r for r in doc["summary"]}
    for name in ("fiber", peer):
        r = rows.get((10, name))
        check(r and r["rounds"] == 2, f"{name} at 10 connections: 2 rounds", r)
        check(r["server_cpu_us_per_request"] > 0 and r["requests_per_sec"] > 0,
              f"{name}: CPU and throughput measured", r)
        lo, hi = r["server_cpu_us_per_request_ci"]
        check(lo <= r["server_cpu_us_per_request"] <= hi, f"{name}: the median in its interval")
    ratio = [x for x in doc["ratios"] if x["conns"] == 10 and x["den"] == peer
             and x["key"] == "server_cpu_us_per_request"]
    check(len(ratio) == 1 and len(ratio[0]["per_round"]) == 2, "one paired CPU ratio, 2 rounds",
          ratio)
    if ceiling:
        skipped = [s for s in doc["not_run"] if s["server"] == peer]
        check(skipped and skipped[0]["conns"] == big and (big, peer) not in rows,
              f"{peer} at {big} connections: not run, beyond its ceiling {ceiling}", skipped)


def case_bad_args(a):
    refuses([PY, DRIVER, "--build-dir", a.build_dir], ["--servers", "bogus"],
            ["--servers", "epoll"], ["--rounds", "0"], ["--conns", "x"])


if __name__ == "__main__":
    raise SystemExit(run(globals(), __doc__, ("--build-dir", {"required": True}),
                         ("--out", {"required": True})))
