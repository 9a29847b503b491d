"""The slow-clients section: every model against clients that send in chunks and think."""
import data as D
import figures as F
from formatting import value_text
from harness_api import KERNEL_RESOLUTION_KIB, MEMINFO_DRIFT_KIB


def slow_section(run):
    out = ["## Slow clients", "",
           "The articles' core argument: a blocking model ties a thread or process to each "
           "slow connection. Here the slowness is made by the client, not the link: echo-load "
           "--mode slow sends each request in chunks with a delay between them and thinks "
           "between requests (this kernel has no netem qdisc, so a slow network cannot be "
           "emulated). Every byte is still verified.", ""]
    slow = run.get("slow")
    if not slow:
        return out + [f"not run: {run.why('slow')}", ""]
    cfg = slow.get("config") or {}
    size = cfg.get("size") or 64
    out += [f"Requests of {size} B; echo-load flags `{cfg.get('load_args', '')}`. Server CPU "
            "per request is its getrusage (children included) over every request it echoed.",
            "", "| model | conns | req/s | p99 (ms) | errors | server CPU/request (us) | "
            "RSS/conn (KiB) | kernel/conn (KiB) |", "|---|---|---|---|---|---|---|---|"]
    pts = slow.get("points", [])
    for m in run.order("models", {p["model"] for p in pts}):
        for p in sorted((q for q in pts if q["model"] == m), key=lambda q: q["conns"]):
            status = D.point_status(p)[0]
            if status not in D.MEASURED or not p.get("load"):
                out.append(f"| {m} | {p['conns']} | {D.status_text(p)} | | | | | |")
                continue
            kern, _ = D.kernel_per_conn(p)
            # A client-bound or contended point's req/s and p99 are the load generator's or
            # the busy machine's: shown in brackets with the status, not as the server's.
            tput = f"{D.rps(p):.0f}" if status == "ok" else f"({D.rps(p):.0f}, {status})"
            p99 = p['load']['latency_us']['p99'] / 1000
            out.append(f"| {m} | {p['conns']} | {tput} | "
                       + (f"{p99:.1f}" if status == "ok" else f"({p99:.1f})")
                       + f" | {D.point_errors(p)} | "
                       f"{value_text(D.server_cpu_us_per_request(p, size), '.1f')} | "
                       f"{p['rss']['per_conn_kb']:.1f} | {F.kernel_kib(kern, p['conns'])} |")
    out += ["", "Server CPU per request and memory per connection are read on client-bound and "
            "contended points too: the load generator's speed does not set them (the server's "
            "CPU and memory are its own). Kernel memory per connection below the resolution of "
            f"/proc/meminfo's machine-wide difference (the larger of {KERNEL_RESOLUTION_KIB:g} "
            f"KiB and {MEMINFO_DRIFT_KIB / 1024:g} MiB over the connections) reads "
            "\"< R (below resolution)\": a negative difference is noise, never memory given "
            "back."]
    out.append("")
    if (run.dir / "slow_clients.png").exists():
        out += ["![slow_clients](slow_clients.png)", ""]
    return out
