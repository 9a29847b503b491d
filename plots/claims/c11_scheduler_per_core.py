"""C11: one single-threaded scheduler per core is how a fiber runtime uses many cores."""
import data as D
import figures as F
import verdict as V
from formatting import figure_with_interval, value_text

ID = "C11"
SOURCE = "seed 000 (libfiber)"
CLAIM = ("One single-threaded scheduler per thread (one per core) is how a fiber runtime "
         "uses many cores.")
BRIEF = 'One single-threaded scheduler per core scales a fiber runtime.'
QUOTED = "scales with cores (no figure quoted)"
QUOTED_SCALING = 2.0  # two schedulers on two cores, ideally
CHARTS = []

HOLDS_AT = 1.3  # 2 threads over 1, throughput
PARTLY_AT = 1.05
# Server and load together using all but this many cores fill the machine: a second scheduler
# thread has no core to run on, so no scaling can show, whatever the ratio says.
FULL_SLACK = 0.1
# The one-thread server on shared CPUs using less than this share of a core (pinned, it uses
# a whole one) lost CPU to the load placed beside it: the ratio then measures where the
# scheduler put the threads, not what a second scheduler adds.
PLACED_SHARE = 0.95

RULE = ("with server and load sharing the same CPUs, on the ratio of 2 scheduler threads' "
        f"throughput to 1's (paired rounds): not measurable here (not run) when server and load "
        f"together used >= the cores available - {FULL_SLACK} with 2 threads, or the "
        f"one-thread server used < {PLACED_SHARE} of a core (its placement beside the load "
        f"decided the ratio); otherwise holds at >= {HOLDS_AT}x, holds partly at "
        f"{PARTLY_AT}-{HOLDS_AT}x, does not hold below; a ratio within the A/A noise floor "
        "(when the run has one) is inconclusive when a threshold it is compared with lies "
        "within that noise")


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
    lines = [f"- {name}: {value_text(v['requests_per_sec'], '.0f')} req/s, server "
             f"{value_text(v['server_cores_used'], '.2f')} cores, "
             f"{value_text(v['server_cpu_us_per_request'], '.2f')} us CPU per request "
             f"({v['runs']} runs)" for name, v in s.items()]
    r = th["ratio_t2_over_t1_shared"]
    lines.append(f"- 2 threads / 1 thread (shared CPUs): **{r:.2f}**; machine has "
                 f"{th['config'].get('cores')} cores")
    t1, t2 = s.get("t1-shared", {}), s.get("t2-shared", {})
    cores = th["config"].get("cores") or 2
    load = D.median([x.get("load_cores_used") for x in th.get("runs", [])
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
    busy_fig = F.timing("cores used by server and load with 2 threads", busy, "cores",
                        "threads", samples=round_sums(th, "t2-shared"))
    placed = F.timing("cores used by the one-thread server on shared CPUs",
                      t1.get("server_cores_used"), "cores", "threads",
                      samples=D.runs_of(th, lambda y: y.get("server_cores_used"),
                                        variant="t1-shared"))
    full, _ = V.settle(lambda t: t(busy_fig, ">=", cores - FULL_SLACK))
    lost, _ = V.settle(lambda t: t(placed, "<", PLACED_SHARE))
    lines.append(f"- with 2 threads the server and the load together used "
                 f"{figure_with_interval(busy_fig)} of {cores} cores; the one-thread server on "
                 f"shared CPUs {figure_with_interval(placed)}"
                 + (" (pinned: "
                    f"{value_text(s.get('t1-pinned', {}).get('server_cores_used'), '.2f')})"
                    if "t1-pinned" in s else ""))
    if full or lost:
        lines.append("- not measurable here: " + "; ".join(
            w for w, on in (("server and load filled every core, so a second scheduler thread "
                             "had no core to run on", full),
                            ("the one-thread server got less than a core beside the load, so "
                             "the ratio measures where the threads were placed", lost)) if on)
            + ". What would measure it: a machine with at least four cores (two for the "
            "server's scheduler threads, the rest for the load), or the load pinned to CPUs "
            "the server does not use")
    figures = [ratio, cpu, busy_fig, placed]
    for name, x in s.items():
        figures += [F.timing(f"throughput, {name}", x.get("requests_per_sec"), "req/s",
                             "threads", samples=D.runs_of(th, lambda y: y.get("requests_per_sec"),
                                                          variant=name)),
                    F.timing(f"server CPU per request, {name}",
                             x.get("server_cpu_us_per_request"), "us", "threads",
                             samples=D.runs_of(th, lambda y: y.get("server_cpu_us_per_request"),
                                               variant=name))]
    aa = F.noise_floor(th, "threads", prefer="requests_per_sec")
    noise = [V.noise_entry(ratio, aa)] if aa else []
    if aa:
        figures.append(aa)
        lines.append(V.noise_line(noise[0]))
    return {"lines": lines, "figures": figures, "ratio": ratio, "cpu": cpu, "busy": busy_fig,
            "placed": placed, "cores": cores, "noise_floor": noise,
            "numbers": {"2 vs 1 scheduler threads": (r, QUOTED_SCALING)}}


def round_sums(th, variant):
    """Server plus load cores used, per round of one variant (None where either is missing)."""
    return [x["server_cores_used"] + x["load_cores_used"] for x in th.get("runs", [])
            if x.get("variant") == variant and x.get("status") == "ok"
            and x.get("server_cores_used") is not None and x.get("load_cores_used") is not None]


def judge(m, t):
    r = m.get("ratio")
    if r is None:
        return V.NOTRUN
    if t(m["busy"], ">=", m["cores"] - FULL_SLACK, name="cores available - FULL_SLACK") or \
            t(m["placed"], "<", PLACED_SHARE):
        return V.NOTRUN
    if t(r, ">=", HOLDS_AT):
        return V.HOLDS
    return V.PARTLY if t(r, ">=", PARTLY_AT) else V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
