"""Time budgets: a step is given seconds, not sizes. It learns what its repetitions cost as it
goes, predicts the rest from that, gives the points its verdicts decide on their share first
and the others what is left, and records what does not fit as `not run: over budget
(predicted N s)` instead of overrunning.

The clock is a parameter (time.monotonic by default), so that a whole step can be run on a
FakeClock with made-up costs: the tests simulate a machine whose fork is four times slower or
whose rounds are twice as noisy without waiting for one.

    Budget(seconds, clock)          what is spent and left; fits(predicted, reserve)
    RoundCosts(fixed, per_unit)     one repetition's cost as fixed + per_unit x units per key
                                    (a model's rounds against its connections), learned
    plan_rounds(...)                how many repetitions a point gets, or why none
    RoundGate(budget, share)        whether a rounds loop may start another round: a step of
                                    interleaved rounds runs at least MIN_ROUNDS, then more up to
                                    the preset's while they end by its part's share
    extra_repetitions(...)          the repetitions past the minimum several passes of one
                                    program get, in proportion, when not all fit
    SuitePlan(steps, total_s, shed) the budgets of a suite's steps within the suite's total:
                                    the budgeted ones shrink when the fixed ones run slow, and
                                    whole steps are left out when not even their least fits
"""
import statistics
import time

# An interval of a median needs at least three repetitions (plots/pointdata's MIN_OK_ROUNDS
# reads no fewer): a point that cannot have three is not started.
MIN_ROUNDS = 3
OVER_BUDGET = "over budget"
# A point takes more than MIN_ROUNDS only if the points still to come would keep this many
# times their predicted minimum.
RESERVE_MARGIN = 1.25
# Another round starts only if this many times the median round so far still ends in time:
# a round's cost varies by a few percent between rounds of one step (2.84-2.89 s for threads,
# 6.56-6.57 s for engines after a first round of 12 s that also counts), not by a quarter.
ROUND_MARGIN = 1.05


class FakeClock:
    """A clock the caller moves: clock() reads it, advance(s) moves it."""

    def __init__(self, t=0.0):
        self.t = float(t)

    def __call__(self):
        return self.t

    def advance(self, seconds):
        self.t += seconds


class Budget:
    """seconds from the moment it is made on `clock` (None: unlimited)."""

    def __init__(self, seconds, clock=time.monotonic):
        if seconds is not None and seconds <= 0:
            raise ValueError(f"a budget must be positive, got {seconds}")
        self.seconds, self.clock, self.start = seconds, clock, clock()

    def spent(self):
        return self.clock() - self.start

    def left(self):
        return float("inf") if self.seconds is None else self.seconds - self.spent()

    def fits(self, predicted, reserve=0.0):
        """Whether `predicted` seconds of work, with `reserve` kept for what must come after,
        ends within the budget."""
        return predicted + reserve <= self.left()

    def over(self, predicted):
        """The reason recorded for work left out: its prediction and what was left."""
        return (f"{OVER_BUDGET} (predicted {predicted:.0f} s; {max(0.0, self.left()):.0f} s of "
                f"the step's {self.seconds:.0f} s left)")

    def record(self):
        return {"budget_s": self.seconds, "spent_s": round(self.spent(), 1)}


class RoundCosts:
    """The cost of one repetition of a point, per key, as fixed + per_unit x units: a round of a
    sweep point is its ramp-up (one connection after another: per_unit), its warm-up and
    window and the load generator's start and exit (fixed). Learned from the repetitions
    measured so far. fixed: the key's cheapest round at a level too small for the per-unit
    part to show (below SLOPE_UNITS), else any key's (the warm-up, window and start are the
    same for every model), else the prior. per_unit: from the key's rounds at its largest
    level, once that is at least SLOPE_UNITS (the level nearest the ones still to come, where
    a per-connection cost such as a fork shows); below that a level's per-unit share is lost
    in the fixed part's noise, and the prior stands. prior(key) -> (fixed, per_unit)."""

    SLOPE_UNITS = 100

    def __init__(self, prior):
        self.prior = prior
        self.seen = {}  # key -> [(units, seconds)]

    def observe(self, key, units, seconds):
        self.seen.setdefault(key, []).append((units, seconds))

    def _small(self, obs):
        return [s for u, s in obs if u < self.SLOPE_UNITS]

    def model(self, key):
        """(fixed, per_unit, source): source says what each part came from."""
        p_fixed, p_unit = self.prior(key)
        obs = self.seen.get(key, [])
        small = self._small(obs) or [s for o in self.seen.values() for s in self._small(o)]
        fixed = min(small) if small else p_fixed
        big = [(u, s) for u, s in obs if u >= self.SLOPE_UNITS]
        if not big:
            return fixed, p_unit, ("measured" if small else "prior") + " fixed, prior per unit"
        u_max = max(u for u, _ in big)
        s_at = statistics.median(s for u, s in big if u == u_max)
        return fixed, max(0.0, (s_at - fixed) / u_max), f"measured up to {u_max} units"

    def predict(self, key, units):
        fixed, per, _ = self.model(key)
        return fixed + per * units


class SuitePlan:
    """The budgets of a suite's steps when the suite as a whole has `total_s` seconds (None:
    every step its declared budget). A budgeted step sizes itself to its budget; a fixed one
    (counts, charts, a grid of sizes) takes what its work takes on this machine, which its
    declared seconds only predict. Before each budgeted step, what is left of the total, less
    the fixed steps still to come at the pace the fixed steps so far kept (pace()) and the
    waits between steps at their mean so far, is shared among the budgeted steps still to
    come in proportion to their declared budgets, each at most its own (a fast machine's
    savings are not spent on longer steps).

    A budgeted step still takes its least (its minimum rounds) however little it is given, so
    on a machine slow enough the steps still to come overrun the total even at their least.
    Before each step the plan predicts that least, at the same pace, and leaves steps out, in
    the order `shed` names them, until the rest fits: a step left out is not run, and says
    why (out()). steps: [(name, declared seconds, budgeted, least seconds)] in the order they
    run; a fixed step's least is its declared seconds."""

    MIN_S = 1.0  # a budget is positive (Budget); a step starved to it runs its minimum
    PACE_FROM_S = 5.0

    def __init__(self, steps, total_s, shed=()):
        self.steps, self.total_s, self.shed = list(steps), total_s, tuple(shed)
        self.done = {}  # name -> (seconds it took, seconds waited before it)
        self.left_out = {}  # name -> why it was not run

    def finished(self, name, took_s, waited_s=0.0):
        self.done[name] = (took_s, waited_s)

    def pace(self):
        """How much slower than declared the fixed steps run here: the largest ratio of
        seconds taken to declared among those so far that declared at least PACE_FROM_S (1
        before any did). The largest, because the declarations are not all as tight (on the
        AMD EPYC VM timers took 10.1 s of 11 and maxconns 13.7 of 14), and a pace read off a
        loose one underpredicts a tight one; a two-second step's start-up blurs its ratio."""
        ratios = [self.done[n][0] / d for n, d, b, _ in self.steps
                  if n in self.done and not b and d >= self.PACE_FROM_S]
        return max(ratios, default=1.0)

    def _waits(self):
        waits = [w for _, w in self.done.values()]
        return sum(waits) / len(waits) if waits else 0.0

    def _to_come(self, without=()):
        return [st for st in self.steps
                if st[0] not in self.done and st[0] not in self.left_out
                and st[0] not in without]

    def least(self, elapsed_s, without=()):
        """The seconds the run takes in all when the steps still to come (less `without`)
        each take their least at this machine's pace, the waits between them included."""
        to_come = self._to_come(without)
        return elapsed_s + self.pace() * sum(least for _, _, _, least in to_come) + \
            self._waits() * len(to_come)

    def shed_now(self, elapsed_s):
        """The steps still to come that the plan leaves out, as things stand: the first of
        `shed` until the least of the rest fits the total (none without a total)."""
        out = []
        if self.total_s is None:
            return out
        to_come = {st[0] for st in self._to_come()}
        for name in self.shed:
            if self.least(elapsed_s, out) <= self.total_s:
                break
            if name in to_come:
                out.append(name)
        return out

    def out(self, name, elapsed_s):
        """Why step `name`, about to start, is left out (a reason for "not run: ..."), or
        None when it runs. A step left out stays out; the others are decided again at their
        turn, with the pace known by then."""
        if name not in self.shed_now(elapsed_s):
            return None
        why = (f"over the run's total (the steps still to come would take at least "
               f"{self.least(elapsed_s) - elapsed_s:.0f} s at this machine's pace, "
               f"{self.pace():.2f}x the declared; {self.total_s - elapsed_s:.0f} s were left)")
        self.left_out[name] = why
        return why

    def share(self, elapsed_s):
        """The share of its declared budget each budgeted step still to come may take."""
        left = [(d, b) for _, d, b, _ in self._to_come(self.shed_now(elapsed_s))]
        budgeted = sum(d for d, b in left if b)
        if self.total_s is None or not budgeted:
            return 1.0
        fixed = self.pace() * sum(d for d, b in left if not b)
        waits_s = self._waits() * len(left)
        return max(0.0, min(1.0, (self.total_s - elapsed_s - fixed - waits_s) / budgeted))

    def budget(self, name, elapsed_s):
        """(seconds step `name` may take now, its declared seconds)."""
        declared, budgeted = next((d, b) for n, d, b, _ in self.steps if n == name)
        if not budgeted:
            return declared, declared
        return max(self.MIN_S, round(declared * self.share(elapsed_s), 1)), declared

    def left(self, elapsed_s):
        """The seconds the steps still to come are predicted to take."""
        share, pace = self.share(elapsed_s), self.pace()
        return sum(d * (share if b else pace)
                   for _, d, b, _ in self._to_come(self.shed_now(elapsed_s)))


def dearest_out(left, costs):
    """The indexes of `costs` to leave out, dearest first, until the rest fit `left`."""
    total, out = sum(costs), set()
    for i in sorted(range(len(costs)), key=lambda i: -costs[i]):
        if total <= left:
            break
        out.add(i)
        total -= costs[i]
    return out


def plan_rounds(budget, wanted, round_s, setup_s=0.0, reserve=0.0, minimum=MIN_ROUNDS):
    """(rounds, reason) for a point that wants `wanted` repetitions of `round_s` seconds each
    after `setup_s`, with `reserve` seconds kept for the points still to come: as many as fit,
    up to wanted; (0, reason) when not even `minimum` fit."""
    need = setup_s + minimum * round_s
    if not budget.fits(need, reserve):
        return 0, budget.over(need)
    if budget.seconds is None or round_s <= 0:
        return wanted, None
    fit = int((budget.left() - reserve - setup_s) // round_s)
    return max(minimum, min(wanted, fit)), None


class Scheduler:
    """The budget of a step whose points are each a few repetitions of one measurement (a sweep
    point: echo-load runs against one server). For every point it plans the repetitions that
    fit (plan), lets a started point stop early when its rounds turn out dearer than predicted
    (gate), and learns from what each round and point took (done). `rest` is always the
    (key, units) of the points still to come that a verdict needs: their minimum is kept in
    reserve, so an early point cannot spend what a later deciding point needs."""

    def __init__(self, budget, costs, wanted, setup_prior, minimum=MIN_ROUNDS):
        self.budget, self.costs, self.wanted = budget, costs, wanted
        self.setup_prior, self.minimum, self.setups = setup_prior, minimum, []
        self.too_dear = set()  # points once left out of the reserve: they hold no rounds back

    def setup_s(self):
        return statistics.median(self.setups) if self.setups else self.setup_prior

    def min_cost(self, key, units):
        return self.setup_s() + self.minimum * self.costs.predict(key, units)

    def reserve(self, rest):
        return sum(self.min_cost(k, u) for k, u in rest)

    def kept(self, key, units, rest):
        """The points of this one and `rest` that the budget can give their minimum: all of
        them when their minimums fit what is left, else without the dearest first (a point
        at ten thousand processes costs what a dozen small ones do, and tells one verdict
        less than they do). Returns (whether this point is kept, the kept part of rest)."""
        dropped = dearest_out(self.budget.left(), [self.min_cost(k, u)
                                                   for k, u in [(key, units)] + rest])
        self.too_dear.update(p for i, p in enumerate(rest, 1) if i in dropped)
        return 0 not in dropped, [p for i, p in enumerate(rest, 1) if i not in dropped]

    def plan(self, key, units, rest):
        """(rounds, reason, predicted seconds of those rounds): rounds 0 with the reason when
        not even the minimum fits beside the reserve of the points still to come that fit."""
        round_s = self.costs.predict(key, units)
        this, kept = self.kept(key, units, rest)
        if not this:
            need = self.setup_s() + self.minimum * round_s
            return 0, self.budget.over(need), round(need, 1)
        rounds, why = plan_rounds(self.budget, self.wanted, round_s, self.setup_s(),
                                  self.reserve(kept), self.minimum)
        if rounds > self.minimum:
            # Rounds beyond the minimum only while every later point keeps its own (a point
            # once found too dear for the budget holds none back: the cheaper ones come
            # first), and out of what is left once their reserve is grown by the margin
            # predictions miss by.
            extra = 0 if any(p not in kept and p not in self.too_dear
                             for p in rest) else plan_rounds(
                self.budget, self.wanted, round_s, self.setup_s(),
                self.reserve(kept) * RESERVE_MARGIN, self.minimum)[0]
            rounds = max(self.minimum, extra)
        n = rounds or self.minimum
        return rounds, why, round(self.setup_s() + n * round_s, 1)

    def predict(self, key, units):
        """Seconds a point would take at the rounds it wants."""
        return self.setup_s() + self.wanted * self.costs.predict(key, units)

    def gate(self, key, units, rest):
        """another(done, last_round_s) -> None (go on) or the reason to stop: before the
        minimum a round needs only the budget, after it also the reserve."""
        def another(done, last_s):
            self.costs.observe(key, units, last_s)
            if done < self.minimum:
                need, reserve = (self.minimum - done) * last_s, 0.0
            else:
                need = last_s
                reserve = self.reserve(self.kept(key, units, rest)[1])
            return None if self.budget.fits(need, reserve) else self.budget.over(need)
        return another

    def done(self, key, units, round_walls, point_s):
        """Learns from a finished point: its last round (the gate saw the others) and the part
        of it that was not a round (server start, perf, memory baselines, stop)."""
        if round_walls:
            self.costs.observe(key, units, round_walls[-1])
        self.setups.append(max(0.0, point_s - sum(round_walls)))


class RoundGate:
    """Whether a loop of interleaved rounds may start round `rnd` (called before each one,
    in order): rounds below `minimum` always start; later ones while the median round so far,
    ROUND_MARGIN times, still ends within `share` of the budget (counted from the budget's
    start, so the step's setup before the loop is paid for). A step of several parts gives
    each the cumulative share it should end by (0.6 then 1.0): a slower machine slows every
    part alike, so each keeps its proportion, and what one part leaves unused the next may
    spend. Unlimited budget: every round starts."""

    def __init__(self, budget, share=1.0, minimum=MIN_ROUNDS):
        if not 0 < share <= 1:
            raise ValueError(f"a share of a budget is in (0, 1], got {share}")
        self.budget, self.share, self.minimum = budget, share, minimum
        self.starts, self.stopped = [], None

    def __call__(self, rnd):
        now = self.budget.spent()
        self.starts.append(now)
        if rnd < self.minimum or self.budget.seconds is None:
            return True
        walls = [b - a for a, b in zip(self.starts, self.starts[1:])]
        predicted = ROUND_MARGIN * statistics.median(walls)
        until = self.share * self.budget.seconds
        if now + predicted <= until:
            return True
        self.stopped = {"rounds": rnd, "reason": (
            f"{OVER_BUDGET} (round {rnd + 1} predicted {predicted:.1f} s; "
            f"{max(0.0, until - now):.1f} s of this part's {until:.0f} s left)")}
        return False

    def record(self):
        """What the gate saw: each started round's wall time and, when it stopped the loop
        early, after how many rounds and why."""
        walls = [b - a for a, b in zip(self.starts, self.starts[1:])]
        return {"share": self.share, "round_s": [round(w, 2) for w in walls],
                "stopped": self.stopped}


def extra_repetitions(left, wanted, per_rep):
    """How many repetitions beyond the minimum each of several passes gets, when every pass
    has run its minimum and measured what one repetition cost (per_rep, s) and wants
    `wanted` more, each more run of a pass costing one repetition besides its own (the
    program's start and its estimate of the iterations to time): all of them when they fit
    `left` seconds (ROUND_MARGIN times their predicted cost), else each the same fraction of
    its wish, rounded down, so that no pass takes the room of another."""
    cost = ROUND_MARGIN * sum((w + 1) * c for w, c in zip(wanted, per_rep) if w)
    if left == float("inf") or cost <= left:
        return list(wanted)
    share = max(0.0, left) / cost
    return [max(0, int((w + 1) * share) - 1) for w in wanted]
