"""Machine description and /proc helpers shared by Switchyard's benchmark drivers.

Every result file carries a `meta` block: git sha, compiler and flags,
CPU model, core count, kernel, pinning and date. Drivers import this module:

    from lib import meta
    info = meta.collect(repo_root, build_dir, pinning={"server": "0", "load": "1"})
    run_dir = meta.new_run_dir(repo_root / "results" / "runs", info)

It uses only the standard library of Debian's /usr/bin/python3.
"""
import datetime
import glob
import json
import math
import os
import platform
import re
import resource
import shutil
import socket
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def _read_int(path, default=None):
    try:
        return int(_read(path).split()[0])
    except (ValueError, IndexError):
        return default


def process_cpu_s(pid):
    """User and system CPU seconds of process pid's whole thread group so far, its exited
    threads included, from /proc/PID/stat (in clock ticks: 10 ms steps); None when it is gone.
    One read however many threads the process has."""
    fields = _read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


def cpu_list(cpus):
    """Formats a set of CPU numbers the way taskset and /proc do: {0, 1, 2, 5} -> '0-2,5'."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def cpu_model():
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def model_words(model):
    """A CPU model string as a file-name word: lower case, trade marks dropped, words joined
    by '-' ("Intel(R) Xeon(R) Processor" -> "intel-xeon-processor")."""
    words = re.sub(r"\((r|tm)\)", " ", (model or "unknown").lower())
    return "-".join(re.findall(r"[a-z0-9]+", words)) or "unknown"


def cpu_identity():
    """What a timing baseline is valid for: the model string, and where /proc/cpuinfo has
    them the vendor's family and model numbers (a VM may show one generic string, such as
    "Intel(R) Xeon(R) Processor", for several microarchitectures; the numbers tell them apart).
    `key` names the baseline file: lower case, trade marks dropped, words joined by '-'."""
    fields = {}
    for line in _read("/proc/cpuinfo").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() not in fields:
            fields[name.strip()] = value.strip()
    model = fields.get("model name")
    numbers = [fields[k] for k in ("cpu family", "model") if k in fields]
    if model is None and "CPU implementer" in fields:  # aarch64: no model name
        model = "%s implementer %s part %s" % (platform.machine(), fields["CPU implementer"],
                                               fields.get("CPU part", "?"))
        numbers = []
    model = model or platform.processor() or "unknown %s" % platform.machine()
    key = "-".join([model_words(model)] + numbers)
    return {"model": model, "family": fields.get("cpu family"), "model_number":
            fields.get("model"), "arch": platform.machine(), "key": key}


def git_sha(root=REPO_ROOT):
    """SWITCHYARD_GIT_SHA wins (CI sets it; the tree's state is then not known: None);
    otherwise git_tree(root)."""
    env = os.environ.get("SWITCHYARD_GIT_SHA")
    if env:
        return env, None
    return git_tree(root)


def git_tree(root=REPO_ROOT):
    """(sha, dirty) as git sees the checkout at root, whatever the environment says:
    ('unknown', None) outside a checkout, dirty None when git could not tell.

    Changes under results/ do not make the tree dirty: they are this run's own output (a
    reference run replaces the committed results/reference/ as it goes)."""
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                 "--untracked-files=no", "--", ".", ":(exclude)results"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown", None
    if not sha:
        return "unknown", None
    return sha, (bool(status.stdout.strip()) if status.returncode == 0 else None)


def source_root(build_dir):
    """The source tree a CMake build directory was configured from (None if unknown): the
    commit a measurement belongs to is that tree's, not the driver's."""
    for line in _read(Path(build_dir) / "CMakeCache.txt").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            return Path(line.partition("=")[2])
    return None


def compiler(build_dir, target="echo-load"):
    """Compiler, version and the exact flags CMake used for `target`, read from the build dir."""
    build_dir = Path(build_dir)
    cache = {}
    for line in _read(build_dir / "CMakeCache.txt").splitlines():
        if "=" in line and not line.startswith(("#", "//")):
            key, _, value = line.partition("=")
            cache[key.split(":")[0]] = value
    cc = cache.get("CMAKE_C_COMPILER", "")
    version = ""
    if cc and shutil.which(cc):
        out = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
        version = out.splitlines()[0] if out else ""
    flags = ""
    for path in glob.glob(str(build_dir / "**" / "CMakeFiles" / f"{target}.dir" / "flags.make"),
                          recursive=True):
        for line in _read(path).splitlines():
            if line.startswith("C_FLAGS = "):
                flags = line[len("C_FLAGS = "):].strip()
    return {
        "c_compiler": cc or "unknown",
        "version": version or "unknown",
        "build_type": cache.get("CMAKE_BUILD_TYPE", "unknown"),
        "flags": flags or "unknown",
        "sanitize": cache.get("SWITCHYARD_SANITIZE", "unknown"),
    }


def limits():
    """The machine limits that decide which experiments can run at all."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    nproc_soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    port_range = _read("/proc/sys/net/ipv4/ip_local_port_range").split()
    return {
        "nofile_soft": soft,
        "nofile_hard": hard,
        "nproc": None if nproc_soft == resource.RLIM_INFINITY else nproc_soft,
        "pid_max": _read_int("/proc/sys/kernel/pid_max"),
        "threads_max": _read_int("/proc/sys/kernel/threads-max"),
        "max_map_count": _read_int("/proc/sys/vm/max_map_count"),
        "somaxconn": _read_int("/proc/sys/net/core/somaxconn"),
        "ephemeral_ports": (int(port_range[1]) - int(port_range[0]) + 1) if port_range else None,
        "mem_total_kb": meminfo_kb("MemTotal"),
    }


def meminfo_kb(field):
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def registry(exe, prog):
    """A layer's compiled-in members in the registry's order, as `EXE --list --json` lists them
    (switch-info, engine-info, echo-server). Exits with `PROG: cannot list EXE: <its words>` when
    the program cannot answer."""
    try:
        p = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True,
                           timeout=10)
    except OSError as e:
        raise SystemExit(f"{prog}: cannot list {exe}: {e.strerror}") from None
    if p.returncode != 0:
        raise SystemExit(f"{prog}: cannot list {exe}: {p.stderr.strip() or p.returncode}")
    return json.loads(p.stdout)["members"]


def echo_binaries(build_dir, prog):
    """(echo-server, echo-load) of a build folder, as strings; exits with `PROG: ... missing`
    when either is not built."""
    bins = [str(Path(build_dir) / "bin" / name) for name in ("echo-server", "echo-load")]
    for exe in bins:
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"{prog}: {exe} missing: build first (./run.sh build)")
    return bins[0], bins[1]


def finite(doc):
    """doc with every NaN and infinity replaced by None, at any depth: RFC 8259 has no such
    numbers (Google Benchmark writes NaN for a counter it could not compute), so they are
    written as null and every reader takes null for 'no value'."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: finite(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [finite(v) for v in doc]
    return doc


def json_text(doc, indent=1):
    """The one way the project writes JSON: valid RFC 8259 (no NaN), a newline at the end."""
    return json.dumps(finite(doc), indent=indent, allow_nan=False) + "\n"


def write_json(path, data):
    """DATA written to PATH in one step (a reader never sees half a file)."""
    tmp = Path(str(path) + ".tmp")
    try:
        tmp.write_text(json_text(data))
        tmp.replace(path)
    except BaseException:  # a full disk or a stop signal: no half-written copy left behind
        tmp.unlink(missing_ok=True)
        raise


def emit_json(doc, out_file=None, prog=None):
    """A driver's result: written to out_file (then, when prog is given, `PROG: wrote FILE` is
    printed), or to standard output."""
    text = json_text(doc)
    if out_file:
        Path(out_file).write_text(text)
        if prog:
            print(f"{prog}: wrote {out_file}")
    else:
        sys.stdout.write(text)


def loadavg():
    """The 1, 5 and 15-minute load averages, or None."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


# The kernel's own memory that grows with connections and contexts, beside a process's VmRSS:
# each thread's kernel stack, unreclaimable slab (sockets, epoll items, task structs) and the
# page tables of every process. /proc/meminfo is machine-wide: callers sample repeatedly and
# take medians, and say so.
KERNEL_FIELDS = ("KernelStack", "SUnreclaim", "PageTables")


def kernel_kb():
    """{field: kB} for KERNEL_FIELDS from one read of /proc/meminfo ({} if unreadable)."""
    out = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in KERNEL_FIELDS:
                out[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return out


def kernel_median(samples):
    """Median of each field over a list of kernel_kb() samples ({} when none)."""
    import statistics
    samples = [s for s in samples if s]
    if not samples:
        return {}
    return {k: statistics.median(s[k] for s in samples if k in s) for k in KERNEL_FIELDS
            if any(k in s for s in samples)}


def kernel_growth(idle, loaded, conns):
    """The growth of each field from the idle samples to the loaded ones, per connection
    (KiB), with the raw medians and the number of samples; None when either side is empty."""
    a, b = kernel_median(idle), kernel_median(loaded)
    if not a or not b or conns < 1:
        return None
    per = {k: round((b[k] - a[k]) / conns, 3) for k in a if k in b}
    return {"idle_kb": a, "loaded_kb": b, "samples": [len(idle), len(loaded)],
            "per_conn_kb": per, "per_conn_total_kb": round(sum(per.values()), 3),
            "source": "/proc/meminfo (machine-wide: medians of repeated samples; other "
                      "processes, the load generator's own sockets included, move it too)"}


def date_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(root=REPO_ROOT, build_dir=None, pinning=None):
    """The `meta` block. `pinning` describes the driver's CPU placement (None: not pinned)."""
    sha, dirty = git_sha(root)
    info = {
        "host": socket.gethostname(),
        "git_sha": sha,
        "git_dirty": dirty,
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "kernel": f"{platform.system()} {platform.release()}",
        "pinning": pinning if pinning else {"driver": cpu_list(os.sched_getaffinity(0)),
                                            "note": "not pinned"},
        "date": date_utc(),
        "limits": limits(),
        "python": platform.python_version(),
    }
    if build_dir:
        info["compiler"] = compiler(build_dir)
    return info


def new_run_dir(runs_root, info):
    """Creates results/runs/<host>/<UTC date>-<git sha>/, never reusing an existing folder."""
    stamp = info["date"].replace("-", "").replace(":", "")  # 20250101T120000Z
    base = Path(runs_root) / info["host"] / f"{stamp}-{info['git_sha']}"
    path, n = base, 1
    while True:
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            n += 1
            path = base.with_name(f"{base.name}-{n}")


# ---- processes (/proc) -------------------------------------------------------------------

def _ppid_map():
    """pid -> ppid for every process; the comm field may hold spaces, so split after ')'."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            stat = _read(f"/proc/{d}/stat")
            if stat:
                fields = stat[stat.rfind(")") + 2:].split()
                out[int(d)] = int(fields[1])
    return out


def descendants(pid):
    """Every process below pid (children, grandchildren ...), found by walking /proc/*/stat."""
    kids = {}
    for child, parent in _ppid_map().items():
        kids.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def rss_kb(pid):
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def tree_rss_kb(pid, with_children=True):
    """Resident memory of pid plus (for fork-per-connection) all its descendants."""
    procs = [pid] + (descendants(pid) if with_children else [])
    return sum(rss_kb(p) for p in procs), len(procs)


def pss_kb(pid):
    """Proportional set size: shared pages divided among the processes sharing them."""
    for line in _read(f"/proc/{pid}/smaps_rollup").splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def tree_pss_kb(pid, with_children=True):
    """PSS of pid and its descendants: unlike summed VmRSS, it counts shared pages once."""
    procs = [pid] + (descendants(pid) if with_children else [])
    return sum(pss_kb(p) for p in procs)


def nofile_soft(pid):
    for line in _read(f"/proc/{pid}/limits").splitlines():
        if line.startswith("Max open files"):
            v = line.split()[3]
            return None if v == "unlimited" else int(v)
    return None


def tasks_in_use():
    """Threads and processes alive now (each takes a pid), from the 4th field of loadavg."""
    try:
        return int(_read("/proc/loadavg").split()[3].split("/")[1])
    except (IndexError, ValueError):
        return None


def perf_available(event="syscalls:sys_enter_epoll_ctl"):
    """True when `perf stat` can count `event` here (needs the tracepoint and privileges)."""
    if not shutil.which("perf"):
        return False, "perf not installed"
    try:
        p = subprocess.run(["perf", "stat", "-x", ",", "-e", event, "true"],
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if p.returncode != 0 or "not supported" in p.stderr or "<not counted>" in p.stderr:
        return False, (p.stderr.strip().splitlines() or ["perf stat failed"])[-1]
    return True, None
