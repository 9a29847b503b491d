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


def load():
    """Every experiment in ORDER; ValueError when a file declares another name."""
    out = []
    for name in ORDER:
        exp = importlib.import_module(f"{__name__}.{name}").EXPERIMENT
        if exp.name != name:
            raise ValueError(f"harness/experiments/{name}.py declares {exp.name!r}")
        out.append(exp)
    return out
