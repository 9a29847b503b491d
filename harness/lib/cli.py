"""The flags every driver shares and its JSON output."""
import argparse
import functools
import sys

from lib import meta


def positive(text):
    """argparse type: a number greater than 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def parser(prog, doc, rounds=None, duration=None, warmup=None, pin=True, budget=False):
    """An ArgumentParser with --build-dir and --out-file; --rounds, --duration and --warmup when
    given a default; --server-cpu and --load-cpu (server on CPU 0, load on CPU 1) when pin;
    --budget-s when budget (the driver then runs at least 3 of its --rounds, more while they
    fit: lib.budget.RoundGate)."""
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0],
                                 epilog="Progress goes to standard output when --out-file is "
                                        "given, else to standard error.")
    ap.add_argument("--build-dir", default=str(meta.REPO_ROOT / "build"),
                    help="where bin/ holds the programs (default: build/)")
    ap.add_argument("--out-file", metavar="FILE",
                    help="write the JSON here (default: standard output)")
    if rounds is not None:
        ap.add_argument("--rounds", type=int, default=rounds,
                        help=f"interleaved rounds (default {rounds})")
    if duration is not None:
        ap.add_argument("--duration", type=float, default=duration,
                        help=f"measured seconds per run (default {duration})")
    if warmup is not None:
        ap.add_argument("--warmup", type=float, default=warmup,
                        help=f"warm-up seconds per run, left out of every figure "
                             f"(default {warmup})")
    if budget:
        ap.add_argument("--budget-s", type=positive, default=None, metavar="S",
                        help="seconds the whole run may take: at least 3 rounds, then more up "
                             "to --rounds while they fit (default: no budget, every round)")
    if pin:
        ap.add_argument("--server-cpu", default="0", help="CPU list of the server (default 0)")
        ap.add_argument("--load-cpu", default="1", help="CPU list of echo-load (default 1)")
    return ap


def counts(text):
    """argparse type: a comma list of whole numbers of at least 1 ("1,10,100")."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"want whole numbers, got {text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"want numbers of at least 1, got {text!r}")
    return out


def reporter(a):
    """print() for progress and tables: standard output when the JSON goes to a file, standard
    error when the JSON takes standard output."""
    return functools.partial(print, file=sys.stdout if a.out_file else sys.stderr, flush=True)


def emit(doc, a, prog):
    """The driver's result, to --out-file (with `PROG: wrote FILE`) or standard output."""
    meta.emit_json(doc, a.out_file, prog)
