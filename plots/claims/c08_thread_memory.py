"""C8: a thread's 8 MB stack is virtual; only touched pages are resident."""
import data as D
import figures as F
import verdict as V
from harness_api import KERNEL_RESOLUTION_KIB, MEMINFO_DRIFT_KIB

ID = "C8"
SOURCE = "seeds 003, 004 (PyCon, libco)"
CLAIM = ("A thread's 8 MB stack is virtual, only touched pages are resident; libco measured "
         "about 8 MB per pthread and uses 128 KB coroutine stacks.")
BRIEF = "A thread's 8 MB stack is virtual: only touched pages are resident."
QUOTED = "8 MB per pthread (virtual), 128 KB per coroutine"
QUOTED_PTHREAD_KIB = 8192.0
QUOTED_COROUTINE_KIB = 128.0
CHARTS = ["rss_per_conn"]

HOLDS_KIB = 1024
NOT_KIB = 4096

RULE = ("holds when a thread-per-connection server's memory per connection, user (PSS "
        "growth, which counts pages shared between processes once; VmRSS growth where there "
        "is no PSS) plus kernel (growth of KernelStack, SUnreclaim and PageTables in "
        "/proc/meminfo), at its largest error-free persistent level >= 100, is <= "
        f"{HOLDS_KIB // 1024} MiB (an {QUOTED_PTHREAD_KIB / 1024:g} MiB stack is virtual, only "
        f"touched pages count); does not hold when it is >= {NOT_KIB // 1024} MiB; holds partly "
        "between. Without a kernel figure the user part alone is used, and the report says so; "
        "a kernel figure below the resolution of /proc/meminfo's per-connection difference "
        f"(the larger of {KERNEL_RESOLUTION_KIB:g} KiB and "
        f"{MEMINFO_DRIFT_KIB / 1024:g} MiB over the connections) counts as none")


def measure(run):
    per = D.memory_points(run)
    if "thread" not in per:
        return {"lines": [f"no thread memory figure: {run.why('sweep')}"]}
    lines = []
    for m, (n, kb, pss, kern, parts) in per.items():
        k = (f" + {F.kernel_kib(kern, n)} KiB kernel" + ((" (" + ", ".join(
            f"{f} {v:.1f}" for f, v in parts.items()) + ")") if F.kernel_counted(kern, n)
            else "") if kern is not None else " (no kernel figure)")
        lines.append(f"- {m}: {D.user_kb(kb, pss):.1f} KiB user ("
                     + ("PSS" if pss is not None else "VmRSS") + ")" + k
                     + f" per connection at {n} connections; VmRSS {kb:.1f} KiB")
    lines.append("- kernel figures are machine-wide: medians of /proc/meminfo read 5 times "
                 "before the server started and about 10 times a second in the measured window; "
                 "they include echo-load's own end of every connection (the same for every "
                 "model) and whatever other jobs allocated meanwhile, so they are trustworthy "
                 "only where they are large against that noise (thousands of connections)")
    mc = (run.get("maxconns") or {}).get("per_conn_at_max")
    if mc:
        lines.append(f"- fiber holding {run.get('maxconns').get('max_held')} mostly idle "
                     f"connections: {mc['rss_per_conn_kb']:.1f} KiB each (C10 run)")
    n, kb, pss, kern, _ = per["thread"]
    total = D.user_kb(kb, pss) + F.kernel_counted(kern, n)
    if kern is None:
        lines.append("- no kernel figure for thread: the verdict uses its user memory only")
    elif not F.kernel_counted(kern, n):
        lines.append("- thread's kernel figure is below the resolution at that level: the "
                     "verdict counts its user memory only")
    # Each repetition of a point samples its memory (rounds[i].memory), so a figure carries the
    # interval of its repetitions; older runs sampled the first only and stay measured once.
    figures, thread = [], None
    for m, (conns, m_kb, m_pss, m_kern, _) in per.items():
        reps = D.memory_rounds(D.memory_top(run, m))
        user = [u for u, _ in reps] or [D.user_kb(m_kb, m_pss)]
        figures.append(F.repeated(f"{m} resident memory per connection", user, "KiB", "sweep"))
        kerns = [k for _, k in reps if k is not None] or ([m_kern] if m_kern is not None else [])
        # A kernel difference below the resolution is no figure: it is printed as "< R" above.
        kfig = F.repeated(f"{m} kernel memory per connection", kerns, "KiB", "sweep")
        if F.kernel_counted(kfig["value"], conns):
            figures.append(kfig)
        if m == "thread":
            # The repetitions with a kernel reading in their window; without any, the user
            # part alone, as the rule says.
            both = [(u, k) for u, k in reps if k is not None]
            totals = ([u + F.kernel_counted(k, conns) for u, k in both] if both
                      else [u for u, _ in reps] or [total])
            thread = F.repeated("thread memory per connection, user + kernel", totals, "KiB",
                                "sweep")
    if mc:
        figures.append(F.once("fiber resident memory per idle connection (C10 run)",
                              mc["rss_per_conn_kb"], "KiB", "maxconns"))
    nums = {"thread memory per connection vs libco's 8 MB per pthread (KiB)":
            (total, QUOTED_PTHREAD_KIB)}
    if "fiber" in per:
        nums["fiber RSS per connection vs libco's 128 KB stack (KiB)"] = (
            per["fiber"][1], QUOTED_COROUTINE_KIB)
    return {"lines": lines, "figures": figures + [thread], "numbers": nums, "thread": thread}


def judge(m, t):
    total = m.get("thread")
    if total is None:
        return V.NOTRUN
    return V.HOLDS if t(total, "<=", HOLDS_KIB) else V.NOT if t(total, ">=", NOT_KIB) \
        else V.PARTLY


def verdict(run):
    return V.decide(RULE, measure(run), judge)
