"""The experiment of harness/instruments.py: perf bench and a minimal switch loop beside ours."""
from experiments._step import Experiment, driver, full_only

# No verdict reads it, and on a 2-core AMD EPYC VM its quick preset took 32 s (8 s on the
# Intel Xeon VM it was sized on): the quick suite spends its minutes on the figures verdicts use.
QUICK_WHY = ("not run in the quick preset (no verdict reads it; 8 to 32 s); the full preset "
             "does")

EXPERIMENT = Experiment(
    name="instruments",
    measures="independent instruments beside C5, C9 and C15's figures (no verdict): perf "
             "bench sched pipe (one CPU), perf bench syscall basic, a minimal switch loop",
    # Set beside the claims' figures in a section of their own; no verdict reads them.
    claims=(),
    binaries=("minimal-switch-loop",),
    output="instruments.json",
    presets={
        "quick": ["--rounds", "5", "--pipe-loops", "50000", "--syscall-loops", "1000000",
                  "--switch-loops", "1000000"],
        "full": ["--rounds", "10", "--pipe-loops", "200000", "--syscall-loops", "5000000",
                 "--switch-loops", "2000000"],
    },
    budget_s={"quick": 1, "full": 30},
    run=full_only(QUICK_WHY, driver("instruments.py", timeout=300)),
)
