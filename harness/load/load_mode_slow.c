/* echo-load --mode slow: slow clients made by the sender. A request goes out in --chunk bytes,
 * --chunk-delay apart, and a connection waits --think after an echo before its next request. */
#include "load_core.h"

#include <stdlib.h>

/* What a connection is waiting for on a timer, if anything. */
enum slot_wait { W_NONE, W_CHUNK, W_THINK };

/*
 * The timers. Every wait in one queue lasts the same time (the chunk delay, or the think time),
 * so appending keeps a queue in due order and a ring buffer is the whole timer structure. An
 * entry whose slot has moved on since (failed, reconnected) no longer matches the slot's wait_seq
 * and is dropped when it comes up.
 */
struct timed {
    unsigned slot;
    uint32_t seq;
};
struct fifo {
    struct timed *e;
    unsigned head, n, cap;
    int64_t delay;
    uint8_t kind; /* enum slot_wait */
};

struct slow {
    struct fifo chunkq, thinkq;
    struct {
        uint8_t wait; /* enum slot_wait */
        uint32_t wait_seq;
        int64_t wake_at;
    } * at; /* per slot */
};

static struct slow *slow_of(const struct ld_core *c)
{
    return c->mode_state;
}

static int slow_init(struct ld_core *c, const struct ld_share *sh)
{
    (void)sh;
    struct slow *sl = calloc(1, sizeof(*sl));
    c->mode_state = sl;
    if (!sl) return -1;
    sl->chunkq = (struct fifo){.delay = secs_ns(c->cfg->chunk_delay), .kind = W_CHUNK};
    sl->thinkq = (struct fifo){.delay = secs_ns(c->cfg->think), .kind = W_THINK};
    sl->at = calloc(c->nslots, sizeof(*sl->at));
    return sl->at ? 0 : -1;
}

static void slow_fini(struct ld_core *c)
{
    struct slow *sl = slow_of(c);
    if (!sl) return;
    free(sl->chunkq.e);
    free(sl->thinkq.e);
    free(sl->at);
    free(sl);
    c->mode_state = NULL;
}

static int fifo_push(struct fifo *q, unsigned slot, uint32_t seq)
{
    if (q->n == q->cap) {
        unsigned cap = q->cap ? 2 * q->cap : 64;
        struct timed *e = malloc(cap * sizeof(*e));
        if (!e) return -1;
        for (unsigned i = 0; i < q->n; i++)
            e[i] = q->e[(q->head + i) % q->cap];
        free(q->e);
        q->e = e;
        q->cap = cap;
        q->head = 0;
    }
    q->e[(q->head + q->n++) % q->cap] = (struct timed){slot, seq};
    return 0;
}

static void start_wait(struct ld_core *c, struct slot *s, struct fifo *q, int64_t now)
{
    unsigned i = slot_index(c, s);
    struct slow *sl = slow_of(c);
    sl->at[i].wait = q->kind;
    sl->at[i].wait_seq++;
    sl->at[i].wake_at = now + q->delay;
    if (fifo_push(q, i, sl->at[i].wait_seq) < 0) ld_core_fail(c, s, LD_ERR_IO, now);
}

/* The slot at the head of q, dropping the entries whose slot has moved on; NULL when empty. */
static struct slot *fifo_head(struct ld_core *c, struct fifo *q)
{
    struct slow *sl = slow_of(c);
    while (q->n > 0) {
        struct timed t = q->e[q->head];
        if (sl->at[t.slot].wait == q->kind && sl->at[t.slot].wait_seq == t.seq)
            return &c->slots[t.slot];
        q->head = (q->head + 1) % q->cap;
        q->n--;
    }
    return NULL;
}

static void fifo_pop(struct fifo *q)
{
    q->head = (q->head + 1) % q->cap;
    q->n--;
}

static int64_t wake_at(const struct ld_core *c, const struct slot *s)
{
    return slow_of(c)->at[slot_index(c, s)].wake_at;
}

static void slow_ready(struct ld_core *c, struct slot *s, int64_t now)
{
    if (may_start(c)) ld_core_begin(c, s, now, now);
}

static void slow_echoed(struct ld_core *c, struct slot *s, int64_t now)
{
    if (c->cfg->think > 0)
        start_wait(c, s, &slow_of(c)->thinkq, now);
    else
        slow_ready(c, s, now);
}

/* A failed slot's wait is over: its queue entry no longer matches. */
static bool slow_failed(struct ld_core *c, struct slot *s, int64_t now)
{
    (void)now;
    slow_of(c)->at[slot_index(c, s)].wait = W_NONE;
    return false;
}

/* The next chunk goes when the chunk delay is over. */
static void slow_paused(struct ld_core *c, struct slot *s, int64_t now)
{
    start_wait(c, s, &slow_of(c)->chunkq, now);
}

/* Send the next chunk of every connection whose chunk delay is over; start the next request of
 * every connection whose think time is over. */
static void slow_tick(struct ld_core *c, int64_t now)
{
    struct slow *sl = slow_of(c);
    struct slot *s;
    while ((s = fifo_head(c, &sl->chunkq)) && wake_at(c, s) <= now) {
        fifo_pop(&sl->chunkq);
        sl->at[slot_index(c, s)].wait = W_NONE;
        s->chunk_end = s->tx + c->cfg->chunk < s->req_end ? s->tx + c->cfg->chunk : s->req_end;
        ld_core_send(c, s, now);
    }
    while ((s = fifo_head(c, &sl->thinkq)) && wake_at(c, s) <= now) {
        fifo_pop(&sl->thinkq);
        sl->at[slot_index(c, s)].wait = W_NONE;
        if (s->state == S_READY && may_start(c)) ld_core_begin(c, s, now, now);
    }
}

/* The earlier of t and the first timed wait that is due. */
static int64_t slow_wake_by(struct ld_core *c, int64_t t)
{
    struct slow *sl = slow_of(c);
    struct slot *ch = fifo_head(c, &sl->chunkq), *th = fifo_head(c, &sl->thinkq);
    if (ch && wake_at(c, ch) < t) t = wake_at(c, ch);
    if (th && wake_at(c, th) < t) t = wake_at(c, th);
    return t;
}

const struct ld_mode_ops ld_mode_slow = {
    .name = "slow",
    .init = slow_init,
    .fini = slow_fini,
    .ready = slow_ready,
    .echoed = slow_echoed,
    .failed = slow_failed,
    .paused = slow_paused,
    .tick = slow_tick,
    .wake_by = slow_wake_by,
};
