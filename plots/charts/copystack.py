"""switch.json's copystack rows and fibermem.json: the copy-stack trade of time for memory."""
import data as D
from claims import c12_guard_copy_stack as C12
import charts.style as style
from matplotlib.ticker import LogFormatter
from charts.style import grid, not_run, register

MODE_SHADES = {"guarded": "0.3", "copy": "0.65"}

CHARTS = []



@register(CHARTS, "copystack", "Copy stacks: resume cost by live bytes, and memory per idle fiber")
def copystack(run, fig):
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    cp = D.copystack_points(run)
    if not cp:
        not_run(left, run.why("switch") if not run.get("switch") else "no copystack rows")
    for i, (f, pts) in enumerate(sorted(cp.items())):
        pts = [p for p in pts if p[1]]
        shade, mk = style.level_style(i)
        left.plot([p[0] for p in pts], [p[1] for p in pts], marker=mk, color=shade,
                  label=f"{f} fiber{'s' if f > 1 else ''} on 1 shared stack")
        iv = [style.bench_interval(run, f"copystack/resume/bytes:{p[0]}/fibers:{f}") for p in pts]
        style.whiskers(left, [p[0] for p in pts], [a for a, _ in iv], [b for _, b in iv], shade)
    if cp:
        left.axhline(C12.RESUME_AIM_NS, color="k", ls=":", lw=1,
                     label=f"aim: {C12.RESUME_AIM_NS} ns at {C12.FEW_BYTES} B, "
                     f"10^{len(str(C12.RESUME_AIM_FIBERS)) - 1} fibers")
        left.set_xscale("log")
        left.set_yscale("log")
        # A range under one decade gets one major tick: the minor ones are labelled too.
        left.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 1)))
        left.tick_params(axis="y", which="minor", labelsize=7)
        left.set_xlabel("live bytes of the fiber's own (log scale)")
        left.set_ylabel("ns per resume + yield (one save, one restore)")
        left.legend(fontsize=7)
        grid(left)
    fm = D.fibermem_points(run)
    bars = [(f"{mode}\n{n:.0e}".replace("+0", ""), p["pss_bytes_per_fiber"], mode)
            for mode, pts in sorted(fm.items()) for n, p in sorted(pts.items())
            if D.point_status(p)[0] == "ok"]
    skipped = [f"{mode} {n}" for mode, pts in sorted(fm.items()) for n, p in sorted(pts.items())
               if D.point_status(p)[0] != "ok"]
    if not bars:
        not_run(right, run.why("fibermem") if not run.get("fibermem") else "no points")
        return ""
    right.bar(range(len(bars)), [b[1] for b in bars],
              color=[MODE_SHADES.get(b[2], "0.5") for b in bars])
    for i, b in enumerate(bars):
        right.text(i, b[1] * 1.02, f"{b[1]:.0f} B", ha="center", va="bottom", fontsize=7)
    right.set_xticks(range(len(bars)))
    right.set_xticklabels([b[0] for b in bars], fontsize=7)
    right.axhline(C12.IDLE_FIBER_AIM_B, color="k", ls=":", lw=1,
                  label=f"aim: {C12.IDLE_FIBER_AIM_B // 1024} KiB per idle fiber (copy)")
    right.set_ylabel("PSS per idle fiber (bytes)")
    right.set_xlabel("stack mode and fibers")
    right.legend(fontsize=7)
    grid(right)
    return ("not run: " + ", ".join(skipped) + " (guarded stacks exceed vm.max_map_count)"
            if skipped else "")
