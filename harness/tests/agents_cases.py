#!/usr/bin/python3
"""Load from other machines (--load-host), tested between two network namespaces made here and
joined by a veth pair of their own: the server and the sweep in one ("srv"), sshd in the other
("ld") with a host key and an authorized key made for the test in its work folder, reached as
two load hosts (two ssh aliases, two agents). Nothing leaves the namespaces; everything is
torn down at the end, also on failure. Without root, ip, sshd or network namespaces the case
says "not run: <reason>" and exits 77 (CTest's skip).

usage: agents_cases.py CASE --work DIR --bin BUILD/bin --hist-export PATH
"""
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import check, refuses, run  # noqa: E402
from lib import merge  # noqa: E402

PY = "/usr/bin/python3"
SWEEP = HARNESS / "experiments" / "sweep.py"
SKIP = 77
SSHD = "/usr/sbin/sshd"


def not_run(why):
    print(f"not run: {why}")
    sys.exit(SKIP)


def sh(*cmd, check_rc=True, timeout=30, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       **kw)
    if check_rc and p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {p.returncode}: {p.stderr.strip()}")
    return p


class Net:
    """Two namespaces and a veth pair named after this process, with 10.77.N.1 (srv) and
    10.77.N.2 (ld); sshd listening on .2; torn down by close()."""

    def __init__(self, work):
        self.work, tag = Path(work), os.getpid() % 100000
        self.srv, self.ld = f"sy-srv-{tag}", f"sy-ld-{tag}"
        self.net = f"10.77.{tag % 250}"
        self.srv_ip, self.ld_ip = f"{self.net}.1", f"{self.net}.2"
        self.made, self.sshd = [], None

    def up(self):
        for ns in (self.srv, self.ld):
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", self.srv, "link", "add", "eth-sy", "type", "veth", "peer", "name",
           "eth-sy", "netns", self.ld)
        for ns, ip in ((self.srv, self.srv_ip), (self.ld, self.ld_ip)):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth-sy")
            sh("ip", "-n", ns, "link", "set", "eth-sy", "up")

    def keys(self):
        w = self.work
        for name in ("host_key", "id"):
            (w / name).unlink(missing_ok=True)
            (w / f"{name}.pub").unlink(missing_ok=True)
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", w / name)
        (w / "authorized_keys").write_text((w / "id.pub").read_text())
        host_pub = (w / "host_key.pub").read_text().split()
        (w / "known_hosts").write_text(f"{self.ld_ip} {host_pub[0]} {host_pub[1]}\n")
        (w / "sshd_config").write_text(
            f"ListenAddress {self.ld_ip}\nPort 22\nHostKey {w / 'host_key'}\n"
            f"AuthorizedKeysFile {w / 'authorized_keys'}\nPidFile {w / 'sshd.pid'}\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "PermitRootLogin prohibit-password\nStrictModes no\nMaxSessions 50\n"
            "MaxStartups 50\nLogLevel ERROR\n")
        user = os.environ.get("USER") or "root"
        hosts = "".join(
            f"Host {alias}\n  HostName {ip}\n  User {user}\n  IdentityFile {w / 'id'}\n"
            f"  IdentitiesOnly yes\n  UserKnownHostsFile {w / 'known_hosts'}\n"
            "  StrictHostKeyChecking yes\n  GlobalKnownHostsFile /dev/null\n"
            for alias, ip in (("agent-a", self.ld_ip), ("agent-b", self.ld_ip),
                              ("dying", self.ld_ip), ("old", self.ld_ip),
                              ("nowhere", f"{self.net}.99")))
        (w / "ssh_config").write_text(hosts)

    def start_sshd(self):
        # sshd wants its privilege-separation folder /run/sshd: a tmpfs over /run in a mount
        # namespace of its own gives it one without touching this machine's /run. In the same
        # namespace the user's ~/.bashrc, which bash reads for every ssh command (seconds with
        # a version manager's set-up), is hidden from the test's sessions.
        rc = Path.home() / ".bashrc"
        hide = f"mount --bind /dev/null {rc} && " if rc.is_file() else ""
        # An echo-load copied to a load host lands in ~/.cache/switchyard: a tmpfs keeps it.
        cache = Path.home() / ".cache"
        hide += f"mkdir -p {cache} && mount -t tmpfs sy-cache {cache} && "
        script = f"mount -t tmpfs sy-run /run && mkdir -m 755 /run/sshd && {hide}exec {SSHD} " \
                 f"-D -e -f {self.work / 'sshd_config'}"
        self.sshd = subprocess.Popen(["ip", "netns", "exec", self.ld, "unshare", "-m", "sh",
                                      "-c", script], stderr=open(self.work / "sshd.log", "w"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.sshd.poll() is not None:
                raise RuntimeError(f"sshd exited {self.sshd.returncode}: "
                                   f"{(self.work / 'sshd.log').read_text().strip()}")
            p = self.in_srv("ssh", "-F", self.work / "ssh_config", "-o", "BatchMode=yes",
                            "agent-a", "true", check_rc=False)
            if p.returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError(f"sshd did not answer: {p.stderr.strip()}")

    def in_srv(self, *cmd, **kw):
        return sh("ip", "netns", "exec", self.srv, *cmd, **kw)

    def close(self):
        if self.sshd and self.sshd.poll() is None:
            self.sshd.send_signal(signal.SIGTERM)
            try:
                self.sshd.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.sshd.kill()
                self.sshd.wait()
        for ns in self.made:
            # Every process left in the namespace (an sshd session, an agent) goes with it.
            pids = sh("ip", "netns", "pids", ns, check_rc=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            sh("ip", "netns", "del", ns, check_rc=False)
        for name in ("host_key", "id"):
            for f in (name, f"{name}.pub"):
                (self.work / f).unlink(missing_ok=True)


def can_run():
    if os.geteuid() != 0:
        return "needs root for network namespaces"
    for tool in ("ip", "ssh", "ssh-keygen", "unshare"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} is not installed (Debian's openssh-server)"
    probe = f"sy-probe-{os.getpid()}"
    p = sh("ip", "netns", "add", probe, check_rc=False)
    if p.returncode != 0:
        return f"network namespaces cannot be made here: {p.stderr.strip()}"
    sh("ip", "netns", "del", probe, check_rc=False)
    return None


def sweep(a, net, hosts, out, duration=1.0, expect_json=True):
    """The sweep of one epoll pingpong point of 8 connections in srv, load from `hosts`."""
    env = dict(os.environ, SWITCHYARD_SSH_CONFIG=str(net.work / "ssh_config"))
    args = [PY, SWEEP, "--server", Path(a.bin) / "echo-server", "--load",
            Path(a.bin) / "echo-load", "--models", "epoll", "--modes", "pingpong",
            "--levels", "8", "--duration", str(duration), "--warmup", "0.2", "--no-perf",
            "--no-pin", "--idle-samples", "1", "--bind", net.srv_ip, "--out-file", out]
    for h in hosts:
        args += ["--load-host", h]
    Path(out).unlink(missing_ok=True)
    t = time.monotonic()
    p = net.in_srv(*args, check_rc=False, timeout=120, env=env)
    took = time.monotonic() - t
    doc = json.loads(Path(out).read_text()) if expect_json and Path(out).exists() else None
    return p, doc, took


def expand(h):
    """Samples standing for a histogram: each bucket's count at its middle (same buckets)."""
    sub = 1 << h["sub_bits"]
    out = []
    for i, n in h["buckets"]:
        out += [merge._bucket_mid(i, sub)] * n
    return out


def c_histogram(a, samples):
    p = subprocess.run([a.hist_export], input="\n".join(map(str, samples)) + "\n",
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "hist-export runs", p.stderr)
    return json.loads(p.stdout)


def check_merge_exact(a):
    """lib/merge.py's merge of two sample sets' exports is the export of their concatenation,
    and its percentiles are the C code's of the concatenation."""
    rng = random.Random(41)
    xs = [int(rng.lognormvariate(11, 1.2)) for _ in range(30000)]
    ys = [int(rng.lognormvariate(13, 0.5)) for _ in range(7000)] + [5, 2 ** 40]
    hx, hy, both = c_histogram(a, xs), c_histogram(a, ys), c_histogram(a, xs + ys)
    merged = merge.hist_merge([hx["histogram"], hy["histogram"]])
    check(merged == both["histogram"], "merged histogram equals the concatenated samples'",
          f"{merged['count']} / {both['histogram']['count']} samples")
    for q, p in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        check(merge.percentile_ns(merged, p) == both[q], f"merged {q} equals C's of all samples",
              f"{merge.percentile_ns(merged, p)} != {both[q]}")
    print(f"merge: {merged['count']} samples, p99 {both['p99']} ns equal")


def check_point(a, doc):
    pt = doc["points"][0]
    ld, server = pt.get("load") or {}, pt.get("server") or {}
    check(pt["status"] in ("ok", "client-bound", "contended"), "the point is measured",
          pt.get("reasons"))
    agents = ld.get("agents") or []
    check(len(agents) == 2, "two agents reported", agents)
    for ag in agents:
        check(ag["verified"] and ag["requests"] > 0, f"{ag['host']}: bytes verified", ag)
    check(ld["requests"] == sum(g["requests"] for g in agents), "requests summed", ld)
    check(ld["bytes"] == sum(g["bytes"] for g in agents), "bytes summed", ld)
    check(server.get("bytes") == ld["bytes_all"], "the server echoed the bytes the agents "
          "verified", f"server {server.get('bytes')}, agents {ld['bytes_all']}")
    check(server.get("connections") == ld["connects"], "the server's connections are the "
          "agents'", f"{server.get('connections')} / {ld['connects']}")
    # The barrier: no agent measured before every agent was ready, and they started together.
    clocks = [g["clock_ns"] for g in agents]
    last_ready = max(c["ready_ns"] for c in clocks)
    for g, c in zip(agents, clocks):
        check(c["window_ns"] - 200_000_000 >= last_ready, f"{g['host']} measured only after "
              "every agent was ready", f"window at {c['window_ns']}, last ready {last_ready}")
    spread = max(c["start_ns"] for c in clocks) - min(c["start_ns"] for c in clocks)
    # Started one after another's run, they would lie a window (1 s or more) apart.
    check(spread < 500_000_000, "the agents' windows started together", f"{spread} ns apart")
    # The merged histogram is the histogram of all the agents' samples.
    hist = ld["latency_us"]["histogram"]
    check(hist["count"] == ld["requests"], "one latency sample per request", hist["count"])
    ref = c_histogram(a, [v for g in agents for v in expand(g["histogram"])])
    check(hist["buckets"] == ref["histogram"]["buckets"], "the merged buckets are those of "
          "the agents' samples together")
    p99 = ld["latency_us"]["p99"] * 1e3
    width = merge._bucket_mid(hist["buckets"][-1][0], 1 << hist["sub_bits"]) / 128 + 1
    check(abs(p99 - ref["p99"]) <= width, "merged p99 within a bucket of the samples' p99",
          f"{p99} / {ref['p99']}")
    print(f"point: {ld['requests']} requests, {ld['bytes_all']} bytes = server's; p99 "
          f"{ld['latency_us']['p99']} us merged, {ref['p99'] / 1e3} us of the samples (bucket "
          f"{width / 1e3:.1f} us); agents "
          + ", ".join(f"{g['host']} {g['requests']} req p99 {g['p99_us']} us" for g in agents))


def check_report(work, docs, hosts=("agent-a", "agent-b")):
    """The report's machine section says where the load came from: the hosts and the steps
    (docs: {step: its JSON})."""
    sys.path.insert(0, str(HARNESS.parent / "plots"))
    import data
    from sections import machine
    folder = Path(work) / "run"
    folder.mkdir(exist_ok=True)
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(json.dumps(doc))
    lines = [x for x in machine.machine_section(data.Run(folder)) if "load: echo-load" in x]
    check(len(lines) == 1 and all(f"`{h}`" in lines[0] for h in hosts) and "ssh round trip"
          in lines[0] and f"over ssh for {', '.join(docs)}," in lines[0],
          "the report names the load hosts and the steps they loaded", lines)
    print(f"report: {lines[0]}")


def dying_agent(net, a):
    """A wrapper standing in for echo-load that is killed inside its window."""
    path = net.work / "dying-agent.sh"
    path.write_text("#!/bin/sh\n"
                    f'case " $* " in *" --agent "*) ;; *) exec {Path(a.bin) / "echo-load"} "$@";;'
                    " esac\n"
                    # sh gives a background job /dev/null unless its stdin is named
                    f'exec 3<&0\n{Path(a.bin) / "echo-load"} "$@" <&3 &\n'
                    "pid=$!\nsleep 1.5\nkill -KILL $pid\nwait $pid\n")
    path.chmod(0o755)
    return f"dying:{path}"


def old_agent(net):
    """An echo-load of another agent protocol."""
    path = net.work / "old-agent.sh"
    path.write_text("#!/bin/sh\necho 'echo-load agent-protocol 0 histogram log-linear/7/37 git "
                    "0123456789ab'\n")
    path.chmod(0o755)
    return f"old:{path}"


@contextlib.contextmanager
def namespaces(a):
    """The two namespaces, their keys and sshd, made for one case (`not run` where they cannot
    be had) and torn down after it, also when it fails; prints the setup's and the case's
    times."""
    why = can_run()
    if why:
        not_run(why)
    t0 = time.monotonic()
    net = Net(a.work)
    try:
        net.up()
        net.keys()
        net.start_sshd()
        print(f"setup: {time.monotonic() - t0:.2f} s")
        yield net
    finally:
        net.close()
    print(f"total: {time.monotonic() - t0:.1f} s")


def case_netns(a):
    with namespaces(a) as net:
        check_merge_exact(a)
        # agent-b has no echo-load at the path given: this one is copied there.
        p, doc, took = sweep(a, net, ["agent-a", "agent-b:/nonexistent/echo-load"],
                             net.work / "two.json")
        check(p.returncode == 0 and doc, "the sweep from two load hosts runs", p.stderr[-400:])
        hosts = doc["meta"].get("load_hosts") or []
        check([h["host"] for h in hosts] == ["agent-a", "agent-b"] and all(
            h["cpu_model"] and h["cores"] and h["kernel"] and h["echo_load_version"] and
            h["rtt_ms"] is not None for h in hosts), "meta names every load host", hosts)
        check([h["copied"] for h in hosts] == [False, True] and hosts[1]["echo_load"].startswith(
            ".cache/switchyard/echo-load-"), "a host without echo-load gets this one", hosts)
        check_point(a, doc)
        check_report(a.work, {"sweep": doc})
        print(f"two agents: {took:.1f} s")
        p, doc, took = sweep(a, net, ["agent-a", dying_agent(net, a)], net.work / "dies.json",
                             duration=3.0)
        pt = (doc or {"points": [{}]})["points"][0]
        why = " ".join(pt.get("reasons") or [])
        check(pt.get("status") == "failed" and "load host dying" in why and
              "exit 137" in why, "an agent that dies fails the point with its reason", why)
        print(f"dying agent: {why}")
        p, doc, took = sweep(a, net, ["agent-a", old_agent(net)], net.work / "old.json",
                             expect_json=False)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and "load host old: its echo-load is "
              "'echo-load agent-protocol 0" in lines[0], "another agent protocol is refused "
              "with its reason", p.stderr.strip())
        print(f"old agent: {lines[0]}")
        p, doc, took = sweep(a, net, ["agent-a", "nowhere"], net.work / "nowhere.json",
                             expect_json=False)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and "load host nowhere" in lines[0]
              and took < 20, "an unreachable host fails within seconds with one line",
              f"exit {p.returncode} after {took:.1f} s: {p.stderr.strip()}")
        print(f"unreachable: {took:.1f} s: {lines[0]}")


def driver(a, net, script, args, out, hosts=("agent-a",)):
    """A driver of the harness run in srv with its load from `hosts`; its JSON."""
    env = dict(os.environ, SWITCHYARD_SSH_CONFIG=str(net.work / "ssh_config"))
    Path(out).unlink(missing_ok=True)
    t = time.monotonic()
    p = net.in_srv(PY, HARNESS / script, "--build-dir", Path(a.bin).parent, "--bind",
                   net.srv_ip, "--out-file", out, *args,
                   *[x for h in hosts for x in ("--load-host", h)], check_rc=False, timeout=90,
                   env=env)
    check(p.returncode == 0 and Path(out).exists(), f"{script} runs from a load host",
          p.stderr.strip()[-600:])
    doc = json.loads(Path(out).read_text())
    described = doc["meta"].get("load_hosts") or []
    check([h["host"] for h in described] == list(hosts) and all(
        h["rtt_ms"] is not None and h["cores"] for h in described),
        f"{script}: meta names the load hosts and their link", described)
    return doc, time.monotonic() - t


def case_netns_drivers(a):
    """The drivers besides the sweep that run echo-load, with --load-host: the engine
    comparison (a count run, which agents run as a window, and a tput run) and a maxconns
    level from two agents (started, polled, their --rate shared out from the whole load's)."""
    with namespaces(a) as net:
        doc, took = driver(a, net, "experiments/engines.py", [
            "--engines", "merged,naive", "--rounds", "1", "--duration", "1.5", "--warmup",
            "0.2", "--count-requests", "3000", "--aa", "", "--profile", ""],
            net.work / "engines.json")
        docs = {"engines": doc}
        counts = [r for r in doc["runs"] if r["kind"] == "count"]
        tputs = [r for r in doc["runs"] if r["kind"] == "tput"]
        check(all(c["requests_served"] > 0 and c["ctl_per_request_engine"] is not None
                  for c in counts), "the count runs divide the server's counts by the "
              "requests it served", counts)
        # The first count run has no rate to go by: a window of --duration. The second is sized
        # from the first tput run's rate to serve about --count-requests.
        served = counts[1]["requests_served"]
        check(3000 / 4 <= served <= 3000 * 4, "a count run's window is sized for "
              "--count-requests at the last rate", f"{served} requests served")
        check(all(t["status"] in ("ok", "client-bound", "contended") and t["requests_per_sec"]
                  and t["server_cpu_us_per_request"] for t in tputs), "the tput runs are "
              "measured, with the server's CPU per request", tputs)
        print(f"engines: {took:.1f} s; count runs served "
              + ", ".join(f"{c['engine']} {c['requests_served']} (ctl/req "
                          f"{c['ctl_per_request_engine']:.3f})" for c in counts) + "; tput "
              + ", ".join(f"{t['engine']} {t['requests_per_sec']:.0f} req/s "
                          f"{t['server_cpu_us_per_request']:.2f} us/req ({t['status']})"
                          for t in tputs))
        doc, took = driver(a, net, "experiments/maxconns.py", [
            "--levels", "40", "--target", "40", "--stacks", "guarded", "--rate", "400",
            "--duration", "1"], net.work / "maxconns.json", ("agent-a", "agent-b"))
        docs["maxconns"] = doc
        pt = doc["points"][0]
        ld = pt.get("load") or {}
        check(pt["status"] in ("ok", "client-bound", "contended") and pt["all_held"],
              "maxconns holds the level from the load host", pt.get("reasons"))
        check([g["host"] for g in ld.get("agents") or []] == ["agent-a", "agent-b"] and
              ld["config"]["conns"] == 40, "maxconns' load came from the agents",
              ld.get("config"))
        # Each agent at the whole rate would give 800/s; a rate left unpaced, thousands.
        check(200 < ld["requests_per_sec"] < 600, "the agents shared out the rate, 400/s in all",
              ld["requests_per_sec"])
        print(f"maxconns: {took:.1f} s; held {pt['held']}, {ld['requests']} requests at "
              f"{ld['requests_per_sec']:.0f}/s (rate 400)")
        check_report(a.work, docs)


def local_server(a):
    srv = subprocess.Popen([Path(a.bin) / "echo-server", "--model", "epoll", "--port", "0"],
                           stdout=subprocess.PIPE, text=True)
    line = srv.stdout.readline()
    check(line.startswith("listening "), "echo-server starts", line)
    return srv, line.rsplit(":", 1)[1].strip()


def agent(a, port, *extra):
    return subprocess.Popen([Path(a.bin) / "echo-load", "--agent", "--port", port, "--conns", "4",
                             "--size", "64", "--warmup", "0.1", "--json", *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def case_agent_loopback(a):
    """echo-load --agent on this machine, no ssh: it waits for the start line after its ramp-up
    (nothing measured before it), a stop line ends its window before --duration, and stdin
    ending before the start stops it with exit 3."""
    srv, port = local_server(a)
    try:
        ag = agent(a, port, "--duration", "20")
        check(ag.stdout.readline() == "ready\n", "ready after the ramp-up")
        time.sleep(0.5)  # a window opened at the ramp-up's end would count these 0.5 s
        ag.stdin.write("start\n")
        ag.stdin.flush()
        time.sleep(0.6)
        out, err = ag.communicate("stop\n", timeout=30)
        doc = json.loads(out)
        clock = doc["agent"]
        check(ag.returncode == 0 and doc["requests"] > 0 and not doc["partial"],
              "the window is measured", f"exit {ag.returncode}: {err}")
        check(clock["window_ns"] - clock["start_ns"] >= 100_000_000 - 1_000_000
              and clock["start_ns"] - clock["ready_ns"] >= 400_000_000,
              "the window opens a warm-up after the start line, not at the ramp-up's end", clock)
        # Unheard, the stop line would leave the window to --duration's 20 s.
        check(0.2 < doc["seconds"] < 10, "the stop line ends the window", doc["seconds"])
        ag = agent(a, port, "--duration", "20")
        check(ag.stdout.readline() == "ready\n", "ready again")
        out, err = ag.communicate("", timeout=30)
        check(ag.returncode == 3 and json.loads(out)["stopped_by"] == "no start"
              and "before the start line" in err, "stdin ending before the start stops it",
              f"exit {ag.returncode}: {err}")
        print(f"agent: {doc['requests']} requests in {doc['seconds']:.2f} s, window "
              f"{(clock['window_ns'] - clock['start_ns']) / 1e6:.0f} ms after the start line")
    finally:
        srv.terminate()
        srv.wait(timeout=10)


def case_bad_flags(a):
    """--load-host without an address the load hosts reach is refused in one line (exit 2),
    as is echo-load's --agent without a window to coordinate, and a remote --host without it."""
    base = [PY, SWEEP, "--server", Path(a.bin) / "echo-server", "--load",
            Path(a.bin) / "echo-load", "--models", "epoll", "--levels", "1", "--no-perf"]
    refuses(base, ["--load-host", "h1"], ["--load-host", "h1", "--bind", "127.0.0.1"],
            ["--load-host", "h1", "--bind", "0.0.0.0"])
    # run.sh passes the flags to the drivers through the environment: the same refusal.
    env = dict(os.environ, SWITCHYARD_LOAD_HOSTS="h1 h2")
    p = subprocess.run([*map(str, base), "--dry-run"], capture_output=True, text=True, env=env,
                       timeout=30)
    check(p.returncode == 2 and "--load-host needs --bind" in p.stderr,
          "SWITCHYARD_LOAD_HOSTS without an address refused", p.stderr)
    # Every other driver that runs echo-load refuses the same, before it measures anything.
    for script in ("experiments/engines.py", "experiments/fiberio.py", "experiments/peers.py",
                   "experiments/timers.py", "experiments/maxconns.py"):
        refuses([PY, HARNESS / script, "--build-dir", Path(a.bin).parent],
                ["--load-host", "h1"], ["--load-host", "h1", "--bind", "127.0.0.1"])
    refuses([HARNESS.parent / "run.sh", "quick"], ["--load-host"], ["--bind", ""])
    load = [Path(a.bin) / "echo-load", "--port", "9", "--conns", "1", "--size", "8"]
    refuses(load, ["--host", "10.1.2.3", "--duration", "1"],
            ["--agent", "--requests", "5"], ["--agent", "--duration", "1", "--mode", "churn"],
            ["--agent", "--duration", "1", "--ramp-timeout", "0"])
    p = subprocess.run([*map(str, load[:1]), "--version"], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.startswith("echo-load agent-protocol 1 histogram "),
          "--version names the agent protocol", p.stdout)


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True}),
                 ("--bin", {"required": True}), ("--hist-export", {"default": None})))
