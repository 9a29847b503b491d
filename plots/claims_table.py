"""The claims in REPORT.md and verdicts.json (the summary table above them: plots/summary.py):
one section per claim (the claim and its source, the quoted figures, what
was measured, the figures the rule read with their intervals, the verdict with its rule, the
claim's charts); `verdicts_doc` is the same verdicts as JSON. An inconclusive or not-run
verdict says, in its section, in the summary (in a few words) and in verdicts.json, what would
decide it on this machine (`would_decide`): per open comparison the rounds the measured noise
needs (verdict.open_entry), or what stopped it and what would lift it (`not_run_of`)."""
import functools

import claims
import figures as F
import verdict as V
from harness_api import experiments
from reference import figure_table


@functools.lru_cache(maxsize=None)
def feeds():
    """{claim id: [step, ...]}: the steps (experiments) that feed each claim, as the
    experiments declare them (harness/experiments/)."""
    out = {}
    for exp in experiments.load():
        for cid in exp.claims:
            out.setdefault(cid, []).append(exp.name)
    return out


def claim_section(claim, r, ref_r, run):
    lines = [f"## {claim.ID}", "", f"**Claim** ({claim.SOURCE}): {claim.CLAIM}", "",
             f"**Quoted:** {claim.QUOTED}", "", "**Measured:**", ""]
    lines += r["measured"] + [""]
    lines += figure_table(r["figures"], ref_r["figures"] if ref_r else None)
    lines += [f"**Verdict: {r['verdict']}** (rule: {r['rule']})", ""]
    annotate(run, {claim.ID: r})
    said = [x for x in (V.why(r), would_decide(r)) if x]
    if said:
        lines += [f"- {x}" for x in said] + [""]
    for c in claim.CHARTS:
        if (run.dir / f"{c}.png").exists():
            lines += [f"![{c}]({c}.png)", ""]
    return lines


FIGURE_COLUMNS = ("claim", "figure", "decides", "value", "low", "high", "n", "unit", "exact",
                  "bound", "source")


def figure_rows(results):
    """figures.csv: every figure every rule read, one row each (REPORT.md shows the ones
    each rule compared with its thresholds)."""
    for cid, r in results.items():
        for f in r["figures"]:
            yield {"claim": cid, "figure": f["name"], "decides": bool(f.get("decides")),
                   **{k: f.get(k) for k in FIGURE_COLUMNS[3:]}}


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


def open_doc(e):
    """An open comparison (verdict.open_entry) as verdicts.json keeps it."""
    return {k: e[k] for k in ("figure", "value", "low", "high", "n", "op", "threshold",
                              "basis", "bound", "noise_floor", "needs", "rounds",
                              "half_width", "distance", "text")}


def verdicts_doc(run, results):
    """verdicts.json: per claim its verdict, rule, deciding figures with intervals, the
    thresholds they were compared with, the margin, what an inconclusive verdict straddles
    and what would decide it, what stopped a verdict that did not run (every field:
    results/README.md)."""
    out = []
    annotate(run, results)
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
            "single_sample": r["single_sample"],
            "open": [open_doc(e) for e in r.get("open") or []],
            "not_run": r.get("not_run"),
            "would_decide": would_decide(r) or None})
        if r.get("noise_floor"):
            # Only where the run recorded A/A pairs: older runs' files keep their shape.
            out[-1]["noise_floor"] = [noise_doc(e) for e in r["noise_floor"]]
    return {"experiment": "verdicts", "meta": run.meta(), "level": F.LEVEL,
            "single_margin": F.SINGLE_MARGIN, "claims": out}


# ---- what stopped a verdict that did not run ----------------------------------------------------

# The words of a claim's measured line that say why it could not be judged.
STOP_WORDS = ("not run", "not measurable", "not in the run folder", "failed",
              "do not have what the rule reads", "no data")


def lift_of(reason):
    """What would lift a stop, from its words; "" when the reason already says it."""
    low = reason.lower()
    if "over budget" in low:
        return "a larger time budget for the step (the full preset's) would run it"
    if "quick preset" in low:
        return "" if "full preset" in low else "the full preset runs it"
    if "not in the run folder" in low:
        return "a run that includes the step would (`./run.sh full` runs every step)"
    if "do not have what the rule reads" in low:
        return "running the step again with this version of the harness would"
    if "would" in low:
        return ""  # the claim's own line says what would measure it
    if "failed" in low or low.startswith("exit"):
        return "a run in which the step succeeds would (suite.log has its output)"
    return ""


def step_status(step, status):
    """A step's status as the report says it: as recorded, "not run: not run in ..." once."""
    status = str(status)
    if status.startswith("not run: not run"):
        status = status[len("not run: "):]
    return f"step `{step}` {status}" if status.startswith(("not run", "failed")) else \
        f"step `{step}`: {status}"


def not_run_of(r, steps=()):
    """{"reason", "lift", "steps"} of a `not run` verdict (None for any other): steps, the
    (step, status) pairs of the experiments feeding the claim whose data the run lacks, as
    recorded (a status such as "not run: over budget (predicted N s)" as is); without any,
    the claim's own lines that say why (its first line when none does)."""
    if r["verdict"] != V.NOTRUN:
        return None
    steps = [(s, str(st)) for s, st in steps]
    if steps:
        reason = "; ".join(step_status(s, st) for s, st in steps)
    else:
        lines = [ln.strip().lstrip("- ").strip() for ln in r.get("measured") or []]
        said = [ln for ln in lines if any(w in ln.lower() for w in STOP_WORDS)]
        reason = "; ".join(said or lines[:1]) or "the rule found nothing to read (no data)"
    return {"reason": reason, "lift": lift_of(reason),
            "steps": [{"step": s, "status": st} for s, st in steps]}


def stopped_steps(run, r, cid):
    """(step, status) of the experiments feeding claim cid whose data the run lacks (those
    the claim's lines name, when they name any): the status suite.json recorded for the step
    (as is) when it is not ok, else why the run has no data for it."""
    if run is None:
        return []
    steps = (run.get("suite") or {}).get("steps") or {}
    missing = [s for s in feeds().get(cid, []) if run.get(s) is None]
    said = "\n".join(r.get("measured") or [])
    named = [s for s in missing if run.why(s) in said]
    out = []
    for name in named or missing:
        st = (steps.get(name) or {}).get("status")
        out.append((name, st if st and st != "ok" else run.why(name)))
    return out


def annotate(run, results):
    """Sets each not-run result's `not_run` (what stopped it, from the run's steps); a result
    that has it already keeps it."""
    for cid, r in results.items():
        if r["verdict"] == V.NOTRUN and not r.get("not_run"):
            r["not_run"] = not_run_of(r, stopped_steps(run, r, cid))
    return results


def would_decide(r):
    """The line under an inconclusive or not-run verdict: per comparison that kept it open,
    what would decide it on this machine; for not run, what stopped it and what would lift
    it. "" for a decided verdict."""
    if r["verdict"] == V.NOTRUN:
        stop = r.get("not_run") or not_run_of(r)
        return (f"not run: {stop['reason']}"
                + (f"; what would lift it: {stop['lift']}" if stop["lift"] else ""))
    if r["verdict"] == V.INCONCLUSIVE and r.get("open"):
        return "what would decide it: " + "; ".join(e["text"] for e in r["open"])
    return ""


def would_decide_short(r):
    """The same in a few words, for a table cell."""
    if r["verdict"] == V.NOTRUN:
        return "not run: see the claim's section"
    if r["verdict"] == V.INCONCLUSIVE and r.get("open"):
        return V.short_open(r["open"][0]) + (f" (+{len(r['open']) - 1} more below)"
                                          if len(r["open"]) > 1 else "")
    return ""
