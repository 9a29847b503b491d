"""switch.json and icount.json: switch, call and syscall cost, instructions, star vs ring."""
import data as D
from claims import c05_switch_50ns as C5
import charts.style as style
from charts.style import grid, not_run, register

CHARTS = []



@register(CHARTS, "switch_cost", "Cost of one switch, call and syscall (log scale)")
def switch_cost(run, fig):
    ax = fig.add_subplot(111)
    rows = D.bench_rows(run.get("switch"))
    if not rows:
        not_run(ax, run.why("switch"))
        return ""
    # The call C5 judges: call/chain (dependent calls, a latency) where the run has it.
    call = C5.LATENCY_ROW if D.ns(rows.get(C5.LATENCY_ROW)) else C5.THROUGHPUT_ROW
    items = [(f"call ({call.split('/')[1]}, judged by C5)", call, "0.45", "o", None)]
    items += [(f"switch: {b}", f"switch/{b}", style.color(b), style.marker(b), b) for b in D.backends(run)]
    items += [(f"reference: switch/{f} (not ABI-complete)", f"switch/{f}", style.color(f), style.marker(f), f)
              for f in D.FLOOR_OF.values() if f"switch/{f}" in rows]
    items += [("syscall getppid (C9)", "syscall/getppid", "0.3", "s", None)]
    for kind in ("thread", "process"):
        for where in ("same_cpu", "cross_cpu"):
            items.append((f"kernel {kind} hand-off, {where.replace('_', ' ')}",
                          f"kernel/{kind}_pingpong/{where}", "0.55", "D", None))
    # Dots with 95% whiskers, not bars: the costs span five decades, so the axis is log, and a
    # bar's length on a log axis means nothing.
    for i, (label, row, col, mk, member) in enumerate(items):
        v = D.ns(rows.get(row))
        if not v:
            ax.text(0.01, i, "not run", va="center", fontsize=8, color="0.4",
                    transform=ax.get_yaxis_transform())
            continue
        lo, hi = style.bench_interval(run, row)
        style.whiskers(ax, [i], [lo], [hi], col, horizontal=True)
        ax.plot([v], [i], mk, color=col, ms=8, gid=style.member_gid(member) if member else None)
        ax.text(max(v, hi or v) * 1.25, i, f"{v:.3g} ns" if v < 1000 else f"{v / 1000:.3g} us",
                va="center", fontsize=8)
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([it[0] for it in items], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    vals = [D.ns(rows.get(it[1])) for it in items]
    ax.set_xlim(min(v for v in vals if v) / 2, max(v for v in vals if v) * 8)
    ax.axvline(C5.QUOTED_CALL_NS, color="k", ls=":", lw=1,
               label=f"PyCon: call ~{C5.QUOTED_CALL_NS:g} ns ({C5.ID})")
    ax.axvline(C5.QUOTED_SWITCH_NS, color="k", ls="--", lw=1,
               label=f"PyCon: coroutine switch >= ~{C5.QUOTED_SWITCH_NS:g} ns ({C5.ID})")
    ax.set_xlabel("time per operation (ns, log scale; dot: median, line: 95% interval)")
    # Above the panel: every corner inside it holds some row's dot or figure.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
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
    style.tag_bars(ax1.bar(names, vals, color=[style.color(b) for b in names], label="one switch"),
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
                color="0.6" if p == "star" else "0.2")
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
    rows = D.bench_rows(run.get("switch"))
    series = D.sched_series(rows)
    if not series:
        not_run(ax, run.why("switch"))
        return ""
    copied = set()
    for (policy, backend), pts in sorted(series.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        col, ls = style.color(backend), "-" if policy == "ring" else "--"
        mk = "o" if policy == "ring" else "s"
        for seg in segments([p[0] for p in pts]):
            ax.plot(seg, [dict((p[0], p[1]) for p in pts)[n] for n in seg], ls=ls, color=col,
                    gid=style.member_gid(backend))
        for n, v, _ in pts:
            row = f"sched/{policy}/{backend}/fibers:{n}"
            copy = str(rows[row].get("label", "")).startswith("copy")
            copied |= {n} if copy else set()
            ax.plot([n], [v], mk, color=col, ms=5, mfc="none" if copy else col,
                    gid=style.member_gid(backend))
            lo, hi = style.bench_interval(run, row)
            style.whiskers(ax, [n], [lo], [hi], col)
        ax.plot([], [], mk, ls=ls, color=col, label=f"{policy} / {backend}", ms=5)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    counts = sorted({p[0] for pts in series.values() for p in pts})
    ax.set_xticks(counts)
    ax.set_xticklabels([str(c) for c in counts])
    ax.set_xlabel("fibers in the run queue (log scale)")
    ax.set_ylabel("time per hop (ns, CPU time, log scale; line: 95% interval)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    grid(ax)
    stacks = ((run.get("switch") or {}).get("context") or {}).get("sched_stack")
    return ("solid: ring (one switch per hop); dashed: star (fiber -> scheduler -> fiber, two); "
            + (f"stacks: {stacks}; " if stacks else "")
            + (f"hollow: run on copy stacks ({', '.join(map(str, sorted(copied)))} fibers); "
               if copied else "") + "no line across a gap of more than 16x in fibers "
            "(levels this run did not measure)")


def segments(levels, most=16):
    """The runs of measured levels a line may join: none across a gap of more than `most`x,
    where the levels between were not measured."""
    out = [[]]
    for n in levels:
        if out[-1] and n > out[-1][-1] * most:
            out.append([])
        out[-1].append(n)
    return [seg for seg in out if len(seg) > 1]
