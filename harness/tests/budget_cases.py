#!/usr/bin/python3
"""Cases for the time budgets (harness/lib/budget.py) and the sweep's use of them, on a fake
clock: a simulated machine whose rounds cost fixed + per-connection seconds (times a noise
factor) runs the quick preset's sweep plan through sweep.run_points and the same repetition
loop the real sweep uses (sweep_point.repetitions), without starting anything. A slow machine
is simulated by scaling the costs: fork four times slower, rounds twice as noisy.

usage: budget_cases.py CASE --work DIR
"""
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

HARNESS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HARNESS))
from cases import check, run  # noqa: E402  (harness/tests/cases.py)
from lib import sweep  # noqa: E402
from lib import sweep_point  # noqa: E402
from lib import budget as B  # noqa: E402
from experiments import sweep as sweep_exp  # noqa: E402

CONCURRENCY = {"thread": "thread-per-connection", "fork": "process-per-connection",
               "fiber": "fiber-per-connection", "libevent": "event-loop",
               "epoll": "event-loop"}
# Seconds per connection of one round's ramp-up (and, in churn, of its window's connects), by
# model: what a quick run's ramp-ups showed on a 2-core AMD EPYC VM (fork 1.9 s for 1,000
# connections, thread 2.9 s for 10,000); four times fork's is about 76 s a round at 10,000.
PER_CONN = {"thread": 2.9e-4, "fork": 1.9e-3, "fiber": 5e-5, "libevent": 5e-5, "epoll": 5e-5}
SETUP_S = 1.2
LIMITS = {"nofile_hard": 1 << 20, "pid_max": 1 << 22, "threads_max": 1 << 22, "nproc": None,
          "max_map_count": 1 << 22}


class Machine:
    """The simulated machine: what one round and one point's setup cost on it."""

    def __init__(self, clock, fork_scale=1.0, noise=0.0, seed=1):
        self.clock, self.fork_scale, self.noise = clock, fork_scale, noise
        self.rng = random.Random(seed)
        self.rounds = []  # (model, conns, seconds)

    def round_s(self, a, model, conns):
        per = PER_CONN[model] * (self.fork_scale if model == "fork" else 1.0)
        s = 0.3 + a.warmup + a.duration + per * conns
        # Noise as a factor around 1: `noise` is the relative spread of a round's cost.
        return s * max(0.2, self.rng.lognormvariate(0.0, self.noise)) if self.noise else s

    def measure(self, a):
        def one(model, mode, conns):
            self.clock.advance(SETUP_S)

            def one_round():
                s = self.round_s(a, model, conns)
                self.clock.advance(s)
                self.rounds.append((model, conns, s))
                return s
            done, walls, cut, _ = sweep_point.repetitions(a, one_round, lambda: True,
                                                          self.clock)
            point = {"status": "ok", "rss": {"pss_per_conn_kb": 10.0,
                                             "pss_peak_per_conn_kb": None, "per_conn_kb": 10},
                     "rounds": [{"round": i, "status": "ok", "wall_s": w}
                                for i, w in enumerate(walls)]}
            if cut:
                point["cut"] = cut
            return point
        return one


def quick_args(budget_s, plan=None, optional=None):
    preset = sweep_exp.EXPERIMENT.preset("quick")
    opt = dict(zip(preset[::2], preset[1::2]))
    return SimpleNamespace(
        declared={m: {"concurrency": c} for m, c in CONCURRENCY.items()},
        plan=sweep.parse_plan(plan or opt["--plan"]),
        optional_plan=sweep.parse_plan(optional) if optional else None,
        repeat=int(opt["--repeat"]), duration=float(opt["--duration"]),
        warmup=float(opt["--warmup"]), idle_samples=int(opt["--idle-samples"]),
        budget_s=budget_s)


def simulate(budget_s, fork_scale=1.0, noise=0.0, plan=None, optional=None, seed=1):
    a = quick_args(budget_s, plan, optional)
    clock = B.FakeClock()
    machine = Machine(clock, fork_scale, noise, seed)
    sched = sweep.scheduler(a, clock)
    out = []
    sweep.run_points(a, sweep.plan(a), LIMITS, machine.measure(a), sched, lambda _: None,
                     lambda: None, out)
    return a, sched, out, machine


def rounds_of(p):
    return len(p.get("rounds", []))


def case_unlimited(a):
    """Without a budget every point gets --repeat rounds, as before budgets."""
    args, sched, out, _ = simulate(None)
    check(all(rounds_of(p) == args.repeat for p in out), "every point at --repeat rounds",
          [(p["model"], p["conns"], rounds_of(p)) for p in out])
    check(all(p["status"] == "ok" for p in out), "nothing left out", [p["status"] for p in out])


def case_generous(a):
    """A budget above what the plan costs changes nothing."""
    _, sched0, _, _ = simulate(None)
    total = sched0.budget.spent()
    args, sched, out, _ = simulate(total * 1.3)
    check(all(rounds_of(p) == args.repeat for p in out), "every point at --repeat rounds",
          [(p["model"], p["conns"], rounds_of(p)) for p in out])
    check(sched.budget.spent() <= total * 1.3, "within the budget", sched.budget.spent())


def show(out):
    for p in out:
        print(f"  {p['model']:8} {p['mode']:8} {p['conns']:>6} {rounds_of(p)} rounds "
              f"{p.get('reason') or p.get('cut') or ''}")


def case_tight(a):
    """Three quarters of what the plan costs at --repeat rounds: the sweep ends within its
    budget, and every point keeps at least 3 rounds (their minimums fit)."""
    _, sched0, _, _ = simulate(None)
    budget_s = sched0.budget.spent() * 0.75
    args, sched, out, machine = simulate(budget_s)
    worst_round = max(s for _, _, s in machine.rounds)
    print(f"plan costs {sched0.budget.spent():.0f} s unlimited; budget {budget_s:.0f} s, "
          f"spent {sched.budget.spent():.0f} s")
    show(out)
    check(sched.budget.spent() <= budget_s + worst_round, "within the budget (at most one "
          "round over)", f"{sched.budget.spent():.1f} of {budget_s:.1f}")
    check(all(p["status"] == "ok" and rounds_of(p) >= B.MIN_ROUNDS for p in out),
          "every point runs with at least 3 rounds",
          [(p["model"], p["conns"], rounds_of(p)) for p in out])
    check(any(rounds_of(p) < args.repeat for p in out), "some points have fewer rounds", "")


def case_starved(a):
    """Two fifths of what the plan costs, less than the points' minimums together: within the
    budget, every point that ran has 3 rounds, and the points left out say over budget with
    their prediction; the dearest point (fork at 10,000) is among them."""
    _, sched0, _, _ = simulate(None)
    budget_s = sched0.budget.spent() * 0.4
    _, sched, out, machine = simulate(budget_s)
    worst_round = max(s for _, _, s in machine.rounds)
    show(out)
    check(sched.budget.spent() <= budget_s + worst_round, "within the budget",
          f"{sched.budget.spent():.1f} of {budget_s:.1f}")
    ran = [p for p in out if p["status"] == "ok"]
    check(all(rounds_of(p) >= B.MIN_ROUNDS for p in ran), "a point that ran has 3 rounds",
          [(p["model"], p["conns"], rounds_of(p)) for p in ran])
    skipped = [p for p in out if p["status"] != "ok"]
    check(skipped and all(p["reason"].startswith(B.OVER_BUDGET + " (predicted ")
                          for p in skipped),
          "a point left out says over budget with its prediction",
          [p.get("reason") for p in skipped])
    check(any(p["model"] == "fork" and p["conns"] == 10000 for p in skipped),
          "the dearest point is left out", "")


def case_fork_slow(a):
    """Fork four times slower (fork at 10,000 alone would take most of the sweep's budget):
    within the quick budget the sweep ends in time, fork's 10,000 is left out or cut, every
    point that ran has 3 rounds and most points ran; with twice the budget every other point
    keeps its rounds."""
    quick = sweep_exp.EXPERIMENT.budget_s["quick"]
    _, sched0, _, _ = simulate(None, fork_scale=4.0)
    check(sched0.budget.spent() > 2 * quick, "the simulated machine is over budget without one",
          sched0.budget.spent())
    for budget_s in (quick, 2 * quick):
        args, sched, out, machine = simulate(budget_s, fork_scale=4.0)
        worst_round = max(s for _, _, s in machine.rounds)
        print(f"fork 4x: {sched0.budget.spent():.0f} s unlimited, {sched.budget.spent():.0f} s "
              f"within a budget of {budget_s} s")
        show(out)
        check(sched.budget.spent() <= budget_s + worst_round, "within the budget",
              f"{sched.budget.spent():.1f} of {budget_s}")
        f10k = next(p for p in out if p["model"] == "fork" and p["conns"] == 10000)
        check(rounds_of(f10k) < args.repeat, "fork at 10,000 is cut or left out",
              (rounds_of(f10k), f10k.get("reason"), f10k.get("cut")))
        ran = [p for p in out if p["status"] == "ok"]
        check(all(rounds_of(p) >= B.MIN_ROUNDS for p in ran), "a point that ran has 3 rounds",
              [(p["model"], p["conns"], rounds_of(p)) for p in ran])
        check(len(ran) >= 2 * len(out) // 3, "most points ran", len(ran))
    others = [p for p in out if not (p["model"] == "fork" and p["conns"] == 10000)]
    check(all(p["status"] == "ok" and rounds_of(p) >= B.MIN_ROUNDS for p in others),
          "with twice the budget every other point runs with at least 3 rounds",
          [(p["model"], p["conns"], rounds_of(p), p.get("reason")) for p in others])


def case_noisy(a):
    """Rounds twice as noisy as a quiet VM's (relative spread 0.3 instead of 0.15), fork four
    times slower: in 50 simulated sweeps, never more than one round over the budget."""
    budget_s = sweep_exp.EXPERIMENT.budget_s["quick"]
    overs = []
    for seed in range(50):
        _, sched, out, machine = simulate(budget_s, fork_scale=4.0, noise=0.3, seed=seed)
        worst_round = max(s for _, _, s in machine.rounds)
        overs.append(sched.budget.spent() - budget_s - worst_round)
        check(all(p["status"] == "ok" or p["reason"].startswith(B.OVER_BUDGET) for p in out),
              "only the budget leaves points out", seed)
    check(max(overs) <= 0, "at most one round over the budget in every sweep",
          f"worst {max(overs):.1f} s beyond")


def case_optional_last(a):
    """Optional groups run after every deciding point, and only while they fit."""
    plan = "thread/pingpong/1,100,1000"
    optional = "epoll,fiber/pingpong/1,100,1000"
    _, sched0, _, _ = simulate(None, plan=plan, optional=optional)
    deciding_only = simulate(None, plan=plan)[1].budget.spent()
    budget_s = deciding_only + (sched0.budget.spent() - deciding_only) * 0.4
    _, sched, out, _ = simulate(budget_s, plan=plan, optional=optional)
    kinds = [p["budget"]["deciding"] for p in out]
    check(kinds == sorted(kinds, reverse=True), "deciding points first", kinds)
    check(all(p["status"] == "ok" for p in out if p["budget"]["deciding"]),
          "every deciding point ran", [(p["model"], p["conns"], p["status"]) for p in out])
    left = [p for p in out if p["status"] != "ok"]
    check(left and all(not p["budget"]["deciding"] for p in left),
          "what did not fit is optional", [(p["model"], p["conns"]) for p in left])


def case_reserve(a):
    """An expensive deciding point early in the plan cannot spend what later deciding points
    need: it gets fewer rounds, the later ones their minimum."""
    plan = "fork/pingpong/100,10000;epoll/pingpong/1,100,1000"
    _, sched0, out0, _ = simulate(None, plan=plan, fork_scale=4.0)
    later = sum(p["seconds"] for p in out0 if p["model"] == "epoll")
    budget_s = later + 3.5 * max(s["wall_s"] for p in out0 if p["model"] == "fork"
                                 for s in p["rounds"])
    _, sched, out, _ = simulate(budget_s, plan=plan, fork_scale=4.0)
    for p in out:
        print(f"  {p['model']:6} {p['conns']:>6} {rounds_of(p)} rounds "
              f"{p.get('reason') or p.get('cut') or ''}")
    check(all(rounds_of(p) >= B.MIN_ROUNDS for p in out if p["model"] == "epoll"),
          "the later points keep their minimum", [(p["model"], rounds_of(p)) for p in out])


def case_budget_units(a):
    """Budget and RoundCosts on their own: the prediction follows the rounds seen, a budget
    refuses what does not fit and says why."""
    clock = B.FakeClock()
    bud = B.Budget(100, clock)
    clock.advance(30)
    check(abs(bud.left() - 70) < 1e-9 and bud.fits(60, 10) and not bud.fits(60, 11),
          "left and fits follow the clock", bud.left())
    check(B.OVER_BUDGET in bud.over(80) and "predicted 80 s" in bud.over(80),
          "the reason names the prediction", bud.over(80))
    costs = B.RoundCosts(lambda key: (1.0, 1e-4))
    check(costs.model("k")[2].startswith("prior"), "no rounds: the prior", costs.model("k"))
    costs.observe("k", 10, 0.8)
    costs.observe("k", 1000, 4.8)
    fixed, per, _ = costs.model("k")
    check(abs(fixed - 0.8) < 1e-9 and abs(per - 0.004) < 1e-9,
          "fixed from the small level, per unit from the largest", (fixed, per))
    check(abs(costs.predict("k", 10000) - 40.8) < 1e-6, "predicted at 10,000",
          costs.predict("k", 10000))
    check(B.plan_rounds(bud, 5, 10.0, 2.0, 0.0) == (5, None), "five rounds fit", "")
    check(B.plan_rounds(bud, 5, 20.0, 2.0, 0.0)[0] == 3, "three of five fit", "")
    check(B.plan_rounds(bud, 5, 30.0, 2.0, 0.0)[0] == 0, "not even three: none", "")
    try:
        B.Budget(0)
        check(False, "a zero budget is refused")
    except ValueError:
        pass


def gated_rounds(seconds, wanted, round_s, shares=(1.0,), noise=0.0, seed=1, setup_s=0.0):
    """The rounds each part's loop runs on a fake clock: rounds.interleaved over two items
    (each half a round), one gate per part at its cumulative share, a round costing round_s
    times a factor within 1 +- noise. Returns ([rounds per part], seconds spent in all)."""
    from lib import rounds
    clock, rng = B.FakeClock(), random.Random(seed)
    budget = B.Budget(seconds, clock)
    clock.advance(setup_s)
    ran = []
    for share in shares:
        done = set()
        for rnd, _ in rounds.interleaved(wanted, ("x", "y"), B.RoundGate(budget, share)):
            done.add(rnd)
            clock.advance(round_s / 2 * (1 + rng.uniform(-noise, noise)))
        ran.append(len(done))
    return ran, clock()


def case_round_gate(a):
    """A loop of interleaved rounds under a RoundGate: every wanted round when they fit, at
    least 3 when they do not, whole rounds only, and within the budget on a machine twice as
    slow and twice as noisy as the one the budget was sized on."""
    ran, spent = gated_rounds(None, 5, 2.0)
    check(ran == [5], "no budget: every wanted round", ran)
    ran, spent = gated_rounds(12, 5, 2.0)
    check(ran == [5] and spent <= 12, "rounds that fit all run", (ran, spent))
    ran, spent = gated_rounds(9, 5, 2.0)
    check(ran == [4] and spent <= 9, "the round that would end past the budget is not started",
          (ran, spent))
    ran, spent = gated_rounds(2, 9, 2.0)
    check(ran == [3], "3 rounds even when the budget is smaller", ran)
    # Sized on this machine: 9 rounds of 2 s after 1 s of setup in 20 s. Twice as slow, with
    # rounds varying by 20%: fewer rounds, still at least 3, and never past the budget by
    # more than one round's noise.
    for seed in range(50):
        ran, spent = gated_rounds(20, 9, 4.0, noise=0.2, seed=seed, setup_s=2.0)
        check(3 <= ran[0] < 9 and spent <= 20 * 1.1, f"seed {seed}: a slow machine within the "
              "budget", (ran, spent))


def case_round_gate_parts(a):
    """Parts with cumulative shares: the first part stops by its share, the second may spend
    what the first left; a share outside (0, 1] is refused."""
    ran, spent = gated_rounds(20, 9, 2.0, shares=(0.5, 1.0))
    check(ran == [4, 5] and spent <= 20, "part one ends by 10 s, part two by 20 s", (ran, spent))
    ran, spent = gated_rounds(20, 3, 2.0, shares=(0.5, 1.0))
    check(ran == [3, 3], "a part that wants 3 rounds takes 3", ran)
    for bad in (0, 1.5):
        try:
            B.RoundGate(B.Budget(10), bad)
        except ValueError:
            continue
        check(False, f"share {bad} refused")


def case_extra_repetitions(a):
    """Passes that ran their minimum get every wanted repetition when they fit, and the same
    fraction each when they do not (switch-bench's passes: 2, 2 and 8 more wanted; each more
    run costs one repetition besides its own: 18 + 3 + 4.5 = 25.5 s, 26.8 with the margin)."""
    wanted, per_rep = [2, 2, 8], [6.0, 1.0, 0.5]
    check(B.extra_repetitions(27, wanted, per_rep) == wanted, "all fit")
    check(B.extra_repetitions(float("inf"), wanted, per_rep) == wanted, "no budget: all")
    half = B.extra_repetitions(13.4, wanted, per_rep)
    check(half == [0, 0, 3], "half the room: half of each pass's run, less its start", half)
    check(B.extra_repetitions(-3, wanted, per_rep) == [0, 0, 0], "no room: none")
    check(B.extra_repetitions(20, [0, 0, 8], per_rep) == [0, 0, 8],
          "a pass that wants none costs nothing")
    # A machine three times slower on the same budget: the minimum, and a little more.
    slow = B.extra_repetitions(20 - 3 * 3 * 7.5, wanted, [3 * c for c in per_rep])
    check(slow == [0, 0, 0], "a slow machine's minimum used the budget", slow)


def case_suite_budgets(a):
    """The budgets the experiments declare add up to what the presets promise: quick within 6
    minutes, full within 75, the report included."""
    import suite
    for preset, limit in (("quick", 360), ("full", 75 * 60)):
        total = sum(suite.budget(s, preset) for s in suite.STEPS)
        print(f"{preset}: {total} s of budgets")
        check(total <= limit, f"{preset}: the budgets fit {limit} s", total)


# What each step took in a quick run on the 2-core AMD EPYC VM (fe1a0f1, 2026-12-05): the
# fixed steps' work, and the budgeted steps' when their budgets were not binding; the steps
# the quick preset leaves out take nothing. A slower machine multiplies them all. icount's
# adds the 1.7 s its iopath block took there on 2026-12-06.
QUICK_COSTS = {"switch": 32.4, "icount": 11.8, "props": 1.5, "asm_count": 0.6,
               "switch_emulated": 2.1, "engines": 35.8, "scale": 36.2, "fiberio": 31.3,
               "timers": 10.1, "threads": 15.4, "handoff": 17.2, "fibermem": 6.9,
               "sweep": 82.0, "maxconns": 13.7, "report": 11.6}
# The same for the full preset, from the full run on the same machine (e361cd3, 2026-12-05).
# The budgeted steps' least is what they declare (least_s); of full's, only switch's is known,
# so the full simulation checks the plan at full's sizes, not what a starved step would take.
FULL_COSTS = {"switch": 295.6, "icount": 30.6, "props": 1.1, "asm_count": 0.4,
              "switch_emulated": 17.7, "engines": 220.5, "scale": 569.3, "fiberio": 860.9,
              "peers": 124.3, "timers": 337.9, "hooks": 56.5, "instruments": 124.6,
              "threads": 53.1, "handoff": 88.4, "fibermem": 5.3, "sweep": 900.3,
              "slow": 322.3, "maxconns": 96.3, "report": 14.3}
WAIT_S = 0.4       # the settle and calibration waits before a step
OVERSHOOT_S = 0.5  # a budgeted step ends up to this far past its budget (sweep: 82.4 of 82)


def given_text(given):
    """simulated_suite's budgeted steps, as its cases print them."""
    return ", ".join(f"{s} {g:.0f} s (wanted {w:.0f})" for s, (g, w) in given.items())


def simulated_suite(slow, total_s, preset="quick", not_run=(), shed=None):
    """The preset's suite on a fake clock with every cost `slow` times this machine's:
    (seconds in all, {budgeted step: (seconds given, seconds it wanted)}, [steps the plan left
    out]). A budgeted step takes what it wants, or its budget when that is less, but never
    less than its declared least (as slow as the rest); the steps in not_run say so and take
    nothing, and so do those the plan leaves out, in the order `shed` names them (None: the
    registry's)."""
    import experiments
    import suite
    costs = QUICK_COSTS if preset == "quick" else FULL_COSTS
    plan = B.SuitePlan(suite.plan_steps(suite.STEPS, preset), total_s,
                       experiments.SHED if shed is None else shed)
    clock, given, out = B.FakeClock(), {}, []
    for s in suite.STEPS:
        if plan.out(s, clock()):
            out.append(s)
            continue
        clock.advance(WAIT_S)
        limit, _ = plan.budget(s, clock())
        want = 0.0 if s in not_run else costs.get(s, 0.0) * slow
        took = want
        if suite.budgeted(s):
            given[s] = (limit, want)
            took = max(suite.least(s, preset) * slow, min(want, limit + OVERSHOOT_S))
        clock.advance(took)
        plan.finished(s, took, WAIT_S)
    return clock(), given, out


def case_suite_plan(a):
    """The quick suite within its total on this machine and on machines 1.5 and 2 times
    slower: the budgeted steps shrink in proportion, and where not even their least fits (twice
    as slow) the plan leaves out whole steps, in the registry's order (experiments.SHED); on
    this machine and at 1.5x it leaves none out, and on this machine every budgeted step gets
    all it wanted. Without the plan (every step its declared budget) 1.5x overruns; with the
    plan but nothing to leave out, 2x overruns. A left-out step's reason says what the rest
    would take."""
    import suite
    limit = suite.SUITE_BUDGET_S["quick"]
    for slow in (1, 1.5, 2):
        took, given, out = simulated_suite(slow, limit)
        print(f"{slow}x slower: {took:.0f} s of {limit}; budgeted steps given "
              + given_text(given) + (f"; left out: {', '.join(out)}" if out else ""))
        check(took <= limit + OVERSHOOT_S * len(given),
              f"{slow}x slower: the quick suite within {limit} s", took)
        check(bool(out) == (slow == 2), f"{slow}x slower: steps left out only where the least "
              "of the rest does not fit", out)
        if slow == 1:
            check(all(g >= w for g, w in given.values()),
                  "this machine: every budgeted step gets what it wanted", given)
    took, _, _ = simulated_suite(1.5, None)
    check(took > limit, f"without the plan a 1.5x slower machine overruns {limit} s", took)
    took, _, out = simulated_suite(2, limit, shed=())
    check(took > limit and not out, f"nothing to leave out: 2x slower overruns {limit} s", took)
    plan = B.SuitePlan([("a", 10, False, 10), ("b", 50, True, 20), ("c", 10, False, 10)], 65,
                       ("c", "b"))
    plan.finished("a", 20)  # twice as slow as declared: b and c would take 60 s at least
    check(plan.out("b", 20) is None, "b runs when leaving out c is enough", plan.left_out)
    check(plan.budget("b", 20) == (45.0, 50), "b gets what c leaves", plan.budget("b", 20))
    plan.finished("b", 45)
    why = plan.out("c", 65)
    check(why and "at least 20 s" in why and "2.00x" in why and "0 s were left" in why,
          "c is left out, and says what it would take", why)


# What ./run.sh took before the suite on the AMD EPYC VM: its setup check and an incremental
# build (22-25 s), and a fresh clone's first build (about 65 s: 49 s for build/, 13 s for
# build-aarch64's switch-bench, the configures). Quick makes no first cross build, so a fresh
# clone's quick run spends about 52 s before its suite, and its switch_emulated says not run;
# full still makes it.
BEFORE_BUILT_S, BEFORE_FRESH_S, BEFORE_FRESH_QUICK_S = 25.0, 65.0, 52.0


def case_run_total(a):
    """The quick suite's total is ./run.sh's 6 minutes less what the run spent before the
    suite: with an incremental build it is the SUITE_BUDGET_S a suite started by hand has; a
    fresh clone's first build comes out of it, and the whole run, build and suite, keeps to
    the 6 minutes on this machine and on ones 1.5 and 2 times slower (the suite plan shrinking
    the budgeted steps, and leaving whole steps out where their least does not fit, none on
    this machine; quick making no first cross build, which at 1.5x would leave out more). A run whose
    setup took so long that the suite would fall below SUITE_FLOOR_S gets the floor and says
    by how much it goes over. Full likewise within 75 minutes, on this machine and on one
    1.2 times slower, which overruns without the plan. A --started-at that is no time is
    refused with one line."""
    import suite
    run_s, t0 = suite.RUN_BUDGET_S["quick"], 1.7e9
    check(suite.suite_total("quick", None, t0) == (suite.SUITE_BUDGET_S["quick"], None, None),
          "started by hand: SUITE_BUDGET_S", suite.suite_total("quick", None, t0))
    total, before, over = suite.suite_total("quick", t0, t0 + BEFORE_BUILT_S)
    check(abs(total - suite.SUITE_BUDGET_S["quick"]) <= 1 and before == BEFORE_BUILT_S
          and over is None, "an incremental build: about SUITE_BUDGET_S", (total, before))
    total, before, over = suite.suite_total("quick", t0, t0 + BEFORE_FRESH_QUICK_S)
    check(total == run_s - suite.RUN_SPARE_S - BEFORE_FRESH_QUICK_S and over is None,
          "a fresh clone's build comes out of the suite's share", total)
    fresh = ("switch_emulated",)  # no cross build yet: not run
    left_out = {}
    for slow in (1, 1.5, 2):
        before = BEFORE_FRESH_QUICK_S * slow
        total, _, _ = suite.suite_total("quick", t0, t0 + before)
        took, given, left_out[slow] = simulated_suite(slow, total, not_run=fresh)
        print(f"fresh clone, {slow}x slower: {before:.0f} s before the suite, the suite "
              f"{took:.0f} s of {total:.0f}; budgeted steps given " + given_text(given)
              + f"; left out: {', '.join(left_out[slow]) or 'none'}")
        check(before + took <= run_s + OVERSHOOT_S * len(given),
              f"{slow}x slower: a fresh clone's whole run within {run_s} s", before + took)
    check(not left_out[1], "this machine: a fresh clone's run leaves no step out", left_out)
    # The first cross build in the quick run, as it was: 13 s more before the suite, paid for
    # with more of the suite's steps.
    before = BEFORE_FRESH_S * 1.5
    total, _, _ = suite.suite_total("quick", t0, t0 + before)
    took, _, out = simulated_suite(1.5, total)
    check(before + took > run_s or len(out) > len(left_out[1.5]),
          "1.5x slower, with quick making the first cross build: the fresh clone's run "
          f"overruns {run_s} s or leaves out more steps", (before + took, out))
    took, _, _ = simulated_suite(1, suite.SUITE_BUDGET_S["quick"], not_run=fresh)
    check(BEFORE_FRESH_QUICK_S + took > run_s, "with the total a suite started by hand has, "
          f"the fresh clone's run overruns {run_s} s", BEFORE_FRESH_QUICK_S + took)
    total, before, over = suite.suite_total("quick", t0, t0 + 200)
    check(total == suite.SUITE_FLOOR_S["quick"] and over and "over" in over,
          "setup took 200 s: the floor, and a note of the overrun", (total, over))
    full_s = suite.RUN_BUDGET_S["full"]
    total, before, over = suite.suite_total("full", t0, t0 + BEFORE_FRESH_S)
    check(total == full_s - suite.RUN_SPARE_S - BEFORE_FRESH_S and over is None,
          "full: a fresh clone's build comes out of the suite's share", total)
    for slow in (1, 1.2):
        took, given, _ = simulated_suite(slow, total, "full")
        print(f"full, {slow}x slower, fresh clone: the suite {took:.0f} s of {total:.0f}; "
              + given_text(given))
        check(BEFORE_FRESH_S + took <= full_s + OVERSHOOT_S * len(given),
              f"full, {slow}x slower: a fresh clone's whole run within {full_s} s",
              BEFORE_FRESH_S + took)
    took, _, _ = simulated_suite(1.2, None, "full")
    check(BEFORE_FRESH_S + took > full_s, "full without the plan: 1.2x slower overruns "
          f"{full_s} s", BEFORE_FRESH_S + took)
    for bad in ("soon", "1e30", ""):
        p = subprocess.run([sys.executable, str(HARNESS / "suite.py"), "quick",
                            "--started-at", bad], capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
              and "--started-at" in p.stderr, f"--started-at {bad!r}: exit 2, one line",
              f"{p.returncode}: {p.stderr}")


if __name__ == "__main__":
    sys.exit(run(globals(), __doc__, ("--work", {"required": True})))
