"""The experiment of harness/peers_bench.py: our fiber server beside the runtimes a reader would
pick instead (issue 28)."""
from experiments._step import Experiment, driver, full_only

FULL = ["--conns", "100,1000", "--rounds", "5", "--duration", "1", "--warmup", "0.3",
        "--count-requests", "30000", "--count-rounds", "1"]
# Five rounds of seven servers at two levels take about 4 minutes: more than the quick suite
# has. The full preset measures the peers here and in fiberio.
QUICK_WHY = ("not run in the quick preset (about 4 minutes); the full preset measures the "
             "peers here and in fiberio")


EXPERIMENT = Experiment(
    name="peers",
    measures="server CPU per request, throughput and kernel entries per request of the fiber "
             "server beside every callback peer (epoll, libevent, libuv, libev) and coroutine "
             "peer (asio-coro, pth), at 100 and 1,000 connections",
    claims=(),  # the report's peers section reads it; C13's rule is unchanged
    binaries=("echo-server", "echo-load"),
    output="peers.json",
    presets={"quick": [], "full": FULL},  # quick: not run
    budget_s={"quick": 1, "full": 240},
    run=full_only(QUICK_WHY, driver("peers_bench.py")),
)
