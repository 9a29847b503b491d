"""C10: with multiplexing, one core can hold 100K concurrent connections."""
import data as D
import figures as F
import verdict as V
from formatting import value_text

ID = "C10"
SOURCE = "seed 000 (libfiber)"
CLAIM = "With multiplexing, one core can hold 100K concurrent connections."
BRIEF = 'One core holds 100K concurrent connections with multiplexing.'
QUOTED = "100K connections on one core"
CHARTS = ["rss_per_conn"]

# The target itself is the experiment's (maxconns.json config.target, 100K by default).
COPY_AIM_KIB = 4  # the project's aim per connection in copy-stack mode at the target

RULE = ("one core: holds when the fiber server, every one of its processes pinned to one "
        "CPU, held the target (100K) connections with no error under a trickle of verified "
        "traffic, in at least one stack mode; holds partly when the target could not run "
        "because of a machine limit, every level that ran was held without error, and the "
        "memory projected for the target fits in MemAvailable; does not hold when a level "
        "within the limits was not held; otherwise not run")


def point_line(p, cpus):
    where = (f" ({p['stack']} stacks, {p['procs']} process{'es' if p['procs'] > 1 else ''}"
             + (f" on CPU {cpus}" if cpus is not None else "") + ")") if "stack" in p else ""
    status = D.point_status(p)[0]
    if status not in D.MEASURED:
        return f"- {p['conns']} connections{where}: {D.status_text(p)}"
    pss = p.get("pss_per_conn_kb")
    return (f"- {p['conns']} connections{where}: held {p.get('held')}, errors "
            f"{p.get('errors')}, "
            + (f"{value_text(pss, '.2f')} KiB PSS, " if pss is not None else "")
            + f"{value_text(p.get('rss_per_conn_kb'), '.2f')} KiB RSS and "
            f"{value_text(p.get('maps_per_conn'), '.3f')} memory maps per connection"
            + (f", server CPU {value_text(p.get('server_cpu_s'), '.2f')} s"
               if p.get("server_cpu_s") is not None else "")
            + ("" if status == "ok" else f" ({D.status_text(p)})"))


def measure(run):
    mc = run.get("maxconns")
    if not mc:
        return {"lines": [f"no max-connections run: {run.why('maxconns')}"]}
    target = mc["config"]["target"]
    pts = mc.get("points", [])
    # Connections held and their memory do not depend on the load generator's speed: a
    # client-bound or contended point held what it held.
    ran = [p for p in pts if D.point_status(p)[0] in D.MEASURED]
    lines = [point_line(p, mc["config"].get("server_cpus")) for p in pts]
    proj = mc.get("target_projection") or []
    if proj:
        lines.append(f"- what {target} connections would need: " + "; ".join(
            f"{r['resource']} {r['needed']} of {r['available']}"
            + (" (binds)" if r["binds"] else "") for r in proj))
    copy_at = [p for p in ran if str(p.get("stack", "")).startswith("copy") and p.get("all_held")
               and p["conns"] >= target and p.get("pss_per_conn_kb") is not None]
    if copy_at:
        kb = min(p["pss_per_conn_kb"] for p in copy_at)
        lines.append(f"- aim: at most {COPY_AIM_KIB} KiB per connection in copy mode at "
                     f"{target}: {kb:.2f} KiB, {'met' if kb <= COPY_AIM_KIB else 'not met'}")
    held = mc.get("max_held")
    at = mc.get("per_conn_at_max") or {}
    held_fig = F.exact("most connections held on one core", held, "", "maxconns")
    figures = [held_fig,
               F.once("resident memory per connection there", at.get("rss_per_conn_kb"), "KiB",
                      "maxconns"),
               F.exact("memory maps per connection there", at.get("maps_per_conn"), "",
                       "maxconns")]
    for stack, b in sorted((mc.get("by_stack") or {}).items()):
        pc = b.get("per_conn_at_max") or {}
        figures += [F.once(f"most connections held on one core, {stack} stacks",
                           b.get("max_held"), "", "maxconns"),
                    F.once(f"PSS per connection there, {stack} stacks",
                           pc.get("pss_per_conn_kb"), "KiB", "maxconns")]
    tgt = [p for p in pts if p["conns"] == target]
    mem = [r for r in proj if r["resource"].startswith("memory (")]
    return {"lines": lines, "figures": F.present(*figures),
            "numbers": {"connections held on one core": (held, float(target))} if held else {},
            "target": target, "held": held_fig,
            "all_held": all(p.get("all_held") for p in ran),
            "limited": bool(ran and tgt and all(D.point_status(x)[0] == "limit" for x in tgt)),
            "memory_fits": bool(mem and not mem[0]["binds"])}


def judge(m, t):
    if "target" not in m:
        return V.NOTRUN
    if t(m["held"], ">=", m["target"], name="target (maxconns.json config.target)"):
        return V.HOLDS
    if not m["all_held"]:
        return V.NOT
    if m["limited"] and m["memory_fits"]:
        return V.PARTLY
    return V.NOTRUN


def verdict(run):
    return V.decide(RULE, measure(run), judge)
