/* timer_wheel.c - timers member "wheel": libco's hashed wheel of 60,000 one-millisecond slots. */
#include "timer_list.h"

/*
 * libco (seed 004) keeps a circular array of 60,000 slots of 1 ms, each a list, and arms one
 * timeout per hooked read or poll that readiness then cancels: arming appends to the slot of
 * the deadline's millisecond, cancelling unlinks, both O(1) whatever the number armed. A
 * deadline is rounded up to its slot's end, so nothing fires early and nothing later than
 * 1 ms after its deadline. A timeout at or beyond the span (60 s) goes to the last slot, as
 * libco's does, and is added back when that slot comes round before the deadline: one
 * wake-up per 60 s for a far timer. Within a slot, nodes stay in arming order (a node added
 * back is put before those armed after it), so equal deadlines fire first-armed first.
 *
 * A bitmap of the non-empty slots (with a summary word per 64 of its words) finds the next
 * occupied slot without visiting the empty ones: the poll timeout is the next slot's time,
 * not a 1 ms tick, and advancing over an idle stretch costs a few word scans. Slots whose time
 * has come are moved to a due list, whose nodes stay armed (cancellable) until popped.
 */
enum { SLOTS = 60000, WORDS = (SLOTS + 63) / 64, SUMMARY = (WORDS + 63) / 64 };

typedef struct wheel {
    tm_wheel c; /* clock, due list, count (first: the shared operations take it) */
    uint64_t summary[SUMMARY];
    uint64_t bits[WORDS];
    tm_node *slot[SLOTS];
} wheel;

static void mark(wheel *w, uint32_t s)
{
    w->bits[s / 64] |= 1ull << (s % 64);
    w->summary[s / 4096] |= 1ull << (s / 64 % 64);
}

static void unmark(wheel *w, uint32_t s)
{
    w->bits[s / 64] &= ~(1ull << (s % 64));
    if (!w->bits[s / 64]) w->summary[s / 4096] &= ~(1ull << (s / 64 % 64));
}

/* The first occupied slot at index >= from, or SLOTS. */
static uint32_t find_from(const wheel *w, uint32_t from)
{
    if (from >= SLOTS) return SLOTS;
    uint32_t wi = from / 64;
    uint64_t m = w->bits[wi] & (~0ull << (from % 64));
    if (m) return wi * 64 + (uint32_t)__builtin_ctzll(m);
    for (uint32_t si = (wi + 1) / 64, bit = (wi + 1) % 64; si < SUMMARY; si++, bit = 0) {
        uint64_t sm = bit < 64 ? w->summary[si] & (~0ull << bit) : 0;
        if (sm) {
            uint32_t word = si * 64 + (uint32_t)__builtin_ctzll(sm);
            return word * 64 + (uint32_t)__builtin_ctzll(w->bits[word]);
        }
    }
    return SLOTS;
}

/* The tick of the first occupied slot after clk (slots clk+1 .. clk+SLOTS), or -1. */
static int64_t next_tick(const tm_wheel *c)
{
    const wheel *w = (const wheel *)c;
    uint32_t start = (uint32_t)((c->clk + 1) % SLOTS);
    uint32_t s = find_from(w, start);
    if (s < SLOTS) return c->clk + 1 + (s - start);
    s = find_from(w, 0);
    if (s < start) return c->clk + 1 + (SLOTS - start) + s;
    return -1;
}

static void place(wheel *w, tm_node *x, int64_t tick, int readd)
{
    if (tick <= w->c.clk) {
        tm__wheel_due(&w->c, x);
        return;
    }
    int64_t d = tick - w->c.clk;
    if (d >= SLOTS) d = SLOTS - 1; /* libco's span: the last slot, added back when it is due */
    uint32_t s = (uint32_t)((w->c.clk + d) % SLOTS);
    x->pos = s;
    if (readd)
        tm__list_insert_by_seq(&w->slot[s], x);
    else
        tm__list_append(&w->slot[s], x);
    mark(w, s);
}

/* Process every tick up to `to`: occupied slots go to the due list (or back into the wheel). */
static void advance(wheel *w, int64_t to)
{
    while (w->c.clk < to) {
        if (w->c.n == 0) {
            w->c.clk = to;
            return;
        }
        int64_t t = next_tick(&w->c);
        if (t < 0 || t > to) {
            w->c.clk = to;
            return;
        }
        w->c.clk = t;
        uint32_t s = (uint32_t)(t % SLOTS);
        tm_node *list = w->slot[s], *x;
        w->slot[s] = NULL;
        unmark(w, s);
        while ((x = tm__list_shift(&list)))
            place(w, x, tm__tick_up(x->deadline), 1);
    }
}

static void *init(int64_t now)
{
    return tm__wheel_new(sizeof(wheel), now);
}

static int arm(void *st, tm_node *x, int64_t deadline, int64_t now)
{
    wheel *w = st;
    advance(w, tm__tick_down(now));
    tm__wheel_arm(&w->c, x, deadline);
    place(w, x, tm__tick_up(deadline), 0);
    return 0;
}

static void cancel(void *st, tm_node *x)
{
    wheel *w = st;
    if (!tm__wheel_cancel(&w->c, x)) return;
    tm__list_unlink(&w->slot[x->pos], x);
    if (!w->slot[x->pos]) unmark(w, x->pos);
}

static int64_t earliest(void *st)
{
    return tm__wheel_earliest(st, next_tick);
}

static tm_node *pop(void *st, int64_t now)
{
    wheel *w = st;
    advance(w, tm__tick_down(now));
    return tm__wheel_pop_due(&w->c);
}

const tm_ops tm__wheel = {
    .name = "wheel",
    .summary = "hashed wheel of 60,000 1 ms slots, longer timeouts re-added (libco), rounded up",
    .props = {.exact = false,
              .granularity_ns = TM_TICK_NS,
              .max_rel_error = 0,
              .fifo = true,
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
