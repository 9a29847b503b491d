"""regress_files.py - reading the regression gate's JSON files, refusing what the gate cannot
judge: the counts baseline, a CPU model's timing baseline and a stored measurement.

Each reader returns the document or raises Malformed with one line naming the file and what
is wrong. A file the gate would read as empty (no rows, a null where samples belong) must not
pass as "every row is new": a baseline that judges nothing is refused, as are non-finite or
non-positive samples, which no median or ratio survives. NaN and Infinity are not JSON
(RFC 8259) and are refused as such.
"""
import json
import math
import re
from pathlib import Path


class Malformed(ValueError):
    """One line: the file and what is wrong with it."""


def _refuse_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def load_object(path):
    """The file's top-level object; Malformed when it is unreadable, not JSON or not an
    object."""
    try:
        doc = json.loads(Path(path).read_text(), parse_constant=_refuse_constant)
    except OSError as e:
        raise Malformed(f"{path}: cannot read ({e.strerror or e})") from None
    except (ValueError, RecursionError) as e:
        raise Malformed(f"{path}: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise Malformed(f"{path}: malformed (the top level is {kind(doc)}, not an object)")
    return doc


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), "a number")


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _object(path, doc, where, empty_ok=False):
    value = doc
    for part in where.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if not isinstance(value, dict):
        raise Malformed(f"{path}: '{where}' must be an object, not {kind(value)}")
    if not value and not empty_ok:
        raise Malformed(f"{path}: '{where}' has no rows")
    return value


def _numbers(path, block, where, positive):
    for row, value in block.items():
        if not is_number(value) or (positive and value <= 0) or value < 0:
            raise Malformed(f"{path}: '{where}' row {row} must be a finite "
                            f"{'positive' if positive else 'non-negative'} number, not "
                            f"{value if is_number(value) else kind(value)}")


# The IO path's figures in counts.json (gate/iopath.py): the block, the figure's name in a row
# (iopath/CONFIG/NAME), iopath's key for it, and its unit.
IO_FIGURES = (("io_instructions", "instructions", "instructions_per_request",
               "instructions per request"),
              ("io_syscalls", "syscalls", "syscalls_per_request", "system calls per request"),
              ("io_epoll_ctl", "epoll_ctl", "epoll_ctl_per_request", "epoll_ctl per request"),
              ("io_lines", "lines", "lines_per_request", "own cache lines per request"))


def _counts(path, doc):
    counts = _object(path, doc, "counts")
    _numbers(path, _object(path, doc, "counts.instructions"), "counts.instructions", True)
    for name in ("switches_per_hop", "syscalls_per_switch", "cache_misses",
                 *(block for block, _, _, _ in IO_FIGURES)):
        if name in counts:
            block = _object(path, doc, "counts." + name, empty_ok=True)
            _numbers(path, block, "counts." + name, False)
    for row in counts.get("switches_per_hop", {}):
        parts = row.split("/")
        if len(parts) < 2 or parts[1] not in ("star", "ring"):
            raise Malformed(f"{path}: 'counts.switches_per_hop' row {row} is not a star or "
                            f"ring hop")


def _cpu(path, doc):
    cpu = _object(path, doc, "cpu")
    for name in ("key", "model"):
        if not isinstance(cpu.get(name), str) or not cpu[name]:
            raise Malformed(f"{path}: 'cpu.{name}' must be a non-empty string, not "
                            f"{kind(cpu.get(name))}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", cpu["key"]):
        raise Malformed(f"{path}: 'cpu.key' {cpu['key'][:40]!r} is not a file name word "
                        f"(lower case letters, digits and '-')")


def _timing(path, doc, reference_rows):
    samples = _object(path, doc, "timing.samples")
    for row, per in samples.items():
        if not isinstance(per, list) or not per:
            raise Malformed(f"{path}: timing row {row} must be a non-empty list of "
                            f"processes, not {kind(per) if per != [] else 'an empty list'}")
        for times in per:
            if not isinstance(times, list) or not times or \
                    not all(is_number(t) and t > 0 for t in times):
                raise Malformed(f"{path}: timing row {row} holds a process that is not a "
                                f"non-empty list of finite positive times")
    missing = [r for r in reference_rows if r not in samples]
    if missing or len(samples) <= len(reference_rows):
        raise Malformed(f"{path}: timing samples need the reference rows "
                        f"{', '.join(reference_rows)} and at least one other row")


def _header(path, doc, want):
    """The kind regress.py writes, and the meta block naming the commit measured."""
    if doc.get("kind") != want:
        raise Malformed(f"{path}: 'kind' must be {want}, not {str(doc.get('kind'))[:40]}")
    meta = _object(path, doc, "meta", empty_ok=True)
    if not isinstance(meta.get("git_sha"), str):
        raise Malformed(f"{path}: 'meta.git_sha' must be a string, not {kind(meta.get('git_sha'))}")


def counts_baseline(path):
    doc = load_object(path)
    _header(path, doc, "switchyard-regress-counts")
    _counts(path, doc)
    return doc


def timing_baseline(path, reference_rows):
    doc = load_object(path)
    _header(path, doc, "switchyard-regress-timing")
    _cpu(path, doc)
    _timing(path, doc, reference_rows)
    return doc


def measurement(path, reference_rows):
    doc = load_object(path)
    _header(path, doc, "switchyard-regress")
    _cpu(path, doc)
    _counts(path, doc)
    _timing(path, doc, reference_rows)
    for why in ("syscalls_not_run", "iopath_not_run"):
        if why in doc["counts"] and not isinstance(doc["counts"][why], str):
            raise Malformed(f"{path}: 'counts.{why}' must be a string")
    _paired(path, doc, reference_rows)
    return doc


def _paired(path, doc, reference_rows):
    """The optional base build's timing measured beside the head's (regress_paired.py)."""
    if "paired_not_run" in doc and not isinstance(doc["paired_not_run"], str):
        raise Malformed(f"{path}: 'paired_not_run' must be a string, not "
                        f"{kind(doc['paired_not_run'])}")
    if "paired" not in doc:
        return
    paired = _object(path, doc, "paired")
    if not isinstance(paired.get("base_sha"), str) or not paired["base_sha"]:
        raise Malformed(f"{path}: 'paired.base_sha' must be a non-empty string, not "
                        f"{kind(paired.get('base_sha'))}")
    _timing(path, paired, reference_rows)
