/* echo-load --rate R: the open loop. Requests fall due at fixed intervals, whether or not earlier
 * ones came back, and each leaves on the connection that has been free the longest. */
#include "load_core.h"

#include <stdlib.h>

struct rate {
    /* Slots free for the next due request, first in first out, so requests rotate over every
     * connection instead of reusing the few most recently freed. */
    unsigned *idle;
    bool *listed; /* per slot: in `idle` (an entry may be stale: the slot failed since) */
    unsigned nidle, idle_head;
    double interval; /* ns between this worker's requests */
    int64_t sched0;  /* this worker's schedule starts here */
    uint64_t due_k;
    int64_t next_due;
};

static struct rate *rate_of(const struct ld_core *c)
{
    return c->mode_state;
}

static int rate_init(struct ld_core *c, const struct ld_share *sh)
{
    struct rate *r = calloc(1, sizeof(*r));
    c->mode_state = r;
    if (!r) return -1;
    r->idle = calloc(c->nslots, sizeof(*r->idle));
    r->listed = calloc(c->nslots, sizeof(*r->listed));
    if (!r->idle || !r->listed) return -1;
    r->interval = NS_PER_S / (sh->rate * c->nslots / sh->conns);
    return 0;
}

static void rate_fini(struct ld_core *c)
{
    struct rate *r = rate_of(c);
    if (!r) return;
    free(r->idle);
    free(r->listed);
    free(r);
    c->mode_state = NULL;
}

/* Workers start their schedules spread over one interval, not all at one instant. */
static void rate_window(struct ld_core *c, int64_t start)
{
    struct rate *r = rate_of(c);
    r->sched0 = start + (int64_t)(r->interval * c->idx / c->nthreads);
    r->next_due = r->sched0;
    r->due_k = 0;
}

/* The slot waits in the idle list for the next due request. */
static void rate_ready(struct ld_core *c, struct slot *s, int64_t now)
{
    (void)now;
    struct rate *r = rate_of(c);
    unsigned i = slot_index(c, s);
    if (!r->listed[i]) {
        r->listed[i] = true;
        r->idle[(r->idle_head + r->nidle++) % c->nslots] = i;
    }
}

/* The latency from the send, beside the one from the due time the core records. */
static void rate_echoed(struct ld_core *c, struct slot *s, int64_t now)
{
    if (s->counted) ld_hist_record(&c->res.lat_unc, (uint64_t)(now - s->t_start));
    rate_ready(c, s, now);
}

static bool rate_counts(const struct ld_core *c, int64_t due)
{
    return due >= c->t_measure;
}

/* A churn slot that failed waits idle for its next turn; a persistent one reconnects. */
static bool rate_failed(struct ld_core *c, struct slot *s, int64_t now)
{
    if (c->cfg->mode != LD_CHURN) return false;
    s->state = S_IDLE;
    rate_ready(c, s, now);
    return true;
}

/*
 * May the request due at `due` still be sent? The warm-up part of the schedule always may; the
 * measured part ends with the window or the request quota.
 */
static bool may_dispatch(const struct ld_core *c, int64_t due)
{
    if (c->phase == PH_STOP || c->phase == PH_RAMP) return false;
    if (due < c->t_measure) return true;
    if (c->cfg->requests) return c->issued < c->quota;
    return due < c->t_end;
}

/* The worker's requests fall due at fixed intervals from its schedule's start, whenever they are
 * really sent, so a late send does not shift the ones after it. */
static void advance_due(struct rate *r)
{
    r->due_k++;
    r->next_due = r->sched0 + (int64_t)((double)r->due_k * r->interval);
}

/* Sends every request that is due, each on the connection that has been free longest. */
static void rate_tick(struct ld_core *c, int64_t now)
{
    struct rate *r = rate_of(c);
    uint8_t free_state = c->cfg->mode == LD_CHURN ? S_IDLE : S_READY;
    while (r->next_due <= now && r->nidle > 0 && may_dispatch(c, r->next_due)) {
        unsigned i = r->idle[r->idle_head];
        struct slot *s = &c->slots[i];
        r->idle_head = (r->idle_head + 1) % c->nslots;
        r->nidle--;
        r->listed[i] = false;
        /* A stale entry (the slot failed and is reconnecting) is dropped; it is listed again
         * once it is free. */
        if (s->state != free_state) continue;
        if (r->next_due >= c->t_measure) /* how late the send is against the schedule */
            ld_hist_record(&c->res.lag, (uint64_t)(now - r->next_due));
        ld_core_begin(c, s, now, r->next_due);
        advance_due(r);
    }
}

static int64_t rate_wake_by(struct ld_core *c, int64_t t)
{
    const struct rate *r = rate_of(c);
    return r->nidle > 0 && r->next_due < t ? r->next_due : t;
}

static bool rate_backlog(const struct ld_core *c, int64_t now)
{
    const struct rate *r = rate_of(c);
    return may_dispatch(c, r->next_due) && r->next_due <= now;
}

static uint64_t rate_unsent(struct ld_core *c)
{
    struct rate *r = rate_of(c);
    uint64_t n = 0;
    while (r->next_due < c->t_end && r->next_due < c->stop_time) {
        if (r->next_due >= c->t_measure) n++;
        advance_due(r);
    }
    return n;
}

const struct ld_mode_ops ld_mode_rate = {
    .name = "rate",
    .open_loop = true,
    .init = rate_init,
    .fini = rate_fini,
    .window = rate_window,
    .ready = rate_ready,
    .echoed = rate_echoed,
    .counts = rate_counts,
    .failed = rate_failed,
    .tick = rate_tick,
    .wake_by = rate_wake_by,
    .backlog = rate_backlog,
    .unsent = rate_unsent,
};
