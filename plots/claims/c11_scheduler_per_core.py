"""C11: one single-threaded scheduler per core is how a fiber runtime uses many cores."""
import data as D
import figures as F
import verdict as V

ID = "C11"
SOURCE = "seed 000 (libfiber)"
CLAIM = ("One single-threaded scheduler per thread (one per core) is how a fiber runtime "
         "uses many cores.")
QUOTED = "scales with cores (no figure quoted)"
QUOTED_SCALING = 2.0  # two schedulers on two cores, ideally
CHARTS = []

HOLDS_AT = 1.3  # 2 threads over 1, throughput
PARTLY_AT = 1.05
FULL_SHARE = 0.85  # server + load use this share of the cores: the machine is full
CPU_COST = 1.15  # 2 threads' CPU per request over 1 thread's, at most
NO_LOSS = 0.95  # 2 threads' throughput over 1 thread's, at least

RULE = ("with server and load sharing the same CPUs: holds when 2 scheduler threads give "
        f">= {HOLDS_AT}x the throughput of 1; holds partly for {PARTLY_AT}-{HOLDS_AT}x, or when "
        "server and load together fill every core (the load generator needs one of them, so no "
        f"scaling can show) and 2 threads cost at most {CPU_COST - 1:.0%} more CPU per request "
        "at no lower throughput; otherwise does not hold")


def per_round(th, key="requests_per_sec"):
    """t2-shared over t1-shared of one field, each round's ratio of the two variants measured
    in it."""
    return D.paired(th.get("runs"), key, {"variant": "t2-shared"}, {"variant": "t1-shared"},
                    status="ok")["per_round"]


def measure(run):
    th = run.get("threads")
    if not th or th.get("ratio_t2_over_t1_shared") is None:
        return {"lines": [f"no 1-vs-2 thread run: {run.why('threads')}"]}
    s = th["summary"]
    lines = [f"- {name}: {V.fmt(v['requests_per_sec'], '.0f')} req/s, server "
             f"{V.fmt(v['server_cores_used'], '.2f')} cores, "
             f"{V.fmt(v['server_cpu_us_per_request'], '.2f')} us CPU per request "
             f"({v['runs']} runs)" for name, v in s.items()]
    r = th["ratio_t2_over_t1_shared"]
    lines.append(f"- 2 threads / 1 thread (shared CPUs): **{r:.2f}**; machine has "
                 f"{th['config'].get('cores')} cores")
    t1, t2 = s.get("t1-shared", {}), s.get("t2-shared", {})
    cores = th["config"].get("cores") or 2
    load = V.median([x.get("load_cores_used") for x in th.get("runs", [])
                     if x.get("variant") == "t2-shared" and x.get("status") == "ok"])
    busy = (t2.get("server_cores_used") or 0) + (load or 0)
    cpu1, cpu2 = t1.get("server_cpu_us_per_request"), t2.get("server_cpu_us_per_request")
    # Each figure is a median of paired rounds: the driver's own ratio is a ratio of medians.
    ratio = F.paired("throughput 2 threads / 1 thread (shared CPUs)", per_round(th), "",
                     "threads")
    if ratio["value"] is None:
        ratio = F.once(ratio["name"], r, "", "threads")
    cpu = F.paired("server CPU per request 2 threads / 1 thread (shared CPUs)",
                   per_round(th, "server_cpu_us_per_request"), "", "threads")
    if cpu["value"] is None:
        cpu = F.once(cpu["name"], cpu2 / cpu1 if cpu1 and cpu2 else None, "", "threads")
    lines.append(f"- with 2 threads the server and the load together used {busy:.2f} of "
                 f"{cores} cores" + (": the machine was full, so no scaling can show"
                                      if busy >= FULL_SHARE * cores else ""))
    if busy < FULL_SHARE * cores:
        lines.append("- caution: server and load left part of the machine idle, so other jobs "
                     "competed for the CPUs during this run; a process with two threads gets a "
                     "larger share of a contended machine, which inflates this ratio")
    busy_fig = F.once("share of the cores used by server and load with 2 threads",
                      busy / cores, "", "threads")
    figures = [ratio, cpu, busy_fig]
    for name, x in s.items():
        figures += [F.timing(f"throughput, {name}", x.get("requests_per_sec"), "req/s",
                             "threads", samples=D.runs_of(th, lambda y: y.get("requests_per_sec"),
                                                          variant=name)),
                    F.timing(f"server CPU per request, {name}",
                             x.get("server_cpu_us_per_request"), "us", "threads",
                             samples=D.runs_of(th, lambda y: y.get("server_cpu_us_per_request"),
                                               variant=name))]
    return {"lines": lines, "figures": figures, "ratio": ratio, "cpu": cpu, "busy": busy_fig,
            "numbers": {"2 vs 1 scheduler threads": (r, QUOTED_SCALING)}}


def judge(m, t):
    r = m.get("ratio")
    if r is None:
        return V.NOTRUN
    if t(r, ">=", HOLDS_AT):
        return V.HOLDS
    no_cost = t(m["cpu"], "<=", CPU_COST) and t(r, ">=", NO_LOSS)
    if (t(m["busy"], ">=", FULL_SHARE) and no_cost) or t(r, ">=", PARTLY_AT):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
