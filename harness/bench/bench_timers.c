/* bench_timers.c - the timers/ loops: arm, cancel and expire on one timer structure. */
#define _GNU_SOURCE
#include "bench_timers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MS  ((int64_t)1000000)
#define SEC ((int64_t)1000000000)

static int64_t clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static uint64_t next_rand(bt_timers *b)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return b->rng;
}

/* The timeout of one arming, from the workload's stated distribution (bench_timers.h). */
static int64_t draw_timeout(bt_timers *b)
{
    uint64_t r = next_rand(b);
    return b->workload == BT_CANCELLED ? 5 * SEC + (int64_t)(r % (uint64_t)(10 * SEC))
                                       : 1 * MS + (int64_t)(r % (uint64_t)(20 * MS));
}

static void arm_one(bt_timers *b, tm_node *t)
{
    /* The structures that allocate (the heaps' arrays) grew at init: arming cannot fail here. */
    (void)b->ops->arm(b->st, t, b->now + draw_timeout(b), b->now);
}

/* The hook runs inside the timed span and the clock reads outside the counted one. */
static int64_t phase_start(bt_timers *b, bt_op op)
{
    int64_t t = clock_now();
    if (b->hook && b->hook_op == op) b->hook();
    return t;
}

static void phase_end(bt_timers *b, bt_op op, int64_t start)
{
    if (b->hook && b->hook_op == op) b->hook();
    int64_t ns = clock_now() - start - b->clock_ns;
    b->last_ns[op] = ns > 0 ? ns : 0;
    b->done[op] += b->per_batch[op];
}

/* Context switches of the calling thread so far, voluntary or not. */
static long switches_so_far(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

void bt_timers_batch(bt_timers *b)
{
    const tm_ops *ops = b->ops;
    size_t c = b->per_batch[BT_CANCEL], e = b->per_batch[BT_EXPIRE], k = 0;
    long switched = switches_so_far();

    int64_t t = phase_start(b, BT_CANCEL);
    while (k < c) {
        tm_node *x = &b->nodes[next_rand(b) % b->pending];
        if (!tm_armed(x)) continue; /* cancelled a moment ago: pick again */
        ops->cancel(b->st, x);
        b->todo[k++] = x;
    }
    phase_end(b, BT_CANCEL, t);

    t = phase_start(b, BT_EXPIRE);
    for (size_t got = 0; got < e;) {
        tm_node *x = ops->pop(b->st, b->now);
        if (x) {
            b->todo[k++] = x;
            got++;
            continue;
        }
        int64_t next = ops->earliest(b->st);
        b->now = next > b->now ? next : b->now + 1;
    }
    phase_end(b, BT_EXPIRE, t);

    t = phase_start(b, BT_ARM);
    for (size_t i = 0; i < k; i++)
        arm_one(b, b->todo[i]);
    phase_end(b, BT_ARM, t);

    b->last_preempted = switches_so_far() != switched;
    b->batches++;
    b->preempted += b->last_preempted;
}

size_t bt_timers_per_batch(bt_workload w, size_t pending, bt_op op)
{
    size_t batch = pending / 2 < 512 ? pending / 2 : 512;
    size_t c = w == BT_CANCELLED ? batch : (batch / 16 ? batch / 16 : 1);
    size_t e = w == BT_CANCELLED ? (batch / 20 ? batch / 20 : 1) : batch;
    return op == BT_CANCEL ? c : op == BT_EXPIRE ? e : c + e;
}

int bt_timers_init(bt_timers *b)
{
    if (!b->ops || b->pending < 2 || b->workload >= BT_WORKLOADS) {
        errno = EINVAL;
        return -1;
    }
    size_t c = bt_timers_per_batch(b->workload, b->pending, BT_CANCEL);
    size_t e = bt_timers_per_batch(b->workload, b->pending, BT_EXPIRE);
    for (int op = 0; op < BT_OPS; op++)
        b->per_batch[op] = bt_timers_per_batch(b->workload, b->pending, (bt_op)op);
    b->rng = 0x2545f4914f6cdd1dull ^ b->pending;
    b->now = clock_now();
    b->st = b->ops->init(b->now);
    b->nodes = calloc(b->pending, sizeof *b->nodes);
    b->todo = calloc(c + e, sizeof *b->todo);
    if (!b->st || !b->nodes || !b->todo) {
        bt_timers_fini(b);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < b->pending; i++) {
        tm_node_init(&b->nodes[i], b->workload == BT_FIRING ? TM_SLEEP : TM_WAIT);
        if (b->ops->arm(b->st, &b->nodes[i], b->now + draw_timeout(b), b->now) < 0) {
            bt_timers_fini(b);
            return -1;
        }
    }
    /* The cost of the clock read that ends a phase: the least of many, a conservative guess. */
    b->clock_ns = INT64_MAX;
    for (int i = 0; i < 1000; i++) {
        int64_t a = clock_now(), d = clock_now() - a;
        if (d < b->clock_ns) b->clock_ns = d;
    }
    /* Steady state: every timer re-armed about twice (at most 2000 batches). */
    size_t warm = 2 * b->pending / (c + e);
    void (*hook)(void) = b->hook;
    b->hook = NULL;
    for (size_t i = 0; i < (warm < 2000 ? warm : 2000); i++)
        bt_timers_batch(b);
    b->hook = hook;
    memset(b->done, 0, sizeof b->done);
    b->batches = b->preempted = 0;
    return 0;
}

void bt_timers_fini(bt_timers *b)
{
    if (b->st) b->ops->free(b->st);
    free(b->nodes);
    free(b->todo);
    b->st = NULL;
    b->nodes = NULL;
    b->todo = NULL;
}

static const char *const workload_names[BT_WORKLOADS] = {"cancelled", "firing"};
static const char *const op_names[BT_OPS] = {"arm", "cancel", "expire"};

const char *bt_workload_name(bt_workload w)
{
    return w < BT_WORKLOADS ? workload_names[w] : "?";
}

const char *bt_op_name(bt_op op)
{
    return op < BT_OPS ? op_names[op] : "?";
}

int bt_workload_parse(const char *name, bt_workload *out)
{
    for (int i = 0; i < BT_WORKLOADS; i++)
        if (strcmp(name, workload_names[i]) == 0) return *out = (bt_workload)i, 0;
    return -1;
}

int bt_op_parse(const char *name, bt_op *out)
{
    for (int i = 0; i < BT_OPS; i++)
        if (strcmp(name, op_names[i]) == 0) return *out = (bt_op)i, 0;
    return -1;
}
