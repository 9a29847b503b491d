"""The experiment of harness/handoff.py: kernel threads against fibers handing off on one CPU."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="handoff",
    measures="CPU time per hand-off, m kernel threads against m fibers in pairs on one CPU",
    claims=("C15",),
    binaries=("handoff-scale",),
    output="handoff.json",
    presets={
        # The full preset's ends (2 and 10,000): up to 2,048 neither of the two shapes C15
        # weighs fits better (R^2 linear minus logarithmic about 0, intervals from -0.05 to
        # 0.10 in two quick runs), and the rise past 4,096 is what tells them apart (0.24 with
        # 10,000 in place of 2,048, one run here; the full run 0.28).
        "quick": ["--levels", "2,16,256,10000", "--rounds", "5", "--seconds", "0.15"],
        "full": ["--levels", "2,4,16,64,256,1024,4096,10000", "--rounds", "5",
                  "--seconds", "1"],
    },
    budget_s={"quick": 20, "full": 100},
    budgeted=True,
    run=driver("handoff.py"),
)
