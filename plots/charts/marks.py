"""The verdict strip under a claim's chart: every figure the claim's verdict compared, as a dot
with its 95% whisker, against each threshold it was compared with, drawn as a line. The rows
come from the claim's own verdict (its tests), so the chart shows exactly what decided it.

Every dot carries gid "deciding:<claim>", every threshold line "threshold:<claim>"; the chart
test finds them there."""
import math

import claims

# The chart that carries a claim's strip: its first chart, unless named here.
CARRIER = {"C7": "sweep_p99"}
# A claim's tests drawn on another of its charts, by the start of the figure's name.
ROUTED = {"C17": {"sleep lateness": "timers_lateness"}}
MOST_ROWS = 4  # figures per claim; the rest are in REPORT.md, and the strip says how many
ROW_INCHES = 0.55
OUTCOME_WORDS = {"yes": "clears it", "no": "fails it", "straddles": "straddles it"}


def carrier(claim):
    return CARRIER.get(claim.ID, claim.CHARTS[0] if claim.CHARTS else None)


def _chart_of(claim, figure):
    for head, stem in ROUTED.get(claim.ID, {}).items():
        if figure.startswith(head):
            return stem
    return carrier(claim)


def rows(run, stem):
    """[(claim id, verdict, [tests of one figure], hidden)] the strip of this chart draws: for
    each claim it carries, the figures whose comparisons were straddled first, then the nearest
    to their threshold (see pick)."""
    out = []
    for c in claims.CLAIMS:
        if stem not in c.CHARTS:
            continue
        r = c.verdict(run)
        by_fig = {}
        for t in r.get("tests") or []:
            if t.get("value") is not None and _chart_of(c, t["figure"]) == stem:
                by_fig.setdefault(t["figure"], []).append(t)
        if not by_fig:
            continue

        def order(tests):
            return (min(0 if t["outcome"] == "straddles" else 1 for t in tests),
                    min(abs(t.get("margin") or 0) for t in tests))
        figs = sorted(by_fig.values(), key=order)
        shown = [figs[k] for k in sorted(pick(figs))]
        hidden = len(figs) - len(shown)
        for i, tests in enumerate(shown):
            out.append((c.ID, r["verdict"], tests, hidden if i == 0 else 0))
    return out


def pick(figs):
    """Indexes of the figures a strip shows, at most MOST_ROWS: first one for each threshold
    the verdict compared with (so four calm epoll engines do not hide poll's growth against
    its own threshold), then the rest in order."""
    chosen, seen = [], set()
    for k, tests in enumerate(figs):
        keys = {(t["op"], t["threshold"]) for t in tests}
        if not keys <= seen:
            chosen.append(k)
            seen |= keys
    chosen += [k for k in range(len(figs)) if k not in chosen]
    return chosen[:MOST_ROWS]


def height(strip):
    return ROW_INCHES * len(strip) + (0.15 if strip else 0)


def _span(tests):
    """x limits and scale holding the figure's interval and every threshold."""
    t0 = tests[0]
    xs = [v for v in (t0["value"], t0.get("low"), t0.get("high")) if v is not None]
    xs += [t["threshold"] for t in tests]
    lo, hi = min(xs), max(xs)
    if lo > 0 and hi / lo > 20:
        return lo / 2, hi * 2, "log"
    pad = (hi - lo) * 0.12 or abs(hi) * 0.1 or 1.0
    return lo - pad, hi + pad, "linear"


def _num(x):
    return "-" if x is None else f"{x:.4g}"


def draw(fig, strip, bottom):
    """The strip's rows, one axes each, from `bottom` (inches) upwards, under the chart."""
    h = fig.get_figheight()
    for k, (cid, verdict, tests, hidden) in enumerate(reversed(strip)):
        y0 = (bottom + ROW_INCHES * k + 0.2) / h
        ax = fig.add_axes((0.07, y0, 0.88, (ROW_INCHES - 0.3) / h))
        draw_row(ax, cid, verdict, tests, hidden)


def draw_row(ax, cid, verdict, tests, hidden):
    t0 = tests[0]
    x0, x1, scale = _span(tests)
    ax.set_xscale(scale)
    ax.set_xlim(x0, x1)
    ax.set_ylim(-1, 1)
    ax.set_yticks([])
    ax.tick_params(axis="x", labelsize=7, pad=1)
    for t in tests:
        ax.axvline(t["threshold"], color="k", ls="--", lw=1.2, gid=f"threshold:{cid}")
        ax.text(t["threshold"], 0.95, f" {t['op']} {t['threshold']:.4g}: "
                f"{OUTCOME_WORDS.get(t['outcome'], t['outcome'])}", fontsize=7, va="top",
                ha="left", transform=ax.get_xaxis_transform())
    lo, hi = t0.get("low"), t0.get("high")
    if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
        ax.plot([lo, hi], [0, 0], color="k", lw=2, solid_capstyle="butt", gid=f"whisker:{cid}")
        for x in (lo, hi):
            ax.plot([x, x], [-0.35, 0.35], color="k", lw=1.5)
    ax.plot([t0["value"]], [0], "o", color="k", ms=7, gid=f"deciding:{cid}")
    n = t0.get("n")
    more = f"  (+{hidden} more in REPORT.md)" if hidden > 0 else ""
    spread = ("exact count" if t0.get("basis") == "exact" else
              f"[{_num(lo)}, {_num(hi)}]" + (f" (n={n})" if n else ""))
    ax.set_title(f"{cid}, {verdict}: {t0['figure']} = {_num(t0['value'])} {spread}" + more,
                 fontsize=7.5, loc="left", pad=2)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
