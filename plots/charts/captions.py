"""Two sentences under each chart saying what to look at: drawn in the figure (so a slide or a
saved PNG keeps it) and exposed by `caption(stem)` for the report to set under the image."""

CAPTIONS = {
    "switch_cost": "Each dot is one operation's cost with its 95% whisker; the fastest switch and "
                   "call/chain are what C5 judges against the dashed PyCon figures. Compare the "
                   "user-space switches (a few ns) with the kernel hand-offs (microseconds).",
    "instructions": "Bars count user-space instructions per switch and per scheduler hop. A ring "
                    "hop is one switch, a star hop two: the ring's bar should be the lower.",
    "star_ring": "Solid lines (ring) should lie below dashed ones (star) at every fiber count. "
                 "The strip below shows the share of comparisons the ring wins, which C1 judges.",
    "sweep_throughput": "Follow thread's line: it rises with connections, peaks, then falls; "
                        "hollow points were limited by the load generator. The strip shows the "
                        "ratios C6 decides on, against their thresholds.",
    "sweep_p99": "Lower is better: the tail latency climbs as each model runs out of room. The "
                 "strip shows C7's figures: how far thread and fork fall at 10,000 connections.",
    "ramp_time": "How long it takes to connect every client and echo once. A steep climb means "
                 "the model pays per connection before serving any.",
    "engines": "Compare merged with naive: fewer epoll_ctl calls per request (middle) should "
               "buy more throughput (left). The strip shows C2's and C3's deciding figures.",
    "epoll_ctl_share": "The darkest part of each bar is the share of samples under epoll_ctl, "
                       "which merged removes. Read the percentage on it: naive spends it, "
                       "merged should not.",
    "rss_per_conn": "Left: memory per connection falls as connections share the server. Right: "
                    "user and kernel memory stacked per model, the total C8 judges for thread.",
    "slow_clients": "Slow clients hold connections open without traffic. Look for models whose "
                    "throughput or errors change when clients dawdle.",
    "handoff_scale": "Kernel thread hand-offs get dearer as contexts grow; fiber hand-offs stay "
                     "flat. The dashed curves are the logarithmic and linear fits C15 compares.",
    "copystack": "Left: a copy-stack resume costs more as the fiber keeps more live bytes. Right: "
                 "an idle fiber's memory, guarded against copy stacks, beside the 1 KiB aim.",
    "idle_scaling": "poll and select climb with idle connections; the epoll engines stay flat. "
                    "The strip shows the ratios C16 decides on, against its thresholds.",
    "epoll_ctl_scaling": "Left: an epoll_ctl pair's cost against registered fds, with a zoomed "
                         "axis so the small rise C14 tests is visible. Right: CPU per churned "
                         "connection with idle connections held, relative to none.",
    "completion": "Readiness (epoll, uring-poll) against completion (uring): throughput on the "
                  "left, kernel entries per request on the right. Fewer entries is the point.",
    "fiberio": "Each row is a server; the dashed lines are C13's marks and the bold row is the "
               "one C13 judges (the default fiber server). Compare it with epoll, the yardstick.",
    "peers": "Our fiber server beside the libraries people use. Shorter CPU bars and longer "
             "throughput bars are better; whiskers are 95% intervals.",
    "timers_cpu": "Bars near 1 mean a read timeout costs little over none. C17 judges the wheel "
                  "against rbtree at the larger level: see the strip and its 0.97 line.",
    "timers_lateness": "How late a 1 ms sleep wakes, per structure, beside cyclictest's floor. "
                       "The wheel rounds to its tick; the exact structures stay near the floor.",
    "timers_idle": "Only servers that woke while idle are drawn; the footnote names those that "
                   "never did. A tick-driven loop wakes about 1000 times a second.",
}


def caption(stem):
    """The chart's two sentences, or "" for a chart without one."""
    return CAPTIONS.get(stem, "")
