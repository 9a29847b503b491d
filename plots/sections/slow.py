"""The slow-clients section: every model against clients that send in chunks and think."""
import data as D
from verdict import fmt


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
            if p.get("status") != "ok" or not p.get("load"):
                out.append(f"| {m} | {p['conns']} | {p.get('status')}: "
                           f"{p.get('reason', '')} | | | | | |")
                continue
            kern, _ = D.kernel_per_conn(p)
            out.append(f"| {m} | {p['conns']} | {D.rps(p):.0f} | "
                       f"{p['load']['latency_us']['p99'] / 1000:.1f} | {D.point_errors(p)} | "
                       f"{fmt(D.server_cpu_us_per_request(p, size), '.1f')} | "
                       f"{p['rss']['per_conn_kb']:.1f} | {fmt(kern, '.1f')} |")
    out.append("")
    if (run.dir / "slow_clients.png").exists():
        out += ["![slow_clients](slow_clients.png)", ""]
    return out
