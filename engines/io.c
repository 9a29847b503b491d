/* io.c - fiber IO, the side the scheduler drives: the runtime object, the end of a wait, the
 * timers and the poller. The calls fibers make are in io_calls.c; what both share, io_state.h. */
#define _GNU_SOURCE
#include "hot_text.h"
#include "io_state.h"

#include <errno.h>
#include <stdlib.h>

__thread fb_io *fb__io_tls;

/* ---- the runtime object ------------------------------------------------------------------ */

fb_io *fb_io_new(const char *name)
{
    const eng_ops *ops = eng_find(name);
    if (!ops) {
        errno = EINVAL;
        return NULL;
    }
    if (fb__io_tls) {
        errno = EBUSY;
        return NULL;
    }
    fb_io *io = calloc(1, sizeof *io);
    if (!io) return NULL;
    io->ops = ops;
    io->want = ops->want;
    io->completion = ops->submit != NULL;
    io->eng = ops->init();
    if (!io->eng) {
        int e = errno;
        free(io);
        errno = e;
        return NULL;
    }
    fb__io_tls = io;
    return io;
}

void fb_io_free(fb_io *io)
{
    if (!io) return;
    io->ops->free(io->eng);
    if (io->tm) io->tm->free(io->timers); /* drops the armed nodes without touching them */
    for (size_t i = 0; i < io->nfds; i++)
        free(io->fds[i].rt);
    free(io->fds);
    if (fb__io_tls == io) fb__io_tls = NULL;
    free(io);
}

fb_io *fb_io_current(void)
{
    return fb__io_tls;
}

const eng_ops *fb_io_engine(const fb_io *io)
{
    return io->ops;
}

const char *fb_io_method(const fb_io *io)
{
    return io->ops->method(io->eng);
}

void fb_io_get_stats(const fb_io *io, fb_io_stats *out)
{
    io->ops->get_stats(io->eng, &out->engine);
    out->timers_fired = io->timers_fired;
    out->reads_tried = io->reads_tried;
    out->reads_again = io->reads_again;
    out->reads_waited_first = io->reads_waited_first;
    out->waiters = io->waiters;
    out->sleepers = io->sleepers;
}

void fb_io_set_read_policy(fb_io *io, fb_read_policy p)
{
    io->read_policy = p;
}

fb_read_policy fb_io_read_policy(const fb_io *io)
{
    return io->read_policy;
}

/* ---- ending a wait ------------------------------------------------------------------------- */

/* Out of line even here: inlined into deliver, it would cost deliver a frame on every wake. */
__attribute__((noinline)) void fb__io_cancel_timer_and_wake(fb_io *io, io_wait *w)
{
    io->tm->cancel(io->timers, &w->timer);
    fb_wake_with(w->f, (uint16_t)w->err);
}

static void HOT_TEXT deliver(void *ctx, void *token, uint32_t revents)
{
    fb_io *io = ctx;
    uintptr_t t = (uintptr_t)token;
    if (io_token_is_readiness(t)) { /* its fd's slot knows the wait */
        io_fd *slot = &io->fds[io_token_fd(t)];
        int d = io_token_dir(t);
        if (!slot->recorded[d]) {
            fb__io_finish_bare(io, slot, d, 0);
            return;
        }
        token = slot->w[d];
    }
    io_wait *w = token;
    fb__io_finish(io, w, w->err, revents); /* err: a completion wait that was aborted first */
}

/* A completion wait given up (timeout, close): abort its operation, keep it parked. */
void fb__io_give_up(fb_io *io, io_wait *w, int err)
{
    if (!w->err) w->err = err;
    io->ops->abort(io->eng, w->op);
}

/* ---- timers ------------------------------------------------------------------------------ */

static inline bool timers_armed(const fb_io *io)
{
    return io->tm && io->tm->count(io->timers) != 0;
}

/*
 * The structure is the fiber runtime's choice (fb_config.timers), which exists only once the
 * IO runtime does, so it is taken at the first arm; a later runtime of the thread with another
 * choice gets its own as soon as no timer of the previous one is armed.
 */
int fb__io_arm_timer(fb_io *io, tm_node *t, int64_t deadline)
{
    const tm_ops *want = fb_runtime_timers(fb_current_runtime());
    int64_t now = tm_now();
    if (__builtin_expect(want != io->tm, 0)) {
        if (io->tm && io->tm->count(io->timers)) {
            want = io->tm;
        } else {
            void *st = want->init(now);
            if (!st) return -1;
            if (io->tm) io->tm->free(io->timers);
            io->tm = want;
            io->timers = st;
        }
    }
    return io->tm->arm(io->timers, t, deadline, now);
}

/* A read timer may need to be armed again for a later deadline (io_read_timer). */
int fb__io_arm_read_timer(fb_io *io, io_read_timer *rt, int64_t deadline)
{
    if (tm_armed(&rt->timer)) {
        if (rt->timer.deadline <= deadline) return 0; /* fires early; moved on then */
        io->tm->cancel(io->timers, &rt->timer);
    }
    return fb__io_arm_timer(io, &rt->timer, deadline);
}

/* An fd's read timer came out: time out its timed reader if that reader's deadline passed. */
static void read_timer_fired(fb_io *io, io_read_timer *rt, int64_t now)
{
    const io_fd *slot = &io->fds[rt->fd];
    io_wait *w = slot->w[0];
    if (!w || !slot->recorded[0] || w->timer.kind != TM_READ) return; /* none now: stay idle */
    int err = ETIMEDOUT;
    if (rt->due > now) {
        if (fb__io_arm_read_timer(io, rt, rt->due) == 0) return;
        err = ENOMEM; /* it cannot be timed any more: end it rather than let it wait forever */
    } else {
        io->timers_fired++;
    }
    io->ops->cancel(io->eng, rt->fd, FB_IN);
    fb__io_finish(io, w, err, 0);
}

static void expire_timers(fb_io *io, int64_t now)
{
    tm_node *t;
    while ((t = io->tm->pop(io->timers, now))) {
        if (t->kind == TM_READ) {
            read_timer_fired(io, (io_read_timer *)t, now);
            continue;
        }
        io_wait *w = (io_wait *)t;
        io->timers_fired++;
        if (w->op) {
            fb__io_give_up(io, w, ETIMEDOUT);
            continue;
        }
        bool sleep = w->timer.kind == TM_SLEEP;
        if (!sleep) io->ops->cancel(io->eng, w->fd, w->dir);
        fb__io_finish(io, w, sleep ? 0 : ETIMEDOUT, 0);
    }
}

/* ---- the poller -------------------------------------------------------------------------- */

static int io_poll(void *state, int64_t timeout_ns)
{
    fb_io *io = state;
    io->woke = 0;
    if (timers_armed(io)) {
        int64_t now = tm_now();
        expire_timers(io, now);
        if (io->woke) {
            timeout_ns = 0; /* still look at IO, but do not block: fibers are runnable */
        } else if (timers_armed(io)) {
            /* A rounded structure's earliest is its rounded time: no wake-up before it. */
            int64_t left = io->tm->earliest(io->timers) - now;
            if (left < 0) left = 0;
            if (timeout_ns < 0 || left < timeout_ns) timeout_ns = left;
        }
    }
    if (timeout_ns < 0 && io->waiters == 0) return io->woke; /* nothing could ever wake us */
    if (io->ops->poll(io->eng, timeout_ns, deliver, io) < 0) return -1;
    if (timers_armed(io)) expire_timers(io, tm_now());
    return io->woke;
}

static size_t io_pending(void *state)
{
    fb_io *io = state;
    return io->waiters + io->sleepers;
}

fb_poller fb_io_poller(fb_io *io)
{
    return (fb_poller){.state = io, .poll = io_poll, .pending = io_pending};
}
