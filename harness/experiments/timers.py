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
        # At 100 connections, 3 rounds of 0.2 s of the seeds' structures (heap: libuv's and
        # today's default, rbtree: NtyCo's, wheel: libco's) beside none, without the A/A pair
        # (shown: C17 judges the server's cost from 1,000 connections up); three idle servers
        # for 0.5 s each; 5 rounds of 100 sleeps of 1 ms per structure, so that the lateness
        # C17 judges has an interval: about 20 s.
        "quick": ["--rounds", "3", "--duration", "0.2", "--warmup", "0.1", "--no-aa",
                  "--cpu-timers", "heap,rbtree,wheel", "--idle-window", "0.5",
                  "--idle-variants", "epoll,fiber,fiber --poll-tick 1",
                  "--sleeps", "100", "--lateness-rounds", "5"],
        "full": ["--rounds", "5", "--duration", "1", "--conns", "100,10000",
                 "--idle-window", "2", "--idle-rounds", "2", "--sleeps", "1000",
                 "--lateness-rounds", "5"],
    },
    estimate_s={"quick": 20, "full": 360},
    run=driver("timers_bench.py"),
)
