"""A server's memory while a load runs: its resident memory summed over its child processes,
PSS now and then, and the kernel's own fields of /proc/meminfo (KernelStack, SUnreclaim,
PageTables), each sample with its time so the measured window can be picked out afterwards."""
import subprocess
import threading
import time

from lib import meta

# Kernel memory per connection is a machine-wide /proc/meminfo difference (loaded minus idle
# medians, over the connections). The kernel grows those fields a page at a time, and other
# processes move them between the two reads: on the reference's slow-client points at 10
# connections the difference came out between -221 and +88 KiB per connection, about 2 MiB
# machine-wide. A difference below max(a page, that drift over the connections) says only that
# a connection cost less than that; a negative one is noise, never memory given back.
KERNEL_RESOLUTION_KIB = 4.0
MEMINFO_DRIFT_KIB = 2048.0


def kernel_resolution(conns):
    """The smallest kernel KiB per connection a point with `conns` connections can tell."""
    return max(KERNEL_RESOLUTION_KIB, MEMINFO_DRIFT_KIB / conns if conns else 0.0)


# A reading of the server's CPU time that took longer than this, from its time stamp to its
# end, is dropped: the time it stands for is not known closely enough.
CPU_READ_SLACK_S = 0.005


def sample_while(proc, server_pid, deadline):
    """While the load `proc` runs: (peak resident KiB of the server and its children, processes
    at the peak, [(time, PSS KiB)], [(time, kernel fields)], [(time, the server process's CPU
    seconds)]). PSS is read four times a second, so that a window of a few tenths of a second
    holds a reading, and less often when one walk takes longer (a walk over ten thousand
    processes takes seconds)."""
    peak, procs, pss, kern, cpu = 0, 1, [], [], []
    next_pss = 0.0
    # /proc/meminfo and the server's CPU time are read on their own thread, ten times a second,
    # so a long walk never leaves a window of a few tenths of a second without a sample.
    done = threading.Event()

    def read_kernel():
        while not done.is_set():
            kern.append((time.monotonic(), meta.kernel_kb()))
            # Timed on both sides: on a machine whose cores the server and the load fill, this
            # thread can wait tens of milliseconds for a CPU, and a reading taken that long
            # after its time stamp would put a share of the server's CPU in the wrong span.
            t0 = time.monotonic()
            used = meta.process_cpu_s(server_pid)
            t1 = time.monotonic()
            cpu.append(((t0 + t1) / 2, used if t1 - t0 <= CPU_READ_SLACK_S else None))
            done.wait(0.1)
    reader = threading.Thread(target=read_kernel, daemon=True)
    reader.start()
    while proc.poll() is None and time.monotonic() < deadline:
        t = time.monotonic()
        rss, n = meta.tree_rss_kb(server_pid, True)
        if rss > peak:
            peak, procs = rss, n
        if t >= next_pss:
            pss.append((t, meta.tree_pss_kb(server_pid, True)))
            next_pss = t + max(0.25, 3 * (time.monotonic() - t))
        # Wait on the load itself, so that its end ends the sampling at once.
        try:
            proc.wait(timeout=max(0.25, 2 * (time.monotonic() - t)))
        except subprocess.TimeoutExpired:
            pass
    done.set()
    reader.join()
    return peak, procs, pss, kern, cpu


def idle_kernel(n):
    """n readings of the kernel's fields, 0.1 s apart."""
    samples = []
    for i in range(max(1, n)):
        if i:
            time.sleep(0.1)
        samples.append(meta.kernel_kb())
    return samples
