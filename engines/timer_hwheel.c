/* timer_hwheel.c - timers member "hwheel": a hierarchical wheel without cascading (Linux's). */
#include "timer_list.h"

/*
 * Linux's timer wheel since 4.8: levels of 64 buckets, each level's bucket 8 times coarser
 * than the one below (1 ms, 8 ms, 64 ms, ... here), and a timer placed once, in the level
 * whose range holds its timeout, rounded up to that level's granularity; it is never moved
 * down as its time nears (no cascading), because "the vast majority of timer wheel timers is
 * canceled or rearmed before expiry". Level L holds timeouts of 63 * 8^(L-1) to 63 * 8^L
 * ticks, so the rounding is at most 8/63 of the timeout (12.7%; Linux says about 12.5%), plus
 * the 1 ms of the first tick; arming, cancelling and expiring are O(1). Equal deadlines armed
 * at different times can sit in different levels and fire in either order: no FIFO. A timeout
 * beyond the top level's range (about 36 hours) waits in the top level's farthest bucket and
 * is placed again when that comes round: nothing fires early (Linux clamps instead).
 *
 * One 64-bit occupancy word per level finds the next non-empty bucket of each level with a
 * rotate and a count of trailing zeros: the poll timeout is the earliest bucket's time, and an
 * idle stretch is skipped in one step. Buckets whose time has come are moved to a due list,
 * whose nodes stay armed (cancellable) until popped.
 */
enum { LEVELS = 8, BUCKETS = 64, SHIFT = 3 };

typedef struct hwheel {
    tm_wheel c; /* clock, due list, count (first: the shared operations take it) */
    uint64_t bits[LEVELS];
    tm_node *bucket[LEVELS][BUCKETS];
} hwheel;

/* The first tick of level L's range: timeouts of this many ticks or more go above L. */
static int64_t level_end(int L)
{
    return (int64_t)(BUCKETS - 1) << (SHIFT * L);
}

static void place(hwheel *h, tm_node *x)
{
    int64_t tick = tm__tick_up(x->deadline);
    if (tick <= h->c.clk) {
        tm__wheel_due(&h->c, x);
        return;
    }
    int64_t delta = tick - h->c.clk;
    int L = 0;
    while (L < LEVELS - 1 && delta >= level_end(L))
        L++;
    if (delta >= level_end(L)) tick = h->c.clk + level_end(L) - 1; /* beyond the top: wait there */
    int s = SHIFT * L;
    int64_t b = (tick + ((int64_t)1 << s) - 1) >> s; /* rounded up to the level's granularity */
    uint32_t idx = (uint32_t)(b & (BUCKETS - 1));
    x->pos = (uint32_t)L * BUCKETS + idx;
    tm__list_append(&h->bucket[L][idx], x);
    h->bits[L] |= 1ull << idx;
}

static uint64_t rotr(uint64_t v, unsigned r)
{
    r &= 63;
    return r ? (v >> r) | (v << (64 - r)) : v;
}

/* The tick of the earliest non-empty bucket after clk, or -1. */
static int64_t next_tick(const tm_wheel *c)
{
    const hwheel *h = (const hwheel *)c;
    int64_t best = -1;
    for (int L = 0; L < LEVELS; L++) {
        if (!h->bits[L]) continue;
        int s = SHIFT * L;
        int64_t at = c->clk >> s;
        unsigned k = (unsigned)__builtin_ctzll(rotr(h->bits[L], (unsigned)((at + 1) & 63)));
        int64_t t = (at + 1 + k) << s;
        if (best < 0 || t < best) best = t;
    }
    return best;
}

static void advance(hwheel *h, int64_t to)
{
    while (h->c.clk < to) {
        int64_t t = h->c.n ? next_tick(&h->c) : -1;
        if (t < 0 || t > to) {
            h->c.clk = to;
            return;
        }
        h->c.clk = t;
        tm_node *list = NULL, *x;
        for (int L = 0; L < LEVELS; L++) {
            int s = SHIFT * L;
            if (t & (((int64_t)1 << s) - 1)) break; /* not on this level's boundary, nor above */
            uint32_t idx = (uint32_t)((t >> s) & (BUCKETS - 1));
            while ((x = tm__list_shift(&h->bucket[L][idx])))
                tm__list_append(&list, x);
            h->bits[L] &= ~(1ull << idx);
        }
        while ((x = tm__list_shift(&list)))
            place(h, x);
    }
}

static void *init(int64_t now)
{
    return tm__wheel_new(sizeof(hwheel), now);
}

static int arm(void *st, tm_node *x, int64_t deadline, int64_t now)
{
    hwheel *h = st;
    advance(h, tm__tick_down(now));
    tm__wheel_arm(&h->c, x, deadline);
    place(h, x);
    return 0;
}

static void cancel(void *st, tm_node *x)
{
    hwheel *h = st;
    if (!tm__wheel_cancel(&h->c, x)) return;
    uint32_t L = x->pos / BUCKETS, idx = x->pos % BUCKETS;
    tm__list_unlink(&h->bucket[L][idx], x);
    if (!h->bucket[L][idx]) h->bits[L] &= ~(1ull << idx);
}

static int64_t earliest(void *st)
{
    return tm__wheel_earliest(st, next_tick);
}

static tm_node *pop(void *st, int64_t now)
{
    hwheel *h = st;
    advance(h, tm__tick_down(now));
    return tm__wheel_pop_due(&h->c);
}

const tm_ops tm__hwheel = {
    .name = "hwheel",
    .summary = "hierarchical wheel, 8 levels of 64 buckets each 8x coarser, no cascading (Linux)",
    .props = {.exact = false,
              .granularity_ns = TM_TICK_NS,
              .max_rel_error = 8.0 / 63,
              .fifo = false,
              .arm = "O(1)",
              .cancel = "O(1)",
              .expire = "O(1)"},
    .init = init,
    .free = free,
    .arm = arm,
    .cancel = cancel,
    .earliest = earliest,
    .pop = pop,
    .count = tm__wheel_count,
};
