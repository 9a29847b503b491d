/* engine_epoll_edge.c - EPOLLET for in|out|rdhup, registered once per fd, untouched until close. */
#include "engine_epoll.h"

#include <stdlib.h>
#include <string.h>

/*
 * Edge-triggered interest is reported once per change of readiness, so it can stay
 * registered for both directions forever without ever spinning the loop: one ADD on the
 * fd's first wait and one DEL when it is closed, nothing per wait.
 *
 * The danger is a lost wake-up: an edge that arrives while nobody waits is reported once and
 * never again. A fiber that then parks without trying its system call first would sleep
 * forever although data is there. Two defences: the IO layer always tries the call before it
 * waits (EAGAIN first, then park), and this engine keeps a per-fd ready bit for every
 * direction that fired with no waiter. A wait that finds its bit set consumes it and returns
 * "ready now" instead of parking, so even a bare wait (no call first) cannot miss the edge;
 * at worst the caller retries once and gets EAGAIN, and the next wait parks.
 *
 * An end of file is the exception to "once per change": it never goes away, and the data
 * before it and the FIN often arrive in one edge. A reader that waits before reading (the
 * wait and adaptive read policies, io.h) may take that edge, read the data short and wait
 * again, with nothing left to report the FIN. So a hang-up seen on an fd is kept (ENG_HUP in
 * its ready bits, never consumed) and every later read wait returns "ready now": the read
 * that follows returns 0 at once, it cannot block. Errors are not kept: a datagram socket's
 * error is consumed by one read, and a kept one would spin an eager reader.
 */
typedef struct edge {
    eng__ep ep;
} edge;

static void *edge_init(void)
{
    edge *e = calloc(1, sizeof *e);
    if (e && eng__ep_init(&e->ep) < 0) {
        free(e);
        e = NULL;
    }
    return e;
}

static void edge_free(void *st)
{
    edge *e = st;
    eng__ep_fini(&e->ep);
    free(e);
}

static int edge_want(void *st, int fd, uint32_t dir, void *token)
{
    edge *e = st;
    eng__fd *f = eng__ep_fd(&e->ep, fd);
    if (!f) return -1;
    if (f->ready & dir) {
        f->ready &= ~dir;
        return 1;
    }
    if (dir == ENG_IN && (f->ready & ENG_HUP)) return 1;
    if (eng__park(&e->ep, f, dir, token) < 0) return -1;
    if (!f->reg) {
        if (eng__ctl(&e->ep, EPOLL_CTL_ADD, fd, ENG_IN | ENG_OUT, EPOLLET | EPOLLRDHUP) < 0) {
            f->tok[eng__dir_index(dir)] = NULL;
            return -1;
        }
        f->reg = 1;
        f->kmask = ENG_IN | ENG_OUT;
    }
    return 0;
}

static void edge_cancel(void *st, int fd, uint32_t dir)
{
    edge *e = st;
    eng__fd *f = eng__ep_peek(&e->ep, fd);
    if (f) f->tok[eng__dir_index(dir)] = NULL;
}

static int edge_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    edge *e = st;
    int got = 0, nev = eng__wait(&e->ep, timeout_ns);
    for (int i = 0; i < nev; i++) {
        eng__fd *f = eng__ep_peek(&e->ep, e->ep.evs[i].data.fd);
        if (!f || !f->reg) continue;
        uint32_t events = e->ep.evs[i].events;
        /* A ping-pong's every event: input for a waiting reader, with output ready as it
         * always is on a socket with room, and no writer waiting. The output edge is kept in
         * the ready bits and counted stray, as eng__deliver's loop would. */
        if (__builtin_expect((events & ~EPOLLOUT) == EPOLLIN && f->tok[0] && !f->tok[1], 1)) {
            if (events & EPOLLOUT) {
                f->ready |= ENG_OUT;
                e->ep.st.stray++;
            }
            eng__deliver_in(&e->ep, f, fn, ctx, &got);
            continue;
        }
        uint32_t ready = eng__revents(events);
        uint32_t done = eng__deliver(&e->ep, f, ready, fn, ctx, &got);
        f->ready |= ready & (ENG_IN | ENG_OUT) & ~done;
        if (events & (EPOLLRDHUP | EPOLLHUP)) f->ready |= ENG_HUP;
    }
    return nev < 0 ? -1 : got;
}

static void edge_fd_closed(void *st, int fd)
{
    edge *e = st;
    eng__fd *f = eng__ep_peek(&e->ep, fd);
    if (!f) return;
    /* Explicit, not left to close(2): a dup of the fd would keep the registration alive. */
    if (f->reg) eng__ctl(&e->ep, EPOLL_CTL_DEL, fd, 0, 0);
    memset(f, 0, sizeof *f);
}

static void edge_stats(void *st, eng_stats *out)
{
    eng__ep_stats(&((edge *)st)->ep, out);
}

static const char *edge_method(void *st)
{
    (void)st;
    return "epoll";
}

const eng_ops eng__edge = {
    .name = "edge",
    .summary = "EPOLLET for in|out|rdhup, one ADD per fd, one DEL at close, nothing per wait",
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = 0,
              .interest_calls_first_use = 1,
              .reports_hup_err = true,
              .edge_triggered = true,
              .completion = false},
    .init = edge_init,
    .free = edge_free,
    .want = edge_want,
    .cancel = edge_cancel,
    .poll = edge_poll,
    .fd_closed = edge_fd_closed,
    .get_stats = edge_stats,
    .method = edge_method,
};
