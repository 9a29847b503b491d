"""Whether a point of so many connections fits this machine: fds, pids, memory maps and memory,
checked before it runs, so a point that would exceed a limit is recorded with the reason
instead of being shrunk or crashing the machine."""
from lib import meta

FD_MARGIN = 64        # fds a server keeps besides its connections (listener, epoll, stdio ...)
TASK_MARGIN = 512     # pids left free for the rest of the machine
MAP_MARGIN = 1000     # memory maps a process has besides per-connection stacks
MEM_FRACTION = 0.8    # share of MemAvailable a point may expect to use
# Resident memory per connection assumed before a model has been measured (KiB), by the
# model's declared concurrency. Deliberately generous; after the first point the measured
# figure is used instead.
RSS_GUESS_KB = {"thread-per-connection": 128, "process-per-connection": 1024,
                "process-pool": 1024, "thread-pool": 16, "fiber-per-connection": 128,
                "event-loop": 16}
# Kernel tasks per connection, by declared concurrency: these models meet the pid limits.
TASK_PER_CONN = {"thread-per-connection": "threads", "process-per-connection": "processes",
                 "process-pool": "processes"}
# A guarded stack (two memory maps) per connection.
STACK_PER_CONN = ("thread-per-connection", "fiber-per-connection")


def limit_verdict(concurrency, conns, limits, rss_per_conn_kb):
    """None if the point fits this machine, else the reason it is not run."""
    if conns + FD_MARGIN > limits["nofile_hard"]:
        return (f"fds: {conns} connections + {FD_MARGIN} exceed the server's RLIMIT_NOFILE "
                f"({limits['nofile_hard']})")
    if concurrency in TASK_PER_CONN:
        cap = min(x for x in (limits["pid_max"], limits["threads_max"], limits["nproc"]) if x)
        used = meta.tasks_in_use() or 0
        if conns + used + TASK_MARGIN > cap:
            return (f"pids: {conns} {TASK_PER_CONN[concurrency]} + "
                    f"{used} tasks alive + {TASK_MARGIN} spare exceed pid_max/threads-max "
                    f"({cap})")
    if concurrency in STACK_PER_CONN:
        # Each guarded stack is two mappings (stack and guard page).
        maps = 2 * conns + MAP_MARGIN
        if limits["max_map_count"] and maps > limits["max_map_count"]:
            return (f"memory maps: {conns} guarded stacks need ~{maps} maps, "
                    f"vm.max_map_count is {limits['max_map_count']}")
    avail = meta.meminfo_kb("MemAvailable")
    need = conns * rss_per_conn_kb
    if avail and need > MEM_FRACTION * avail:
        return (f"memory: ~{need // 1024} MiB expected ({rss_per_conn_kb} KiB per connection) "
                f"exceeds {int(MEM_FRACTION * 100)}% of MemAvailable ({avail // 1024} MiB)")
    return None
