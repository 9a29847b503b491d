#!/usr/bin/python3
"""bands.py - record the run-to-run noise of a CPU model's runs, for comparisons on a fresh clone.

    /usr/bin/python3 plots/bands.py [--runs-root DIR] [--out DIR]

compare.py calls two runs' difference real only past each figure's run-to-run band, which it
learns from the machine's other finished runs (results/runs/, never committed). A fresh clone
has none of them, so it would judge by the 10% floor alone, and two quick runs of one commit on
the AMD EPYC VM then differ "beyond noise" in 5% of their figures. This writes, per CPU model
and preset with at least 3 finished runs under --runs-root (default results/runs), every
figure's value and interval in its most recent runs (at most 20) into
results/baseline/bands/<cpu model>-<preset>.json (or --out), merged with the runs that file
already holds (another machine of the same model may have recorded them). compare.py adds those
runs to the ones it finds itself (the same run counted once, A and B left out).

Exit status: 0 at least one file written, 1 no CPU model and preset with enough runs (one line
saying so), 2 bad usage.
"""
import json
import math
import sys
from pathlib import Path

import claims
import data as D
import figures as F
from harness_api import meta
from sections import peers

ROOT = Path(__file__).resolve().parent.parent
RUNS_ROOT = ROOT / "results" / "runs"
BANDS_DIR = ROOT / "results" / "baseline" / "bands"
KIND = "switchyard-run-to-run-bands"
# The most recent runs only: the band follows the machine as it is now.
MAX_RUNS = 20
SEP = " :: "  # between a figure's section (claim or Peers) and its name, in the file's keys
USAGE = "usage: bands.py [--runs-root DIR] [--out DIR]"


class Malformed(Exception):
    pass


def run_figures(run):
    """((section, name), figure) of every claim's figures and the peers' in one run: what
    compare reads, and so what a band is learned over."""
    for cid, res in claims.evaluate(run, True).items():
        yield from (((cid, n), f) for n, f in F.by_name(res["figures"]).items())
    try:
        peer_figs = peers.figures(run)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError):
        peer_figs = []
    yield from ((("Peers", n), f) for n, f in F.by_name(peer_figs).items())


def finished_runs(root):
    """D.Run of every finished suite run under root (its suite.json records the report step,
    the suite's last), oldest first."""
    runs = []
    for path in sorted(Path(root).rglob("suite.json")) if Path(root).is_dir() else []:
        run = D.Run(path.parent)
        if "report" in ((run.get("suite") or {}).get("steps") or {}):
            runs.append(run)
    return sorted(runs, key=lambda r: (r.meta().get("date", ""), r.dir.resolve().name))


def most_recent(runs):
    """The MAX_RUNS most recent of finished_runs' list: only those are worth evaluating, at
    about a second a run."""
    return runs[-MAX_RUNS:]


def group(run):
    """(CPU model as a file-name word, preset) of a run: what a band is learned over."""
    return (meta.model_words(run.meta().get("cpu_model")),
            (run.get("suite") or {}).get("preset"))


def entry(run, figures):
    """A run as a band file keeps it: its folder name (the same run found twice counts once),
    date and commit, and per figure (section, name) its value and its interval's half-width
    over the value (None without an interval). Exact counts are left out: they are compared
    for equality, not against a band."""
    figs = {}
    for (section, name), fig in figures:
        v, low, high = fig.get("value"), fig.get("low"), fig.get("high")
        if fig.get("exact") or v is None or not math.isfinite(v):
            continue
        half = (high - low) / 2 / abs(v) if v and low is not None and high is not None else None
        figs[(section, name)] = (v, half)
    m = run.meta()
    return {"id": run.dir.resolve().name, "date": m.get("date", ""),
            "git_sha": m.get("git_sha", ""), "figures": figs}


def path_for(model_word, preset, bands_dir=BANDS_DIR):
    return Path(bands_dir) / f"{model_word}-{preset}.json"


def _num(x):
    return float(f"{x:.6g}") if x is not None else None


def dump(entries, model, preset, path):
    doc = {"kind": KIND, "cpu_model": model, "preset": preset,
           "runs": [{"id": e["id"], "date": e["date"], "git_sha": e["git_sha"],
                     "figures": {f"{s}{SEP}{n}": [_num(v), _num(h)]
                                 for (s, n), (v, h) in sorted(e["figures"].items())}}
                    for e in entries]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def load(model_word, preset, bands_dir=BANDS_DIR):
    """The runs recorded for a CPU model and preset, as entry() gives them ([] without a file),
    or Malformed naming the file and what is wrong with it."""
    path = path_for(model_word, preset, bands_dir)
    if not path.exists():
        return []
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            raise Malformed(f"{path}: not a run-to-run band file (kind is not {KIND})")
        out = []
        for r in doc["runs"]:
            figs = {}
            for key, (v, h) in r["figures"].items():
                section, sep, name = key.partition(SEP)
                if not sep or not isinstance(v, (int, float)) or \
                        not (h is None or isinstance(h, (int, float))):
                    raise Malformed(f"{path}: run {r.get('id')}: figure {key!r} is malformed")
                figs[(section, name)] = (float(v), None if h is None else float(h))
            out.append({"id": str(r["id"]), "date": str(r["date"]),
                        "git_sha": str(r.get("git_sha", "")), "figures": figs})
        return out
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise Malformed(f"{path}: malformed ({e})")


def merged(*lists, leave_out=()):
    """The entries of several lists, each run once (the first list's copy wins), those named in
    leave_out dropped, the MAX_RUNS most recent by date."""
    seen, out = set(leave_out), []
    for entries in lists:
        for e in entries:
            if e["id"] not in seen:
                seen.add(e["id"])
                out.append(e)
    return sorted(out, key=lambda e: (e["date"], e["id"]))[-MAX_RUNS:]


def record(root, bands_dir):
    """Writes one file per CPU model and preset with at least F.BAND_MIN_RUNS finished runs
    under root: [(path, runs in it)], [(model, preset, runs) left out for too few]."""
    groups = {}
    for run in finished_runs(root):
        groups.setdefault(group(run), []).append(run)
    written, skipped = [], []
    for (word, preset), runs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if preset is None or len(runs) < F.BAND_MIN_RUNS:
            skipped.append((word, preset, len(runs)))
            continue
        model = runs[-1].meta().get("cpu_model", word)
        own = [entry(r, run_figures(r)) for r in most_recent(runs)]
        entries = merged(own, load(word, preset, bands_dir))
        path = path_for(word, preset, bands_dir)
        dump(entries, model, preset, path)
        written.append((path, len(entries)))
    return written, skipped


def parse(argv):
    opts = {"--runs-root": RUNS_ROOT, "--out": BANDS_DIR}
    it = iter(argv)
    for arg in it:
        if arg in ("--help", "-h"):
            return None
        if arg not in opts:
            raise ValueError(f"unknown argument {arg}; {USAGE}")
        v = next(it, None)
        if v is None:
            raise ValueError(f"{arg} needs a folder; {USAGE}")
        opts[arg] = Path(v)
    if not opts["--runs-root"].is_dir():
        raise ValueError(f"--runs-root {opts['--runs-root']}: no such folder")
    return opts["--runs-root"], opts["--out"]


def main(argv):
    try:
        parsed = parse(argv)
    except ValueError as e:
        print(f"bands: {e}", file=sys.stderr)
        return 2
    if parsed is None:
        print(__doc__.strip())
        return 0
    root, out = parsed
    try:
        written, skipped = record(root, out)
    except Malformed as e:
        print(f"bands: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"bands: cannot write into {out}: {e.strerror or e}", file=sys.stderr)
        return 2
    for word, preset, n in skipped:
        print(f"bands: {word}, preset {preset}: {n} finished run(s), fewer than "
              f"{F.BAND_MIN_RUNS}: not recorded")
    for path, n in written:
        print(f"bands: wrote {path} ({n} runs)")
    if not written:
        print(f"bands: no CPU model and preset has {F.BAND_MIN_RUNS} finished runs under "
              f"{root}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
