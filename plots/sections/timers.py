"""Timer structures where servers use them (timers.json): the tables behind claim C17's
figures, every structure and server measured."""
from formatting import value_text


def _cell(e):
    return "n/a" if not e or e.get("median") is None else (
        f"{e['median']:.3g}" + (f" [{e['low']:.3g}, {e['high']:.3g}]"
                                if e.get("low") is not None else "") + f" (n={e['n']})")


def timers_section(run):
    doc = run.get("timers")
    out = ["## Timer structures where servers use them", ""]
    if not doc:
        return out + [f"not run: {run.why('timers')}", ""]
    cpu = doc.get("cpu") or {}
    if cpu.get("summary"):
        out += [f"Fiber echo server, 64-byte ping-pong, `--read-timeout "
                f"{cpu.get('read_timeout_ms')}` (never fires: each request arms a timer its "
                "data cancels): server CPU per request (us), median [95% interval] (rounds), "
                "and the per-round ratio to the same server without timeouts.", "",
                "| connections | structure | CPU us/request | over none |", "|---:|---|---:|---:|"]
        for e in cpu["summary"]:
            r = (cpu.get("ratios") or {}).get(f"{e['conns']} {e['variant']}/none")
            out.append(f"| {e['conns']} | {e['variant']} | {_cell(e['server_cpu_us_per_request'])}"
                       f" | {_cell(r) if r else ''} |")
        for n, why in (cpu.get("skipped") or {}).items():
            out.append(f"| {n} | (all) | not run: {why} | |")
        out.append("")
    lt = doc.get("lateness") or {}
    if lt.get("summary"):
        out += [f"Sleep lateness (us past the deadline): {lt.get('sleeps')} sleeps of "
                f"{lt.get('sleep_us')} us with {lt.get('pending')} other timers pending, medians "
                "over the rounds [95% interval]; cyclictest is the kernel's own timer wake-up "
                "latency on the same CPU.", "", "| structure | p50 | p99 | max |",
                "|---|---:|---:|---:|"]
        for e in lt["summary"]:
            if e.get("status") == "not run":
                out.append(f"| {e['variant']} | not run: {e.get('why')} | | |")
            else:
                out.append(f"| {e['variant']} | {_cell(e['p50'])} | {_cell(e['p99'])} | "
                           f"{_cell(e['max'])} |")
        out.append("")
    idle = doc.get("idle") or {}
    if idle.get("status") == "not run":
        out += [f"Idle wake-ups: not run: {idle.get('why')}", ""]
    elif idle.get("summary"):
        out += [f"Idle wake-ups: {idle.get('conns')} connections open and no traffic for "
                f"{idle.get('window_s')} s; the server's context switches and wait calls per "
                "second (perf). A fixed poll tick (`--poll-tick 1`, as NtyCo's and libco's "
                "loops) against waits that end only at an event or a deadline.", "",
                "| server | wake-ups/s | wait calls/s |", "|---|---:|---:|"]
        for e in idle["summary"]:
            wake = (e.get("wakeups_per_s") or {}).get("median")
            waits = (e.get("wait_calls_per_s") or {}).get("median")
            out.append(f"| {e['variant']} | {value_text(wake, '.1f')} | {value_text(waits, '.1f')} "
                       "|")
        out.append("")
    return out
