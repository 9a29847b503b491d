"""What keeps a suite run to itself and leaves nothing behind it (harness/suite.py):

    take_lock()          one measuring run per machine: an exclusive flock on LOCK_ENV's file
                         (default /tmp/switchyard-suite.lock) holding the holder's pid; Busy
                         when another run holds it
    on_signals()         SIGTERM, SIGINT and SIGHUP raise Interrupted in the main thread
    ignore_signals()     while the run stops
    stop_descendants()   every process the run started, orphans included, terminated and
                         reaped (the suite is their subreaper)
    write_record(p, r)   suite.json, also on a disk too full for a second copy
"""
import ctypes
import fcntl
import json
import os
import signal
import time
from pathlib import Path

from lib.meta import write_json

LOCK_ENV = "SWITCHYARD_SUITE_LOCK"
DEFAULT_LOCK = "/tmp/switchyard-suite.lock"
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PR_SET_CHILD_SUBREAPER = 36
# Seconds the run's processes get to end on SIGTERM before SIGKILL, and then to be gone.
TERM_GRACE_S, KILL_GRACE_S = 5.0, 5.0


class Busy(Exception):
    """Another run holds the machine's suite lock."""


class Interrupted(BaseException):
    """A stop signal arrived. A BaseException, so a step's `except OSError` cannot swallow it."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


def lock_path():
    return Path(os.environ.get(LOCK_ENV) or DEFAULT_LOCK)


def _open_lock(path):
    # Opened without O_CREAT when it exists: /tmp's protected_regular refuses O_CREAT on a
    # file another user made, even a writable one.
    try:
        return os.open(path, os.O_RDWR)
    except FileNotFoundError:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        os.fchmod(fd, 0o666)
        return fd


def holder(path):
    """The pid the lock file names, or None."""
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def take_lock():
    """Holds the suite lock until the process ends; returns its descriptor. A lock already
    held under this very pid is ours: run.sh takes it before it builds, then execs the suite,
    which keeps run.sh's pid and its descriptor. OSError when the file cannot be opened."""
    path = lock_path()
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = holder(path)
        if pid == os.getpid():
            return fd
        os.close(fd)
        raise Busy(f"another suite run is measuring on this machine (pid {pid or 'unknown'}, "
                   f"lock {path})") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def on_signals():
    """A stop signal raises Interrupted once; the stop itself is not interrupted again."""
    def stop(signum, frame):
        ignore_signals()
        raise Interrupted(signum)
    for s in SIGNALS:
        signal.signal(s, stop)


def ignore_signals():
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def become_subreaper():
    """Orphans of the run's processes (a driver's server when the driver died) become this
    process's children instead of init's, so stop_descendants() still finds them. Best effort:
    False where prctl refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def reap():
    """Collects every child that has exited (orphans handed to the subreaper included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def descendants(root):
    """Live (not zombie) processes below `root`, from /proc."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat[stat.rfind(")") + 2:].split()[:2]
        if state != "Z":
            children.setdefault(int(ppid), []).append(int(d))
    out, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def stop_descendants():
    """SIGTERM to every process below this one (new ones too, as they appear), SIGKILL to
    those left after TERM_GRACE_S; returns the pids still alive after KILL_GRACE_S more
    (none, unless one is stuck in the kernel)."""
    me, sent = os.getpid(), set()
    t0 = time.monotonic()
    while time.monotonic() - t0 < TERM_GRACE_S + KILL_GRACE_S:
        reap()
        left = descendants(me)
        if not left:
            return []
        late = time.monotonic() - t0 > TERM_GRACE_S
        for pid in left:
            if late or pid not in sent:
                try:
                    os.kill(pid, signal.SIGKILL if late else signal.SIGTERM)
                except ProcessLookupError:
                    pass
                sent.add(pid)
        time.sleep(0.05)
    reap()
    return descendants(me)


def write_record(path, record):
    """suite.json, replaced whole; when that fails (a full disk has no room for the second
    copy), overwritten in place without indentation, which fits the pages the indented copy
    held. OSError when neither works (the old file then stays as it was, or is lost to the
    in-place write's own failure)."""
    try:
        write_json(path, record)
    except OSError:
        if not Path(path).exists():
            raise
        with open(path, "w") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
