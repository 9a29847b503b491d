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
        "quick": ["--quick"],
        "full": ["--rounds", "5", "--duration", "1"],
    },
    estimate_s={"quick": 55, "full": 600},
    run=driver("engines_scale.py"),
)
