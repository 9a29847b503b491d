"""Two runs' difference, before anything is written: loading the two run folders, matching
their figures by claim and name, the noise decision for each pair (figures.differ against the
run-to-run band learned from the machine's other runs) and what a changed verdict follows from
(claim_change); every numeric field of their JSON files paired by record (measurements).
compare.py writes it as Markdown, CSV and charts; summary.py reads a claim's change from here.
"""
import json
from pathlib import Path

import bands
from bands import run_figures
import data as D
import export
import figures as F

BAND_MAX_RUNS = bands.MAX_RUNS


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
    return bands.group(run)[0]


def learn(ra, rb, root, bands_dir=bands.BANDS_DIR):
    """({(section, name): [(value, its interval's half-width over it, or None) per run]}, a
    line saying where from): the figures but exact counts of the finished suite runs under root
    (suite.json records the report step, its last) of A's and B's CPU model (and preset when
    they share one), with the runs recorded for that model and preset under bands_dir
    (bands.py: a fresh clone has no runs of its own), each run once, the BAND_MAX_RUNS most
    recent, A and B left out: they must not widen the band they are judged by."""
    where = f"`{root}`"
    if machine(ra) != machine(rb):
        return {}, (f"none: A and B ran on different CPU models, so no run-to-run band is "
                    f"learned (under {where}) and the floor alone applies")
    own = {label(ra), label(rb)}
    kinds = {bands.group(r)[1] for r in (ra, rb)}
    one = next(iter(kinds)) if len(kinds) == 1 and None not in kinds else None
    mine = [run for run in bands.finished_runs(root)
            if run.dir.resolve().name not in own and machine(run) == machine(ra)
            and (len(kinds) > 1 or bands.group(run)[1] in kinds)]
    local = [bands.entry(run, run_figures(run)) for run in bands.most_recent(mine)]
    recorded = bands.load(machine(ra), one, bands_dir) if one else []
    runs = bands.merged(local, recorded, leave_out=own)
    values = {}
    for e in runs:
        for key, vh in e["figures"].items():
            values.setdefault(key, []).append(vh)
    model = ra.meta().get("cpu_model", "an unknown CPU")
    which = f"the {one} preset" if one else "any preset"
    found = {e["id"] for e in local}
    from_file = sum(1 for e in runs if e["id"] not in found)
    also = (f" and `{bands.path_for(machine(ra), one, bands_dir)}` ({len(runs) - from_file} "
            f"found, {from_file} recorded;") if recorded else " ("
    return values, (f"{len(runs)} other run(s) of {model}, {which}, under {where}{also} the "
                    f"{BAND_MAX_RUNS} most recent at most; A and B left out)")


UNCHANGED = "unchanged"
CHANGED_BEYOND = "verdict changed beyond noise"
CHANGED_WITHIN = "verdict changed, figures within noise"
CHANGED_UNKNOWN = "verdict changed, noise unknown"
CHANGED_MISSING = "verdict changed, a deciding figure measured in one run only"


def settled_alike(tests_a, tests_b):
    """The figures every comparison of which (op, threshold) came out the same in both runs'
    tests; none when either run's tests are not given."""
    if tests_a is None or tests_b is None:
        return set()
    oa, ob = ({(t.get("figure"), t.get("op"), t.get("threshold")): t.get("outcome")
               for t in tests} for tests in (tests_a, tests_b))
    differ = {k[0] for k in oa.keys() | ob.keys() if oa.get(k) != ob.get(k)}
    return {k[0] for k in oa.keys() | ob.keys()} - differ


def claim_change(va, vb, rows, tests_a=None, tests_b=None):
    """(reading, [deciding figures that moved]) of one claim: whether a changed verdict
    follows a change beyond the noise of the figures its rule compared with thresholds (in
    either run; every figure when neither rule compared one). tests_a and tests_b, the two
    results' comparisons (figure, op, threshold, outcome), when given: a figure that came out
    the same against every threshold in both runs did not change the verdict, however far it
    moved (a kernel count under load that differs in its third decimal, 2.1 away from its
    threshold, say)."""
    if va == vb:
        return UNCHANGED, []
    deciding = [r for r in rows if (r[1] or {}).get("decides") or (r[2] or {}).get("decides")]
    deciding = deciding or rows
    alike = settled_alike(tests_a, tests_b)
    moved = [r[0] for r in deciding
             if r[4] in (F.BEYOND, "exact differs") and r[0] not in alike]
    if moved:
        return CHANGED_BEYOND, moved
    if any(r[4] == "one side only" for r in deciding):
        return CHANGED_MISSING, [r[0] for r in deciding if r[4] == "one side only"]
    if any(r[4] == F.UNKNOWN for r in deciding):
        return CHANGED_UNKNOWN, [r[0] for r in deciding if r[4] == F.UNKNOWN]
    return CHANGED_WITHIN, []


ID_FIELDS = ("name", "model", "mode", "conns", "engine", "kind", "variant", "round", "bar",
             "resource", "backend", "threads")


def measurements(doc):
    """{(record, field): number} of one JSON document, using plots/export.py's records. A
    record of a list is named by its identifying fields (model, mode, conns, ...) when it has
    them, so the same point of two runs pairs even when their lists differ in length."""
    out = {}
    for table, key, fields in export.records(doc):
        ident = [f"{k}={fields[k]}" for k in ID_FIELDS if k in fields]
        rec = f"{table}[{' '.join(ident)}]" if ident and key.isdigit() else \
            f"{table}[{key}]" if table else ""
        for field, v in fields.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and field not in ID_FIELDS:
                out.setdefault((rec, field), float(v))
    return out
