"""Readiness against completion (scale.json's completion part): measured beside the claims,
with no verdict."""
from formatting import value_text


def completion_section(run):
    """Readiness against completion: measured beside the claims, no verdict (the published
    comparisons disagree: +49% and +42% for io_uring in two echo benchmarks, -3% to -12% in
    others)."""
    comp = (run.get("scale") or {}).get("completion")
    out = ["## Readiness against completion", ""]
    if not comp or comp.get("status") == "not run":
        return out + [f"not run: {comp.get('reason') if comp else run.why('scale')}", ""]
    out += ["Throughput (requests/s), server CPU per request (us) and kernel entries per "
            "request (every system call of the server: perf on raw_syscalls:sys_enter in a "
            "separate counted run) by connections; medians of interleaved rounds. Published "
            "comparisons disagree (io_uring +49% and +42% in two echo benchmarks, -3% to -12% "
            "in others), so nothing is assumed here.", "",
            "| configuration | connections | requests/s | CPU us/request | kernel entries/request "
            "| event-loop calls/request |", "|---|---:|---:|---:|---:|---:|"]
    counts = {(c["config"], c["conns"]): c for c in comp.get("counts", [])}
    for cfg in comp.get("configs", []):
        for n in comp.get("conns", []):
            s = ((comp.get("summary") or {}).get(cfg) or {}).get(str(n)) or {}
            c = counts.get((cfg, n), {})
            if s.get("status") != "ok":
                out.append(f"| {cfg} | {n} | {s.get('status', 'not run')} | | | |")
                continue
            out.append(f"| {cfg} | {n} | {s['median']:.0f} | "
                       f"{value_text(s.get('server_cpu_us_per_request'), '.3g')} | "
                       f"{value_text(c.get('kernel_entries_per_request'), '.3g')} | "
                       f"{value_text(c.get('event_loop_calls_per_request'), '.3g')} |")
    out.append("")
    for cfg, why in (comp.get("not_built") or {}).items():
        out.append(f"- {cfg}: {why}")
    out.append("")
    if (run.dir / "completion.png").exists():
        out += ["![completion](completion.png)", ""]
    return out
