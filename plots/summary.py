"""The report's first screen: the machine in one line and one row per claim (the claim in a
dozen words, what was quoted, what was measured with its interval, the verdict, one sentence
of why and, for an open verdict, what would decide it on this machine); with a reference run,
its verdict and, where the two differ, why: within noise, beyond noise, a reduced scope (this
run's preset did not measure what decided the reference) or a machine limit. The noise
reading is compare's own (plots/compare_diff.py: claim_rows, claim_change), not restated here."""
import claims
import compare_diff
import data as D
import figures as F
import verdict as V
from reference import fig_text
from formatting import threshold_text

GLANCE = "**At a glance:**"  # every verdict in one line, before the table
# Words of a not-run reason that name this machine, not the run's size, as what stopped it.
LIMIT_WORDS = ("not measurable", "core", "limit", "fd_setsize", "rlimit", "memory", "pid_max")


def machine_in_one_line(run, reference=None):
    suite = run.get("suite") or {}
    line = f"**Machine:** {D.machine_line(run)}; preset `{suite.get('preset', '?')}`."
    if reference is not None:
        line += (f" Reference column: `results/reference` ({reference.meta().get('cpu_model')}"
                 f", preset `{(reference.get('suite') or {}).get('preset', '?')}`).")
    return line


def deciding_test(r):
    """The comparison that decided (or, inconclusive, kept open) the verdict: the first
    straddled one, else the one nearest its threshold (the margin)."""
    if r["straddled"]:
        return r["straddled"][0]
    m = r.get("margin")
    if not m:
        return None
    return next((t for t in r["tests"] if t["figure"] == m["figure"]
                 and t["threshold"] == m["threshold"]), None)


def measured(r):
    t = deciding_test(r)
    fig = F.by_name(r["figures"]).get(t["figure"]) if t else None
    return f"{t['figure']}: {fig_text(fig)}" if fig else "-"


def first_sentence(text):
    return text.split(". ")[0].rstrip(".") + "."


def why(r):
    """One sentence: which side of its threshold the deciding figure's interval lies, or
    what stopped the verdict."""
    if r["verdict"] == V.NOTRUN:
        stop = r.get("not_run") or {}
        reason = first_sentence(stop.get("reason") or "nothing to read")
        # No step missing: its steps ran, and what stopped the verdict is the claim's own.
        return reason if stop.get("steps") or not stop else f"Its steps ran, but {reason}"
    t = deciding_test(r)
    if t is None:
        return "-"
    rule = f"{t['op']} {threshold_text(t['threshold'])}"
    if t["outcome"] == "straddles":
        return V.straddle_reason(t, rule)
    side = "is" if t["outcome"] == "yes" else "is not"
    return (f"Its whole interval {side} {rule}"
            + (f" ({t['bound']} this)." if t.get("bound") else "."))


def to_decide(r):
    """What would decide an open verdict here, in a few words (claims_table.would_decide
    says it in full under the claim)."""
    if r["verdict"] == V.NOTRUN:
        stop = r.get("not_run") or {}
        reason = stop.get("reason") or ""
        return (stop.get("lift") or reason.split("What would measure it: ", 1)[-1]
                if stop.get("lift") or "What would measure it: " in reason else "-")
    opened = r.get("open") or []
    if r["verdict"] != V.INCONCLUSIVE or not opened:
        return "-"
    return "; ".join(f"{e['figure']}: {V.short_open(e)}" for e in opened[:2]) + \
        (f" (+{len(opened) - 2} more)" if len(opened) > 2 else "")


def missing_deciders(r, ref_r):
    """The figures that decided the reference's verdict which this run did not measure."""
    mine = F.by_name(r["figures"])
    return [f["name"] for f in ref_r["figures"] if f.get("decides") and f["name"] not in mine]


def reduced(run):
    return (run.get("suite") or {}).get("preset") not in (None, "full")


def against(r, ref_r, run):
    """The reference cell: its verdict, and when it differs from this run's, why."""
    va, vb = ref_r["verdict"], r["verdict"]
    gone = missing_deciders(r, ref_r) if reduced(run) else []
    scope = (f"reduced scope: the `{(run.get('suite') or {}).get('preset')}` preset did not "
             f"measure {gone[0]}" + (f" (+{len(gone) - 1} more)" if len(gone) > 1 else "")
             if gone else "")
    if va == vb:
        return va + (f"; same verdict on a {scope}" if scope else "")
    if V.NOTRUN in (va, vb):
        out = r if vb == V.NOTRUN else ref_r
        stop = ((out.get("not_run") or {}).get("reason")
                or " ".join(out.get("measured") or [])[:200].lstrip("- "))
        which = "here" if vb == V.NOTRUN else "in the reference"
        if any(w in stop.lower() for w in LIMIT_WORDS):
            return f"{va}: machine limit ({which}: {stop})"
        return f"{va}: " + (scope or f"not run {which}" + (f" ({stop})" if stop else ""))
    if scope:
        return f"{va}: {scope}"
    rows = compare_diff.claim_rows(ref_r["figures"], r["figures"])
    reading, moved = compare_diff.claim_change(va, vb, rows, ref_r.get("tests"), r.get("tests"))
    bound = [f["name"] for f in r["figures"] if f.get("decides") and f.get("bound")]
    text = {compare_diff.CHANGED_BEYOND: "beyond noise",
            compare_diff.CHANGED_WITHIN: "within noise",
            compare_diff.CHANGED_UNKNOWN: "noise unknown",
            compare_diff.CHANGED_MISSING: "measured in one run only"}[reading]
    if moved:
        text += f" ({moved[0]}" + (f", +{len(moved) - 1} more" if len(moved) > 1 else "") + ")"
    if bound and reading != compare_diff.CHANGED_BEYOND:
        text += "; machine limit: read against a client-bound peak"
    return f"{va}: {text}"


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def summary_section(run, results, ref_results=None, reference=None):
    """The summary's Markdown lines: heading, machine line, the table of every claim."""
    head = ("| claim | in brief | quoted | measured (95% interval, n) | verdict | why | what "
            "would decide it here |")
    rule = "|---|---|---|---|---|---|---|"
    if ref_results is not None:
        head, rule = head + " reference |", rule + "---|"
    glance = ", ".join(f"{c.ID} {results[c.ID]['verdict']}" for c in claims.CLAIMS)
    out = ["## Summary", "", machine_in_one_line(run, reference), "",
           f"{GLANCE} {glance}.", "", head, rule]
    for c in claims.CLAIMS:
        r = results[c.ID]
        row = [f"[{c.ID}](#{c.ID.lower()})", getattr(c, "BRIEF", c.CLAIM), c.QUOTED,
               measured(r), r["verdict"], why(r), to_decide(r)]
        if ref_results is not None:
            row.append(against(r, ref_results[c.ID], run))
        out.append("| " + " | ".join(cell(x) for x in row) + " |")
    return out + ["", "Each claim's details, rule and deciding figures follow. How every rule "
                  "reads its thresholds" + V.INTERVALS.replace(";", ":", 1) + ".", ""]
