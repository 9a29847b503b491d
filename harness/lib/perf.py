"""perf stat, attached to a running process or around a command, read back as counts per
event: the kernel's own counts (syscall tracepoints, task-clock), not the program's."""
import os
import select
import signal
import subprocess
import time
from pathlib import Path


def parse_csv(text):
    """{event: count} from `perf stat -x ,` output; None for an event perf reports as not
    counted or not supported."""
    counts = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] and not line.startswith("#"):
            try:
                counts[f[2]] = float(f[0])
            except ValueError:
                counts[f[2]] = None
    return counts


def _read(path):
    return parse_csv(path.read_text()) if path.exists() else {}


class PerfStat:
    """perf stat attached to a running process, counting from the moment the constructor
    returns until the process exits.

    perf starts with its events disabled and is told to enable them on a control pipe; its
    acknowledgement is the moment counting began (about 30 ms after start here). A perf
    that refuses the control option is run attached with its events on, and the constructor
    returns once perf holds an event on the target and sleeps (_wait_attached); such a perf
    also notices the target's exit only at its next look (0.27 s), which at 0.45 s per
    throughput run of the quick engine comparison is why the control pipe is tried first."""

    ENABLE_WAIT = 5.0  # s: perf's start-up on a loaded machine, at most

    def __init__(self, pid, events, tmpdir):
        self.pid = pid
        self.out = Path(tmpdir) / f"stat-{pid}-{time.monotonic_ns()}.csv"
        self.cmd = ["perf", "stat", "-x", ",", "-e", events, "-o", str(self.out)]
        self.ctl = None
        self.controlled = self._start_controlled()
        if not self.controlled:
            self.proc = subprocess.Popen([*self.cmd, "-p", str(pid)], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            self._wait_attached()

    def _wait_attached(self):
        """Until perf holds an event on the target (its perf_event fd) and has gone to sleep,
        at most ENABLE_WAIT. perf enables its events once all are open and then sleeps until
        the target ends; between the first open and that sleep it runs, or waits for a CPU,
        and on a loaded machine that took long enough for about 950 of 5,000 calls to go uncounted
        (harness/perf/no-control, with a fixed 10 ms after the first open). No fixed wait is
        both short on a calm machine and long enough on a loaded one."""
        fds = Path(f"/proc/{self.proc.pid}/fd")
        deadline = time.monotonic() + self.ENABLE_WAIT
        opened = False
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                opened = opened or any("perf_event" in os.readlink(fd) for fd in fds.iterdir())
                if opened and _state(self.proc.pid) == "S":  # asleep
                    return
            except OSError:
                pass  # an fd closed while listed: look again
            time.sleep(0.01)

    def _start_controlled(self):
        """perf with its events off until enabled through a pipe: whether it acknowledged
        the enable (False: it is gone, and the caller starts it the old way)."""
        ctl_r, ctl_w = os.pipe()
        ack_r, ack_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [*self.cmd, "-D", "-1", "--control", f"fd:{ctl_r},{ack_w}", "-p", str(self.pid)],
                pass_fds=(ctl_r, ack_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            os.close(ctl_w)
            os.close(ack_r)
            raise
        finally:
            os.close(ctl_r)
            os.close(ack_w)
        try:
            os.write(ctl_w, b"enable\n")
            ready, _, _ = select.select([ack_r], [], [], self.ENABLE_WAIT)
            ack = os.read(ack_r, 16) if ready else b""
        except OSError:
            ack = b""
        finally:
            os.close(ack_r)
        if ack.startswith(b"ack"):
            self.ctl = ctl_w  # open until perf ends: end of file on it would be a command
            return True
        os.close(ctl_w)
        self.proc.kill()
        self.proc.wait()
        self.out.unlink(missing_ok=True)
        return False

    def result(self, wait=30):
        """The counts, once perf has ended: it ends with the process it watches; after `wait`
        seconds (0: at once) it is told to stop. A watched process already gone has its
        final counts: perf is told at once rather than left to notice."""
        if not _alive(self.pid):
            wait = 0
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.ctl is not None:
            os.close(self.ctl)
            self.ctl = None
        return _read(self.out)


def _state(pid):
    """pid's state letter from /proc/PID/stat (R running, S asleep, Z exited...), or None when
    it is gone. The letter follows the command's closing parenthesis."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:][:1]


def _alive(pid):
    """Whether pid runs (a zombie has exited: its counts are final)."""
    return _state(pid) not in (None, "Z")


def count(cmd, events, tmpdir, timeout=120):
    """perf stat around a whole command: ({event: count}, the command's exit status)."""
    out = Path(tmpdir) / f"stat-{time.monotonic_ns()}.csv"
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", events, "-o", str(out), "--",
                        *[str(c) for c in cmd]], capture_output=True, text=True,
                       timeout=timeout)
    return _read(out), p.returncode


SYSCALL_EVENT = "raw_syscalls:sys_enter"
SWITCH_LOOP = 20000  # switches of the shorter run; the longer makes twice as many


def syscalls_per_switch(switch_tests, backend, tmpdir):
    """System calls per switch as the kernel counts them: perf around `switch-tests
    syscall-loop BACKEND N` with SWITCH_LOOP and twice as many switches, so that start-up and
    teardown cancel out. {"per_switch": value or None, "status": "ok" | "not run" | "failed",
    "counts": [short, long], "why": what went wrong}."""
    counts = []
    for n in (SWITCH_LOOP, 2 * SWITCH_LOOP):
        try:
            got, rc = count([switch_tests, "syscall-loop", backend, n], SYSCALL_EVENT, tmpdir)
        except OSError as e:
            return {"per_switch": None, "status": "not run", "counts": counts,
                    "why": f"perf cannot run: {e.strerror}"}
        if got.get(SYSCALL_EVENT) is None:
            return {"per_switch": None, "status": "not run", "counts": counts,
                    "why": f"perf did not count {SYSCALL_EVENT}"}
        if rc != 0:
            return {"per_switch": None, "status": "failed", "counts": counts,
                    "why": f"switch-tests syscall-loop {backend} {n} exited {rc}"}
        counts.append(int(got[SYSCALL_EVENT]))
    return {"per_switch": (counts[1] - counts[0]) / SWITCH_LOOP, "status": "ok",
            "counts": counts, "why": None}
