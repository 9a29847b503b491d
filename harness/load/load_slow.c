/* echo-load's slow mode: the timed waits between a request's chunks and before a connection's
 * next request. */
#include "load_worker.h"

#include <stdlib.h>

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

void ld__start_wait(struct worker *w, struct slot *s, struct fifo *q, int64_t now)
{
    s->wait = q->kind;
    s->wait_seq++;
    s->wake_at = now + q->delay;
    if (fifo_push(q, (unsigned)(s - w->slots), s->wait_seq) < 0)
        ld__slot_fail(w, s, LD_ERR_IO, now);
}

/* The entry at the head of q, dropping those whose slot has moved on; NULL when empty. */
static struct slot *fifo_head(struct worker *w, struct fifo *q)
{
    while (q->n > 0) {
        struct timed t = q->e[q->head];
        struct slot *s = &w->slots[t.slot];
        if (s->wait == q->kind && s->wait_seq == t.seq) return s;
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

/* Send the next chunk of every connection whose chunk delay is over; start the next request of
 * every connection whose think time is over. */
void ld__run_timers(struct worker *w, int64_t now)
{
    struct slot *s;
    while ((s = fifo_head(w, &w->chunkq)) && s->wake_at <= now) {
        fifo_pop(&w->chunkq);
        s->wait = W_NONE;
        s->chunk_end = s->tx + w->cfg->chunk < s->req_end ? s->tx + w->cfg->chunk : s->req_end;
        ld__send_some(w, s, now);
    }
    while ((s = fifo_head(w, &w->thinkq)) && s->wake_at <= now) {
        fifo_pop(&w->thinkq);
        s->wait = W_NONE;
        if (s->state == S_READY && may_start(w)) ld__begin_request(w, s, now, now);
    }
}

int64_t ld__timers_due(struct worker *w, int64_t t)
{
    struct slot *c = fifo_head(w, &w->chunkq), *k = fifo_head(w, &w->thinkq);
    if (c && c->wake_at < t) t = c->wake_at;
    if (k && k->wake_at < t) t = k->wake_at;
    return t;
}
