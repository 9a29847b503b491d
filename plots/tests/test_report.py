#!/usr/bin/python3
"""The report's verdict rules, driven to each outcome with synthetic run folders."""
import re
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import claims  # noqa: E402
import data as D  # noqa: E402
import document  # noqa: E402
import reference  # noqa: E402
import synth  # noqa: E402
import verdict as V  # noqa: E402
from sections import completion, hooks, machine  # noqa: E402

import suite as harness_suite  # noqa: E402


class Verdicts(synth.SyntheticRuns):
    def run_with(self, **docs):
        """A full synthetic run with some documents replaced (None: left out)."""
        return D.Run(self.new_folder(**docs))

    def verdict(self, fn, **docs):
        return fn(self.run_with(**docs))["verdict"]

    def test_c14(self):
        def sw(growth):
            return synth.repeated(synth.switch(ctl_growth=growth, ctl_levels=(10, 100, 1000, 10000, 19000)),
                              rel=0.02, n=5)
        c14 = claims.by_id("C14").verdict
        self.assertEqual(self.verdict(c14, switch=sw(1.2)), V.HOLDS)
        # The pair grows logarithmically but churn does not pay for it: only one shows.
        self.assertEqual(self.verdict(c14, switch=sw(1.2), scale=synth.scale(churn_growth=0.9)), V.PARTLY)
        self.assertEqual(self.verdict(c14, switch=sw(0.9), scale=synth.scale(churn_growth=0.9)), V.NOT)
        # Faster than logarithmic growth (here linear-like, 50x) contradicts the tree.
        self.assertEqual(self.verdict(c14, switch=sw(50.0)), V.NOT)
        self.assertEqual(self.verdict(c14, switch=None), V.NOTRUN)

    def test_c16(self):
        self.assertEqual(self.verdict(claims.by_id("C16").verdict), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C16").verdict, scale=synth.scale(poll_growth=2.0)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C16").verdict, scale=synth.scale(epoll_growth=2.0)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C16").verdict, scale=synth.scale(poll_growth=1.1)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C16").verdict, scale=None), V.NOTRUN)
        text = "\n".join(claims.by_id("C16").verdict(self.run_with())["measured"])
        self.assertIn("| select | 4 | 30 | FD_SETSIZE |", text)

    def test_c16_pairs_client_bound_rounds(self):
        # CPU per request stands on a round where echo-load was the bottleneck; a contended
        # round (other jobs) does not pair.
        doc = synth.scale()
        for r in range(5):
            for cfg, level, us in (("poll", 0, 4.0), ("poll", 10000, 400.0 + r),
                                   ("merged", 0, 4.0), ("merged", 10000, 4.0 + 0.01 * r)):
                doc["idle"]["runs"].append({
                    "config": cfg, "idle": level, "round": r,
                    "status": "client-bound" if r % 2 else ("contended" if r == 4 else "ok"),
                    "server_cpu_us_per_request": us})
        figs = claims.by_id("C16").verdict(self.run_with(scale=doc))["figures"]
        fig = next(f for f in figs if f["name"].startswith("poll/merged"))
        self.assertEqual(fig["n"], 4)

    def test_completion_section(self):
        text = "\n".join(completion.completion_section(self.run_with()))
        self.assertIn("| uring (model) | 1000 | 40000 | 20 | 0.5 | 0.5 |", text)
        self.assertIn("not run: synthetic", "\n".join(claims.by_id("C16").verdict(self.run_with())["measured"]))
        self.assertIn("not run", "\n".join(completion.completion_section(self.run_with(scale=None))))

    def test_c1(self):
        self.assertEqual(self.verdict(claims.by_id("C1").verdict), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C1").verdict, switch=synth.switch(ring_factor=1.2)), V.NOT)
        # ucontext's ring slower at both fiber counts, the others faster: 6 of 8 = 75%.
        sw = synth.switch()
        for b in sw["benchmarks"]:
            if b["run_name"].startswith("sched/ring/ucontext/"):
                b["cpu_time"] = b["real_time"] = 1e4
        self.assertEqual(self.verdict(claims.by_id("C1").verdict, switch=sw), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C1").verdict, switch=None), V.NOTRUN)

    def test_c2(self):
        self.assertEqual(self.verdict(claims.by_id("C2").verdict, engines=synth.engines(ratio=1.3)), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C2").verdict, engines=synth.engines(ratio=1.08)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C2").verdict, engines=synth.engines(ratio=0.9,
                                                                      cpu_ratio=1.3)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C2").verdict, engines=synth.engines(ratio=0.9,
                                                                      cpu_ratio=1.0)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C2").verdict, engines=None), V.NOTRUN)

    def test_c2_client_bound_rounds(self):
        """A round whose naive run was client-bound measured echo-load twice: left out of the
        throughput ratio (six such rounds at 1.0 would otherwise pull a 1.5 median into the
        1.15 threshold); merged client-bound alone makes the ratio a lower bound, which
        confirms "holds" and never "does not hold"; every naive run client-bound leaves only
        what CPU per request decides."""
        c2 = claims.by_id("C2").verdict

        def eng(ratio, naive_bound, merged_bound, cpu_ratio=1.3, rounds=10):
            doc = synth.engines(ratio=ratio, cpu_ratio=cpu_ratio, rounds=rounds, jitter=0.05)
            for r in doc["runs"]:
                if r["kind"] != "tput":
                    continue
                bound = naive_bound if r["engine"] == "naive" else merged_bound \
                    if r["engine"] == "merged" else ()
                r["status"] = "client-bound" if r["round"] in bound else "ok"
                if r["engine"] == "merged" and r["round"] in naive_bound:
                    r["requests_per_sec"] = 50000.0  # both capped: the client's pace, 1.0
            return doc
        capped = range(6)
        self.assertEqual(self.verdict(c2, engines=eng(1.5, (), ())), V.HOLDS)
        r = c2(self.run_with(engines=eng(1.5, capped, ())))
        self.assertEqual(r["verdict"], V.HOLDS, r["measured"])
        self.assertTrue(any("left out of the throughput ratio: 6 round(s)" in ln
                            for ln in r["measured"]), r["measured"])
        # Read with them, the six 1.0 rounds pull the median to 1.0: not "holds".
        synth_all = eng(1.5, (), ())
        for x in synth_all["runs"]:
            if x["engine"] == "merged" and x["round"] in capped:
                x["requests_per_sec"] = 50000.0
        self.assertNotEqual(self.verdict(c2, engines=synth_all), V.HOLDS)
        # merged client-bound in every round read: a lower bound above 1.15 still holds ...
        r = c2(self.run_with(engines=eng(1.5, (), range(10))))
        self.assertEqual(r["verdict"], V.HOLDS)
        self.assertTrue(any("lower bound" in ln for ln in r["measured"]), r["measured"])
        # ... but one below 1.0 cannot say "does not hold" (merged may have served more).
        self.assertEqual(self.verdict(c2, engines=eng(0.9, (), range(10), cpu_ratio=1.0)),
                         V.INCONCLUSIVE)
        self.assertEqual(self.verdict(c2, engines=eng(0.9, (), (), cpu_ratio=1.0)), V.NOT)
        # naive client-bound in every round: CPU per request settles "at least partly".
        r = c2(self.run_with(engines=eng(1.5, range(10), ())))
        self.assertEqual(r["verdict"], V.INCONCLUSIVE, r["measured"])
        self.assertIn(V.PARTLY, r["possible"])
        self.assertNotIn(V.NOT, r["possible"])

    def test_c3(self):
        self.assertEqual(self.verdict(claims.by_id("C3").verdict), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C3").verdict, engines=synth.engines(naive_ctl=1.7)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C3").verdict, engines=synth.engines(naive_ctl=1.0)), V.NOT)

    def test_c4(self):
        self.assertEqual(self.verdict(claims.by_id("C4").verdict), V.HOLDS)
        slow_setjmp = synth.switch({"asm": 5.0, "setjmp": 150.0, "ucontext": 280.0})
        self.assertEqual(self.verdict(claims.by_id("C4").verdict, switch=slow_setjmp), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C4").verdict, props=synth.props(uc_syscalls=0.0)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C4").verdict, props=None), V.NOTRUN)

    def test_c5(self):
        self.assertEqual(self.verdict(claims.by_id("C5").verdict, switch=synth.switch({"asm": 40.0}, call=2.0)),
                         V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C5").verdict), V.PARTLY)  # 5 ns switch, 1.4 ns call
        self.assertEqual(self.verdict(claims.by_id("C5").verdict, switch=synth.switch({"asm": 4.0}, call=10.0)),
                         V.NOT)
        # The floor rows are references: never the fastest backend, always shown as a ratio.
        sw = synth.switch({"asm": 40.0}, call=2.0, floors={"floor-fp": 0.5, "floor": 0.4})
        run = self.run_with(switch=sw)
        res = claims.by_id("C5").verdict(run)
        self.assertEqual(res["verdict"], V.HOLDS)
        self.assertIn("asm/floor-fp 80.00", "\n".join(res["measured"]))
        self.assertNotIn("floor", D.backends(run))

    def test_c6(self):
        collapse = {1: 1000, 4: 5000, 100: 4600, 500: 1700}
        self.assertEqual(self.verdict(claims.by_id("C6").verdict, sweep=synth.sweep(thread=collapse,
                                                                  fork={1: 400, 100: 320})),
                         V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C6").verdict), V.PARTLY)  # rises, no collapse, fork low
        flat = {1: 5000, 10: 5000, 100: 5000}
        self.assertEqual(self.verdict(claims.by_id("C6").verdict, sweep=synth.sweep(thread=flat,
                                                                  fork={1: 5000})), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C6").verdict, sweep=None), V.NOTRUN)

    def test_c7(self):
        self.assertEqual(self.verdict(claims.by_id("C7").verdict), V.NOTRUN)  # no level >= 5000
        high = [synth.point("thread", "pingpong", 10000, 5000, errors=3),
                {"model": "fork", "mode": "pingpong", "conns": 10000, "status": "not run",
                 "reason": "pids"}]
        thread = {1: 10000, 100: 40000, 1000: 39000, 2000: 15000}
        self.assertEqual(self.verdict(claims.by_id("C7").verdict, sweep=synth.sweep(thread=thread, extra=high)),
                         V.HOLDS)
        good = [synth.point("thread", "pingpong", 10000, 39000),
                synth.point("fork", "pingpong", 10000, 3000)]
        self.assertEqual(self.verdict(claims.by_id("C7").verdict, sweep=synth.sweep(extra=good)), V.NOT)
        unheld = [dict(synth.point("thread", "pingpong", 10000, 39000),
                       server={"max_concurrent": 3500}),
                  dict(synth.point("fork", "pingpong", 10000, 3000),
                       server={"max_concurrent": 10000})]
        self.assertEqual(self.verdict(claims.by_id("C7").verdict, sweep=synth.sweep(extra=unheld)), V.PARTLY)
        half = [synth.point("thread", "pingpong", 10000, 39000),
                synth.point("fork", "pingpong", 10000, 3000, errors=5)]
        self.assertEqual(self.verdict(claims.by_id("C7").verdict, sweep=synth.sweep(extra=half)), V.PARTLY)

    def test_c7_reads_the_ok_repetitions_of_a_client_bound_point(self):
        def fork_top(statuses):
            p = synth.point("fork", "pingpong", 10000, 700)
            p["rounds"] = [{"round": i, "status": st, "requests_per_sec": 700.0 + i,
                            "p99_us": 5e5, "reasons": [] if st == "ok" else ["saturated"]}
                           for i, st in enumerate(statuses)]
            p["status"], p["reasons"] = "client-bound", ["round 5: echo-load saturated"]
            return p
        good = synth.point("thread", "pingpong", 10000, 39000)
        c7 = claims.by_id("C7").verdict
        # Four ok repetitions far below fork's peak (3,000): fork fails; thread works; thread
        # does not degrade past 1,000: one sub-claim of three.
        four = fork_top(["ok", "ok", "ok", "ok", "client-bound"])
        self.assertEqual(self.verdict(c7, sweep=synth.sweep(extra=[good, four])), V.PARTLY)
        # Two ok repetitions: its throughput is not read, fork is not shown to fail.
        two = fork_top(["ok", "client-bound", "ok", "client-bound", "client-bound"])
        self.assertEqual(self.verdict(c7, sweep=synth.sweep(extra=[good, two])), V.NOT)

    def test_c8(self):
        self.assertEqual(self.verdict(claims.by_id("C8").verdict), V.HOLDS)
        # The kernel's part counts: 10 KiB of user memory but 1.5 MiB of kernel memory.
        self.assertEqual(self.verdict(claims.by_id("C8").verdict, sweep=synth.sweep(thread_kernel=1500.0)),
                         V.PARTLY)
        lines = claims.by_id("C8").verdict(self.run_with())["measured"]
        self.assertTrue(any("KernelStack" in ln and "user (PSS)" in ln for ln in lines), lines)
        self.assertEqual(self.verdict(claims.by_id("C8").verdict, sweep=synth.sweep(thread_rss=2000.0)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C8").verdict, sweep=synth.sweep(thread_rss=8000.0)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C8").verdict, sweep=None), V.NOTRUN)

    def test_c8_reads_memory_of_every_repetition(self):
        def thread_top(user, kernel):
            p = synth.point("thread", "pingpong", 10000, 39000, rss_kb=user[0], kernel_kb=kernel[0])
            p["rounds"] = [{"round": i, "status": "ok", "requests_per_sec": 39000,
                            "memory": {"rss_per_conn_kb": u, "pss_per_conn_kb": u,
                                       "kernel_per_conn_kb": k}}
                           for i, (u, k) in enumerate(zip(user, kernel))]
            return [p]
        c8 = claims.by_id("C8").verdict
        steady = thread_top([10.0, 11.0, 12.0, 10.5, 11.5], [20.0, 21.0, 22.0, 20.5, 21.5])
        r = c8(self.run_with(sweep=synth.sweep(extra=steady)))
        total = next(f for f in r["figures"] if f["name"].startswith("thread memory per conn"))
        self.assertEqual(total["n"], 5)
        self.assertLess(total["low"], total["high"])
        self.assertEqual(r["verdict"], V.HOLDS)
        # Repetitions whose window held no kernel reading are left out of the total, not the
        # whole point's repetitions.
        gaps = thread_top([10.0, 11.0, 12.0, 10.5, 11.5], [20.0, None, 22.0, None, 21.5])
        r = c8(self.run_with(sweep=synth.sweep(extra=gaps)))
        total = next(f for f in r["figures"] if f["name"].startswith("thread memory per conn"))
        self.assertEqual(total["n"], 3)
        # Repetitions on both sides of 1 MiB: no single repetition may decide.
        split = thread_top([600.0, 900.0, 1000.0, 1100.0, 1400.0], [10.0] * 5)
        self.assertEqual(self.verdict(c8, sweep=synth.sweep(extra=split)), V.INCONCLUSIVE)

    def test_c7_reads_the_window_and_shows_the_ramp_up(self):
        # Ramp-up errors alone do not make a model fail; they are listed beside.
        high = [synth.point("thread", "pingpong", 10000, 39000, ramp_errors=40, ramp_s=12.0),
                synth.point("fork", "pingpong", 10000, 3000)]
        r = claims.by_id("C7").verdict(self.run_with(sweep=synth.sweep(extra=high)))
        self.assertEqual(r["verdict"], V.NOT)
        self.assertTrue(any("40 ramp-up errors" in ln for ln in r["measured"]), r["measured"])

    def test_c15(self):
        self.assertEqual(self.verdict(claims.by_id("C15").verdict), V.HOLDS)
        step = synth.handoff(thread_ns=lambda m: 700 if m < 4096 else 3000)  # a jump, not log m
        self.assertEqual(self.verdict(claims.by_id("C15").verdict, handoff=step), V.PARTLY)
        flat = synth.handoff(thread_ns=lambda m: 700 + m / 1e4)
        self.assertEqual(self.verdict(claims.by_id("C15").verdict, handoff=flat), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C15").verdict, handoff=synth.handoff(levels=(2, 16))),
                         V.NOTRUN)
        self.assertEqual(self.verdict(claims.by_id("C15").verdict, handoff=None), V.NOTRUN)

    def test_ramp_and_slow_sections(self):
        text = document.full_markdown(document.build(self.run_with()))
        ramp = text[text.index("## Ramp-up"):text.index("## Slow clients")]
        self.assertIn("| thread | ", ramp)
        slow = text[text.index("## Slow clients"):text.index("## What surprised us")]
        self.assertIn("netem", slow)
        self.assertIn("| prefork | 1000 | 1800 | 80.0 | 0 |", slow)
        text, _ = document.build_report(self.run_with(slow=None, sweep=None))
        self.assertIn("not run", text[text.index("## Slow clients"):])

    def test_c9(self):
        self.assertEqual(self.verdict(claims.by_id("C9").verdict, switch=synth.switch(syscall=10.0)), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C9").verdict), V.PARTLY)  # 400 cycles on a VM
        self.assertEqual(self.verdict(claims.by_id("C9").verdict, props=synth.props(virtualized=False)), V.NOT)

    def test_c10(self):
        self.assertEqual(self.verdict(claims.by_id("C10").verdict), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C10").verdict, maxconns=synth.maxconns(target=19900)),
                         V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C10").verdict, maxconns=synth.maxconns(errors=4)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C10").verdict, maxconns=synth.maxconns(target=10 ** 7)),
                         V.NOTRUN)  # projected memory does not fit either
        self.assertEqual(self.verdict(claims.by_id("C10").verdict, maxconns=None), V.NOTRUN)
        # One core, several processes, the target held: holds, and the copy-mode aim is read.
        res = claims.by_id("C10").verdict(self.run_with(maxconns=synth.maxconns(held_target=True)))
        self.assertEqual(res["verdict"], V.HOLDS)
        text = "\n".join(res["measured"])
        self.assertIn("100000 connections (copy stacks, 7 processes on CPU 0): held 100000", text)
        self.assertIn("at most 4 KiB per connection in copy mode at 100000: 3.50 KiB, met", text)
        res = claims.by_id("C10").verdict(self.run_with(maxconns=synth.maxconns(held_target=True, copy_pss=5.0)))
        self.assertIn("5.00 KiB, not met", "\n".join(res["measured"]))

    def test_c11(self):
        self.assertEqual(self.verdict(claims.by_id("C11").verdict, threads=synth.threads(ratio=1.6)), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C11").verdict, threads=synth.threads(ratio=1.15)),
                         V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C11").verdict, threads=synth.threads(ratio=0.9)), V.NOT)
        # Server and load filling both cores: not measurable here, whatever the ratio.
        self.assertEqual(self.verdict(claims.by_id("C11").verdict, threads=synth.threads(ratio=1.6,
                                                                       load_cores=1.0)), V.NOTRUN)

    def test_c12(self):
        # Guard pages pass and both sides of the trade were measured.
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, props=synth.props(copy_stack=True)), V.HOLDS)
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, props=synth.props(overflow_ok=False)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, props=None), V.NOTRUN)
        # No memory measurement, or no copystack rows: the trade is not shown.
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, fibermem=None), V.PARTLY)
        no_rows = synth.switch()
        no_rows["benchmarks"] = [b for b in no_rows["benchmarks"]
                                 if not b["run_name"].startswith("copystack/")]
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, switch=no_rows), V.PARTLY)
        # A side of the trade going the wrong way: copying free, or copy stacks dearer.
        flat = synth.switch(copy_ns=lambda n, f: 50.0 - 0.001 * n)
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, switch=flat), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C12").verdict, fibermem=synth.fibermem(copy_pss=9000.0)),
                         V.NOT)
        res = claims.by_id("C12").verdict(self.run_with(props=synth.props(copy_stack=True)))
        text = "\n".join(res["measured"])
        self.assertIn("under 1 KiB: 776 B, reached", text)
        self.assertIn("under 20 ns per round trip: 60.2 ns, 3x the target", text)
        self.assertIn("100000: not run: fiber 32743", text)

    def test_c1_at_1e5_fibers(self):
        sw = synth.switch(fibers=(2, 16, 100000))
        for b in sw["benchmarks"]:
            if b["run_name"].endswith("/fibers:100000"):
                b["shared_stacks"] = 2
        text = "\n".join(claims.by_id("C1").verdict(self.run_with(switch=sw))["measured"])
        self.assertIn("largest run queue measured: 100000 fibers; at 100000 fibers on shared", text)

    def test_c13(self):
        self.assertEqual(self.verdict(claims.by_id("C13").verdict), V.HOLDS)
        # Within 1.05 at 100 connections but not at 1000: partly.
        self.assertEqual(self.verdict(claims.by_id("C13").verdict, fiberio=synth.fiberio(cpu_1k=1.15)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C13").verdict, fiberio=synth.fiberio(tput=0.9)), V.PARTLY)
        # Fast enough, but still an EAGAIN read per request: partly.
        self.assertEqual(self.verdict(claims.by_id("C13").verdict, fiberio=synth.fiberio(sysc=3.02)), V.PARTLY)
        self.assertEqual(self.verdict(claims.by_id("C13").verdict, fiberio=synth.fiberio(cpu=1.4)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C13").verdict, fiberio=synth.fiberio(tput_1k=0.7)), V.NOT)
        self.assertEqual(self.verdict(claims.by_id("C13").verdict, fiberio=None), V.NOTRUN)
        r = claims.by_id("C13").verdict(self.run_with())
        self.assertIn("| pingpong | fiber/adaptive/merged | 2.050 |", "\n".join(r["measured"]))

    def test_hooks_section(self):
        text = "\n".join(hooks.hooks_section(self.run_with(hooks=synth.hooks(direct_ns=150.0,
                                                                      hooked_ns=165.0))))
        self.assertIn("## Hooked calls and fiber locks", text)
        self.assertIn("quote no number", text)  # no verdict: what was measured and how
        read = next(ln for ln in text.splitlines() if ln.startswith("| read |"))
        self.assertIn("| 1.100 |", read)  # hooked / direct time, computed from the rows
        self.assertIn("| 0.838 |", read)  # and from the instruction counts (98 / 117)
        self.assertIn("median of the paired rounds 1.050", text)  # 4.2 / 4.0 us
        self.assertIn("| fiber_mutex | 8.0 ns | 600.0 ns", text)
        self.assertIn("not run: blocks the thread", text)  # each not-run row says why
        self.assertIn("- pthread_mutex: deadlocked, detected and reported", text)
        self.assertIn("- event_lock: completed", text)
        no_deadlock = "\n".join(hooks.hooks_section(self.run_with(hooks=synth.hooks(deadlocked=False))))
        self.assertIn("- pthread_mutex: completed", no_deadlock)
        no_echo = "\n".join(hooks.hooks_section(self.run_with(hooks=synth.hooks(echo_ok=False))))
        self.assertIn("echo: not run: echo-load failed", no_echo)
        self.assertIn("| read |", no_echo)  # the other parts still reported

    def test_hooks_not_run(self):
        text = "\n".join(hooks.hooks_section(self.run_with(hooks=None)))
        self.assertIn("not run: hooks.json not in the run folder", text)
        failed = self.run_with(hooks={"experiment": "hooks", "status": "failed",
                                      "reason": "boom"})
        self.assertIn("not run: hooks failed: boom", "\n".join(hooks.hooks_section(failed)))

    def test_machine_time_against_the_promise(self):
        def text(**totals):
            doc = dict(synth.suite(), **totals)
            doc["steps"]["switch"]["budget_s"] = 12
            return "\n".join(machine.machine_section(self.run_with(suite=doc)))
        within = text(seconds=278, suite_budget_s=290, run_budget_s=360, run_before_suite_s=65)
        self.assertIn("- time: ./run.sh 343 s up to this report, within its 6 minutes: 65 s of "
                      "setup and build, then the suite 278 s of the 290 s it was given (the 6 "
                      "minutes less the setup and build)", within)
        self.assertIn("switch ok (10 s of 12)", within)
        over = text(seconds=250, suite_budget_s=240, run_budget_s=360, run_before_suite_s=200,
                    run_over_budget="./run.sh spent 200 s before the suite")
        self.assertIn("./run.sh 450 s up to this report, 90 s over its 6 minutes", over)
        self.assertIn("then the suite 250 s of the 240 s it was given (./run.sh spent 200 s "
                      "before the suite)", over)
        by_hand = text(seconds=300, suite_budget_s=330)
        self.assertIn("- time: the suite 300 s of the 330 s it was given, up to this report",
                      by_hand)
        self.assertNotIn("- time:", text())  # an older run: no totals recorded

    def test_report_document(self):
        text, results = document.build_report(self.run_with())
        self.assertEqual(set(results), {c.ID for c in claims.CLAIMS})
        self.assertTrue(text.index("## Summary") < text.index("## C1") < text.index("## C17")
                        < text.index("## Machine"))
        for cid in (c.ID for c in claims.CLAIMS):
            self.assertIn(f"## {cid}\n", text)
        self.assertIn("## What surprised us", text)
        self.assertTrue(text.index("## C12") < text.index("## Hooked calls and fiber locks")
                        < text.index("## What surprised us"))

    def test_empty_folder_is_not_run(self):
        empty = Path(self.tmp.name) / "empty"
        empty.mkdir()
        text, results = document.build_report(D.Run(empty))
        self.assertEqual({r["verdict"] for r in results.values()}, {V.NOTRUN})
        self.assertIn("not run", text)

    def test_failed_step_is_not_run(self):
        run = self.run_with(engines={"experiment": "engines", "status": "failed",
                                     "reason": "boom"})
        r = claims.by_id("C2").verdict(run)
        self.assertEqual(r["verdict"], V.NOTRUN)
        self.assertIn("boom", " ".join(r["measured"]))


class ReferenceColumn(unittest.TestCase):
    """Every figure of a report stands beside the reference run's figure of the same name."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="report-ref-")
        self.local = D.Run(synth.full(Path(self.tmp.name) / "local", engines=synth.engines(ratio=0.9,
                                                                               cpu_ratio=1.0)))
        self.ref = D.Run(synth.full(Path(self.tmp.name) / "ref",
                                suite=dict(synth.suite(), preset="full"),
                                engines=synth.engines(ratio=1.3, rounds=5, jitter=0.01)))

    def tearDown(self):
        self.tmp.cleanup()

    def test_reference_column_and_machine_named_once(self):
        text, results = document.build_report(self.local, self.ref)
        self.assertIn("| what would decide it here | reference |\n", text)
        row = next(ln for ln in text.splitlines() if ln.startswith("| [C2](#c2) |"))
        self.assertIn("| throughput merged/naive (median of paired rounds): 0.9 (n=1, no "
                      "interval) | does not hold |", row)
        self.assertTrue(row.endswith("| holds: noise unknown (throughput merged/naive (median of "
                                     "paired rounds), +1 more) |"), row)
        self.assertEqual(text.count("- reference column: the committed run"), 1)
        self.assertIn("preset `full`", text)
        for cid in (c.ID for c in claims.CLAIMS):
            section = text.split(f"## {cid}\n", 1)[1].split("\n## ", 1)[0]
            if results[cid]["verdict"] != V.NOTRUN:
                self.assertIn("| figure | this run | reference |", section, cid)
        self.assertIn("| **throughput merged/naive (median of paired rounds)** | 0.9 (n=1, no "
                      "interval) | 1.3 [1.29, 1.31] (n=5) |", text)

    def test_no_reference_column_without_reference(self):
        text, _ = document.build_report(self.local)
        self.assertIn("| what would decide it here |\n", text)
        self.assertNotIn("| reference |", text)
        self.assertIn("| figure | this run |\n", text)

    def test_reference_for(self):
        self.assertIsNone(reference.reference_for(self.ref.dir, self.ref.dir))  # the reference itself
        self.assertIsNone(reference.reference_for(self.local.dir, Path(self.tmp.name) / "nowhere"))
        ref = reference.reference_for(self.local.dir, self.ref.dir)
        self.assertEqual(ref.dir, self.ref.dir)

    def test_figure_missing_in_reference_is_na(self):
        ref = D.Run(synth.full(Path(self.tmp.name) / "ref2", maxconns=None))
        text, _ = document.build_report(self.local, ref)
        self.assertIn("| **most connections held on one core** | 19900 (exact) | n/a |", text)

    def test_a_new_claim_gets_the_column_from_its_numbers(self):
        def verdict_cx(run):
            v = (run.get("threads") or {}).get("ratio_t2_over_t1_shared")
            return V.result(V.HOLDS, "synthetic", ["- x"], numbers={"made-up ratio": (v, 1.0)})
        added = synth.claim(verdict_cx)
        claims.CLAIMS.append(added)
        try:
            ref = D.Run(synth.full(Path(self.tmp.name) / "ref3", threads=synth.threads(ratio=1.5)))
            text, _ = document.build_report(self.local, ref)
            self.assertIn("| made-up ratio | 1 (n=1, no interval) | 1.5 (n=1, no interval) |",
                          text)
        finally:
            claims.CLAIMS.remove(added)

    def test_an_older_reference_does_not_break_the_report(self):
        old = D.Run(synth.full(Path(self.tmp.name) / "old", engines={"experiment": "engines",
                                                                 "summary": {"naive": 3}}))
        text, results = document.build_report(self.local, old)
        row = next(ln for ln in text.splitlines() if ln.startswith("| [C3](#c3) |"))
        self.assertIn("| epoll_ctl per request, naive (engine count): 2 (exact) | holds |", row)
        self.assertIn("| not run: not run in the reference (this run's files do not have what "
                      "the rule reads", row)
        with self.assertRaises(AttributeError):
            claims.evaluate(old)  # the run being reported is never excused

    def test_sharpen_section(self):
        folder = Path(self.tmp.name) / "quick"
        suite = dict(synth.suite(), presets={"sweep": ["--levels", "1,10"]},
                     full_presets={"sweep": ["--duration", "5"]})
        text = document.full_markdown(document.build(D.Run(synth.full(folder, suite=suite))))
        self.assertIn("## What a full run may sharpen", text)
        self.assertIn("| C7 | not run | ? | may reach a verdict where this run did not", text)
        self.assertIn("| C6 | holds partly | sweep | sweep: `--duration 5` (here `--levels 1,10`)"
                      ": its single-sample figures come from longer points or more levels |", text)
        self.assertIn("| C3 | holds | engines | the same: exact counts at the same size |", text)
        text, _ = document.build_report(self.ref)  # a full run has nothing to sharpen
        self.assertNotIn("## What a full run may sharpen", text)


def quick_levels(args):
    """The levels a preset's arguments sweep: `--levels a,b,...`, or the union of the levels
    of a `--plan models/modes/levels;...` (every part's last field)."""
    if "--plan" in args:
        parts = args[args.index("--plan") + 1].split(";")
        return sorted({int(x) for part in parts for x in part.split("/")[-1].split(",")})
    return [int(x) for x in args[args.index("--levels") + 1].split(",")]


class QuickPresetCoverage(unittest.TestCase):
    """A run of the quick preset's shape reaches a verdict on every claim the report defines:
    the sweep levels, fiber counts and max-connection levels are taken from harness/suite.py's
    presets, the rest from the synthetic run."""

    def quick_run(self, folder, sweep_args):
        levels = quick_levels(sweep_args)
        fibers = [int(f) for f in re.search(r"fibers:\(([\d|]+)\)",
                                            harness_suite.PRESETS["quick"]["switch"]["filter"]
                                            ).group(1).split("|")]
        thread = {c: 40000 if c > 1 else 10000 for c in levels}
        return D.Run(synth.full(folder, sweep=synth.sweep(thread=thread, fork=None, levels=levels),
                            switch=synth.switch(fibers=fibers),
                            maxconns=synth.maxconns(held=quick_levels(
                                harness_suite.PRESETS["quick"]["maxconns"])[-1])))

    def test_every_claim_reaches_a_verdict(self):
        with tempfile.TemporaryDirectory(prefix="report-quick-") as tmp:
            run = self.quick_run(Path(tmp), harness_suite.PRESETS["quick"]["sweep"])
            results = claims.evaluate(run)
            self.assertEqual(set(results), {c.ID for c in claims.CLAIMS})
            for cid, r in results.items():
                self.assertNotEqual(r["verdict"], V.NOTRUN, f"{cid}: {r['measured']}")

    def test_the_old_quick_sweep_left_c7_not_run(self):
        with tempfile.TemporaryDirectory(prefix="report-quick-") as tmp:
            run = self.quick_run(Path(tmp), ["--levels", "1,10,100,1000"])
            self.assertEqual(claims.by_id("C7").verdict(run)["verdict"], V.NOTRUN)


if __name__ == "__main__":
    unittest.main()
