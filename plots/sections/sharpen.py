"""What a full run may sharpen: for a run at reduced size, per claim, the steps its figures
come from and what the full preset runs differently there."""
import figures as F
from verdict import NOTRUN


def preset_text(v):
    """A step's preset as one table cell: command-line arguments joined, a dict as `key value`
    pairs (an empty value: every row), with `|` escaped for the Markdown table."""
    if isinstance(v, list):
        text = " ".join(str(x) for x in v)
    elif isinstance(v, dict):
        text = ", ".join(f"{k} {x if x != '' else '(all rows)'}" for k, x in v.items())
    else:
        text = str(v)
    return text.replace("|", "\\|")


REPEAT_FLAGS = ("--rounds", "--repeat", "--repetitions")
# Words of a not-run reason that name a limit of the machine, which no preset lifts.
MACHINE_WORDS = ("not measurable here", "at least four cores", "fd_setsize", "rlimit")


def repetitions(v):
    """The repetitions (rounds) a step's preset asks for, or None when it names none."""
    if isinstance(v, dict):
        n = v.get("repetitions")
        return n if isinstance(n, int) else None
    args = [str(x) for x in v] if isinstance(v, list) else []
    found = [int(args[i + 1]) for i, a in enumerate(args[:-1])
             if a in REPEAT_FLAGS and args[i + 1].isdigit()]
    return max(found) if found else None


def timing_text(srcs, mine, full):
    """What the full preset changes for timings: more repetitions only where it runs more."""
    more = [(s, repetitions(mine.get(s)), repetitions(full[s])) for s in srcs if s in full]
    more = [(s, a, b) for s, a, b in more if a and b and b > a]
    if more:
        return "more repetitions (" + ", ".join(f"{s}: {b} instead of {a}" for s, a, b in more) \
            + ") narrow the noise bands of its timings"
    return "the same repetitions; longer or larger points may narrow its timings' noise"


def sharpen_section(run, results):
    """For a run at reduced size: per claim, the steps its figures come from and what the full
    preset runs differently there, from the presets suite.json records."""
    suite = run.get("suite") or {}
    preset = suite.get("preset")
    if not suite or preset == "full":
        return []
    mine, full = suite.get("presets") or {}, suite.get("full_presets") or {}
    out = ["## What a full run may sharpen", "",
           f"This run used the `{preset}` preset: the same experiments and verdict rules as "
           "`./run.sh full`, at smaller sizes. A verdict whose figures lie near a threshold of "
           "its rule may change with the full preset's longer points (and more repetitions "
           "where it runs more); exact counts (instructions, syscalls, epoll_ctl per request) "
           "do not, nor does a limit of this machine.", "",
           "| claim | verdict | figures from | the full preset runs |", "|---|---|---|---|"]
    for cid, r in results.items():
        srcs = []
        for f in r["figures"]:
            if f.get("source") and f["source"] not in srcs:
                srcs.append(f["source"])
        kinds = {f["kind"] for f in r["figures"]}
        diffs = [f"{src}: `{preset_text(full[src])}` (here `{preset_text(mine.get(src))}`)"
                 for src in srcs if src in full and mine.get(src) != full[src]]
        if r["verdict"] == NOTRUN:
            # What stopped it, as the verdict's note says it (claims_table.annotate).
            why = (r.get("not_run") or {}).get("reason") or \
                (r["measured"][0].lstrip("- ") if r["measured"] else "no data")
            change = (f"the same: a limit of this machine, which no preset lifts ({why})"
                      if any(w in why.lower() for w in MACHINE_WORDS)
                      else f"may reach a verdict where this run did not ({why})")
        elif diffs:
            why = []
            if F.TIMING in kinds:
                why.append(timing_text(srcs, mine, full))
            if F.ONCE in kinds:
                why.append("its single-sample figures come from longer points or more levels")
            change = "; ".join(diffs) + ": " + ("; ".join(why) or
                                                "its figures are exact counts, which the size "
                                                "does not change")
        elif not srcs:
            change = "unknown (its rule names no sources)"
        elif not full:
            change = "unknown (this run's suite.json does not record the full preset)"
        elif kinds == {F.EXACT}:
            change = "the same: exact counts at the same size"
        else:
            change = "the same sizes"
        out.append(f"| {cid} | {r['verdict']} | {', '.join(srcs) or '?'} | {change} |")
    return out + [""]
