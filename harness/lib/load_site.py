"""Where a driver's echo-load runs: here, pinned to the driver's CPUs, or on the load hosts
given with --load-host (lib/agents.py), behind the same calls (run, run_rc, start). Kept apart
from lib/load.py, which lib/agents.py itself uses to run echo-load, so that neither imports
the other."""
import atexit
import json
import os
import subprocess
import sys

from lib import agents
from lib.load import LoadFailed, parse, run, run_rc, start, without


def add_host_flags(ap):
    """--load-host and --bind, the same in every driver that runs echo-load."""
    # run.sh quick|full --load-host/--bind reach every driver through the environment.
    hosts = os.environ.get("SWITCHYARD_LOAD_HOSTS", "").split()
    ap.add_argument("--load-host", action="append", default=hosts, metavar="[USER@]HOST[:PATH]",
                    help="run echo-load on this host over ssh (repeatable; each runs its share "
                         "of the connections, one coordinated window; PATH: its echo-load "
                         "there, default the same path as here); needs --bind")
    ap.add_argument("--bind", metavar="ADDR", default=os.environ.get("SWITCHYARD_BIND") or None,
                    help="the address of this machine the load hosts reach: the server "
                         "listens there (default 127.0.0.1, loopback only)")


def check_host_flags(ap, a):
    """argparse's one-line refusal (exit 2) of --load-host without an address to serve on."""
    if a.load_host and not a.bind:
        ap.error("--load-host needs --bind ADDR: the address of this machine the load hosts "
                 "reach (the server never listens on every interface unasked)")
    if a.load_host and (a.bind == "0.0.0.0" or a.bind.startswith("127.")):
        ap.error(f"--bind {a.bind}: the load hosts need an address of this machine they can "
                 "reach, not a loopback or wildcard one")


def fleet(a):
    """The load hosts of a driver run as a context manager (lib.agents.Fleet), or a context
    manager of None when the load is local."""
    import contextlib
    if not getattr(a, "load_host", None):
        return contextlib.nullcontext()

    return agents.Fleet(a.load_host, a.load)



class RemoteRun:
    """A coordinated run of the load hosts' agents on a thread, with the Popen calls a driver
    uses on a local echo-load (poll, wait, kill, communicate, returncode): communicate gives
    the merged JSON, or the first failed agent's reason on the error side (exit 1)."""

    def __init__(self, fleet, addr, port, args, warmup, duration, ramp_timeout):
        import threading
        conns = int(args[args.index("--conns") + 1])
        rest = without(args, "--conns", "--duration")
        self.returncode, self.out, self.err = None, "", ""

        def run():
            from lib import agents
            rc = 1
            try:
                doc = fleet.run(addr, port, conns, rest, warmup, duration, ramp_timeout)
                self.out, rc = json.dumps(doc), doc.get("exit_status") or 0
            except agents.AgentError as e:
                self.err = str(e)
            except Exception as e:  # a bug here must fail the point, not hang the driver
                self.err = f"the load hosts' coordinator failed: {type(e).__name__}: {e}"
            finally:
                self.returncode = rc
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def poll(self):
        return None if self.thread.is_alive() else self.returncode

    def wait(self, timeout=None):
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise subprocess.TimeoutExpired("echo-load agents", timeout)
        return self.returncode

    def kill(self):
        pass  # the agents' own deadlines end them: the coordinator fails the point

    def communicate(self, timeout=None):
        self.wait(timeout)
        return self.out, self.err


# ---- where a driver's echo-load runs ---------------------------------------------------------

# echo-load's own --ramp-timeout default: an agent's ramp-up deadline when the args give none.
RAMP_TIMEOUT_S = 60


def runner(a, info, prog):
    """The echo-load of a driver run (a.load_host, a.bind from add_host_flags): Here, or, with
    --load-host, Hosts, opened now (control masters, each host described and its link's round
    trip timed: info["load_hosts"], the run's meta) and closed when the driver exits. A host
    that cannot be used ends the driver with one line and exit 1."""
    if not getattr(a, "load_host", None):
        return Here(a.load)
    f = fleet(a)
    try:
        f.__enter__()
    except agents.AgentError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        sys.exit(1)
    atexit.register(f.__exit__)
    info["load_hosts"] = f.described
    return Hosts(f, a.bind, a.duration)


class Here:
    """echo-load on this machine against 127.0.0.1, pinned where the driver says."""
    hosts = None
    server_flags = []

    def __init__(self, exe):
        self.exe = exe

    def run(self, port, args, cpus=None, timeout=600, check=True):
        return run(self.exe, port, args, cpus, timeout, check)

    def run_rc(self, port, args, cpus=None, timeout=600, check=True):
        return run_rc(self.exe, port, args, cpus, timeout, check)

    def start(self, port, args, cpus=None):
        return start(self.exe, port, args, cpus)


def flag(args, name, default=None):
    """The value after `name` in an argument list, as a float, or default."""
    return float(args[args.index(name) + 1]) if name in args else default


class Hosts:
    """echo-load agents on the load hosts against the server on --bind, with Here's calls (the
    CPU to pin to is the hosts' own business). Agents measure windows, not request counts: a
    run of --requests N (a count run) becomes a window long enough for N requests at the rate
    the last run of the same load reached (count_s seconds for the first). Its per-request
    figures divide the server's counts by the requests the server itself served, as with the
    load here; sizing the window keeps each connection's set-up spread over as many requests."""

    def __init__(self, fleet, bind, count_s):
        self.fleet, self.bind, self.count_s = fleet, bind, count_s
        self.hosts = fleet.described
        self.server_flags = ["--bind", bind]
        self.rates = {}  # requests/s of the last run of each load (shape()), for count windows

    @staticmethod
    def shape(args):
        return tuple(map(str, without(args, "--requests", "--duration", "--warmup")))

    def windowed(self, args):
        args = list(args)
        if "--requests" in args:
            rate = self.rates.get(self.shape(args))
            secs = min(max(flag(args, "--requests") / rate, 0.05), 60) if rate else self.count_s
            args = without(args, "--requests") + ["--duration", f"{secs:.3f}"]
        return args

    def start(self, port, args, cpus=None):
        args = self.windowed(args)
        return RemoteRun(self.fleet, self.bind, port, args, flag(args, "--warmup", 0.0),
                         flag(args, "--duration"), flag(args, "--ramp-timeout", RAMP_TIMEOUT_S))

    def run_rc(self, port, args, cpus=None, timeout=600, check=True):
        r = self.start(port, args)
        out, err = r.communicate(timeout)
        doc = parse(out)
        if doc and doc.get("requests_per_sec"):
            self.rates[self.shape(args)] = doc["requests_per_sec"]
        if check and (r.returncode != 0 or doc is None):
            why = err.strip()[-400:] or "; ".join(
                f"{g['host']}: {g['requests']} requests, exit {g['exit_status']}, stopped by "
                f"{g['stopped_by']}" for g in doc.get("agents") or [])
            raise LoadFailed(f"echo-load agents failed ({r.returncode}): {why}")
        return (doc if doc is not None else {"error": err.strip()}), r.returncode

    def run(self, port, args, cpus=None, timeout=600, check=True):
        return self.run_rc(port, args, cpus, timeout, check)[0]
