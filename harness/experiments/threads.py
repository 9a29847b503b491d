"""The experiment of harness/threads_scale.py: the fiber server with 1 against 2 scheduler
threads."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="threads",
    measures="throughput and server CPU of the fiber server with 1 and 2 scheduler threads",
    claims=("C11",),
    binaries=("echo-server", "echo-load"),
    output="threads.json",
    presets={
        # Every round also runs t1-shared a second time: the A/A pair.
        "quick": ["--rounds", "5", "--duration", "0.4", "--warmup", "0.2"],
        "full": ["--rounds", "5", "--duration", "2"],
    },
    budget_s={"quick": 16, "full": 70},
    # At least 3 rounds, up to the preset's while they fit (drive.budget.RoundGate).
    budgeted=True,
    run=driver("threads_scale.py"),
)
