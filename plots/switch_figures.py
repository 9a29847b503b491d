"""Figures read from switch-bench's rows (switch.json): one row's timing with its repetitions
as samples, and the ratio of two rows paired by repetition. The claims on switching, syscalls
and scheduling (C1, C4, C5, C9, C12, C14) and the switch chart read them from here."""
import data as D
import figures as F


def switch_fig(run, row, name=None):
    """A timing figure for one switch-bench row, with its repetitions as samples."""
    doc = run.get("switch")
    entry = D.bench_rows(doc).get(row)
    if entry is None:
        return None
    return F.timing(name or row, D.ns(entry), "ns", "switch",
                    samples=D.bench_samples(doc).get(row),
                    spread=D.bench_spread(doc).get(row))


def rows_ratio(run, num_row, den_row, name):
    """A ratio of two switch-bench rows, paired by repetition (the repetitions are
    interleaved, so each pair ran back to back); None when a row is missing."""
    doc = run.get("switch")
    rows = D.bench_rows(doc)
    if num_row not in rows or den_row not in rows:
        return None
    per_rep = D.paired_reps(doc, num_row, den_row)
    if per_rep:
        return F.paired(name, per_rep, "x", "switch")
    a, b = D.ns(rows[num_row]), D.ns(rows[den_row])
    return F.timing(name, a / b if a and b else None, "x", "switch")
