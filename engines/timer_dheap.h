/* timer_dheap.h - internal: the d-ary min-heap of deadlines that the heap members instantiate. */
#ifndef SWITCHYARD_TIMER_DHEAP_H
#define SWITCHYARD_TIMER_DHEAP_H

#include "timer.h"

#include <errno.h>
#include <stdlib.h>

/*
 * One array of node pointers ordered by (deadline, arming order), the earliest at the root;
 * each node keeps its index (pos), so a cancel removes it where it sits. The arity is
 * TM_DHEAP_ARITY, a compile-time constant the including member defines first (so the index
 * arithmetic is shifts, not divisions): 2 (libuv's binary heap) or 4 (Go's per-P heap: half
 * the levels, so fewer cache lines touched going up, four children compared going down). Arm
 * and cancel are O(log n); pop is O(log n); the root is the exact earliest deadline, so pops
 * come in order, ties first-armed first. The header defines the including member's static
 * operations; the member names them with TM_DHEAP_OPS(name, summary).
 */
#ifndef TM_DHEAP_ARITY
#error "define TM_DHEAP_ARITY (the heap's arity) before including timer_dheap.h"
#endif
enum { D = TM_DHEAP_ARITY };

typedef struct tm_dheap {
    tm_node **v;
    size_t n, cap;
    uint64_t seq;
} tm_dheap;

static inline int earlier(const tm_node *a, const tm_node *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static inline void place(tm_dheap *h, size_t i, tm_node *t)
{
    h->v[i] = t;
    t->pos = (uint32_t)i;
}

static inline void sift_up(tm_dheap *h, size_t i, tm_node *t)
{
    while (i > 0) {
        size_t parent = (i - 1) / D;
        if (!earlier(t, h->v[parent])) break;
        place(h, i, h->v[parent]);
        i = parent;
    }
    place(h, i, t);
}

static inline void sift_down(tm_dheap *h, size_t i, tm_node *t)
{
    for (;;) {
        size_t first = D * i + 1;
        if (first >= h->n) break;
        size_t end = first + D < h->n ? first + D : h->n, c = first;
        for (size_t k = first + 1; k < end; k++)
            if (earlier(h->v[k], h->v[c])) c = k;
        if (!earlier(h->v[c], t)) break;
        place(h, i, h->v[c]);
        i = c;
    }
    place(h, i, t);
}

static void *init(int64_t now)
{
    (void)now;
    return calloc(1, sizeof(tm_dheap));
}

static void destroy(void *st)
{
    tm_dheap *h = st;
    if (!h) return;
    free(h->v);
    free(h);
}

static int arm(void *st, tm_node *t, int64_t deadline, int64_t now)
{
    (void)now;
    tm_dheap *h = st;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        if (cap > UINT32_MAX) {
            errno = ENOMEM;
            return -1;
        }
        tm_node **v = realloc(h->v, cap * sizeof *v);
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        h->v = v;
        h->cap = cap;
    }
    t->deadline = deadline;
    t->seq = h->seq++;
    t->state = TM_ARMED;
    sift_up(h, h->n++, t);
    return 0;
}

static void cancel(void *st, tm_node *t)
{
    tm_dheap *h = st;
    if (t->state != TM_ARMED) return;
    size_t i = t->pos;
    t->state = TM_IDLE;
    tm_node *last = h->v[--h->n];
    if (last == t) return;
    /* The last node fills the hole and moves whichever way restores the order. */
    if (i > 0 && earlier(last, h->v[(i - 1) / D]))
        sift_up(h, i, last);
    else
        sift_down(h, i, last);
}

static int64_t earliest(void *st)
{
    const tm_dheap *h = st;
    return h->n ? h->v[0]->deadline : TM_NEVER;
}

static tm_node *pop(void *st, int64_t now)
{
    tm_dheap *h = st;
    if (!h->n || h->v[0]->deadline > now) return NULL;
    tm_node *t = h->v[0];
    t->state = TM_IDLE;
    tm_node *last = h->v[--h->n];
    if (last != t) sift_down(h, 0, last);
    return t;
}

static size_t count(const void *st)
{
    return ((const tm_dheap *)st)->n;
}

/* A heap member's ops: every heap is exact and FIFO, and O(log n) whatever its arity. */
#define TM_DHEAP_OPS(name_, summary_)                                                              \
    {                                                                                              \
        .name = name_, .summary = summary_,                                                        \
        .props = {.exact = true,                                                                   \
                  .granularity_ns = 0,                                                             \
                  .max_rel_error = 0,                                                              \
                  .fifo = true,                                                                    \
                  .arm = "O(log n)",                                                               \
                  .cancel = "O(log n)",                                                            \
                  .expire = "O(log n)"},                                                           \
        .init = init, .free = destroy, .arm = arm, .cancel = cancel, .earliest = earliest,         \
        .pop = pop, .count = count,                                                                \
    }

#endif
