"""Sampling the fiber IO comparison until decided (experiments/fiberio.py --decide): the pairs
claim C13 decides on measured in further interleaved rounds, after the preset's, until each is
decided at a look of the sequential design (lib/sequential.py) or has had its last look or the
budget; and the record of how each pair stopped."""
import time

from lib import host_pace, rounds, sequential
from lib.fiberio_runs import tput_run

# The figures --decide compares: the key of a tput run each pair's ratio divides.
DECIDE_KEYS = {"cpu": "server_cpu_us_per_request", "tput": "requests_per_sec"}


def paired(runs, kind, key, num, den):
    """num/den per round (both ran in the same round), and the median; a round whose two
    legs the host held back differently (host_pace.same_pace) is left out, and listed."""
    def by_round(v):
        return {r["round"]: r for r in runs
                if r["load"] == kind and r["variant"] == v and r["kind"] == "tput"}
    x, y = by_round(num), by_round(den)
    mixed = sorted(k for k in x if k in y and not host_pace.same_pace(x[k], y[k]))
    keep = [k for k in x if k not in mixed]
    return {"load": kind, "num": num, "den": den, "key": key,
            **rounds.paired({k: x[k][key] for k in keep}, {k: r[key] for k, r in y.items()}),
            **({"host_mixed_rounds": mixed} if mixed else {})}


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def decided_pairs(plan, default):
    """(load, num, den) of every pair C13 decides on that the plan measures: the default fiber
    server over the epoll yardstick on each ping-pong load, over epoll-touch8 at 1,000
    connections when it is measured (as plots/claims/c13_sync_code_async_speed.py reads
    them). The stream is left out: C13 judges it only when the two servers make about as many
    system calls per request there."""
    out = []
    for kind, variants in plan:
        if not kind.startswith("pingpong") or default not in variants:
            continue
        den = "epoll-touch8" if kind == "pingpong-1k" and "epoll-touch8" in variants else "epoll"
        if den in variants:
            out.append((kind, default, den))
    return out


def pair_state(a, runs, pair, design):
    """{figure: sequential.decide() of the pair's per-round ratios of it, with `key` and the
    `ratios` themselves}."""
    kind, num, den = pair
    out = {}
    for fig, ts in a.decide:
        rs = paired(runs, kind, DECIDE_KEYS[fig], num, den)["per_round"]
        out[fig] = dict(sequential.decide(rs, ts, design), key=DECIDE_KEYS[fig], ratios=rs)
    return out


def pending(state):
    """The rounds of the next look an undecided figure of a pair waits for; None when every
    figure is decided or has had its last look."""
    nxt = [f["next_look"] for f in state.values() if not f["decided"] and f["next_look"]]
    return min(nxt) if nxt else None


def extend(a, runs, pairs, design, walls, tmp, say):
    """More interleaved rounds of the pairs not yet decided, after the preset's: each round
    measures every such pair's two servers back to back (which goes first alternates), until
    each pair is decided or has had the design's last look. With --budget-s a pair goes on
    only while the rounds up to its next look (nothing is decided between looks) are
    predicted, from its own runs' wall times, to end within the budget; pairs are served in
    the plan's order (100 connections first). Returns ({pair: why it stopped}, {pair: the
    prediction that stopped it}, rounds run, seconds)."""
    stopped, over, rnd, t0 = {}, {}, a.rounds, time.monotonic()
    # Failed runs give no ratio: a pair gets at most twice its last look in attempts.
    cap = a.rounds + 2 * design.max_rounds

    def round_s(kind, num, den):
        return sum(rounds.median(walls.get((kind, v)) or [a.warmup + a.duration + 1.0])
                   for v in (num, den))

    while True:
        active, committed = [], 0.0
        for p in pairs:
            if p in stopped:
                continue
            state = pair_state(a, runs, p, design)
            if all(f["decided"] for f in state.values()):
                stopped[p] = "decided"
                continue
            if pending(state) is None:
                stopped[p] = "max looks"
                continue
            have = min(len(f["ratios"]) for f in state.values())
            need_s = max(1, pending(state) - have) * round_s(*p)
            left = None if a.budget_s is None else a.budget_s - (time.monotonic() - a.t_start)
            if left is not None and committed + need_s > left:
                stopped[p] = "budget"
                over[p] = {"next_look": pending(state), "rounds": have,
                           "predicted_s": round(need_s, 1),
                           "left_s": round(max(0.0, left - committed), 1)}
                say(f"  sequential: {p[0]} {p[1]}/{p[2]}: over budget (the look at "
                    f"{pending(state)} rounds predicted {need_s:.0f} s, "
                    f"{max(0.0, left - committed):.0f} s of {a.budget_s:.0f} s left)")
                continue
            committed += need_s
            active.append(p)
        if not active:
            break
        if rnd >= cap:
            stopped.update((p, "runs failed") for p in active)
            break
        for kind, num, den in rounds.rotated(active, rnd):
            for v in rounds.rotated([num, den], rnd):
                t1 = time.monotonic()
                t = dict(tput_run(a, v, kind, tmp), round=rnd, sequential=True)
                walls.setdefault((kind, v), []).append(time.monotonic() - t1)
                runs.append(t)
                say(f"  round {rnd + 1} (sequential) {kind:11} {v:24} cpu "
                    f"{fmt(t['server_cpu_us_per_request'], '.2f')} us/req "
                    f"{fmt(t['requests_per_sec'], '.0f')} req/s (load {t['loadavg']})")
        rnd += 1
    return stopped, over, rnd - a.rounds, time.monotonic() - t0


def needed(spread, outliers, effect, first):
    """sequential.rounds_needed, or None without a spread."""
    if spread is None or effect is None or effect <= 0:
        return None
    return sequential.rounds_needed(spread, effect, first=first, outliers=outliers or 0.0)


def sequential_record(a, runs, pairs, design, stopped, over, ext_rounds, ext_s):
    """fiberio.json's `sequential`: the design, and per pair its looks, rounds, decision per
    threshold and why it stopped, with what an undecided comparison would need."""
    out = []
    for p in pairs:
        kind, num, den = p
        figs = {}
        for fig, f in pair_state(a, runs, p, design).items():
            rs = f["ratios"]
            spread, share = sequential.spread_of(rs)
            med = rounds.median(rs)
            for d in f["decisions"]:
                if d["decision"] == sequential.UNDECIDED and med and spread is not None:
                    # were the truth the median: its relative distance from the threshold
                    dist = max(med / d["threshold"], d["threshold"] / med) - 1.0
                    d["rounds_needed_at_median"] = needed(spread, share, dist, a.rounds)
            figs[fig] = {"key": f["key"], "rounds": len(rs), "median": med,
                         "looks": f["looks"], "decisions": f["decisions"],
                         "decided": f["decided"], "spread": spread, "outliers": share,
                         "rounds_needed": needed(spread, share, sequential.EFFECT, a.rounds)}
        longest = max(figs.values(), key=lambda f: f["rounds"])
        out.append({"load": kind, "num": num, "den": den, "rounds": longest["rounds"],
                    "looks": [lk["rounds"] for lk in longest["looks"]],
                    "stopped": stopped.get(p, "decided"), "over_budget": over.get(p),
                    "figures": figs})
    return {"design": dict(design.record(), first=design.looks[0],
                           max_rounds=design.max_rounds, effect=sequential.EFFECT,
                           power=sequential.POWER),
            "thresholds": {fig: ts for fig, ts in a.decide},
            "budget_s": a.budget_s, "rounds_added": ext_rounds,
            "seconds_added": round(ext_s, 1), "pairs": out}


def print_sequential(say, seq):
    for p in seq["pairs"]:
        for fig, f in p["figures"].items():
            dec = "; ".join(
                f"{d['threshold']:g} {d['decision']}"
                + (f" at {d['rounds']} rounds" if d["rounds"] else
                   f" (needs about {d['rounds_needed_at_median']} rounds at the median)"
                   if d.get("rounds_needed_at_median") else
                   f" (needs more than {sequential.EXACT_LIMIT} rounds at the median)"
                   if "rounds_needed_at_median" in d
                   else "")
                for d in f["decisions"])
            say(f"sequential {p['load']} {fig} {p['num']}/{p['den']}: median "
                f"{fmt(f['median'])} over {f['rounds']} rounds; {dec}; stopped: {p['stopped']}")
