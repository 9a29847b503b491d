/* bench_hook.c - hooked against direct fiber calls, and fiber locks against a pthread mutex. */
#define _GNU_SOURCE
#include "bench_hook.h"

#include "hook.h"
#include "io.h"
#include "sync.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096

static const sw_backend *bench_backend(void)
{
    const sw_backend *b = sw_backend_find("asm");
    return b ? b : sw_backend_find("ucontext");
}

/* A runtime with fiber IO on the calling thread; fn(arg) runs in its one fiber. */
static int run_in_fiber(void (*fn)(void *), void *arg)
{
    fb_io *io = fb_io_new("merged");
    if (!io) return -1;
    fb_config cfg = {.backend = bench_backend(), .policy = FB_RING, .poller = fb_io_poller(io)};
    fb_runtime *rt = fb_runtime_new(&cfg);
    int rc = rt && fb_spawn(rt, fn, arg) ? fb_run(rt) : -1;
    int saved = errno;
    if (rt) fb_runtime_free(rt);
    fb_io_free(io);
    errno = saved;
    return rc;
}

/* ---- hook/ --------------------------------------------------------------------------------- */

struct io_state {
    bh_io *b;
    int rd, wr;
    int rc;
};

/* Keep the pipe ready for the next batch: refill what the reads took, drain what the
 * writes put in, with one raw system call in every variant alike. */
static void io_refill(struct io_state *s, long n)
{
    static char page[PAGE];
    if (s->b->call == BH_READ)
        s->rc |= syscall(SYS_write, s->wr, page, (size_t)n) != n;
    else
        s->rc |= syscall(SYS_read, s->rd, page, (size_t)n) != n;
}

/* One loop per variant, so each timed call is a direct call of exactly one function. */
#define IO_LOOP(call_expr)                                                                         \
    do {                                                                                           \
        char c = 'x';                                                                              \
        while (s->rc == 0 && b->more(b->more_arg)) {                                               \
            for (long i = 0; i < b->batch; i++)                                                    \
                if ((call_expr) != 1) s->rc = 1;                                                   \
            io_refill(s, b->batch);                                                                \
            b->calls += (uint64_t)b->batch;                                                        \
        }                                                                                          \
        (void)c;                                                                                   \
    } while (0)

static void io_loop(void *arg)
{
    struct io_state *s = arg;
    bh_io *b = s->b;
    int fd = b->call == BH_READ ? s->rd : s->wr;
    if (b->how == BH_HOOKED && fb_hook_enable() < 0) {
        s->rc = -1;
        return;
    }
    switch (b->how * 2 + b->call) {
    case BH_SYSCALL * 2 + BH_READ:
        IO_LOOP(syscall(SYS_read, fd, &c, 1));
        break;
    case BH_SYSCALL * 2 + BH_WRITE:
        IO_LOOP(syscall(SYS_write, fd, &c, 1));
        break;
    case BH_FALLTHROUGH * 2 + BH_READ:
    case BH_HOOKED * 2 + BH_READ:
        IO_LOOP(read(fd, &c, 1));
        break;
    case BH_FALLTHROUGH * 2 + BH_WRITE:
    case BH_HOOKED * 2 + BH_WRITE:
        IO_LOOP(write(fd, &c, 1));
        break;
    case BH_DIRECT * 2 + BH_READ:
        IO_LOOP(fb_read(fd, &c, 1));
        break;
    case BH_DIRECT * 2 + BH_WRITE:
        IO_LOOP(fb_write(fd, &c, 1));
        break;
    }
    fb_hook_disable();
}

int bh_io_run(bh_io *b)
{
    int p[2];
    if (b->batch < 1 || b->batch > PAGE || pipe(p) < 0) return -1;
    struct io_state s = {.b = b, .rd = p[0], .wr = p[1]};
    b->calls = 0;
    io_refill(&s, b->call == BH_READ ? b->batch : 0); /* the first batch of reads */
    int rc;
    if (b->how == BH_SYSCALL || b->how == BH_FALLTHROUGH) {
        io_loop(&s); /* a plain thread, no runtime */
        rc = 0;
    } else {
        rc = run_in_fiber(io_loop, &s);
    }
    /* close(2) through the hook, which forgets what it knew about the numbers. */
    close(p[0]);
    close(p[1]);
    if (rc == 0 && s.rc != 0) {
        errno = EIO;
        rc = -1;
    }
    return rc;
}

/* ---- sync/ --------------------------------------------------------------------------------- */

struct sync_state {
    bs_sync *s;
    fb_mutex fm;
    fb_event ev;
    pthread_mutex_t pm;
    atomic_bool stop;
    atomic_bool partner_ready;
    uint64_t other;
};

static inline void lock(struct sync_state *st)
{
    switch (st->s->lock) {
    case BS_FIBER_MUTEX:
        fb_mutex_lock(&st->fm);
        break;
    case BS_EVENT_LOCK:
        fb_event_lock(&st->ev);
        break;
    case BS_PTHREAD_MUTEX:
        pthread_mutex_lock(&st->pm);
        break;
    }
}

static inline void unlock(struct sync_state *st)
{
    switch (st->s->lock) {
    case BS_FIBER_MUTEX:
        fb_mutex_unlock(&st->fm);
        break;
    case BS_EVENT_LOCK:
        fb_event_unlock(&st->ev);
        break;
    case BS_PTHREAD_MUTEX:
        pthread_mutex_unlock(&st->pm);
        break;
    }
}

/* The measuring fiber: batches of pairs, holding across a yield when a fiber contends. */
static void sync_driver(void *arg)
{
    struct sync_state *st = arg;
    bs_sync *s = st->s;
    bool hold = s->mode == BS_FIBERS;
    while (s->more(s->more_arg)) {
        for (long i = 0; i < s->batch; i++) {
            lock(st);
            if (hold) fb_yield();
            unlock(st);
        }
        s->pairs += (uint64_t)s->batch;
    }
    atomic_store(&st->stop, true);
}

/* The contending fiber of the same runtime. */
static void sync_peer(void *arg)
{
    struct sync_state *st = arg;
    while (!atomic_load(&st->stop)) {
        lock(st);
        fb_yield();
        unlock(st);
        st->other++;
    }
}

static void partner_fiber(void *arg)
{
    struct sync_state *st = arg;
    atomic_store(&st->partner_ready, true);
    while (!atomic_load_explicit(&st->stop, memory_order_relaxed)) {
        lock(st);
        unlock(st);
        st->other++;
    }
}

/* The contending thread: its own runtime for the event lock, a plain loop for pthread. */
static void *partner_thread(void *arg)
{
    struct sync_state *st = arg;
    if (st->s->lock == BS_EVENT_LOCK)
        run_in_fiber(partner_fiber, st);
    else
        partner_fiber(st);
    return NULL;
}

static void sync_main(void *arg)
{
    struct sync_state *st = arg;
    if (st->s->mode == BS_FIBERS) fb_spawn(fb_current_runtime(), sync_peer, st);
    sync_driver(st);
}

int bs_sync_run(bs_sync *s)
{
    if ((s->lock == BS_PTHREAD_MUTEX && s->mode == BS_FIBERS) ||
        (s->lock == BS_FIBER_MUTEX && s->mode == BS_THREADS)) {
        errno = EDEADLK;
        return -1;
    }
    struct sync_state *st = calloc(1, sizeof *st);
    if (!st) return -1;
    st->s = s;
    fb_mutex_init(&st->fm);
    fb_event_init(&st->ev);
    pthread_mutex_init(&st->pm, NULL);
    s->pairs = s->queued = 0;
    pthread_t th;
    bool partner = s->mode == BS_THREADS;
    if (partner) {
        if (pthread_create(&th, NULL, partner_thread, st) != 0) {
            free(st);
            return -1;
        }
        while (!atomic_load(&st->partner_ready))
            sched_yield(); /* contention from the first timed pair on */
    }
    int rc = run_in_fiber(sync_main, st);
    atomic_store(&st->stop, true);
    if (partner) pthread_join(th, NULL);
    s->queued = atomic_load(&st->ev.contended);
    s->wakeups = atomic_load(&st->ev.wakeups);
    s->other = st->other;
    pthread_mutex_destroy(&st->pm);
    free(st);
    return rc;
}
