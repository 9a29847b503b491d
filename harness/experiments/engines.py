"""The experiment of harness/engines_bench.py: the epoll engines under one fiber server."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="engines",
    measures="epoll_ctl per request and throughput of the fiber server on every epoll engine",
    claims=("C2", "C3"),
    binaries=("echo-server", "echo-load", "engine-info"),
    output="engines.json",
    presets={
        # 5 rounds of 0.3 s, merged twice a round (the A/A pair); the exact counts in the first.
        "quick": ["--rounds", "5", "--duration", "0.3", "--warmup", "0.15",
                  "--count-rounds", "1"],
        "full": ["--rounds", "5", "--duration", "2", "--sat-conns", "300", "--count-rounds", "3"],
    },
    budget_s={"quick": 46, "full": 240},
    # At least 3 rounds, up to the preset's while they fit (drive.budget.RoundGate).
    budgeted=True,
    run=driver("engines_bench.py"),
)
