#!/usr/bin/python3
"""Fault injection into the suite's orchestration, through ./run.sh as a user runs it (without
its setup and build: SWITCHYARD_SKIP_BUILD=1, over the built binaries): SIGTERM and SIGINT at a
step boundary and in the middle of a step, a disk that fills during the run, a read-only run
folder, two runs at once. After each: no process the run started outlives run.sh (every one
carries a marker in its environment), the run folder holds a suite.json saying what happened
beside the outputs of the steps that finished, no temporary file is left, and the exit status
and one-line message say why. The steps are props (about a second) and fibermem (about ten,
one driver and its child).

The suite runs over the build in build/ (./run.sh's), which must be built.

usage: suite_faults.py CASE --work DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent
RUN_SH = HARNESS.parent / "run.sh"
sys.path.insert(0, str(HARNESS))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)

MARK = "SWITCHYARD_FAULT_MARK"
SKIP = 77  # CTest's SKIP_RETURN_CODE for this script: the fault cannot be made here


def marked(mark):
    """Pids of live processes whose environment carries the marker."""
    needle = f"{MARK}={mark}\0".encode()
    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and needle in Path(f"/proc/{d}/environ").read_bytes():
                out.append(int(d))
        except OSError:
            pass
    return out


def cmdlines_with(text):
    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and text in Path(f"/proc/{d}/cmdline").read_bytes().decode(
                    errors="replace"):
                out.append(int(d))
        except OSError:
            pass
    return out


def fresh(a):
    """An empty work folder: a run folder left from an earlier test run would read as this
    one's."""
    shutil.rmtree(a.work, ignore_errors=True)
    Path(a.work).mkdir(parents=True)


class Suite:
    """./run.sh quick --only STEPS --run-dir DIR started in the background, with its own lock
    and a marker; `prefix` runs it under another command (unshare)."""

    def __init__(self, a, steps, run_dir, prefix=(), lock=None):
        self.mark, self.dir = uuid.uuid4().hex, Path(run_dir)
        env = dict(os.environ, SWITCHYARD_SKIP_BUILD="1", **{MARK: self.mark},
                   SWITCHYARD_SUITE_LOCK=str(lock or Path(a.work) / "suite.lock"))
        self.out = open(Path(a.work) / f"{self.mark}.out", "w+")
        self.proc = subprocess.Popen([*prefix, str(RUN_SH), "quick", "--only", steps,
                                      "--run-dir", str(run_dir)], env=env, stdout=self.out,
                                     stderr=subprocess.PIPE, text=True)

    def wait_for(self, what, cond, timeout=60):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if cond():
                return
            check(self.proc.poll() is None, f"the suite still runs when {what}",
                  self.proc.poll())
            time.sleep(0.05)
        check(False, f"{what} within {timeout} s")

    def record(self):
        try:
            return json.loads((self.dir / "suite.json").read_text())
        except (OSError, ValueError):
            return {}

    def finish(self, timeout=60):
        """(exit status, stderr); checks that nothing of the run outlives it."""
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            check(False, f"run.sh ends within {timeout} s of the fault")
        left = marked(self.mark)
        for pid in left:  # a failed check leaves nothing running behind the test either
            os.kill(pid, signal.SIGKILL)
        check(not left, "no process of the run outlives run.sh", left)
        return self.proc.returncode, err.strip()


def one_line(err):
    check(err and len(err.splitlines()) == 1 and "Traceback" not in err,
          "one line on standard error", err)


def kept(s, steps):
    """What the run measured before the fault is still there, whole; no temporary files."""
    rec = s.record()
    for step in steps:
        check(rec.get("steps", {}).get(step, {}).get("status") == "ok",
              f"suite.json keeps step {step}", rec.get("steps"))
        check(json.loads((s.dir / f"{step}.json").read_text()).get("experiment") == step,
              f"{step}.json is kept whole")
    tmp = [p.name for p in s.dir.rglob("*.tmp")]
    check(not tmp, "no temporary file left in the run folder", tmp)
    return rec


def interrupted(a, sig, mid):
    fresh(a)
    s = Suite(a, "props,fibermem", Path(a.work) / "run")
    s.wait_for("props is recorded", lambda: "props" in s.record().get("steps", {}))
    if mid:  # fibermem's driver is measuring
        s.wait_for("fibermem's driver runs",
                   lambda: cmdlines_with(str(s.dir / "fibermem.json")))
        time.sleep(0.5)
    s.proc.send_signal(sig)
    rc, err = s.finish()
    check(rc == 128 + sig, f"exit status 128 + {sig.name}", f"{rc}: {err}")
    one_line(err)
    check(sig.name in err, "the message names the signal", err)
    rec = kept(s, ["props"])
    check(rec.get("status") == "interrupted" and sig.name in rec.get("stopped_by", ""),
          "suite.json says the run was interrupted, and by what", rec.get("status"))
    check("fibermem" not in rec["steps"], "the step stopped is not recorded as finished",
          rec["steps"].keys())
    if mid:
        check(rec.get("stopped_step") == "fibermem", "suite.json names the step stopped",
              rec.get("stopped_step"))


def case_sigterm_boundary(a):
    interrupted(a, signal.SIGTERM, mid=False)


def case_sigint_boundary(a):
    interrupted(a, signal.SIGINT, mid=False)


def case_sigterm_mid_step(a):
    interrupted(a, signal.SIGTERM, mid=True)


def case_sigint_mid_step(a):
    interrupted(a, signal.SIGINT, mid=True)


def mounted(a, name, options, keep=None):
    """A command prefix that runs the suite in a mount namespace of its own with a tmpfs at
    work/name (gone with the namespace; with `keep`, copied there first), or None where
    mounting is not allowed."""
    where = Path(a.work) / name
    where.mkdir()
    probe = subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "-o", options, "tmpfs",
                            str(where)], capture_output=True)
    if probe.returncode != 0:
        return where, None
    then = f'"$@"; rc=$?; cp -a "{where}" "{keep}"; exit $rc' if keep else 'exec "$@"'
    return where, ["unshare", "-m", "sh", "-c",
                   f'mount -t tmpfs -o {options} tmpfs "{where}" && {then}', "sh"]


def fill(path):
    """Writes zeros into `path` until the file system is full."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0")
        except OSError:
            pass


def case_disk_full(a):
    """The disk fills after props: the run stops at once, with its processes, and keeps what it
    measured, suite.json saying why."""
    fresh(a)
    keep = Path(a.work) / "kept"
    where, prefix = mounted(a, "disk", "size=2m", keep=keep)
    if prefix is None:
        print("not run: tmpfs cannot be mounted here (needs root)")
        sys.exit(SKIP)
    s = Suite(a, "props,fibermem", where / "run", prefix=prefix)
    # The tmpfs as the suite sees it, through its mount namespace.
    s.dir = Path(f"/proc/{s.proc.pid}/root") / str(where / "run").lstrip("/")
    s.wait_for("props is recorded", lambda: "props" in s.record().get("steps", {}))
    fill(s.dir.parent / "filler")
    rc, err = s.finish()
    s.dir = keep / "run"
    one_line(err)
    check(rc == 1 and "No space left" in err, "exit 1 naming the full disk", f"{rc}: {err}")
    rec = kept(s, ["props"])
    check(rec.get("status") == "stopped" and "No space left" in rec.get("stopped_by", ""),
          "suite.json says the run stopped for the full disk", rec.get("status"))


def case_read_only(a):
    """A read-only run folder: one line, exit 1, nothing run."""
    fresh(a)
    where, prefix = mounted(a, "ro", "ro,size=64k")
    if prefix is None:
        if os.geteuid() == 0:
            print("not run: as root without mount, a read-only folder cannot be made")
            sys.exit(SKIP)
        where.chmod(0o555)
        prefix = []
    for run_dir in (where, where / "run"):  # the folder itself, or one to be made in it
        s = Suite(a, "props", run_dir, prefix=prefix)
        rc, err = s.finish()
        one_line(err)
        check(rc == 1 and ("Read-only" in err or "Permission denied" in err),
              f"{run_dir.name}: exit 1 saying the folder cannot be written", f"{rc}: {err}")


def case_two_runs(a):
    """A second run while one measures refuses, naming the first's pid, and measures nothing;
    the first is not disturbed."""
    fresh(a)
    lock = Path(a.work) / "suite.lock"
    first = Suite(a, "props", Path(a.work) / "first", lock=lock)
    first.wait_for("the first run takes the lock", lambda: (Path(a.work) / "first").is_dir())
    second = Suite(a, "props", Path(a.work) / "second", lock=lock)
    rc, err = second.finish()
    one_line(err)
    check(rc == 3 and f"pid {first.proc.pid}" in err, "the second run exits 3 naming the "
          "first's pid", f"{rc}: {err}")
    check(not (Path(a.work) / "second").exists(), "the second run made no run folder")
    rc, err = first.finish()
    check(rc == 0 and first.record().get("status") == "done", "the first run finishes",
          f"{rc}: {err}")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
