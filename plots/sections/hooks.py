"""Hooked calls and fiber locks (seeds 000, 004): what was measured, with no verdict, since the
seeds quote no figure."""
from formatting import value_text

HOOK_HOWS = ["syscall", "fallthrough", "direct", "hooked"]
LOCKS = ["fiber_mutex", "event_lock", "pthread_mutex"]
LOCK_MODES = ["uncontended", "contended/fibers:2", "contended/threads:2"]


def not_run(why):
    """'not run: <why>', whether or not the recorded reason already starts that way."""
    why = str(why or "no data")
    return why if why.startswith("not run") else f"not run: {why}"


def hooks_section(run):
    """Measured costs of the hooked libc calls and of the fiber locks. The seeds describe both
    mechanisms without a figure, so this section reports what was measured, with no verdict."""
    out = ["## Hooked calls and fiber locks", "",
           "Seeds 000 (libfiber) and 004 (libco) describe hooking the libc IO calls so that "
           "unmodified blocking code runs cooperatively on fibers, and the locks fibers need "
           "(a mutex within one scheduler, an event lock across schedulers built from an "
           "atomic and an eventfd, a condition variable, a semaphore). They quote no number "
           "for either, so there is no verdict here: this section states what this run "
           "measured and how (harness/experiments/hooks.py).", ""]
    h = run.get("hooks")
    if not h:
        return out + [f"not run: {run.why('hooks')}", ""]
    bench = h.get("bench") or {}
    rows = bench.get("rows") or {}
    ic = (h.get("icount") or {}).get("instructions_per_unit") or {}
    la = h.get("load_average") or {}
    if la.get("start"):
        out += [f"Load average (1/5/15 min) at the start of this step: "
                f"{'/'.join(f'{x:.1f}' for x in la['start'])}.", ""]

    def ns(name):
        r = rows.get(name) or {}
        return r.get("ns_median", r.get("cpu_ns_median"))

    if bench.get("status") != "ok":
        out += [f"- switch-bench rows: {not_run(bench.get('reason', bench.get('status')))}"]
    else:
        out += ["**One call** (1 byte on a pipe that is always ready, so nothing waits: the "
                "price of the path, not of a wait; switch-bench `hook/` rows, CPU time, median "
                "of interleaved repetitions; instructions: callgrind, user space only, two "
                "loop counts differenced):", "",
                "| call | raw syscall | hooks linked, off | fiber IO (direct) | hooked | "
                "hooked / direct (time) | hooked / direct (instructions) |",
                "|---|---|---|---|---|---|---|"]
        for call in ("read", "write"):
            cells, names = [], [f"hook/{call}/pipe/{w}" for w in HOOK_HOWS]
            for n in names:
                t, i = ns(n), ic.get(n)
                cells.append(value_text(t, ".0f", " ns") + (f" ({i:.0f} instr.)" if i else ""))
            d, hk = ns(names[2]), ns(names[3])
            di, hi = ic.get(names[2]), ic.get(names[3])
            cells.append(value_text(hk / d if d and hk else None, ".3f"))
            cells.append(value_text(hi / di if di and hi else None, ".3f"))
            out.append(f"| {call} | " + " | ".join(cells) + " |")
        out += ["", "A hooked call does what the direct fiber call does (try the call, wait "
                "in the engine on EAGAIN) behind libc's name: the difference per call is a "
                "few instructions either way, inside the noise of a ~150 ns system call. "
                "For comparison, issue #13 cites 10-41 ns per call for a binary-rewriting "
                "hook (zpoline).", ""]
    e = h.get("echo") or {}
    if e.get("status") != "ok":
        out += [f"- echo: {not_run(e.get('status'))}", ""]
    else:
        c, su = e.get("config") or {}, e.get("summary") or {}
        cpu = (e.get("ratios") or {}).get("cpu per request hooked/direct") or {}
        tput = (e.get("ratios") or {}).get("throughput hooked/direct") or {}
        out += [f"**Echo server** (`echo-server --model fiber --engine {c.get('engine')}`, "
                f"`--io direct` against `--io hooked`, {c.get('conns')} connections x "
                f"{c.get('size')} B ping-pong, {c.get('rounds')} interleaved rounds of "
                f"{c.get('duration_s')} s, server on CPU {c.get('server_cpu')}, load on CPU "
                f"{c.get('load_cpu')}; CPU from perf task-clock on the server):", "",
                "| io | requests/s (median) | server CPU per request (median) | "
                "hooked calls per request |", "|---|---|---|---|"]
        for m in ("direct", "hooked"):
            v = su.get(m) or {}
            out.append(f"| {m} | {value_text(v.get('requests_per_sec'), '.0f')} | "
                       f"{value_text(v.get('server_cpu_us_per_request'), '.2f', ' us')} | "
                       f"{value_text(v.get('hook_calls_per_request'), '.2f')} |")
        out += ["", f"Server CPU per request hooked/direct: median of the paired rounds "
                f"{value_text(cpu.get('median'), '.3f')} (rounds "
                f"{', '.join(value_text(x, '.3f') for x in cpu.get('rounds', []))}); throughput "
                f"hooked/direct {value_text(tput.get('median'), '.3f')}.", ""]
    if rows:
        out += ["**Locks** (ns per lock/unlock pair of the measuring fiber, median; "
                "`fibers:2`: a second fiber of the same runtime wants the lock and each holder "
                "keeps it across one yield, so every lock finds it taken, and each pass of the "
                "scheduler includes its non-blocking poll of the engine; `threads:2`: a "
                "second thread locks and unlocks in a tight loop meanwhile, real time; "
                "\"other side\": pairs the contender completed per measured pair, 1 when "
                "the lock is shared evenly):", "",
                "| lock | " + " | ".join(LOCK_MODES) + " |", "|---|---|---|---|"]
        notes = []
        for lock in LOCKS:
            cells = []
            for mode in LOCK_MODES:
                r = rows.get(f"sync/{lock}/{mode}")
                if not r:
                    cells.append("n/a")
                elif r.get("not_run"):
                    cells.append("not run")
                    notes.append(f"- {lock} {mode}: {r['not_run']}")
                else:
                    cnt = r.get("counters") or {}
                    extra = []
                    if mode != "uncontended" and cnt.get("other_pairs_per_pair") is not None:
                        extra.append(f"other side {cnt['other_pairs_per_pair']:.2f} pairs/pair")
                    if mode != "uncontended" and cnt.get("wakeups_per_pair") is not None:
                        extra.append(f"{cnt['wakeups_per_pair']:.3g} eventfd wake-ups/pair")
                    cells.append(value_text(ns(f"sync/{lock}/{mode}"), ".1f", " ns")
                                 + (f" ({'; '.join(extra)})" if extra else ""))
            out.append(f"| {lock} | " + " | ".join(cells) + " |")
        out += [""] + notes + ([""] if notes else [])
    dl = h.get("deadlock") or {}
    if dl.get("status") != "ok":
        out += [f"- deadlock scenario: {not_run(dl.get('status'))}", ""]
    else:
        out += ["**The deadlock of seed 000** (two scheduler threads, each with a fiber "
                "holding one lock across a fiber switch and a fiber wanting the other "
                "thread's lock; the test watches with a bounded wait):", ""]
        for lock in ("pthread_mutex", "event_lock"):
            d = dl.get(lock) or {}
            state = ("deadlocked, detected and reported" if d.get("deadlocked") else
                     "completed") if d else "not run"
            out.append(f"- {lock}: {state}: `{d.get('outcome', '')}` (the test "
                       f"{'passed' if d.get('test_passed') else 'FAILED'})")
        out.append("")
    return out
