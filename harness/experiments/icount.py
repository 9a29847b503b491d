"""The experiment of harness/icount.py: instructions counted by callgrind."""
from experiments._step import Experiment, counted

EXPERIMENT = Experiment(
    name="icount",
    measures="callgrind instructions per switch, create and hop of every switch backend",
    claims=("C1", "C5"),
    binaries=("switch-icount",),
    output="icount.json",
    estimate_s={"quick": 10, "full": 10},
    run=counted("icount.py", lambda ctx: ["--bin", ctx.bin], timeout=900),
)
