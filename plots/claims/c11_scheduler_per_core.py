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


def per_round(th):
    by_round = {}
    for x in th.get("runs", []):
        if x.get("status") == "ok" and x.get("variant") in ("t1-shared", "t2-shared"):
            by_round.setdefault(x.get("round"), {})[x["variant"]] = x.get("requests_per_sec")
    return [d["t2-shared"] / d["t1-shared"] for d in by_round.values()
            if d.get("t1-shared") and d.get("t2-shared")]


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
    full = busy >= FULL_SHARE * cores
    cpu1, cpu2 = t1.get("server_cpu_us_per_request"), t2.get("server_cpu_us_per_request")
    no_cost = cpu1 and cpu2 and cpu2 <= CPU_COST * cpu1 and r >= NO_LOSS
    lines.append(f"- with 2 threads the server and the load together used {busy:.2f} of "
                 f"{cores} cores" + (": the machine was full, so no scaling can show"
                                      if full else ""))
    if not full:
        lines.append("- caution: server and load left part of the machine idle, so other jobs "
                     "competed for the CPUs during this run; a process with two threads gets a "
                     "larger share of a contended machine, which inflates this ratio")
    figures = [F.timing("throughput 2 threads / 1 thread (shared CPUs)", r, "", "threads",
                        samples=per_round(th)),
               F.once("cores used by server and load with 2 threads", busy, "", "threads")]
    for name, x in s.items():
        figures += [F.timing(f"throughput, {name}", x.get("requests_per_sec"), "req/s",
                             "threads", samples=D.runs_of(th, lambda y: y.get("requests_per_sec"),
                                                          variant=name)),
                    F.timing(f"server CPU per request, {name}",
                             x.get("server_cpu_us_per_request"), "us", "threads",
                             samples=D.runs_of(th, lambda y: y.get("server_cpu_us_per_request"),
                                               variant=name))]
    return {"lines": lines, "figures": figures, "ratio": r, "full": full, "no_cost": no_cost,
            "numbers": {"2 vs 1 scheduler threads": (r, QUOTED_SCALING)}}


def judge(m):
    r = m.get("ratio")
    if r is None:
        return V.NOTRUN
    if r >= HOLDS_AT:
        return V.HOLDS
    if (m["full"] and m["no_cost"]) or r >= PARTLY_AT:
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
