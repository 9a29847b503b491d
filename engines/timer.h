/* timer.h - the timer structures' contract: interchangeable timer queues for the fiber IO layer. */
#ifndef SWITCHYARD_TIMER_H
#define SWITCHYARD_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A timer structure keeps deadlines (CLOCK_MONOTONIC, ns) of nodes that live inside whatever
 * waits on them (the IO layer's record of a parked fiber), so arming allocates nothing per
 * timer. One instance per IO runtime, single-threaded. The IO layer arms a node when a fiber
 * sleeps or waits with a timeout, cancels it when the wait ends otherwise (IO ready, close),
 * asks for the earliest time something can come out (its poll timeout) and pops what is due.
 *
 * Every structure guarantees: nothing comes out before its deadline (never early), and a node
 * comes out exactly once per arming, or never when cancelled first. What else holds is
 * declared in tm_props and checked per member by engines/tests/test-timer.c:
 *   exact           pops at the deadline itself; then pops come in (deadline, arming) order;
 *   granularity_ns, max_rel_error
 *                   a rounded structure pops a node no later than
 *                   deadline + granularity_ns + max_rel_error * (deadline - now at arming),
 *                   when pop is called at every instant;
 *   fifo            nodes of equal deadline come out in arming order;
 *   arm, cancel, expire
 *                   the cost class of arming, cancelling and popping one node ("O(1)",
 *                   "O(log n)", ...; n nodes armed).
 */
typedef struct tm_props {
    bool exact;
    int64_t granularity_ns;
    double max_rel_error;
    bool fifo;
    const char *arm, *cancel, *expire;
} tm_props;

/* What the node times: an IO wait, a sleep, or a read deadline the IO layer keeps armed across
 * reads (io.c: armed once, moved only when it fires early). */
enum tm_kind { TM_WAIT, TM_SLEEP, TM_READ };
enum tm_state { TM_IDLE, TM_ARMED }; /* a popped or cancelled node is idle again */
#define TM_NEVER INT64_MAX           /* earliest() of an empty structure */

/*
 * The node. The owner sets `kind` (tm_node_init) and otherwise only reads `deadline` and
 * `state`; the rest belongs to the structure that holds the node while it is armed.
 */
typedef struct tm_node {
    int64_t deadline;        /* as armed */
    uint64_t seq;            /* arming order within the instance */
    struct tm_node *link[3]; /* the structure's: tree parent/left/right, list next/prev */
    uint32_t pos;            /* the structure's: heap index, wheel slot, tree colour */
    uint8_t state;           /* enum tm_state */
    uint8_t kind;            /* enum tm_kind */
} tm_node;

static inline void tm_node_init(tm_node *n, enum tm_kind kind)
{
    n->state = TM_IDLE;
    n->kind = (uint8_t)kind;
}

static inline bool tm_armed(const tm_node *n)
{
    return n->state == TM_ARMED;
}

typedef struct tm_ops {
    const char *name;    /* as chosen on command lines: "heap", "wheel", ... */
    const char *summary; /* one line: what the structure is, whose it is */
    tm_props props;
    /* A new instance whose clock starts at `now`; NULL with errno (ENOMEM). */
    void *(*init)(int64_t now);
    /* Free an instance; nodes still armed are dropped without being touched. */
    void (*free)(void *st);
    /* Arm the idle node n for `deadline`, `now` being the current time (deadline may be
     * earlier: the node is then due at once). 0, or -1 with errno ENOMEM. */
    int (*arm)(void *st, tm_node *n, int64_t deadline, int64_t now);
    /* Disarm n if it is armed, wherever it sits (also among the due nodes of a pop pass);
     * a no-op on an idle node (never armed, popped, cancelled). */
    void (*cancel)(void *st, tm_node *n);
    /* The earliest time at which pop can return a node (a rounded structure's rounded time,
     * never earlier than that node's deadline), TM_NEVER when none is armed. */
    int64_t (*earliest)(void *st);
    /* One node whose time has come at `now`, disarmed (idle) before it is returned, so the
     * caller may re-arm it or cancel others; NULL when none is due. Call repeatedly. */
    tm_node *(*pop)(void *st, int64_t now);
    /* Nodes armed. */
    size_t (*count)(const void *st);
} tm_ops;

/* Whether ops has every operation (a configuration may name a structure of its own). */
static inline bool tm_ops_valid(const tm_ops *ops)
{
    return ops->name && ops->init && ops->free && ops->arm && ops->cancel && ops->earliest &&
           ops->pop && ops->count;
}

/* The registry (engines/CMakeLists.txt), heap first: the default. */
size_t tm_count(void);
const tm_ops *tm_at(size_t i);
/* NULL for an unknown name. */
const tm_ops *tm_find(const char *name);
const tm_ops *tm_default(void);
/* "heap, heap4, ...", for error messages. */
const char *tm_names(void);

/* CLOCK_MONOTONIC now, in ns. */
int64_t tm_now(void);

#ifdef __cplusplus
}
#endif
#endif
