"""The calibration probe: a short, fixed piece of CPU work and a loopback round trip, timed.
Taken at the start of a run and again before every step that times, it tells whether the
machine is back to the state the run started in. The runnable count alone does not: minutes
after ten thousand threads and processes have exited the kernel is still freeing their memory
and the caches are cold, and a step measured then reads its figures through the wake of the
step before it (on a 2-core AMD EPYC VM the fiber server made 2.52 instead of 2.02 system
calls per request minutes after a quick run's sweep).

    take()                         {"cpu_ms": ..., "rtt_us": ...}: medians of a few tries
    wait_calibrated(start, ...)    probes until both are within `tolerance` of start's (or a
                                   timeout): (seconds waited, the last probe, settled)
"""
import os
import socket
import statistics
import time

from lib.cpu import this_process_on

CPU_LOOP = 200_000   # iterations of the fixed loop: about 5-10 ms of one core
# A start so unsettled that its probes spread wider than this still catches a wake of
# ten thousand threads (1.6x after the full run's scale step on the AMD EPYC VM).
MAX_TOLERANCE = 0.5
RTT_TRIPS = 200      # loopback round trips of 64 bytes per try
TRIES = 5
TOLERANCE = 0.08     # slower than the start by more than this: not back yet, unless the
                     # starting probes moved more among themselves (reference())
# A figure that moves more on a calm machine than three takes a second apart show: on the AMD
# EPYC VM the round trip read up to 1.24x the start's (p90) before steps that leave nothing
# behind, while a run's three starting takes agreed within 4%; held to 8%, the suite waited
# 17 s in one quick run for nothing and had to leave its last step out. A wake (1.6x) exceeds it.
TOLERANCE_FLOOR = {"rtt_us": 0.25}


def cpu_once(n=CPU_LOOP):
    """Seconds for a fixed integer loop (the interpreter's own work: no allocation, no IO)."""
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return time.perf_counter() - t0


MESSAGE = b"x" * 64


def recv_exact(sock, n):
    """n bytes from sock (OSError when the peer closes first)."""
    buf = b""
    while len(buf) < n:
        got = sock.recv(n - len(buf))
        if not got:
            raise OSError("the probe's peer closed early")
        buf += got
    return buf


def rtt_once(trips=RTT_TRIPS):
    """Seconds per round trip of 64 bytes over a loopback TCP connection to a forked echoing
    child (two processes, two cores, the kernel's TCP path both ways)."""
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    pid = os.fork()
    if pid == 0:  # the echoing child: no Python cleanup, no atexit of the parent's
        code = 1
        try:
            c, _ = lst.accept()
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for _ in range(trips):
                c.sendall(recv_exact(c, len(MESSAGE)))
            code = 0
        finally:
            os._exit(code)
    port = lst.getsockname()[1]
    lst.close()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        os.waitpid(pid, 0)
        raise
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.perf_counter()
    for _ in range(trips):
        s.sendall(MESSAGE)
        recv_exact(s, len(MESSAGE))
    elapsed = time.perf_counter() - t0
    s.close()
    os.waitpid(pid, 0)
    return elapsed / trips


def take(tries=TRIES, cpu=cpu_once, rtt=rtt_once, on=0):
    """The probe: the median of `tries` timings of each, in ms and us, the loop pinned to CPU
    `on` (the round trip's echo child inherits it; the kernel places the two ends)."""
    # Unpinned, the loop's time depends on which vCPU it lands on: on the AMD EPYC VM the two
    # differed by 10% (7.4 against 8.1 ms), which made the probe bimodal.
    with this_process_on(on):
        cpus = [cpu() for _ in range(tries)]
    rtts = [rtt() for _ in range(tries)]
    return {"cpu_ms": round(statistics.median(cpus) * 1e3, 4),
            "rtt_us": round(statistics.median(rtts) * 1e6, 2)}


def slower(now, start):
    """{figure: now/start} for the figures now is slower in than start."""
    return {k: round(now[k] / start[k], 3) for k in start
            if start.get(k) and now.get(k) is not None}


def within(now, start, tolerance=TOLERANCE):
    """Whether `now` is no slower than `start` by more than the tolerance: one share for
    every figure, or {figure: share}."""
    tol = tolerance if isinstance(tolerance, dict) else {}
    return all(r <= 1.0 + tol.get(k, tolerance if not tol else TOLERANCE)
               for k, r in slower(now, start).items())


def reference(takes=3, every=1.0, probe=None, sleep=time.sleep):
    """The run's starting point: `takes` probes `every` seconds apart, their median per
    figure, and per figure the tolerance a later probe is held to: TOLERANCE, or twice the
    spread the starting probes showed among themselves when that is wider (TOLERANCE_FLOOR's
    figures: their floor instead of TOLERANCE). On the AMD EPYC
    VM the pinned loop moved between 5.9 and 7.4 ms within ten idle seconds (the host's doing,
    not ours), while the wake of 19,000 idle connections put it 1.6x: the tolerance must let
    the first pass and catch the second."""
    probe = probe or take
    got = []
    for i in range(takes):
        if i:
            sleep(every)
        got.append(probe())
    start = {k: statistics.median(g[k] for g in got) for k in got[0]}
    spread = {k: (max(g[k] for g in got) - min(g[k] for g in got)) / start[k]
              for k in start if start[k]}
    tol = {k: min(MAX_TOLERANCE, max(TOLERANCE_FLOOR.get(k, TOLERANCE), 2 * v))
           for k, v in spread.items()}
    return {"probe": start, "tolerance": {k: round(v, 3) for k, v in tol.items()},
            "takes": got}


def wait_calibrated(start, tolerance=TOLERANCE, timeout=30.0, every=1.0, probe=take,
                    clock=time.monotonic, sleep=time.sleep):
    """Probes until a probe is within `tolerance` of `start` or `timeout` seconds pass:
    (seconds waited, the last probe, settled). Only slower counts: a machine faster than it
    was at the start is no wake of ours."""
    t0 = clock()
    while True:
        now = probe()
        if within(now, start, tolerance):
            return round(clock() - t0, 2), now, True
        if clock() - t0 + every > timeout:
            return round(clock() - t0, 2), now, False
        sleep(every)
