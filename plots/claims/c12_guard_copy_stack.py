"""C12: guard pages catch fiber stack overflows; a shared copy stack trades switch time for
memory."""
import data as D
import figures as F
import verdict as V
from formatting import value_text
from switch_figures import rows_ratio, switch_fig

ID = "C12"
SOURCE = "seed 004 (libco)"
CLAIM = ("Guard pages (mprotect) catch fiber stack overflows; a shared copy stack trades "
         "switch time for memory.")
BRIEF = 'Guard pages catch overflows; a copy stack trades time for memory.'
QUOTED = "no figure quoted"
CHARTS = ["copystack"]

FEW_BYTES, MANY_BYTES = 8, 8192  # live bytes a resume copies, the two ends compared
# The project's aims for copy stacks (no verdict rides on them; the report says met or not).
RESUME_AIM_NS = 20  # 8 B at 10^5 fibers, per resume + yield
RESUME_AIM_FIBERS = 100000
IDLE_FIBER_AIM_B = 1024
# The aims are the project's engineering targets, not the claim: the claim says only that a
# copy stack trades time for memory. Their lines say so, so that a target missed never reads
# as a part of the claim that failed beside a verdict of holds.
AIM_WORDS = "the project's own target (not the claim; no verdict reads it)"
TRADE_AT = 1.0  # many bytes' resume over few bytes', and copy over guarded PSS, around 1

RULE = ("holds when the guard-page overflow check passes for every backend (the one-line "
        "message, then abort) and the copy-stack trade was measured both ways: a resume "
        f"costs more the more live bytes it copies ({MANY_BYTES // 1024} KiB against "
        f"{FEW_BYTES} B) and an idle fiber costs less memory (PSS) on a copy stack than on a "
        "guarded one; holds partly when the guard pages pass but the trade was not measured; "
        "does not hold when a guard check fails or a measured side of the trade goes the "
        "other way")


def time_trade(run, cp, lines):
    """The resume cost at MANY_BYTES over FEW_BYTES per fiber count (paired repetitions), one
    figure per fiber count where both ends were measured."""
    ratios = []
    for f, pts in sorted(cp.items()):
        lines.append(f"- copy-stack resume + yield at {f} fibers, ns by live bytes: " + ", ".join(
            f"{n} B {value_text(t, '.3g')}" for n, t, _ in pts)
            + (f" (live part incl. the runtime's frames: {value_text(pts[0][2], '.0f')} B at "
               f"{pts[0][0]} B)" if pts and pts[0][2] else ""))
        by = {n: t for n, t, _ in pts}
        if FEW_BYTES in by and MANY_BYTES in by and by[FEW_BYTES] and by[MANY_BYTES]:
            ratios.append(rows_ratio(
                run, f"copystack/resume/bytes:{MANY_BYTES}/fibers:{f}",
                f"copystack/resume/bytes:{FEW_BYTES}/fibers:{f}",
                f"resume at {MANY_BYTES} B over {FEW_BYTES} B, {f} fibers"))
    at = {n: t for n, t, _ in cp.get(RESUME_AIM_FIBERS, [])}
    if at.get(FEW_BYTES):
        lines.append(f"- {AIM_WORDS}: {FEW_BYTES} B at 10^{len(str(RESUME_AIM_FIBERS)) - 1} "
                     f"fibers under {RESUME_AIM_NS} ns per round trip: {at[FEW_BYTES]:.3g} ns, "
                     + ("reached" if at[FEW_BYTES] < RESUME_AIM_NS else
                        f"{at[FEW_BYTES] / RESUME_AIM_NS:.2g}x the target"))
    return ratios


def memory_trade(fm, lines, nums):
    """An idle fiber's PSS on a copy stack over a guarded one's (single samples), None when
    one side was not measured."""
    trade, copy_best, guarded_ok = None, None, {}
    for mode, pts in sorted(fm.items()):
        cells = []
        for n, p in sorted(pts.items()):
            if D.point_status(p)[0] == "ok":
                cells.append(f"{n}: {p['pss_bytes_per_fiber']:.0f} B PSS, "
                             f"{p['rss_bytes_per_fiber']:.0f} B RSS, "
                             f"{p['maps_per_fiber']:.3g} maps")
                if mode == "guarded":
                    guarded_ok[n] = p["pss_bytes_per_fiber"]
                elif copy_best is None or n >= copy_best[0]:
                    copy_best = (n, p["pss_bytes_per_fiber"])
            else:
                cells.append(f"{n}: {D.status_text(p)}")
        lines.append(f"- memory per idle fiber, {mode}: " + "; ".join(cells))
    if guarded_ok and copy_best:
        g = guarded_ok[max(guarded_ok)]
        trade = F.once("PSS per idle fiber, copy over guarded stacks", copy_best[1] / g, "x",
                       "fibermem")
        lines.append(f"- copy ({copy_best[0]} fibers) against guarded ({max(guarded_ok)}, the "
                     f"largest that ran): {copy_best[1]:.0f} against {g:.0f} B per fiber "
                     f"({g / copy_best[1]:.1f}x less)" if copy_best[1] else "")
        lines.append(f"- {AIM_WORDS}: an idle fiber in copy mode under "
                     f"{IDLE_FIBER_AIM_B // 1024} KiB: {copy_best[1]:.0f} B, "
                     + ("reached" if copy_best[1] < IDLE_FIBER_AIM_B else
                        f"{copy_best[1] / IDLE_FIBER_AIM_B:.2g}x the target"))
        nums["idle fiber, copy stack (B)"] = (copy_best[1], float(IDLE_FIBER_AIM_B))
    return trade


def measure(run):
    props = run.get("props")
    if not props:
        return {"lines": [f"no switch properties: {run.why('props')}"]}
    lines = []
    for b, p in props["backends"].items():
        o = p.get("overflow") or {}
        lines.append(f"- {b}: `{o.get('test')}` {'passed' if o.get('passed') else 'FAILED'}"
                     + (f": `{o['message']}`" if o.get("message") else ""))
    cs = props.get("copy_stack") or {}
    lines.append(f"- copy stack: {cs.get('note', 'unknown')}")
    passed = [bool((p.get("overflow") or {}).get("passed")) for p in props["backends"].values()]
    figures = [F.exact(f"guard-page overflow check passed, {b} (1 = yes)",
                       float(bool((p.get("overflow") or {}).get("passed"))), "", "props")
               for b, p in props["backends"].items()]
    figures.append(F.exact("copy-stack mode implemented (1 = yes)",
                           float(bool(cs.get("implemented"))), "", "props"))
    if not passed:
        return {"lines": lines, "figures": figures}
    cp, fm, nums = D.copystack_points(run), D.fibermem_points(run), {}
    times = time_trade(run, cp, lines)
    memory = memory_trade(fm, lines, nums)
    t_ok, m_ok = trades(times, memory, V.point)
    for f, pts in sorted(cp.items()):
        for n, _, _ in pts:
            figures.append(switch_fig(run, f"copystack/resume/bytes:{n}/fibers:{f}"))
    for mode, pts in sorted(fm.items()):
        for n, p in sorted(pts.items()):
            if D.point_status(p)[0] == "ok":
                figures.append(F.once(f"PSS per idle fiber, {mode}, {n} fibers",
                                      p["pss_bytes_per_fiber"], "B", "fibermem"))
    if all(passed) and not (t_ok is False or m_ok is False) and not (t_ok and m_ok) \
            and not cs.get("implemented"):
        lines.append("- the trade cannot be measured: no stack mode shares stacks")
    return {"lines": lines, "figures": F.present(*figures), "numbers": nums, "guards": passed,
            "time_trade": times, "memory_trade": memory}


def trades(times, memory, t):
    """(time trade shows, memory trade shows): True, False, or None where not measured."""
    t_ok = all(t(f, ">", TRADE_AT) for f in times) if times else None
    m_ok = t(memory, "<", TRADE_AT) if memory is not None else None
    return t_ok, m_ok


def judge(m, t):
    if not m.get("guards"):
        return V.NOTRUN
    t_ok, m_ok = trades(m["time_trade"], m["memory_trade"], t)
    if not all(m["guards"]) or t_ok is False or m_ok is False:
        return V.NOT
    if t_ok and m_ok:
        return V.HOLDS
    return V.PARTLY


def verdict(run):
    return V.decide(RULE, measure(run), judge)
