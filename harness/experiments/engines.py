"""The experiment of harness/engines_bench.py: the epoll engines under one fiber server."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="engines",
    measures="epoll_ctl per request and throughput of the fiber server on every epoll engine",
    claims=("C2", "C3"),
    binaries=("echo-server", "echo-load", "engine-info"),
    output="engines.json",
    presets={
        "quick": ["--rounds", "1", "--duration", "1", "--warmup", "0.3"],
        "full": ["--rounds", "5", "--duration", "3", "--sat-conns", "300"],
    },
    estimate_s={"quick": 25, "full": 240},
    run=driver("engines_bench.py"),
)
