"""Loading one run folder: every experiment's JSON, plus small accessors the charts and the
report share. It reads only files inside the run folder (results/...), never the build tree.
"""
import json
from pathlib import Path

EXPERIMENTS = ["suite", "switch", "icount", "props", "engines", "sweep", "maxconns", "threads"]
MODEL_ORDER = ["thread", "fork", "fiber", "libevent", "epoll"]
ENGINE_ORDER = ["naive", "merged", "oneshot", "edge", "libevent"]
BACKEND_ORDER = ["asm-nofpu", "asm", "fcontext", "setjmp", "ucontext"]


class Run:
    """One run folder. `get(name)` is the experiment's JSON, or None when the file is missing
    or the suite recorded the step as failed; `why(name)` says which."""

    def __init__(self, folder):
        self.dir = Path(folder)
        self.data, self.missing = {}, {}
        for name in EXPERIMENTS:
            path = self.dir / f"{name}.json"
            if not path.exists():
                self.missing[name] = f"{name}.json not in the run folder"
                continue
            try:
                d = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError) as e:
                self.missing[name] = f"{name}.json unreadable ({e})"
                continue
            if d.get("status") == "failed":
                self.missing[name] = f"{name} failed: {d.get('reason', '?')}"
                continue
            self.data[name] = d

    def get(self, name):
        return self.data.get(name)

    def why(self, name):
        return self.missing.get(name, "no data")

    def meta(self):
        for name in EXPERIMENTS:
            if self.get(name) and self.get(name).get("meta"):
                return self.get(name)["meta"]
        return {}


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


def backends(rows):
    found = {n.split("/", 1)[1] for n in rows if n.startswith("switch/")}
    return [b for b in BACKEND_ORDER if b in found] + sorted(found - set(BACKEND_ORDER))


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


# ---- sweep -------------------------------------------------------------------------------

def sweep_series(doc, mode, value):
    """{model: [(conns, value), ...]} for measured points; value(point) may return None."""
    out = {}
    for p in (doc or {}).get("points", []):
        if p.get("mode") != mode or p.get("status") != "ok" or not p.get("load"):
            continue
        v = value(p)
        if v is not None:
            out.setdefault(p["model"], []).append((p["conns"], v))
    return {m: sorted(v) for m, v in out.items()}


def sweep_not_run(doc, mode):
    return [p for p in (doc or {}).get("points", [])
            if p.get("mode") == mode and p.get("status") != "ok"]


def point_errors(p):
    load = p.get("load") or {}
    return sum((load.get("errors") or {}).values()) + (load.get("mismatches") or 0)


def models(series):
    return [m for m in MODEL_ORDER if m in series] + sorted(set(series) - set(MODEL_ORDER))
