"""The ramp-up section: how long each model took to connect and echo once on every connection."""
import data as D

# The points whose ramp-up is tabulated: every point that measured something (a saturated load
# generator or a busy machine bounds the window's throughput, not how long connecting took,
# though it may lengthen it: those cells say their status).
RAMP_STATUSES = D.MEASURED


def ramp_section(run):
    out = ["## Ramp-up", "",
           "echo-load connects every connection and completes one verified echo on each "
           "before its window opens; this is how long that took per model (seconds, "
           "persistent connections), with its errors. C6 and C7 read only the window. "
           "Client-bound and contended points are listed too, marked: their ramp-up happened "
           "before the window whose throughput the load generator or other jobs bounded; "
           "failed and limit points are not.", ""]
    sweep = run.get("sweep")
    pts = [p for p in (sweep or {}).get("points", []) if p.get("mode") == "pingpong"
           and D.point_status(p)[0] in RAMP_STATUSES and D.ramp(p)]
    if not pts:
        return out + [f"not run: no ramp-up figures ({run.why('sweep')})", ""]
    levels = sorted({p["conns"] for p in pts})
    out += ["| model | " + " | ".join(str(c) for c in levels) + " |",
            "|---" * (len(levels) + 1) + "|"]
    for m in run.order("models", {p["model"] for p in pts}):
        cells = []
        for c in levels:
            q = [p for p in pts if p["model"] == m and p["conns"] == c]
            if not q:
                cells.append("-")
                continue
            r = D.ramp(q[0])
            status = D.point_status(q[0])[0]
            cells.append(f"{r['seconds']:.2f}" + (f" ({r['errors_total']} err)"
                                                   if r.get("errors_total") else "")
                         + ("" if r.get("complete", True) else " incomplete")
                         + ("" if status == "ok" else f" ({status})"))
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    out.append("")
    if (run.dir / "ramp_time.png").exists():
        out += ["![ramp_time](ramp_time.png)", ""]
    return out
