/* timer_heap.c - timers member "heap": a binary min-heap of deadlines (libuv's structure). */
#include "timer_dheap.h"

/*
 * The default. The scheduler needs one thing from the timers on every poll, the earliest
 * deadline, and the heap keeps it at the root; arming and cancelling cost O(log n) in one
 * contiguous array of pointers, and deadlines stay exact to the nanosecond. Whether a wheel's
 * O(1) arming pays off where every read arms a timeout that the data cancels is what the
 * timers rows of switch-bench measure (engines/README.md, "Timer structures").
 */
enum { D = 2 };

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

const tm_ops tm__heap = {
    .name = "heap",
    .summary = "binary min-heap of deadlines (libuv), exact",
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
