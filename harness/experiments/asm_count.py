"""The experiment of harness/asm_count.py: instructions per switch read from the assembly."""
from experiments._step import Experiment, counted

EXPERIMENT = Experiment(
    name="asm_count",
    measures="instructions per switch counted from each architecture's assembly: exact, and "
             "needing no hardware of that architecture",
    claims=(),  # the report's architecture section reads it; no verdict does
    binaries=(),
    output="asm_count.json",
    budget_s={"quick": 2, "full": 5},
    run=counted("asm_count.py", lambda ctx: [], timeout=300),
    times=False,
)
