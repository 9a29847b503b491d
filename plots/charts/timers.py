"""timers.json: read timeouts' cost per timer structure, sleep lateness beside cyclictest's, and
idle wake-ups per server."""
import data as D
import figures as F
from charts.style import grid, not_run, register, series_style

CHARTS = []


def _doc(run):
    return run.get("timers") or {}


@register(CHARTS, "timers_cpu",
          "Echo server CPU per request with a read timeout, per timer structure, over none")
def timers_cpu(run, fig):
    ax = fig.add_subplot(111)
    doc = _doc(run)
    runs = [r for r in (doc.get("cpu") or {}).get("runs", [])
            if r.get("status") in ("ok", "client-bound", "contended")]
    levels = sorted({r["conns"] for r in runs})
    structures = [s for s in doc.get("structures", []) if any(r["variant"] == s for r in runs)]
    if not levels or not structures:
        not_run(ax, run.why("timers") if not doc else "no CPU rounds in timers.json")
        return ""
    width = 0.8 / len(levels)
    for j, n in enumerate(levels):
        color, _ = series_style(j)
        for i, s in enumerate(structures):
            p = D.paired(runs, "server_cpu_us_per_request", {"variant": s}, {"variant": "none"},
                         conns=n, kind="tput")
            f = F.paired(s, p["per_round"], "x", "timers")
            if f["value"] is None:
                continue
            x = i + (j - (len(levels) - 1) / 2) * width
            lo, hi = (f["low"], f["high"]) if f["low"] is not None else (f["value"],) * 2
            ax.bar(x, f["value"], width, color=color, alpha=0.8,
                   label=f"{n} connections" if i == 0 else None)
            ax.errorbar(x, f["value"], yerr=[[f["value"] - lo], [hi - f["value"]]], fmt="none",
                        ecolor="black", capsize=3)
    ax.axhline(1.0, color="0.3", lw=1, ls="--")
    ax.set_xticks(range(len(structures)))
    ax.set_xticklabels(structures)
    ax.set_xlabel("timer structure (--timers)")
    ax.set_ylabel("server CPU per request, read timeout / none (x)")
    ax.legend(fontsize=8)
    grid(ax)
    return (f"fiber echo server, --read-timeout {(doc.get('cpu') or {}).get('read_timeout_ms')} "
            "ms (never fires: every request arms a timer its data cancels); bars: median of "
            "per-round paired ratios, whiskers: 95% bootstrap interval")


@register(CHARTS, "timers_lateness",
          "Sleep lateness per timer structure beside the kernel's own (cyclictest)")
def timers_lateness(run, fig):
    ax = fig.add_subplot(111)
    lt = _doc(run).get("lateness") or {}
    rows = [e for e in lt.get("summary", []) if (e.get("p50") or {}).get("median") is not None]
    if not rows:
        not_run(ax, run.why("timers") if not _doc(run) else "no lateness in timers.json")
        return ""
    for k, q in enumerate(("p50", "p99", "max")):
        color, _ = series_style(k)
        xs = [i + (k - 1) * 0.27 for i in range(len(rows))]
        ax.bar(xs, [e[q]["median"] for e in rows], 0.27, color=color, label=q)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([e["variant"] for e in rows])
    ax.set_xlabel("timer structure (timer-lateness), and cyclictest: the kernel's floor")
    ax.set_ylabel("late past the deadline (us, log scale)")
    ax.legend(fontsize=8)
    grid(ax)
    return (f"{lt.get('sleeps')} sleeps of {lt.get('sleep_us')} us per round with "
            f"{lt.get('pending')} other timers pending; medians over the rounds")


@register(CHARTS, "timers_idle", "Idle wake-ups per second with connections open, per server")
def timers_idle(run, fig):
    ax = fig.add_subplot(111)
    idle = _doc(run).get("idle") or {}
    rows = [e for e in idle.get("summary", [])
            if (e.get("wakeups_per_s") or {}).get("median") is not None]
    if not rows:
        not_run(ax, idle.get("why") or run.why("timers"))
        return ""
    ys = range(len(rows))
    ax.barh(list(ys), [e["wakeups_per_s"]["median"] for e in rows], color="tab:blue")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([e["variant"] for e in rows], fontsize=7)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("wake-ups per second (context switches of the server's processes; "
                  "symlog scale)")
    grid(ax)
    return (f"{idle.get('conns')} connections open, each echoed once, then {idle.get('window_s')}"
            " s counted by perf with no traffic")
