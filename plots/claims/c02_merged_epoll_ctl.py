"""C2: merging the cancel/re-register epoll_ctl pair raises IO throughput by about 20%."""
import data as D
import figures as F
import verdict as V
from formatting import threshold_text, value_text

ID = "C2"
SOURCE = "seed 000 (libfiber)"
CLAIM = ("epoll_ctl ranked high in perf top; merging the cancel/re-register pair between a "
         "wake-up and the next wait raised IO throughput by about 20%.")
BRIEF = "Merging epoll_ctl's cancel/re-register pair raises IO throughput about 20%."
QUOTED = "about +20% throughput"
QUOTED_GAIN = 1.2
CHARTS = ["engines", "epoll_ctl_share"]

HOLDS_AT = 1.15  # merged/naive throughput
PARTLY_AT = 1.0  # merged/naive throughput
PARTLY_CPU_AT = 1.15  # naive/merged server CPU per request

RULE = ("holds when merged/naive throughput (median of paired rounds) >= "
        f"{threshold_text(HOLDS_AT)}; "
        f"holds partly when it is >= {threshold_text(PARTLY_AT)} or naive needs >= "
        f"{threshold_text(PARTLY_CPU_AT)}x merged's server CPU per request; otherwise does not "
        "hold. A round whose naive run was client-bound (echo-load saturated its core) is left "
        "out of the throughput ratio: its throughput is the load generator's; when merged's "
        "run was client-bound in a round read, merged served at least what was measured, and "
        "the ratio is a lower bound, which can confirm a threshold and never refute one")
# What the driver calls a run whose load generator set the pace (lib/status.py).
CLIENT_BOUND = "client-bound"


def paired_rounds(eng):
    """merged/naive throughput and naive/merged server CPU per request, each round's ratio of
    the two engines measured back to back in it, from the driver's per-round records; and the
    rounds the throughput ratio leaves out (naive's run client-bound) and, of those it reads,
    the ones whose merged run was client-bound. CPU per request reads every round: a
    client-bound server's CPU is still its own."""
    runs = (eng or {}).get("runs") or []
    tput_runs = [r for r in runs if r.get("kind") == "tput" and "round" in r]

    def capped(engine):
        return {r["round"] for r in tput_runs
                if r.get("engine") == engine and r.get("status") == CLIENT_BOUND}
    left_out = capped("naive")
    read = [r for r in runs if r.get("round") not in left_out]
    tput = D.paired(read, "requests_per_sec", {"engine": "merged"}, {"engine": "naive"},
                    kind="tput")
    paired_rounds_read = {r["round"] for r in tput_runs if r["round"] not in left_out
                          and r.get("engine") == "naive" and r.get("requests_per_sec")}
    return (tput,
            D.paired(runs, "server_cpu_us_per_request", {"engine": "naive"},
                     {"engine": "merged"}, kind="tput"),
            sorted(left_out), sorted(capped("merged") & paired_rounds_read))


def measure(run):
    eng = run.get("engines")
    r, cpu_r, left_out, merged_capped = paired_rounds(eng)
    cpu_fig = F.paired("server CPU per request naive/merged", cpu_r["per_round"], "", "engines")
    if eng and left_out and not r["per_round"] and cpu_r["per_round"]:
        # The throughput is the load generator's in every round; CPU per request is still
        # the servers' own, so the verdict is left open only as far as throughput decides it.
        return {"lines": [f"- no throughput ratio: naive's run was client-bound in all "
                          f"{len(left_out)} rounds (echo-load saturated its core), so each "
                          "measured the load generator, not the two servers",
                          f"- server CPU per request naive/merged: {value_text(cpu_r['median'])}"],
                "figures": F.present(cpu_fig), "tput": None, "cpu": cpu_fig,
                "tput_unreadable": True}
    if not eng or not r["per_round"]:
        return {"lines": [f"no naive/merged comparison: {run.why('engines')}"]}
    cpu = cpu_r["median"]
    s = eng.get("summary", {})
    lines = [f"- throughput: naive {value_text(s.get('naive', {}).get('requests_per_sec'), '.0f')} "
             f"req/s, merged {value_text(s.get('merged', {}).get('requests_per_sec'), '.0f')} "
             "req/s; "
             f"merged/naive median **{value_text(r['median'])}** (rounds: "
             + ", ".join(value_text(x) for x in r.get("per_round", [])) + ")",
             f"- server CPU per request naive/merged: {value_text(cpu)}"]
    prof = eng.get("profile") or {}
    prof = prof if isinstance(prof, dict) else {p.get("engine"): p for p in prof}
    for e in ("naive", "merged"):
        p = prof.get(e) or {}
        if p.get("epoll_ctl_share") is not None:
            lines.append(f"- perf: {100 * p['epoll_ctl_share']:.1f}% of {e}'s samples under "
                         f"epoll_ctl ({p.get('samples')} samples)")
    if left_out:
        lines.append(f"- left out of the throughput ratio: {len(left_out)} round(s) whose naive "
                     "run was client-bound (echo-load saturated its core): such a round "
                     "measures the load generator, not the servers")
    tput = F.paired("throughput merged/naive (median of paired rounds)", r["per_round"], "",
                    "engines")
    if merged_capped:
        lines.append(f"- merged's run was client-bound in {len(merged_capped)} of the "
                     f"{len(r['per_round'])} rounds read: merged served at least what was "
                     "measured, so the ratio is a lower bound")
        tput = F.bounded(tput, F.AT_LEAST, why="merged's load generator saturated its core")
    figures = [tput, cpu_fig]
    for e in ("naive", "merged"):
        figures.append(F.timing(f"throughput, {e}", s.get(e, {}).get("requests_per_sec"),
                                "req/s", "engines",
                                samples=D.runs_of(eng, lambda x: x.get("requests_per_sec"),
                                                  engine=e, kind="tput")))
        figures.append(F.once(f"share of {e}'s perf samples under epoll_ctl",
                              (prof.get(e) or {}).get("epoll_ctl_share"), "", "engines"))
    # Where the driver measured one engine against itself in the same rounds (A/A), the
    # throughput ratio must stand apart from that interval to say anything.
    aa = F.noise_floor(eng, "engines", prefer="tput")
    noise = [V.noise_entry(tput, aa)] if aa else []
    if aa:
        figures.append(aa)
        lines.append(V.noise_line(noise[0]))
    return {"lines": lines, "figures": F.present(*figures), "tput": tput, "cpu": cpu_fig,
            "noise_floor": noise,
            "numbers": {"merged/naive throughput": (r["median"], QUOTED_GAIN)}}


def judge(m, t):
    if m.get("tput_unreadable"):
        # Any throughput ratio is possible; what CPU per request settles still holds.
        if t(m["cpu"], ">=", PARTLY_CPU_AT):
            return frozenset((V.HOLDS, V.PARTLY))
        return frozenset((V.HOLDS, V.PARTLY, V.NOT))
    if m.get("tput") is None:
        return V.NOTRUN
    if t(m["tput"], ">=", HOLDS_AT):
        return V.HOLDS
    if t(m["tput"], ">=", PARTLY_AT) or t(m["cpu"], ">=", PARTLY_CPU_AT):
        return V.PARTLY
    return V.NOT


def verdict(run):
    return V.decide(RULE, measure(run), judge)
