#!/usr/bin/python3
"""charts.py - the charts of one run folder, written beside its data as PNG and SVG.

    /usr/bin/python3 plots/charts.py RUN_FOLDER

Every chart has a title, axis labels with units, a legend and the machine in a footnote; when
its data is missing it still gets drawn, saying "not run" and why, so a partial run never
crashes the report. Uses Debian's python3-matplotlib with the Agg backend (no display).
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import data as D  # noqa: E402

# The PyCon 2014 figures of claim C6 (seed 003), requests/s by concurrency, drawn beside ours
# for shape only: a Python server on other hardware, so the absolute values do not compare.
PYCON = {
    "thread (VM)": [(1, 909.27), (2, 3778.38), (3, 4815.37), (4, 5000.04), (10, 4998.16),
                    (50, 4881.93), (100, 4603.24), (200, 3445.12), (500, 1778.26)],
    "fork (VM)": [(1, 384.14), (2, 435.67), (3, 435.17), (4, 437.54), (10, 383.11),
                  (50, 364.03), (100, 320.51)],
    "thread (physical)": [(1, 6942.78), (2, 6891.23), (3, 6584.38), (4, 6517.23),
                          (10, 6178.50), (50, 4926.91), (100, 2377.77)],
}
PYCON_ERRORS = {"thread (VM)": 500, "fork (VM)": 100}  # concurrency at which errors appeared

CHARTS = []  # (file stem, title, function) in the order of the issue


def chart(stem, title):
    def register(fn):
        CHARTS.append((stem, title, fn))
        return fn
    return register


def not_run(ax, why):
    ax.text(0.5, 0.5, "not run\n" + why, ha="center", va="center", transform=ax.transAxes,
            fontsize=10, color="0.35", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def finish(fig, run, note=""):
    text = D.machine_line(run) + (("\n" + note) if note else "")
    fig.text(0.01, 0.005, text, fontsize=7, color="0.35", ha="left", va="bottom")


def grid(ax):
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)


# ---- 1: switch cost ------------------------------------------------------------------------

@chart("switch_cost", "Cost of one switch, call and syscall (log scale)")
def switch_cost(run, fig):
    ax = fig.add_subplot(111)
    rows = D.bench_rows(run.get("switch"))
    if not rows:
        not_run(ax, run.why("switch"))
        return ""
    items = [("call (noinline)", "call/noinline", "0.55")]
    items += [(f"switch: {b}", f"switch/{b}", run.color("switch", b)) for b in D.backends(run)]
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
    ax.axvline(2, color="k", ls=":", lw=1, label="PyCon: call ~2 ns (C5)")
    ax.axvline(50, color="k", ls="--", lw=1, label="PyCon: coroutine switch >= ~50 ns (C5)")
    ax.set_xlabel("time per operation (ns, log scale)")
    ax.legend(loc="upper right", fontsize=8)
    grid(ax)
    return ("one switch = one direction (a round trip is two); CPU time for single-threaded "
            "rows, wall time for kernel hand-offs; medians of interleaved repetitions")


# ---- 2: instructions ------------------------------------------------------------------------

@chart("instructions", "Instructions per switch and per scheduler hop (callgrind)")
def instructions(run, fig):
    ic = D.icounts(run.get("icount"))
    ax1, ax2 = fig.add_subplot(121), fig.add_subplot(122)
    if not ic:
        not_run(ax1, run.why("icount"))
        not_run(ax2, run.why("icount"))
        return ""
    names = run.order("switch", {k.split("/")[1] for k in ic if k.startswith("switch/")})
    vals = [ic[f"switch/{b}"] for b in names]
    ax1.bar(names, vals, color=[run.color("switch", b) for b in names], label="one switch")
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


# ---- 3: star vs ring ------------------------------------------------------------------------

@chart("star_ring", "Star vs ring: time per hop against the number of fibers")
def star_ring(run, fig):
    ax = fig.add_subplot(111)
    series = D.sched_series(D.bench_rows(run.get("switch")))
    if not series:
        not_run(ax, run.why("switch"))
        return ""
    for (policy, backend), pts in sorted(series.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if policy == "ring" else "s",
                ls="-" if policy == "ring" else "--", color=run.color("switch", backend),
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


# ---- 4/5: sweep -----------------------------------------------------------------------------

def sweep_panels(run, fig, value, ylabel, pycon):
    sweep = run.get("sweep")
    axes = [fig.add_subplot(121), fig.add_subplot(122)]
    titles = {"pingpong": "persistent connections (ping-pong)",
              "churn": "one connection per request (churn)"}
    notes = []
    for ax, mode in zip(axes, ("pingpong", "churn")):
        ax.set_title(titles[mode], fontsize=10)
        series = D.sweep_series(sweep, mode, value)
        if not series:
            not_run(ax, run.why("sweep") if not sweep else f"no {mode} points measured")
            continue
        for m in run.order("models", series):
            pts = series[m]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=run.marker("models", m),
                    color=run.color("models", m), label=m, ms=4)
            errs = [p for p in (sweep or {}).get("points", [])
                    if p.get("model") == m and p.get("mode") == mode and p.get("status") == "ok"
                    and D.point_errors(p)]
            for p in errs:
                v = value(p)
                if v is not None:
                    ax.plot(p["conns"], v, "x", color="k", ms=8)
        if any(D.point_errors(p) for p in (sweep or {}).get("points", [])
               if p.get("mode") == mode and p.get("status") == "ok"):
            ax.plot([], [], "x", color="k", ms=8, label="point with errors")
        skipped = D.sweep_not_run(sweep, mode)
        if skipped:
            notes.append(f"{mode}: not run: " + ", ".join(
                f"{p['model']}@{p['conns']}" for p in skipped[:8])
                + (" ..." if len(skipped) > 8 else ""))
        if pycon:
            for name, pts in PYCON.items():
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color="0.55",
                        ls=":" if "physical" in name else "-.", lw=1.2,
                        marker="." if "fork" in name else None, label=f"PyCon 2014 {name}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("concurrent connections (log scale)")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
        grid(ax)
    return "; ".join(notes)


@chart("sweep_throughput", "Echo throughput against concurrency, per server model")
def sweep_throughput(run, fig):
    note = sweep_panels(run, fig, lambda p: p["load"].get("requests_per_sec") or None,
                        "requests per second (log scale)", True)
    return ("x = a point with errors; grey: PyCon 2014 (Python server, other hardware, load mode "
            "not stated; drawn for shape only)" + ("\n" + note if note else ""))


@chart("sweep_p99", "p99 latency against concurrency, per server model")
def sweep_p99(run, fig):
    def p99(p):
        v = (p["load"].get("latency_us") or {}).get("p99")
        return v / 1000.0 if v else None
    note = sweep_panels(run, fig, p99, "p99 latency (ms, log scale)", False)
    return "x = a point with errors" + ("; " + note if note else "")


# ---- 6: engines -----------------------------------------------------------------------------

@chart("engines", "Event engines: throughput, epoll_ctl per request, server CPU per request")
def engines(run, fig):
    eng = run.get("engines")
    axes = [fig.add_subplot(131), fig.add_subplot(132), fig.add_subplot(133)]
    summ = (eng or {}).get("summary") or {}
    if not summ:
        for ax in axes:
            not_run(ax, run.why("engines"))
        return ""
    names = run.order("engines", summ)
    cols = [run.color("engines", e) for e in names]
    x = list(range(len(names)))

    def panel(ax, key, ylabel, title, kind="tput"):
        vals = [summ[e].get(key) for e in names]
        ax.bar(x, [v or 0 for v in vals], color=cols)
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
    axes[1].plot(x, [k if k is not None else float("nan") for k in kern], "r_", ms=18, mew=2,
                 label="kernel count (perf)")
    axes[1].legend(fontsize=7)
    panel(axes[2], "server_cpu_us_per_request", "server CPU per request (us)",
          "server CPU time per request")
    cfg = eng.get("config", {})
    return (f"fiber echo server pinned to CPU {cfg.get('server_cpu', '?')}, echo-load on CPU "
            f"{cfg.get('load_cpu', '?')}; {cfg.get('conns', '?')} connections x "
            f"{cfg.get('size', '?')} B ping-pong; {cfg.get('rounds', '?')} interleaved rounds")


# ---- 7: memory per connection ---------------------------------------------------------------

@chart("rss_per_conn", "Memory per connection, per server model: user and kernel")
def rss_per_conn(run, fig):
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
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=run.marker("models", m),
                    color=run.color("models", m), label=f"{m} (VmRSS)", ms=4)
    fork_pss = [p for p in D.sweep_series(sweep, "pingpong", pss).get("fork", []) if p[0] >= 10]
    if fork_pss:
        ax.plot([p[0] for p in fork_pss], [p[1] for p in fork_pss], ls="--",
                color=run.color("models", "fork"), marker=run.marker("models", "fork"), mfc="none",
                ms=4,
                label="fork (PSS: shared pages counted once)")
    mc = run.get("maxconns")
    held = [p for p in (mc or {}).get("points", []) if p.get("status") == "ok"
            and p.get("rss_per_conn_kb")]
    if held:
        ax.plot([p["conns"] for p in held], [p["rss_per_conn_kb"] for p in held], "*",
                color="navy", ms=9, label="fiber, trickle traffic (C10 run)")
    ax.axhline(8192, color="k", ls=":", lw=1, label="8 MiB: default pthread stack (virtual)")
    ax.axhline(128, color="k", ls="--", lw=1, label="128 KiB: libco coroutine stack")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("concurrent persistent connections (log scale)")
    ax.set_ylabel("resident memory per connection (KiB, log scale)")
    ax.set_title("user memory (VmRSS) against concurrency", fontsize=10)
    ax.legend(fontsize=6, loc="upper right")
    grid(ax)
    return ("left: (peak VmRSS of the server and its children during the load - VmRSS of the "
            "server process before) / connections; right: at each model's largest error-free "
            "level, user memory (PSS) stacked on the kernel's growth (KernelStack, SUnreclaim, "
            "PageTables: machine-wide /proc/meminfo medians, echo-load's own sockets included)")


KERNEL_COLORS = {"KernelStack": "tab:red", "SUnreclaim": "tab:gray", "PageTables": "tab:olive"}


def memory_stack(run, ax):
    """Stacked bars per model: VmRSS growth per connection, then each kernel field's."""
    import report as R  # the same choice of point as C8's rule
    per = R.memory_points(run)
    if not per:
        not_run(ax, run.why("sweep"))
        return
    names = list(per)
    x = list(range(len(names)))
    user = [max(0.0, R.user_kb(per[m][1], per[m][2])) for m in names]
    ax.bar(x, user, 0.6, color=[run.color("models", m) for m in names],
           label="user (PSS; VmRSS without PSS)")
    bottom = list(user)
    for field, color in KERNEL_COLORS.items():
        vals = [max(0.0, (per[m][4] or {}).get(field) or 0.0) for m in names]
        ax.bar(x, vals, 0.6, bottom=bottom, color=color, alpha=0.8, label=f"kernel: {field}")
        bottom = [b + v for b, v in zip(bottom, vals)]
    for i, m in enumerate(names):
        ax.text(i, bottom[i], f"{bottom[i]:.0f}\n@{per[m][0]}", ha="center", va="bottom",
                fontsize=6)
    ax.set_xticks(x)
    ax.set_xticklabels(names, fontsize=8, rotation=20)
    ax.set_ylabel("memory per connection (KiB)")
    ax.set_title("user + kernel, stacked (largest clean level)", fontsize=10)
    ax.legend(fontsize=6, loc="upper left")
    ax.grid(True, axis="y", alpha=0.35)


# ---- ramp-up, slow clients, kernel hand-offs -------------------------------------------------

@chart("ramp_time", "Ramp-up: time to connect and echo once on every connection")
def ramp_time(run, fig):
    ax = fig.add_subplot(111)
    sweep = run.get("sweep")
    series = D.sweep_series(sweep, "pingpong", lambda p: D.ramp(p).get("seconds") or None)
    if not series:
        not_run(ax, run.why("sweep") if not sweep else "no ramp-up figures in the sweep")
        return ""
    for m in run.order("models", series):
        pts = series[m]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=run.marker("models", m),
                color=run.color("models", m), label=m, ms=4)
    bad = [p for p in sweep.get("points", []) if p.get("mode") == "pingpong"
           and p.get("status") == "ok" and D.ramp(p).get("errors_total")]
    for p in bad:
        ax.plot(p["conns"], D.ramp(p)["seconds"], "x", color="k", ms=8)
    if bad:
        ax.plot([], [], "x", color="k", ms=8, label="ramp-up with errors")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("persistent connections (log scale)")
    ax.set_ylabel("ramp-up time (s, log scale)")
    ax.legend(fontsize=7)
    grid(ax)
    return ("from echo-load's start until every connection was established and had completed "
            "one verified echo (or --ramp-timeout); the measured window opens after it")


@chart("slow_clients", "Slow clients (made by the client, no netem): per server model")
def slow_clients(run, fig):
    slow = run.get("slow")
    axes = [fig.add_subplot(2, 2, i) for i in range(1, 5)]
    size = ((slow or {}).get("config") or {}).get("size") or 64
    panels = [("requests per second", lambda p: p["load"].get("requests_per_sec") or None),
              ("p99 latency (ms)",
               lambda p: (p["load"].get("latency_us") or {}).get("p99", 0) / 1000 or None),
              ("server CPU per request (us)", lambda p: D.server_cpu_us_per_request(p, size)),
              ("user + kernel memory per connection (KiB)",
               lambda p: ((p.get("rss") or {}).get("per_conn_kb") or 0)
               + max(0.0, D.kernel_per_conn(p)[0] or 0) or None)]
    for ax, (label, value) in zip(axes, panels):
        series = D.sweep_series(slow, "slow", value)
        if not series:
            not_run(ax, run.why("slow") if not slow else "no slow-client points")
            continue
        for m in run.order("models", series):
            pts = series[m]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=run.marker("models", m),
                    color=run.color("models", m), label=m, ms=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("slow connections (log scale)", fontsize=8)
        ax.set_ylabel(label, fontsize=8)
        grid(ax)
    axes[0].legend(fontsize=6)
    cfg = (slow or {}).get("config") or {}
    return (f"echo-load --mode slow {cfg.get('load_args', '')}: each request sent in chunks "
            "with a delay between them, a think time between requests; the p99 includes the "
            "time the client itself takes to send a request")


@chart("handoff_scale", "Kernel thread vs fiber hand-offs against the contexts on one CPU")
def handoff_scale(run, fig):
    ax = fig.add_subplot(111)
    ho = run.get("handoff")
    series = (ho or {}).get("series") or {}
    if not any(p.get("status") == "ok" for pts in series.values() for p in pts):
        not_run(ax, run.why("handoff"))
        return ""
    for kind, color, mk in (("thread", "tab:red", "o"), ("fiber", "tab:blue", "^")):
        pts = [p for p in series.get(kind, []) if p.get("status") == "ok"]
        ax.plot([p["contexts"] for p in pts], [p["cpu_ns_per_handoff"] for p in pts],
                marker=mk, color=color, label=f"{kind} (median)")
        raw = [r for r in ho.get("runs", []) if r.get("kind") == kind and r.get("status") == "ok"]
        ax.plot([r["contexts"] for r in raw], [r["cpu_ns_per_handoff"] for r in raw], ".",
                color=color, alpha=0.4, ms=4, label=f"{kind}, each round")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("contexts m handing off in m/2 pairs on one CPU (log scale)")
    ax.set_ylabel("CPU time per hand-off (ns, log scale)")
    ax.legend(fontsize=8)
    grid(ax)
    return ("thread: FUTEX_WAKE of the partner, then FUTEX_WAIT; fiber: fb_wake + fb_park on "
            "one runtime; process CPU time (getrusage) / hand-offs")


# ---- 8: the copy-stack trade -----------------------------------------------------------------

@chart("copystack", "Copy stacks: resume cost by live bytes, and memory per idle fiber")
def copystack(run, fig):
    import report as R  # the same readers the verdict uses
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    cp = R.copystack_points(run)
    if not cp:
        not_run(left, run.why("switch") if not run.get("switch") else "no copystack rows")
    for i, (f, pts) in enumerate(sorted(cp.items())):
        pts = [p for p in pts if p[1]]
        left.plot([p[0] for p in pts], [p[1] for p in pts], marker=D.MARKER_CYCLE[i],
                  color=D.PALETTE[i], label=f"{f} fiber{'s' if f > 1 else ''} on 1 shared stack")
    if cp:
        left.axhline(20, color="k", ls=":", lw=1, label="aim: 20 ns at 8 B, 10^5 fibers")
        left.set_xscale("log")
        left.set_yscale("log")
        left.set_xlabel("live bytes of the fiber's own (log scale)")
        left.set_ylabel("ns per resume + yield (one save, one restore)")
        left.legend(fontsize=7)
        grid(left)
    fm = R.fibermem_points(run)
    bars = [(f"{mode}\n{n:.0e}".replace("+0", ""), p["pss_bytes_per_fiber"], mode)
            for mode, pts in sorted(fm.items()) for n, p in sorted(pts.items())
            if p.get("status") == "ok"]
    skipped = [f"{mode} {n}" for mode, pts in sorted(fm.items()) for n, p in sorted(pts.items())
               if p.get("status") != "ok"]
    if not bars:
        not_run(right, run.why("fibermem") if not run.get("fibermem") else "no points")
        return ""
    right.bar(range(len(bars)), [b[1] for b in bars],
              color=[D.PALETTE[0] if b[2] == "guarded" else D.PALETTE[1] for b in bars])
    for i, b in enumerate(bars):
        right.text(i, b[1] * 1.02, f"{b[1]:.0f} B", ha="center", va="bottom", fontsize=7)
    right.set_xticks(range(len(bars)))
    right.set_xticklabels([b[0] for b in bars], fontsize=7)
    right.axhline(1024, color="k", ls=":", lw=1, label="aim: 1 KiB per idle fiber (copy)")
    right.set_ylabel("PSS per idle fiber (bytes)")
    right.set_xlabel("stack mode and fibers")
    right.legend(fontsize=7)
    grid(right)
    return ("not run: " + ", ".join(skipped) + " (guarded stacks exceed vm.max_map_count)"
            if skipped else "")


# ---- 9: where the time goes ------------------------------------------------------------------

@chart("epoll_ctl_share", "Where the server's time goes: naive vs merged (perf samples)")
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
    ax.bar(names, ctl, 0.5, color="tab:red", label="under epoll_ctl")
    ax.bar(names, wait, 0.5, bottom=ctl, color="tab:gray", label="under epoll_wait")
    ax.bar(names, other, 0.5, bottom=[c + w for c, w in zip(ctl, wait)], color="tab:blue",
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


# ---- 9-11: idle connections, registered fds, readiness vs completion ---------------------------

def scale_style(run, cfg):
    """One colour and marker per configuration, the same in the three scale charts: its place
    among the configurations the scale experiment declared."""
    configs = D.scale_configs(run.get("scale"))
    i = configs.index(cfg) if cfg in configs else len(configs)
    return D.PALETTE[i % len(D.PALETTE)], D.MARKER_CYCLE[i % len(D.MARKER_CYCLE)]


def scale_lines(run, ax, series):
    for cfg, pts in series.items():
        color, marker = scale_style(run, cfg)
        # Idle level 0 is drawn at 1 so that it fits on the log axis (labelled below).
        ax.plot([max(n, 1) for n, _ in pts], [v for _, v in pts], marker=marker, color=color,
                label=cfg, linewidth=1.4, markersize=5)


@chart("idle_scaling", "Server CPU per request of a fixed load against idle connections (C16)")
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


@chart("epoll_ctl_scaling", "epoll_ctl ADD+DEL against registered fds, and churn with idle "
       "connections held (C14)")
def epoll_ctl_scaling(run, fig):
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    pts = D.epoll_ctl_rows(D.bench_rows(run.get("switch")))
    if pts:
        left.plot([n for n, _ in pts], [t for _, t in pts], marker="o", color="tab:blue",
                  label="one ADD + one DEL")
        left.set_xscale("log")
        left.set_ylim(0, max(t for _, t in pts) * 1.25)
        left.set_xlabel("fds registered in the epoll instance (log scale)")
        left.set_ylabel("CPU time per ADD+DEL pair (ns)")
        left.legend(fontsize=8, loc="lower right")
        grid(left)
    else:
        not_run(left, run.why("switch") if not run.get("switch") else "no epoll_ctl rows")
    churn = (run.get("scale") or {}).get("churn")
    series = D.scale_series(churn)
    if series:
        scale_lines(run, right, series)
        right.set_xscale("log")
        right.set_xlabel("idle connections held open (log scale; 0 drawn at 1)")
        right.set_ylabel("churned connections per second")
        right.legend(fontsize=8, loc="lower left")
        grid(right)
    else:
        not_run(right, run.why("scale") if not run.get("scale") else "no churn run")
    return "left: switch-bench (CPU time, median); right: connect, one 64 B request, close"


@chart("completion", "Readiness against completion: throughput and kernel entries per request")
def completion(run, fig):
    left, right = fig.add_subplot(121), fig.add_subplot(122)
    comp = (run.get("scale") or {}).get("completion")
    series = D.scale_series(comp)
    if not series:
        why = run.why("scale") if not run.get("scale") else "no readiness/completion run"
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
            right.bar([j + i * width for j in range(len(conns))],
                      [vals.get(n, 0) for n in conns], width,
                      color=scale_style(run, cfg)[0], label=cfg)
        right.set_xticks([j + 0.4 - width / 2 for j in range(len(conns))])
        right.set_xticklabels([str(n) for n in conns])
        right.set_xlabel("ping-pong connections")
        right.set_ylabel("system calls of the server per request")
        right.legend(fontsize=8)
        right.grid(True, axis="y", alpha=0.35)
    else:
        not_run(right, "no perf syscall count")
    return "kernel entries: perf stat -e raw_syscalls:sys_enter on the server, a separate run"
# ---- 9: fiber IO read policies (C13) ----------------------------------------------------------

FIBERIO_COLORS = {"pingpong": "tab:blue", "pingpong-1k": "tab:cyan", "stream": "tab:orange"}


@chart("fiberio", "Fiber read policies beside the callback servers: syscalls, CPU, throughput")
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
         "system calls per request (kernel count)", "syscalls per request", [(2.1, "2.1")]),
        (axes[1], lambda ld, v: relative(ld, v, "server_cpu_us_per_request"),
         "server CPU per request / epoll server's", "server CPU per request (epoll = 1)",
         [(1.05, "1.05")]),
        (axes[2], lambda ld, v: relative(ld, v, "requests_per_sec"),
         "throughput / epoll server's", "throughput (epoll = 1)", [(0.95, "0.95")]),
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
        for y, label in lines:
            ax.axhline(y, color="k", ls="--", lw=1)
            ax.text(len(names) - 0.5, y, label, fontsize=7, va="bottom", ha="right")
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


def draw_all(run_dir, only=None):
    """Draws every chart into run_dir; returns {stem: "ok" | "not run" | "failed: ..."}."""
    run = D.Run(run_dir)
    status = {}
    for stem, title, fn in CHARTS:
        if only and stem not in only:
            continue
        fig = plt.figure(figsize=(11, 6.2) if stem != "switch_cost" else (10, 6.2))
        try:
            note = fn(run, fig)
            texts = [t.get_text() for ax in fig.axes for t in ax.texts]
            status[stem] = "not run" if any(t.startswith("not run") for t in texts) else "ok"
        except Exception as e:  # a chart bug must not cost the other charts and the report
            fig.clf()
            not_run(fig.add_subplot(111), f"chart failed: {type(e).__name__}: {e}")
            note, status[stem] = "", f"failed: {type(e).__name__}: {e}"
        fig.suptitle(title, fontsize=12)
        finish(fig, run, note)
        fig.tight_layout(rect=(0, 0.06, 1, 0.95))
        for ext in ("png", "svg"):
            fig.savefig(Path(run_dir) / f"{stem}.{ext}", dpi=110 if ext == "png" else None)
        plt.close(fig)
    return status


def main(argv):
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: charts.py RUN_FOLDER (a folder under results/ with the run's JSON files)",
              file=sys.stderr)
        return 2
    for stem, st in draw_all(argv[0]).items():
        print(f"chart {stem}: {st}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
