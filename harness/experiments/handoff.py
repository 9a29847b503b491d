"""The experiment of harness/handoff.py: kernel threads against fibers handing off on one CPU."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="handoff",
    measures="CPU time per hand-off, m kernel threads against m fibers in pairs on one CPU",
    claims=("C15",),
    binaries=("handoff-scale",),
    output="handoff.json",
    presets={
        "quick": ["--levels", "2,16,256,2048", "--rounds", "5", "--seconds", "0.15"],
        "full": ["--levels", "2,4,16,64,256,1024,4096,10000", "--rounds", "5",
                  "--seconds", "1"],
    },
    estimate_s={"quick": 15, "full": 100},
    run=driver("handoff.py"),
)
