"""regress_paired.py - the paired half of the timing gate: the same switch rows timed in
processes of a base build and of the head build, alternated on this machine, so that no
stored baseline (and no CPU model's) is needed.

A base is a commit: `default_base` picks the merge base with main on a branch, else the
commit before HEAD, else none (a shallow clone); `build_base` checks it out in a git worktree
under build-base/src and builds switch-bench alone into build-base/build, with the build type
of the head's build. `run_paired` then runs ROUNDS processes of each, base and head
alternating and the order flipped every round (base-head, head-base, ...), so that a drift of
the machine over the minute falls on both alike. Both run unpinned, as the timing half of the
gate always has: the same placement rules for both.

Before any of that, `same_code` compares what the loader maps of the two switch-bench files:
when base and head build the same code (a commit that touches no switch-bench source), no
timing of it can differ but by the machine, and the pairing is not run. This is a count, not
a timing: two builds of one code, from build/ and build-base/, measured a hop row 14% apart
over 40 processes a side right after the test suite, beyond what any level of the U test can
absorb (results/baseline/NOTES.md), and a gate must not fail a commit for that.

regress_gate.check_paired decides on what this measures.
"""
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASE_DIR = ROOT / "build-base"


class BaseUnavailable(Exception):
    """The paired timing cannot run, for a reason that is not the head's fault (one line)."""


def git(root, *args):
    p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def resolve(root, ref):
    """The full sha of a commit, or None when ref names none."""
    return git(root, "rev-parse", "--verify", "-q", ref + "^{commit}")


def default_base(root=ROOT):
    """(sha, how it was chosen), or (None, why there is none)."""
    head = resolve(root, "HEAD")
    if head is None:
        return None, "no base commit (not a git checkout)"
    branch = git(root, "symbolic-ref", "--short", "-q", "HEAD")
    if branch and branch != "main":
        for main in ("main", "origin/main"):
            if resolve(root, main):
                mb = git(root, "merge-base", "HEAD", main)
                if mb and mb != head:
                    return mb, "merge base of %s with %s" % (branch, main)
                break
    parent = resolve(root, "HEAD~1")
    if parent is None:
        return None, "no base commit (HEAD has no parent here: a shallow or one-commit clone)"
    return parent, "HEAD~1"


def build_base(sha, build_type="Release", base_dir=BASE_DIR, root=ROOT, log=None):
    """switch-bench of commit sha, built under base_dir; its bin folder. BaseUnavailable when
    the commit cannot be checked out or built (build-base/build.log says why)."""
    src, build = Path(base_dir) / "src", Path(base_dir) / "build"
    Path(base_dir).mkdir(parents=True, exist_ok=True)
    logfile = Path(base_dir) / "build.log"
    if (src / ".git").exists():
        steps = [["git", "-C", str(src), "checkout", "-q", "-f", "--detach", sha]]
    else:
        # -f: a worktree registered there once and deleted since is taken over.
        steps = [["git", "-C", str(root), "worktree", "add", "-q", "-f", "--detach", str(src),
                  sha]]
    steps += [["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=" + build_type],
              ["cmake", "--build", str(build), "-j%d" % (os.cpu_count() or 2),
               "--target", "switch-bench"]]
    env = {k: v for k, v in os.environ.items() if k != "SWITCHYARD_GIT_SHA"}
    with open(logfile, "w") as out:
        for cmd in steps:
            if log:
                print("regress: base %s: %s" % (sha[:12], " ".join(cmd)), file=log)
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env).returncode:
                raise BaseUnavailable("the base %s did not build (%s failed; see %s)"
                                      % (sha[:12], cmd[1] if cmd[0] == "git" else cmd[0],
                                         logfile))
    return build / "bin"


SHF_ALLOC, SHT_NOBITS = 0x2, 8
# The linker's hash of the whole file, debug sections and their source paths included: it
# differs between any two builds, and no instruction reads it.
BUILD_ID = b".note.gnu.build-id"
BUILD_INFO = Path("harness") / "bench" / "bench_build_info.h"


def build_sha(bin_dir):
    """The git sha harness/bench/build_info.cmake compiled into this build's switch-bench
    (read from the build folder above bin_dir), or None."""
    try:
        text = (Path(bin_dir).parent / BUILD_INFO).read_text()
    except OSError:
        return None
    m = re.search(r'#define SWITCHYARD_GIT_SHA "([^"\n]+)"', text)
    return m.group(1) if m else None


def elf_sections(data):
    """(name, type, flags, address, file offset, size) of every section of the little-endian
    ELF64 file whose bytes are data; ValueError when data is not one."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    if not heads or shstrndx >= shnum:
        raise ValueError("no section headers")
    names = data[heads[shstrndx][4]:heads[shstrndx][4] + heads[shstrndx][5]]
    return [(names[at:names.index(b"\0", at)],) + tuple(rest) for at, *rest in heads]


def loaded_digest(exe, blank=()):
    """sha256 of what the loader maps of the ELF64 file exe: the name, address, size and
    flags of every allocated section, and the bytes of each but a NOBITS one (.bss) and the
    build ID, each string of `blank` zeroed in them first. ValueError when exe is not a
    little-endian ELF64 file, OSError when it cannot be read. Debug sections (which name the
    source paths) are left out, as the loader leaves them."""
    data = Path(exe).read_bytes()
    h = hashlib.sha256()
    for name, kind, flags, addr, offset, size in elf_sections(data):
        if not flags & SHF_ALLOC:
            continue
        h.update(struct.pack("<QQQQ", len(name), addr, size, flags) + name)
        if kind != SHT_NOBITS and name != BUILD_ID:
            body = data[offset:offset + size]
            for s in blank:
                body = body.replace(s, b"\0" * len(s))
            h.update(body)
    return h.hexdigest()


def same_code(base_bin, head_bin):
    """True when the two builds' switch-bench map the same bytes at the same addresses, the
    git sha each build compiled in and the build ID aside (the only differences two builds
    of one code have there); False when they differ or either cannot be read."""
    shas = [s.encode() for s in (build_sha(base_bin), build_sha(head_bin)) if s]
    try:
        return len({loaded_digest(Path(b) / "switch-bench", shas)
                    for b in (base_bin, head_bin)}) == 1
    except (OSError, ValueError, struct.error):
        return False


def one_process(exe, cfg, name=None):
    """{row: [CPU time of each repetition]} from one switch-bench process (name: what an
    error calls it, exe by default)."""
    cmd = [str(exe), "--benchmark_filter=" + cfg["filter"], "--benchmark_format=json",
           "--benchmark_repetitions=%d" % cfg["repetitions"],
           "--benchmark_enable_random_interleaving=true",
           "--benchmark_min_time=%g" % cfg["min_time"]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (name or exe, proc.returncode,
                                                       proc.stderr.strip()[-300:]))
    rows = {}
    for r in json.loads(proc.stdout)["benchmarks"]:
        if r.get("run_type") == "iteration" and not r.get("error_occurred"):
            rows.setdefault(r["run_name"], []).append(r["cpu_time"])
    return rows


def check_bin(bin_dir):
    exe = Path(bin_dir) / "switch-bench"
    if not os.access(exe, os.X_OK):
        raise RuntimeError("%s not found: build first (./run.sh build)" % exe)
    return exe


def fresh_copy(exe, folder):
    """exe copied to folder/switch-bench, a new file each call (the last one removed first)."""
    dst = Path(folder) / "switch-bench"
    dst.unlink(missing_ok=True)
    shutil.copyfile(exe, dst)
    dst.chmod(0o755)
    return dst


def run_paired(base_bin, head_bin, cfg, rounds, log, samples=None):
    """({"samples": ...} of the base, of the head): `rounds` processes each, alternating;
    with samples ({"base": ..., "head": ...} of earlier rounds), rounds more after those,
    the order going on where it stopped.

    Each process runs a fresh copy of its side's switch-bench, at one path for both sides.
    Whatever all the processes of one file share (its path in argv, where the page cache
    holds its pages) would otherwise be shared by one side alone: two files of the same
    code measured a star hop 13% apart over 30 processes each on the AMD EPYC VM, every
    process of one file in a mode the other's never reached, and minutes later not at all
    (results/baseline/NOTES.md, 2026-12-04). A new file per process makes that scatter
    between processes, which the U test is made for."""
    exes = {"base": check_bin(base_bin), "head": check_bin(head_bin)}
    samples = samples or {"base": {}, "head": {}}
    done = max((len(v) for v in samples["base"].values()), default=0)
    # Beside the head's build, which runs its programs: a temporary folder may be noexec.
    with tempfile.TemporaryDirectory(prefix="pair.", dir=Path(head_bin).resolve().parent) \
            as tmp:
        for i in range(done, done + rounds):
            for side in (("base", "head") if i % 2 == 0 else ("head", "base")):
                print("regress: paired timing, round %d of %d: %s"
                      % (i + 1, done + rounds, side), file=log)
                copy = fresh_copy(exes[side], tmp)
                for row, times in one_process(copy, cfg, exes[side]).items():
                    samples[side].setdefault(row, []).append(times)
    unit = "ns of CPU time per switch (switch rows) or per hop (sched rows)"
    config = dict(cfg, processes=done + rounds, order="alternating, flipped every round",
                  files="a fresh copy of the side's switch-bench for each process")
    return ({"unit": unit, "config": config, "samples": samples["base"]},
            {"unit": unit, "config": config, "samples": samples["head"]})


def rows_filter(rows):
    """A --benchmark_filter matching exactly these rows (names of letters, digits and
    /:-_, with '.' escaped should one appear)."""
    return "^(%s)$" % "|".join(r.replace(".", "\\.") for r in rows)


def run_until_decided(base_bin, head_bin, cfg, looks, still_open, log):
    """run_paired to the first look's processes, then on to each next look while
    still_open(base timing, head timing) names a row (regress_gate.open_rows). The later
    processes run the open rows alone: both sides alike, so the pairing stays fair, and a
    row that one noisy hop keeps open costs its own time, not every row's."""
    base_t, head_t = run_paired(base_bin, head_bin, cfg, looks[0], log)
    for done, nxt in zip(looks, looks[1:]):
        rows = still_open(base_t, head_t)
        if not rows:
            break
        print("regress: paired timing: %s open at %d processes a side, %d more of those"
              % (", ".join(rows), done, nxt - done), file=log)
        base_t, head_t = run_paired(base_bin, head_bin, dict(cfg, filter=rows_filter(rows)),
                                    nxt - done, log,
                                    {"base": base_t["samples"], "head": head_t["samples"]})
    for t in (base_t, head_t):
        t["config"] = dict(t["config"], filter=cfg["filter"],
                           later_looks="the rows open at the look before, alone")
    return base_t, head_t
