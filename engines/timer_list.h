/* timer_list.h - internal: the circular node lists, the tick arithmetic and the due list the
 * wheels share. */
#ifndef SWITCHYARD_TIMER_LIST_H
#define SWITCHYARD_TIMER_LIST_H

#include "timer.h"

#include <stdlib.h>

/*
 * A list is a pointer to its first node; the nodes form a ring through link[0] (next) and
 * link[1] (prev), so the first node's prev is the last: appending keeps arming order and
 * unlinking any node is O(1).
 */
#define TM_NEXT(x) ((x)->link[0])
#define TM_PREV(x) ((x)->link[1])

static inline void tm__list_append(tm_node **head, tm_node *x)
{
    if (!*head) {
        *head = TM_NEXT(x) = TM_PREV(x) = x;
        return;
    }
    tm_node *first = *head, *last = TM_PREV(first);
    TM_NEXT(x) = first;
    TM_PREV(x) = last;
    TM_NEXT(last) = x;
    TM_PREV(first) = x;
}

/* Insert x before the first node armed after it (a node re-added later keeps its place). */
static inline void tm__list_insert_by_seq(tm_node **head, tm_node *x)
{
    if (!*head || TM_PREV(*head)->seq < x->seq) {
        tm__list_append(head, x);
        return;
    }
    tm_node *at = *head;
    while (at->seq < x->seq)
        at = TM_NEXT(at);
    tm_node *before = TM_PREV(at);
    TM_NEXT(x) = at;
    TM_PREV(x) = before;
    TM_NEXT(before) = x;
    TM_PREV(at) = x;
    if (at == *head) *head = x;
}

static inline void tm__list_unlink(tm_node **head, tm_node *x)
{
    if (TM_NEXT(x) == x) {
        *head = NULL;
        return;
    }
    TM_NEXT(TM_PREV(x)) = TM_NEXT(x);
    TM_PREV(TM_NEXT(x)) = TM_PREV(x);
    if (*head == x) *head = TM_NEXT(x);
}

/* Take the whole list (the caller walks it with tm__list_shift). */
static inline tm_node *tm__list_shift(tm_node **head)
{
    tm_node *x = *head;
    if (x) tm__list_unlink(head, x);
    return x;
}

/* A wheel's tick: 1 ms. A deadline belongs to the tick at or after it (rounding up, so
 * nothing fires early); `now` is in the tick at or before it. */
enum { TM_TICK_NS = 1000000 };

static inline int64_t tm__tick_up(int64_t ns)
{
    int64_t q = ns / TM_TICK_NS;
    return q + (ns % TM_TICK_NS > 0);
}

static inline int64_t tm__tick_down(int64_t ns)
{
    int64_t q = ns / TM_TICK_NS;
    return q - (ns % TM_TICK_NS < 0);
}

/*
 * What both wheels keep besides their slots, first in each wheel's structure: the clock, the
 * due list (nodes whose slot's time has come, still armed, so cancellable, until popped), the
 * count and the arming order. A node on the due list has pos TM_DUE; otherwise pos names its
 * slot in the member's own terms.
 */
typedef struct tm_wheel {
    int64_t clk; /* the last tick processed: every slot up to it has been emptied */
    tm_node *due;
    size_t n;
    uint64_t seq;
} tm_wheel;

#define TM_DUE ((uint32_t)-1)

/* A zeroed wheel of `size` bytes (a structure starting with its tm_wheel) whose clock is now. */
static inline void *tm__wheel_new(size_t size, int64_t now)
{
    tm_wheel *w = calloc(1, size);
    if (w) w->clk = tm__tick_down(now);
    return w;
}

/* Arm x for deadline (the member then places it). */
static inline void tm__wheel_arm(tm_wheel *w, tm_node *x, int64_t deadline)
{
    x->deadline = deadline;
    x->seq = w->seq++;
    x->state = TM_ARMED;
    w->n++;
}

/* Put x, whose time has come, on the due list. */
static inline void tm__wheel_due(tm_wheel *w, tm_node *x)
{
    x->pos = TM_DUE;
    tm__list_append(&w->due, x);
}

/* Disarm x if armed, unlinking it from the due list if there; true when it sits in a slot, for
 * the member to unlink it there. */
static inline bool tm__wheel_cancel(tm_wheel *w, tm_node *x)
{
    if (x->state != TM_ARMED) return false;
    x->state = TM_IDLE;
    w->n--;
    if (x->pos != TM_DUE) return true;
    tm__list_unlink(&w->due, x);
    return false;
}

/* The earliest time a pop can return a node: the clock's tick while nodes are due, else the
 * tick next_tick finds (the first occupied slot after clk, or -1). */
static inline int64_t tm__wheel_earliest(const tm_wheel *w, int64_t (*next_tick)(const tm_wheel *))
{
    if (w->due) return w->clk * TM_TICK_NS;
    int64_t t = w->n ? next_tick(w) : -1;
    return t < 0 ? TM_NEVER : t * TM_TICK_NS;
}

/* The first due node, disarmed, or NULL (after the member has advanced its clock to now). */
static inline tm_node *tm__wheel_pop_due(tm_wheel *w)
{
    tm_node *x = tm__list_shift(&w->due);
    if (!x) return NULL;
    x->state = TM_IDLE;
    w->n--;
    return x;
}

static inline size_t tm__wheel_count(const void *st)
{
    return ((const tm_wheel *)st)->n;
}

#endif
