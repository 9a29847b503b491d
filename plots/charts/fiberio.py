"""fiberio.json: the fiber read policies beside the callback servers."""
import data as D
import figures as F
from claims import c13_sync_code_async_speed as C13
from charts.style import not_run, register

CHARTS = []

# Greys: a load is no member, and a colour in these charts always names a member.
FIBERIO_COLORS = {"pingpong": "0.2", "pingpong-1k": "0.5", "stream": "0.78"}
# Thirty-odd servers need a row each with a label one can read: the figure grows downwards
# with the number of servers instead of squeezing them into the shared landscape size.
ROW_INCHES = 0.27
# A yardstick far above the rest (the thread server's 24 syscalls per request) would flatten
# every other bar; beyond these the bar is cut at the edge and its value written beside it.
LIMITS = (6.0, 4.0, None)


def label(variant):
    """`fiber/eager/naive` reads as `eager · naive`; callback and thread servers as named."""
    parts = variant.split("/")
    return f"{parts[1]} · {parts[2]}" if parts[0] == "fiber" and len(parts) == 3 else variant


def group(variant):
    """The engine a row belongs to, so rows of one engine are drawn together between rules."""
    parts = variant.split("/")
    return parts[2] if parts[0] == "fiber" and len(parts) == 3 else "callback and thread"


@register(CHARTS, "fiberio", "Fiber read policies beside the callback servers: syscalls, CPU, throughput")
def fiberio(run, fig):
    doc = run.get("fiberio")
    summ = D.fiberio_summary(doc)
    names = D.fiberio_variants(doc)
    if not summ or not names:
        for i in range(3):
            not_run(fig.add_subplot(1, 3, i + 1), run.why("fiberio"))
        return ""
    fig.set_size_inches(11, max(6.2, 2.4 + ROW_INCHES * len(names)))
    first = fig.add_subplot(131)
    axes = [first, fig.add_subplot(132, sharey=first), fig.add_subplot(133, sharey=first)]
    loads = [ld for ld in D.FIBERIO_LOADS if ld in summ]
    height = 0.8 / len(loads)

    def relative(load, v, key):
        own, base = summ[load].get(v, {}).get(key), summ[load].get("epoll", {}).get(key)
        return own / base if own and base else None

    panels = [
        (lambda ld, v: summ[ld].get(v, {}).get("syscalls_per_request"),
         "system calls per request\n(kernel count)", [C13.HOLDS_SYSCALLS]),
        (lambda ld, v: relative(ld, v, "server_cpu_us_per_request"),
         "server CPU per request\n(epoll server = 1)", [C13.HOLDS_CPU]),
        (lambda ld, v: relative(ld, v, "requests_per_sec"),
         "throughput\n(epoll server = 1)", [C13.HOLDS_TPUT]),
    ]
    for ax, (get, xlabel, marks), limit, key in zip(axes, panels, LIMITS, (None, "cpu", "tput")):
        for i, ld in enumerate(loads):
            vals = [get(ld, v) for v in names]
            pos = [k - 0.4 + height * (i + 0.5) for k in range(len(names))]
            shown = [min(v, limit) if limit and v is not None else (v or 0) for v in vals]
            ax.barh(pos, shown, height, color=FIBERIO_COLORS.get(ld, "0.5"), label=ld)
            if key:
                whiskers(ax, doc, ld, key, names, pos, limit)
            for p, v in zip(pos, vals):
                if limit and v is not None and v > limit:
                    ax.text(limit * 0.98, p, f"{v:.3g} ▸", ha="right", va="center",
                            fontsize=7, color="white", fontweight="bold")
        if limit:
            ax.set_xlim(0, limit)
        for x in marks:
            ax.axvline(x, color="k", ls="--", lw=1)
            ax.text(x, -0.9, f" {x:g}", fontsize=8, va="bottom", ha="left")
        for k in range(1, len(names)):
            if group(names[k]) != group(names[k - 1]):
                ax.axhline(k - 0.5, color="0.6", lw=0.6)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.grid(True, axis="x", alpha=0.35)
    first.set_yticks(range(len(names)))
    judged = doc.get("default")
    first.set_yticklabels([label(v) + ("  \u25c0 C13 judges" if v == judged else "")
                           for v in names], fontsize=8)
    for tick, v in zip(first.get_yticklabels(), names):
        if v == judged:
            tick.set_fontweight("bold")
    for ax in axes:  # the judged server's row, shaded across the three panels
        if judged in names:
            ax.axhspan(names.index(judged) - 0.5, names.index(judged) + 0.5, color="gold",
                       alpha=0.25, zorder=0, gid="judged:C13")
    first.set_ylim(len(names) - 0.5, -1.0)  # first server on top, room for the mark labels
    for ax in axes[1:]:
        ax.tick_params(axis="y", labelleft=False)
    # Above the panels: every spot inside one covers some server's bars.
    axes[1].legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(loads),
                   title="load", title_fontsize=8, frameon=False)
    cfg = doc.get("config", {})
    return (f"servers pinned to CPU {cfg.get('server_cpu', '?')}, echo-load on CPU "
            f"{cfg.get('load_cpu', '?')}; medians of {cfg.get('rounds', '?')} interleaved rounds; "
            f"pingpong {cfg.get('conns', '?')} and {cfg.get('conns_large', '?')} conns x "
            f"{cfg.get('size', '?')} B; stream {cfg.get('stream_conns', '?')} conns x "
            f"{cfg.get('pipeline', '?')} in flight x {cfg.get('stream_size', '?')} B;\n"
            "fiber rows are read policy · engine, grouped by engine; dashed: claim C13's marks; "
            "shaded: the server C13 judges; whiskers: 95% interval of the paired rounds where "
            "the run paired the server with the epoll server")


def whiskers(ax, doc, load, key, names, pos, limit):
    """The 95% interval of each server's paired per-round ratio to the epoll server, where the
    run recorded one (fiberio.json's ratios)."""
    ratios = (doc or {}).get("ratios") or {}
    for v, y in zip(names, pos):
        r = ratios.get(f"{load} {key} {v}/epoll")
        if not r or not r.get("per_round"):
            continue
        f = F.paired(v, r["per_round"], "x", "fiberio")
        if f["low"] is None or (limit and f["high"] > limit):
            continue
        ax.plot([f["low"], f["high"]], [y, y], color="k", lw=1.2, solid_capstyle="butt",
                gid="whisker")
