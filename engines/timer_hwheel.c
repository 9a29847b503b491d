/* timer_hwheel.c - timers member "hwheel": a hierarchical wheel without cascading (Linux's). */
#include "timer_list.h"

#include <stdlib.h>

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
#define DUE ((uint32_t)-1)

typedef struct hwheel {
    int64_t clk; /* the last tick processed */
    tm_node *due;
    size_t n;
    uint64_t seq;
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
    if (tick <= h->clk) {
        x->pos = DUE;
        tm__list_append(&h->due, x);
        return;
    }
    int64_t delta = tick - h->clk;
    int L = 0;
    while (L < LEVELS - 1 && delta >= level_end(L))
        L++;
    if (delta >= level_end(L)) tick = h->clk + level_end(L) - 1; /* beyond the top: wait there */
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
static int64_t next_tick(const hwheel *h)
{
    int64_t best = -1;
    for (int L = 0; L < LEVELS; L++) {
        if (!h->bits[L]) continue;
        int s = SHIFT * L;
        int64_t c = h->clk >> s;
        unsigned k = (unsigned)__builtin_ctzll(rotr(h->bits[L], (unsigned)((c + 1) & 63)));
        int64_t t = (c + 1 + k) << s;
        if (best < 0 || t < best) best = t;
    }
    return best;
}

static void advance(hwheel *h, int64_t to)
{
    while (h->clk < to) {
        int64_t t = h->n ? next_tick(h) : -1;
        if (t < 0 || t > to) {
            h->clk = to;
            return;
        }
        h->clk = t;
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
    hwheel *h = calloc(1, sizeof *h);
    if (h) h->clk = tm__tick_down(now);
    return h;
}

static void destroy(void *st)
{
    free(st);
}

static int arm(void *st, tm_node *x, int64_t deadline, int64_t now)
{
    hwheel *h = st;
    advance(h, tm__tick_down(now));
    x->deadline = deadline;
    x->seq = h->seq++;
    x->state = TM_ARMED;
    place(h, x);
    h->n++;
    return 0;
}

static void cancel(void *st, tm_node *x)
{
    hwheel *h = st;
    if (x->state != TM_ARMED) return;
    if (x->pos == DUE) {
        tm__list_unlink(&h->due, x);
    } else {
        uint32_t L = x->pos / BUCKETS, idx = x->pos % BUCKETS;
        tm__list_unlink(&h->bucket[L][idx], x);
        if (!h->bucket[L][idx]) h->bits[L] &= ~(1ull << idx);
    }
    x->state = TM_IDLE;
    h->n--;
}

static int64_t earliest(void *st)
{
    hwheel *h = st;
    if (h->due) return h->clk * TM_TICK_NS;
    int64_t t = h->n ? next_tick(h) : -1;
    return t < 0 ? TM_NEVER : t * TM_TICK_NS;
}

static tm_node *pop(void *st, int64_t now)
{
    hwheel *h = st;
    advance(h, tm__tick_down(now));
    tm_node *x = tm__list_shift(&h->due);
    if (!x) return NULL;
    x->state = TM_IDLE;
    h->n--;
    return x;
}

static size_t count(const void *st)
{
    return ((const hwheel *)st)->n;
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
    .free = destroy,
    .arm = arm,
    .cancel = cancel,
    .earliest = earliest,
    .pop = pop,
    .count = count,
};
