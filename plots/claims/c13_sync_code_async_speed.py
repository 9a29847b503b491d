"""C13: "synchronous code, asynchronous efficiency": a fiber server written as blocking loops
performs like a callback server."""
import data as D
import figures as F
import verdict as V
from harness_api import host_pace, sequential
from formatting import figure_number, threshold_text, value_text

ID = "C13"
SOURCE = "seeds 001 (NtyCo, its title), 004 (libco)"
CLAIM = ("\"Synchronous code, asynchronous efficiency\": a coroutine server written as "
         "blocking read/write loops performs like an asynchronous callback server; coroutine IO "
         "sits \"slightly below\" asynchronous calls.")
BRIEF = 'Blocking-style coroutine code performs like an async callback server.'
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
# System calls per request apart from the readiness waits (kernel counts), at most, or the
# yardstick's. How many waits a request costs follows the load's pace, not the server's code (a
# server that keeps up with its client waits every request or two, one behind it once in
# dozens: 2.05 and 2.72 calls per request in all from one server in two quick runs), so the
# waits are shown beside, not judged; a run without them counted is judged on every call.
HOLDS_SYSCALLS = 2.1
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
        "system calls per request at ping-pong apart from the calls that wait for readiness "
        "(kernel counts; the waits follow the load's pace and are shown beside), or no more "
        "than the yardstick where that makes more (a server cannot be asked for fewer calls "
        "than the one it is compared with); holds partly when the CPU ratio is at "
        f"most {PARTLY_CPU} and the throughput ratio at least {PARTLY_TPUT} everywhere "
        "(\"slightly below\", seed 004's words); otherwise does not hold; a ratio within the "
        "A/A noise floor (when the run has one) is inconclusive when a threshold it is "
        "compared with lies within that noise")

# Sampling until decided (harness/lib/sequential.py; fiberio.json's `sequential` block): a pair the
# driver sampled past the design's first look was looked at again with the data in hand, so a
# bootstrap interval over all its rounds would decide wrongly more often than its level says
# (the simulation: 7-9% instead of 5%). Such a pair is read as the design decided it. The
# sign-test decision at a look equals the look's order-statistic interval clearing the
# threshold, so each comparison reads a figure with that interval; by the rule's operator,
# what the comparison gives for each decision:
DESIGN_OPS = {"cpu": "<=", "tput": ">="}
DECIDED_AS = {("<=", sequential.ABOVE): F.NO, ("<=", sequential.BELOW): F.YES,
              (">=", sequential.ABOVE): F.YES, (">=", sequential.BELOW): F.NO}
STOPPED = {"decided": "every threshold decided", "max looks": "the design's last look made",
           "runs failed": "runs failed before its next look"}


def paired_rounds(doc, load, default, yardstick=YARDSTICK):
    """{"cpu": ..., "tput": ...}: the default fiber server over the yardstick, each round's
    ratio of the two measured in it, from the driver's per-round records; a round whose two
    legs the host held back differently is left out, as the driver leaves it out of its
    sequential design (harness/lib/host_pace.same_pace)."""
    runs = (doc or {}).get("runs")
    return {what: D.paired(runs, key, {"variant": default}, {"variant": yardstick},
                           pair_ok=host_pace.same_pace, load=load, kind="tput")
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


IO_CALLS = "syscalls per request apart from readiness waits"


def call_figure(summ, variant, label):
    """The ping-pong system calls per request the rule reads for one server: apart from the
    readiness waits where the run counted them (fiberio_runs.WAIT_CALLS), else every call (a
    run from before the waits were counted)."""
    s = summ.get("pingpong", {}).get(variant) or {}
    if s.get("io_syscalls_per_request") is not None:
        return F.exact(f"{IO_CALLS}, ping-pong, {label}", s["io_syscalls_per_request"], "",
                       "fiberio")
    return F.exact(f"syscalls per request, ping-pong, {label}", s.get("syscalls_per_request"),
                   "", "fiberio")


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


def sampled(doc):
    """(design, {(load, num, den): pair}) of fiberio.json's `sequential` block: the design as
    recorded and the pairs the driver sampled past its first look (more rounds than the
    preset's); ({}, {}) for a run without the block (older runs, the driver without
    --decide). A pair the budget stopped at the first look is not in it."""
    seq = (doc or {}).get("sequential") or {}
    design = seq.get("design") or {}
    first = design.get("first")
    pairs = {}
    for p in seq.get("pairs") or []:
        if first is not None and (p.get("rounds") or 0) > first:
            pairs[(p.get("load"), p.get("num"), p.get("den"))] = p
    return design, pairs


def look_figure(name, look, ratios):
    """The design's figure at one look (a `looks` entry of the pair's record): the median of
    the look's rounds, its order-statistic interval [r_(n-u+1), r_(u)] (the interval the sign
    test decides on) and n its rounds; the ratios themselves as samples, for the run
    comparison."""
    n = look["rounds"]
    lo, hi = look["interval"]
    rs = [float(r) for r in ratios[:n]]
    f = F.estimate(name, look["median"], lo, hi, n, "x", "fiberio")
    return dict(f, samples=rs, spread=(min(rs), max(rs)) if len(rs) >= 2 else None)


def design_read(name, rec, ratios, op):
    """(figure, {threshold: figure}, {threshold: decision}) of one figure (cpu or tput) of a
    pair the driver sampled until decided, `rec` its record in the `sequential` block: the
    figure at the last look that could decide, and, for a threshold the design decided at an
    earlier look that this interval no longer clears (a decision, once made, stays), the
    figure at that look. A threshold the design left open straddles the last look's interval.
    None when no look the pair reached could decide (a design whose first look is 5 rounds
    decides nothing there; a pair the budget stopped before its next look): the pair's
    continuation then depended on no ratio, and its rounds are read as one look, as a pair
    not extended."""
    looks = [lk for lk in (rec or {}).get("looks") or []
             if lk.get("interval") and lk.get("median") is not None]
    if not looks:
        return None
    last = look_figure(name, looks[-1], ratios)
    per, decisions = {}, {}
    for d in rec.get("decisions") or []:
        c = d["threshold"]
        decisions[c] = d
        if F.compare(last, op, c)["outcome"] == DECIDED_AS.get((op, d["decision"]),
                                                                F.STRADDLES):
            continue
        at = next((lk for lk in looks if lk["rounds"] == d.get("rounds")), None)
        if at is not None and d["decision"] != sequential.UNDECIDED:
            per[c] = look_figure(f"{name} at the look of {at['rounds']} rounds", at, ratios)
    return last, per, decisions


def fig_at(m, fig, threshold):
    """The figure a comparison with `threshold` reads: the design's figure at the look that
    decided it when it differs from the figure's own (design_read), else the figure."""
    return (m.get("at") or {}).get((fig["name"], threshold), fig)


def stopped_text(p):
    """Why the driver stopped sampling a pair, in words."""
    why = p.get("stopped")
    ob = p.get("over_budget") or {}
    if why == "budget" and ob:
        return (f"budget: the look at {ob.get('next_look')} rounds was predicted to take "
                f"{ob.get('predicted_s')} s, {ob.get('left_s')} s were left")
    return STOPPED.get(why, str(why))


def decision_text(d):
    """One threshold's decision as the measured lines say it."""
    c = threshold_text(d["threshold"])
    if d["decision"] != sequential.UNDECIDED:
        return f"{c} {d['decision']} at look {d['look']} ({d['rounds']} rounds)"
    need = d.get("rounds_needed_at_median", "n/a")
    return f"{c} undecided" + (
        "" if need == "n/a" else
        f" (needs more than {sequential.EXACT_LIMIT} rounds at the median)" if need is None
        else f" (needs about {need} rounds at the median)")


def sampling_lines(design, sampled_pairs, read):
    """The measured lines of sampling until decided: the design, and per pair sampled past
    its first look its rounds, looks, decisions and why it stopped, and whether the verdict
    reads the design's decisions."""
    if not sampled_pairs:
        return []
    bounds = ", ".join("-" if b is None else str(b) for b in design.get("bounds") or [])
    lines = [f"- sampling until decided (fiberio.json `sequential`: {design.get('method')}, "
             f"{design.get('spending')}-type error spending, looks at "
             f"{', '.join(map(str, design.get('looks') or []))} rounds, bounds {bounds}, exact "
             f"A/A error {value_text(design.get('error'), '.4f')}); per pair sampled past its "
             "first "
             "look:"]
    read_pairs = {id(info["pair"]) for info in read.values()}
    for (load, _num, den), p in sampled_pairs.items():
        head = f"- {load} fiber/{den}: {p.get('rounds')} rounds, looks " \
            f"{', '.join(map(str, p.get('looks') or []))} (stopped: {stopped_text(p)})"
        if id(p) not in read_pairs:
            lines.append(head + "; no look it reached could decide, so its rounds are read as "
                         "one look, as a pair not extended")
            continue
        lines.append(head + "; " + "; ".join(
            f"{'CPU per request' if what == 'cpu' else 'throughput' if what == 'tput' else what}"
            f" " + ", ".join(decision_text(d) for d in f.get("decisions") or [])
            for what, f in (p.get("figures") or {}).items()) + ": the verdict reads the "
            "design's decisions")
    return lines


def design_rule(design):
    """What the rule adds for a run whose pairs were sampled until decided."""
    return ("; a pair the driver sampled until decided past the design's first look "
            f"(fiberio.json `sequential`: {design.get('method')}, {design.get('spending')}-type "
            f"error spending over looks at {', '.join(map(str, design.get('looks') or []))} "
            f"rounds, exact A/A error {value_text(design.get('error'), '.4f')}) is read as the "
            "design "
            "decided it, not by a bootstrap over every round (that would be looking again "
            "without correction): each threshold against the design's order-statistic "
            "interval of the median ratio at its last look, or at the look that decided it "
            "when that interval no longer clears it, so a threshold the design left open "
            "straddles; the A/A noise floor does not reopen its decisions, whose error the "
            "design controls over every look")


def design_open(e, m):
    """An open comparison (verdict.open_entry) of a figure the design left open: what would
    decide it from the driver's recorded rounds-needed figure for the pair and threshold
    (`rounds_needed_at_median`: the rounds of a design that decides it with the planned power
    were the truth the median, at the measured noise) when the record has it, else e as is
    (the estimate from the interval's width)."""
    info = (m.get("design_read") or {}).get(e["figure"])
    if not info or e.get("noise_floor"):
        return e
    d = info["decisions"].get(e["threshold"])
    if d is None or d["decision"] != sequential.UNDECIDED \
            or "rounds_needed_at_median" not in d:
        return e
    p, rec, design = info["pair"], info["rec"], m.get("design") or {}
    need, rounds = d["rounds_needed_at_median"], p.get("rounds")
    med, spread, share = rec.get("median"), rec.get("spread"), rec.get("outliers")
    head = (f"{e['figure']} {figure_number(e['value'])} [{figure_number(e['low'])}, "
            f"{figure_number(e['high'])}] "
            f"(n={e['n']}) straddles {threshold_text(e['threshold'])}: the sequential design left "
            "it "
            f"open at {e['n']} rounds (stopped: {stopped_text(p)}); ")
    noise = (f"at the per-round spread measured ({value_text(spread, '.3g')} of the log ratio"
             + (f", {share:.0%} outlier rounds" if share else "") + ")")
    if need is None:
        return dict(e, needs=V.AT, rounds=None, text=head + (
            f"the design would need more than {sequential.EXACT_LIMIT} rounds {noise} were "
            f"the truth the median, {value_text(med, '.3g')}: no practical number of rounds "
            "decides it here"))
    text = head + (
        f"about {need} rounds would decide it on this machine (the driver's figure: a design "
        f"of that many rounds decides it with {value_text(design.get('power'), '.0%')} probability "
        f"were the true ratio the median, {value_text(med, '.3g')}, {noise}; this pair has "
        f"{rounds} rounds)")
    if rounds is not None and need <= rounds:
        text += (f"; its {rounds} rounds did not decide it, so the truth likely lies nearer "
                 f"{threshold_text(e['threshold'])} than the median")
    return dict(e, needs=V.ROUNDS, rounds=need, text=text)


# The IO path's counts per request (icount.json's `iopath` block, gate/iopath.py), shown beside
# the timings and not judged: where the fiber server needs more CPU per request than the
# yardstick, they say in what, and they do not move with the state of the machine.
PATH_PAIR = (("fiber/adaptive", "fiber (adaptive reads)"), (YARDSTICK, YARDSTICK))
# (key, name, decimals): rounded to what repeats from run to run of one build (iopath's
# deterministic case: instructions to 0.1%), so that comparing two runs sees a change of
# behaviour, not the last digit of a count differenced over a few thousand requests.
PATH_FIGURES = (("instructions_per_request", "user-space instructions per request", 0),
                ("lines_per_request", "own cache lines per request", 1))


def path_counts(run):
    """(lines, figures) of the IO path's counts of the fiber server and the yardstick."""
    rec = (run.get("icount") or {}).get("iopath")
    if not rec:
        return ["- by count: not measured in this run (no `iopath` block in icount.json)"], []
    if rec.get("status") != "ok":
        return [f"- by count: not run: {rec.get('reason')}"], []
    got = {c: (rec.get("configs") or {}).get(c) or {"status": "not run: not counted"}
           for c, _ in PATH_PAIR}
    bad = [f"{c} {g['status']}" for c, g in got.items() if "status" in g]
    if bad:
        return ["- by count: " + "; ".join(bad)], []
    (fib, fl), (ep, el) = ((got[c], label) for c, label in PATH_PAIR)
    figures = [F.exact(f"{what}, {label} (fixed schedule)", round(g[key], d), "", "icount")
               for key, what, d in PATH_FIGURES for g, label in ((fib, fl), (ep, el))]
    parts = [f"{what} {fib[key]:.{d}f} against {ep[key]:.{d}f}" for key, what, d in PATH_FIGURES]
    said = (f"- by count, {fl} against {el}: " + "; ".join(parts) + ". Shown, not judged: "
            "counts do not move with the machine's state, and say where a CPU gap comes from")
    how = f"- how they were counted (icount.json `iopath`): {rec.get('how')}"
    # A list of its own (the blank line), whose first item REPORT.md keeps beside the verdict.
    return ["", said, how], figures


def table(doc, summ):
    lines = ["| load | server | syscalls/req | of them waits | epoll_ctl/req | EAGAIN/req | "
             "CPU us/req | req/s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for load in D.FIBERIO_LOADS:
        for v in D.fiberio_variants(doc):
            s = summ.get(load, {}).get(v)
            if s:
                lines.append(f"| {load} | {v} | {value_text(s.get('syscalls_per_request'), '.3f')} "
                             f"| {value_text(s.get('waits_per_request'), '.3f')} | "
                             f"{value_text(s.get('epoll_ctl_per_request'), '.3f')} | "
                             f"{value_text(s.get('eagain_per_request'), '.2f')} | "
                             f"{value_text(s.get('server_cpu_us_per_request'), '.2f')} | "
                             f"{value_text(s.get('requests_per_sec'), '.0f')} |")
    return lines + [""]


def host_line(doc):
    """What the host's pace did to the timed windows (harness/lib/host_pace.py), or None for
    a run that did not watch it."""
    watched = [r for r in doc.get("runs") or [] if r.get("host_pace")]
    if not watched:
        return None
    again = sum(len(r.get("host_slowed_windows") or []) for r in watched)
    kept = sum(1 for r in watched if r["host_pace"].get("slowed"))
    both = any(r["host_pace"].get("cpus") for r in watched)
    mixed = sorted({f"{r['load']} round {n}" for r in (doc.get("ratios") or {}).values()
                    for n in r.get("host_mixed_rounds") or []})
    return (f"- the host's pace, watched over {len(watched)} timed windows: {again} taken again "
            "because the host held the server's CPU back"
            + (" or the load's" if both else "")
            + (f"; {kept} kept though held back (no calm take among their retakes)"
               if kept else "")
            + ("; left out of the paired ratios, their two legs held back differently: "
               + ", ".join(mixed) if mixed else ""))


def measure(run):
    doc = run.get("fiberio")
    if not doc or not doc.get("summary"):
        return {"lines": [f"no read-policy experiment: {run.why('fiberio')}"]}
    summ, default = D.fiberio_summary(doc), doc.get("default", "")
    cfg = doc.get("config", {})
    design, sampled_pairs = sampled(doc)
    more = "" if not sampled_pairs else " (the pairs sampled until decided: " + ", ".join(
        f"{load} fiber/{den} {p.get('rounds')}" for (load, _n, den), p in sampled_pairs.items()
    ) + " rounds)"
    lines = [f"- default: `{default}`; {cfg.get('rounds', '?')} interleaved rounds{more}, "
             f"server on CPU {cfg.get('server_cpu', '?')}, load on CPU "
             f"{cfg.get('load_cpu', '?')}; load average {doc.get('loadavg_start')} at start, "
             f"{doc.get('loadavg_end')} at end"] + [
        x for x in (host_line(doc),) if x] + [""] + table(doc, summ)
    # Every paired ratio the driver measured, for the reader; the verdict recomputes its own.
    for name, r in (doc.get("ratios") or {}).items():
        lines.append(f"- {name}: median **{value_text(r.get('median'), '.3f')}** (rounds: "
                     + ", ".join(value_text(x, ".3f") for x in r.get("per_round", [])) + ")")
    judged, stream_line = stream_counts(summ, default)
    loads = LOADS + ((STREAM,) if judged else ())
    yard = {load: yardstick_of(doc, load, default) for load in loads}
    pairs = {load: paired_rounds(doc, load, default, yard[load][0]) for load in loads}
    levels = [ld for ld in loads if pairs[ld]["cpu"]["median"] is not None
              and pairs[ld]["tput"]["median"] is not None]
    lines += [ln for ln in (yard.get("pingpong-1k", (0, None))[1], stream_line) if ln]
    if not levels:
        return {"lines": lines + [f"- no paired fiber/{YARDSTICK} ping-pong rounds"]}
    ratios, ordered, at, read, value = {"cpu": [], "tput": []}, [], {}, {}, {}
    for load in levels:
        p = sampled_pairs.get((load, default, yard[load][0]))
        for what in ("cpu", "tput"):
            name = (f"{load}: {'CPU per request' if what == 'cpu' else 'throughput'}"
                    f" fiber/{yard[load][0]}")
            per_round = pairs[load][what]["per_round"]
            got = design_read(name, (p.get("figures") or {}).get(what), per_round,
                              DESIGN_OPS[what]) if p else None
            if got:
                f, per, decisions = got
                at.update(((name, c), g) for c, g in per.items())
                read[name] = {"pair": p, "rec": p["figures"][what], "decisions": decisions}
            else:
                f = F.paired(name, per_round, "x", "fiberio")
            ratios[what].append(f)
            ordered.append(f)
            value[(load, what)] = f["value"] if got else pairs[load][what]["median"]
    cpu = [value[(ld, "cpu")] for ld in levels]
    tput = [value[(ld, "tput")] for ld in levels]
    sys_fig = call_figure(summ, default, "default fiber")
    lines.append(f"- worst over {', '.join(levels)}: CPU per request {default}/yardstick "
                 f"{value_text(max(cpu), '.3f')}, throughput {value_text(min(tput), '.3f')}; "
                 f"{sys_fig['name'].split(', ping-pong')[0]} (ping-pong) "
                 f"{value_text(sys_fig['value'], '.3f')}")
    lines += sampling_lines(design, sampled_pairs, read)
    count_lines, count_figures = path_counts(run)
    lines += count_lines
    yard_fig = call_figure(summ, YARDSTICK, YARDSTICK)
    eager = "fiber/eager/" + default.split("/")[-1]
    figures = [sys_fig, yard_fig, call_figure(summ, eager, "eager fiber")]
    if sys_fig["name"].startswith(IO_CALLS):
        # The totals and the waits in them: shown, each read once in a state of the machine.
        for v, label in ((default, "default fiber"), (YARDSTICK, YARDSTICK)):
            s = summ.get("pingpong", {}).get(v) or {}
            figures += [F.once(f"syscalls per request, ping-pong, {label}",
                               s.get("syscalls_per_request"), "", "fiberio"),
                        F.once(f"readiness waits per request, ping-pong, {label}",
                               s.get("waits_per_request"), "", "fiberio")]
    yard = yard_fig["value"]
    figures += count_figures + ordered
    if not judged:
        shown = paired_rounds(doc, STREAM, default)
        figures += [F.paired(f"{STREAM}: {w} fiber/{YARDSTICK} (not judged)",
                             shown[k]["per_round"], "x", "fiberio")
                    for k, w in (("cpu", "CPU per request"), ("tput", "throughput"))
                    if shown[k]["per_round"]]
    aa = F.noise_floor(doc, "fiberio", prefer="cpu")
    # The A/A rule reopens what a bootstrap interval decides; the design's decisions stand
    # (their error is controlled over every look), and what it left open straddles anyway.
    noise = [V.noise_entry(f, aa) for f in ratios["cpu"] if f["name"] not in read] if aa else []
    if aa:
        figures.append(aa)
        lines += [V.noise_line(e) for e in noise]
        lines += [V.noise_line(V.noise_entry(f, aa)) + " (not applied: the sequential design "
                  "decided this pair, its error controlled over every look)"
                  for f in ratios["cpu"] if f["name"] in read]
    return {"lines": lines, "figures": figures, "cpu": ratios["cpu"], "tput": ratios["tput"],
            "syscalls": sys_fig, "sys_limit": max(HOLDS_SYSCALLS, yard or 0.0),
            "noise_floor": noise, "at": at, "design_read": read,
            "design": design if read else None,
            "numbers": {f"fiber/{YARDSTICK} CPU per request": (max(cpu), QUOTED_CPU_RATIO)}}


def within(m, t, cpu, tput):
    """Every level's CPU ratio at most cpu and throughput ratio at least tput (each read at
    the look of the sequential design that decided it, fig_at)."""
    return all(t(fig_at(m, f, cpu), "<=", cpu) for f in m["cpu"]) and \
        all(t(fig_at(m, f, tput), ">=", tput) for f in m["tput"])


def judge(m, t):
    if not m.get("cpu"):
        return V.NOTRUN
    if within(m, t, HOLDS_CPU, HOLDS_TPUT) and t(m["syscalls"], "<=", m["sys_limit"]):
        return V.HOLDS
    if within(m, t, PARTLY_CPU, PARTLY_TPUT):
        return V.PARTLY
    return V.NOT


def verdict(run):
    m = measure(run)
    r = V.decide(RULE, m, judge)
    if m.get("design"):
        r["rule"] += design_rule(m["design"])
        r["open"] = [design_open(e, m) for e in r["open"]]
    return r
