"""The experiment of harness/timers_bench.py: timer structures where servers use them."""
from experiments._step import Experiment, driver

EXPERIMENT = Experiment(
    name="timers",
    measures="echo CPU per request with a read timeout per timer structure beside none, idle "
             "wake-ups per second per server model and engine (1 ms poll tick against a "
             "deadline-driven wait), sleep lateness per structure beside cyclictest's",
    claims=("C17",),
    binaries=("echo-server", "echo-load", "engine-info", "timer-info", "timer-lateness"),
    output="timers.json",
    presets={
        # Three idle servers for 0.5 s each; 5 rounds of 100 sleeps of 1 ms per structure, so
        # that the lateness C17 judges has an interval: about 15 s. The servers' CPU with read
        # timeouts is the full preset's: C17 judges it from 1,000 connections up.
        "quick": ["--parts", "idle,lateness", "--idle-window", "0.5",
                  "--idle-variants", "epoll,fiber,fiber --poll-tick 1",
                  "--sleeps", "100", "--lateness-rounds", "5"],
        "full": ["--rounds", "5", "--duration", "1", "--conns", "100,10000",
                 "--idle-window", "2", "--idle-rounds", "2", "--sleeps", "1000",
                 "--lateness-rounds", "5"],
    },
    budget_s={"quick": 10, "full": 360},
    run=driver("timers_bench.py"),
)
