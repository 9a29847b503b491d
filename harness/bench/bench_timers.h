/* bench_timers.h - the timers/ loops of switch-bench and timer-icount: arm, cancel and expire on
 * one timer structure (engines/timer.h) holding a standing number of pending timers. */
#ifndef SWITCHYARD_BENCH_TIMERS_H
#define SWITCHYARD_BENCH_TIMERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Two workloads on a clock the loop moves (no sleeping), N timers pending throughout. A batch is
 * three phases, each timed apart: cancel C timers picked at random among the pending ones;
 * expire E (pop, moving the clock to earliest() whenever nothing is due, as an idle poller
 * would); arm the C + E nodes again. B = min(512, N / 2).
 *
 *   cancelled  IO timeouts, libco's pattern: every read arms a timeout that its data cancels.
 *              Timeouts uniform in [5 s, 15 s); C = B, E = max(1, B / 20): about 1 timer in 21
 *              runs out (an idle or slow client), the rest are cancelled after a random stay.
 *   firing     sleeps: timeouts uniform in [1 ms, 21 ms); E = B, C = max(1, B / 16): about
 *              1 in 17 is cancelled before it fires.
 *
 * The nodes are a contiguous array in a random order relative to their deadlines, so a cancel
 * touches a node and its neighbours in the structure that are not in cache for large N.
 */
typedef enum bt_workload { BT_CANCELLED, BT_FIRING, BT_WORKLOADS } bt_workload;
typedef enum bt_op { BT_ARM, BT_CANCEL, BT_EXPIRE, BT_OPS } bt_op;

typedef struct bt_timers {
    const tm_ops *ops;
    bt_workload workload;
    size_t pending; /* N, at least 2 */
    /* Called right before and right after the phase `hook_op` of every batch (timer-icount
     * toggles callgrind's collection there); NULL: none. */
    void (*hook)(void);
    bt_op hook_op;
    /* Set by bt_timers_init. */
    size_t per_batch[BT_OPS]; /* ops of each phase per batch: C + E arms, C cancels, E pops */
    int64_t last_ns[BT_OPS];  /* the last batch's time per phase (clock reads subtracted) */
    /* The last batch lost the CPU at some point (the thread's context switches moved): its
     * times hold another program's time slice. Counted over all batches in `preempted`. */
    bool last_preempted;
    uint64_t batches, preempted;
    uint64_t done[BT_OPS]; /* ops over all batches */
    void *st;
    tm_node *nodes;
    tm_node **todo;
    int64_t now;
    uint64_t rng;
    int64_t clock_ns; /* the cost of one clock read, subtracted from each phase */
} bt_timers;

/* C + E, C or E (the phase's ops per batch) for a workload and N; pending at least 2. */
size_t bt_timers_per_batch(bt_workload w, size_t pending, bt_op op);
/* Arm N timers and run enough batches for the structure to reach its steady state. 0, or -1
 * with errno. */
int bt_timers_init(bt_timers *b);
/* One batch: fills last_ns and adds to done. */
void bt_timers_batch(bt_timers *b);
void bt_timers_fini(bt_timers *b);

const char *bt_workload_name(bt_workload w); /* "cancelled", "firing" */
const char *bt_op_name(bt_op op);            /* "arm", "cancel", "expire" */
/* Parse a name; 0, or -1 for anything else. */
int bt_workload_parse(const char *name, bt_workload *out);
int bt_op_parse(const char *name, bt_op *out);

#ifdef __cplusplus
}
#endif
#endif
