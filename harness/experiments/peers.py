"""The experiment of harness/peers_bench.py: our fiber server beside the runtimes a reader would
pick instead (issue 28)."""
from experiments._step import Experiment, driver, write_json

FULL = ["--conns", "100,1000", "--rounds", "5", "--duration", "1", "--warmup", "0.3",
        "--count-requests", "30000", "--count-rounds", "1"]
# The quick suite measures the peers at 100 connections in fiberio's first round (one run
# each, beside the same fiber server); this step's rounds and intervals are the full preset's.
QUICK_WHY = ("not run in the quick preset: the peers at 100 connections are in fiberio's "
             "first round; the interleaved rounds with intervals are the full preset's")


def run(ctx, exp):
    if ctx.preset == "quick":
        write_json(ctx.dir / exp.output, {"experiment": exp.name, "meta": ctx.meta(),
                                          "status": "not run", "reason": QUICK_WHY})
        return "not run: " + QUICK_WHY
    return driver("peers_bench.py")(ctx, exp)


EXPERIMENT = Experiment(
    name="peers",
    measures="server CPU per request, throughput and kernel entries per request of the fiber "
             "server beside every callback peer (epoll, libevent, libuv, libev) and coroutine "
             "peer (asio-coro, pth), at 100 and 1,000 connections",
    claims=(),  # the report's peers section reads it; C13's rule is unchanged
    binaries=("echo-server", "echo-load"),
    output="peers.json",
    presets={"quick": [], "full": FULL},  # quick: not run (run() above)
    estimate_s={"quick": 1, "full": 240},
    run=run,
)
