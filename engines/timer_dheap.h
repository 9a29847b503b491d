/* timer_dheap.h - internal: the d-ary min-heap of deadlines that the heap members instantiate. */
#ifndef SWITCHYARD_TIMER_DHEAP_H
#define SWITCHYARD_TIMER_DHEAP_H

#include "timer.h"

#include <errno.h>
#include <stdlib.h>

/*
 * One array of node pointers ordered by (deadline, arming order), the earliest at the root;
 * each node keeps its index (pos), so a cancel removes it where it sits. Arity D is a
 * compile-time constant of the including member: 2 (libuv's binary heap) or 4 (Go's per-P
 * heap: half the levels, so fewer cache lines touched going up, four children compared going
 * down). Arm and cancel are O(log n); pop is O(log n); the root is the exact earliest
 * deadline, so pops come in order, ties first-armed first.
 */
typedef struct tm_dheap {
    tm_node **v;
    size_t n, cap;
    uint64_t seq;
} tm_dheap;

static inline int tm__dh_earlier(const tm_node *a, const tm_node *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static inline void tm__dh_place(tm_dheap *h, size_t i, tm_node *t)
{
    h->v[i] = t;
    t->pos = (uint32_t)i;
}

static inline void tm__dh_up(tm_dheap *h, size_t i, tm_node *t, size_t d)
{
    while (i > 0) {
        size_t parent = (i - 1) / d;
        if (!tm__dh_earlier(t, h->v[parent])) break;
        tm__dh_place(h, i, h->v[parent]);
        i = parent;
    }
    tm__dh_place(h, i, t);
}

static inline void tm__dh_down(tm_dheap *h, size_t i, tm_node *t, size_t d)
{
    for (;;) {
        size_t first = d * i + 1;
        if (first >= h->n) break;
        size_t end = first + d < h->n ? first + d : h->n, c = first;
        for (size_t k = first + 1; k < end; k++)
            if (tm__dh_earlier(h->v[k], h->v[c])) c = k;
        if (!tm__dh_earlier(h->v[c], t)) break;
        tm__dh_place(h, i, h->v[c]);
        i = c;
    }
    tm__dh_place(h, i, t);
}

static inline void *tm__dh_init(void)
{
    return calloc(1, sizeof(tm_dheap));
}

static inline void tm__dh_free(void *st)
{
    tm_dheap *h = st;
    if (!h) return;
    free(h->v);
    free(h);
}

static inline int tm__dh_arm(tm_dheap *h, tm_node *t, int64_t deadline, size_t d)
{
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
    tm__dh_up(h, h->n++, t, d);
    return 0;
}

static inline void tm__dh_cancel(tm_dheap *h, tm_node *t, size_t d)
{
    if (t->state != TM_ARMED) return;
    size_t i = t->pos;
    t->state = TM_IDLE;
    tm_node *last = h->v[--h->n];
    if (last == t) return;
    /* The last node fills the hole and moves whichever way restores the order. */
    if (i > 0 && tm__dh_earlier(last, h->v[(i - 1) / d]))
        tm__dh_up(h, i, last, d);
    else
        tm__dh_down(h, i, last, d);
}

static inline int64_t tm__dh_earliest(const tm_dheap *h)
{
    return h->n ? h->v[0]->deadline : TM_NEVER;
}

static inline tm_node *tm__dh_pop(tm_dheap *h, int64_t now, size_t d)
{
    if (!h->n || h->v[0]->deadline > now) return NULL;
    tm_node *t = h->v[0];
    t->state = TM_IDLE;
    tm_node *last = h->v[--h->n];
    if (last != t) tm__dh_down(h, 0, last, d);
    return t;
}

#endif
