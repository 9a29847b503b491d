"""The experiment of harness/hooks_bench.py: hooked libc calls and the fiber locks."""
from experiments._step import Experiment, driver, full_only

# No verdict reads it; the quick suite spends its minutes on the figures verdicts use.
QUICK_WHY = "not run in the quick preset (no verdict reads it; about 15 s); the full preset does"

EXPERIMENT = Experiment(
    name="hooks",
    measures="ns and instructions per hooked call and lock pair, echo CPU per request with "
             "--io hooked against direct",
    claims=(),  # the report quotes it beside the claims; no verdict reads it
    binaries=("switch-bench", "hook-icount", "echo-server", "echo-load"),
    output="hooks.json",
    presets={"quick": [], "full": ["--rounds", "5", "--duration", "3", "--repetitions", "5"]},
    budget_s={"quick": 1, "full": 60},
    run=full_only(QUICK_WHY, driver("hooks_bench.py")),
)
