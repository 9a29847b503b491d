"""The experiment of harness/fibermem.py: memory per idle fiber, guarded against copy stacks."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="fibermem",
    measures="PSS, RSS and memory maps per idle fiber with guarded and with copy stacks",
    claims=("C12",),
    binaries=("fiber-mem",),
    output="fibermem.json",
    presets={
        "quick": ["--levels", "100000,1000000", "--guarded-levels", "10000,30000"],
        "full": ["--levels", "100000,1000000", "--guarded-levels", "1000,10000,30000"],
    },
    budget_s={"quick": 6, "full": 5},
    run=driver("fibermem.py"),
    times=False,
)
