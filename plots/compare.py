#!/usr/bin/python3
"""compare.py - two run folders side by side: every claim's figures, B/A, verdict changes.

    /usr/bin/python3 plots/compare.py A B [--out DIR] [--runs-root DIR] [--bands-dir DIR]
                                          [--fail-on-verdict-change] [--no-charts]

A and B are run folders (results/runs/<host>/<run>/ or results/reference). Writes into DIR
(default results/compare/<A>-vs-<B>/): COMPARE.md (both machines, the verdicts of both runs,
whether each changed and whether its deciding figures moved beyond the noise, then per claim
every figure its rule reads, A beside B with B/A and how to read the difference),
compare.csv (every numeric field of every JSON file both runs have, paired, with B/A) and
overlay charts of the main figures (PNG and SVG).

The figures and verdicts come from the claims' own rules (plots/claims/) applied to each
run (no rule is restated here), so a claim added to the list is compared without code here.
A figure with repeated samples in both runs is tested as Google Benchmark's compare.py does,
with a two-sided Mann-Whitney U test (alpha 0.05, harness/lib/stats.py), together with its 95%
intervals: `beyond noise` when the test rejects and the intervals are apart, `within noise`
when neither, `unclear` when they disagree (3 samples a side can never reach p < 0.05).
Closer than the run-to-run band (figures.run_band: the effect floor, or the band learned from
the machine's other runs under --runs-root, default results/runs, and the runs recorded for its
CPU model and preset under --bands-dir, default results/baseline/bands (bands.py), when wider)
a difference is `within run-to-run noise`, whatever the test says.
Exact counts (instructions, syscalls and epoll_ctl per request) are compared for equality.
A figure measured once has no noise band of its own. A changed verdict is "verdict changed
beyond noise" when a figure its rule compared with a threshold moved beyond the noise (or an
exact count differs), "verdict changed, figures within noise" when none did.

Exit status: 0, or 1 with --fail-on-verdict-change when some verdict differs; 2 for usage
errors and for a missing or malformed run folder or band file (one line on stderr).
"""
import csv
import json
import sys
from pathlib import Path

import bands
import claims
import figures as F
from compare_diff import (CHANGED_BEYOND, BadFolder, claim_change, claim_rows, label, learn,
                          load, measurements)
from formatting import figure_with_interval
from sections import peers
from sections.machine import machine_section

ROOT = Path(__file__).resolve().parent.parent
RUNS_ROOT = ROOT / "results" / "runs"
USAGE = ("usage: compare.py A B [--out DIR] [--runs-root DIR] [--bands-dir DIR] "
         "[--fail-on-verdict-change] [--no-charts]")


def ratio_text(r):
    return "n/a" if r is None else f"{r:.3g}"


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
        reading, moved = claim_change(va, vb, rows, res_a[cid].get("tests"),
                                      res_b[cid].get("tests"))
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
             f"runs (at least {F.BAND_MIN_RUNS}: the {F.BAND_LEVEL:.0%} prediction bound of "
             "the difference of two runs, Student's t for their number times sqrt(2) "
             "standard deviations of the figure's logarithm across them, at least their range "
             "and sqrt(2) x the median half-width of their own intervals). "
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


def parse(argv):
    pos, out, fail, charts, root, bands_dir = [], None, False, True, RUNS_ROOT, bands.BANDS_DIR
    it = iter(argv)
    for arg in it:
        if arg in ("--help", "-h"):
            return None
        if arg in ("--out", "--runs-root", "--bands-dir"):
            v = next(it, None)
            if v is None:
                raise BadFolder(f"{arg} needs a folder; " + USAGE)
            if arg == "--out":
                out = v
            elif arg == "--runs-root":
                root = Path(v)
            else:
                bands_dir = Path(v)
        elif arg == "--fail-on-verdict-change":
            fail = True
        elif arg == "--no-charts":
            charts = False
        elif arg.startswith("--"):
            raise BadFolder(f"unknown option {arg}; {USAGE}")
        else:
            pos.append(arg)
    if len(pos) != 2:
        raise BadFolder(USAGE)
    return pos, out, fail, charts, root, bands_dir


def main(argv):
    try:
        parsed = parse(argv)
        if parsed is None:
            print(__doc__.strip())
            return 0
        (a, b), out, fail, charts, root, bands_dir = parsed
        ra, rb = load(a), load(b)
        if not root.is_dir() and root != RUNS_ROOT:
            raise BadFolder(f"--runs-root {root}: no such folder")
        if not bands_dir.is_dir() and bands_dir != bands.BANDS_DIR:
            raise BadFolder(f"--bands-dir {bands_dir}: no such folder")
        learned = learn(ra, rb, root, bands_dir)
    except (BadFolder, bands.Malformed) as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    out = Path(out) if out else ROOT / "results" / "compare" / f"{label(ra)}-vs-{label(rb)}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        return write(ra, rb, out, fail, charts, learned)
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
        import compare_charts  # matplotlib only when drawing
        st = compare_charts.draw(ra, rb, out, learned[0])
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
