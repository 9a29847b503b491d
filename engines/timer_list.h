/* timer_list.h - internal: the circular node lists and the tick arithmetic the wheels share. */
#ifndef SWITCHYARD_TIMER_LIST_H
#define SWITCHYARD_TIMER_LIST_H

#include "timer.h"

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

#endif
