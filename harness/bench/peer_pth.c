/* peer_pth.c - the peer/pth rows: GNU Pth threads in the loops of peer_loops.h.
 *
 * Pth shares switch-bench's process. It keeps one scheduler per process in global state and
 * wraps no libc call here (Debian's libpth exports only pth_* symbols: soft and hard system
 * call mapping are both off, so fiberhook's read/write and Pth never meet). Its rule is that
 * one OS thread calls it: pth_init makes the calling thread Pth's main thread and pth_kill
 * turns it back into a plain one, so each run brackets itself with the two on the benchmark's
 * thread. Google Benchmark starts no thread for these rows, and the rows that start
 * pthreads (kernel/, sync/.../threads:2) join them before they end, so no other thread
 * runs while Pth does; a Pth thread's signal mask is the OS thread's own (pthread_sigmask
 * semantics of sigprocmask under glibc), so nothing leaks to other threads either.
 */
#include "peer_loops.h"

#include <errno.h>
#include <pth.h>
#include <stdlib.h>

struct pth_state {
    peer_run *r;
    pth_mutex_t m;
    pth_cond_t c;
    int turn;  /* cond/contended: whose turn it is (0: the driver, 1: the partner) */
    long done; /* mutex/contended: pairs of either thread in this batch */
    bool stop;
};

static void *ring_driver(void *arg)
{
    struct pth_state *s = arg;
    peer_run *r = s->r;
    if (s->stop) return NULL; /* a spawn failed */
    pth_yield(NULL);          /* warm-up round: every thread runs once */
    long rounds = r->batch / r->fibers;
    while (r->more(r->more_arg)) {
        for (long i = 0; i < rounds; i++)
            pth_yield(NULL);
        r->units += (uint64_t)(rounds * r->fibers);
    }
    s->stop = true;
    return NULL;
}

static void *ring_peer(void *arg)
{
    struct pth_state *s = arg;
    while (!s->stop)
        pth_yield(NULL);
    return NULL;
}

/* mutex/contended: both threads run this; whichever completes a batch asks more(). */
static void contend(struct pth_state *s, bool second)
{
    peer_run *r = s->r;
    while (!s->stop) {
        pth_mutex_acquire(&s->m, FALSE, NULL);
        pth_yield(NULL);
        pth_mutex_release(&s->m);
        if (second) r->partner++;
        if (++s->done == r->batch) {
            s->done = 0;
            r->units += (uint64_t)r->batch;
            if (!r->more(r->more_arg)) s->stop = true;
        }
    }
}

static void *lock_driver(void *arg)
{
    struct pth_state *s = arg;
    peer_run *r = s->r;
    if (s->stop) return NULL; /* a spawn failed */
    if (r->loop == PEER_MUTEX_CONTENDED) {
        if (r->more(r->more_arg))
            contend(s, false);
        else
            s->stop = true;
        return NULL;
    }
    pth_yield(NULL); /* the partner, if any, runs once first */
    while (r->more(r->more_arg)) {
        switch (r->loop) {
        case PEER_MUTEX_UNCONTENDED:
            for (long i = 0; i < r->batch; i++) {
                pth_mutex_acquire(&s->m, FALSE, NULL);
                pth_mutex_release(&s->m);
            }
            break;
        case PEER_COND_UNCONTENDED:
            for (long i = 0; i < r->batch; i++)
                pth_cond_notify(&s->c, FALSE);
            break;
        case PEER_COND_CONTENDED:
            pth_mutex_acquire(&s->m, FALSE, NULL);
            for (long i = 0; i < r->batch; i += 2) { /* two hand-offs per turn of ours */
                while (s->turn != 0)
                    pth_cond_await(&s->c, &s->m, NULL);
                s->turn = 1;
                pth_cond_notify(&s->c, FALSE);
            }
            pth_mutex_release(&s->m);
            break;
        case PEER_RING: /* run elsewhere */
        case PEER_MUTEX_CONTENDED:
            abort();
        }
        r->units += (uint64_t)r->batch;
    }
    /* One thread, no preemption: the partner reads stop when it next runs. Taking the mutex
     * here would wait behind a partner that never lets go of it (Pth's release lets the
     * releaser take it straight back, before the waiter runs). */
    s->stop = true;
    pth_cond_notify(&s->c, FALSE);
    return NULL;
}

static void *lock_partner(void *arg)
{
    struct pth_state *s = arg;
    if (s->r->loop == PEER_MUTEX_CONTENDED) {
        contend(s, true);
        return NULL;
    }
    pth_mutex_acquire(&s->m, FALSE, NULL);
    for (;;) {
        while (s->turn != 1 && !s->stop)
            pth_cond_await(&s->c, &s->m, NULL);
        if (s->stop) break;
        s->turn = 0;
        pth_cond_notify(&s->c, FALSE);
    }
    pth_mutex_release(&s->m);
    return NULL;
}

int peer_pth_run(peer_run *r)
{
    r->units = r->partner = 0;
    r->note = "malloc'd stacks, no guard page (Pth's own)";
    bool ring = r->loop == PEER_RING;
    long n = ring ? r->fibers
                  : (r->loop == PEER_MUTEX_CONTENDED || r->loop == PEER_COND_CONTENDED ? 2 : 1);
    pth_t *threads = calloc((size_t)n, sizeof *threads);
    if (!threads) return -1;
    if (!pth_init()) {
        free(threads);
        return -1;
    }
    struct pth_state s = {.r = r};
    pth_mutex_init(&s.m);
    pth_cond_init(&s.c);
    pth_attr_t attr = pth_attr_new();
    int rc = attr && pth_attr_set(attr, PTH_ATTR_STACK_SIZE, (unsigned int)PEER_STACK) &&
                     pth_attr_set(attr, PTH_ATTR_JOINABLE, TRUE)
                 ? 0
                 : -1;
    /* Spawned threads wait in the ready queue until the main thread first waits (join). */
    long spawned = 0;
    for (; rc == 0 && spawned < n; spawned++) {
        void *(*fn)(void *) =
            spawned == 0 ? (ring ? ring_driver : lock_driver) : (ring ? ring_peer : lock_partner);
        if (!(threads[spawned] = pth_spawn(attr, fn, &s))) rc = -1;
    }
    int saved = errno;
    if (rc != 0) s.stop = true; /* every thread that was spawned ends at once */
    for (long i = 0; i < spawned; i++)
        if (threads[i]) pth_join(threads[i], NULL);
    if (attr) pth_attr_destroy(attr);
    pth_kill();
    free(threads);
    errno = saved;
    return rc;
}
