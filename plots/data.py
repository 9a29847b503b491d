"""Loading one run folder: every experiment's JSON, plus small accessors the charts and the
report share. It reads only files inside the run folder (results/...), never the build tree.
"""
import hashlib
import json
import re
import statistics
from pathlib import Path

import validate
# The measured points' statuses and the sweep's readers live in pointdata.py; every reader of a
# run imports them from here.
from pointdata import (
    FAILED_SHARE, MEASURED, MIN_OK_ROUNDS, POINT_STATUSES, kernel_per_conn, memory_points,
    memory_rounds, memory_top, ok_points, ok_rounds, over_budget, peak, point_errors, point_status,
    ramp, rps, rps_rounds, SERVER_CPU, server_cpu_us_per_request, status_text, sweep_flagged,
    sweep_not_run, sweep_points, sweep_series, throughput_points, user_kb)

# The files a run folder may hold: the suite's own record, then one per experiment, each
# with the shape plots/validate.py declares for it. A run folder's suite.json says which steps
# its suite ran, in their order (steps): those are read first, then any other file named here
# (a folder without suite.json, or a run stopped before a step was recorded).
EXPERIMENTS = list(validate.FILES)

# A member's colour and marker follow from its place in its layer's declared order (below), so
# a new backend, engine or model gets its own without touching the charts.
PALETTE = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
           "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]
MARKER_CYCLE = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
# switch/<name> rows that are references, not backends (harness/bench/floor_*.S): the least
# a switch can do, each beside the backend it bounds. Never counted as a backend.
FLOOR_OF = {"asm-nofpu": "floor", "asm": "floor-fp"}


# A step's name as a file name: a suite.json naming anything else names no file of the folder.
STEP_NAME = re.compile(r"[a-z0-9_]+")


def steps(folder):
    """The experiment files to read from folder, "suite" first: the steps its suite.json
    records (in the order the suite ran them; the report step writes no experiment file),
    then the other files of EXPERIMENTS. A suite.json that cannot be read lists nothing here:
    Run names why when it reads it as the first file."""
    try:
        listed = json.loads((Path(folder) / "suite.json").read_text()).get("steps")
    except (OSError, ValueError, AttributeError):
        listed = None
    ran = [n for n in listed if STEP_NAME.fullmatch(n) and n != "report"] \
        if isinstance(listed, dict) else []
    return list(dict.fromkeys(["suite", *ran, *EXPERIMENTS]))


# Each distinct file's validation (a walk of every value it holds), keyed by its name and a
# digest of its text: a process that reads the same files again (compare's two runs, the report's
# reference column, the fuzz tests' thousands of one-file variants of one run) walks each once.
_CHECKED = {}


def _file_problem(name, text, doc):
    key = (name, hashlib.sha256(text.encode()).digest())
    if key not in _CHECKED:
        if len(_CHECKED) >= 4096:
            _CHECKED.clear()
        _CHECKED[key] = validate.file_problem(name, doc)
    return _CHECKED[key]


class Run:
    """One run folder. `get(name)` is the experiment's JSON, or None when the file is missing
    or the suite recorded the step as failed; `why(name)` says which. `problem()` names a file
    holding JSON of another shape than its experiment writes (plots/validate.py), which the
    report and compare refuse; the reference column, drawn from whatever an older run holds,
    reads on and excuses what its claims cannot evaluate."""

    def __init__(self, folder):
        self.dir = Path(folder)
        self.data, self.missing, self.malformed = {}, {}, []
        for name in steps(self.dir):
            path = self.dir / f"{name}.json"
            if not path.exists():
                self.missing[name] = f"{name}.json not in the run folder"
                continue
            try:
                text = path.read_text()
                d = json.loads(text)
            except (OSError, ValueError) as e:
                self.missing[name] = f"{name}.json unreadable ({e})"
                continue
            why = _file_problem(name, text, d)
            if why:
                self.malformed.append(f"{shown(path)}: malformed: {why}")
                if not isinstance(d, dict):
                    self.missing[name] = f"{name}.json malformed: {why}"
                    continue
            if d.get("status") in ("failed", "not run"):
                self.missing[name] = f"{name} {d['status']}: {d.get('reason', '?')}"
                continue
            self.data[name] = d

    def problem(self):
        """One line naming the first malformed experiment file, or None."""
        return self.malformed[0] if self.malformed else None

    def get(self, name):
        return self.data.get(name)

    def why(self, name):
        return self.missing.get(name, "no data")

    def members(self, layer):
        """The run's declared members of a layer ("switch", "engines", "models"), in the
        registry's order, as the binaries that made the run listed them: the switch backends
        from switch-bench's context (switch-info --list order), the models and engines from
        the drivers that asked echo-server for them. Empty when the run has no such data."""
        if layer == "switch":
            listed = ((self.get("switch") or {}).get("context") or {}).get("switch_backends")
            if listed:
                return [b.strip() for b in listed.split(",") if b.strip()]
            return list(((self.get("props") or {}).get("backends") or {}).keys())
        if layer == "models":
            sweep = self.get("sweep") or self.get("slow") or {}
            listed = (sweep.get("config") or {}).get("models")
            return list(listed or dict.fromkeys(p["model"] for p in sweep.get("points", [])))
        if layer == "engines":
            return list(((self.get("engines") or {}).get("summary") or {}).keys())
        raise ValueError(f"unknown layer {layer!r}")

    def order(self, layer, names):
        """names in the layer's declared order; names the run did not declare go last, sorted."""
        declared = self.members(layer)
        names = set(names)
        return [n for n in declared if n in names] + sorted(names - set(declared))

    def color(self, layer, name):
        return PALETTE[self._place(layer, name) % len(PALETTE)]

    def marker(self, layer, name):
        return MARKER_CYCLE[self._place(layer, name) % len(MARKER_CYCLE)]

    def _place(self, layer, name):
        declared = self.members(layer)
        return declared.index(name) if name in declared else len(declared)

    def meta(self):
        for name in EXPERIMENTS:
            if self.get(name) and self.get(name).get("meta"):
                return self.get(name)["meta"]
        return {}


def shown(path, most=100):
    """A path for a one-line message: a 100 KB argument is cut, saying how long it was."""
    text = str(path)
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def folder_problem(folder):
    """Why folder is not a run folder, in one line (it does not exist, the system refuses its
    name, or it holds no experiment's JSON: a report of it would say every claim is 'not
    run'), or None. What report.py and compare.py refuse before reading one."""
    d = Path(folder)
    try:
        if not d.is_dir():
            return f"{shown(folder)}: no such run folder"
        found = any((d / f"{name}.json").exists() for name in EXPERIMENTS)
    except OSError as e:
        return f"{shown(folder)}: {e.strerror or e}"
    if not found:
        return (f"{shown(folder)}: not a run folder (no experiment JSON: "
                f"{', '.join(n + '.json' for n in EXPERIMENTS)})")
    return None


def machine_line(run):
    """One line naming the machine, for chart footnotes."""
    m = run.meta()
    if not m:
        return "machine: unknown (no meta block)"
    suite = run.get("suite") or {}
    load = suite.get("loadavg_start")
    return (f"{m.get('host', '?')}: {m.get('cpu_model', '?')}, {m.get('cores', '?')} cores, "
            f"{m.get('kernel', '?')}, git {m.get('git_sha', '?')}, {m.get('date', '?')}"
            + (f", load avg at start {load[0]:.1f}" if load else ""))


# ---- switch-bench ------------------------------------------------------------------------

def bench_rows(doc):
    """Google Benchmark JSON -> {row: entry}: the median aggregate when repetitions were
    aggregated, else the plain iteration entry (averaged if there are several)."""
    rows, plain = {}, {}
    for b in (doc or {}).get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[name] = b
        elif not b.get("error_occurred"):
            plain.setdefault(name, []).append(b)
    for name, entries in plain.items():
        if name not in rows:
            e = dict(entries[0])
            for k in ("real_time", "cpu_time"):
                e[k] = sum(x[k] for x in entries) / len(entries)
            rows[name] = e
        elif "label" not in rows[name] and "label" in entries[0]:
            # Runs merged before the merge kept labels have medians without one.
            rows[name] = dict(rows[name], label=entries[0]["label"])
    return rows


def ns(entry):
    """Nanoseconds for one unit of a switch-bench row. Kernel hand-offs involve two threads or
    processes, so their wall time counts; single-threaded rows use CPU time, which time
    stolen by other tenants of a shared machine does not inflate."""
    if entry is None:
        return None
    t = entry["real_time"] if entry.get("run_name", entry["name"]).startswith("kernel/") \
        else entry["cpu_time"]
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[entry.get("time_unit", "ns")]
    return t * scale


def bench_samples(doc):
    """{row: [ns per repetition]} from the per-repetition entries, when the file kept them
    (switch-bench writes them unless told to report aggregates only)."""
    out = {}
    for b in (doc or {}).get("benchmarks", []):
        if b.get("run_type") != "aggregate" and not b.get("error_occurred") \
                and b.get("repetitions", 1) > 1:
            out.setdefault(b.get("run_name", b["name"]), []).append(ns(b))
    return out


def bench_reps(doc):
    """{row: {repetition index: ns}} of the per-repetition entries the file kept."""
    out = {}
    for b in (doc or {}).get("benchmarks", []):
        if b.get("run_type") != "aggregate" and not b.get("error_occurred") \
                and b.get("repetitions", 1) > 1:
            out.setdefault(b.get("run_name", b["name"]), {})[b.get("repetition_index", 0)] = ns(b)
    return out


def paired_reps(doc, num_row, den_row):
    """[num/den] per repetition index both rows ran: switch-bench interleaves its
    repetitions (--benchmark_enable_random_interleaving), so repetition i of every row ran in
    the same pass over the rows."""
    reps = bench_reps(doc)
    a, b = reps.get(num_row, {}), reps.get(den_row, {})
    return [a[i] / b[i] for i in sorted(a) if i in b and a[i] and b[i]]


def bench_spread(doc):
    """{row: (low, high)} in ns: the range of the repetitions when they were kept, else the
    median +- one standard deviation from the aggregates, else nothing for that row."""
    spread = {r: (min(s), max(s)) for r, s in bench_samples(doc).items() if len(s) >= 2}
    med = bench_rows(doc)
    for b in (doc or {}).get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("aggregate_name") == "stddev" and name not in spread and name in med:
            m, sd = ns(med[name]), ns(b)
            spread[name] = (m - sd, m + sd)
    return spread


def runs_of(doc, value, **match):
    """The values value(run) of doc["runs"] entries whose fields equal `match` (the repeated
    samples behind a driver's medians), skipping entries that failed."""
    return [value(r) for r in (doc or {}).get("runs", [])
            if all(r.get(k) == v for k, v in match.items())
            and r.get("status", "ok") in MEASURED and value(r) is not None]


def backends(run):
    """The backends with a switch/<backend> row in the run's switch.json, in declared order
    (the reference floor rows are not backends)."""
    rows = bench_rows(run.get("switch"))
    found = {n.split("/", 1)[1] for n in rows if n.startswith("switch/")}
    return run.order("switch", found - set(FLOOR_OF.values()))


def sched_series(rows):
    """{(policy, backend): [(fibers, ns per hop, switches per hop), ...]} sorted by fibers."""
    out = {}
    for name, e in rows.items():
        parts = name.split("/")
        if len(parts) == 4 and parts[0] == "sched" and parts[3].startswith("fibers:"):
            out.setdefault((parts[1], parts[2]), []).append(
                (int(parts[3].split(":")[1]), ns(e), e.get("switches_per_hop")))
    return {k: sorted(v) for k, v in out.items()}


def icounts(doc):
    """icount.json -> {row without the icount/ prefix: instructions per unit}."""
    return {b["name"].split("/", 1)[1]: b["instructions_per_unit"]
            for b in (doc or {}).get("benchmarks", []) if "instructions_per_unit" in b}


# ---- scale.json (harness/experiments/scale.py): idle scaling, churn, readiness vs completion ---

def epoll_family(part):
    """The engines of a scale.json part that run on epoll (the method engine-info reported for
    each, recorded by engines_scale.py), in the part's order."""
    methods = (part or {}).get("methods") or {}
    return [c for c in (part or {}).get("configs", []) if methods.get(c, "").startswith("epoll")]


def scale_configs(doc):
    """Every configuration of a scale.json, in the order the experiment declared them (the
    idle part lists them all: the registry's engines, then the yardsticks)."""
    out = []
    for part in ("idle", "churn", "completion"):
        out += [c for c in ((doc or {}).get(part) or {}).get("configs", []) if c not in out]
    return out


def scale_series(part, field="median"):
    """{config: [(level, value), ...]} of a scale.json part's summary, levels ascending; only
    levels that ran."""
    out = {}
    for cfg, levels in ((part or {}).get("summary") or {}).items():
        pts = sorted((int(k), v.get(field)) for k, v in levels.items()
                     if v.get("status") == "ok" and v.get(field) is not None)
        if pts:
            out[cfg] = pts
    order = [c for c in (part or {}).get("configs", []) if c in out]
    return {c: out[c] for c in order} | {c: v for c, v in out.items() if c not in order}


def scale_at(part, cfg, level, field="median"):
    v = (((part or {}).get("summary") or {}).get(cfg) or {}).get(str(level)) or {}
    return v.get(field) if v.get("status") == "ok" else None


def scale_status(part, cfg, level):
    """A level's status as "ok" or "STATUS: reason" (older runs wrote the reason into it)."""
    v = (((part or {}).get("summary") or {}).get(cfg) or {}).get(str(level))
    if not v:
        return "not run: not in this run"
    if v.get("reasons") and v.get("status") != "ok":
        return f"{v['status']}: {'; '.join(v['reasons'])}"
    return v.get("status")


def epoll_ctl_rows(rows):
    """[(registered fds, ns per ADD+DEL pair)] from switch-bench's syscall/epoll_ctl rows."""
    pts = []
    for name, e in rows.items():
        parts = name.split("/")
        if len(parts) == 3 and parts[:2] == ["syscall", "epoll_ctl_add_del"] and \
                parts[2].startswith("registered:"):
            pts.append((int(parts[2].split(":")[1]), ns(e)))
    return sorted(pts)


FIBERIO_LOADS = ["pingpong", "pingpong-1k", "stream"]


def fiberio_summary(doc):
    """fiberio.json's summary rows as {load: {server: medians}}."""
    out = {}
    for row in (doc or {}).get("summary") or []:
        out.setdefault(row.get("load"), {})[row.get("variant")] = row
    return out


def fiberio_variants(doc):
    """The servers of the read-policy experiment in a fixed order: the fiber variants by
    engine, then policy, in the orders the run declared (echo-server's own lists), then the
    callback and thread servers in the order measured."""
    doc = doc or {}
    seen = []
    summary = fiberio_summary(doc)
    for load in FIBERIO_LOADS:
        for v in summary.get(load, {}):
            if v not in seen:
                seen.append(v)
    engines, policies = doc.get("engines") or [], doc.get("policies") or []

    def key(v):
        parts = v.split("/")
        if parts[0] == "fiber" and len(parts) == 3:
            eng = engines.index(parts[2]) if parts[2] in engines else len(engines)
            pol = policies.index(parts[1]) if parts[1] in policies else len(policies)
            return (0, eng, pol, seen.index(v))
        return (1, 0, 0, seen.index(v))
    return sorted(seen, key=key)


# ---- copy stacks, hand-offs ----------------------------------------------------------------

def copystack_points(run):
    """{fibers: [(bytes, ns per op, live bytes), ...]} of the copystack/resume rows."""
    out = {}
    for name, e in bench_rows(run.get("switch")).items():
        parts = name.split("/")
        if len(parts) == 4 and parts[:2] == ["copystack", "resume"]:
            n, f = int(parts[2].split(":")[1]), int(parts[3].split(":")[1])
            out.setdefault(f, []).append((n, ns(e), e.get("live_bytes")))
    return {f: sorted(v) for f, v in out.items()}


def fibermem_points(run):
    """{stack mode: {fibers: point}} of fibermem.json."""
    out = {}
    for p in (run.get("fibermem") or {}).get("points", []):
        out.setdefault(p["stack"], {})[p["fibers"]] = p
    return out


def handoff_series(run, kind):
    """[(m, CPU ns per hand-off)] of one kind, measured levels only, by m."""
    pts = ((run.get("handoff") or {}).get("series") or {}).get(kind) or []
    return [(p["contexts"], p["cpu_ns_per_handoff"]) for p in pts if p.get("status") == "ok"]


# ---- paired rounds ---------------------------------------------------------------------------

def median(xs):
    """The median of the values present in xs, None when there is none."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def paired(runs, key, num, den, pair_ok=None, **match):
    """{"per_round": [num/den], "median": ...} over the rounds in which both ran: `runs` are
    a driver's per-round records, `num` and `den` match them by field (e.g.
    {"engine": "merged"}), `match` selects the records (e.g. kind="tput"). Rounds pair by
    their "round" field, or by order when the records carry none. pair_ok(num's record,
    den's), when given, leaves out the rounds it refuses."""
    def records(sel):
        recs = [r for r in runs or [] if all(r.get(k) == v for k, v in {**match, **sel}.items())]
        if all("round" in r for r in recs):
            return {r["round"]: r for r in recs}
        return dict(enumerate(recs))
    a, b = records(num), records(den)
    keys = [k for k in sorted(a) if k in b and (pair_ok is None or pair_ok(a[k], b[k]))]
    x, y = {k: a[k].get(key) for k in keys}, {k: b[k].get(key) for k in keys}
    rs = [x[k] / y[k] for k in keys if x[k] and y[k]]
    return {"per_round": rs, "median": median(rs)}


# What a reader of a run uses as D.<name>: this module's own, and pointdata's re-exported.
__all__ = [
    "EXPERIMENTS", "PALETTE", "MARKER_CYCLE", "FLOOR_OF", "STEP_NAME", "steps", "Run", "shown",
    "folder_problem", "machine_line", "bench_rows", "ns", "bench_samples", "bench_reps",
    "paired_reps", "bench_spread", "runs_of", "backends", "sched_series", "icounts",
    "epoll_family", "scale_configs", "scale_series", "scale_at", "scale_status",
    "epoll_ctl_rows", "FIBERIO_LOADS", "fiberio_summary", "fiberio_variants",
    "copystack_points", "fibermem_points", "handoff_series", "median", "paired",
    "FAILED_SHARE", "MEASURED", "MIN_OK_ROUNDS", "POINT_STATUSES", "kernel_per_conn",
    "memory_points", "memory_rounds", "memory_top", "ok_points", "ok_rounds", "over_budget",
    "peak", "point_errors", "point_status", "ramp", "rps", "rps_rounds", "SERVER_CPU",
    "server_cpu_us_per_request", "status_text", "sweep_flagged", "sweep_not_run",
    "sweep_points", "sweep_series", "throughput_points", "user_kb"]
