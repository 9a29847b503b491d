/* test-timer.c - the timer structures' conformance: what every structure guarantees and what each
 * declares (timer.h, tm_props), on a fake clock, then through the fiber runtime on the real one.
 */
#define _GNU_SOURCE
#include "asserts.h"
#include "io.h"
#include "test-timer-cases.h"
#include "timer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * usage: test-timer CASE TIMERS [ENGINE star|ring [guarded|copy[:K]]]. The structure cases
 * (no property in test-timer-cases.h) drive one instance directly with a clock the test moves:
 * exact bounds, no sleeping, no flakiness. The runtime cases go through fb_sleep,
 * fb_read_timeout and the poller on the real clock, on the engine and scheduler given; there
 * the lateness checks are loose (a shared machine can be late by itself), never-early is not.
 */

#define MS  ((int64_t)1000000)
#define SEC ((int64_t)1000000000)

static const tm_ops *ops;
static void *st;

/* A node as an owner embeds it: the timer first, the owner's fields after. */
typedef struct tnode {
    tm_node t;
    int id;
    int64_t armed_at;
    int fired;
} tnode;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t rnd_below(int64_t n)
{
    return (int64_t)(rnd() % (uint64_t)n);
}

/* A fake clock that starts off the 1 ms grid, so rounding to ticks is exercised. */
static const int64_t T0 = 1000 * SEC + 123457;

/* The declared lateness bound for a timer of `timeout` ns (timer.h). */
static int64_t bound(int64_t timeout)
{
    if (timeout < 0) timeout = 0;
    return ops->props.granularity_ns + (int64_t)(ops->props.max_rel_error * (double)timeout) + 1;
}

static void new_instance(int64_t now)
{
    st = ops->init(now);
    ASSERT(st != NULL);
    ASSERT_EQ(ops->count(st), 0);
    ASSERT_EQ(ops->earliest(st), TM_NEVER);
}

static void arm(tnode *x, int64_t deadline, int64_t now)
{
    ASSERT_FALSE(tm_armed(&x->t));
    x->armed_at = now;
    ASSERT_EQ(ops->arm(st, &x->t, deadline, now), 0);
    ASSERT_TRUE(tm_armed(&x->t));
    ASSERT_EQ(x->t.deadline, deadline);
}

/* A popped node: its time had come (never early), within the declared bound of lateness
 * (`slack`: how coarsely the test moved its clock), once per arming. */
static tnode *check_popped(tm_node *t, int64_t now, int64_t slack)
{
    tnode *x = (tnode *)t;
    ASSERT_FALSE(tm_armed(t));
    ASSERT_MSG(t->deadline <= now, "node %d popped %jd ns early", x->id,
               (intmax_t)(t->deadline - now));
    /* Lateness counts from the deadline, or from the arming when that came after it. */
    int64_t from = t->deadline > x->armed_at ? t->deadline : x->armed_at;
    int64_t late = now - from, allowed = bound(t->deadline - x->armed_at) + slack;
    ASSERT_MSG(late <= allowed, "node %d popped %jd ns late, %jd allowed (timeout %jd ns)", x->id,
               (intmax_t)late, (intmax_t)allowed, (intmax_t)(t->deadline - x->armed_at));
    x->fired++;
    return x;
}

static tnode *nodes(size_t n)
{
    tnode *v = calloc(n, sizeof *v);
    ASSERT(v != NULL);
    for (size_t i = 0; i < n; i++) {
        tm_node_init(&v[i].t, i % 3 ? TM_WAIT : TM_SLEEP); /* both kinds: rbtree's two trees */
        v[i].id = (int)i;
    }
    return v;
}

/*
 * Move the clock from `now` to `until` in steps of `step`, popping everything due at each step
 * and checking it. earliest() must never promise less than what pops: nothing pops before it,
 * and (when `strict`) something does pop once it has come.
 */
static int64_t run_clock(int64_t now, int64_t until, int64_t step, bool strict, size_t *popped)
{
    int64_t e = ops->earliest(st);
    for (; now <= until; now += step) {
        bool any = false;
        tm_node *t;
        while ((t = ops->pop(st, now))) {
            ASSERT_MSG(now >= e, "popped at %jd, before earliest() %jd", (intmax_t)now,
                       (intmax_t)e);
            check_popped(t, now, step);
            any = true;
            (*popped)++;
        }
        if (strict && e <= now && e != TM_NEVER)
            ASSERT_MSG(any, "earliest() said %jd, nothing popped at %jd", (intmax_t)e,
                       (intmax_t)now);
        int64_t e2 = ops->earliest(st);
        ASSERT_MSG(e2 == TM_NEVER || e2 > now,
                   "earliest() %jd is not after now %jd with nothing "
                   "left due",
                   (intmax_t)e2, (intmax_t)now);
        e = e2;
    }
    return now;
}

/* ---- bounds: none early, none later than declared, earliest() consistent ------------------- */

static void t_bounds(void)
{
    enum { N = 20000 };
    tnode *v = nodes(N);
    int64_t now = T0, step = 50000; /* 50 us */
    new_instance(now);
    size_t popped = 0, armed = 0;
    /* Arms spread over the first second, each for 0 to 5 s, with some on the tick grid, some
     * exactly now and some already past. */
    while (armed < N) {
        int burst = 1 + (int)rnd_below(20);
        for (int k = 0; k < burst && armed < N; k++) {
            int64_t d;
            switch (rnd_below(8)) {
            case 0:
                d = now;
                break;
            case 1:
                d = now - rnd_below(MS);
                break;
            case 2:
                d = (now / MS + 1 + rnd_below(5000)) * MS;
                break;
            default:
                d = now + rnd_below(5 * SEC);
                break;
            }
            arm(&v[armed++], d, now);
        }
        now = run_clock(now, now + rnd_below(100) * step, step, true, &popped);
    }
    ASSERT_EQ(ops->count(st), N - popped);
    now = run_clock(now, now + 6 * SEC, step, true, &popped);
    ASSERT_EQ(popped, N);
    ASSERT_EQ(ops->count(st), 0);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(v[i].fired, 1);
    ops->free(st);
    free(v);
}

/* ---- order: exact structures pop by (deadline, arming); rounded ones never overtake by more
 * than the bound of the one overtaken --------------------------------------------------------- */

static void t_order(void)
{
    enum { N = 50000 };
    tnode *v = nodes(N);
    int64_t now = T0;
    new_instance(now);
    for (int i = 0; i < N; i++) /* few distinct values: many ties */
        arm(&v[i], now + rnd_below(2000) * 997 * 1000, now);
    /* All at once, at a time when every one is due, so only the structure decides the order. */
    int64_t later = now + 10 * SEC;
    tnode *prev = NULL;
    int64_t max_deadline = INT64_MIN;
    for (int k = 0; k < N; k++) {
        tm_node *t = ops->pop(st, later);
        ASSERT(t != NULL);
        tnode *x = check_popped(t, later, 10 * SEC);
        if (ops->props.exact && prev) {
            ASSERT_LE(prev->t.deadline, x->t.deadline);
            if (prev->t.deadline == x->t.deadline) ASSERT_LT(prev->id, x->id);
        }
        ASSERT_MSG(max_deadline <= x->t.deadline + bound(x->t.deadline - x->armed_at),
                   "node %d (deadline %jd) came after one due at %jd", x->id,
                   (intmax_t)x->t.deadline, (intmax_t)max_deadline);
        if (x->t.deadline > max_deadline) max_deadline = x->t.deadline;
        prev = x;
    }
    ASSERT_PTR_EQ(ops->pop(st, later), NULL);
    ops->free(st);
    free(v);
}

/* ---- equal deadlines: first armed first where FIFO is declared ------------------------------ */

static void t_equal(void)
{
    enum { N = 300 };
    tnode *v = nodes(N);
    int64_t now = T0, step = 100000;
    new_instance(now);
    /* Three groups of one deadline each, all after the arming: armed at one instant, and two
     * armed over 2.5 s as their deadline nears (a hierarchical wheel puts them in different
     * levels), one off the tick grid and one on it. */
    int64_t d1 = now + 2600 * MS, d2 = now + 3 * SEC + 777, d3 = (now / MS + 2900) * MS;
    int n = 0;
    for (int i = 0; i < 100; i++)
        arm(&v[n++], d1, now);
    size_t popped = 0;
    for (int i = 0; i < 100; i++) {
        arm(&v[n++], d2, now);
        arm(&v[n++], d3, now);
        now = run_clock(now, now + 25 * MS, step, true, &popped);
    }
    (void)n;
    /* Collect the pop order per group. */
    int order[3][N], count[3] = {0, 0, 0};
    for (; ops->count(st); now += step) {
        tm_node *t;
        while ((t = ops->pop(st, now))) {
            tnode *x = check_popped(t, now, step);
            int g = x->t.deadline == d1 ? 0 : x->t.deadline == d2 ? 1 : 2;
            order[g][count[g]++] = x->id;
        }
        ASSERT_LT(now, T0 + 10 * SEC);
    }
    ASSERT_EQ(popped, 0); /* run_clock steps stopped before any deadline */
    for (int g = 0; g < 3; g++) {
        ASSERT_EQ(count[g], 100);
        int inversions = 0;
        for (int k = 1; k < count[g]; k++)
            inversions += order[g][k - 1] > order[g][k];
        printf("group %d: %d of 99 neighbours out of arming order\n", g, inversions);
        if (ops->props.fifo) ASSERT_EQ(inversions, 0);
    }
    ops->free(st);
    free(v);
}

/* ---- cancel in every state: pending, due in a pop pass (firing), popped (fired), never armed,
 * and a random mix that leaves the structure intact ------------------------------------------ */

static void t_cancel(void)
{
    int64_t now = T0;
    new_instance(now);
    tnode *v = nodes(8);
    /* Never armed, then pending. */
    ops->cancel(st, &v[0].t);
    ASSERT_EQ(ops->count(st), 0);
    arm(&v[0], now + 5 * MS, now);
    arm(&v[1], now + 6 * MS, now);
    ops->cancel(st, &v[0].t);
    ASSERT_FALSE(tm_armed(&v[0].t));
    ops->cancel(st, &v[0].t); /* twice: a no-op */
    ASSERT_EQ(ops->count(st), 1);
    /* Firing: four due at once; after the first pops, the others are cancelled mid-pass. */
    for (int i = 2; i < 6; i++)
        arm(&v[i], now + 2 * MS, now);
    now += 3 * MS;
    tm_node *t = ops->pop(st, now);
    ASSERT(t != NULL);
    tnode *first = check_popped(t, now, 5 * MS);
    ASSERT_EQ(first->id, ops->props.fifo ? 2 : first->id);
    for (int i = 2; i < 6; i++)
        if (&v[i] != first && i != 4) {
            ASSERT_TRUE(tm_armed(&v[i].t));
            ops->cancel(st, &v[i].t);
        }
    ops->cancel(st, &first->t); /* fired: a no-op */
    t = ops->pop(st, now);
    ASSERT(t != NULL);
    ASSERT(t == &v[4].t || (first == &v[4] && t == NULL));
    if (t) check_popped(t, now, 5 * MS);
    ASSERT_PTR_EQ(ops->pop(st, now), NULL);
    ops->cancel(st, &v[4].t); /* fired */
    ASSERT_EQ(ops->count(st), 1);
    now += 4 * MS;
    t = ops->pop(st, now);
    ASSERT_PTR_EQ(t, &v[1].t);
    check_popped(t, now, 5 * MS);
    ASSERT_EQ(ops->count(st), 0);
    ASSERT_EQ(ops->earliest(st), TM_NEVER);
    free(v);

    /* The mix: arm, cancel at random (pending, and due ones between pops), re-arm cancelled
     * ones; what was not cancelled pops exactly once, in order where declared. */
    enum { N = 20000 };
    v = nodes(N);
    size_t live = 0, popped = 0;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++)
            if (!tm_armed(&v[i].t) && !v[i].fired && rnd_below(2)) {
                arm(&v[i], now + rnd_below(90 * SEC), now);
                live++;
            }
        for (int k = 0; k < N / 3; k++) {
            tnode *x = &v[rnd_below(N)];
            if (tm_armed(&x->t)) live--;
            ops->cancel(st, &x->t);
            ASSERT_FALSE(tm_armed(&x->t));
        }
        ASSERT_EQ(ops->count(st), live);
        now = run_clock(now, now + 5 * SEC, MS, false, &popped); /* a wheel's re-adds pop nothing */
        live = ops->count(st);
    }
    int64_t last = INT64_MIN;
    while (ops->count(st)) {
        now += 10 * MS;
        while ((t = ops->pop(st, now))) {
            tnode *x = check_popped(t, now, 10 * MS);
            if (ops->props.exact) ASSERT_LE(last, x->t.deadline);
            last = x->t.deadline;
        }
        ASSERT_LT(now, T0 + 1000 * SEC);
    }
    for (int i = 0; i < N; i++)
        ASSERT_LE(v[i].fired, 1);
    ops->free(st);
    free(v);
}

/* ---- re-arm from inside an expiry: for later, and for now (due in the same pass) ----------- */

static void t_rearm(void)
{
    enum { N = 1000, TIMES = 5 };
    tnode *v = nodes(N);
    int64_t now = T0, step = 100000;
    new_instance(now);
    for (int i = 0; i < N; i++)
        arm(&v[i], now + rnd_below(50 * MS), now);
    size_t pops = 0;
    while (ops->count(st)) {
        tm_node *t;
        while ((t = ops->pop(st, now))) {
            tnode *x = check_popped(t, now, step);
            pops++;
            if (x->fired < TIMES) {
                /* Odd nodes ask for "now" (already due), even ones for later. */
                int64_t d = x->id % 2 ? now : now + rnd_below(20 * MS);
                arm(x, d, now);
            }
        }
        now += step;
        ASSERT_LT(now, T0 + 10 * SEC);
    }
    ASSERT_EQ(pops, (size_t)N * TIMES);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(v[i].fired, TIMES);
    ops->free(st);
    free(v);
}

/* ---- 10^6 pending, half beyond a 60 s wheel, a quarter cancelled --------------------------- */

/* The sanitizer build runs the same shape at 10^5: its shadow checks made the heaps' 10^6 take
 * 90 s each (of the sanitizer suite's 400), and the release build still runs 10^6. */
#ifdef SWITCHYARD_ASAN
#define MILLION_N 100000
#else
#define MILLION_N 1000000
#endif

static void t_million(void)
{
    enum { N = MILLION_N };
    tnode *v = nodes(N);
    int64_t now = T0, t0 = tm_now();
    new_instance(now);
    for (int i = 0; i < N; i++)
        arm(&v[i], now + rnd_below(120 * SEC), now);
    ASSERT_EQ(ops->count(st), N);
    for (int i = 0; i < N; i += 4)
        ops->cancel(st, &v[i].t);
    ASSERT_EQ(ops->count(st), N - N / 4);
    size_t popped = 0;
    int64_t step = 2 * MS;
    while (ops->count(st)) {
        now = run_clock(now, now + SEC, step, false, &popped);
        ASSERT_LT(now, T0 + 200 * SEC);
    }
    ASSERT_EQ(popped, N - N / 4);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(v[i].fired, i % 4 != 0);
    printf("%d armed, %d cancelled, %d popped over %.0f fake s in %.2f s\n", N, N / 4, N - N / 4,
           (now - T0) / 1e9, (tm_now() - t0) / 1e9);
    ops->free(st);
    free(v);
}

/* ---- timeouts beyond a wheel's span: on time, FIFO kept across re-adds, few wake-ups ------- */

static void t_beyond_span(void)
{
    static const int64_t timeouts_ms[] = {59999,  60000,   60001,     61000,    119500,
                                          600000, 7200000, 133200000, 360000000};
    enum { NT = sizeof timeouts_ms / sizeof timeouts_ms[0] };
    tnode *v = nodes(NT + 3);
    int64_t now = T0;
    new_instance(now);
    for (int i = 0; i < NT; i++)
        arm(&v[i], now + timeouts_ms[i] * MS, now);
    /* Equal deadlines armed 100 s, 50 s and 0.1 s before: FIFO across the re-add. */
    int64_t d = T0 + 100 * SEC;
    arm(&v[NT], d, now);
    int64_t arm_at[2] = {T0 + 50 * SEC, T0 + 100 * SEC - 100 * MS};
    int next_arm = 0, order[3], n_order = 0;
    size_t wakeups = 0, popped = 0;
    /* Jump from earliest to earliest, as an idle poller does. */
    for (;;) {
        int64_t e = ops->earliest(st);
        int64_t to = next_arm < 2 && arm_at[next_arm] < e ? arm_at[next_arm] : e;
        if (to == TM_NEVER) break;
        ASSERT_GE(to, now);
        now = to;
        if (next_arm < 2 && now == arm_at[next_arm]) {
            arm(&v[NT + 1 + next_arm], d, now);
            next_arm++;
            continue;
        }
        wakeups++;
        tm_node *t;
        while ((t = ops->pop(st, now))) {
            tnode *x = check_popped(t, now, 0);
            popped++;
            if (x->id >= NT) order[n_order++] = x->id;
        }
    }
    ASSERT_EQ(popped, NT + 3);
    ASSERT_EQ(n_order, 3);
    if (ops->props.fifo) {
        ASSERT_EQ(order[0], NT);
        ASSERT_EQ(order[1], NT + 1);
        ASSERT_EQ(order[2], NT + 2);
    }
    /* A wheel wakes once per pass of its span for a far timer: 100 h / 59 s at most. */
    size_t allowed = NT + 3 + (size_t)(timeouts_ms[NT - 1] / 59000) + 1;
    printf("%zu wake-ups for %d timers up to %jd h\n", wakeups, NT + 3,
           (intmax_t)(timeouts_ms[NT - 1] / 3600000));
    ASSERT_LE(wakeups, allowed);
    if (ops->props.exact) ASSERT_EQ(wakeups, NT + 1); /* the FIFO three share one */
    ops->free(st);
    free(v);
}

/* ---- far_idle: with only far timers, earliest() is far too (no tick to wake on) ------------ */

static void t_far_idle(void)
{
    tnode *v = nodes(3);
    int64_t now = T0;
    new_instance(now);
    arm(&v[0], now + 3600 * SEC, now);
    arm(&v[1], now + 600 * SEC + 1, now);
    int64_t e = ops->earliest(st);
    printf("earliest() %.3f s ahead with timers 600 s and 3600 s away\n", (e - now) / 1e9);
    /* Never before the earliest deadline; a wheel of 60 s may come back once per span. */
    ASSERT_GE(e, ops->props.exact ? now + 600 * SEC + 1 : now + 59 * SEC);
    /* A near one brings it in; cancelling it sends it back out. */
    arm(&v[2], now + 30 * MS, now);
    ASSERT_LE(ops->earliest(st), now + 30 * MS + bound(30 * MS));
    ASSERT_GE(ops->earliest(st), now + 30 * MS);
    ops->cancel(st, &v[2].t);
    ASSERT_EQ(ops->earliest(st), e);
    ASSERT_PTR_EQ(ops->pop(st, e - 1), NULL);
    ASSERT_EQ(ops->count(st), 2);
    ops->free(st);
    free(v);
}

/* ---- through the runtime ------------------------------------------------------------------- */

static const char *engine_name;
static fb_policy policy;
static fb_stack_mode stack_mode;
static unsigned shared_stacks;
static fb_io *io;
static fb_runtime *rt;

static void start(void)
{
    io = fb_io_new(engine_name);
    if (!io && (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
        printf("not run: %s: the kernel refused it: %s\n", engine_name, strerror(errno));
        exit(77);
    }
    ASSERT(io != NULL);
    /* A structure missing an operation is refused; a registered one is taken as it is. */
    tm_ops incomplete = *ops;
    incomplete.pop = NULL;
    fb_config bad = {.backend = sw_backend_at(0), .policy = policy, .timers = &incomplete};
    errno = 0;
    ASSERT_PTR_EQ(fb_runtime_new(&bad), NULL);
    ASSERT_EQ(errno, EINVAL);
    fb_config cfg = {.backend = sw_backend_at(0),
                     .policy = policy,
                     .poller = fb_io_poller(io),
                     .stack_mode = stack_mode,
                     .shared_stacks = shared_stacks,
                     .timers = ops};
    rt = fb_runtime_new(&cfg);
    ASSERT(rt != NULL);
    ASSERT_PTR_EQ(fb_runtime_timers(rt), ops);
}

static void run_and_finish(void)
{
    ASSERT_EQ(fb_run(rt), 0);
    fb_io_stats s;
    fb_io_get_stats(io, &s);
    ASSERT_EQ(s.waiters, 0);
    ASSERT_EQ(s.sleepers, 0);
    fb_runtime_free(rt);
    fb_io_free(io);
}

/* A machine shared with other work can wake a thread late by itself: what the runtime cases
 * allow beyond the declared bound (the fake-clock cases check the bound itself). */
static const int64_t SLACK = 300 * MS;

enum { SLEEPERS = 16 };
static const int sleep_ms[SLEEPERS] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
static int64_t sl_base, sl_deadline[SLEEPERS], sl_armed[SLEEPERS], sl_woke[SLEEPERS];
static int sl_order[SLEEPERS], sl_n;

static void sleeper(void *arg)
{
    int i = (int)(intptr_t)arg;
    if (!sl_base) sl_base = tm_now() + 20 * MS;
    sl_deadline[i] = sl_base + sleep_ms[i] * MS; /* equal values: equal deadlines */
    sl_armed[i] = tm_now();
    ASSERT_EQ(fb_sleep_until(sl_deadline[i]), 0);
    sl_woke[i] = tm_now();
    sl_order[sl_n++] = i;
}

static int rd_sv[2];
static int64_t rd_timed_out_after, rd_slept;

static void writer(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_write(rd_sv[1], "ok", 2), 2);
}

static void reader(void *arg)
{
    (void)arg;
    char buf[16];
    int64_t t = tm_now();
    ASSERT_EQ(fb_read_timeout(rd_sv[0], buf, sizeof buf, 20 * MS), -1);
    ASSERT_EQ(errno, ETIMEDOUT);
    rd_timed_out_after = tm_now() - t;
    /* A timeout the data cancels; it must not fire later. The writer starts only now and runs
     * as soon as this read waits: a writer on a timer of its own could be stalled past this
     * deadline with it on a loaded machine, and both would come due in one pass (timers expire
     * before the poll). What is left is a stall of 200 ms between this read's wait and the
     * writer's next poll. */
    ASSERT(fb_spawn(rt, writer, NULL) != NULL);
    ASSERT_EQ(fb_read_timeout(rd_sv[0], buf, sizeof buf, 200 * MS), 2);
    ASSERT_MEM_EQ(buf, "ok", 2);
    /* Past the cancelled deadline: a timer that fired anyway would end this sleep early. */
    t = tm_now();
    ASSERT_EQ(fb_sleep(220 * MS), 0);
    rd_slept = tm_now() - t;
}

static void t_runtime(void)
{
    start();
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rd_sv), 0);
    for (int i = 0; i < SLEEPERS; i++)
        ASSERT(fb_spawn(rt, sleeper, (void *)(intptr_t)i) != NULL);
    ASSERT(fb_spawn(rt, reader, NULL) != NULL);
    ASSERT_EQ(fb_run(rt), 0);
    fb_io_stats s;
    fb_io_get_stats(io, &s);
    /* The sleepers, the reader's sleep, and the timed-out read (unless the IO layer saw its
     * deadline pass before arming, on a loaded machine); the cancelled read's timer never. */
    ASSERT_GE(s.timers_fired, SLEEPERS + 1);
    ASSERT_LE(s.timers_fired, SLEEPERS + 2);
    ASSERT_GE(rd_slept, 220 * MS);
    ASSERT_EQ(sl_n, SLEEPERS);
    ASSERT_GE(rd_timed_out_after, 20 * MS);
    ASSERT_LE(rd_timed_out_after, 20 * MS + bound(20 * MS) + SLACK);
    for (int k = 0; k < SLEEPERS; k++) {
        int i = sl_order[k];
        ASSERT_GE(sl_woke[i], sl_deadline[i]);
        ASSERT_LE(sl_woke[i] - sl_deadline[i], bound(sl_deadline[i] - sl_armed[i]) + SLACK);
        /* The order is the structure's only between sleepers both armed before the first of
         * them was due (a loaded machine can start one late). */
        int p = k ? sl_order[k - 1] : -1;
        if (p < 0 || sl_armed[i] >= sl_deadline[p] || sl_armed[p] >= sl_deadline[p]) continue;
        if (ops->props.exact) ASSERT_LE(sl_deadline[p], sl_deadline[i]);
        if (ops->props.fifo && sl_deadline[p] == sl_deadline[i]) ASSERT_LT(p, i);
        ASSERT_LE(sl_deadline[p], sl_deadline[i] + bound(sl_deadline[i] - sl_armed[i]));
    }
    close(rd_sv[0]);
    close(rd_sv[1]);
    run_and_finish();
}

/* ---- idle: fibers parked with timeouts an hour away; the poller must sleep, not tick ------- */

static int id_sv[2];
static char id_got;

static void far_reader(void *arg)
{
    (void)arg;
    char c;
    ASSERT_EQ(fb_read_timeout(id_sv[0], &c, 1, 3600 * SEC), 1);
    id_got = c;
}

static void far_waiter(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_wait(id_sv[1], FB_IN, 600 * SEC), 0);
}

static void late_writer(void *arg)
{
    (void)arg;
    fb_sleep(120 * MS);
    ASSERT_EQ(fb_write(id_sv[1], "x", 1), 1);
    ASSERT_EQ(fb_write(id_sv[0], "y", 1), 1);
}

static void t_idle(void)
{
    start();
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, id_sv), 0);
    ASSERT(fb_spawn(rt, far_reader, NULL) != NULL);
    ASSERT(fb_spawn(rt, far_waiter, NULL) != NULL);
    ASSERT(fb_spawn(rt, late_writer, NULL) != NULL);
    int64_t t = tm_now();
    ASSERT_EQ(fb_run(rt), 0);
    t = tm_now() - t;
    fb_stats s;
    fb_get_stats(rt, &s);
    printf("%ju polls in %.0f ms with timeouts 10 min and 1 h away\n", (uintmax_t)s.polls, t / 1e6);
    ASSERT_EQ(id_got, 'x');
    /* A 1 ms tick would poll 120 times; a deadline-driven wait a handful. */
    ASSERT_LE(s.polls, 20);
    close(id_sv[0]);
    close(id_sv[1]);
    run_and_finish();
}

#define TEST_TIMER__ENTRY(name, ...) {#name, t_##name, #__VA_ARGS__},
static const test_case cases[] = {TEST_TIMER_CASES(TEST_TIMER__ENTRY)};
#undef TEST_TIMER__ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(cases);
        return 0;
    }
    if (argc != 3 && argc != 5 && argc != 6) {
        fprintf(stderr, "usage: test-timer CASE TIMERS [ENGINE star|ring [guarded|copy[:K]]] | "
                        "test-timer --list\n");
        return 2;
    }
    void (*fn)(void) = TEST_CASE_REQUIRE("test-timer", cases, argv[1]);
    ops = tm_find(argv[2]);
    if (!ops) {
        fprintf(stderr, "test-timer: unknown timers '%s' (valid: %s)\n", argv[2], tm_names());
        return 2;
    }
    if (argc >= 5) {
        engine_name = argv[3];
        if (!eng_find(engine_name)) {
            fprintf(stderr, "test-timer: unknown engine '%s' (valid: %s)\n", argv[3], eng_names());
            return 2;
        }
        if (fb_policy_parse(argv[4], &policy) < 0) {
            fprintf(stderr, "test-timer: unknown scheduler '%s' (valid: star, ring)\n", argv[4]);
            return 2;
        }
        if (argc == 6 && fb_stack_mode_parse(argv[5], &stack_mode, &shared_stacks) < 0) {
            fprintf(stderr, "test-timer: unknown stack mode '%s' (valid: guarded, copy[:K])\n",
                    argv[5]);
            return 2;
        }
    } else if (fn == t_runtime || fn == t_idle) {
        fprintf(stderr, "test-timer: %s needs ENGINE and star|ring\n", argv[1]);
        return 2;
    }
    fn();
    printf("ok %s/%s%s%s%s%s\n", argv[1], argv[2], engine_name ? "/" : "",
           engine_name ? engine_name : "", engine_name ? "/" : "",
           engine_name ? fb_policy_name(policy) : "");
    return 0;
}
