/* engine_libevent.c - each wait is an event_add on a libevent event; libevent's change list merges.
 */
#define _GNU_SOURCE
#include "engine_epoll.h"

#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

/*
 * The fibers' waits expressed the way a libevent program would: event_add when a fiber waits,
 * event_del once it fired (libevent removes a non-persistent event itself before running its
 * callback) or when the wait is cancelled. The base is created with
 * EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST, so libevent queues these changes and only applies
 * their net effect per fd when it next waits: a del followed by an add of the same direction
 * within one loop iteration is merged by the library rather than by us. How much that saves
 * is measured, not assumed.
 *
 * One struct event per fd and direction is created on first use and kept until fd_closed,
 * so that the comparison measures kernel work and not malloc; every wait is still one
 * event_add and one event_del.
 *
 * libevent calls epoll_ctl internally, so this engine cannot count those calls itself: it
 * reads the kernel's own count for the thread (engine_kcount.c), or reports them as not
 * counted when perf events are unavailable.
 */
typedef struct lev_fd {
    struct event *ev[2];
    void *tok[2];
} lev_fd;

typedef struct lev {
    struct event_base *base;
    struct event *timer;
    lev_fd *fds;
    size_t nfds;
    eng_stats st;
    eng__kcount kc;
    /* Set for the duration of one poll, for the callbacks. */
    eng_deliver_fn fn;
    void *ctx;
    int got;
} lev;

static void lev_free(void *st);

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg; /* only there to end event_base_loop */
}

static void *lev_init(void)
{
    lev *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    /* Opened before the base exists so that every epoll_ctl of the engine is seen. */
    l->st.ctl_source = eng__kcount_open(&l->kc) == 0 ? ENG_CTL_KERNEL : ENG_CTL_NONE;
    struct event_config *cfg = event_config_new();
    if (cfg) {
        event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK | EVENT_BASE_FLAG_IGNORE_ENV |
                                       EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
        l->base = event_base_new_with_config(cfg);
        event_config_free(cfg);
    }
    if (l->base) l->timer = evtimer_new(l->base, timer_cb, NULL);
    if (!l->timer) {
        lev_free(l);
        errno = ENOMEM;
        return NULL;
    }
    return l;
}

static void lev_free(void *st)
{
    lev *l = st;
    for (size_t i = 0; i < l->nfds; i++)
        for (int d = 0; d < 2; d++)
            if (l->fds[i].ev[d]) event_free(l->fds[i].ev[d]);
    free(l->fds);
    if (l->timer) event_free(l->timer);
    if (l->base) event_base_free(l->base);
    eng__kcount_close(&l->kc);
    free(l);
}

static lev_fd *lev_slot(lev *l, int fd)
{
    if (fd < 0) {
        errno = EBADF;
        return NULL;
    }
    if ((size_t)fd >= l->nfds) {
        size_t n = l->nfds ? l->nfds : 64;
        while (n <= (size_t)fd)
            n *= 2;
        lev_fd *fds = realloc(l->fds, n * sizeof *fds);
        if (!fds) return NULL;
        memset(fds + l->nfds, 0, (n - l->nfds) * sizeof *fds);
        l->fds = fds;
        l->nfds = n;
    }
    return &l->fds[fd];
}

static void io_cb(evutil_socket_t fd, short what, void *arg)
{
    lev *l = arg;
    int d = (what & EV_READ) ? 0 : 1;
    lev_fd *f = &l->fds[fd];
    void *tok = f->tok[d];
    if (!tok) return;
    f->tok[d] = NULL;
    l->st.delivered++;
    l->got++;
    l->fn(l->ctx, tok, d ? ENG_OUT : ENG_IN);
}

static int lev_want(void *st, int fd, uint32_t dir, void *token)
{
    lev *l = st;
    int d = dir == ENG_OUT;
    lev_fd *f = lev_slot(l, fd);
    if (!f) return -1;
    if ((dir != ENG_IN && dir != ENG_OUT) || !token) {
        errno = EINVAL;
        return -1;
    }
    if (f->tok[d]) {
        errno = EBUSY;
        return -1;
    }
    if (!f->ev[d]) f->ev[d] = event_new(l->base, fd, d ? EV_WRITE : EV_READ, io_cb, l);
    if (!f->ev[d] || event_add(f->ev[d], NULL) < 0) {
        errno = ENOMEM;
        return -1;
    }
    f->tok[d] = token;
    l->st.waits++;
    return 0;
}

static void lev_cancel(void *st, int fd, uint32_t dir)
{
    lev *l = st;
    int d = dir == ENG_OUT;
    if (fd < 0 || (size_t)fd >= l->nfds) return;
    lev_fd *f = &l->fds[fd];
    f->tok[d] = NULL;
    if (f->ev[d]) event_del(f->ev[d]);
}

static int lev_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    lev *l = st;
    int rc;
    l->fn = fn;
    l->ctx = ctx;
    l->got = 0;
    l->st.polls++;
    if (timeout_ns == 0) {
        /* NONBLOCK alone keeps looping while callbacks ran, and its second dispatch would
         * apply the deletions just queued before the woken fibers could re-add them. */
        rc = event_base_loop(l->base, EVLOOP_NONBLOCK | EVLOOP_ONCE);
    } else {
        if (timeout_ns > 0) {
            int64_t us = (timeout_ns + 999) / 1000; /* round up: never wake early */
            struct timeval tv = {us / 1000000, us % 1000000};
            evtimer_add(l->timer, &tv);
        }
        rc = event_base_loop(l->base, EVLOOP_ONCE);
        if (timeout_ns > 0) evtimer_del(l->timer);
    }
    l->fn = NULL;
    if (rc < 0) {
        errno = EIO;
        return -1;
    }
    return l->got;
}

static void lev_fd_closed(void *st, int fd)
{
    lev *l = st;
    if (fd < 0 || (size_t)fd >= l->nfds) return;
    lev_fd *f = &l->fds[fd];
    for (int d = 0; d < 2; d++)
        if (f->ev[d]) event_free(f->ev[d]); /* event_del first, so libevent forgets the fd */
    memset(f, 0, sizeof *f);
}

static void lev_stats(void *st, eng_stats *out)
{
    lev *l = st;
    *out = l->st;
    if (l->st.ctl_source == ENG_CTL_KERNEL) eng__kcount_read(&l->kc, out);
}

static const char *lev_method(void *st)
{
    return event_base_get_method(((lev *)st)->base);
}

/*
 * No ENG_HUP / ENG_ERR: libevent's epoll backend turns EPOLLHUP and EPOLLERR into EV_READ |
 * EV_WRITE before any callback runs, so io_cb cannot tell an error or a hang-up from
 * readiness (EV_CLOSED would report a peer's half-close, but not a hang-up or an error, and
 * only when neither came with it). Asking the kernel on every wake-up (getsockopt SO_ERROR)
 * would add a system call per wait to the very counts this engine is measured by. The
 * waiters wake as ready and their next read or write returns the error.
 */
const eng_ops eng__libevent = {
    .name = "libevent",
    .summary = "event_add/event_del per wait on libevent's epoll backend with its change list",
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = ENG_UNDECLARED,
              .interest_calls_first_use = ENG_UNDECLARED,
              .reports_hup_err = false,
              .edge_triggered = false,
              .completion = false},
    .init = lev_init,
    .free = lev_free,
    .want = lev_want,
    .cancel = lev_cancel,
    .poll = lev_poll,
    .fd_closed = lev_fd_closed,
    .get_stats = lev_stats,
    .method = lev_method,
};
