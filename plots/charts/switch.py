"""switch.json and icount.json: switch, call and syscall cost, instructions, star vs ring."""
import data as D
from claims import c05_switch_50ns as C5
import charts.style as S
from charts.style import grid, not_run, register

CHARTS = []



@register(CHARTS, "switch_cost", "Cost of one switch, call and syscall (log scale)")
def switch_cost(run, fig):
    ax = fig.add_subplot(111)
    rows = D.bench_rows(run.get("switch"))
    if not rows:
        not_run(ax, run.why("switch"))
        return ""
    items = [("call (noinline)", "call/noinline", "0.55")]
    items += [(f"switch: {b}", f"switch/{b}", S.color(b)) for b in D.backends(run)]
    items += [(f"reference: switch/{f} (not ABI-complete)", f"switch/{f}", "0.75")
              for f in D.FLOOR_OF.values() if f"switch/{f}" in rows]
    items += [("syscall getppid", "syscall/getppid", "0.3")]
    for kind in ("thread", "process"):
        for where in ("same_cpu", "cross_cpu"):
            items.append((f"kernel {kind} hand-off, {where.replace('_', ' ')}",
                          f"kernel/{kind}_pingpong/{where}",
                          "tab:brown" if kind == "thread" else "tab:pink"))
    shown = [(label, D.ns(rows.get(row)), c) for label, row, c in items]
    labels = [s[0] + ("" if s[1] else " (not run)") for s in shown]
    values = [s[1] or 0 for s in shown]
    y = range(len(shown))
    ax.barh(list(y), values, color=[s[2] for s in shown])
    for i, v in enumerate(values):
        if v:
            ax.text(v * 1.08, i, f"{v:.3g} ns" if v < 1000 else f"{v / 1000:.3g} us",
                    va="center", fontsize=8)
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(min(v for v in values if v) / 2, max(values) * 6)
    ax.axvline(C5.QUOTED_CALL_NS, color="k", ls=":", lw=1,
               label=f"PyCon: call ~{C5.QUOTED_CALL_NS:g} ns ({C5.ID})")
    ax.axvline(C5.QUOTED_SWITCH_NS, color="k", ls="--", lw=1,
               label=f"PyCon: coroutine switch >= ~{C5.QUOTED_SWITCH_NS:g} ns ({C5.ID})")
    ax.set_xlabel("time per operation (ns, log scale)")
    ax.legend(loc="upper right", fontsize=8)
    grid(ax)
    return ("one switch = one direction (a round trip is two); CPU time for single-threaded "
            "rows, wall time for kernel hand-offs; medians of interleaved repetitions")



@register(CHARTS, "instructions", "Instructions per switch and per scheduler hop (callgrind)")
def instructions(run, fig):
    ic = D.icounts(run.get("icount"))
    ax1, ax2 = fig.add_subplot(121), fig.add_subplot(122)
    if not ic:
        not_run(ax1, run.why("icount"))
        not_run(ax2, run.why("icount"))
        return ""
    names = run.order("switch", {k.split("/")[1] for k in ic if k.startswith("switch/")})
    vals = [ic[f"switch/{b}"] for b in names]
    S.tag_bars(ax1.bar(names, vals, color=[S.color(b) for b in names], label="one switch"),
               names)
    if "call/noinline" in ic:
        ax1.axhline(ic["call/noinline"], color="k", ls=":",
                    label=f"one call ({ic['call/noinline']:.0f} instr.)")
    for i, v in enumerate(vals):
        ax1.text(i, v, f"{v:.0f}", ha="center", va="bottom", fontsize=8)
    ax1.set_ylabel("instructions per switch (user space)")
    ax1.set_xlabel("switch backend")
    ax1.set_title("per switch", fontsize=10)
    ax1.legend(fontsize=8)
    ax1.tick_params(axis="x", labelsize=8, rotation=20)
    hop = {(p, b): ic.get(f"sched/{p}/{b}/fibers:16") for p in ("star", "ring") for b in names}
    w = 0.4
    for j, p in enumerate(("star", "ring")):
        xs = [i + (j - 0.5) * w for i in range(len(names))]
        ax2.bar(xs, [hop[(p, b)] or 0 for b in names], w, label=f"{p} hop",
                color="tab:gray" if p == "star" else "tab:blue")
    ax2.set_xticks(range(len(names)))
    ax2.set_xticklabels(names, fontsize=8, rotation=20)
    ax2.set_ylabel("instructions per hop (16 fibers)")
    ax2.set_xlabel("switch backend")
    ax2.set_title("per scheduler hop, star vs ring", fontsize=10)
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.grid(True, axis="y", alpha=0.35)
    return ("valgrind --tool=callgrind, difference of two loop lengths; user-space "
            "instructions only (ucontext's rt_sigprocmask runs in the kernel, unseen here)")



@register(CHARTS, "star_ring", "Star vs ring: time per hop against the number of fibers")
def star_ring(run, fig):
    ax = fig.add_subplot(111)
    series = D.sched_series(D.bench_rows(run.get("switch")))
    if not series:
        not_run(ax, run.why("switch"))
        return ""
    for (policy, backend), pts in sorted(series.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if policy == "ring" else "s",
                ls="-" if policy == "ring" else "--", color=S.color(backend), gid=S.member_gid(backend),
                label=f"{policy} / {backend}", ms=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    counts = sorted({p[0] for pts in series.values() for p in pts})
    ax.set_xticks(counts)
    ax.set_xticklabels([str(c) for c in counts])
    ax.set_xlabel("fibers in the run queue (log scale)")
    ax.set_ylabel("time per hop (ns, CPU time, log scale)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    grid(ax)
    return ("solid: ring (one switch per hop); dashed: star (fiber -> scheduler -> fiber, two); "
            "16 KiB guarded stacks per fiber")
