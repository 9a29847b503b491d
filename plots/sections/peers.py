"""The peers section: our fiber server beside the runtimes a reader would pick instead (libuv,
libev, Boost.Asio's coroutines, GNU Pth, with the epoll yardstick and libevent), from peers.json;
in a quick run, from fiberio's first round, where the same servers ran once each."""
import figures as F
from verdict import fmt

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


def with_ci(v, ci, spec):
    if v is None:
        return "-"
    return fmt(v, spec) + (f" [{fmt(ci[0], spec)}, {fmt(ci[1], spec)}]" if ci else "")


def peers_section(run):
    out = ["## Beside the runtimes people already use", "",
           "Our fiber echo server with its defaults, beside every callback server (the raw-epoll "
           "yardstick, libevent, libuv, libev) and every coroutine server (Boost.Asio's stackful "
           "coroutines through `spawn`, GNU Pth with one Pth thread per connection), each an "
           "echo-server model written as its library's documentation intends "
           "(servers/README.md), under the same ping-pong load of 64 B requests, in the same "
           "interleaved rounds. Kernel entries per request are the kernel's own count "
           "(`raw_syscalls:sys_enter` on the server); the peers' libraries hide their calls "
           "from the model, so no model-side count is compared here.", ""]
    table, source, note = rows(run)
    if not table:
        return out + [f"not run: {note}", ""]
    out += [f"Source: `{source}.json`, {note}; brackets: 95% bootstrap intervals. The ratio "
            "columns are the fiber server's figure over the peer's, paired round by round "
            "(CPU below 1 and throughput above 1: ours ahead).", "",
            "| conns | server | kind | CPU/request (us) | req/s | syscalls/request | "
            "fiber/peer CPU | fiber/peer req/s |", "|---|---|---|---|---|---|---|---|"]
    for r in table:
        if str(r.get("status", "ok")).startswith("not run"):
            out.append(f"| {r['conns']} | {r['server']} | {r['kind']} | {r['status']} | | | | |")
            continue
        out.append(f"| {r['conns']} | {r['server']} | {r['kind']} | "
                   f"{with_ci(r.get('cpu'), r.get('cpu_ci'), '.2f')} | "
                   f"{with_ci(r.get('rps'), r.get('rps_ci'), '.0f')} | "
                   f"{fmt(r.get('sys'), '.2f')} | "
                   f"{with_ci(r.get('ratio_cpu'), r.get('ratio_cpu_ci'), '.3f')} | "
                   f"{with_ci(r.get('ratio_rps'), r.get('ratio_rps_ci'), '.3f')} |")
    out.append("")
    if (run.dir / "peers.png").exists():
        out += ["![peers](peers.png)", ""]
    return out


def figures(run):
    """peers.json's figures for compare.py: per level, every server's CPU per request and
    req/s over its rounds, its kernel entries per request (exact), and the fiber server's paired
    ratio to each peer. Empty without peers.json."""
    doc = run.get("peers")
    if not doc:
        return []
    out, src = [], "peers.json"
    for r in doc.get("summary") or []:
        tput = [x for x in doc.get("runs") or [] if x.get("conns") == r["conns"]
                and x.get("variant") == r["server"] and x.get("kind") == "tput"]
        at = f"peers {r['conns']} conns, {r['server']}"
        out.append(F.repeated(f"{at}: CPU per request",
                              [x.get("server_cpu_us_per_request") for x in tput], "us", src))
        out.append(F.repeated(f"{at}: throughput", [x.get("requests_per_sec") for x in tput],
                              "req/s", src))
        out.append(F.exact(f"{at}: syscalls per request", r.get("syscalls_per_request"), "",
                           src))
    for r in doc.get("ratios") or []:
        what = "CPU" if r["key"] == "server_cpu_us_per_request" else "throughput"
        out.append(F.paired(f"peers {r['conns']} conns: {what}, fiber/{r['den']}",
                            r.get("per_round"), "x", src))
    return out
