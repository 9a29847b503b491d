"""sweep.json and maxconns.json: memory per connection, user and kernel, per server model."""
import data as D
import figures as F
from claims import c08_thread_memory as C8
import charts.style as style
from charts.style import grid, not_run, register
from harness_api import kernel_resolution

CHARTS = []


@register(CHARTS, "rss_per_conn", "Memory per connection, per server model: user and kernel")
def rss_per_conn(run, fig):
    fig.set_size_inches(11, 8.2)  # room for the legend under the left panel
    ax = fig.add_subplot(121)
    memory_stack(run, fig.add_subplot(122))
    sweep = run.get("sweep")

    def rss(p):
        v = (p.get("rss") or {}).get("per_conn_kb")
        return v if v and v > 0 else None

    def pss(p):
        v = (p.get("rss") or {}).get("pss_per_conn_kb")
        return v if v and v > 0 else None

    series = D.sweep_series(sweep, "pingpong", rss)
    if not series:
        not_run(ax, run.why("sweep") if not sweep else "no persistent-connection points")
        return ""
    for m in run.order("models", series):
        pts = [p for p in series[m] if p[0] >= 10]  # one connection says little per connection
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=style.marker(m),
                    color=style.color(m), label=f"{m} (VmRSS)", ms=4, gid=style.member_gid(m))
    fork_pss = [p for p in D.sweep_series(sweep, "pingpong", pss).get("fork", []) if p[0] >= 10]
    if fork_pss:
        ax.plot([p[0] for p in fork_pss], [p[1] for p in fork_pss], ls="--",
                color=style.color("fork"), marker=style.marker("fork"), gid=style.member_gid("fork"), mfc="none",
                ms=4,
                label="fork (PSS: shared pages counted once)")
    mc = run.get("maxconns")
    # Memory held does not depend on the load generator's speed: client-bound points count.
    held = [p for p in (mc or {}).get("points", []) if D.point_status(p)[0] in D.MEASURED
            and p.get("rss_per_conn_kb")]
    if held:
        ax.plot([p["conns"] for p in held], [p["rss_per_conn_kb"] for p in held], "*",
                color=style.color("fiber"), ms=11, label="fiber, trickle traffic (C10 run)")
    ax.axhline(C8.QUOTED_PTHREAD_KIB, color="k", ls=":", lw=1,
               label=f"{C8.QUOTED_PTHREAD_KIB / 1024:g} MiB: default pthread stack (virtual)")
    ax.axhline(C8.QUOTED_COROUTINE_KIB, color="k", ls="--", lw=1,
               label=f"{C8.QUOTED_COROUTINE_KIB:g} KiB: libco coroutine stack")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("concurrent persistent connections (log scale)")
    ax.set_ylabel("resident memory per connection (KiB, log scale)")
    ax.set_title("user memory (VmRSS) against concurrency", fontsize=10)
    # Below the panel: eleven entries inside it would cover the lines they name.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2,
              frameon=False)
    grid(ax)
    return ("left: (peak VmRSS of the server and its children during the load - VmRSS of the "
            "server process before) / connections; right: at each model's largest error-free "
            "level, user memory (PSS) stacked on the kernel's growth (KernelStack, SUnreclaim, "
            "PageTables: machine-wide /proc/meminfo medians, echo-load's own sockets included)")


# Greys, hatched: kernel fields are no members (a colour names a member in every chart).
KERNEL_COLORS = {"KernelStack": "0.25", "SUnreclaim": "0.5", "PageTables": "0.72"}


def memory_stack(run, ax):
    """Stacked bars per model: VmRSS growth per connection, then each kernel field's."""
    per = D.memory_points(run)
    if not per:
        not_run(ax, run.why("sweep"))
        return
    names = list(per)
    x = list(range(len(names)))
    # A model of many processes without a PSS reading has only its children's VmRSS summed,
    # which counts every shared page once per child (fork: 30x its PSS): it is not stacked
    # beside the PSS of the others, but drawn as a hatched outline, cut at the axis' top.
    summed = [i for i, m in enumerate(names) if per[m][2] is None]
    user = [0.0 if i in summed else max(0.0, D.user_kb(per[m][1], per[m][2]))
            for i, m in enumerate(names)]
    style.tag_bars(ax.bar(x, user, 0.6, color=[style.color(m) for m in names],
                      label="user (PSS)"), names)
    bottom = list(user)
    # The kernel part is what C8 counts (F.kernel_counted): a difference below the resolution
    # of /proc/meminfo's machine-wide figure adds nothing, its fields are not drawn (a
    # negative one would lower the bar), and the bar says so with a hatched outline up to the
    # resolution, the most it can be.
    counted = [F.kernel_counted(per[m][3], per[m][0]) for m in names]
    for field, color in KERNEL_COLORS.items():
        vals = [max(0.0, (per[m][4] or {}).get(field) or 0.0) if counted[i] else 0.0
                for i, m in enumerate(names)]
        ax.bar(x, vals, 0.6, bottom=bottom, color=color, alpha=0.8, label=f"kernel: {field}")
        bottom = [b + v for b, v in zip(bottom, vals)]
    below = [i for i, m in enumerate(names) if per[m][3] is not None and not counted[i]]
    for i in below:
        ax.bar(i, kernel_resolution(per[names[i]][0]), 0.6, bottom=bottom[i], fill=False,
               hatch="///", edgecolor="0.4", lw=0.6,
               label="kernel below resolution (outline: at most)" if i == below[0] else None)
    for i, m in enumerate(names):
        if i in summed:
            continue
        ax.text(i, bottom[i] + (kernel_resolution(per[m][0]) if i in below else 0),
                f"{bottom[i]:.0f}" + (f" + kernel {F.kernel_kib(per[m][3], per[m][0])}"
                                      .replace(" (below resolution)", "") if i in below else "")
                + f"\n@{per[m][0]}", ha="center", va="bottom", fontsize=6)
    tops = [b + (kernel_resolution(per[names[i]][0]) if i in below else 0)
            for i, b in enumerate(bottom)]
    top = max(tops) * 1.3  # the totals written above the bars stay inside (summed: kernel only)
    ax.set_ylim(0, top)
    for i in summed:
        m, rss = names[i], per[names[i]][1]
        ax.bar(i, min(rss, top - tops[i]) * 0.9, 0.6, bottom=tops[i], fill=False, hatch="xx",
               edgecolor=style.color(m), lw=0.8,
               label="VmRSS summed over processes (no PSS; cut)" if i == summed[0] else None)
        ax.text(i, top * 0.97, f"VmRSS\nsum\n{rss:.0f}\n+ kernel\n{tops[i]:.0f}", ha="center",
                va="top", fontsize=6, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.set_xticks(x)
    ax.set_xticklabels(names, fontsize=8, rotation=20)
    ax.set_ylabel("memory per connection (KiB)")
    ax.set_title("user + kernel, stacked (largest clean level)", fontsize=10)
    # Under the panel, as the left one's: inside, it covers some model's bar or total.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    ax.grid(True, axis="y", alpha=0.35)
