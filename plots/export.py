#!/usr/bin/python3
"""export.py - every JSON file of a run folder, also as CSV beside it (NAME.json -> NAME.csv).

    /usr/bin/python3 plots/export.py RUN_FOLDER

One row per measurement: each element of a top-level list of objects (a sweep point, a
benchmark row, an engine run) and each entry of a top-level object of objects (an engine's
summary, a backend's properties, a suite step) is a row; the file's remaining top-level
scalars make one first row. The columns `table` (the top-level key the row came from) and
`key` (its index or name) say which; nested fields become dotted column names
(`load.latency_us.p99`), lists of scalars are joined with ';', lists of objects stay JSON
text. `meta` blocks are left out (they describe the run, not a measurement). The layout
follows the JSON, so a file added to the suite exports without code here; its fields and
units are documented in results/README.md.
"""
import csv
import json
import sys
from pathlib import Path


def flatten(obj, prefix="", out=None):
    out = {} if out is None else out
    for k, v in obj.items():
        if k == "meta":
            continue
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            flatten(v, name + ".", out)
        elif isinstance(v, list):
            if all(not isinstance(x, (dict, list)) for x in v):
                out[name] = ";".join("" if x is None else str(x) for x in v)
            else:
                out[name] = json.dumps(v, separators=(",", ":"))
        else:
            out[name] = v
    return out


def records(doc):
    """[(table, key, {column: value})] for one JSON document."""
    top, rows = {}, []
    for k, v in doc.items():
        if k == "meta":
            continue
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            rows += [(k, str(i), flatten(x)) for i, x in enumerate(v)]
        elif isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            rows += [(k, name, flatten(x)) for name, x in v.items()]
        elif isinstance(v, dict):
            flatten(v, k + ".", top)
        else:
            flatten({k: v}, "", top)
    return ([("", "", top)] if top else []) + rows


def write_csv(json_path, csv_path=None):
    doc = json.loads(Path(json_path).read_text())
    if not isinstance(doc, dict):
        raise ValueError("top level is not an object")
    rows = records(doc)
    cols = []
    for _, _, r in rows:
        cols += [c for c in r if c not in cols]
    csv_path = Path(csv_path or Path(json_path).with_suffix(".csv"))
    tmp = csv_path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["table", "key"] + cols)
        for table, key, r in rows:
            w.writerow([table, key] + ["" if r.get(c) is None else r[c] for c in cols])
    tmp.replace(csv_path)
    return len(rows)


# Written by the report from the measurements, not measured: no CSV (it would lag one report
# behind, since the CSV files are written before the verdicts).
REPORT_OUTPUTS = {"verdicts.json"}


def write_all(folder):
    """Writes NAME.csv beside every NAME.json of the folder but the report's own outputs;
    {file: status}."""
    status = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name in REPORT_OUTPUTS:
            continue
        try:
            status[path.name] = f"{write_csv(path)} rows -> {path.with_suffix('.csv').name}"
        except (OSError, ValueError) as e:
            status[path.name] = f"not exported: {e}"
    return status


def main(argv):
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: export.py RUN_FOLDER", file=sys.stderr)
        return 2
    for name, st in write_all(argv[0]).items():
        print(f"export: {name}: {st}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
