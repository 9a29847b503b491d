"""Interleaved rounds: every configuration once per round, the order rotated each round so
that slow drifts of a shared machine hit every configuration alike; and the per-round paired
ratios that such rounds allow."""
import statistics


def rotated(items, rnd):
    """items in round rnd's order: rotated left by rnd (two items alternate)."""
    items = list(items)
    k = rnd % len(items) if items else 0
    return items[k:] + items[:k]


def interleaved(rounds, items, gate=None, order=None):
    """(round, item) for every round and, within it, every item in that round's order
    (order(round) when given, else the items rotated). gate: gate(round) -> whether that round
    may start (lib.budget.RoundGate); the first it refuses ends the loop, so every round that
    ran is whole."""
    for rnd in range(rounds):
        if gate is not None and not gate(rnd):
            return
        for item in (order(rnd) if order else rotated(items, rnd)):
            yield rnd, item


def median(xs):
    """The median of the values that are not None, or None."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def paired(num, den):
    """num[r] / den[r] for every round r both ran in (each a {round: value}), in round order,
    and their median: the two ran back to back, so the machine's drift mostly cancels."""
    ratios = [num[r] / den[r] for r in sorted(num) if r in den and num[r] and den[r]]
    return {"per_round": ratios, "median": median(ratios)}


def aa(config, first, second):
    """The A/A pair: one configuration measured twice in every round (`first` and `second`,
    each {round: value}), second/first per round. Its spread is the experiment's own noise
    floor, the least a paired ratio of two different configurations must exceed to mean
    anything."""
    p = paired(second, first)
    rs = p["per_round"]
    return {"config": config, "per_round": rs, "median": p["median"],
            "spread": [min(rs), max(rs)] if rs else None}
