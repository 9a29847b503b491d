/* echo-load --pipeline K > 1: each connection keeps K requests in flight, sent back to back. */
#include "load_core.h"

#include <stdlib.h>

/* One request in flight, in stream order. */
struct inflight {
    uint64_t end; /* stream offset just past its last byte */
    int64_t t_start;
    bool counted;
};

/*
 * A ring of K entries per slot in stream order, so the echo's stream offset tells which request
 * a byte completes. The verification is the core's, the same as with one request (the
 * connection's bytes are one payload stream whatever the request boundaries); only completion
 * and latency are per request.
 */
struct pipeline {
    struct inflight *ring; /* K entries per slot */
    struct {
        uint16_t head, count;
    } * at; /* per slot: its oldest entry and how many are in flight */
};

static struct pipeline *pipe_of(const struct ld_core *c)
{
    return c->mode_state;
}

static int pipe_init(struct ld_core *c, const struct ld_share *sh)
{
    (void)sh;
    struct pipeline *p = calloc(1, sizeof(*p));
    c->mode_state = p;
    if (!p) return -1;
    p->ring = calloc((size_t)c->nslots * c->cfg->pipeline, sizeof(*p->ring));
    p->at = calloc(c->nslots, sizeof(*p->at));
    return p->ring && p->at ? 0 : -1;
}

static void pipe_fini(struct ld_core *c)
{
    struct pipeline *p = pipe_of(c);
    if (!p) return;
    free(p->ring);
    free(p->at);
    free(p);
    c->mode_state = NULL;
}

/* The slot's k-th request in flight, oldest first. */
static struct inflight *pipe_at(struct ld_core *c, unsigned slot, unsigned k)
{
    unsigned K = c->cfg->pipeline;
    return &pipe_of(c)->ring[(size_t)slot * K + (pipe_of(c)->at[slot].head + k) % K];
}

/* Start requests on the slot until K are in flight or no more may start, then send them. */
static void pipe_fill(struct ld_core *c, struct slot *s, int64_t now)
{
    unsigned i = slot_index(c, s);
    uint16_t *count = &pipe_of(c)->at[i].count;
    bool started = false;
    while (*count < c->cfg->pipeline && may_start(c)) {
        if (*count == 0) {
            s->busy = true;
            s->state = S_ACTIVE;
            s->req_end = s->tx;
            s->deadline = now + secs_ns(c->cfg->timeout);
        }
        struct inflight *q = pipe_at(c, i, (*count)++);
        q->t_start = now;
        q->counted = c->phase == PH_MEASURE;
        if (q->counted && c->cfg->requests) c->issued++;
        s->req_end += c->cfg->size;
        s->chunk_end = s->req_end; /* every request goes whole */
        q->end = s->req_end;
        c->inflight++;
        started = true;
    }
    if (started) ld_core_send(c, s, now);
}

/* Complete every request whose echo is now whole, and start as many new ones. */
static enum ld_took pipe_received(struct ld_core *c, struct slot *s, int64_t now)
{
    unsigned i = slot_index(c, s);
    struct pipeline *p = pipe_of(c);
    if (p->at[i].count == 0) return LD_NOT_MINE; /* a ramp-up echo goes alone */
    bool done = false;
    /* The caller's clock was read before its receive loop, which with several requests in
     * flight may already have completed and started others: read it afresh. */
    now = ld_now_ns();
    while (p->at[i].count && s->rx >= pipe_at(c, i, 0)->end) {
        struct inflight *q = pipe_at(c, i, 0);
        p->at[i].head = (uint16_t)((p->at[i].head + 1) % c->cfg->pipeline);
        p->at[i].count--;
        c->inflight--;
        done = true;
        if (!q->counted) continue;
        c->res.requests++;
        c->res.bytes += c->cfg->size;
        ld_hist_record(&c->res.lat, (uint64_t)(now - q->t_start));
        c->last_done = now;
    }
    if (done) {
        if (p->at[i].count) {
            s->deadline = pipe_at(c, i, 0)->t_start + secs_ns(c->cfg->timeout);
        } else {
            s->busy = false;
            s->state = S_READY;
        }
        pipe_fill(c, s, now);
    }
    return s->state == S_ACTIVE ? LD_READ_ON : LD_STOP;
}

static unsigned pipe_drop(struct ld_core *c, struct slot *s, uint64_t *counted)
{
    unsigned i = slot_index(c, s);
    unsigned n = pipe_of(c)->at[i].count;
    for (unsigned k = 0; counted && k < n; k++)
        *counted += pipe_at(c, i, k)->counted;
    pipe_of(c)->at[i].count = 0;
    return n;
}

const struct ld_mode_ops ld_mode_pipeline = {
    .name = "pipeline",
    .init = pipe_init,
    .fini = pipe_fini,
    .ready = pipe_fill,
    .echoed = pipe_fill,
    .received = pipe_received,
    .drop = pipe_drop,
};
