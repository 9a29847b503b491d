"""validate.py - the shape of each experiment file of a run folder, checked before the report,
the charts or compare read it: a file whose fields are of the wrong type is named with what is
wrong, in one line, instead of tracing back deep in a reader or giving figures of nothing.

A spec is: a Python type (str, bool, dict, list), NUM (a finite number, not a boolean), INT,
a tuple of specs (any one of them), a dict {key: spec} (an object; each listed key, when
present, matches its spec; other keys are free, or match the spec of key "*" when there is
one), List(spec) (a list of such elements; nonempty=True when an empty one means the file
holds no data), Map(spec) (an object whose every value matches), or Opt(spec) (also null;
for NUM also NaN, which older runs wrote for a figure that could not be computed). Keys are
checked where the readers (plots/data.py, pointdata.py, the claims, sections and charts)
index them.
"""
import math


class List:
    def __init__(self, spec, nonempty=False):
        self.spec, self.nonempty = spec, nonempty


class Map:
    def __init__(self, spec):
        self.spec = spec


class Opt:
    def __init__(self, spec):
        self.spec = spec


NUM, INT = "a number", "an integer"
ONUM = Opt(NUM)
NAMES = List(str, nonempty=True)
LOADAVG = List(NUM, nonempty=True)
RUNS = List(dict, nonempty=True)

META = {"host": str, "cpu_model": str, "kernel": str, "git_sha": Opt(str), "date": str,
        "limits": Map(Opt(NUM)), "compiler": Map(Opt(str))}
BENCH_ROW = {"name": str, "run_name": str, "run_type": str, "aggregate_name": str,
             "real_time": ONUM, "cpu_time": ONUM, "time_unit": str, "repetitions": INT,
             "repetition_index": INT, "instructions_per_unit": ONUM}
# Google Benchmark's context: strings (switch-bench adds its own as strings) but for these.
CONTEXT = {"num_cpus": INT, "mhz_per_cpu": NUM, "cpu_scaling_enabled": bool,
           "caches": List(dict), "load_avg": List(NUM), "*": str}
BENCHMARK = {"benchmarks": List(BENCH_ROW, nonempty=True), "context": CONTEXT}
LOAD = {"requests_per_sec": ONUM, "requests": ONUM, "unfinished": ONUM, "errors": dict,
        "mismatches": ONUM, "latency_us": {"from": str, "*": ONUM}, "ramp_up": Opt(dict)}
POINT = {"model": str, "mode": str, "conns": INT, "status": str, "load": LOAD,
         "rss": {"source": str, "*": ONUM},
         "server": {"cpu_user_s": ONUM, "cpu_sys_s": ONUM, "bytes": ONUM, "max_concurrent": ONUM},
         # null where /proc/meminfo gave no sample in the window (meta.kernel_growth)
         "kernel": Opt(dict)}
SWEEP = {"config": {"levels": List(INT, nonempty=True), "models": NAMES, "modes": NAMES,
                    "size": NUM, "load_args": str},
         "points": List(POINT, nonempty=True)}
RATIO = {"per_round": List(ONUM), "median": ONUM}
SCALE_PART = {"levels": List(INT, nonempty=True), "configs": NAMES, "summary": Map(Map(dict)),
              "runs": List(dict), "methods": Map(str), "not_built": Map(str),
              "active_conns": INT}
STEP = {"status": str}
LOADS = {"server_cpu": str, "load_cpu": str, "conns": INT, "size": INT, "rounds": INT}

FILES = {
    "suite": {"preset": str, "seconds": NUM, "loadavg_start": LOADAVG, "loadavg_end": LOADAVG,
              "steps": Map(dict)},
    "switch": BENCHMARK,
    "switch_emulated": dict(BENCHMARK, emulated=bool, emulator=str, arch=str, note=str,
                            config={"min_time": NUM, "repetitions": INT, "filter": str,
                                    "interleaved": bool}),
    "icount": {"benchmarks": List({"name": str, "instructions_per_unit": ONUM},
                                  nonempty=True)},
    "props": {"backends": Map({"syscalls_per_switch": ONUM, "overflow": dict}),
              "virtualized": bool, "setjmp_new_stack": str,
              "copy_stack": {"implemented": bool, "note": str}},
    "asm_count": {"rows": List({"backend": str, "arch": str, "variant": str,
                                "instructions": INT, "listing": list}, nonempty=True),
                  "not_counted": list, "date": str, "measurement": str},
    "engines": {"summary": Map({k: ONUM for k in (
                    "requests_per_sec", "ctl_per_request_engine", "ctl_per_request_kernel",
                    "server_cpu_us_per_request")}), "ratios": Map(RATIO), "profile": Map(dict),
                "config": LOADS, "runs": RUNS},
    "scale": {"config": {"rounds": INT, "duration": NUM}, "idle": SCALE_PART,
              "churn": dict(SCALE_PART, conns=INT),
              "completion": dict(SCALE_PART, conns=List(INT, nonempty=True),
                                 counts=List(dict, nonempty=True))},
    "fiberio": {"default": str, "summary": List({"load": str, "variant": str}, nonempty=True),
                "engines": NAMES, "policies": NAMES, "ratios": Map(RATIO), "runs": RUNS,
                "loadavg_start": LOADAVG, "loadavg_end": LOADAVG,
                "config": dict(LOADS, conns_large=INT, stream_conns=INT, pipeline=INT,
                               stream_size=INT)},
    "peers": {"config": {"rounds": INT, "conns": (INT, List(INT)), "server_cpu": str,
                         "load_cpu": str},
              "perf": bool, "servers": RUNS, "not_built": list, "not_run": list,
              "summary": List({"conns": INT, "server": str, "kind": str}, nonempty=True),
              "ratios": RUNS, "runs": List(dict)},
    "timers": {"structures": NAMES, "config": dict,
               "cpu": {"runs": RUNS, "read_timeout_ms": NUM, "skipped": Map(str),
                       "summary": RUNS, "ratios": Map(dict)},
               "lateness": {"status": str, "sleeps": INT, "sleep_us": NUM, "pending": INT,
                            "runs": List(dict), "summary": List(dict)},
               "idle": {"status": str, "conns": INT, "window_s": NUM, "summary": List(dict)}},
    "hooks": {"load_average": {"start": LOADAVG},
              "bench": {"status": str, "rows": Map(dict)},
              "icount": {"status": str, "instructions_per_unit": Map(ONUM)},
              "echo": {"status": str, "config": dict, "summary": Map(dict),
                       "ratios": Map(dict)},
              "deadlock": {"status": str, "pthread_mutex": dict, "event_lock": dict}},
    "instruments": {"config": {"rounds": INT, "cpu": str, "pipe_loops": INT,
                               "syscall_loops": INT, "switch_loops": INT, "perf": Opt(str),
                               "perf_version": Opt(str), "order": str, "interval": str},
                    "instruments": Map(dict), "runs": RUNS},
    "threads": {"config": {"cores": INT}, "summary": Map(dict),
                "ratio_t2_over_t1_shared": ONUM, "runs": RUNS},
    "handoff": {"config": {"levels": List(INT, nonempty=True), "rounds": INT},
                "series": Map(List(dict, nonempty=True)), "runs": RUNS},
    "fibermem": {"config": dict, "points": List({"stack": str, "fibers": INT, "status": str},
                                                nonempty=True)},
    "sweep": SWEEP,
    "slow": SWEEP,
    "maxconns": {"config": {"target": INT, "levels": List(INT, nonempty=True),
                            "stacks": NAMES, "procs": (str, INT), "server_cpus": str,
                            "load_cpus": str},
                 "points": RUNS, "max_held": Opt(INT), "per_conn_at_max": Opt(Map(NUM)),
                 "by_stack": Map(dict), "target_projection": RUNS},
}
COMMON = {"experiment": str, "meta": META, "status": str, "reason": str}


def _nan(v):
    return isinstance(v, float) and math.isnan(v)


def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}.get(
        type(v), "a number" if isinstance(v, (int, float)) else type(v).__name__)


def _want(spec):
    if isinstance(spec, Opt):
        return _want(spec.spec) + " or null"
    if isinstance(spec, (dict, Map)) or spec is dict:
        return "an object"
    if isinstance(spec, List) or spec is list:
        return "a non-empty list" if getattr(spec, "nonempty", False) else "a list"
    if isinstance(spec, tuple):
        return " or ".join(_want(s) for s in spec)
    return {str: "a string", bool: "a boolean", int: "an integer"}.get(spec, spec)


def _fits(v, spec):
    """Whether v's own type is the one spec asks for (not its contents)."""
    if isinstance(spec, Opt):
        return v is None or _fits(v, spec.spec) or (spec.spec == NUM and _nan(v))
    if isinstance(spec, tuple):
        return any(_fits(v, s) for s in spec)
    if spec in (NUM, INT):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        return ok and (spec == NUM or float(v).is_integer())
    if isinstance(spec, (dict, Map)):
        return isinstance(v, dict)
    if isinstance(spec, List):
        return isinstance(v, list) and (v or not spec.nonempty)
    return isinstance(v, spec) and not (spec is int and isinstance(v, bool))


def problem(v, spec, path=""):
    """None when v matches spec, else one phrase saying where and what is wrong."""
    if not _fits(v, spec):
        return f"{path or 'the top level'} is {_kind(v)}, not {_want(spec)}"
    if isinstance(spec, Opt):
        return None if v is None or _nan(v) else problem(v, spec.spec, path)
    if isinstance(spec, tuple):
        return problem(v, next(s for s in spec if _fits(v, s)), path)
    items = ()
    if isinstance(spec, dict):
        items = ((k, x, spec.get(k, spec.get("*"))) for k, x in v.items()
                 if k in spec or "*" in spec)
    elif isinstance(spec, Map):
        items = ((k, x, spec.spec) for k, x in v.items())
    elif isinstance(spec, List):
        items = ((str(i), x, spec.spec) for i, x in enumerate(v))
    for key, value, sub in items:
        why = problem(value, sub, f"{path}.{key}" if path else str(key))
        if why:
            return why
    return None


def file_problem(name, doc):
    """Why the experiment file `name`.json holding doc cannot be read, or None. A step the
    suite recorded as failed or not run holds only its status and reason."""
    return problem(doc, dict(COMMON, **FILES.get(name, {})))
