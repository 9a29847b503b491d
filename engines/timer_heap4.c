/* timer_heap4.c - timers member "heap4": a 4-ary min-heap of deadlines (Go's per-P timers). */
#include "timer_dheap.h"

/*
 * Go keeps each P's timers in a 4-ary heap: half the levels of a binary heap, so an arm that
 * sifts up touches fewer nodes, at the price of comparing four children on the way down.
 */
enum { D = 4 };

static void *init(int64_t now)
{
    (void)now;
    return tm__dh_init();
}

static int arm(void *st, tm_node *n, int64_t deadline, int64_t now)
{
    (void)now;
    return tm__dh_arm(st, n, deadline, D);
}

static void cancel(void *st, tm_node *n)
{
    tm__dh_cancel(st, n, D);
}

static int64_t earliest(void *st)
{
    return tm__dh_earliest(st);
}

static tm_node *pop(void *st, int64_t now)
{
    return tm__dh_pop(st, now, D);
}

static size_t count(const void *st)
{
    return ((const tm_dheap *)st)->n;
}

const tm_ops tm__heap4 = {
    .name = "heap4",
    .summary = "4-ary min-heap of deadlines (Go's per-P timers), exact",
    .props = {.exact = true,
              .granularity_ns = 0,
              .max_rel_error = 0,
              .fifo = true,
              .arm = "O(log n)",
              .cancel = "O(log n)",
              .expire = "O(log n)"},
    .init = init,
    .free = tm__dh_free,
    .arm = arm,
    .cancel = cancel,
    .earliest = earliest,
    .pop = pop,
    .count = count,
};
