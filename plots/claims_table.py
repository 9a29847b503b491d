"""The claims in REPORT.md and verdicts.json: the table of verdicts with the figure nearest a
threshold, then one section per claim (the claim and its source, the quoted figures, what
was measured, the figures the rule read with their intervals, the verdict with its rule, the
claim's charts); `verdicts_doc` is the same verdicts as JSON."""
import claims
import figures as F
import verdict as V
from reference import figure_table


def deciding(r):
    """The figure nearest a threshold its rule compared, as value [low, high] (n) vs the
    threshold; for an inconclusive verdict the first threshold straddled."""
    test = (r.get("straddled") or [None])[0] or r.get("margin")
    if not test:
        return ""
    fig = F.by_name(r["figures"]).get(test["figure"])
    return (f"{test['figure']}: {F.fmt_with_interval(fig)} vs {V.num(test['threshold'])}"
            if fig else "")


def verdict_table(results, ref_results=None):
    head = "| claim | verdict | deciding figure, 95% interval (n) vs threshold |"
    line = "|---|---|---|"
    if ref_results is not None:
        head, line = head + " reference |", line + "---|"
    out = ["## Verdicts", "",
           "The deciding figure is the one nearest a threshold of the claim's rule among the "
           "comparisons its interval settles (for an inconclusive verdict, the threshold its "
           "interval straddles); `at most this` or `at least this` marks a bound read against "
           "a client-bound peak, `exact` a "
           "deterministic count, `n=1, no interval` a figure measured once.", "", head, line]
    for c in claims.CLAIMS:
        r = results[c.ID]
        row = f"| [{c.ID}](#{c.ID.lower()}) | {r['verdict']} | {deciding(r)} |"
        if ref_results is not None:
            row += f" {ref_results[c.ID]['verdict']} |"
        out.append(row)
    return out + [""]


def claim_section(claim, r, ref_r, run):
    lines = [f"## {claim.ID}", "", f"**Claim** ({claim.SOURCE}): {claim.CLAIM}", "",
             f"**Quoted:** {claim.QUOTED}", "", "**Measured:**", ""]
    lines += r["measured"] + [""]
    lines += figure_table(r["figures"], ref_r["figures"] if ref_r else None)
    lines += [f"**Verdict: {r['verdict']}** (rule: {r['rule']})", ""]
    if V.why(r):
        lines += [f"- {V.why(r)}", ""]
    for c in claim.CHARTS:
        if (run.dir / f"{c}.png").exists():
            lines += [f"![{c}]({c}.png)", ""]
    return lines


def claim_sections(run, results, ref_results=None):
    out = []
    for claim in claims.CLAIMS:
        out += claim_section(claim, results[claim.ID],
                             ref_results[claim.ID] if ref_results else None, run)
    return out


def figure_doc(fig):
    return {"name": fig["name"], "value": fig["value"], "low": fig["low"], "high": fig["high"],
            "n": fig["n"], "unit": fig["unit"], "exact": fig["exact"], "source": fig["source"],
            "bound": fig.get("bound")}


def test_doc(test):
    return {"figure": test["figure"], "op": test["op"], "threshold": test["threshold"],
            "outcome": test["outcome"], "basis": test["basis"], "bound": test.get("bound")}


def noise_doc(entry):
    """A deciding ratio beside its A/A interval: apart (True), overlapping (False, the verdict
    is then inconclusive) or not comparable (None)."""
    return {"figure": entry["figure"], "value": entry["value"], "low": entry["low"],
            "high": entry["high"], "aa": figure_doc(entry["aa"]), "apart": entry["apart"]}


def verdicts_doc(run, results):
    """verdicts.json: per claim its verdict, rule, deciding figures with intervals, the
    thresholds they were compared with, the margin and what an inconclusive verdict
    straddles (every field: results/README.md)."""
    out = []
    for c in claims.CLAIMS:
        r = results[c.ID]
        out.append({
            "id": c.ID, "verdict": r["verdict"], "possible": r["possible"], "rule": r["rule"],
            "quoted": c.QUOTED,
            "figures": [figure_doc(f) for f in r["figures"] if f.get("decides")],
            "thresholds": r["thresholds"],
            "comparisons": [test_doc(t) for t in r["tests"]],
            "margin": r["margin"],
            "straddled": [test_doc(t) for t in r["straddled"]],
            "single_sample": r["single_sample"]})
        if r.get("noise_floor"):
            # Only where the run recorded A/A pairs: older runs' files keep their shape.
            out[-1]["noise_floor"] = [noise_doc(e) for e in r["noise_floor"]]
    return {"experiment": "verdicts", "meta": run.meta(), "level": F.LEVEL,
            "single_margin": F.SINGLE_MARGIN, "claims": out}
