"""The sweep in slow mode (--modes slow): slow clients against every model. Its driver is the
library's sweep (lib/sweep.py), which experiments/sweep.py runs too:

    python3 -m experiments.slow --help
"""
import sys

from experiments._step import Experiment, driver, full_only
from lib import sweep

# The slow clients' pace, the same in both presets: 64 B requests in 16 B chunks 20 ms apart
# (60 ms to send one), then half a second of thinking.
SLOW_LOAD = "--chunk 16 --chunk-delay 0.02 --think 0.5"
# No verdict reads it; the quick suite spends its minutes on the figures verdicts use.
QUICK_WHY = ("not run in the quick preset (no verdict reads it; about 15 s); the full preset "
             "does")

EXPERIMENT = Experiment(
    name="slow",
    measures="throughput and latency of every server model under slow clients (requests sent "
             "in chunks, a think time between them)",
    claims=(),  # the report's slow-client section reads it; no verdict does
    binaries=("echo-server", "echo-load"),
    output="slow.json",
    presets={
        "quick": [],
        # Every model (the peers too) at three levels: about 7 s a point, 35 points.
        "full": ["--modes", "slow", "--levels", "10,1000,10000", "--duration", "3",
                 "--warmup", "1", "--load-args", SLOW_LOAD],
    },
    # Full: 322 s in the full run on the AMD EPYC VM (e361cd3, 2026-12-05).
    budget_s={"quick": 1, "full": 330},
    run=full_only(QUICK_WHY, driver()),
)


if __name__ == "__main__":
    sys.exit(sweep.main())
