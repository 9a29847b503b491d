"""echoserver.py - one echo-server process for the drivers: started, its port read from the one
`listening` line, stopped with SIGINT and its statistics JSON line read back.

Shared by engines_bench.py, fiberio_bench.py and engines_scale.py; each decides what a failure
means for its run (exit, or a `not run` point) from the RuntimeError raised here."""
import json
import re
import signal
import subprocess


class EchoServer:
    def __init__(self, cmd):
        """cmd: the whole command line (pinning included). Raises RuntimeError with the
        server's own words when it does not print its `listening` line."""
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"listening [\d.]+:(\d+)", line)
        if not m:
            self.proc.kill()
            err = self.proc.stderr.read().strip()
            self.proc.wait()
            raise RuntimeError(f"echo-server did not start: {err or repr(line)}")
        self.port, self.pid = int(m.group(1)), self.proc.pid

    def stop(self, timeout=30):
        """SIGINT, then the statistics line as a dict; SIGKILL after `timeout` seconds.
        Raises RuntimeError when the server failed or printed no statistics."""
        self.proc.send_signal(signal.SIGINT)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if self.proc.returncode != 0 or not lines:
            raise RuntimeError(f"echo-server failed ({self.proc.returncode}): "
                               f"{err.strip()[-400:]}")
        return json.loads(lines[-1])
