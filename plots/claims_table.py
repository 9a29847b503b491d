"""The claims in REPORT.md: the table of verdicts, then one section per claim (the claim and
its source, the quoted figures, what was measured, the figures the rule read, the verdict
with its rule, the claim's charts)."""
import claims
from reference import figure_table


def verdict_table(results, ref_results=None):
    if ref_results is None:
        return (["## Verdicts", "", "| claim | verdict |", "|---|---|"]
                + [f"| [{c.ID}](#{c.ID.lower()}) | {results[c.ID]['verdict']} |"
                   for c in claims.CLAIMS] + [""])
    return (["## Verdicts", "", "| claim | verdict | reference |", "|---|---|---|"]
            + [f"| [{c.ID}](#{c.ID.lower()}) | {results[c.ID]['verdict']} | "
               f"{ref_results[c.ID]['verdict']} |" for c in claims.CLAIMS] + [""])


def claim_section(claim, r, ref_r, run):
    lines = [f"## {claim.ID}", "", f"**Claim** ({claim.SOURCE}): {claim.CLAIM}", "",
             f"**Quoted:** {claim.QUOTED}", "", "**Measured:**", ""]
    lines += r["measured"] + [""]
    lines += figure_table(r["figures"], ref_r["figures"] if ref_r else None)
    lines += [f"**Verdict: {r['verdict']}** (rule: {r['rule']})", ""]
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
