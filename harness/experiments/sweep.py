"""The experiment of harness/sweep.py: echo servers x load modes x concurrency."""
from experiments._step import Experiment, driver

# The models the claims name (C6, C7: thread and fork; the fiber server and the callback
# yardsticks beside them); the full preset sweeps every model.
QUICK_MODELS = "thread,fork,fiber,libevent,epoll"

EXPERIMENT = Experiment(
    name="sweep",
    measures="throughput, latency, ramp-up, and process and kernel memory of every server "
             "model under ping-pong and churn, 1 to 10,000 connections",
    claims=("C6", "C7", "C8"),
    binaries=("echo-server", "echo-load"),
    output="sweep.json",
    presets={
        "quick": ["--models", QUICK_MODELS, "--levels", "1,100,1000,10000", "--duration", "1",
                  "--warmup", "0.3", "--idle-samples", "3"],
        "full": ["--duration", "5", "--warmup", "1"],
    },
    estimate_s={"quick": 100, "full": 1550},
    run=driver("sweep.py"),
)
