"""The experiment of harness/sweep.py in slow mode: slow clients against every model."""
from experiments._step import Experiment, driver
from experiments.sweep import QUICK_MODELS

# The slow clients' pace, the same in both presets: 64 B requests in 16 B chunks 20 ms apart
# (60 ms to send one), then half a second of thinking.
SLOW_LOAD = "--chunk 16 --chunk-delay 0.02 --think 0.5"

EXPERIMENT = Experiment(
    name="slow",
    measures="throughput and latency of every server model under slow clients (requests sent "
             "in chunks, a think time between them)",
    claims=(),  # the report's slow-client section reads it; no verdict does
    binaries=("echo-server", "echo-load"),
    output="slow.json",
    presets={
        "quick": ["--models", QUICK_MODELS, "--modes", "slow", "--levels", "10,1000",
                  "--duration", "0.7", "--warmup", "0.3", "--idle-samples", "2", "--load-args",
                  SLOW_LOAD, "--no-perf"],
        # Every model (the peers too) at three levels: about 7 s a point, 35 points.
        "full": ["--modes", "slow", "--levels", "10,1000,10000", "--duration", "3",
                 "--warmup", "1", "--load-args", SLOW_LOAD],
    },
    estimate_s={"quick": 20, "full": 250},
    run=driver("sweep.py"),
)
