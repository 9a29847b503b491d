"""engines.json: the event engines side by side, and where naive and merged spend their time."""
import charts.style as style
from charts.style import not_run, register

CHARTS = []



@register(CHARTS, "engines", "Event engines: throughput, epoll_ctl per request, server CPU per request")
def engines(run, fig):
    eng = run.get("engines")
    axes = [fig.add_subplot(131), fig.add_subplot(132), fig.add_subplot(133)]
    summ = (eng or {}).get("summary") or {}
    if not summ:
        for ax in axes:
            not_run(ax, run.why("engines"))
        return ""
    names = run.order("engines", summ)
    cols = [style.color(e) for e in names]
    x = list(range(len(names)))

    def panel(ax, key, ylabel, title, kind="tput"):
        vals = [summ[e].get(key) for e in names]
        style.tag_bars(ax.bar(x, [v or 0 for v in vals], color=cols), names)
        ax.bar([0], [0], color="0.6", label="median (bar)")
        for i, e in enumerate(names):
            raw = [r.get(key) for r in eng.get("runs", [])
                   if r.get("engine") == e and r.get("kind") == kind]
            raw = [v for v in raw if v is not None]
            if raw:
                ax.plot([i] * len(raw), raw, "k.", ms=4,
                        label="each round" if i == 0 else None)
            if vals[i] is None:
                ax.text(i, 0, "not\ncounted", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x)
        ax.set_xticklabels(names, fontsize=8, rotation=20)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("engine")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.35)

    panel(axes[0], "requests_per_sec", "requests per second", "throughput (50 conns)")
    axes[0].legend(fontsize=7)
    panel(axes[1], "ctl_per_request_engine", "epoll_ctl calls per request",
          "epoll_ctl per request", "count")
    kern = [summ[e].get("ctl_per_request_kernel") for e in names]
    axes[1].plot(x, [k if k is not None else float("nan") for k in kern], "k_", ms=18, mew=2,
                 label="kernel count (perf)")
    axes[1].legend(fontsize=7)
    panel(axes[2], "server_cpu_us_per_request", "server CPU per request (us)",
          "server CPU time per request")
    cfg = eng.get("config", {})
    return (f"fiber echo server pinned to CPU {cfg.get('server_cpu', '?')}, echo-load on CPU "
            f"{cfg.get('load_cpu', '?')}; {cfg.get('conns', '?')} connections x "
            f"{cfg.get('size', '?')} B ping-pong; {cfg.get('rounds', '?')} interleaved rounds")



@register(CHARTS, "epoll_ctl_share", "Where the server's time goes: naive vs merged (perf samples)")
def epoll_ctl_share(run, fig):
    ax = fig.add_subplot(111)
    prof = (run.get("engines") or {}).get("profile") or []
    prof = list(prof.values()) if isinstance(prof, dict) else prof
    profiles = [p for p in prof if isinstance(p, dict) and p.get("samples")
                and p.get("epoll_ctl_share") is not None]
    if not profiles:
        why = run.why("engines") if not run.get("engines") else "no perf profile recorded"
        not_run(ax, why)
        return ""
    names = [p["engine"] for p in profiles]
    ctl = [100 * p["epoll_ctl_share"] for p in profiles]
    wait = [100 * (p.get("epoll_wait_share") or 0) for p in profiles]
    other = [max(0.0, 100 - c - w) for c, w in zip(ctl, wait)]
    ax.bar(names, ctl, 0.5, color="0.15", label="under epoll_ctl")
    ax.bar(names, wait, 0.5, bottom=ctl, color="0.5", label="under epoll_wait")
    ax.bar(names, other, 0.5, bottom=[c + w for c, w in zip(ctl, wait)], color="0.85",
           alpha=0.5, label="everything else (read, write, switches ...)")
    for i, (c, p) in enumerate(zip(ctl, profiles)):
        ax.text(i, c / 2 if c > 4 else c + 1, f"{c:.1f} %", ha="center", fontsize=9)
        ax.text(i, 101, f"{p['samples']} samples", ha="center", fontsize=8, color="0.3")
    ax.set_ylim(0, 112)
    ax.set_ylabel("share of the server's cpu-clock samples (%)")
    ax.set_xlabel("engine")
    ax.legend(fontsize=8, loc="center right")
    ax.grid(True, axis="y", alpha=0.35)
    return "perf record -g -e cpu-clock on the server; a sample counts when any frame names it"
