/* echo-load's ramp-up: every connection echoes once before the run's measured window is set,
 * at one instant for every worker of every process. */
#include "load_worker.h"

/* The measured part of the run starts at `start`: the end of the ramp-up, or the start. */
void ld__set_window(struct worker *w, int64_t start)
{
    const struct ld_config *cfg = w->cfg;
    w->t_measure = start + secs_ns(cfg->warmup);
    w->t_cap = start + secs_ns(cfg->max_time);
    w->t_end = cfg->requests ? w->t_cap : w->t_measure + secs_ns(cfg->duration);
    if (cfg->rate > 0) {
        /* Workers start their schedules spread over one interval, not all at one instant. */
        w->sched0 = start + (int64_t)(w->interval * w->idx / w->nthreads);
        w->next_due = w->sched0;
        w->due_k = 0;
    }
}

void ld__first_echo_done(struct worker *w, struct slot *s, int64_t now)
{
    struct ld_ramp *r = &w->res.ramp;
    if (!s->ramped) {
        s->ramped = true;
        w->ramp_left--;
        r->ready++;
        r->last_ready = now;
        ld_hist_record(&r->first_echo, (uint64_t)(now - s->t_start));
    }
    s->state = S_READY;
}

/* Is the ramp-up over for the whole run? It is once every worker of every process has its
 * connections echoed once, or at the common deadline; then the window is set from then. */
bool ld__ramp_over(struct worker *w, int64_t now)
{
    struct ld_sync *sy = w->sync;
    int64_t none = 0;
    if (w->ramp_left == 0 && !w->ramp_reported) {
        w->ramp_reported = true;
        if (atomic_fetch_add(&sy->ramped, 1) + 1 == sy->workers)
            atomic_compare_exchange_strong(&sy->done_ns, &none, now);
    }
    none = 0;
    if (now >= w->ramp_deadline)
        atomic_compare_exchange_strong(&sy->done_ns, &none, w->ramp_deadline);
    int64_t done = atomic_load(&sy->done_ns);
    if (!done) return false;
    /* A coordinated run (--agent): the ramp-up is over here, and the window starts when the
     * coordinator says so (load_agent.c sets started_ns). */
    int64_t start = sy->barrier ? atomic_load(&sy->started_ns) : done;
    if (!start) return false;
    w->res.ramp.done = done;
    w->res.ramp.unfinished = w->ramp_left;
    ld__set_window(w, start);
    w->phase = PH_WARMUP;
    w->restart = true;
    return true;
}

/* After the ramp-up: every connection that is ready starts its requests (closed loop) or joins the
 * idle list (rate mode). */
void ld__start_after_ramp(struct worker *w, int64_t now)
{
    for (unsigned i = 0; i < w->nslots; i++) {
        struct slot *s = &w->slots[i];
        if (s->state == S_READY) ld__put_to_work(w, s, now);
    }
}
