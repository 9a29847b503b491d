"""timers.json: read timeouts' cost per timer structure, sleep lateness beside cyclictest's, and
idle wake-ups per server."""
import data as D
import figures as F
import charts.style as style
from charts.style import grid, not_run, register

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
    missing = []
    for j, n in enumerate(levels):
        for i, s in enumerate(structures):
            f = cpu_ratio(runs, s, n)
            if f["value"] is None:
                missing.append(f"{s}@{n}")
                continue
            x = i + (j - (len(levels) - 1) / 2) * width
            bar = ax.bar(x, f["value"], width, color=style.color(s), alpha=0.85,
                         hatch=HATCHES[j % len(HATCHES)], edgecolor="white")
            style.tag_bars(bar, [s])
            if f["low"] is not None:
                ax.errorbar(x, f["value"], yerr=[[f["value"] - f["low"]], [f["high"] - f["value"]]],
                            fmt="none", ecolor="black", capsize=3)
    ax.axhline(1.0, color="0.3", lw=1, ls="-", label="none: no read timeout (= 1)")
    for j, n in enumerate(levels):  # the levels' key in grey: the colours name structures
        ax.bar([0], [0], 0, color="0.75", hatch=HATCHES[j % len(HATCHES)], edgecolor="white",
               label=f"{n} connections")
    ax.set_xticks(range(len(structures)))
    ax.set_xticklabels(structures)
    ax.set_xlabel("timer structure (--timers); hatching: connection level")
    ax.set_ylabel("server CPU per request, read timeout / none (x)")
    ax.set_ylim(0, None)
    ax.legend(fontsize=8, loc="lower right")
    grid(ax)
    return (f"fiber echo server, --read-timeout {(doc.get('cpu') or {}).get('read_timeout_ms')} "
            "ms (never fires: every request arms a timer its data cancels); bars: median of "
            "per-round paired ratios, whiskers: 95% bootstrap interval"
            + (f"; no paired rounds: {', '.join(missing)}" if missing else ""))


HATCHES = ["", "//", "..", "xx"]


def cpu_ratio(runs, structure, conns):
    p = D.paired(runs, "server_cpu_us_per_request", {"variant": structure}, {"variant": "none"},
                 conns=conns, kind="tput")
    return F.paired(structure, p["per_round"], "x", "timers")


QUANTILES = (("p50", "o"), ("p99", "s"), ("max", "^"))


@register(CHARTS, "timers_lateness",
          "Sleep lateness per timer structure beside the kernel's own (cyclictest)")
def timers_lateness(run, fig):
    ax = fig.add_subplot(111)
    lt = _doc(run).get("lateness") or {}
    rows = [e for e in lt.get("summary", []) if (e.get("p50") or {}).get("median") is not None]
    if not rows:
        not_run(ax, run.why("timers") if not _doc(run) else "no lateness in timers.json")
        return ""
    for i, e in enumerate(rows):
        for k, (q, mk) in enumerate(QUANTILES):
            v = e.get(q) or {}
            if v.get("median") is None:
                continue
            y = i + (k - 1) * 0.22
            ax.plot(v["median"], y, mk, color=style.color(e["variant"]), ms=7,
                    gid=style.member_gid(e["variant"]))
            if v.get("low") is not None and v.get("high") is not None:
                ax.plot([v["low"], v["high"]], [y, y], color=style.color(e["variant"]), lw=1.5)
    for q, mk in QUANTILES:
        ax.plot([], [], mk, color="0.3", ls="none", label=q)
    ax.set_xscale("log")  # dots, not bars: p50 and max lie orders of magnitude apart
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([e["variant"] for e in rows])
    ax.invert_yaxis()
    ax.set_ylabel("timer structure (timer-lateness), and cyclictest: the kernel's floor")
    ax.set_xlabel("late past the deadline (us, log scale; line: 95% interval over the rounds)")
    ax.legend(fontsize=8, loc="lower right")
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
    # The servers that never woke are named in one line, not drawn as rows of empty bars.
    awake = [e for e in rows if e["wakeups_per_s"]["median"] > 0]
    asleep = [e["variant"] for e in rows if e["wakeups_per_s"]["median"] <= 0]
    if not awake:
        not_run(ax, "no server woke while idle: " + ", ".join(asleep))
        return ""
    ys = list(range(len(awake)))
    w = [e["wakeups_per_s"] for e in awake]
    bars = ax.barh(ys, [x["median"] for x in w], color=[style.color(e["variant"]) for e in awake],
                   xerr=[[x["median"] - (x.get("low") if x.get("low") is not None else x["median"])
                          for x in w],
                         [(x.get("high") if x.get("high") is not None else x["median"]) - x["median"]
                          for x in w]], ecolor="k", capsize=3)
    style.tag_bars(bars, [e["variant"] for e in awake])
    for y, x in zip(ys, w):
        ax.text(x["median"], y, f"  {x['median']:.3g}/s", va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([e["variant"] for e in awake], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(x.get("high") or x["median"] for x in w) * 1.25)
    ax.set_xlabel("wake-ups per second (context switches of the server's processes)")
    grid(ax)
    return (f"{idle.get('conns')} connections open, each echoed once, then {idle.get('window_s')}"
            " s counted by perf with no traffic; whiskers: range over the rounds; "
            f"never woke (0/s): {', '.join(asleep) if asleep else 'none'}")
