"""echo-load on other machines (--load-host [USER@]HOST[:ECHO_LOAD]): one agent per load host,
started over OpenSSH, and one coordinated window.

Each host gets a control master (BatchMode: a key, never a password prompt) for the whole
driver run. Its echo-load is the one at the same path as here (the same ./run.sh build there),
or the path after the colon, or, when neither exists and the machine is of the same
architecture, this echo-load copied to ~/.cache/switchyard/. An echo-load whose agent protocol,
histogram layout or commit differs from ours is refused with both versions named.

A point: every agent ramps up its share of the connections and says "ready"; when all have,
each is sent "start", the coordinator waits the warm-up and the window, and sends every agent
"stop". An agent that stops before that, or says anything else, fails the point with its
reason. SWITCHYARD_SSH_CONFIG names an ssh_config file to use (ssh -F), for ports, keys and
known hosts kept apart from the user's own."""
import json
import os
import platform
import select
import shlex
import statistics
import subprocess
import tempfile
import time

from lib import load, merge

CONNECT_TIMEOUT = 5
SSH_OPTS = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
            "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3"]
CACHE = ".cache/switchyard"


class AgentError(RuntimeError):
    """A load host could not be used, or its agent failed: the message is one line."""


def local_version(exe):
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    return p.stdout.strip()


def version_problem(here, there):
    """Why an agent's `echo-load --version` cannot join a run of ours, or None. The commit is
    compared only where both know it."""
    a, b = here.split(), there.split()
    if a[:-1] != b[:-1]:
        return f"its echo-load is '{there or 'unknown'}', this one '{here}'"
    if "unknown" not in (a[-1], b[-1]) and a[-1] != b[-1]:
        return f"its echo-load was built from commit {b[-1]}, this one from {a[-1]}"
    return None


def split_spec(spec, local_exe):
    """([USER@]HOST, echo-load path there) of --load-host's value."""
    host, _, path = spec.partition(":")
    if not host or host.startswith("-") or any(c.isspace() for c in host):
        raise AgentError(f"--load-host wants [USER@]HOST[:ECHO_LOAD], got {spec!r}")
    return host, path or os.path.abspath(local_exe)


class Host:
    def __init__(self, spec, local_exe, ctl):
        self.spec = spec
        self.host, self.exe = split_spec(spec, local_exe)
        self.ctl = ctl

    def base(self):
        cfg = os.environ.get("SWITCHYARD_SSH_CONFIG")
        return ["ssh", *(["-F", cfg] if cfg else []), *SSH_OPTS, "-o", f"ControlPath={self.ctl}"]

    def ssh(self, remote):
        """The ssh command running the shell words `remote` on this host."""
        return self.base() + [self.host, "--", remote]

    def run(self, remote, timeout=30, stdin=None):
        try:
            p = subprocess.run(self.ssh(remote), capture_output=True, timeout=timeout,
                               input=stdin)
        except subprocess.TimeoutExpired:
            raise AgentError(f"load host {self.host}: no answer in {timeout} s") from None
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def open(self):
        try:
            # A driver killed before it closes its masters leaves none behind for long: one
            # idle this long ends (a later command then connects on its own).
            master = ["-o", "ControlMaster=yes", "-o", "ControlPersist=600", "-f", "-N"]
            p = subprocess.run(self.base() + master + [self.host], capture_output=True, text=True,
                               timeout=CONNECT_TIMEOUT * 3, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise AgentError(f"load host {self.host}: ssh did not connect within "
                             f"{CONNECT_TIMEOUT * 3} s") from None
        if p.returncode != 0:
            why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
            raise AgentError(f"load host {self.host}: ssh failed: {why}")

    def close(self):
        subprocess.run(self.base() + ["-O", "exit", self.host],
                       capture_output=True, timeout=10)

    def describe(self, local_exe, here):
        """The host's CPU, kernel, cores and echo-load version; copies our echo-load there when
        the host has none and the architecture matches; AgentError when versions differ."""
        q = shlex.quote(self.exe)
        rc, out, err = self.run(
            "uname -sr; uname -m; getconf _NPROCESSORS_ONLN; "
            "sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1; "
            f"if [ -x {q} ]; then {q} --version; else echo missing; fi")
        lines = out.splitlines() + [""] * 5
        kernel, machine, cores, cpu, version = lines[:5]
        if rc != 0 or not kernel:
            raise AgentError(f"load host {self.host}: could not describe it: "
                             f"{(err.strip().splitlines() or [f'exit {rc}'])[-1]}")
        copied = False
        if version == "missing":
            version = self.copy(local_exe, machine, here)
            copied = True
        why = version_problem(here, version)
        if why:
            raise AgentError(f"load host {self.host}: {why}: build the same commit there "
                             f"(./run.sh build) or remove it there to have this one copied")
        return {"host": self.host, "kernel": kernel, "arch": machine,
                "cores": int(cores) if cores.isdigit() else None, "cpu_model": cpu or None,
                "echo_load": self.exe, "echo_load_version": version, "copied": copied}

    def copy(self, local_exe, machine, here):
        if machine != platform.machine():
            raise AgentError(f"load host {self.host}: no echo-load at {self.exe} and its "
                             f"architecture ({machine}) is not this one's "
                             f"({platform.machine()}): build it there (./run.sh build)")
        self.exe = f"{CACHE}/echo-load-{here.split()[-1]}"
        with open(local_exe, "rb") as f:
            rc, _, err = self.run(f"mkdir -p {CACHE} && cat > {self.exe}.tmp && chmod +x "
                                  f"{self.exe}.tmp && mv {self.exe}.tmp {self.exe} && "
                                  f"{self.exe} --version", timeout=120, stdin=f.read())
        if rc != 0:
            raise AgentError(f"load host {self.host}: copying echo-load failed: "
                             f"{(err.strip().splitlines() or [f'exit {rc}'])[-1]}")
        return self.run(f"{self.exe} --version")[1].strip()

    def rtt_ms(self, n=5):
        """The median round trip of a line over an ssh channel to the host, in ms."""
        p = subprocess.Popen(self.ssh("cat"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        times = []
        try:
            for _ in range(n):
                t = time.monotonic()
                p.stdin.write(b"x\n")
                p.stdin.flush()
                if not select.select([p.stdout], [], [], 10)[0] or not p.stdout.readline():
                    return None
                times.append((time.monotonic() - t) * 1e3)
        finally:
            p.stdin.close()
            p.wait(timeout=10)
        return round(statistics.median(times), 3)


class Fleet:
    """The load hosts of one driver run: opened (control masters, descriptions, link RTT)
    on entering, closed on leaving."""

    def __init__(self, specs, local_exe):
        self.local_exe = local_exe
        self.tmp = tempfile.TemporaryDirectory(prefix="switchyard-ssh-")
        self.hosts = [Host(s, local_exe, os.path.join(self.tmp.name, f"{i}.ctl"))
                      for i, s in enumerate(specs)]
        self.described = []

    def __enter__(self):
        try:
            here = local_version(self.local_exe)
            for h in self.hosts:
                h.open()
            for h in self.hosts:
                self.described.append(dict(h.describe(self.local_exe, here),
                                           rtt_ms=h.rtt_ms()))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for h in self.hosts:
            if os.path.exists(h.ctl):
                h.close()
        self.tmp.cleanup()

    def run(self, addr, port, conns, args, warmup, duration, ramp_timeout):
        """One coordinated echo-load run from every host against addr:port, `conns` shared
        out among them: the merged result (lib.merge), or AgentError naming the first agent
        that failed and why."""
        return run_agents(self.hosts, addr, port, conns, args, warmup, duration, ramp_timeout)


def shares(total, n):
    return [total * (i + 1) // n - total * i // n for i in range(n)]


def start_agents(hosts, addr, port, conns, args, duration):
    procs = []
    # --rate is the whole load's, as --conns is: each agent sends its connections' share.
    rate = float(args[args.index("--rate") + 1]) if "--rate" in args else None
    args = load.without(args, "--rate")
    # An agent's own --duration is only a backstop: the stop line ends every window at once.
    for h, c in zip(hosts, shares(conns, len(hosts))):
        words = [h.exe, "--agent", "--host", addr, "--port", str(port), "--conns", str(c),
                 *args, *(["--rate", f"{rate * c / conns:g}"] if rate else []),
                 "--duration", f"{duration + 5:g}", "--json"]
        procs.append(subprocess.Popen(h.ssh(shlex.join(map(str, words))), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    return procs


def last_words(proc, timeout=15):
    """(its JSON or None, the last line of its stderr) of a finished or finishing agent."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    doc = merge_json(out)
    why = (err.decode(errors="replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return doc, why


def merge_json(out):
    text = out.decode(errors="replace").strip().splitlines()
    try:
        return json.loads(text[-1]) if text and text[-1].startswith("{") else None
    except ValueError:
        return None


def hang_up(p):
    """Closes an agent's stdin (its stop, or its end before a start), once."""
    if p.stdin:
        try:
            p.stdin.close()
        except OSError:
            pass
        p.stdin = None  # communicate() must not flush it again


def failed(hosts, procs, i, what):
    """AgentError for agent i, after every agent was told to stop and has ended."""
    for p in procs:
        hang_up(p)
    words = [last_words(p) for p in procs]
    doc, why = words[i]
    code = procs[i].returncode
    stop = f", stopped_by {doc['stopped_by']}" if doc and doc.get("stopped_by") else ""
    return AgentError(f"load host {hosts[i].host}: echo-load {what} (exit {code}{stop}): {why}")


def wait_ready(hosts, procs, deadline):
    waiting = {p.stdout.fileno(): i for i, p in enumerate(procs)}
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            raise failed(hosts, procs, next(iter(waiting.values())),
                         "was not ready by the ramp-up's deadline")
        ready, _, _ = select.select(list(waiting), [], [], left)
        for fd in ready:
            i = waiting.pop(fd)
            if procs[i].stdout.readline() != b"ready\n":
                raise failed(hosts, procs, i, "stopped before its window")


def watch(hosts, procs, until):
    """Waits until `until`, failing the point as soon as an agent ends early."""
    fds = {p.stdout.fileno(): i for i, p in enumerate(procs)}
    while time.monotonic() < until:
        ready, _, _ = select.select(list(fds), [], [], max(0, until - time.monotonic()))
        if ready:
            raise failed(hosts, procs, fds[ready[0]], "ended inside the window")


def run_agents(hosts, addr, port, conns, args, warmup, duration, ramp_timeout):
    procs = start_agents(hosts, addr, port, conns, args, duration)
    try:
        wait_ready(hosts, procs, time.monotonic() + ramp_timeout + 2 * CONNECT_TIMEOUT + 5)
        for p in procs:
            p.stdin.write(b"start\n")
            p.stdin.flush()
        watch(hosts, procs, time.monotonic() + warmup + duration)
        for p in procs:
            p.stdin.write(b"stop\n")
            hang_up(p)
        docs = []
        for i, p in enumerate(procs):
            doc, why = last_words(p, timeout=30)
            if doc is None:
                raise failed(hosts, procs, i, "gave no JSON")
            docs.append(doc)
    except (BrokenPipeError, OSError) as e:
        bad = next((i for i, p in enumerate(procs) if p.poll() is not None), 0)
        raise failed(hosts, procs, bad, f"lost its channel ({e.strerror or e})") from None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    try:
        return merge.merge([h.host for h in hosts], docs)
    except merge.MergeError as e:
        raise AgentError(f"load hosts: {e}") from None
