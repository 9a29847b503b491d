"""The figures of several echo-load agents (one per load host) as one echo-load result: counts
summed, latency percentiles from the merged histogram (never averages of the agents'), the
client's status from the busiest agent."""
import math

LAYOUT_KEYS = ("layout", "sub_bits", "top_bits")


class MergeError(ValueError):
    pass


def hist_merge(hists):
    """One histogram of every sample of `hists` (echo-load's latency_us.histogram objects):
    counts added per bucket. Refuses histograms of different layouts (MergeError)."""
    hists = list(hists)
    if not hists:
        raise MergeError("no histogram to merge")
    layout = {k: hists[0].get(k) for k in LAYOUT_KEYS}
    buckets = {}
    for h in hists:
        if {k: h.get(k) for k in LAYOUT_KEYS} != layout:
            raise MergeError(f"histogram layouts differ: {layout} and "
                             f"{ {k: h.get(k) for k in LAYOUT_KEYS} }")
        for i, n in h["buckets"]:
            buckets[i] = buckets.get(i, 0) + n
    full = [h for h in hists if h["count"]]
    return dict(layout, count=sum(h["count"] for h in hists),
                min=min((h["min"] for h in full), default=0),
                max=max((h["max"] for h in full), default=0),
                sum=sum(h["sum"] for h in hists),
                buckets=[[i, buckets[i]] for i in sorted(buckets) if buckets[i]])


def _bucket_mid(i, sub):
    shift = 0 if i < 2 * sub else i // sub - 1
    low = (i - sub * shift) << shift
    return low + ((1 << shift) - 1) // 2


def percentile_ns(h, p):
    """The nearest-rank percentile of histogram h in ns, as echo-load's C code computes it
    (harness/load/histogram.c): the middle of the bucket holding rank ceil(p/100 * count), clamped
    to the exact min and max."""
    if not h["count"]:
        return 0
    if p >= 100:
        return h["max"]
    rank = max(1, math.ceil(p / 100.0 * h["count"]))
    seen, sub = 0, 1 << h["sub_bits"]
    for i, n in h["buckets"]:
        seen += n
        if seen >= rank:
            return min(max(_bucket_mid(i, sub), h["min"]), h["max"])
    return h["max"]


def latency_block(h, source):
    """echo-load's latency_us object of histogram h."""
    us = {q: round(percentile_ns(h, p) / 1e3, 3)
          for q, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p999", 99.9))}
    return dict(us, **{"from": source, "max": round(h["max"] / 1e3, 3),
                       "min": round(h["min"] / 1e3, 3),
                       "mean": round(h["sum"] / h["count"] / 1e3, 3) if h["count"] else 0.0,
                       "samples": h["count"], "histogram": h})


def _sum(docs, key):
    return sum(d.get(key) or 0 for d in docs)


def _agent_summary(host, d):
    cpu = d.get("cpu") or {}
    return {"host": host, "requests": d.get("requests"), "bytes": d.get("bytes"),
            "bytes_all": d.get("bytes_all"), "connects": d.get("connects"),
            "clock_ns": d.get("agent"),
            "histogram": (d.get("latency_us") or {}).get("histogram"),
            "requests_per_sec": d.get("requests_per_sec"), "seconds": d.get("seconds"),
            "errors_total": d.get("errors_total"), "mismatches": d.get("mismatches"),
            "verified": not d.get("mismatches") and not any(
                (d.get("errors") or {}).get(k) for k in ("mismatch", "early_close", "reset")),
            "p99_us": (d.get("latency_us") or {}).get("p99"),
            "cores_used": cpu.get("cores_used"), "saturated": cpu.get("saturated"),
            "exit_status": d.get("exit_status"), "stopped_by": d.get("stopped_by")}


def merge(hosts, docs):
    """One echo-load-shaped result of the agents' JSON `docs` (one per host, same order):
    requests, bytes and errors summed, throughput summed over the agents (each measured the
    same window), the latency of the merged histogram, cpu of the busiest agent (a point is
    client-bound only if an agent was), and `agents`: each agent's own figures."""
    lat = hist_merge((d.get("latency_us") or {}).get("histogram") or {} for d in docs)
    errors = {}
    for d in docs:
        for k, v in (d.get("errors") or {}).items():
            errors[k] = errors.get(k, 0) + (v or 0)
    cpus = [d.get("cpu") or {} for d in docs]
    busiest = max(cpus, key=lambda c: c.get("cores_used") or 0)
    ramps = [d.get("ramp_up") or {} for d in docs]
    stops = [d.get("stopped_by") for d in docs if d.get("stopped_by")]
    exits = [d.get("exit_status") or 0 for d in docs]
    config = dict(docs[0].get("config") or {}, conns=_sum([d.get("config") or {}
                                                          for d in docs], "conns"))
    return {"tool": "echo-load", "config": config, "meta": docs[0].get("meta"),
            "requests": _sum(docs, "requests"), "bytes": _sum(docs, "bytes"),
            "bytes_all": _sum(docs, "bytes_all"),
            "seconds": max(d.get("seconds") or 0 for d in docs),
            "requests_per_sec": round(_sum(docs, "requests_per_sec"), 3),
            "unfinished": _sum(docs, "unfinished"), "connects": _sum(docs, "connects"),
            "latency_us": latency_block(lat, (docs[0].get("latency_us") or {}).get("from")),
            "ramp_up": {"seconds": max(r.get("seconds") or 0 for r in ramps),
                        "errors_total": sum(r.get("errors_total") or 0 for r in ramps)},
            "errors": errors, "errors_total": _sum(docs, "errors_total"),
            "mismatches": _sum(docs, "mismatches"),
            "cpu": dict(busiest, saturated=any(c.get("saturated") for c in cpus)),
            "warnings": [f"{h}: {w}" for h, d in zip(hosts, docs) for w in d.get("warnings", [])],
            "capped": any(d.get("capped") for d in docs),
            "partial": any(d.get("partial") for d in docs),
            "stopped_by": stops[0] if stops else None,
            "exit_status": next((e for e in (1, 5, 3, 4) if e in exits), max(exits)),
            "agents": [_agent_summary(h, d) for h, d in zip(hosts, docs)]}
