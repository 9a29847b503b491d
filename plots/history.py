#!/usr/bin/python3
"""history.py - switch cost across runs: per machine, in commit order, with uncertainty.

    history.py [FIGURE ...] [--machine M] [--out DIR] [--runs-root DIR] [DIR ...]

Reads every run folder under results/runs/ (a folder with switch-regress.json, written by
`./run.sh regress`, or switch.json and verdicts.json, written by the suite) and the folders
given, groups the runs by machine (the regression gate's CPU key where a run has one, else
the CPU model: a timing is comparable only on the same microarchitecture), and for each figure
charts its value in every run, in commit order (git's order of the commits the runs measured;
runs of commits git does not know come last, by date), each point with its 95% interval.

A point is marked where the machine's series of the figure steps: harness/lib/changepoint.py
reads the whole series (a penalised optimal partition into segments of at least 3 runs,
robust to a run far off now and then) and a step counts when it moves the level by at least
STEP_FLOOR (5%; exact counts such as instructions and system calls: 0.5%). One run far off is
no step, and a step smaller than one run's noise shows over several runs. A series of fewer
than 6 runs is too short for that and is read run against run before, by the statistics of
harness/lib/stats.py: the two intervals do not overlap, a two-sided Mann-Whitney U test gives
p < 0.05 (where both runs kept their samples), and the change exceeds what moves between two
sittings of one CPU model (the regression gate's MIN_TIMING_TOLERANCE); exact counts when
they change beyond 0.5%.

Figures (FIGURE picks them by name or prefix; default: every switch row, the IO path's
counts, every claim's deciding figures and the peers' ratios):
  switch/<row>/floor     regress: CPU time over the floor rows, one sample per process
  switch/<row>           suite (switch.json): CPU time in ns, one sample per repetition
  icount/<row>           instructions per switch, create or hop (exact)
  syscalls/<backend>     system calls per switch (exact)
  iopath/<server>/<what> regress: an echo server's instructions, own cache lines, system
                         calls or epoll_ctl per request (exact)
  claim/<id>: <figure>   suite (verdicts.json): a figure the claim's rule compared with a
                         threshold, with the interval and n the report computed
  peers/<conns>/<what> fiber/<peer>
                         suite (peers.json): the fiber server's paired ratio to each peer
                         (cpu, tput), one sample per round

Writes into DIR (default results/history/): HISTORY.md (per machine: the runs, the figures
with every marked move, the figures each run lacks), history.csv (machine, run, commit,
date, figure, value, low, high, n, exact, moved) and one chart per machine and figure
(<machine>/<figure>.png and .svg). Exit status 0; 2 with one line on stderr for bad input
or no run folder at all.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from harness_api import changepoint as CP
from harness_api import meta as M
from harness_api import regress_files as RF
from harness_api import regress_gate as G
from harness_api import stats
from history_charts import draw, run_label

ROOT = Path(__file__).resolve().parents[1]
EXACT_CHANGE = 0.005
# The least change of level a step of a timing must make: over segments of at least 3 runs
# the noise of one run averages out, so the floor can be half the one a pair of runs needs
# (regress_gate.MIN_TIMING_TOLERANCE).
STEP_FLOOR = 0.05
DEFAULT_FIGURES = ("switch/", "iopath/", "claim/", "peers/")


class Figure:
    """One figure of one run: samples (or one exact value) and how to read them, or a value
    with the interval its run computed (a claim's deciding figure in verdicts.json)."""

    def __init__(self, samples, exact=False, unit="", interval=None, n=None):
        if not samples or not all(RF.is_number(x) for x in list(samples) + list(interval or [])):
            raise ValueError("a figure's value, sample or interval is not a finite number")
        self.samples, self.exact, self.unit = samples, exact, unit
        self.value = stats.median(samples)
        self.n = n if n is not None else len(samples)
        if interval is not None:
            self.low, self.high = interval
        else:
            self.low, self.high = (self.value, self.value) if exact or len(samples) < 2 \
                else stats.bootstrap_ci(samples)


def from_regress(doc):
    out = {}
    for row, samples in G.figures(doc.get("timing", {"samples": {}})).items():
        out[row + "/floor"] = Figure(samples, unit="x floor")
    counts = doc.get("counts", {})
    for row, value in counts.get("instructions", {}).items():
        out["icount/" + row] = Figure([value], exact=True, unit="instructions")
    for backend, value in counts.get("syscalls_per_switch", {}).items():
        out["syscalls/" + backend] = Figure([value], exact=True, unit="syscalls per switch")
    for block, figure, _, unit in RF.IO_FIGURES:
        for config, value in counts.get(block, {}).items():
            out["iopath/%s/%s" % (config, figure)] = Figure([value], exact=True, unit=unit)
    return out


def from_switch(doc):
    rows = {}
    for r in doc.get("benchmarks", []):
        if r.get("run_type") == "iteration" and not r.get("error_occurred"):
            rows.setdefault(r.get("run_name", r["name"]), []).append(r["cpu_time"])
    return {row: Figure(s, unit="ns") for row, s in rows.items()
            if row.startswith(("switch/", "sched/"))}


def from_verdicts(doc):
    """Each claim's deciding figures (those its rule compared with a threshold), named
    claim/<id>: <figure>, with the value, interval and n the report computed."""
    out = {}
    if not doc.get("claims"):
        raise ValueError("no claim in it")
    for claim in doc["claims"]:
        deciding = {c.get("figure") for c in claim.get("comparisons", [])}
        for f in claim.get("figures", []):
            if f.get("name") not in deciding or f.get("value") is None:
                continue
            low, high = f.get("low"), f.get("high")
            interval = (low, high) if low is not None and high is not None else None
            out["claim/%s: %s" % (claim["id"], f["name"])] = Figure(
                [f["value"]], exact=bool(f.get("exact")), unit=f.get("unit") or "",
                interval=interval, n=f.get("n"))
    return out


def from_peers(doc):
    """The fiber server over each peer (experiments/peers.py), per level: CPU per request and
    throughput, each round's paired ratio a sample."""
    out = {}
    for r in doc.get("ratios") or []:
        what = "cpu" if r.get("key") == "server_cpu_us_per_request" else "tput"
        rounds = [x for x in r.get("per_round") or [] if x is not None]
        if rounds:
            out["peers/%s/%s fiber/%s" % (r["conns"], what, r["den"])] = Figure(rounds,
                                                                                 unit="x")
    return out


def read(path, reader):
    """(doc, figures) of one file; ValueError naming the file when it is not what reader reads.
    A switch-regress.json is checked as the gate checks it; NaN, which older suite files hold
    where a counter had no value, is read as null."""
    if path.name == "switch-regress.json":
        doc = RF.measurement(path, G.REFERENCE_ROWS)
    else:
        try:
            doc = json.loads(path.read_text(), parse_constant=lambda c: None)
        except (OSError, ValueError, RecursionError) as e:
            raise ValueError("%s: not valid JSON (%s)" % (path, e))
        if not isinstance(doc, dict):
            raise ValueError("%s: malformed (the top level is %s, not an object)"
                             % (path, RF.kind(doc)))
    try:
        figures = reader(doc)
        meta = doc.get("meta", {})
        if not isinstance(meta, dict):
            raise TypeError("'meta' is %s, not an object" % RF.kind(meta))
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        raise ValueError("%s: malformed (%s: %s)" % (path, type(e).__name__, e))
    return doc, figures


def load_run(folder):
    """{meta fields, figures} of one run folder, or None when it holds nothing we chart.
    Its machine is the regression gate's CPU key where the run has one (a model string may
    stand for several microarchitectures), else the CPU model's words."""
    folder = Path(folder)
    figures, meta, key = {}, None, None
    for name, reader in (("switch-regress.json", from_regress), ("switch.json", from_switch),
                         ("verdicts.json", from_verdicts), ("peers.json", from_peers)):
        path = folder / name
        if not path.exists():
            continue
        doc, found = read(path, reader)
        figures.update(found)
        meta = meta or doc.get("meta") or {}
        if name == "switch-regress.json":
            meta, key = dict(meta, cpu_model=doc["cpu"]["model"]), doc["cpu"]["key"]
        if name == "switch.json" and not meta.get("cpu_model"):
            meta = dict(meta, cpu_model=(doc.get("context") or {}).get("cpu_model"))
    if meta is None or not figures:
        return None
    model = meta.get("cpu_model") if isinstance(meta.get("cpu_model"), str) else None
    return {"dir": folder, "sha": str(meta.get("git_sha", "unknown")),
            "date": str(meta.get("date", "")), "dirty": meta.get("git_dirty"),
            "machine": key or M.model_words(model), "model": model or "unknown",
            "figures": figures}


def commit_order(root=ROOT):
    """{abbreviated sha prefix: position} of every commit reachable from HEAD, oldest first."""
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-list", "--reverse", "--topo-order",
                              "HEAD"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return {}
    return {sha[:12]: i for i, sha in enumerate(out.split())}


def ordered(runs, order):
    def key(run):
        pos = order.get(str(run["sha"]).split("-")[0][:12])
        return (pos is None, pos if pos is not None else 0, run["date"])
    return sorted(runs, key=key)


def moved(prev, cur):
    """'up', 'down' or '' for a figure against the same figure of the run before."""
    if prev is None:
        return ""
    if cur.exact or prev.exact:
        if prev.value == 0:
            return "" if cur.value == 0 else "up"
        change = (cur.value - prev.value) / abs(prev.value)
        return "" if abs(change) <= EXACT_CHANGE else ("up" if change > 0 else "down")
    if cur.low <= prev.high and prev.low <= cur.high:
        return ""
    # Without the samples (a claim's figure) the intervals alone decide, with the same floor.
    p = 2 * min(stats.mann_whitney_greater(cur.samples, prev.samples),
                stats.mann_whitney_greater(prev.samples, cur.samples)) \
        if len(cur.samples) > 1 and len(prev.samples) > 1 else 0.0
    if p >= 0.05 or abs(cur.value - prev.value) <= G.MIN_TIMING_TOLERANCE * abs(prev.value):
        return ""
    return "up" if cur.value > prev.value else "down"


def chosen(names, wanted):
    return sorted(n for n in names
                  if any(n == w or n.startswith(w.rstrip("/") + "/") for w in wanted))


def stepped(figures):
    """{position in figures: 'up' or 'down'} where the series steps (changepoint.py over the
    runs' values; a timing's step must move its level by STEP_FLOOR, an exact count's by
    EXACT_CHANGE), marked on the first run after the step. A series too short for that
    (fewer than 2 x changepoint.MIN_SEGMENT runs) is read the older way, each run against
    the one before (moved)."""
    if len(figures) < 2 * CP.MIN_SEGMENT:
        return {i: m for i, m in ((i, moved(figures[i - 1] if i else None, f))
                                  for i, f in enumerate(figures)) if m}
    exact = any(f.exact for f in figures)
    found = CP.steps([f.value for f in figures], floor=EXACT_CHANGE if exact else STEP_FLOOR)
    return {s.index: "up" if s.after > s.before else "down" for s in found}


def series(runs, figure):
    """[(run, Figure or None, move)] in the order of runs."""
    present = [i for i, run in enumerate(runs) if run["figures"].get(figure)]
    moves = stepped([runs[i]["figures"][figure] for i in present])
    move_at = {present[k]: m for k, m in moves.items()}
    return [(run, run["figures"].get(figure), move_at.get(i, "")) for i, run in enumerate(runs)]


def file_stem(figure):
    return re.sub(r"[^A-Za-z0-9.-]+", "_", figure).strip("_")


def write(runs_by_machine, wanted, out, charts=True):
    out.mkdir(parents=True, exist_ok=True)
    md = ["# Switch cost across runs", "", (
          "Per machine (CPU model), in commit order. Values are medians with their 95%% "
          "interval; **moved** marks the first run after a step of the machine's series: a "
          "change point of the whole series (harness/lib/changepoint.py: penalised optimal "
          "partition, segments of at least 3 runs) that moves the level by at least %d%% "
          "(exact counts: 0.5%%). A series of fewer than 6 runs is read run against run "
          "before (intervals apart, Mann-Whitney p < 0.05 and more than %d%%, what moves "
          "between sittings). Written by `./run.sh history` (plots/history.py).")
          % (round(100 * STEP_FLOOR), round(100 * G.MIN_TIMING_TOLERANCE)), ""]
    rows = []
    for machine, runs in sorted(runs_by_machine.items()):
        names = chosen({n for r in runs for n in r["figures"]}, wanted)
        model = runs[0]["model"]
        md += ["## %s (%s)" % (model, machine), "", "%d run(s): %s" % (len(runs), ", ".join(
            "`%s` (%s)" % (run_label(r), r["dir"]) for r in runs)), ""]
        if not names:
            md += ["No chosen figure in these runs.", ""]
            continue
        md += ["| figure | " + " | ".join(run_label(r) for r in runs) + " |",
               "|---|" + "---:|" * len(runs)]
        for name in names:
            points = series(runs, name)
            cells = []
            for run, f, move in points:
                if f is None:
                    cells.append("-")
                    continue
                text = G.fmt(f.value) if f.exact else "%s [%s, %s]" % (
                    G.fmt(f.value), G.fmt(f.low), G.fmt(f.high))
                cells.append(text + (" **moved %s**" % move if move else ""))
                rows.append([machine, str(run["dir"]), run["sha"], run["date"], name, f.value,
                             f.low, f.high, f.n, f.exact, move])
            md.append("| %s | %s |" % (name, " | ".join(cells)))
            if charts:
                (out / machine).mkdir(exist_ok=True)
                draw(out / machine / file_stem(name), name, points, model)
        md.append("")
        lacking = [(r, [n for n in names if n not in r["figures"]]) for r in runs]
        lacking = [(r, miss) for r, miss in lacking if miss]
        if lacking:
            md += ["Figures a run lacks:", ""]
            md += ["- `%s`: %s" % (run_label(r), ", ".join(miss)) for r, miss in lacking]
            md.append("")
        if charts:
            md += ["Charts: `%s/<figure>.png` (and .svg)." % machine, ""]
    (out / "HISTORY.md").write_text("\n".join(md))
    with open(out / "history.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["machine", "run", "commit", "date", "figure", "value", "low", "high", "n",
                    "exact", "moved"])
        w.writerows(rows)
    return out / "HISTORY.md"


def shown(text, most=100):
    """text for a one-line message: a 100 KB argument is cut, saying how long it was."""
    text = str(text)
    return text if len(text) <= most else "%s... (%d characters)" % (text[:most], len(text))


def is_dir(path):
    """Path.is_dir, but a name the system refuses (too long, say) is bad input: ValueError."""
    try:
        return Path(path).is_dir()
    except OSError as e:
        raise ValueError("%s: %s" % (shown(path), e.strerror or e))


def looks_like_path(item):
    """A command-line item meant as a folder: a figure name never starts so or exists."""
    return item.startswith(("/", "./", "../", "~")) or os.path.lexists(item)


def find_runs(roots):
    found = []
    for root in roots:
        root = Path(root)
        if not is_dir(root):
            raise ValueError("%s: no such run folder" % shown(root))
        for name in ("switch-regress.json", "switch.json", "verdicts.json"):
            found += [p.parent.resolve() for p in root.rglob(name)]
    return sorted(set(found))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("items", nargs="*", metavar="FIGURE|DIR",
                    help="figures (names or prefixes) and run folders, in any order")
    ap.add_argument("--machine", help="only this machine (its key or a part of its CPU model)")
    ap.add_argument("--out", default=str(ROOT / "results" / "history"))
    ap.add_argument("--runs-root", default=str(ROOT / "results" / "runs"))
    ap.add_argument("--no-charts", action="store_true")
    a = ap.parse_intermixed_args(argv)  # figures, folders and options in any order
    try:
        dirs = [i for i in a.items if is_dir(i)]
        missing = [i for i in a.items if i not in dirs and looks_like_path(i)]
        if missing:
            raise ValueError("%s: no such run folder" % shown(missing[0]))
        wanted = [i for i in a.items if i not in dirs] or list(DEFAULT_FIGURES)
        roots = ([a.runs_root] if is_dir(a.runs_root) else []) + dirs
        runs = [r for r in (load_run(d) for d in find_runs(roots)) if r]
    except ValueError as e:
        print("history.py: %s" % e, file=sys.stderr)
        return 2
    if a.machine:
        runs = [r for r in runs if a.machine.lower() in (r["machine"], r["model"].lower())
                or a.machine.lower() in r["model"].lower()]
    if not runs:
        print("history.py: no run folder with switch-regress.json or switch.json under %s"
              % ", ".join(map(str, roots or [a.runs_root])), file=sys.stderr)
        return 2
    known = {n for r in runs for n in r["figures"]}
    unmatched = [w for w in wanted if not chosen(known, [w])]
    if len(unmatched) == len(wanted):
        print("history.py: no run has a figure named %s (figures here: %s)"
              % (shown(", ".join(unmatched)), ", ".join(sorted({n.split("/")[0] + "/" for n in known}))),
              file=sys.stderr)
        return 2
    for w in unmatched:
        print("history: no run has a figure named %s" % shown(w), file=sys.stderr)
    order = commit_order()
    by_machine = {}
    for run in runs:
        by_machine.setdefault(run["machine"], []).append(run)
    by_machine = {m: ordered(rs, order) for m, rs in by_machine.items()}
    try:
        path = write(by_machine, wanted, Path(a.out), charts=not a.no_charts)
    except OSError as e:
        print("history.py: cannot write into --out %s: %s" % (shown(a.out), e.strerror or e),
              file=sys.stderr)
        return 2
    print("history: %d run(s) on %d machine(s): %s" % (len(runs), len(by_machine), path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
