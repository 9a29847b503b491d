"""C13: "synchronous code, asynchronous efficiency": a fiber server written as blocking loops
performs like a callback server."""
import data as D
import figures as F
import verdict as V

ID = "C13"
SOURCE = "seeds 001 (NtyCo, its title), 004 (libco)"
CLAIM = ("\"Synchronous code, asynchronous efficiency\": a coroutine server written as "
         "blocking read/write loops performs like an asynchronous callback server; coroutine IO "
         "sits \"slightly below\" asynchronous calls.")
QUOTED = "like a callback server; \"slightly below\" (no figure quoted)"
QUOTED_CPU_RATIO = 1.0  # "like a callback server"
CHARTS = ["fiberio"]

YARDSTICK = "epoll"  # the raw-epoll callback server
LOADS = ("pingpong", "pingpong-1k")  # the ping-pong levels judged (100 and 1000 connections)
HOLDS_CPU = 1.05  # fiber/epoll server CPU per request, at most
HOLDS_TPUT = 0.95  # fiber/epoll throughput, at least
HOLDS_SYSCALLS = 2.1  # system calls per request (kernel count), at most
PARTLY_CPU = 1.25
PARTLY_TPUT = 0.8

RULE = ("the fiber server (its default read policy, merged engine) against the raw-epoll "
        "callback server, medians of paired interleaved rounds, at every ping-pong level "
        "measured (100 and 1000 connections): holds when it needs at most "
        f"{HOLDS_CPU}x the epoll server's CPU per request, reaches at least {HOLDS_TPUT}x its "
        f"throughput, and makes at most {HOLDS_SYSCALLS} system calls per request (kernel "
        f"count); holds partly when the CPU ratio is at most {PARTLY_CPU} and the throughput "
        f"ratio at least {PARTLY_TPUT} everywhere (\"slightly below\", seed 004's words); "
        "otherwise does not hold")


def paired_rounds(doc, load, default):
    """{"cpu": ..., "tput": ...}: the default fiber server over the yardstick, each round's
    ratio of the two measured in it, from the driver's per-round records."""
    runs = (doc or {}).get("runs")
    return {what: D.paired(runs, key, {"variant": default}, {"variant": YARDSTICK},
                           load=load, kind="tput")
            for what, key in (("cpu", "server_cpu_us_per_request"),
                              ("tput", "requests_per_sec"))}


def table(doc, summ):
    lines = ["| load | server | syscalls/req | epoll_ctl/req | EAGAIN/req | CPU us/req | "
             "req/s |", "|---|---|---:|---:|---:|---:|---:|"]
    for load in D.FIBERIO_LOADS:
        for v in D.fiberio_variants(doc):
            s = summ.get(load, {}).get(v)
            if s:
                lines.append(f"| {load} | {v} | {V.fmt(s.get('syscalls_per_request'), '.3f')} | "
                             f"{V.fmt(s.get('epoll_ctl_per_request'), '.3f')} | "
                             f"{V.fmt(s.get('eagain_per_request'), '.2f')} | "
                             f"{V.fmt(s.get('server_cpu_us_per_request'), '.2f')} | "
                             f"{V.fmt(s.get('requests_per_sec'), '.0f')} |")
    return lines + [""]


def measure(run):
    doc = run.get("fiberio")
    if not doc or not doc.get("summary"):
        return {"lines": [f"no read-policy experiment: {run.why('fiberio')}"]}
    summ, default = D.fiberio_summary(doc), doc.get("default", "")
    cfg = doc.get("config", {})
    lines = [f"- default: `{default}`; {cfg.get('rounds', '?')} interleaved rounds, server on "
             f"CPU {cfg.get('server_cpu', '?')}, load on CPU {cfg.get('load_cpu', '?')}; load "
             f"average {doc.get('loadavg_start')} at start, {doc.get('loadavg_end')} at end",
             ""] + table(doc, summ)
    # Every paired ratio the driver measured, for the reader; the verdict recomputes its own.
    for name, r in (doc.get("ratios") or {}).items():
        lines.append(f"- {name}: median **{V.fmt(r.get('median'), '.3f')}** (rounds: "
                     + ", ".join(V.fmt(x, ".3f") for x in r.get("per_round", [])) + ")")
    pairs = {load: paired_rounds(doc, load, default) for load in LOADS}
    levels = [ld for ld in LOADS if pairs[ld]["cpu"]["median"] is not None
              and pairs[ld]["tput"]["median"] is not None]
    if not levels:
        return {"lines": lines + [f"- no paired fiber/{YARDSTICK} ping-pong rounds"]}
    cpu = [pairs[ld]["cpu"]["median"] for ld in levels]
    tput = [pairs[ld]["tput"]["median"] for ld in levels]
    sysc = (summ.get("pingpong", {}).get(default) or {}).get("syscalls_per_request")
    lines.append(f"- worst over {', '.join(levels)}: CPU per request {default}/{YARDSTICK} "
                 f"{V.fmt(max(cpu), '.3f')}, throughput {V.fmt(min(tput), '.3f')}; syscalls per "
                 f"request (ping-pong) {V.fmt(sysc, '.3f')}")
    sys_fig = F.exact("syscalls per request, ping-pong, default fiber", sysc, "", "fiberio")
    figures = [sys_fig,
               F.exact("syscalls per request, ping-pong, eager fiber",
                       (summ.get("pingpong", {}).get("fiber/eager/" + default.split("/")[-1])
                        or {}).get("syscalls_per_request"), "", "fiberio")]
    ratios = {"cpu": [], "tput": []}
    for load in levels:
        for what in ("cpu", "tput"):
            f = F.paired(f"{load}: {'CPU per request' if what == 'cpu' else 'throughput'}"
                         f" fiber/{YARDSTICK}", pairs[load][what]["per_round"], "x", "fiberio")
            ratios[what].append(f)
            figures.append(f)
    return {"lines": lines, "figures": figures, "cpu": ratios["cpu"], "tput": ratios["tput"],
            "syscalls": sys_fig,
            "numbers": {f"fiber/{YARDSTICK} CPU per request": (max(cpu), QUOTED_CPU_RATIO)}}


def within(m, t, cpu, tput):
    """Every level's CPU ratio at most cpu and throughput ratio at least tput."""
    return all(t(f, "<=", cpu) for f in m["cpu"]) and all(t(f, ">=", tput) for f in m["tput"])


def judge(m, t):
    if not m.get("cpu"):
        return V.NOTRUN
    if within(m, t, HOLDS_CPU, HOLDS_TPUT) and t(m["syscalls"], "<=", HOLDS_SYSCALLS):
        return V.HOLDS
    if within(m, t, PARTLY_CPU, PARTLY_TPUT):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
