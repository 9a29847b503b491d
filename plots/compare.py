#!/usr/bin/python3
"""compare.py - two run folders side by side: every claim's figures, B/A, verdict changes.

    /usr/bin/python3 plots/compare.py A B [--out DIR] [--runs-root DIR] [--fail-on-verdict-change]
                                          [--no-charts]

A and B are run folders (results/runs/<host>/<run>/ or results/reference). Writes into DIR
(default results/compare/<A>-vs-<B>/): COMPARE.md (both machines, the verdicts of both runs,
whether each changed and whether its deciding figures moved beyond the noise, then per claim
every figure its rule reads, A beside B with B/A and how to read the difference),
compare.csv (every numeric field of every JSON file both runs have, paired, with B/A) and
overlay charts of the main figures (PNG and SVG).

The figures and verdicts come from the claims' own rules (plots/claims/) applied to each
run (no rule is restated here), so a claim added to the list is compared without code here.
A figure with repeated samples in both runs is tested as Google Benchmark's compare.py does,
with a two-sided Mann-Whitney U test (alpha 0.05, harness/stats.py), together with its 95%
intervals: `beyond noise` when the test rejects and the intervals are apart, `within noise`
when neither, `unclear` when they disagree (3 samples a side can never reach p < 0.05).
Closer than the run-to-run band (figures.run_band: the effect floor, or the band learned from
the machine's other runs under --runs-root, default results/runs, when wider) a difference is
`within run-to-run noise`, whatever the test says.
Exact counts (instructions, syscalls and epoll_ctl per request) are compared for equality.
A figure measured once has no noise band of its own. A changed verdict is "verdict changed
beyond noise" when a figure its rule compared with a threshold moved beyond the noise (or an
exact count differs), "verdict changed, figures within noise" when none did.

Exit status: 0, or 1 with --fail-on-verdict-change when some verdict differs; 2 for usage
errors and for a missing or malformed run folder (one line on stderr).
"""
import csv
import json
import sys
from pathlib import Path

import claims
import data as D
import export as X
import figures as F
from harness_api import meta  # the CPU model's words, as history.py groups runs
from sections import peers
from sections.machine import machine_section
from formatting import figure_with_interval

ROOT = Path(__file__).resolve().parent.parent
RUNS_ROOT = ROOT / "results" / "runs"
USAGE = ("usage: compare.py A B [--out DIR] [--runs-root DIR] [--fail-on-verdict-change] "
         "[--no-charts]")
# The band is learned from the most recent runs only: it follows the machine as it is now, and
# each run costs about a second to evaluate.
BAND_MAX_RUNS = 20


class BadFolder(Exception):
    pass


def load(folder):
    """D.Run for a run folder, or BadFolder saying in one line why it is not one."""
    d = Path(folder)
    why = D.folder_problem(d)
    if why:
        raise BadFolder(why)
    for path in sorted(d.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise BadFolder(f"{path}: not valid JSON ({e})")
        if not isinstance(doc, dict):
            raise BadFolder(f"{path}: malformed (the top level is not an object)")
    run = D.Run(d)
    if run.problem():
        raise BadFolder(run.problem())
    if not run.data:
        raise BadFolder(f"{folder}: not a run folder (no experiment JSON: "
                        f"{', '.join(n + '.json' for n in D.EXPERIMENTS)})")
    return run


def label(run):
    return run.dir.resolve().name


def ratio_text(r):
    return "n/a" if r is None else f"{r:.3g}"


def claim_rows(fa, fb, section="", learned=None):
    """[(name, figure A, figure B, B/A, class, reading, band)] over the union of the figure
    names (figures.differ's class and reading; band: figures.run_band of the figure in the runs
    learned from, {(section, name): [(value, its interval's relative half-width), ...]})."""
    a, b = F.by_name(fa), F.by_name(fb)
    rows = []
    for name in F.names(fa, fb):
        seen = (learned or {}).get((section, name), [])
        band = F.run_band([v for v, _ in seen], [h for _, h in seen if h is not None])
        rows.append((name, a.get(name), b.get(name), *F.differ(a.get(name), b.get(name), band),
                     band))
    return rows


def machine(run):
    return meta.model_words(run.meta().get("cpu_model"))


def run_figures(run):
    """((section, name), figure) of every claim's figures and the peers' in one run."""
    for cid, res in claims.evaluate(run, True).items():
        yield from (((cid, n), f) for n, f in F.by_name(res["figures"]).items())
    try:
        peer_figs = peers.figures(run)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError):
        peer_figs = []
    yield from ((("Peers", n), f) for n, f in F.by_name(peer_figs).items())


def learn(ra, rb, root):
    """({(section, name): [(value, its interval's half-width over it, or None) per run]}, a
    line saying where from): the figures but exact counts of the finished suite runs under root
    (suite.json records the report step, its last) of A's and B's CPU model (and preset when
    they share one), the BAND_MAX_RUNS most recent, A and B left out: they must not widen the
    band they are judged by."""
    where = f"`{root}`"
    if machine(ra) != machine(rb):
        return {}, (f"none: A and B ran on different CPU models, so no run-to-run band is "
                    f"learned (under {where}) and the floor alone applies")
    own = {ra.dir.resolve(), rb.dir.resolve()}
    kinds = {(r.get("suite") or {}).get("preset") for r in (ra, rb)}
    runs = []
    for path in sorted(Path(root).rglob("suite.json")) if Path(root).is_dir() else []:
        run = D.Run(path.parent) if path.parent.resolve() not in own else None
        suite = run and run.get("suite") or {}
        if "report" in suite.get("steps", {}) and machine(run) == machine(ra) \
                and (len(kinds) > 1 or suite.get("preset") in kinds):
            runs.append(run)
    runs = sorted(runs, key=lambda r: (r.meta().get("date", ""), str(r.dir)))[-BAND_MAX_RUNS:]
    values = {}
    for run in runs:
        for key, fig in run_figures(run):
            v, low, high = fig.get("value"), fig.get("low"), fig.get("high")
            if not fig.get("exact") and v is not None:
                half = (high - low) / 2 / abs(v) if v and low is not None else None
                values.setdefault(key, []).append((v, half))
    model = ra.meta().get("cpu_model", "an unknown CPU")
    which = f"the {next(iter(kinds))} preset" if len(kinds) == 1 and None not in kinds \
        else "any preset"
    return values, (f"{len(runs)} other run(s) of {model}, {which}, under {where} (the "
                    f"{BAND_MAX_RUNS} most recent at most; A and B left out)")


UNCHANGED = "unchanged"
CHANGED_BEYOND = "verdict changed beyond noise"
CHANGED_WITHIN = "verdict changed, figures within noise"
CHANGED_UNKNOWN = "verdict changed, noise unknown"
CHANGED_MISSING = "verdict changed, a deciding figure measured in one run only"


def claim_change(va, vb, rows):
    """(reading, [deciding figures that moved]) of one claim: whether a changed verdict
    follows a change beyond the noise of the figures its rule compared with thresholds (in
    either run; every figure when neither rule compared one)."""
    if va == vb:
        return UNCHANGED, []
    deciding = [r for r in rows if (r[1] or {}).get("decides") or (r[2] or {}).get("decides")]
    deciding = deciding or rows
    moved = [r[0] for r in deciding if r[4] in (F.BEYOND, "exact differs")]
    if moved:
        return CHANGED_BEYOND, moved
    if any(r[4] == "one side only" for r in deciding):
        return CHANGED_MISSING, [r[0] for r in deciding if r[4] == "one side only"]
    if any(r[4] == F.UNKNOWN for r in deciding):
        return CHANGED_UNKNOWN, [r[0] for r in deciding if r[4] == F.UNKNOWN]
    return CHANGED_WITHIN, []


def machine_block(run, which):
    lines = machine_section(run)
    return [f"### {which}: `{run.dir}`", ""] + lines[2:]


def band_text(cls, band):
    return "exact" if cls.startswith("exact") else "" if cls == "one side only" else band["text"]


TABLE = ["| figure | A | B | B/A | reading | run-to-run band |", "|---|---|---|---|---|---|"]


def build(ra, rb, learned=({}, "none: no runs to learn from were looked for")):
    """(COMPARE.md lines, {claim: (verdict A, verdict B, reading)}, counts); learned: what
    learn() returns (without it, the floor alone applies)."""
    res_a, res_b = claims.evaluate(ra, True), claims.evaluate(rb, True)
    values, source = learned
    verdicts = {}
    counts = {"figures": 0, F.BEYOND: 0, F.WITHIN: 0, F.UNCLEAR: 0, F.RUN_TO_RUN: 0,
              "exact differs": 0, "exact same": 0, F.UNKNOWN: 0, "one side only": 0,
              "learned": 0}
    body = []
    for claim in claims.CLAIMS:
        cid = claim.ID
        va, vb = res_a[cid]["verdict"], res_b[cid]["verdict"]
        rows = claim_rows(res_a[cid]["figures"], res_b[cid]["figures"], cid, values)
        reading, moved = claim_change(va, vb, rows)
        verdicts[cid] = (va, vb, reading)
        body += [f"## {cid}", "", f"**Claim** ({claim.SOURCE}): {claim.CLAIM}", "",
                 f"**Verdict:** A {va}, B {vb} ({reading}"
                 + (f": {', '.join(moved)}" if moved else "") + ")", ""]
        if not rows:
            body += ["no figures in either run", ""]
            continue
        body += TABLE
        for name, fa, fb, ratio, cls, note, band in rows:
            counts["figures"] += 1
            counts[cls] += 1
            counts["learned"] += band["learned"] is not None and band_text(cls, band) != "exact"
            decides = (fa or {}).get("decides") or (fb or {}).get("decides")
            body.append(f"| {'**' + name + '**' if decides else name} | "
                        f"{figure_with_interval(fa)} | {figure_with_interval(fb)} | "
                        f"{ratio_text(ratio)} | {note} | {band_text(cls, band)} |")
        body.append("")
    # No claim reads the peers (peers.json): their figures, A beside B, after the claims'.
    prows = claim_rows(peers.figures(ra), peers.figures(rb), "Peers", values)
    if prows:
        body += ["## Peers", "", "The fiber server beside the runtimes a reader would pick "
                 "instead (peers.json; no verdict).", ""] + TABLE
        body += [f"| {name} | {figure_with_interval(fa)} | {figure_with_interval(fb)} | "
                 f"{ratio_text(ratio)} | {note} | {band_text(cls, band)} |"
                 for name, fa, fb, ratio, cls, note, band in prows]
        body.append("")
    changed = [cid for cid, (va, vb, _) in verdicts.items() if va != vb]
    beyond = [cid for cid, v in verdicts.items() if v[2] == CHANGED_BEYOND]
    lines = ["# Switchyard: two runs compared", "",
             "Generated by `plots/compare.py`; do not edit. Figures and verdicts come from the "
             "rules of the claims (`plots/claims/`) applied to each run.", "",
             f"- A: `{ra.dir}`", f"- B: `{rb.dir}`", "",
             "How to read a figure's row: B/A is B's value over A's; each side shows its value, "
             f"its {F.LEVEL:.0%} interval and n (samples). Where both runs kept repeated "
             "samples, a two-sided Mann-Whitney U test (as Google Benchmark's compare.py) and "
             f"the intervals decide: `beyond noise` when p < {F.ALPHA} and the intervals are "
             f"apart, `within noise` when p >= {F.ALPHA} and they overlap, `unclear` when the two "
             "disagree (with 3 samples a side p is never below 0.1). Those only know the noise "
             "inside each run, whose repetitions share the run's state (placement, caches, huge "
             "pages, leftovers), so a difference is `beyond noise` only when it also exceeds "
             "the figure's run-to-run band (last column): the effect floor of "
             f"{F.FLOOR:.0%} (what moves between two sittings of one CPU model: the regression "
             "gate's tolerance) or, when wider, the band learned from this machine's other "
             f"runs (at least {F.BAND_MIN_RUNS}: the largest of {F.BAND_SIGMAS:g} robust sigmas "
             "of the figure's value across them, its largest distance from their median and "
             "sqrt(2) x the median half-width of their own intervals). "
             "Two figures closer than the band (the larger of B/A and A/B, minus 1) are "
             "`within run-to-run noise` whatever the test says, a figure measured once "
             "included; one measured once and further apart has `noise unknown`. Exact counts "
             f"(rounded to {F.EXACT_DIGITS} decimals) are `same` or `differ`. In bold: the "
             "figures a rule compared with its thresholds; a changed verdict is `beyond noise` "
             "when one of them moved beyond the noise, `figures within noise` when none did.",
             "", f"Run-to-run bands learned from: {source}; {counts['learned']} of the "
             f"{counts['figures']} figures have one.", "",
             "## Verdicts", "", "| claim | A | B | changed | reading |", "|---|---|---|---|---|"]
    lines += [f"| [{cid}](#{cid.lower()}) | {va} | {vb} | {'**yes**' if va != vb else 'no'} | "
              f"{reading} |" for cid, (va, vb, reading) in verdicts.items()]
    lines += ["", f"{len(changed)} of {len(verdicts)} verdicts changed"
              + (f" ({', '.join(changed)})" if changed else "")
              + f", {len(beyond)} of them beyond noise"
              + (f" ({', '.join(beyond)})" if beyond else "") + "; of "
              f"{counts['figures']} figures, {counts[F.BEYOND]} moved beyond the noise, "
              f"{counts[F.WITHIN]} stayed within it, {counts[F.RUN_TO_RUN]} within run-to-run "
              f"noise, {counts[F.UNCLEAR]} are unclear, "
              f"{counts['exact differs']} exact counts differ and {counts['exact same']} are "
              f"the same, {counts[F.UNKNOWN]} have no noise band and {counts['one side only']} "
              "exist in one run only.", ""]
    lines += ["## Machines", ""] + machine_block(ra, "A") + machine_block(rb, "B")
    lines += body
    return lines, verdicts, counts


# ---- every measurement, paired ---------------------------------------------------------------

ID_FIELDS = ("name", "model", "mode", "conns", "engine", "kind", "variant", "round", "bar",
             "resource", "backend", "threads")


def measurements(doc):
    """{(record, field): number} of one JSON document, using plots/export.py's records. A
    record of a list is named by its identifying fields (model, mode, conns, ...) when it has
    them, so the same point of two runs pairs even when their lists differ in length."""
    out = {}
    for table, key, fields in X.records(doc):
        ident = [f"{k}={fields[k]}" for k in ID_FIELDS if k in fields]
        rec = f"{table}[{' '.join(ident)}]" if ident and key.isdigit() else \
            f"{table}[{key}]" if table else ""
        for field, v in fields.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and field not in ID_FIELDS:
                out.setdefault((rec, field), float(v))
    return out


def write_pairs(ra, rb, path):
    """compare.csv: one row per numeric field present in either run; returns the row count."""
    n = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "record", "field", "A", "B", "B/A"])
        names = sorted({p.name for p in ra.dir.glob("*.json")} |
                       {p.name for p in rb.dir.glob("*.json")})
        for name in names:
            ma, mb = ({} if not (r.dir / name).exists()
                      else measurements(json.loads((r.dir / name).read_text()))
                      for r in (ra, rb))
            for k in sorted(set(ma) | set(mb)):
                a, b = ma.get(k), mb.get(k)
                r = b / a if a not in (None, 0) and b is not None else ""
                w.writerow([name, k[0], k[1], "" if a is None else a, "" if b is None else b,
                            "" if r == "" else f"{r:.6g}"])
                n += 1
    return n


# ---- overlay charts --------------------------------------------------------------------------

def draw(ra, rb, out, values=None):
    """Overlay charts of the main figures; {stem: status}. values: the learned figures'
    values (learn()), for the run-to-run bands."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import charts.style as S
    status = {}
    la, lb = f"A: {label(ra)}", f"B: {label(rb)}"

    def save(fig, stem, title):
        fig.suptitle(title, fontsize=12)
        fig.text(0.01, 0.005, f"A = {D.machine_line(ra)}\nB = {D.machine_line(rb)}",
                 fontsize=7, color="0.35", ha="left", va="bottom")
        fig.tight_layout(rect=(0, 0.07, 1, 0.95))
        for ext in ("png", "svg"):
            fig.savefig(out / f"{stem}.{ext}", dpi=110 if ext == "png" else None)
        plt.close(fig)
        status[stem] = "ok"

    # Switch cost: every switch-bench row outside the scheduler sweep, A and B bars.
    rows_a, rows_b = D.bench_rows(ra.get("switch")), D.bench_rows(rb.get("switch"))
    kinds = ("call/", "syscall/", "switch/", "kernel/")
    names = sorted((n for n in set(rows_a) | set(rows_b) if n.startswith(kinds)),
                   key=lambda n: (next(i for i, k in enumerate(kinds) if n.startswith(k)), n))
    if names:
        fig = plt.figure(figsize=(10, 0.32 * len(names) + 2))
        ax = fig.add_subplot(111)
        y = list(range(len(names)))
        ax.barh([i - 0.2 for i in y], [D.ns(rows_a.get(n)) or 0 for n in names], height=0.4,
                color="tab:blue", label=la)
        ax.barh([i + 0.2 for i in y], [D.ns(rows_b.get(n)) or 0 for n in names], height=0.4,
                color="tab:orange", label=lb)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("time per operation (ns, log scale; medians)")
        ax.legend(fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
        save(fig, "compare_switch_cost", "Switch, call, syscall and kernel hand-off cost: A vs B")
    else:
        status["compare_switch_cost"] = "not run: no switch rows in either run"

    # Sweep throughput: per model, A solid, B dashed, one panel per load mode.
    fig = plt.figure(figsize=(11, 6))
    drawn = False
    for i, mode in enumerate(("pingpong", "churn")):
        ax = fig.add_subplot(1, 2, i + 1)
        ax.set_title(mode, fontsize=10)
        for run, ls, tag in ((ra, "-", "A"), (rb, "--", "B")):
            series = D.sweep_series(run.get("sweep"), mode,
                                    lambda p: p["load"].get("requests_per_sec") or None)
            for m in run.order("models", series):
                pts = series[m]
                # A model's colour and marker as in every chart (charts/style.py).
                ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker=S.marker(m),
                        ms=3, color=S.color(m), label=f"{m} ({tag})")
                drawn = True
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("concurrent connections (log scale)")
        ax.set_ylabel("requests per second (log scale)")
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, alpha=0.3)
    if drawn:
        save(fig, "compare_sweep_throughput", f"Echo throughput: {la} solid, {lb} dashed")
    else:
        plt.close(fig)
        status["compare_sweep_throughput"] = "not run: no sweep in either run"

    # Every claim figure's B/A on one axis, coloured by how the difference reads.
    res_a, res_b = claims.evaluate(ra, True), claims.evaluate(rb, True)
    items = []
    for cid in res_a:
        for name, fa, fb, r, cls, _, _ in claim_rows(res_a[cid]["figures"],
                                                      res_b[cid]["figures"], cid, values):
            if r is not None and r > 0:
                items.append((f"{cid}: {name}", r, cls))
    if items:
        fig = plt.figure(figsize=(10, 0.2 * len(items) + 2))
        ax = fig.add_subplot(111)
        col = {F.BEYOND: "tab:red", F.WITHIN: "tab:green", F.RUN_TO_RUN: "tab:olive",
               F.UNCLEAR: "tab:orange", "exact same": "0.6", "exact differs": "tab:purple"}
        colors = [col.get(cls, "tab:blue") for _, _, cls in items]
        # Bars grow from 1 (no change) to B/A, left for lower, right for higher.
        ax.barh(range(len(items)), [r - 1 for _, r, _ in items], color=colors, left=1)
        # A tick at each ratio keeps figures with B/A = 1 (most exact counts) visible.
        ax.scatter([r for _, r, _ in items], range(len(items)), c=colors, marker="|", s=40)
        ax.axvline(1, color="k", lw=1)
        ax.set_xscale("log")
        ax.set_yticks(range(len(items)))
        ax.set_yticklabels([n for n, _, _ in items], fontsize=5)
        ax.invert_yaxis()
        ax.set_xlabel("B / A (log scale)")
        for k, c in list(col.items()) + [("no noise band", "tab:blue")]:
            ax.barh([0], [0], color=c, label=k)
        ax.legend(fontsize=7)
        save(fig, "compare_figures", "Every claim figure: B / A")
    else:
        status["compare_figures"] = "not run: no figure in both runs"
    return status


def parse(argv):
    pos, out, fail, charts, root = [], None, False, True, RUNS_ROOT
    it = iter(argv)
    for a in it:
        if a in ("--help", "-h"):
            return None
        if a in ("--out", "--runs-root"):
            v = next(it, None)
            if v is None:
                raise BadFolder(f"{a} needs a folder; " + USAGE)
            out, root = (v, root) if a == "--out" else (out, Path(v))
        elif a == "--fail-on-verdict-change":
            fail = True
        elif a == "--no-charts":
            charts = False
        elif a.startswith("--"):
            raise BadFolder(f"unknown option {a}; {USAGE}")
        else:
            pos.append(a)
    if len(pos) != 2:
        raise BadFolder(USAGE)
    return pos, out, fail, charts, root


def main(argv):
    try:
        parsed = parse(argv)
        if parsed is None:
            print(__doc__.strip())
            return 0
        (a, b), out, fail, charts, root = parsed
        ra, rb = load(a), load(b)
        if not root.is_dir() and root != RUNS_ROOT:
            raise BadFolder(f"--runs-root {root}: no such folder")
    except BadFolder as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    out = Path(out) if out else ROOT / "results" / "compare" / f"{label(ra)}-vs-{label(rb)}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        return write(ra, rb, out, fail, charts, learn(ra, rb, root))
    except OSError as e:  # --out an existing file, under /proc, read-only: one line
        print(f"compare: cannot write into --out {out}: {e.strerror or e}", file=sys.stderr)
        return 2


def write(ra, rb, out, fail, charts, learned):
    lines, verdicts, counts = build(ra, rb, learned)
    n = write_pairs(ra, rb, out / "compare.csv")
    lines += ["## Every measurement", "",
              f"[compare.csv](compare.csv) pairs every numeric field of every JSON file of the "
              f"two runs ({n} rows: file, record, field, A, B, B/A); a record of a list is named "
              "by its identifying fields (model, mode, conns, engine, ...), so a point measured "
              "in one run only has an empty cell on the other side.", ""]
    if charts:
        st = draw(ra, rb, out, learned[0])
        drawn = [s for s, v in st.items() if v == "ok"]
        lines += ["## Charts", ""] + [f"![{s}]({s}.png)" for s in drawn]
        lines += [f"- {s}: {v}" for s, v in st.items() if v != "ok"] + [""]
    (out / "COMPARE.md").write_text("\n".join(lines) + "\n")
    changed = [c for c, (x, y, _) in verdicts.items() if x != y]
    for cid, (va, vb, reading) in verdicts.items():
        print(f"compare: {cid}: {va} -> {vb}" + (f"  CHANGED ({reading})" if va != vb else ""))
    beyond = sum(1 for v in verdicts.values() if v[2] == CHANGED_BEYOND)
    print(f"compare: {len(changed)} verdict(s) changed, {beyond} beyond noise; "
          f"{counts[F.BEYOND]} figure(s) beyond noise, {counts[F.RUN_TO_RUN]} within "
          f"run-to-run noise, {counts['exact differs']} exact count(s) differ")
    print(f"compare: run-to-run bands learned from {learned[1]}")
    print(f"compare: wrote {out / 'COMPARE.md'}")
    return 1 if fail and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
