"""json_fuzz.py - malformed variants of a valid JSON file, made systematically, and a reader's
answer to each, for harness/tests/json_cases.py's fuzz cases.

variants(text) yields (what, text): the file cut at several offsets, the top level replaced,
and each value at the first two levels (a list: its first element) replaced by null, [], "x",
0 and NaN. outcome(main, argv) runs a reader's main in this process, as a user would run it,
and returns (exit status, stderr, traceback or None): an exception that escapes main is what
would have printed a traceback.
"""
import contextlib
import copy
import io
import json
import traceback

REPLACEMENTS = (None, [], "x", 0, float("nan"))


def _paths(doc, depth=2, prefix=()):
    """Paths (tuples of keys and indices) to every value at the first `depth` levels."""
    items = doc.items() if isinstance(doc, dict) else \
        enumerate(doc[:1]) if isinstance(doc, list) else ()
    for key, value in items:
        yield prefix + (key,)
        if depth > 1:
            yield from _paths(value, depth - 1, prefix + (key,))


def _replaced(doc, path, value):
    out = copy.deepcopy(doc)
    at = out
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return json.dumps(out)  # NaN written bare, as Python's json and older runs wrote it


def value_at(doc, dotted):
    """The value at a variant's dotted path (list indices as numbers), or None."""
    for key in dotted.split("."):
        if isinstance(doc, list) and key.isdigit() and int(key) < len(doc):
            doc = doc[int(key)]
        elif isinstance(doc, dict):
            doc = doc.get(key)
        else:
            return None
    return doc


def variants(text, depth=2):
    doc = json.loads(text)
    for cut in (0, 1, len(text) // 3, len(text) // 2, len(text) - 2):
        yield f"cut at {cut}", text[:cut]
    for value in REPLACEMENTS:
        yield f"top level {json.dumps(value)}", json.dumps(value)
    for path in _paths(doc, depth):
        for value in REPLACEMENTS:
            yield f"{'.'.join(map(str, path))} = {json.dumps(value)}", _replaced(doc, path, value)


def outcome(main, argv):
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 2
    except Exception:  # what a user would see as a traceback
        return None, err.getvalue(), traceback.format_exc(limit=-3)
    return rc, err.getvalue(), None


def judged(what, rc, err, tb):
    """None when the answer is a refusal (exit 2, one line on stderr, no traceback), else why
    not."""
    if tb:
        return f"{what}: traceback: {tb.strip().splitlines()[-1]}"
    if rc != 2 or len(err.strip().splitlines()) != 1:
        return f"{what}: exit {rc}, stderr {err.strip()[:200]!r}"
    return None
