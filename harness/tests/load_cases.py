#!/usr/bin/python3
"""End-to-end cases for echo-load: each starts a fault-injecting test server on a free loopback
port, runs echo-load against it, and checks the exit status and the JSON report.

usage: load_cases.py CASE --load PATH/echo-load --server PATH/harness-test-server
"""
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from cases import check, run  # noqa: E402  (harness/tests/cases.py)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lib import server  # noqa: E402  (harness/lib: the driver library)

SIZE = 100  # bytes per request in the fault cases: the fault offset 5050 falls mid-request


class Server:
    """The test server as a context manager: started on port 0 through the driver library's
    EchoServer (which reads the port the server announces), stopped with SIGTERM; `stats` is its
    statistics line once stopped."""

    def __init__(self, path, *args):
        self.cmd = [path, "--port", "0", *map(str, args)]
        self.stats = None

    def __enter__(self):
        try:
            self.srv = server.EchoServer(self.cmd, ready_timeout=10)
        except server.NotStarted as e:
            check(False, "the test server did not start", e.reason)
        self.proc, self.port = self.srv.proc, self.srv.port
        return self

    def __exit__(self, *exc):
        self.stats = self.srv.stop(timeout=5)
        return False


def run_load(load, *args, timeout=25, nofile=None):
    def limit_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    t0 = time.monotonic()
    try:
        p = subprocess.run([load, *map(str, args)], capture_output=True, text=True,
                           timeout=timeout, preexec_fn=limit_fds if nofile else None)
    except subprocess.TimeoutExpired:
        check(False, f"echo-load still running after {timeout} s", " ".join(map(str, args)))
    elapsed = time.monotonic() - t0
    report = None
    if p.stdout.startswith("{"):
        report = json.loads(p.stdout)
    return p.returncode, report, p.stderr, elapsed


def show(report):
    lat = report["latency_us"]
    print(f"  requests {report['requests']} ({report['requests_per_sec']:.0f}/s), "
          f"p50 {lat['p50']} us, p99 {lat['p99']} us, p99.9 {lat['p999']} us, "
          f"max {lat['max']} us, errors {report['errors']}, cpu {report['cpu']['cores_used']:.2f}")


def nonzero_errors(report):
    return {k: v for k, v in report["errors"].items() if v}


def usable_cpus(cpu):
    """The most cores echo-load's workers can use: one each, and no more than its CPUs."""
    return min(cpu["workers"], len(os.sched_getaffinity(0)))


def expect_clean(report, rc):
    check(rc == 0, "exit status", rc)
    check(report["requests"] > 0, "requests > 0", report["requests"])
    check(not nonzero_errors(report), "no errors", nonzero_errors(report))
    check(report["mismatches"] == 0, "no mismatches")
    check(report["bytes"] == report["requests"] * report["config"]["size"],
          "bytes == requests * size", (report["bytes"], report["requests"]))
    lat = report["latency_us"]
    order = [lat[k] for k in ("min", "p50", "p90", "p99", "p999", "max")]
    check(order == sorted(order) and order[0] > 0, "percentiles ordered and positive", order)
    cpu = report["cpu"]
    check(0 < cpu["cores_used"] <= usable_cpus(cpu) + 0.02, "CPU use within the workers", cpu)
    check(cpu["saturated"] or cpu["busiest_worker_core"] < 0.95, "saturation flag", cpu)
    check(cpu["saturated"] == any("saturated" in w for w in report["warnings"]),
          "a saturated core is warned about", report["warnings"])


# ---- cases -------------------------------------------------------------------------------

def case_echo_ok(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 8, "--size", 1000,
                                 "--duration", 1, "--warmup", 0.2, "--json")
    show(r)
    expect_clean(r, rc)
    check(s.stats["bytes"] >= r["bytes"], "server echoed at least what was verified")
    for key in ("host", "cpu_model", "cores", "kernel", "pinning", "git_sha", "date"):
        check(key in r["meta"], f"meta.{key} present")
    check("uncorrected" not in r["latency_us"], "no uncorrected figure in closed loop")


def fault_case(a, fault, kind=None, error="mismatch"):
    with Server(a.server, "--fault", fault, "--at", 5050) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 4, "--size", SIZE,
                                 "--duration", 1, "--warmup", 0, "--json")
    show(r)
    check(s.stats["fault_applied"], "the server applied its fault")
    check(rc == 1, "exit status 1 on a damaged echo", rc)
    errs = nonzero_errors(r)
    check(errs == {error: 1}, f"exactly one '{error}' error", errs)
    if kind:
        check(r["mismatches"] == 1, "mismatches == 1", r["mismatches"])
        check(r["mismatch_kinds"][kind] == 1, f"classified as {kind}", r["mismatch_kinds"])
        fm = r["first_mismatch"]
        # The server damages stream offset 5050 of one connection; a swap may show one later.
        check(fm["kind"] == kind and fm["offset"] in (5050, 5051), "first mismatch located", fm)
    check(r["requests"] > 0, "the other connections kept going", r["requests"])


def case_flip(a):
    fault_case(a, "flip", "flipped")


def case_drop(a):
    fault_case(a, "drop", "missing")


def case_extra(a):
    fault_case(a, "extra", "extra")


def case_swap(a):
    fault_case(a, "swap", "reordered")


def case_early_close(a):
    fault_case(a, "close", error="early_close")


def case_stall_rate(a):
    # 1000 req/s x 100 B: the server echoes 130 kB about 1 s after the start (0.7 s into the
    # measured window), then stalls everything once for 1 s.
    stall_ms = 1000
    with Server(a.server, "--fault", "stall", "--at", 130000, "--stall-ms", stall_ms) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 10, "--size", SIZE,
                                 "--duration", 3, "--warmup", 0.3, "--rate", 1000, "--json")
    show(r)
    check(s.stats["fault_applied"], "the server stalled")
    check(rc == 0 and not nonzero_errors(r), "a stall is not an error", (rc, r["errors"]))
    cor, unc = r["latency_us"], r["latency_us"]["uncorrected"]
    print(f"  corrected   p50 {cor['p50']} p90 {cor['p90']} p99 {cor['p99']} "
          f"p99.9 {cor['p999']} max {cor['max']}")
    print(f"  uncorrected p50 {unc['p50']} p90 {unc['p90']} p99 {unc['p99']} "
          f"p99.9 {unc['p999']} max {unc['max']}")
    stall_us = stall_ms * 1000
    # The requests due during the stall queue up: a third of the window sees hundreds of ms.
    check(cor["p999"] >= 0.8 * stall_us, "corrected p99.9 shows the stall", cor["p999"])
    check(cor["max"] >= 0.8 * stall_us, "corrected max shows the stall", cor["max"])
    check(cor["p99"] >= 0.5 * stall_us, "corrected p99 shows the stall", cor["p99"])
    # Only the 10 requests in flight during the stall saw it when measured from their send.
    check(unc["p99"] < cor["p99"] / 5, "uncorrected p99 hides the stall", (unc["p99"], cor["p99"]))
    check(r["requests"] >= 0.9 * 3000, "the backlog was sent after the stall", r["requests"])


def case_churn(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 8, "--size", 64,
                                 "--duration", 1, "--warmup", 0.2, "--mode", "churn", "--json")
    show(r)
    expect_clean(r, rc)
    check(r["connects"] >= r["requests"], "one connection per request", (r["connects"],))
    check(s.stats["connections"] >= r["requests"], "the server saw every connection")
    check(s.stats["peers"] >= 100, "source addresses spread over 127.0.0.0/8", s.stats["peers"])


def case_churn_pool(a):
    """A server that serves --conns connections at once, as a pre-forked pool sized to the
    level does: each slot must hold one connection at a time, or a second socket of a slot
    takes a worker that its first, still open, never gives back."""
    with Server(a.server, "--conn-limit", 2) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 2, "--size", 64,
                                 "--duration", 0.5, "--warmup", 0.2, "--mode", "churn",
                                 "--timeout", 2, "--json")
    show(r)
    expect_clean(r, rc)
    check(r["requests"] >= 100, "requests completed one connection at a time", r["requests"])
    check(s.stats["max_concurrent"] <= 2, "never more than the pool", s.stats["max_concurrent"])


def case_large_messages(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 3, "--size", "1M",
                                 "--requests", 30, "--warmup", 0, "--json")
    show(r)
    expect_clean(r, rc)
    check(r["requests"] == 30 and r["bytes"] == 30 << 20, "30 x 1 MiB echoed",
          (r["requests"], r["bytes"]))


def case_requests_exact(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 7, "--size", 64,
                                 "--requests", 1000, "--threads", 2, "--warmup", 0.1, "--json")
    show(r)
    expect_clean(r, rc)
    check(r["requests"] == 1000 and r["unfinished"] == 0, "exactly 1000 requests",
          (r["requests"], r["unfinished"]))
    check(r["cpu"]["workers"] == 2, "two workers")


def case_pipeline(a):
    # Eight requests in flight on each of 4 connections, an exact count, every byte checked.
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 4, "--size", 300,
                                 "--pipeline", 8, "--requests", 2000, "--warmup", 0.1, "--json")
    show(r)
    expect_clean(r, rc)
    check(r["config"]["pipeline"] == 8, "pipeline in the config", r["config"])
    check(r["requests"] == 2000 and r["unfinished"] == 0, "exactly 2000 requests",
          (r["requests"], r["unfinished"]))
    check(s.stats["bytes"] >= 2000 * 300, "the server echoed them", s.stats["bytes"])


def case_pipeline_streaming(a):
    # Large pipelined echoes keep a connection readable without a pause: the worker must still
    # come back to its loop, or its window never opens (0 requests), --max-time and signals go
    # unheard, and the connections it starves time out for want of being read.
    for conns, size in ((1, "1M"), (10, "32K")):
        with Server(a.server) as s:
            rc, r, err, elapsed = run_load(a.load, "--port", s.port, "--conns", conns, "--size",
                                           size, "--pipeline", 4, "--duration", 1,
                                           "--max-time", 8, "--ramp-timeout", 1, "--json",
                                           timeout=20)
        show(r)
        print(f"  {conns} x {size}: exit {rc} after {elapsed:.2f} s")
        expect_clean(r, rc)
        # A starved loop would run into --max-time (8 s) or never open its window; the
        # bounds leave a loaded test machine several times the 1.2 s this takes.
        check(not r["capped"] and elapsed < 8, "done by the end of its window and drain",
              (r["capped"], elapsed))
        check(0.9 < r["seconds"] < 4, "a window of about --duration", r["seconds"])
    # A signal is heard mid-stream, within a tick, not after the stream lets up.
    with Server(a.server) as s:
        p = subprocess.Popen([a.load, "--port", str(s.port), "--conns", "1", "--size", "1M",
                              "--pipeline", "4", "--duration", "20", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=15)
        elapsed = time.monotonic() - t0
    print(f"  SIGTERM mid-stream: exit {p.returncode} {elapsed:.2f} s after the signal")
    # Unheard, the signal would wait for the 20 s stream to end.
    check(p.returncode == 143 and elapsed < 5, "SIGTERM obeyed at once", (p.returncode, elapsed))
    r = json.loads(out)
    check(r["stopped_by"] == "SIGTERM" and r["requests"] > 0, "with what it measured",
          (r["stopped_by"], r["requests"]))


def case_pipeline_swap(a):
    # A damaged byte in the middle of a pipelined stream is found and located as without one.
    with Server(a.server, "--fault", "swap", "--at", 5050) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 4, "--size", SIZE,
                                 "--pipeline", 4, "--duration", 1, "--warmup", 0, "--json")
    show(r)
    check(s.stats["fault_applied"], "the server applied its fault")
    check(rc == 1, "exit status 1 on a damaged echo", rc)
    check(nonzero_errors(r) == {"mismatch": 1}, "exactly one mismatch", nonzero_errors(r))
    fm = r["first_mismatch"]
    check(fm["kind"] == "reordered" and fm["offset"] in (5050, 5051), "located", fm)
    check(r["requests"] > 0, "the other connections kept going", r["requests"])


def case_multi_process(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 6, "--size", 64,
                                 "--requests", 999, "--procs", 3, "--threads", 2,
                                 "--warmup", 0.1, "--json")
    show(r)
    expect_clean(r, rc)
    check(r["config"]["procs"] == 3 and r["cpu"]["workers"] == 6, "3 processes x 2 workers",
          (r["config"]["procs"], r["cpu"]["workers"]))
    check(r["requests"] == 999, "results merged across processes", r["requests"])
    check(r["latency_us"]["samples"] == 999, "histograms merged", r["latency_us"]["samples"])


def case_many_conns(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 2000, "--size", 32,
                                 "--duration", 1, "--warmup", 0.5, "--threads", 2, "--json")
    show(r)
    expect_clean(r, rc)
    check(r["connects"] == 2000, "2000 connections opened once", r["connects"])
    check(s.stats["max_concurrent"] == 2000, "all 2000 open at once", s.stats["max_concurrent"])
    check(s.stats["peers"] == 253, "source addresses 127.0.0.2-254 all used", s.stats["peers"])


def case_refused(a):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    rc, r, err, elapsed = run_load(a.load, "--port", port, "--conns", 4, "--size", 64,
                                   "--duration", 0.5, "--warmup", 0, "--ramp-timeout", 0.5,
                                   "--json")
    ramp = r["ramp_up"]
    print(f"  errors {nonzero_errors(r)}, ramp-up errors {ramp['errors_total']}, exit {rc}, "
          f"{elapsed:.2f} s")
    check(rc == 3, "exit 3 when nothing was measured", rc)
    check(ramp["errors"]["connect_failed"] > 0 and ramp["unfinished"] == 4,
          "the ramp-up counts its refusals apart and ends at its deadline", ramp)
    check(any("ramp-up ended" in w for w in r["warnings"]), "warned", r["warnings"])
    check(r["errors"]["connect_failed"] > 0, "refusals counted as connect_failed")
    check(r["errors"]["connect_failed"] < 4 * 0.5 / 0.01 * 1.5, "retries are paced, not a spin",
          r["errors"]["connect_failed"])
    check(elapsed < 10, "bounded in time (not the ramp-up's 60 s)", elapsed)


def case_refused_gives_up(a):
    # Nothing listens and no ramp-up deadline is set: echo-load tries for --connect-timeout,
    # then says why in one line and exits 3 (it once retried for the ramp-up's 60 s, silently).
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    rc, r, err, elapsed = run_load(a.load, "--port", port, "--conns", 2, "--size", 64,
                                   "--duration", 0.3, "--connect-timeout", 1, "--json")
    print(f"  exit {rc} after {elapsed:.2f} s: {err.strip()}")
    check(rc == 3 and r["exit_status"] == 3, "exit 3", rc)
    check(1 <= elapsed < 10, "gave up after --connect-timeout (not the ramp-up's 60 s)",
          elapsed)
    lines = err.strip().splitlines()
    check(len(lines) == 1 and "gave up" in lines[0] and str(port) in lines[0],
          "one line on stderr naming the address", lines)
    check(r["partial"] and r["stopped_by"] == "gave up", "the report says it gave up",
          (r["partial"], r["stopped_by"]))


def case_server_dies(a):
    # The server goes away mid-run: echo-load stops within --connect-timeout of the last
    # good connect, with a report, instead of retrying to the end of --requests.
    s = Server(a.server).__enter__()
    p = subprocess.Popen([a.load, "--port", str(s.port), "--conns", "4", "--size", "64",
                          "--requests", str(10 ** 9), "--connect-timeout", "1", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    s.proc.kill()
    s.proc.wait()
    t0 = time.monotonic()
    out, err = p.communicate(timeout=20)
    elapsed = time.monotonic() - t0
    r = json.loads(out)
    print(f"  exit {p.returncode} {elapsed:.2f} s after the kill, {r['requests']} requests; "
          f"{err.strip()}")
    check(elapsed < 10, "stopped soon after the server died (not at --requests)", elapsed)
    check(p.returncode != 0 and r["partial"] and r["requests"] > 0,
          "non-zero, partial, with what it measured", (p.returncode, r["partial"]))
    check("gave up" in err, "says why", err)


def case_interrupted(a):
    # SIGINT (or SIGTERM) mid-run: the figures measured so far, marked partial, then the
    # signal's exit code; with --procs the children stop through the shared flag.
    for sig, procs in ((signal.SIGINT, 1), (signal.SIGTERM, 2)):
        with Server(a.server) as s:
            p = subprocess.Popen([a.load, "--port", str(s.port), "--conns", "4", "--size", "64",
                                  "--duration", "20", "--warmup", "0.2", "--procs", str(procs),
                                  "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            time.sleep(2)  # its window open (start, ramp-up, warm-up) on a loaded machine
            p.send_signal(sig)
            out, err = p.communicate(timeout=10)
        r = json.loads(out)
        print(f"  {sig.name}, {procs} process(es): exit {p.returncode}, {r['requests']} "
              f"requests in {r['seconds']:.2f} s")
        check(p.returncode == 128 + sig and r["exit_status"] == 128 + sig, "exit 128 + signal",
              p.returncode)
        check(r["partial"] and r["stopped_by"] == sig.name, "marked partial",
              (r["partial"], r["stopped_by"]))
        check(r["requests"] > 0 and 0.3 < r["seconds"] < 10, "what it measured until then",
              (r["requests"], r["seconds"]))


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def case_interrupted_group(a):
    # Ctrl-C in a terminal signals the whole process group: each worker process gets the signal
    # too, and one signal seen by several processes is still the first, not a second one.
    for sig, procs, threads in ((signal.SIGINT, 2, 1), (signal.SIGTERM, 3, 2)):
        with Server(a.server) as s:
            p = subprocess.Popen([a.load, "--port", str(s.port), "--conns", "8", "--size", "64",
                                  "--duration", "20", "--warmup", "0.2", "--procs", str(procs),
                                  "--threads", str(threads), "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)
            # Mid-run, 17 s before the end; at 1.5 s an ASan build in a loaded suite had one
            # worker still short of its first measured request.
            time.sleep(3)
            os.killpg(p.pid, sig)
            out, err = p.communicate(timeout=10)
            left = group_alive(p.pid)
            if left:
                os.killpg(p.pid, signal.SIGKILL)
        print(f"  {sig.name} to the group, {procs} x {threads}: exit {p.returncode}; "
              f"{err.strip()!r}")
        check(not left, "no worker process outlives echo-load")
        check(p.returncode == 128 + sig, "exit 128 + signal", (p.returncode, err))
        check(out.startswith("{"), "a report on stdout", (out[:80], err))
        r = json.loads(out)
        check(r["partial"] and r["stopped_by"] == sig.name and r["exit_status"] == 128 + sig,
              "marked partial", (r["partial"], r["stopped_by"], r["exit_status"]))
        check(r["requests"] > 0 and r["cpu"]["workers"] == procs * threads,
              "what every worker measured until then", (r["requests"], r["cpu"]["workers"]))


def case_report_unwritable(a):
    # A report that cannot be written (a full disk: /dev/full) is lost: that is an error of its
    # own, said in one line, not exit 0. The summary and the JSON alike.
    for fmt in ([], ["--json"]):
        with Server(a.server) as s, open("/dev/full", "w") as full:
            p = subprocess.run([a.load, "--port", str(s.port), "--conns", "2", "--size", "64",
                                "--duration", "0.2", "--warmup", "0", *fmt], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=15)
        lines = p.stderr.strip().splitlines()
        print(f"  {fmt or 'summary'}: exit {p.returncode}: {lines}")
        check(p.returncode == 5, "exit 5 when the report cannot be written", p.returncode)
        check(len(lines) == 1 and "report" in lines[0] and "No space left" in lines[0],
              "one line naming the report and why", lines)
    with open("/dev/full", "w") as full:
        p = subprocess.run([a.load, "--help"], stdout=full, stderr=subprocess.PIPE, text=True,
                           timeout=5)
    check(p.returncode == 5 and len(p.stderr.strip().splitlines()) == 1,
          "--help that cannot be written: exit 5, one line", (p.returncode, p.stderr))


def case_ramp_up(a):
    # Every connection connects and echoes once before anything is measured; those echoes
    # and their errors are reported apart from the window's.
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 300, "--size", SIZE,
                                 "--duration", 0.5, "--warmup", 0.2, "--threads", 2,
                                 "--procs", 2, "--json")
    show(r)
    expect_clean(r, rc)
    ramp = r["ramp_up"]
    print(f"  ramp-up {ramp['seconds']:.3f} s: connected after {ramp['all_connected_s']:.3f} s, "
          f"echoed after {ramp['all_echoed_s']:.3f} s, connect p99 "
          f"{ramp['connect_latency_us']['p99']} us, first echo p99 "
          f"{ramp['first_echo_latency_us']['p99']} us")
    check(ramp["complete"] and ramp["ready"] == 300 and ramp["unfinished"] == 0,
          "every connection echoed once", ramp)
    check(ramp["connect_latency_us"]["samples"] == 300 and
          ramp["first_echo_latency_us"]["samples"] == 300, "one sample per connection", ramp)
    check(0 < ramp["all_connected_s"] <= ramp["all_echoed_s"] <= ramp["seconds"] + 0.01,
          "connected, then echoed, then over", ramp)
    check(ramp["errors_total"] == 0, "no ramp-up errors", ramp["errors"])
    lat = ramp["connect_latency_us"]
    # Timed from each connection's own connect(): on loopback the handshake completes in the
    # call, so a typical connect takes far less than opening all 300 (the whole batch's time
    # was once charged to every connection).
    check(lat["min"] < lat["max"] and lat["p50"] < 0.5e6 * ramp["all_connected_s"],
          "each connection's own connect latency", (lat, ramp["all_connected_s"]))
    check(r["connects"] == 300, "no connection opened twice", r["connects"])
    # The first echoes are not requests of the window, but the server echoed them.
    check(s.stats["bytes"] >= r["bytes"] + 300 * SIZE, "first echoes are apart from requests",
          (s.stats["bytes"], r["bytes"]))
    rc, r, err, _ = run_load(a.load, "--port", 9, "--conns", 2, "--size", 8, "--duration", 0.2,
                             "--mode", "churn", "--json")
    check(r["ramp_up"] is None, "churn has no ramp-up", r["ramp_up"])


def case_ramp_fault(a):
    # A byte damaged in a first echo is a ramp-up error and fails the run like any other.
    with Server(a.server, "--fault", "flip", "--at", 50) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 2, "--size", SIZE,
                                 "--duration", 0.5, "--warmup", 0, "--json")
    check(s.stats["fault_applied"], "the server applied its fault")
    check(rc == 1, "exit status 1 on a damaged first echo", rc)
    check(r["ramp_up"]["errors"]["mismatch"] == 1 and not nonzero_errors(r),
          "counted in the ramp-up, not in the window", (r["ramp_up"]["errors"], r["errors"]))
    check(r["ramp_up"]["ready"] == 2, "the connection echoed once after reconnecting",
          r["ramp_up"])


def case_ramp_broken_server(a):
    # A server that never echoes right (an extra byte, or a hang-up after one byte, on every
    # connection) is no transient failure: a connection whose first echo fails twice stops the
    # run at once, with one line saying why and exit 1, not after the ramp-up's 60 s.
    for fault, kind in (("extra", "mismatch"), ("close", "early_close")):
        with Server(a.server, "--fault", fault, "--at", 1, "--times", 0) as s:
            rc, r, err, elapsed = run_load(a.load, "--port", s.port, "--conns", 4, "--size",
                                           SIZE, "--duration", 1, "--json", timeout=20)
        lines = err.strip().splitlines()
        ramp = r["ramp_up"]
        print(f"  {fault}: exit {rc} after {elapsed:.2f} s, ramp-up errors {ramp['errors']}; "
              f"{lines}")
        check(s.stats["fault_applied"], "the server applied its fault")
        check(rc == 1 and r["exit_status"] == 1, "exit 1: the echo is wrong", rc)
        check(elapsed < 10, "stopped at once (not after the ramp-up's 60 s)", elapsed)
        check(0 < ramp["errors"][kind] <= 2 * 4, f"a few {kind} errors, not a retry loop",
              ramp["errors"])
        check(r["partial"] and r["stopped_by"] == "bad echo", "the report says why",
              (r["partial"], r["stopped_by"]))
        check(len(lines) == 1 and "first echo" in lines[0] and kind in lines[0],
              "one line on stderr naming the error", lines)


def case_slow(a):
    # 100 B in 10 B chunks 10 ms apart: 90 ms to send one request, then 50 ms of thinking.
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 10, "--size", SIZE,
                                 "--mode", "slow", "--chunk", 10, "--chunk-delay", 0.01,
                                 "--think", 0.05, "--duration", 1.5, "--warmup", 0.2, "--json")
    show(r)
    expect_clean(r, rc)
    lat = r["latency_us"]
    check(90000 <= lat["min"] and lat["p50"] < 90000 + 60000,
          "latency = the 90 ms the client takes to send, plus a little", lat)
    per_conn = 1.5 / (0.09 + 0.05)
    check(0.6 * 10 * per_conn <= r["requests"] <= 1.1 * 10 * per_conn,
          "requests paced by the chunk delays and the think time", r["requests"])
    cfg = r["config"]
    check((cfg["chunk"], cfg["chunk_delay"], cfg["think"]) == (10, 0.01, 0.05),
          "the slow parameters are in the report", cfg)


def case_slow_flip(a):
    # Offset 250 is the middle of the second request after the first echo (0-99).
    with Server(a.server, "--fault", "flip", "--at", 250) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 3, "--size", SIZE,
                                 "--mode", "slow", "--chunk", 25, "--chunk-delay", 0.005,
                                 "--think", 0.01, "--duration", 1, "--warmup", 0, "--json")
    show(r)
    check(s.stats["fault_applied"], "the server applied its fault")
    check(rc == 1 and nonzero_errors(r) == {"mismatch": 1}, "a damaged slow echo is caught",
          (rc, r["errors"]))
    check(r["mismatch_kinds"]["flipped"] == 1 and r["first_mismatch"]["offset"] == 250,
          "located", r["first_mismatch"])


def case_rate_steady(a):
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 4, "--size", 64,
                                 "--duration", 1, "--warmup", 0.2, "--rate", 500, "--json")
    show(r)
    expect_clean(r, rc)
    check(abs(r["requests"] - 500) <= 2, "500 requests in 1 s at 500/s", r["requests"])
    unc = r["latency_us"]["uncorrected"]
    check(unc["samples"] == r["requests"], "uncorrected figure beside the corrected one")
    check(unc["p50"] <= r["latency_us"]["p50"], "due time never after the send")


def case_rate_fell_behind(a):
    # The server stalls 1 s at 0.8 s into a 1 s window: the due requests complete only after
    # the window, so the achieved rate must come out well under the one asked for.
    with Server(a.server, "--fault", "stall", "--at", 80000, "--stall-ms", 1000) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 10, "--size", SIZE,
                                 "--duration", 1, "--warmup", 0, "--rate", 1000, "--json")
    show(r)
    check(rc == 0 and r["requests"] >= 990, "every due request completed", r["requests"])
    check(r["seconds"] >= 1.5, "the drain after the window counts", r["seconds"])
    check(r["requests_per_sec"] < 700, "the rate is not reported as achieved",
          r["requests_per_sec"])
    check(any("achieved" in w for w in r["warnings"]), "warned", r["warnings"])
    lag = r["latency_us"]["send_lag"]
    check(lag["max"] >= 0.5e6, "the send lag shows requests waited for connections", lag)


def case_rate_impossible(a):
    # A schedule no server meets: most due requests never complete. The exit status says so,
    # and the CPU is counted over the window it is divided by (the drain after the window
    # once made one thread look like 2.8 cores).
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 2, "--size", SIZE,
                                 "--duration", 0.3, "--warmup", 0, "--timeout", 1,
                                 "--rate", 1e8, "--json")
    show(r)
    check(r["unfinished"] > 0.5 * 0.3e8, "most due requests never completed", r["unfinished"])
    check(rc in (3, 4) and r["exit_status"] == rc, "exit 4 (or 3 with nothing completed)", rc)
    cpu = r["cpu"]
    check(cpu["cores_used"] <= usable_cpus(cpu) + 0.02 and
          cpu["busiest_worker_core"] <= 1.02, "no more cores than one thread has", cpu)


def case_max_failed(a):
    # Timeouts in the measured window: beyond --max-failed the exit status is 4; a larger
    # allowance lets the same run exit 0.
    for allowed, want in ((0.01, 4), (1, 0)):
        with Server(a.server, "--fault", "stall", "--at", 20000, "--stall-ms", 1500) as s:
            rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 4, "--size", SIZE,
                                     "--duration", 1, "--warmup", 0, "--timeout", 0.5,
                                     "--max-failed", allowed, "--json")
        show(r)
        failed = sum(r["errors"].values()) + r["unfinished"]
        check(failed > 0.01 * (r["requests"] + failed), "more than 1% failed", failed)
        check(rc == want and r["exit_status"] == want and r["config"]["max_failed"] == allowed,
              f"--max-failed {allowed}: exit {want}", rc)


def case_max_time_cap(a):
    with Server(a.server, "--fault", "stall", "--at", 1000, "--stall-ms", 6000) as s:
        rc, r, err, elapsed = run_load(a.load, "--port", s.port, "--conns", 2, "--size", SIZE,
                                       "--requests", 10 ** 9, "--warmup", 0, "--max-time", 1,
                                       "--json")
    print(f"  exit {rc} after {elapsed:.2f} s, requests {r['requests']}, "
          f"unfinished {r['unfinished']}")
    check(elapsed < 5, "stopped at the hard cap, not at the end of the server's 6 s stall",
          elapsed)
    check(rc == 3 and r["capped"], "exit 3 when the cap cut the run short", (rc, r["capped"]))
    check(r["unfinished"] > 0, "the unfinished quota is reported", r["unfinished"])
    check(any("never completed" in w for w in r["warnings"]), "warned", r["warnings"])


def case_auto_procs(a):
    # With only 200 fds per process, 300 connections need 3 worker processes (136 each).
    with Server(a.server) as s:
        rc, r, err, _ = run_load(a.load, "--port", s.port, "--conns", 300, "--size", 64,
                                 "--duration", 0.5, "--warmup", 0.3, "--json", nofile=200)
    show(r)
    expect_clean(r, rc)
    check(r["config"]["procs"] == 3, "three processes chosen from the fd limit",
          r["config"]["procs"])
    check(r["connects"] == 300 and s.stats["max_concurrent"] == 300, "all 300 connected")
    rc, _, err, _ = run_load(a.load, "--port", s.port, "--conns", 300, "--size", 64,
                             "--duration", 0.5, "--procs", 1, nofile=200)
    check(rc == 2 and "--procs" in err, "a --procs too small for the fd limit is refused", err)


def case_ipv6_loopback(a):
    with Server(a.server, "--bind", "::1") as s:
        rc, r, err, _ = run_load(a.load, "--host", "::1", "--port", s.port, "--conns", 2,
                                 "--size", 64, "--duration", 0.5, "--warmup", 0, "--json")
    show(r)
    expect_clean(r, rc)


def bad_cli(a, *argsets, needle):
    for args in argsets:
        rc, r, err, elapsed = run_load(a.load, *args, timeout=5)
        print(f"  {' '.join(map(str, args))!r} -> exit {rc}: {err.strip()}")
        check(rc == 2, "exit status 2", rc)
        check(len(err.strip().splitlines()) == 1, "one line on stderr", err)
        check(needle in err, f"the message names the valid choices ({needle!r})", err)
        check(r is None, "nothing on stdout")
        check(elapsed < 2, "refused at once", elapsed)


# Every status echo-load can exit with: ok, damaged echo, usage, not measured, over
# --max-failed, report unwritten, and 128 + SIGINT / SIGTERM.
EXIT_CODES = {0, 1, 2, 3, 4, 5, 130, 143}


def listed_codes(text):
    """The exit codes a paragraph beginning 'Exit status' names: each number that starts a
    clause (after the colon, a comma, a semicolon or a slash)."""
    para = text[text.index("Exit status"):].split("\n\n")[0]
    return {int(n) for n in re.findall(r"(?:[:,;/]\s*)(\d+)\b", " ".join(para.split()))}


def case_help_exit_codes(a):
    p = subprocess.run([a.load, "--help"], capture_output=True, text=True, timeout=5)
    check(p.returncode == 0, "--help exits 0", p.returncode)
    codes = listed_codes(p.stdout)
    print(f"  --help lists {sorted(codes)}")
    check(codes == EXIT_CODES, "--help lists every exit code", sorted(codes))
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
    with open(readme) as f:
        text = f.read()
    section = text[text.index("## `build/bin/echo-load`"):]
    codes = listed_codes(section[section.index("**Exit status**"):])
    check(codes == EXIT_CODES, "harness/README.md lists the same codes", sorted(codes))


BASE = ["--port", 9, "--conns", 1, "--size", 8, "--duration", 1]


def case_bad_cli_unknown_option(a):
    bad_cli(a, [*BASE, "--bogus"], [*BASE, "-x"], [*BASE, "stray"], needle="valid options")


def case_bad_cli_mode(a):
    bad_cli(a, [*BASE, "--mode", "fast"], needle="pingpong, churn")


def case_bad_cli_slow(a):
    bad_cli(a, [*BASE, "--chunk", 4], [*BASE, "--think", 1], [*BASE, "--mode", "slow",
                                                               "--rate", 10],
            [*BASE, "--mode", "slow", "--size", 100, "--chunk", 1, "--chunk-delay", 1],
            needle="slow")
    bad_cli(a, [*BASE, "--ramp-timeout", -1], [*BASE, "--mode", "slow", "--chunk", 0],
            needle="must be")


def case_bad_cli_pipeline(a):
    bad_cli(a, [*BASE, "--pipeline", 4, "--mode", "churn"], [*BASE, "--pipeline", 2, "--rate", 10],
            needle="--pipeline applies only to --mode pingpong")
    bad_cli(a, [*BASE, "--pipeline", 0], [*BASE, "--pipeline", 2000], needle="--pipeline")


def case_bad_cli_missing(a):
    bad_cli(a, ["--port", 9, "--conns", 1, "--duration", 1], ["--size", 8, "--duration", 1],
            needle="required")
    bad_cli(a, [*BASE, "--port"], needle="needs a value")


def case_bad_cli_both(a):
    bad_cli(a, [*BASE, "--requests", 5], ["--port", 9, "--conns", 1, "--size", 8],
            needle="exactly one of")


def case_bad_cli_value(a):
    bad_cli(a, [*BASE, "--conns", 0], [*BASE, "--size", "abc"], [*BASE, "--threads", 1000],
            [*BASE, "--rate", -5], [*BASE, "--port", 70000], [*BASE, "--duration", "1x"],
            needle="must be")
    # Decimal options as strictly: no sign, blank, hex or infinity.
    bad_cli(a, [*BASE, "--rate", "+5"], [*BASE, "--warmup", " 1"], [*BASE, "--think", "0x1"],
            [*BASE, "--max-failed", "-0"], [*BASE, "--timeout", "inf"], needle="must be")


def case_bad_cli_integer(a):
    # Whole numbers are digits only, as strictly as the decimal options: strtoull alone takes
    # leading blanks and a sign ("+5", " 5", "-0"), which no count is written as.
    bad_cli(a, [*BASE, "--conns", " 5"], [*BASE, "--port", "+5"], [*BASE, "--conns", "-0"],
            [*BASE, "--size", "\t8K"], [*BASE, "--seed", "+1"], [*BASE, "--requests", ""],
            [*BASE, "--size", "8 K"], [*BASE, "--pipeline", "0x2"], [*BASE, "--size", "+8K"],
            needle="a whole number")
    # ... while a size's suffix still reads as one.
    p = subprocess.run([a.load, *map(str, BASE[:4]), "--size", "8k", "--duration", "0.1",
                        "--connect-timeout", "0.2", "--json"], capture_output=True, text=True,
                       timeout=10)
    check(p.stdout.startswith("{") and json.loads(p.stdout)["config"]["size"] == 8192,
          "--size 8k is 8192 bytes", (p.returncode, p.stderr))


def case_bad_cli_remote_host(a):
    bad_cli(a, [*BASE, "--host", "10.1.2.3"], [*BASE, "--host", "192.0.2.1"],
            [*BASE, "--host", "0.0.0.0"], [*BASE, "--host", "example.org"],
            needle="loopback")


def case_bad_cli_remote_host6(a):
    bad_cli(a, [*BASE, "--host", "2001:db8::1"], [*BASE, "--host", "::"],
            [*BASE, "--host", "::ffff:10.0.0.1"], needle="loopback")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--load", {"required": True}),
                 ("--server", {"required": True})))
