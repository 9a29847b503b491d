"""compare.py's overlay charts of two runs (PNG and SVG): the switch-bench rows A beside B, the
sweep's throughput A solid and B dashed, and every claim figure's B/A coloured by how its
difference reads (compare_diff). Drawn only when compare.py is asked for charts."""
import charts.style as style  # before pyplot: it chooses the Agg backend
import matplotlib.pyplot as plt

import claims
import data as D
import figures as F
from charts.files import write_png_svg
from compare_diff import claim_rows, label


def draw(ra, rb, out, values=None):
    """Overlay charts of the main figures; {stem: status}. values: the learned figures'
    values (learn()), for the run-to-run bands."""
    status = {}
    la, lb = f"A: {label(ra)}", f"B: {label(rb)}"

    def save(fig, stem, title):
        fig.suptitle(title, fontsize=12)
        fig.text(0.01, 0.005, f"A = {D.machine_line(ra)}\nB = {D.machine_line(rb)}",
                 fontsize=7, color="0.35", ha="left", va="bottom")
        fig.tight_layout(rect=(0, 0.07, 1, 0.95))
        write_png_svg(fig, out / stem)
        status[stem] = "ok"

    # Switch cost: every switch-bench row outside the scheduler sweep, A and B bars.
    rows_a, rows_b = D.bench_rows(ra.get("switch")), D.bench_rows(rb.get("switch"))
    kinds = ("call/", "syscall/", "switch/", "kernel/")
    names = sorted((n for n in set(rows_a) | set(rows_b) if n.startswith(kinds)),
                   key=lambda n: (next(i for i, k in enumerate(kinds) if n.startswith(k)), n))
    if names:
        fig = plt.figure(figsize=(10, 0.32 * len(names) + 2))
        ax = fig.add_subplot(111)
        y = list(range(len(names)))
        ax.barh([i - 0.2 for i in y], [D.ns(rows_a.get(n)) or 0 for n in names], height=0.4,
                color="tab:blue", label=la)
        ax.barh([i + 0.2 for i in y], [D.ns(rows_b.get(n)) or 0 for n in names], height=0.4,
                color="tab:orange", label=lb)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("time per operation (ns, log scale; medians)")
        ax.legend(fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
        save(fig, "compare_switch_cost", "Switch, call, syscall and kernel hand-off cost: A vs B")
    else:
        status["compare_switch_cost"] = "not run: no switch rows in either run"

    # Sweep throughput: per model, A solid, B dashed, one panel per load mode.
    fig = plt.figure(figsize=(11, 6))
    drawn = False
    for i, mode in enumerate(("pingpong", "churn")):
        ax = fig.add_subplot(1, 2, i + 1)
        ax.set_title(mode, fontsize=10)
        for run, ls, tag in ((ra, "-", "A"), (rb, "--", "B")):
            series = D.sweep_series(run.get("sweep"), mode,
                                    lambda p: p["load"].get("requests_per_sec") or None)
            for m in run.order("models", series):
                pts = series[m]
                # A model's colour and marker as in every chart (charts/style.py).
                ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker=style.marker(m),
                        ms=3, color=style.color(m), label=f"{m} ({tag})")
                drawn = True
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("concurrent connections (log scale)")
        ax.set_ylabel("requests per second (log scale)")
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, alpha=0.3)
    if drawn:
        save(fig, "compare_sweep_throughput", f"Echo throughput: {la} solid, {lb} dashed")
    else:
        plt.close(fig)
        status["compare_sweep_throughput"] = "not run: no sweep in either run"

    # Every claim figure's B/A on one axis, coloured by how the difference reads.
    res_a, res_b = claims.evaluate(ra, True), claims.evaluate(rb, True)
    items = []
    for cid in res_a:
        for name, fa, fb, r, cls, _, _ in claim_rows(res_a[cid]["figures"],
                                                      res_b[cid]["figures"], cid, values):
            if r is not None and r > 0:
                items.append((f"{cid}: {name}", r, cls))
    if items:
        fig = plt.figure(figsize=(10, 0.2 * len(items) + 2))
        ax = fig.add_subplot(111)
        col = {F.BEYOND: "tab:red", F.WITHIN: "tab:green", F.RUN_TO_RUN: "tab:olive",
               F.UNCLEAR: "tab:orange", "exact same": "0.6", "exact differs": "tab:purple"}
        colors = [col.get(cls, "tab:blue") for _, _, cls in items]
        # Bars grow from 1 (no change) to B/A, left for lower, right for higher.
        ax.barh(range(len(items)), [r - 1 for _, r, _ in items], color=colors, left=1)
        # A tick at each ratio keeps figures with B/A = 1 (most exact counts) visible.
        ax.scatter([r for _, r, _ in items], range(len(items)), c=colors, marker="|", s=40)
        ax.axvline(1, color="k", lw=1)
        ax.set_xscale("log")
        ax.set_yticks(range(len(items)))
        ax.set_yticklabels([n for n, _, _ in items], fontsize=5)
        ax.invert_yaxis()
        ax.set_xlabel("B / A (log scale)")
        for k, c in list(col.items()) + [("no noise band", "tab:blue")]:
            ax.barh([0], [0], color=c, label=k)
        ax.legend(fontsize=7)
        save(fig, "compare_figures", "Every claim figure: B / A")
    else:
        status["compare_figures"] = "not run: no figure in both runs"
    return status
