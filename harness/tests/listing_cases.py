#!/usr/bin/python3
"""The listings the harness reads instead of sentences: what `echo-server --list --json` declares
of the fiber model (read policies, default read policy, default engine) must be what the
server does.

usage: listing_cases.py CASE --bin DIR
"""
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from lib import server  # noqa: E402
from cases import check, run  # noqa: E402  (harness/tests/cases.py)


def listing(exe):
    p = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True,
                       timeout=10)
    check(p.returncode == 0, f"{exe.name} --list --json exits 0", p.stderr)
    return json.loads(p.stdout)


def served_stats(exe, *args):
    """A server started with args and stopped at once: its statistics line."""
    srv = server.EchoServer([exe, "--port", "0", *args], ready_timeout=10)
    return srv.stats(timeout=10)


def case_fiber_model(a):
    exe = Path(a.bin) / "echo-server"
    members = {m["name"]: m["props"] for m in listing(exe)["members"]}
    check("fiber" in members, "the fiber model is listed", list(members))
    fiber = members["fiber"]
    policies = fiber.get("read_policies")
    check(isinstance(policies, list) and policies, "read_policies is a non-empty list", fiber)
    print(f"fiber: read policies {policies}, default {fiber.get('default_read_policy')}, "
          f"default engine {fiber.get('default_engine')}")
    for p in policies:
        got = served_stats(exe, "--model", "fiber", "--read-policy", p)["read_policy"]
        check(got == p, f"--read-policy {p} is accepted and used", got)
    bad = subprocess.run([str(exe), "--model", "fiber", "--read-policy", "no-such-policy"],
                         capture_output=True, text=True, timeout=10)
    check(bad.returncode == 2, "an unlisted policy is refused", bad.returncode)
    stats = served_stats(exe, "--model", "fiber")
    check(stats["read_policy"] == fiber.get("default_read_policy"),
          "the declared default read policy is the one used", stats["read_policy"])
    check(stats["engine"] == fiber.get("default_engine"),
          "the declared default engine is the one used", stats["engine"])
    engines = [m["name"] for m in listing(Path(a.bin) / "engine-info")["members"]]
    check(fiber["default_engine"] in engines, "the default engine is a listed engine", engines)
    others = [n for n, p in members.items() if n != "fiber" and "read_policies" in p]
    check(all(members[n]["takes_fiber_flags"] for n in others),
          "only models that take the fiber flags list read policies", others)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--bin", {"required": True})))
