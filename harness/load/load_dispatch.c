/* echo-load's request dispatch beyond one at a time: pipelining (--pipeline K) and the rate
 * schedule (--rate). */
#include "load_worker.h"

/* ---- pipelining (--pipeline K > 1) ----------------------------------------------------------- */

/*
 * Each connection keeps K requests in flight, sent back to back: a ring of K entries per slot
 * in stream order, so the echo's stream offset tells which request a byte completes. The
 * verification is the same as with one request (the connection's bytes are one payload
 * stream whatever the request boundaries); only completion and latency are per request.
 */
struct ld_inflight *ld__pipe_at(struct worker *w, struct slot *s, unsigned k)
{
    unsigned K = w->cfg->pipeline;
    return &w->pipe[(size_t)(s - w->slots) * K + (s->p_head + k) % K];
}

/* Start requests on the slot until K are in flight or no more may start, then send them. */
void ld__pipe_fill(struct worker *w, struct slot *s, int64_t now)
{
    bool started = false;
    while (s->p_count < w->cfg->pipeline && may_start(w)) {
        if (s->p_count == 0) {
            s->busy = true;
            s->state = S_ACTIVE;
            s->req_end = s->tx;
            s->deadline = now + secs_ns(w->cfg->timeout);
        }
        struct ld_inflight *q = ld__pipe_at(w, s, s->p_count++);
        q->t_start = now;
        q->counted = w->phase == PH_MEASURE;
        if (q->counted && w->cfg->requests) w->issued++;
        s->req_end += w->cfg->size;
        s->chunk_end = s->req_end; /* pingpong only: every request goes whole */
        q->end = s->req_end;
        w->inflight++;
        started = true;
    }
    if (started) ld__send_some(w, s, now);
}

/* Complete every request whose echo is now whole, and start as many new ones. */
void ld__pipe_progress(struct worker *w, struct slot *s, int64_t now)
{
    bool done = false;
    /* The caller's clock was read before its receive loop, which with several requests in
     * flight may already have completed and started others: read it afresh. */
    now = ld_now_ns();
    while (s->p_count && s->rx >= ld__pipe_at(w, s, 0)->end) {
        struct ld_inflight *q = ld__pipe_at(w, s, 0);
        s->p_head = (uint16_t)((s->p_head + 1) % w->cfg->pipeline);
        s->p_count--;
        w->inflight--;
        done = true;
        if (!q->counted) continue;
        w->res.requests++;
        w->res.bytes += w->cfg->size;
        ld_hist_record(&w->res.lat, (uint64_t)(now - q->t_start));
        w->last_done = now;
    }
    if (!done) return;
    if (s->p_count) {
        s->deadline = ld__pipe_at(w, s, 0)->t_start + secs_ns(w->cfg->timeout);
    } else {
        s->busy = false;
        s->state = S_READY;
    }
    ld__pipe_fill(w, s, now);
}

/* ---- the rate schedule (--rate R) ------------------------------------------------------------ */

/* The worker's requests fall due at fixed intervals from its schedule's start, whenever they are
 * really sent, so a late send does not shift the ones after it. */
void ld__advance_due(struct worker *w)
{
    w->due_k++;
    w->next_due = w->sched0 + (int64_t)((double)w->due_k * w->interval);
}

/* Sends every request that is due, each on the connection that has been free longest. */
void ld__dispatch_due(struct worker *w, int64_t now)
{
    uint8_t free_state = w->cfg->mode == LD_CHURN ? S_IDLE : S_READY;
    while (w->next_due <= now && w->nidle > 0 && may_dispatch(w, w->next_due)) {
        struct slot *s = &w->slots[w->idle[w->idle_head]];
        w->idle_head = (w->idle_head + 1) % w->nslots;
        w->nidle--;
        s->in_idle = false;
        /* A stale entry (the slot failed and is reconnecting) is dropped; it is listed again
         * once it is free. */
        if (s->state != free_state) continue;
        ld__begin_request(w, s, now, w->next_due);
        ld__advance_due(w);
    }
}
