"""The experiment of harness/hooks_bench.py: hooked libc calls and the fiber locks."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="hooks",
    measures="ns and instructions per hooked call and lock pair, echo CPU per request with "
             "--io hooked against direct",
    claims=(),  # the report quotes it beside the claims; no verdict reads it
    binaries=("switch-bench", "hook-icount", "echo-server", "echo-load"),
    output="hooks.json",
    presets={
        "quick": ["--rounds", "2", "--duration", "0.5", "--warmup", "0.2", "--repetitions", "3",
                  "--min-time", "0.03", "--icount-loops", "1280,12800"],
        "full": ["--rounds", "5", "--duration", "3", "--repetitions", "5"],
    },
    estimate_s={"quick": 30, "full": 60},
    run=driver("hooks_bench.py"),
)
