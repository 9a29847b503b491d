/* io_timer.h - internal: the fiber IO layer's timers, a binary min-heap of deadlines. */
#ifndef SWITCHYARD_IO_TIMER_H
#define SWITCHYARD_IO_TIMER_H

#include <stddef.h>
#include <stdint.h>

/* A timer lives inside whatever waits on it (a sleeping or waiting fiber's frame), so arming
 * one allocates nothing beyond the heap's pointer array. */
typedef struct io_timer {
    int64_t deadline; /* CLOCK_MONOTONIC, ns */
    uint64_t seq;     /* arming order: equal deadlines fire first-armed first */
    size_t idx;       /* position in the heap; IO__TIMER_IDLE when not armed */
} io_timer;

#define IO__TIMER_IDLE ((size_t)-1)

typedef struct io_heap {
    io_timer **v;
    size_t n, cap;
    uint64_t seq;
} io_heap;

void io__heap_init(io_heap *h);
void io__heap_fini(io_heap *h);
/* Arm t for `deadline`; 0, or -1/ENOMEM. */
int io__heap_push(io_heap *h, io_timer *t, int64_t deadline);
/* Disarm t if it is armed (O(log n), wherever it sits). */
void io__heap_remove(io_heap *h, io_timer *t);
static inline io_timer *io__heap_top(const io_heap *h)
{
    return h->n ? h->v[0] : NULL;
}
static inline int io__timer_armed(const io_timer *t)
{
    return t->idx != IO__TIMER_IDLE;
}

/* CLOCK_MONOTONIC now, in ns. */
int64_t io__now(void);

#endif
