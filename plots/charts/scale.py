"""scale.json and switch.json's epoll_ctl rows: idle connections, registered fds, readiness
against completion."""
import data as D
import figures as F
from claims import c14_epoll_ctl_log_n as C14
import charts.style as style
from charts.style import grid, not_run, register

CHARTS = []



def is_model(cfg):
    """A server model beside the engines (`epoll (model)`): its member's colour, drawn dashed
    and hollow, so `uring (model)` and the `uring` engine are told apart."""
    return cfg.endswith("(model)")


def scale_lines(run, ax, series):
    for cfg, pts in series.items():
        model = is_model(cfg)
        # Idle level 0 is drawn at 1 so that it fits on the log axis (labelled below).
        ax.plot([max(n, 1) for n, _ in pts], [v for _, v in pts], marker=style.marker(cfg),
                color=style.color(cfg), ls="--" if model else "-", mfc="none" if model else None,
                label=cfg, linewidth=1.4, markersize=5, gid=style.member_gid(cfg))


@register(CHARTS, "idle_scaling", "Server CPU per request of a fixed load against idle connections")
def idle_scaling(run, fig):
    ax = fig.add_subplot(111)
    idle = (run.get("scale") or {}).get("idle")
    series = D.scale_series(idle)
    if not series:
        not_run(ax, run.why("scale") if not run.get("scale") else "no idle-scaling run")
        return ""
    scale_lines(run, ax, series)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("idle connections held open (log scale; 0 drawn at 1)")
    ax.set_ylabel("server CPU time per request (us, log scale)")
    ax.legend(fontsize=8, loc="upper left")
    grid(ax)
    return (f"{idle.get('active_conns')} ping-pong connections of 64 B; select stops at "
            "FD_SETSIZE (1024 fds); CPU from /proc/PID/task/*/schedstat; medians of rounds")


@register(CHARTS, "epoll_ctl_scaling", "epoll_ctl ADD+DEL against registered fds, and churn with idle "
       "connections held")
def epoll_ctl_scaling(run, fig):
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    pts = D.epoll_ctl_rows(D.bench_rows(run.get("switch")))
    if pts:
        iv = [style.bench_interval(run, C14.row_name(n)) for n, _ in pts]
        left.plot([n for n, _ in pts], [t for _, t in pts], marker="o", color="0.2",
                  label="one ADD + one DEL (median)")
        style.whiskers(left, [n for n, _ in pts], [a for a, _ in iv], [b for _, b in iv], "0.2")
        left.set_xscale("log")
        # Zoomed to the data: C14 tests a rise of a few percent, which an axis from zero
        # flattens into a straight line (the axis does not start at zero: read the ticks).
        ys = [v for v in [t for _, t in pts] + [x for pair in iv for x in pair if x] if v]
        pad = (max(ys) - min(ys)) * 0.15 or max(ys) * 0.05
        left.set_ylim(min(ys) - pad, max(ys) + pad)
        left.set_xlabel("fds registered in the epoll instance (log scale)")
        left.set_ylabel("CPU time per ADD+DEL pair (ns; axis not from zero)")
        left.legend(fontsize=8, loc="upper left")
        grid(left)
    else:
        not_run(left, run.why("switch") if not run.get("switch") else "no epoll_ctl rows")
    churn = (run.get("scale") or {}).get("churn")
    rel = churn_ratios(churn)
    if rel:
        for k, (cfg, pts) in enumerate(rel.items()):
            col = style.color(cfg)
            # Side by side around each level (a log axis: a small factor), so the whiskers
            # of one level do not hide each other.
            xs = [max(n, 1) * 1.07 ** (k - (len(rel) - 1) / 2) for n, _ in pts]
            right.plot(xs, [f["value"] for _, f in pts],
                       marker=style.marker(cfg), color=col, ls="--" if is_model(cfg) else "-",
                       mfc="none" if is_model(cfg) else None, label=cfg, gid=style.member_gid(cfg))
            style.whiskers(right, xs, [f["low"] for _, f in pts],
                       [f["high"] for _, f in pts], col)
        right.axhline(C14.GROWS_AT, color="k", ls="--", lw=1,
                      label=f"C14: grows at >= {C14.GROWS_AT:g}x")
        right.axhline(1.0, color="0.5", lw=0.8)
        right.set_xscale("log")
        right.set_xlabel("idle connections held open (log scale; 0 drawn at 1)")
        right.set_ylabel("server CPU per churned connection, over none held (x)")
        right.legend(fontsize=8, loc="upper left")
        grid(right)
    else:
        not_run(right, run.why("scale") if not run.get("scale") else "no churn CPU figures")
    return ("left: switch-bench (CPU time, median, line: 95% interval); right: connect, one "
            "64 B request, close: server CPU per connection over that with no idle connection "
            "held, median of the rounds' paired ratios (as C14 reads it), line: 95% interval")


def churn_ratios(churn):
    """{config: [(idle held, figure)]}: each level's server CPU per churned connection over the
    same configuration's with none held, paired by round (client-bound rounds count: the
    server's cost is its own), as C14 reads merged's."""
    runs = [r for r in (churn or {}).get("runs") or [] if r.get("status") in D.SERVER_CPU]
    out = {}
    for cfg, pts in D.scale_series(churn, "server_cpu_us_per_request").items():
        none = dict(pts).get(0)
        if not none:
            continue
        for n, v in pts:
            rounds = D.paired(runs, "server_cpu_us_per_request", {"config": cfg, "idle": n},
                              {"config": cfg, "idle": 0})["per_round"]
            # Without the rounds (an older run), the ratio of the medians, with no interval.
            f = (F.paired(f"{cfg} at {n}", rounds, "x", "scale") if rounds else
                 F.once(f"{cfg} at {n}", v / none, "x", "scale"))
            if f["value"] is not None:
                out.setdefault(cfg, []).append((n, f))
    return out


@register(CHARTS, "completion", "Readiness against completion: throughput and kernel entries per request")
def completion(run, fig):
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    comp = (run.get("scale") or {}).get("completion")
    series = D.scale_series(comp)
    if not series:
        why = (run.why("scale") if not run.get("scale") else
               (comp or {}).get("reason") or "no readiness/completion run")
        not_run(left, why)
        not_run(right, why)
        return ""
    scale_lines(run, left, series)
    left.set_xscale("log")
    left.set_xlabel("ping-pong connections (log scale)")
    left.set_ylabel("requests per second")
    left.legend(fontsize=8, loc="upper left")
    grid(left)
    counts = [c for c in comp.get("counts", []) if c.get("kernel_entries_per_request")]
    conns = sorted({c["conns"] for c in counts})
    cfgs = [c for c in comp.get("configs", []) if any(x["config"] == c for x in counts)]
    if counts:
        width = 0.8 / max(len(cfgs), 1)
        for i, cfg in enumerate(cfgs):
            vals = {c["conns"]: c["kernel_entries_per_request"] for c in counts
                    if c["config"] == cfg}
            bars = right.bar([j + i * width for j in range(len(conns))],
                             [vals.get(n, 0) for n in conns], width, color=style.color(cfg),
                             hatch="//" if is_model(cfg) else None, label=cfg)
            style.tag_bars(bars, [cfg] * len(conns))
        right.set_xticks([j + 0.4 - width / 2 for j in range(len(conns))])
        right.set_xticklabels([str(n) for n in conns])
        right.set_xlabel("ping-pong connections")
        right.set_ylabel("system calls of the server per request")
        right.legend(fontsize=8)
        right.grid(True, axis="y", alpha=0.35)
    else:
        not_run(right, "no perf syscall count")
