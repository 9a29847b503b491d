"""The peers' figures as the report shows them (harness/experiments/peers.py): one row per connection
level and server from peers.json, or in a quick run from fiberio's first round, where the same
servers ran once each beside the fiber server. Read by the peers section and chart; imports
nothing of plots/ (the run is anything with get() and why())."""

# The servers in the order the section and the chart show them, with their kind.
SERVERS = [("fiber", "ours"), ("epoll", "callback"), ("libevent", "callback"),
           ("libuv", "callback"), ("libev", "callback"), ("asio-coro", "coroutine"),
           ("pth", "coroutine")]
KIND = dict(SERVERS)


def rows(run):
    """(rows, source, note): one row per level and server, {conns, server, kind, cpu, cpu_ci,
    rps, rps_ci, sys, status, ratio_cpu, ratio_cpu_ci, ratio_rps, ratio_rps_ci}, or ([], None,
    why) without data."""
    doc = run.get("peers")
    if doc:
        rat = {(r["conns"], r["den"], r["key"]): r for r in doc.get("ratios") or []}
        out = []
        for r in doc.get("summary") or []:
            c = rat.get((r["conns"], r["server"], "server_cpu_us_per_request")) or {}
            t = rat.get((r["conns"], r["server"], "requests_per_sec")) or {}
            out.append({"conns": r["conns"], "server": r["server"], "kind": r["kind"],
                        "cpu": r.get("server_cpu_us_per_request"),
                        "cpu_ci": r.get("server_cpu_us_per_request_ci"),
                        "rps": r.get("requests_per_sec"),
                        "rps_ci": r.get("requests_per_sec_ci"),
                        "sys": r.get("syscalls_per_request"), "status": r.get("status"),
                        "ratio_cpu": c.get("median"), "ratio_cpu_ci": c.get("ci"),
                        "ratio_rps": t.get("median"), "ratio_rps_ci": t.get("ci")})
        for s in doc.get("not_run") or []:
            out.append({"conns": s["conns"], "server": s["server"],
                        "kind": KIND.get(s["server"], "?"), "status": "not run: " + s["reason"]})
        rounds = (doc.get("config") or {}).get("rounds", "?")
        return sorted(out, key=order_key), "peers", f"medians of {rounds} interleaved rounds"
    fio = run.get("fiberio")
    if not fio:
        return [], None, run.why("peers")
    default = fio.get("default")
    out = []
    for r in fio.get("summary") or []:
        name = "fiber" if r.get("variant") == default else r.get("variant")
        if r.get("load") != "pingpong" or name not in KIND:
            continue
        out.append({"conns": (fio.get("config") or {}).get("conns", 100), "server": name,
                    "kind": KIND[name], "cpu": r.get("server_cpu_us_per_request"),
                    "rps": r.get("requests_per_sec"), "sys": r.get("syscalls_per_request"),
                    "status": "ok"})
    if not any(r["kind"] != "ours" and r["server"] not in ("epoll", "libevent") for r in out):
        return [], None, f"{run.why('peers')}; fiberio measured no peer either"
    ours = {r["conns"]: r for r in out if r["server"] == "fiber"}
    for r in out:
        o = ours.get(r["conns"])
        if o and r["server"] != "fiber":
            r["ratio_cpu"] = o["cpu"] / r["cpu"] if o.get("cpu") and r.get("cpu") else None
            r["ratio_rps"] = o["rps"] / r["rps"] if o.get("rps") and r.get("rps") else None
    return (sorted(out, key=order_key), "fiberio",
            f"fiberio's first round, one run each ({run.why('peers')})")


def order_key(r):
    names = [s for s, _ in SERVERS]
    return (r["conns"], names.index(r["server"]) if r["server"] in names else len(names))
