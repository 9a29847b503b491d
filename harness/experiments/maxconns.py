"""The experiment of harness/maxconns.py: the most connections a fiber server holds on one
core."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="maxconns",
    measures="connections held by fiber worker processes pinned to one CPU, and their memory "
             "per connection",
    claims=("C8", "C10"),
    binaries=("echo-server", "echo-load"),
    output="maxconns.json",
    presets={
        "quick": ["--levels", "100000", "--stacks", "copy", "--duration", "2", "--rate", "1000"],
        "full": ["--levels", "1000,10000,19900,100000", "--duration", "5", "--rate", "2000"],
    },
    budget_s={"quick": 11, "full": 70},
    run=driver("maxconns.py"),
)
