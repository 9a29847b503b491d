"""The peers section: our fiber server beside the runtimes a reader would pick instead (libuv,
libev, Boost.Asio's coroutines, GNU Pth, with the epoll yardstick and libevent), from peers.json;
in a quick run, from fiberio's first round, where the same servers ran once each."""
import figures as F
from peerdata import rows
from formatting import value_text

def with_ci(v, ci, spec):
    if v is None:
        return "-"
    return value_text(v, spec) + (f" [{value_text(ci[0], spec)}, "
                                  f"{value_text(ci[1], spec)}]" if ci else "")


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
                   f"{value_text(r.get('sys'), '.2f')} | "
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
