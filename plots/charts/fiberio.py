"""fiberio.json: the fiber read policies beside the callback servers."""
import data as D
from claims import c13_sync_code_async_speed as C13
from charts.style import not_run, register

CHARTS = []



FIBERIO_COLORS = {"pingpong": "tab:blue", "pingpong-1k": "tab:cyan", "stream": "tab:orange"}


@register(CHARTS, "fiberio", "Fiber read policies beside the callback servers: syscalls, CPU, throughput")
def fiberio(run, fig):
    doc = run.get("fiberio")
    axes = [fig.add_subplot(131), fig.add_subplot(132), fig.add_subplot(133)]
    summ = D.fiberio_summary(doc)
    names = D.fiberio_variants(doc)
    if not summ or not names:
        for ax in axes:
            not_run(ax, run.why("fiberio"))
        return ""
    loads = [ld for ld in D.FIBERIO_LOADS if ld in summ]
    x = list(range(len(names)))
    width = 0.8 / len(loads)

    def relative(load, v, key):
        own, base = summ[load].get(v, {}).get(key), summ[load].get("epoll", {}).get(key)
        return own / base if own and base else None

    panels = [
        (axes[0], lambda ld, v: summ[ld].get(v, {}).get("syscalls_per_request"),
         "system calls per request (kernel count)", "syscalls per request", [C13.HOLDS_SYSCALLS]),
        (axes[1], lambda ld, v: relative(ld, v, "server_cpu_us_per_request"),
         "server CPU per request / epoll server's", "server CPU per request (epoll = 1)",
         [C13.HOLDS_CPU]),
        (axes[2], lambda ld, v: relative(ld, v, "requests_per_sec"),
         "throughput / epoll server's", "throughput (epoll = 1)", [C13.HOLDS_TPUT]),
    ]
    for ax, get, ylabel, title, lines in panels:
        for i, ld in enumerate(loads):
            vals = [get(ld, v) for v in names]
            pos = [k - 0.4 + width * (i + 0.5) for k in x]
            ax.bar(pos, [v if v is not None else 0 for v in vals], width,
                   color=FIBERIO_COLORS.get(ld, "0.5"), label=ld)
        top = 6.0 if ax is axes[0] else 4.0  # a yardstick far above the rest is clipped
        every = [get(ld, v) for ld in loads for v in names]
        if max([v for v in every if v is not None] or [0]) > top:
            ax.set_ylim(0, top)
            for i, ld in enumerate(loads):
                for k, v in enumerate(names):
                    val = get(ld, v)
                    if val is not None and val > top:
                        ax.text(k - 0.4 + width * (i + 0.5), top * 0.97, f"{val:.3g}",
                                ha="center", va="top", fontsize=7, rotation=90)
        for y in lines:
            ax.axhline(y, color="k", ls="--", lw=1)
            ax.text(len(names) - 0.5, y, f"{y:g}", fontsize=7, va="bottom", ha="right")
        ax.set_xticks(x)
        ax.set_xticklabels([v.replace("fiber/", "") for v in names], fontsize=7, rotation=60,
                           ha="right")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.35)
    axes[0].legend(fontsize=7)
    cfg = doc.get("config", {})
    return (f"servers pinned to CPU {cfg.get('server_cpu', '?')}, echo-load on CPU "
            f"{cfg.get('load_cpu', '?')}; medians of {cfg.get('rounds', '?')} interleaved rounds; "
            f"pingpong {cfg.get('conns', '?')} and {cfg.get('conns_large', '?')} conns x "
            f"{cfg.get('size', '?')} B; stream {cfg.get('stream_conns', '?')} conns x "
            f"{cfg.get('pipeline', '?')} in flight x {cfg.get('stream_size', '?')} B; "
            "fiber labels are policy/engine")
