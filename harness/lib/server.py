"""One echo-server process: started, its port read from its one `listening` line, stopped with
SIGTERM (or another signal), its final JSON statistics line read back."""
import json
import os
import re
import select
import signal
import subprocess
import sys

LISTENING = re.compile(r"listening \S+:(\d+)\s*$")


def listening_port(line):
    """The port of echo-server's `listening ADDR:PORT` line, or None for any other line."""
    m = LISTENING.match(line or "")
    return int(m.group(1)) if m else None


def last_json(text):
    """The last line of text that is a JSON object, parsed; None when there is none."""
    lines = [ln for ln in (text or "").splitlines() if ln.startswith("{")]
    try:
        return json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None


class NotStarted(RuntimeError):
    """The server never printed its listening line; `returncode` is its exit status (2: it
    refused its arguments) and `reason` its last words."""

    def __init__(self, reason, returncode):
        super().__init__(f"echo-server did not start: {reason}")
        self.reason, self.returncode = reason, returncode


def innermost(pid):
    """The innermost process of a wrapper chain started as pid: chrt and taskset exec the
    command, perf runs it as its first child, valgrind in place. Only for a server that starts
    no processes of its own (the chain would go on into its first worker)."""
    while True:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
        except OSError:
            return pid
        if not kids:
            return pid
        pid = int(kids[0])


class EchoServer:
    def __init__(self, cmd, stderr=subprocess.PIPE, ready_timeout=60, cwd=None,
                 stop_signal=signal.SIGTERM, wrapped=False):
        """cmd: the whole command line (pinning included). stderr: a pipe (read back on
        failure) or an open log file. cwd: where it runs (a tool's output files land there).
        wrapped: cmd runs the server under perf or valgrind, and the stop signal goes to the
        innermost process of the chain. Raises NotStarted when no listening line comes within
        ready_timeout seconds (thousands of pre-forked workers take a while)."""
        self.stop_signal, self.wrapped = stop_signal, wrapped
        self.proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                                     stderr=stderr, text=True, cwd=cwd)
        ready, _, _ = select.select([self.proc.stdout], [], [], ready_timeout)
        line = self.proc.stdout.readline() if ready else ""
        port = listening_port(line)
        if port is None:
            self._end(timeout=2)
            why = self.stderr.strip().splitlines() or [repr(line) if line else
                                                        f"exit {self.proc.returncode}"]
            raise NotStarted(why[-1] if stderr is subprocess.PIPE else " ".join(why),
                             self.proc.returncode)
        # taskset execs the server, so this pid is the server's own.
        self.port, self.pid = port, self.proc.pid
        self.ended, self.returncode, self.stderr = None, None, ""

    def stop(self, timeout=30):
        """The stop signal, SIGKILL after `timeout` seconds; returns the statistics line as a
        dict, or None. Sets `ended` (how it ended), `returncode` and `stderr` (when piped)."""
        return self._end(timeout)

    def _end(self, timeout):
        if self.proc.poll() is None:
            try:
                pid = innermost(self.proc.pid) if self.wrapped else self.proc.pid
                os.kill(pid, self.stop_signal)
            except ProcessLookupError:
                pass
        try:
            out, err = self.proc.communicate(timeout=timeout)
            self.ended = "exited"
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            self.ended = "killed after SIGTERM timeout"
        self.returncode, self.stderr = self.proc.returncode, err or ""
        return last_json(out)

    def stats(self, timeout=30):
        """stop(), for a caller that cannot go on without the statistics: RuntimeError when the
        server failed or printed none."""
        stats = self._end(timeout)
        if self.returncode != 0 or stats is None:
            raise RuntimeError(f"echo-server failed ({self.returncode}): "
                               f"{self.stderr.strip()[-400:]}")
        return stats


def start_or_exit(prog, what, cmd):
    """An EchoServer for a driver that cannot go on without it: a failure ends the driver
    with one line, `PROG: WHAT: why`."""
    try:
        return EchoServer(cmd)
    except RuntimeError as e:
        sys.exit(f"{prog}: {what}: {e}")


def stats_or_exit(prog, srv, timeout=30):
    """srv.stats() for a driver that cannot go on without them; a failure ends it likewise."""
    try:
        return srv.stats(timeout=timeout)
    except RuntimeError as e:
        sys.exit(f"{prog}: {e}")
