/* peer_switchyard.c - the peer/switchyard rows: our fiber runtime in the peers' loops. */
#include "bench_loops.h"
#include "peer_loops.h"
#include "sync.h"

#include <errno.h>
#include <stdlib.h>

/* The backend our runtime runs on by default where it exists (as the servers do). */
static const sw_backend *default_backend(void)
{
    const sw_backend *b = sw_backend_find("asm");
    return b ? b : sw_backend_at(0);
}

/* The ring is the sched/ring/<backend> loop itself, so the two rows agree by construction. */
static int run_ring(peer_run *r)
{
    bool copy = !bl_guarded_fits(r->fibers);
    bl_sched s = {.policy = FB_RING,
                  .backend = default_backend(),
                  .fibers = r->fibers,
                  .stack_size = PEER_STACK,
                  .batch = r->batch / r->fibers,
                  .stack_mode = copy ? FB_STACK_COPY : FB_STACK_GUARDED,
                  .shared_stacks = copy ? 2 : 0,
                  .more = r->more,
                  .more_arg = r->more_arg};
    r->note = copy ? "copy mode, 2 shared stacks (guarded stacks exceed vm.max_map_count)"
                   : "guarded stacks";
    if (bl_sched_run(&s) != 0) return -1;
    r->units = (uint64_t)s.rounds * (uint64_t)r->fibers;
    return 0;
}

struct locks {
    peer_run *r;
    fb_mutex m;
    fb_cond c;
    int turn;  /* cond/contended: whose turn it is (0: the driver, 1: the partner) */
    long done; /* mutex/contended: pairs of either fiber in this batch */
    bool stop;
};

/* mutex/contended: both fibers run this; whichever completes a batch asks more(). */
static void contend(struct locks *l, bool second)
{
    peer_run *r = l->r;
    while (!l->stop) {
        fb_mutex_lock(&l->m);
        fb_yield();
        fb_mutex_unlock(&l->m);
        if (second) r->partner++;
        if (++l->done == r->batch) {
            l->done = 0;
            r->units += (uint64_t)r->batch;
            if (!r->more(r->more_arg)) l->stop = true;
        }
    }
}

static void driver(void *arg)
{
    struct locks *l = arg;
    peer_run *r = l->r;
    if (r->loop == PEER_MUTEX_CONTENDED) {
        if (r->more(r->more_arg))
            contend(l, false);
        else
            l->stop = true;
        return;
    }
    fb_yield(); /* the partner, if any, runs once first and waits where it will wait */
    while (r->more(r->more_arg)) {
        switch (r->loop) {
        case PEER_MUTEX_UNCONTENDED:
            for (long i = 0; i < r->batch; i++) {
                fb_mutex_lock(&l->m);
                fb_mutex_unlock(&l->m);
            }
            break;
        case PEER_COND_UNCONTENDED:
            for (long i = 0; i < r->batch; i++)
                fb_cond_signal(&l->c);
            break;
        case PEER_COND_CONTENDED:
            fb_mutex_lock(&l->m);
            for (long i = 0; i < r->batch; i += 2) { /* two hand-offs per turn of ours */
                while (l->turn != 0)
                    fb_cond_wait(&l->c, &l->m);
                l->turn = 1;
                fb_cond_signal(&l->c);
            }
            fb_mutex_unlock(&l->m);
            break;
        case PEER_RING: /* run elsewhere */
        case PEER_MUTEX_CONTENDED:
            abort();
        }
        r->units += (uint64_t)r->batch;
    }
    /* One thread, no preemption: the partner reads stop when it next runs. Taking the mutex
     * here would wait behind a partner that may never let go of it (a barging mutex). */
    l->stop = true;
    fb_cond_signal(&l->c);
}

static void partner(void *arg)
{
    struct locks *l = arg;
    if (l->r->loop == PEER_MUTEX_CONTENDED) {
        contend(l, true);
        return;
    }
    fb_mutex_lock(&l->m);
    for (;;) {
        while (l->turn != 1 && !l->stop)
            fb_cond_wait(&l->c, &l->m);
        if (l->stop) break;
        l->turn = 0;
        fb_cond_signal(&l->c);
    }
    fb_mutex_unlock(&l->m);
}

int peer_switchyard_run(peer_run *r)
{
    r->units = r->partner = 0;
    if (r->loop == PEER_RING) return run_ring(r);
    struct locks l = {.r = r};
    fb_mutex_init(&l.m);
    fb_cond_init(&l.c);
    fb_config cfg = {.backend = default_backend(),
                     .policy = FB_RING,
                     .stack_size = PEER_STACK,
                     .stack_mode = FB_STACK_GUARDED};
    fb_runtime *rt = fb_runtime_new(&cfg);
    if (!rt) return -1;
    bool two = r->loop == PEER_MUTEX_CONTENDED || r->loop == PEER_COND_CONTENDED;
    int rc = fb_spawn(rt, driver, &l) && (!two || fb_spawn(rt, partner, &l)) ? fb_run(rt) : -1;
    int saved = errno;
    fb_runtime_free(rt);
    errno = saved;
    r->note = "guarded stacks";
    if (rc == 0 && (fb_mutex_destroy(&l.m) != 0 || fb_cond_destroy(&l.c) != 0)) {
        errno = EBUSY; /* a loop left the lock held or a fiber waiting: a broken row */
        rc = -1;
    }
    return rc;
}
