"""The points that are not ok: every measured point (sweep, slow clients, max connections, idle
scaling and churn, the engine and read-policy runs) whose status is not "ok", grouped by
status, with the reasons its driver gave (or, for older runs, data.point_status's)."""
import re

import data as D

# What each status means for the figures, said once under its heading.
MEANING = {
    "client-bound": "echo-load used (nearly) its whole core: throughput there may be the load "
                    "generator's; throughput figures leave these points out, CPU per request "
                    "and memory keep them",
    "contended": "more tasks were runnable than the run's own: other work shared the cores",
    "limit": "a limit of this machine (fds, pids, memory maps, FD_SETSIZE) stopped the point",
    "failed": "nothing usable was measured (no request, too many failed, the server died)",
    "not run": "not attempted",
}
ORDER = ("failed", "limit", "not run", "contended", "client-bound")
MAX_ROWS = 30  # per status; the rest is counted


def row_status(r):
    """(status, reasons) of a per-round record of a driver that classifies its runs; older
    records: "ok" unless their status string says otherwise."""
    st = r.get("status", "ok")
    if st in D.POINT_STATUSES and "reasons" in r:
        return st, list(r["reasons"])
    if st == "ok":
        return "ok", []
    return D.point_status({"status": st, "reason": r.get("reason") or st})


def sweep_like(run, name):
    for p in (run.get(name) or {}).get("points", []):
        st, why = D.point_status(p)
        yield name, f"{p.get('model')} {p.get('mode')} {p.get('conns')} conns", st, why


def maxconns(run):
    for p in (run.get("maxconns") or {}).get("points", []):
        if "reasons" in p or p.get("status") != "ok":
            st, why = D.point_status(p)
        else:  # older runs: a maxconns point is a trickle, its status is its own word
            st, why = "ok", []
        yield "maxconns", f"{p.get('conns')} conns, {p.get('stack')} stacks", st, why


def scale(run):
    doc = run.get("scale") or {}
    for part, key in (("idle", "idle"), ("churn", "idle"), ("completion", "conns")):
        for r in (doc.get(part) or {}).get("runs", []):
            st, why = row_status(r)
            unit = "idle" if key == "idle" else "conns"
            yield "scale", (f"{part} {r.get('config')} {r.get(key)} {unit}, round "
                            f"{r.get('round', 0) + 1}"), st, why


def rounds_of(run, name, label):
    for r in (run.get(name) or {}).get("runs", []):
        st, why = row_status(r)
        yield name, f"{label(r)}, round {r.get('round', 0) + 1}", st, why


def all_points(run):
    """(experiment, point, status, reasons) of every measured point of the run."""
    yield from sweep_like(run, "sweep")
    yield from sweep_like(run, "slow")
    yield from maxconns(run)
    yield from scale(run)
    yield from rounds_of(run, "engines", lambda r: f"{r.get('engine')} {r.get('kind')}")
    yield from rounds_of(run, "fiberio", lambda r: f"{r.get('variant')} {r.get('load')} "
                                                   f"{r.get('kind')}")


def by_experiment(pts, bad):
    """The points that are not ok counted by experiment, status and first reason, and the
    share that was client-bound: the one fact that limits what throughput can rank."""
    groups = {}
    for exp, _, st, why in bad:
        first = re.sub(r"^round \d+: ", "", why[0] if why else "-")
        reason = re.sub(r"\d[\d.,]*", "N", first.split(":")[0].split(" (")[0])
        reason = reason.replace("|", "/")
        groups[(exp, st, reason)] = groups.get((exp, st, reason), 0) + 1
    share = sum(p[2] == "client-bound" for p in pts) / len(pts)
    fact = (f"{share:.0%} of the points were bound by the load generator (echo-load saturated "
            "its core), so on this machine the fast servers cannot be ranked by throughput; "
            "their CPU per request and memory still compare." if share >= 0.25 else
            f"{share:.0%} of the points were bound by the load generator.")
    rows = sorted(groups.items(), key=lambda kv: -kv[1])
    return ([fact, "", "| experiment | status | reason | points |", "|---|---|---|---:|"]
            + [f"| {e} | {s} | {r} | {n} |" for (e, s, r), n in rows] + [""])


def points_section(run):
    pts = list(all_points(run))
    out = ["## Points that are not ok", ""]
    if not pts:
        return out + ["No measured points in this run.", ""]
    bad = [p for p in pts if p[2] != "ok"]
    counts = {s: sum(1 for p in pts if p[2] == s) for s in D.POINT_STATUSES}
    out += [f"{len(pts)} measured points (a round of a driver's interleaved rounds counts as "
            "one): " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) + ". Each status "
            "is set by the driver from echo-load's own figures (older runs: by "
            "`plots/data.py`); the charts draw these points hollow.", ""]
    if not bad:
        return out + ["Every point is ok.", ""]
    out += by_experiment(pts, bad)
    for status in ORDER:
        rows = [p for p in bad if p[2] == status]
        if not rows:
            continue
        out += [f"### {status} ({len(rows)})", "", MEANING[status] + ".", "",
                "| experiment | point | reasons |", "|---|---|---|"]
        for exp, point, _, why in rows[:MAX_ROWS]:
            text = "; ".join(why) or "-"
            out.append(f"| {exp} | {point} | {text.replace('|', '/')} |")
        if len(rows) > MAX_ROWS:
            out.append(f"| ... | {len(rows) - MAX_ROWS} more | |")
        out.append("")
    return out
