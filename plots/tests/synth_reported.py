#!/usr/bin/python3
"""The full synthetic run (synth.full) reported as `./run.sh report` reports a run, every chart
drawn, made once for the tests that read it (charts, page, browser): drawing the charts is
most of each of those tests' time, and they would draw the same ones three times.

    synth_reported.py FOLDER     make it in FOLDER (emptied first): CTest's fixture
                                 plots/synthetic-report

reported(dest) gives a test its own copy in dest: of $SWITCHYARD_SYNTH_REPORTED's folder when
the fixture made one, else made in dest (a test run by hand). report.log holds what the report
printed."""
import io
import os
import shutil
import sys
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import report  # noqa: E402
import synth  # noqa: E402

ENV = "SWITCHYARD_SYNTH_REPORTED"
LOG = "report.log"


def make(folder):
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    synth.full(folder)
    out = io.StringIO()
    with redirect_stdout(out):
        rc = report.main([str(folder), "--no-reference"])
    if rc != 0:
        raise SystemExit(f"synth_reported.py: report.py exited {rc} on the synthetic run:\n"
                         f"{out.getvalue()}")
    (folder / LOG).write_text(out.getvalue())
    return folder


def reported(dest):
    """dest holding the reported synthetic run (dest emptied first)."""
    dest = Path(dest)
    made = os.environ.get(ENV)
    if not made:
        return make(dest)
    if not (Path(made) / LOG).is_file():
        raise SystemExit(f"synth_reported.py: ${ENV} names {made}, which holds no reported "
                         "run (did the fixture plots/synthetic-report fail?)")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(made, dest)
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print("usage: synth_reported.py FOLDER", file=sys.stderr)
        sys.exit(2)
    make(sys.argv[1])
    print(f"synth_reported.py: made {sys.argv[1]}")
