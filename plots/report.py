#!/usr/bin/python3
"""report.py - REPORT.md for one run folder: the machine, then the claims with verdicts.

    /usr/bin/python3 plots/report.py RUN_FOLDER [--no-charts]
                                     [--reference-dir DIR | --no-reference]

Draws the charts (plots/charts/) unless told not to, writes NAME.csv beside every NAME.json
(plots/export.py), then RUN_FOLDER/REPORT.md (plots/document.py: a summary of every claim,
then each claim's deciding figures, at most 400 lines for the reference), the whole report
as one self-contained page, RUN_FOLDER/REPORT.html (plots/page.py: every table in full),
each claim's section alone as RUN_FOLDER/claim-C1.html ... claim-C17.html, and every figure
every rule read as RUN_FOLDER/figures.csv. The report is generated,
never edited by hand: every verdict comes from the rule of its claim (plots/claims/),
applied to the JSON files of the run, so a run on other hardware can reach another verdict
honestly. Verdicts: holds, holds partly, does not hold, inconclusive, not run; the same
verdicts with their deciding figures and intervals go to RUN_FOLDER/verdicts.json.

Exit status: 0; 2 for usage errors, a missing folder or one with no experiment's JSON at all
(its report would call every claim 'not run'), an experiment's JSON file that is not one JSON
object (empty, malformed, a top level of null, a list or a string) or has a field of
another type than its experiment writes (plots/validate.py) and an output that cannot be
written, each said in one line on stderr.
"""
import csv
import json
import sys
from pathlib import Path

import claims_table
import data as D
import document
import export
import page
from harness_api import meta
from reference import REFERENCE, reference_for

USAGE = "usage: report.py RUN_FOLDER [--no-charts] [--reference-dir DIR | --no-reference]"


def bad_file(folder):
    """One line saying why an experiment's JSON file of the folder cannot be read, or None.
    The loader (data.Run) takes a file whose top level is an object; anything else stops here,
    as compare.py stops, instead of tracing back in the report's layers."""
    for name in D.steps(folder):
        path = folder / f"{name}.json"
        if not path.exists():
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            return f"{path}: not valid JSON ({e})"
        if not isinstance(doc, dict):
            kind = "null" if doc is None else f"a {type(doc).__name__}"
            return f"{path}: malformed (the top level is {kind}, not an object)"
    return None


def parse(argv):
    """(folder, options, reference dir), or None after printing the usage."""
    args, opts, ref_dir = [], set(), REFERENCE
    it = iter(argv)
    for arg in it:
        if arg in ("--help", "-h"):
            print(__doc__.strip())
            return "help"
        if arg == "--reference-dir":
            ref_dir = next(it, None)
            if ref_dir is None:
                print(USAGE, file=sys.stderr)
                return None
        elif arg in ("--no-charts", "--no-reference"):
            opts.add(arg)
        elif arg.startswith("--"):
            print(f"report.py: unknown option {arg}; {USAGE}", file=sys.stderr)
            return None
        else:
            args.append(arg)
    if len(args) != 1:
        print(USAGE, file=sys.stderr)
        return None
    why = D.folder_problem(args[0])
    if why:
        print(f"report.py: {why}", file=sys.stderr)
        return None
    return Path(args[0]), opts, ref_dir


def main(argv):
    parsed = parse(argv)
    if parsed in (None, "help"):
        return 2 if parsed is None else 0
    folder, opts, ref_dir = parsed
    why = bad_file(folder) or D.Run(folder).problem()  # before anything reads the files
    if why:
        print(f"report.py: {why}", file=sys.stderr)
        return 2
    try:
        return write(folder, opts, ref_dir)
    except OSError as e:  # a folder that cannot be written: one line, not a traceback
        print(f"report.py: cannot write into {folder}: {e}", file=sys.stderr)
        return 2


def write(folder, opts, ref_dir):
    if "--no-charts" not in opts:
        import charts  # matplotlib only when drawing
        for stem, st in charts.draw_all(folder).items():
            print(f"report: chart {stem}: {st}")
    for name, st in export.write_all(folder).items():
        print(f"report: csv {name}: {st}")
    reference = None if "--no-reference" in opts else reference_for(folder, ref_dir)
    report = document.build(D.Run(folder), reference)
    text, results = document.markdown(report), report.results
    (folder / "REPORT.md").write_text(text + "\n")
    with open(folder / "figures.csv", "w", newline="") as f:
        out = csv.DictWriter(f, claims_table.FIGURE_COLUMNS)
        out.writeheader()
        out.writerows(claims_table.figure_rows(results))
    (folder / "REPORT.html").write_text(page.render(report))  # the same parts as a page
    for part in report.parts:
        if part.claim is not None:
            (folder / page.claim_page_name(part.claim.ID)).write_text(
                page.claim_page(report, part))
    (folder / "verdicts.json").write_text(meta.json_text(
        claims_table.verdicts_doc(report.run, results)))
    for cid, r in results.items():
        print(f"report: {cid}: {r['verdict']}")
    print(f"report: wrote {folder / 'REPORT.md'}, REPORT.html, figures.csv and verdicts.json"
          + (f" (reference column from {ref_dir})" if reference is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
