#!/usr/bin/python3
"""kernel_counts.py - a yardstick model's own count of its kernel calls against the kernel's.

For a peer whose loop is a library's (HIDDEN below), the model cannot count them and must say so
(null); the kernel's count stands alone, printed per request, and must not be zero.

The epoll and uring models count the calls they make into the kernel's event interfaces
(epoll_ctl and epoll_wait; io_uring_enter and the SQEs submitted) and print them in their
statistics line (`kernel_calls`). This runs the model under `perf stat` on the matching
syscall tracepoints (and io_uring's per-request submit tracepoint), drives a fixed number of
requests through it with echo-load, then a reply that cannot fit the socket (a client that
sends several MiB and reads only after a pause, so that a model that changes its interest
while a reply waits does so), stops it with SIGINT and
requires each count to equal the kernel's exactly: the whole life of the process, set-up and
stop included. FLAGS go to the server; with --trigger level the epoll model must have changed
its interest (epoll_ctl MOD) at least once; with --touch-lines N it must have walked N lines
per request at least, whole walks only. The epoll model must also not spin while the reply
waits: at most one epoll_wait per request plus one per 4 KiB of the stalled reply.

    kernel_counts.py ECHO-SERVER ECHO-LOAD MODEL [FLAGS...]

Exit 0 when every count matches, 1 when one does not, 77 (CTest's skip) with `not run: why`
when perf or the tracepoints are unavailable.
"""
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness"))
from lib.server import listening_port  # noqa: E402  (the driver library's one reader)

# statistics field -> the tracepoints whose sum must equal it
EVENTS = {
    "epoll": {"epoll_ctl": ["syscalls:sys_enter_epoll_ctl"],
              "epoll_wait": ["syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_epoll_pwait",
                             "syscalls:sys_enter_epoll_pwait2"]},
    "uring": {"io_uring_enter": ["syscalls:sys_enter_io_uring_enter"],
              "io_uring_sqes": ["io_uring:io_uring_submit_req"]},
}
# Models whose event loop is a library's (the peers): their kernel calls happen inside it, where
# the model cannot count them, so it must declare them uncounted (kernel_calls null) and the
# kernel's count of the library's own waits and interest changes stands alone: it must have seen
# some, and it is printed per request.
HIDDEN = {
    "libuv": {"epoll_ctl": ["syscalls:sys_enter_epoll_ctl"],
              "epoll_wait": ["syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_epoll_pwait"]},
    "asio-coro": {"epoll_ctl": ["syscalls:sys_enter_epoll_ctl"],
                  "epoll_wait": ["syscalls:sys_enter_epoll_wait",
                                 "syscalls:sys_enter_epoll_pwait"]},
    "pth": {"select": ["syscalls:sys_enter_select", "syscalls:sys_enter_pselect6"]},
}
HIDDEN["libev"] = HIDDEN["libuv"]
SKIP = 77


def not_run(why):
    print(f"not run: {why}")
    sys.exit(SKIP)


def fail(what):
    print(f"FAIL: {what}")
    sys.exit(1)


def perf_counts(path):
    counts = {}
    for line in Path(path).read_text().splitlines():
        f = line.split(",")
        if len(f) > 2 and f[0] and not line.startswith("#"):
            try:
                counts[f[2]] = int(float(f[0]))
            except ValueError:
                counts[f[2]] = None  # <not counted>, <not supported>
    return counts


REQUESTS = 3000
STALL_BYTES = 8 << 20


def stall_then_drain(port, size=STALL_BYTES):
    """Send size bytes from a thread and read them back only after a pause, so the server's
    reply meets a full socket. None when every byte came back in order, else what went wrong."""
    data = bytes(range(256)) * (size // 256)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        sender = threading.Thread(target=s.sendall, args=(data,), daemon=True)
        sender.start()
        time.sleep(0.3)
        got = bytearray()
        while len(got) < len(data):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += chunk
        sender.join(timeout=30)
    if bytes(got) != data:
        return f"the stalled client got {len(got)} of {len(data)} bytes, or other bytes"
    return None


def main(server, load, model, *flags):
    table = EVENTS.get(model) or HIDDEN.get(model)
    if not table:
        fail(f"no kernel events known for model {model!r} (known: {', '.join([*EVENTS, *HIDDEN])})")
    events = [e for evs in table.values() for e in evs]
    probe = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(events), "--", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        not_run(f"perf stat on {', '.join(events)}: {probe.stderr.strip()[-200:]}")
    with tempfile.TemporaryDirectory(prefix="kernel-counts-") as tmp:
        out = Path(tmp) / "perf.csv"
        perf = subprocess.Popen(["perf", "stat", "-x,", "-o", str(out), "-e", ",".join(events),
                                 "--", server, "--model", model, "--port", "0", *flags],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = perf.stdout.readline()
        port = listening_port(line)
        if port is None:
            perf.kill()
            fail(f"echo-server did not start: {line!r} {perf.stderr.read().strip()[-300:]}")
        ld = subprocess.run([load, "--port", str(port), "--conns", "4", "--size", "64",
                             "--requests", str(REQUESTS), "--warmup", "0"],
                            capture_output=True, text=True, timeout=60)
        stalled = stall_then_drain(port)
        # perf's only child is the server: stop it, and perf writes its counts as it ends.
        kids = subprocess.run(["pgrep", "-P", str(perf.pid)], capture_output=True, text=True)
        pids = [int(p) for p in kids.stdout.split()]
        if len(pids) != 1:
            perf.kill()
            fail(f"expected one echo-server under perf, found {pids}")
        subprocess.run(["kill", "-INT", str(pids[0])], check=True)
        try:
            stdout, stderr = perf.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            perf.kill()
            fail("echo-server did not stop within 30 s of SIGINT")
        if ld.returncode != 0:
            fail(f"echo-load failed ({ld.returncode}): {ld.stderr.strip()[-300:]}")
        if stalled:
            fail(stalled)
        stats = [ln for ln in stdout.splitlines() if ln.startswith("{")]
        if perf.returncode != 0 or not stats:
            fail(f"echo-server failed ({perf.returncode}): {stderr.strip()[-300:]}")
        own_stats = json.loads(stats[-1])
        own = own_stats.get("kernel_calls") or {}
        kernel = perf_counts(out)
    if model in HIDDEN:
        return check_hidden(model, own_stats, kernel)
    bad = []
    for field, evs in EVENTS[model].items():
        if any(kernel.get(e) is None for e in evs):
            not_run(f"perf did not count {', '.join(evs)}: {kernel}")
        theirs = sum(kernel[e] for e in evs)
        ours = own.get(field)
        print(f"{model}: {field} counted by the server {ours}, by the kernel {theirs}")
        if ours != theirs:
            bad.append(f"{field}: server {ours}, kernel {theirs}")
    if not any(own.get(f) for f in EVENTS[model]):
        # All zero would match the kernel without showing that anything is counted.
        bad.append(f"no kernel calls counted at all: {own}")
    waits, most = own.get("epoll_wait"), REQUESTS + STALL_BYTES // 4096
    if model == "epoll" and waits is not None and waits > most:
        bad.append(f"{waits} epoll_wait calls, more than {most}: the loop spun on a full socket")
    if "level" in flags and not (own_stats.get("epoll_ctl") or {}).get("mod"):
        bad.append(f"level-triggered, yet no interest change counted: {own_stats.get('epoll_ctl')}")
    if "--touch-lines" in flags:
        lines = int(flags[flags.index("--touch-lines") + 1])
        walked = (own_stats.get("touch") or {}).get("walked")
        if walked is None or walked < lines * REQUESTS or walked % lines:
            bad.append(f"--touch-lines {lines}: {walked} lines walked over {REQUESTS} requests")
    if bad:
        fail("; ".join(bad))
    print("ok")
    return 0


def check_hidden(model, own_stats, kernel):
    """A library's loop: the model declares its calls uncounted; the kernel saw them."""
    bad = []
    if own_stats.get("kernel_calls") is not None or own_stats.get("epoll_ctl") is not None:
        bad.append(f"the model counts calls made inside its library: kernel_calls "
                   f"{own_stats.get('kernel_calls')}, epoll_ctl {own_stats.get('epoll_ctl')}")
    for field, evs in HIDDEN[model].items():
        if any(kernel.get(e) is None for e in evs):
            not_run(f"perf did not count {', '.join(evs)}: {kernel}")
        theirs = sum(kernel[e] for e in evs)
        print(f"{model}: {field} not counted by the server (inside the library), by the kernel "
              f"{theirs} ({theirs / REQUESTS:.2f} per request, set-up and the stalled reply "
              f"included)")
        if theirs == 0:
            bad.append(f"the kernel saw no {field} call: the library waits some other way")
    if bad:
        fail("; ".join(bad))
    print("ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__.split("\n\n")[2].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
