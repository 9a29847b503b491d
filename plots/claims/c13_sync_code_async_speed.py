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
# At 1000 connections memory per connection, not the runtime, sets the gap: the fiber server
# keeps a stack per connection, the epoll server a few bytes, and the same epoll server
# walking 8 cache lines of a page of its own per connection (epoll-touch8) costs what the
# fiber server does there (harness/README.md, fiber read policies). Where the run has it,
# that is the yardstick at 1000 connections.
YARDSTICK_1K = "epoll-touch8"
LOADS = ("pingpong", "pingpong-1k")  # the ping-pong levels judged (100 and 1000 connections)
STREAM = "stream"
# The stream load counts only when the two servers make about as many system calls per
# request there: the epoll server reads into 64 KiB and the fiber server into 16 KiB, so with
# 4 x 16 KiB in flight the gap measures the buffers, not the runtime.
STREAM_SAME_CALLS = 1.25
HOLDS_CPU = 1.05  # fiber/epoll server CPU per request, at most
HOLDS_TPUT = 0.95  # fiber/epoll throughput, at least
HOLDS_SYSCALLS = 2.1  # system calls per request (kernel count), at most
PARTLY_CPU = 1.25
PARTLY_TPUT = 0.8

RULE = ("the fiber server (its default read policy, merged engine) against the raw-epoll "
        "callback server, medians of paired interleaved rounds, at every ping-pong level "
        "measured (100 and 1000 connections; at 1000 against the epoll server touching "
        f"memory per connection, `{YARDSTICK_1K}`, where the run has it, since memory per "
        "connection sets the gap there), and on the pipelined stream when the two make "
        f"about as many system calls per request there (fiber/epoll <= {STREAM_SAME_CALLS}; "
        "otherwise it is shown, not judged: their read buffers differ, and the gap measures "
        f"them): holds when it needs at most {HOLDS_CPU}x the yardstick's CPU per request, "
        f"reaches at least {HOLDS_TPUT}x its throughput, and makes at most {HOLDS_SYSCALLS} "
        f"system calls per request (kernel count); holds partly when the CPU ratio is at "
        f"most {PARTLY_CPU} and the throughput ratio at least {PARTLY_TPUT} everywhere "
        "(\"slightly below\", seed 004's words); otherwise does not hold; a ratio within the "
        "A/A noise floor (when the run has one) is inconclusive when a threshold it is "
        "compared with lies within that noise")


def paired_rounds(doc, load, default, yardstick=YARDSTICK):
    """{"cpu": ..., "tput": ...}: the default fiber server over the yardstick, each round's
    ratio of the two measured in it, from the driver's per-round records."""
    runs = (doc or {}).get("runs")
    return {what: D.paired(runs, key, {"variant": default}, {"variant": yardstick},
                           load=load, kind="tput")
            for what, key in (("cpu", "server_cpu_us_per_request"),
                              ("tput", "requests_per_sec"))}


def yardstick_of(doc, load, default):
    """The yardstick a load is judged against, and the line saying which."""
    if load != "pingpong-1k":
        return YARDSTICK, None
    if paired_rounds(doc, load, default, YARDSTICK_1K)["cpu"]["median"] is not None:
        return YARDSTICK_1K, (f"- at 1000 connections the yardstick is `{YARDSTICK_1K}` (the "
                              "epoll server touching memory per connection as a fiber stack "
                              "does)")
    return YARDSTICK, (f"- this run has no `{YARDSTICK_1K}` at 1000 connections: judged "
                       f"against `{YARDSTICK}`, whose gap there includes memory per "
                       "connection, not only the runtime")


def stream_counts(summ, default):
    """(counts, line): whether the stream load is judged, from the two servers' system calls
    per request there (kernel counts)."""
    st = summ.get(STREAM, {})
    fib = (st.get(default) or {}).get("syscalls_per_request")
    ep = (st.get(YARDSTICK) or {}).get("syscalls_per_request")
    if not fib or not ep:
        return False, None
    if fib / ep <= STREAM_SAME_CALLS:
        return True, (f"- stream: fiber and epoll make {fib:.2f} and {ep:.2f} system calls per "
                      "request: judged")
    return False, (f"- stream: shown, not judged: the fiber server makes {fib:.2f} system calls "
                   f"per request and the epoll server {ep:.2f} ({fib / ep:.1f}x, over "
                   f"{STREAM_SAME_CALLS}): their read buffers differ (16 KiB against 64 KiB), "
                   "so the gap measures the buffers, not the runtime")


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
    judged, stream_line = stream_counts(summ, default)
    loads = LOADS + ((STREAM,) if judged else ())
    yard = {load: yardstick_of(doc, load, default) for load in loads}
    pairs = {load: paired_rounds(doc, load, default, yard[load][0]) for load in loads}
    levels = [ld for ld in loads if pairs[ld]["cpu"]["median"] is not None
              and pairs[ld]["tput"]["median"] is not None]
    lines += [ln for ln in (yard.get("pingpong-1k", (0, None))[1], stream_line) if ln]
    if not levels:
        return {"lines": lines + [f"- no paired fiber/{YARDSTICK} ping-pong rounds"]}
    cpu = [pairs[ld]["cpu"]["median"] for ld in levels]
    tput = [pairs[ld]["tput"]["median"] for ld in levels]
    sysc = (summ.get("pingpong", {}).get(default) or {}).get("syscalls_per_request")
    lines.append(f"- worst over {', '.join(levels)}: CPU per request {default}/yardstick "
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
                         f" fiber/{yard[load][0]}", pairs[load][what]["per_round"], "x",
                         "fiberio")
            ratios[what].append(f)
            figures.append(f)
    if not judged:
        shown = paired_rounds(doc, STREAM, default)
        figures += [F.paired(f"{STREAM}: {w} fiber/{YARDSTICK} (not judged)",
                             shown[k]["per_round"], "x", "fiberio")
                    for k, w in (("cpu", "CPU per request"), ("tput", "throughput"))
                    if shown[k]["per_round"]]
    aa = V.noise_floor(doc, "fiberio", prefer="cpu")
    noise = [V.noise_entry(f, aa) for f in ratios["cpu"]] if aa else []
    if aa:
        figures.append(aa)
        lines += [V.noise_line(e) for e in noise]
    return {"lines": lines, "figures": figures, "cpu": ratios["cpu"], "tput": ratios["tput"],
            "syscalls": sys_fig, "noise_floor": noise,
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
