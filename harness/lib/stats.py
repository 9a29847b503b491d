"""stats.py - the statistics Switchyard's gates and verdicts rest on, in one place.

Samples are lists of floats from independent repetitions. Everything here is deterministic:
the bootstrap draws from a generator seeded by its caller (default 1), so the same samples
always give the same interval and the same gate decision.

    median(xs)                          the middle sample (mean of the two middle ones)
    quantile(xs, q)                     linear interpolation between order statistics
    robust_spread(xs)                   1.4826 * MAD / median: a relative standard deviation
                                        that one wild repetition does not inflate
    bootstrap_ci(xs, stat, level)       percentile bootstrap interval of stat(xs)
    bootstrap_cis(xs, stats)            the same for several statistics over one set of resamples
    ratio_ci(num, den, level)           interval of median(num) / median(den), both resampled
    mann_whitney_greater(a, b)          one-sided p-value of "a tends to be larger than b"
    mann_whitney_two_sided(a, b)        two-sided p-value of "a and b differ in location"
                                        (exact for small samples without ties)
    mann_whitney_greater_exact(a, b)    the one-sided p-value from U's exact distribution
                                        (up to EXACT_ONE_SIDED_MAX a side, no ties)
    theil_sen(xs, ys)                   the median of the pairwise slopes: a trend line's
                                        slope that one wild point does not move
    kendall_trend(xs, ys)               (S, two-sided p) of a monotonic relation of ys to xs
                                        (Kendall; ties in either corrected, normal approx.)
    mann_kendall(ys)                    the same against the positions: a trend in order
    stdev(xs)                           the sample standard deviation, in floats
    t_quantile(q, df)                   Student's t distribution's q quantile (q >= 0.5)

Only the standard library: the gate runs before anything else is installed.
"""
import functools
import math
import random

BOOTSTRAP_DRAWS = 2000


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    mid = n // 2
    return s[mid] if n % 2 else 0.5 * (s[mid - 1] + s[mid])


def quantile(xs, q):
    """The q-quantile (0 <= q <= 1), interpolating linearly between order statistics."""
    s = sorted(xs)
    if not s:
        raise ValueError("quantile of no samples")
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def stdev(xs):
    """The sample standard deviation (n - 1) in floats: statistics.stdev's exact fractions
    cost a millisecond a call, and compare learns a band for each of some 200 figures."""
    mean = math.fsum(xs) / len(xs)
    return math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


def _t_cdf_above_half(x, df, steps=2000):
    """P(0 < T <= x) for Student's t with df degrees of freedom (x >= 0), by Simpson's rule over
    its density (within 1e-6 of the exact value for df >= 2 and x up to 50)."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    h = x / steps
    total = 0.0
    for i in range(steps + 1):
        w = 1 if i in (0, steps) else 4 if i % 2 else 2
        total += w * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2)
    return c * total * h / 3


@functools.lru_cache(maxsize=None)
def t_quantile(q, df):
    """x with P(T <= x) = q for Student's t with df (>= 2) degrees of freedom, 0.5 <= q < 1:
    what a prediction from df + 1 runs scales their standard deviation by."""
    if not 0.5 <= q < 1 or df < 2:
        raise ValueError(f"t_quantile needs 0.5 <= q < 1 and df >= 2 (got {q}, {df})")
    lo, hi = 0.0, 1.0
    while 0.5 + _t_cdf_above_half(hi, df) < q:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 0.5 + _t_cdf_above_half(mid, df) < q else (lo, mid)
    return (lo + hi) / 2


def robust_spread(xs):
    """Relative spread: the MAD scaled to a normal sigma, over the median (0 for < 2 samples)."""
    if len(xs) < 2:
        return 0.0
    m = median(xs)
    if m == 0:
        return 0.0
    return 1.4826 * median([abs(x - m) for x in xs]) / abs(m)


def resample(xs, rng):
    """len(xs) values drawn from xs with replacement: the indices rng.randrange(len(xs)) would
    give, one after another (CPython draws them by rejection on getrandbits of the length's
    bit count), so every interval stays what it was, without randrange's two Python calls per
    index, which would be most of an interval's time (2,000 resamples each)."""
    n = len(xs)
    bits, getrandbits = n.bit_length(), rng.getrandbits
    out = []
    for _ in range(n):
        r = getrandbits(bits)
        while r >= n:
            r = getrandbits(bits)
        out.append(xs[r])
    return out


def bootstrap_ci(xs, stat=median, level=0.95, seed=1, draws=BOOTSTRAP_DRAWS):
    """(low, high): the percentile bootstrap interval of stat over resamples of xs."""
    return bootstrap_cis(xs, lambda s: (stat(s),), level, seed, draws)[0]


def bootstrap_cis(xs, stats, level=0.95, seed=1, draws=BOOTSTRAP_DRAWS):
    """[(low, high)] per value of the tuple stats(resample) returns, every one over the same
    resamples (one draw of them for several statistics of one sample; each interval is what
    bootstrap_ci of that statistic alone gives)."""
    if not xs:
        raise ValueError("interval of no samples")
    rng = random.Random(seed)
    columns = zip(*(stats(resample(xs, rng)) for _ in range(draws)))
    tail = (1.0 - level) / 2.0
    return [(quantile(v, tail), quantile(v, 1.0 - tail)) for v in map(sorted, columns)]


def ratio_ci(num, den, level=0.95, seed=1, draws=BOOTSTRAP_DRAWS):
    """(low, high) of median(num) / median(den), resampling num and den independently."""
    if not num or not den:
        raise ValueError("ratio interval of no samples")
    rng = random.Random(seed)
    values = []
    for _ in range(draws):
        a = median(resample(num, rng))
        b = median(resample(den, rng))
        values.append(a / b)
    values.sort()
    tail = (1.0 - level) / 2.0
    return quantile(values, tail), quantile(values, 1.0 - tail)


def mann_whitney_greater(a, b):
    """One-sided p-value of the Mann-Whitney U test that a's values tend to exceed b's.

    Normal approximation with the tie correction and a continuity correction; adequate from
    about 5 samples per side, which is what the callers use. Returns 1.0 when either side is
    empty or every value is tied."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        rank = 0.5 * (i + j) + 1.0
        for k in range(i, j + 1):
            ranks[k] = rank
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u1 = r1 - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (u1 - n1 * n2 / 2.0 - 0.5) / math.sqrt(var)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


# With at most this many samples on one side, and no ties, the two-sided test uses the exact
# distribution of U (as scipy.stats.mannwhitneyu's method="auto" does): the normal
# approximation is poor for the 3-5 repetitions a run keeps. EXACT_MAX_N bounds the work.
EXACT_SMALL, EXACT_MAX_N = 8, 200


@functools.lru_cache(maxsize=None)
def _u_counts(n1, n2):
    """How many orderings of n1 + n2 distinct values give each U (pairs where the first
    sample's value is the larger), U = 0 ... n1 * n2."""
    # table[i][j]: the counts for i and j values. The largest value belongs to the first
    # sample (it beats all j values of the second) or to the second (it beats none).
    table = [[[1] for _ in range(n2 + 1)] for _ in range(n1 + 1)]
    for i in range(1, n1 + 1):
        for j in range(1, n2 + 1):
            out = [0] * (i * j + 1)
            for u, c in enumerate(table[i - 1][j]):
                out[u + j] += c
            for u, c in enumerate(table[i][j - 1]):
                out[u] += c
            table[i][j] = out
    return tuple(table[n1][n2])


# Up to this many samples a side the one-sided exact test tabulates U's distribution (a few
# hundred thousand additions at 30 against 30, once per pair of sizes).
EXACT_ONE_SIDED_MAX = 30


def mann_whitney_greater_exact(a, b):
    """One-sided p-value of "a's values tend to exceed b's" from the exact distribution of U
    when no value is tied and neither side has more than EXACT_ONE_SIDED_MAX; otherwise
    mann_whitney_greater's normal approximation. Where a p-value is held to a small level
    (a level divided among many rows) the approximation will not do: at 10 against 10 its
    tail is off by a factor of 2 or more beyond U = 90."""
    n1, n2 = len(a), len(b)
    tied = len(set(a) | set(b)) < n1 + n2
    if n1 == 0 or n2 == 0 or tied or max(n1, n2) > EXACT_ONE_SIDED_MAX:
        return mann_whitney_greater(a, b)
    return _exact_upper_tail(n1, n2, sum(1 for x in a for y in b if x > y))


def _exact_upper_tail(n1, n2, u):
    """P(U >= u) for n1 and n2 distinct values, from U's exact distribution."""
    counts = _u_counts(n1, n2)
    return sum(counts[u:]) / float(sum(counts))


def mann_whitney_two_sided(a, b):
    """Two-sided p-value of the Mann-Whitney U test (do a and b differ in location?).

    Exact when one sample has at most EXACT_SMALL values and no value is tied; otherwise the
    normal approximation with the tie and continuity corrections. 1.0 when either side is
    empty or every value is tied. With 3 samples a side the smallest p it can give is 0.1: a
    difference then never reaches the usual 0.05, which is what 3 samples can tell."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    u1 = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    tied = len(set(a) | set(b)) < n1 + n2
    if min(n1, n2) <= EXACT_SMALL and max(n1, n2) <= EXACT_MAX_N and not tied:
        u = int(round(max(u1, n1 * n2 - u1)))
        return min(1.0, 2.0 * _exact_upper_tail(n1, n2, u))
    pooled = sorted(list(a) + list(b))
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1] == pooled[i]:
            j += 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u1 - n1 * n2 / 2.0) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


def theil_sen(xs, ys):
    """The Theil-Sen slope: the median of (y_j - y_i) / (x_j - x_i) over every pair with
    x_i != x_j (pairs at the same x, e.g. repetitions of one level, carry no slope)."""
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i]) for i in range(len(xs))
              for j in range(i + 1, len(xs)) if xs[j] != xs[i]]
    if not slopes:
        raise ValueError("slope of points at one x")
    return median(slopes)


def kendall_s(xs, ys):
    """(S, var): Kendall's S of ys against xs (pairs ordered the same way minus pairs ordered
    the opposite way; pairs tied in x or y count neither) and its variance under "no monotonic
    relation", corrected for ties in both (as scipy.stats.kendalltau's asymptotic method).
    Repetitions at the same x are ties in x: they add samples, not order."""
    n = len(xs)
    s = sum(((xs[j] > xs[i]) - (xs[j] < xs[i])) * ((ys[j] > ys[i]) - (ys[j] < ys[i]))
            for i in range(n) for j in range(i + 1, n))

    def groups(vs):
        counts = {}
        for v in vs:
            counts[v] = counts.get(v, 0) + 1
        return [t for t in counts.values() if t > 1]
    tx, ty = groups(xs), groups(ys)
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in tx)
           - sum(u * (u - 1) * (2 * u + 5) for u in ty)) / 18.0
    if n > 2:
        var += (sum(t * (t - 1) * (t - 2) for t in tx) * sum(u * (u - 1) * (u - 2) for u in ty)
                / (9.0 * n * (n - 1) * (n - 2)))
    if n > 1:
        var += sum(t * (t - 1) for t in tx) * sum(u * (u - 1) for u in ty) / (2.0 * n * (n - 1))
    return s, var


def kendall_p(s, var):
    """The two-sided p-value of S with variance var: the normal approximation with a
    continuity correction."""
    if var <= 0:
        return 1.0
    z = max(0.0, abs(s) - 1) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


def kendall_trend(xs, ys):
    """(S, p): kendall_s of ys against xs and the two-sided p-value of "no monotonic
    relation"."""
    s, var = kendall_s(xs, ys)
    return s, kendall_p(s, var)


def kendall_blocked(parts):
    """(S, p) of Kendall's test stratified by block, from each block's kendall_s: the S and
    the variances summed (as the seasonal Kendall test sums them over seasons), so that what
    moves a whole block (the machine's state while it ran) is not read as order, only what
    moves within blocks."""
    s, var = sum(p[0] for p in parts), sum(p[1] for p in parts)
    return s, kendall_p(s, var)


def mann_kendall(ys):
    """(S, p) of a monotonic trend in ys taken in their order: kendall_trend against the
    positions. Few values can never give a small p: with 5 values and no ties the smallest
    is about 0.027."""
    return kendall_trend(list(range(len(ys))), list(ys))
