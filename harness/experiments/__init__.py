"""The suite's experiments, in the order it runs them: one name a line, each one module here
(<name>.py: its declaration, EXPERIMENT, and its driver, run as `python3 -m experiments.<name>`).
A new experiment is a new module and one line below; the suite, ./run.sh's step list and
--only's check all read this list. What two drivers share lives in lib/, never in a driver.

The order keeps the harness out of its own measurements: the steps that time microseconds
and nanoseconds (switch ... instruments) run before the ones that leave ten thousand threads,
processes or connections behind them (handoff, the sweep, maxconns), whose wake (memory the
kernel is still freeing, cold caches) outlasts the runnable count the suite waits on."""
import importlib

ORDER = """
switch
icount
props
asm_count
switch_emulated
engines
scale
fiberio
peers
timers
hooks
instruments
threads
handoff
fibermem
sweep
slow
maxconns
""".split()

# The steps a run leaves out, first to last, when on a slow machine the steps still to come
# cannot keep to the run's total even at their least (lib/budget.SuitePlan): the most seconds
# for the claims a step alone decides go first. handoff decides C15 alone (17 s at its least on
# the 2-core AMD EPYC VM), maxconns C10 (14 s; the sweep also measures C8's memory), threads
# C11 (12 s), timers C17 beside icount's counts (11 s), fibermem C12 beside props (7 s).
SHED = """
handoff
maxconns
threads
timers
fibermem
""".split()


def load():
    """Every experiment in ORDER; ValueError when a file declares another name."""
    out = []
    for name in ORDER:
        exp = importlib.import_module(f"{__name__}.{name}").EXPERIMENT
        if exp.name != name:
            raise ValueError(f"harness/experiments/{name}.py declares {exp.name!r}")
        out.append(exp)
    return out
