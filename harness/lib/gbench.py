"""Google Benchmark's JSON output, when one filter's repetitions come from two invocations of
the program: the first the minimum every row needs, the second the repetitions the budget
had room for. `merge` makes one document of them as if one invocation had run them all: the
second's repetition indexes follow the first's, every entry's `repetitions` is the total, and
each row's aggregates (mean, median, stddev, cv of the repetitions, and of each counter) are
computed again over all of them.

Within one invocation `--benchmark_enable_random_interleaving` runs every row once per
repetition, so repetition i of two rows ran in the same pass over the rows; the merged
document keeps that, since both invocations' repetitions are whole passes.

`from_blocks` writes another program's alternating measurement (epoll-ctl-pairs) as rows of
such a document: its blocks are the repetitions, each a pass over every row.
"""
import statistics

# Fields of an iteration entry that are not user counters.
STANDARD = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
            "repetitions", "repetition_index", "threads", "iterations", "real_time",
            "cpu_time", "time_unit", "error_occurred", "error_message", "label",
            "aggregate_name", "aggregate_unit", "skipped", "skip_message"}
STATS = (("mean", statistics.mean, "time"), ("median", statistics.median, "time"),
         ("stddev", statistics.stdev, "time"), ("cv", None, "percentage"))


def _value(stat, fn, xs):
    """One statistic of xs; a cv of values whose mean is 0 is undefined (None, where Google
    Benchmark writes NaN)."""
    if len(xs) < 2 and stat in ("stddev", "cv"):
        return 0.0
    if stat == "cv":
        m = statistics.mean(xs)
        return statistics.stdev(xs) / m if m else None
    return fn(xs)


def aggregates(entries):
    """The aggregate entries of one row's iteration entries (those without an error)."""
    ok = [e for e in entries if not e.get("error_occurred")]
    if not ok:
        return []
    first = ok[0]
    counters = [k for k, v in first.items() if k not in STANDARD
                and isinstance(v, (int, float)) and not isinstance(v, bool)]
    out = []
    for stat, fn, unit in STATS:
        # The label too, as Google Benchmark's own aggregates carry the row's: the charts read
        # it from the median (copy-mode points are drawn hollow).
        agg = {k: first[k] for k in ("family_index", "per_family_instance_index", "run_name",
                                     "threads", "time_unit", "label") if k in first}
        agg.update(name=f"{first['run_name']}_{stat}", run_type="aggregate",
                   repetitions=len(entries), aggregate_name=stat, aggregate_unit=unit,
                   iterations=len(ok))
        for k in ("real_time", "cpu_time", *counters):
            agg[k] = _value(stat, fn, [e[k] for e in ok if k in e])
        out.append(agg)
    return out


def merge(first, second):
    """first's document (a dict as read from --benchmark_out) with second's repetitions
    added; either may be None."""
    if not second:
        return first
    if not first:
        return second
    rows = {}  # run name -> its iteration entries, in first-seen order
    for doc in (first, second):
        offset = {name: len(es) for name, es in rows.items()}
        for b in doc.get("benchmarks", []):
            if b.get("run_type") == "aggregate":
                continue
            name = b.get("run_name", b["name"])
            # The second invocation's repetitions follow the first's of the same row.
            rows.setdefault(name, []).append(
                dict(b, repetition_index=offset.get(name, 0) + b.get("repetition_index", 0)))
    merged = []
    for entries in rows.values():
        for e in entries:
            e["repetitions"] = len(entries)
        merged += entries + aggregates(entries)
    return dict(first, benchmarks=merged)


# The counters switch-bench adds with SWITCH_BENCH_STAMPS (bench/bench_stamp.h): when each run
# of a row took place, read by the switch step and removed before anything else sees the rows.
STAMPS = ("host_t0_s", "host_t1_s")


def set_aside(doc, held, keep=3):
    """(doc, listed): doc's repetitions for which held(entry) is true taken out and each row's
    aggregates computed again over the rest, unless fewer than `keep` would be left (the row
    then keeps them all); the STAMPS counters dropped from every entry. listed: every held
    repetition, {"row", "repetition_index", "real_time", "kept"}. The choice is held()'s
    alone (the host's pace over the repetition, never its time), so what is left is a fair
    sample of the row, only smaller."""
    rows = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") != "aggregate":
            rows.setdefault(b.get("run_name", b["name"]), []).append(b)
    out, listed = [], []
    for name, entries in rows.items():
        bad = [e for e in entries if held(e)]
        kept = len(entries) - len(bad) < keep
        listed += [{"row": name, "repetition_index": e.get("repetition_index"),
                    "real_time": e.get("real_time"), "kept": kept} for e in bad]
        rest = [{k: v for k, v in e.items() if k not in STAMPS} for e in entries
                if kept or e not in bad]
        for e in rest:
            e["repetitions"] = len(rest)
        out += rest + aggregates(rest)
    return dict(doc, benchmarks=out), listed


def from_blocks(names, per_block, iterations, counters):
    """Iteration and aggregate entries of rows `names` measured in blocks: per_block[b][i] is
    row i's ns per unit in block b, every row ran once per block (so block b is repetition b
    of every row, as in a pass of --benchmark_enable_random_interleaving); counters[i] holds
    row i's user counters."""
    out = []
    for i, name in enumerate(names):
        entries = [dict(counters[i], name=name, run_name=name, run_type="iteration",
                        family_index=0, per_family_instance_index=i, threads=1,
                        repetitions=len(per_block), repetition_index=b, iterations=iterations,
                        real_time=row[i], cpu_time=row[i], time_unit="ns")
                   for b, row in enumerate(per_block)]
        out += entries + aggregates(entries)
    return out
