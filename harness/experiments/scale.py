"""The experiment of harness/engines_scale.py: idle connections, churn, readiness against
completion."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="scale",
    measures="server CPU per request under idle connections, churn rate, kernel entries per "
             "request by engine",
    claims=("C14", "C16"),
    binaries=("echo-server", "echo-load", "engine-info"),
    output="scale.json",
    presets={
        # Readiness against completion (shown, no verdict reads it) is the full preset's.
        "quick": ["--quick", "--parts", "idle,churn"],
        "full": ["--rounds", "5", "--duration", "1"],
    },
    budget_s={"quick": 40, "full": 600},
    # Each part runs at least 3 rounds, up to the preset's while they fit its share.
    budgeted=True,
    run=driver("engines_scale.py"),
)
