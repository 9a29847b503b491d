"""The sweep: echo servers x load modes x concurrency. Its driver is the library's sweep
(lib/sweep.py), which experiments/slow.py runs too:

    python3 -m experiments.sweep --help
"""
import sys

from experiments._step import Experiment, driver
from lib import sweep

# The models the claims name (C6, C7: thread and fork; the fiber server and the callback
# yardsticks beside them); the full preset sweeps every model.
QUICK_MODELS = "thread,fork,fiber,libevent,epoll"
# What the quick preset's verdicts read: thread and fork with persistent connections from 1 to
# 10,000 (C6's rise and collapse, C7's 10,000 against 1,000, C8's memory per connection at the
# largest level) and with churn from 1 to 1,000 (C6 in its second mode). Thread's persistent
# connections also run at 500 and 5,000: at 100, and at times 10,000, echo-load saturates its
# core, and those points leave throughput; without an ok level past the peak C6 cannot say
# whether thread collapses (the full run, 2-core Xeon VM: peak at 500, 0.44 of it at 5,000).
# Every point is 5 echo-load runs (the interval of its median).
QUICK_PLAN = ("thread/pingpong/1,100,500,1000,5000,10000;fork/pingpong/1,100,1000,10000;"
              "thread,fork/churn/1,100,1000")
# The yardsticks at 10,000 persistent connections, drawn beside thread and fork in the sweep's
# charts and listed under C7; no verdict reads them, so they run while the budget lasts.
QUICK_OPTIONAL = "fiber,libevent,epoll/pingpong/10000"
# The full preset: the models the claims read from 1 to 10,000 connections in both modes,
# every other model (prefork, threadpool, uring, the peers) at four levels. Sweeping all twelve
# at nine levels took 2,000 s of the 75 minutes the full preset has; the claims read none of
# the points left out.
FULL_PLAN = (QUICK_MODELS + "/pingpong,churn/1,10,100,500,1000,2000,5000,10000;"
             "*/pingpong,churn/1,100,1000,10000")

EXPERIMENT = Experiment(
    name="sweep",
    measures="throughput, latency, ramp-up, and process and kernel memory of every server "
             "model under ping-pong and churn, 1 to 10,000 connections",
    claims=("C6", "C7", "C8"),
    binaries=("echo-server", "echo-load"),
    output="sweep.json",
    presets={
        "quick": ["--plan", QUICK_PLAN, "--optional-plan", QUICK_OPTIONAL, "--repeat", "5",
                  "--duration", "0.3",
                  "--warmup", "0.2", "--idle-samples", "2"],
        "full": ["--plan", FULL_PLAN, "--repeat", "5", "--duration", "0.6", "--warmup", "0.3"],
    },
    budget_s={"quick": 82, "full": 900},
    budgeted=True,
    # At its least: the first points (results/notes/harness.md).
    least_s={"quick": 10},
    run=driver(),
)


if __name__ == "__main__":
    sys.exit(sweep.main())
