/* engine_uring_poll.c - readiness through io_uring poll requests, armed once per fd and direction.
 */
#define _GNU_SOURCE
#include "engine_uring.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

/*
 * epoll's interest list, but as io_uring requests: the first wait on an fd and direction
 * queues a multishot IORING_OP_POLL_ADD (Linux 5.13), which stays armed and posts a CQE each
 * time the fd's wait queue is woken; later waits cost nothing. Arming, re-arming and removal
 * are SQEs that ride in the io_uring_enter that waits, so no wait or close costs a system
 * call of its own: a ping-pong costs one io_uring_enter per loop, as epoll costs one
 * epoll_wait. Kernels that refuse multishot (EINVAL) get one-shot requests, re-armed per wait.
 *
 * A multishot poll reports wake-ups, not levels, so it has the edge engine's lost-wake-up
 * hazard and the same defence: a CQE that finds no waiter sets the direction's ready bit, and
 * the next want consumes it and answers "ready now". The IO layer tries its system call
 * before waiting, so a stale bit costs one EAGAIN at most. A hang-up is kept as the edge
 * engine keeps it (ENG_HUP in the ready bits, never consumed): the data before a FIN and the
 * FIN may come in one CQE, and a reader that waits before reading (io.h's wait and adaptive
 * policies) must still learn about the end of file after its short read.
 *
 * A CQE names its request by user_data = generation << 32 | fd << 1 | direction. fd_closed
 * queues POLL_REMOVE for the fd's requests and bumps the generation, so a CQE still in flight
 * for the old file is recognised and dropped, and a new file with the same number starts
 * clean. Until that removal reaches the kernel (the next enter) the request holds a
 * reference to the closed file, so the peer sees the close one scheduler pass late.
 */
#define UR_ENTRIES  1024
#define UR_INTERNAL UINT64_MAX /* user_data of removal requests: their CQEs are ignored */

typedef struct ufd {
    void *tok[2];  /* [0] ENG_IN, [1] ENG_OUT */
    uint32_t gen;  /* bumped at every fd_closed */
    uint8_t armed; /* directions with a live poll request */
    uint8_t ready; /* directions that fired while nobody waited */
} ufd;

typedef struct upoll {
    eng__ur ur;
    ufd *fds;
    size_t nfds;
    bool multishot;
    eng_stats st;
} upoll;

static void *up_init(void)
{
    upoll *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->st.ctl_source = ENG_CTL_SELF;
    p->multishot = true;
    if (eng__ur_init(&p->ur, UR_ENTRIES, &p->st) < 0) {
        int e = errno;
        free(p);
        errno = e;
        return NULL;
    }
    return p;
}

static void up_free(void *st)
{
    upoll *p = st;
    eng__ur_fini(&p->ur);
    free(p->fds);
    free(p);
}

static ufd *fd_entry(upoll *p, int fd)
{
    if (eng__grow_fd_table(&p->fds, &p->nfds, sizeof *p->fds, fd) < 0) return NULL;
    return &p->fds[fd];
}

static uint64_t udata(int fd, int d, uint32_t gen)
{
    return (uint64_t)(gen & 0x7fffffff) << 32 | (uint64_t)(uint32_t)fd << 1 | (uint64_t)d;
}

/* Queue a poll request for fd and direction d. */
static int arm(upoll *p, int fd, ufd *f, int d)
{
    struct io_uring_sqe *sqe = eng__ur_sqe(&p->ur);
    if (!sqe) return -1;
    unsigned mask = d ? POLLOUT : POLLIN | POLLRDHUP;
    if (p->multishot)
        io_uring_prep_poll_multishot(sqe, fd, mask);
    else
        io_uring_prep_poll_add(sqe, fd, mask);
    io_uring_sqe_set_data64(sqe, udata(fd, d, f->gen));
    f->armed |= (uint8_t)(1u << d);
    return 0;
}

static int up_want(void *st, int fd, uint32_t dir, void *token)
{
    upoll *p = st;
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if ((dir != ENG_IN && dir != ENG_OUT) || !token) {
        errno = EINVAL;
        return -1;
    }
    int d = dir == ENG_OUT;
    ufd *f = fd_entry(p, fd);
    if (!f) return -1;
    if (f->tok[d]) {
        errno = EBUSY;
        return -1;
    }
    if (f->ready & dir) {
        f->ready &= (uint8_t)~dir;
        return 1;
    }
    if (dir == ENG_IN && (f->ready & ENG_HUP)) return 1;
    if (!(f->armed & (1u << d)) && arm(p, fd, f, d) < 0) return -1;
    f->tok[d] = token;
    p->st.waits++;
    return 0;
}

static void up_cancel(void *st, int fd, uint32_t dir)
{
    upoll *p = st;
    if (fd >= 0 && (size_t)fd < p->nfds) p->fds[fd].tok[dir == ENG_OUT] = NULL;
}

static uint32_t ready_of(int res)
{
    uint32_t r = 0;
    if (res & (POLLHUP | POLLRDHUP)) r |= ENG_HUP;
    if (res & (POLLERR | POLLNVAL)) r |= ENG_ERR;
    return r;
}

/* One CQE of a poll request: deliver, remember or re-arm. Returns tokens delivered. */
static int on_cqe(upoll *p, uint64_t ud, int res, uint32_t flags, eng_deliver_fn fn, void *ctx)
{
    int fd = (int)(uint32_t)(ud >> 1 & 0x7fffffff), d = (int)(ud & 1);
    uint32_t dir = d ? ENG_OUT : ENG_IN;
    if ((size_t)fd >= p->nfds) return 0;
    ufd *f = &p->fds[fd];
    if ((uint32_t)(ud >> 32) != (f->gen & 0x7fffffff)) return 0;        /* for a closed file */
    if (!(flags & IORING_CQE_F_MORE)) f->armed &= (uint8_t) ~(1u << d); /* request ended */
    if ((res == -EINVAL && p->multishot) || res == -ECANCELED) {
        /* EINVAL: an old kernel without multishot; ECANCELED: the kernel dropped the request
         * (the CQ overflowed). Either way a waiter needs a new request. */
        if (res == -EINVAL) p->multishot = false;
        if (!f->tok[d] || (f->armed & (1u << d)) || arm(p, fd, f, d) == 0) return 0;
        res = -ENOMEM; /* no request could be queued: wake the waiter with an error */
    }
    uint32_t extra = res < 0 ? ENG_ERR : ready_of(res);
    if (!d && res > 0 && (res & (POLLHUP | POLLRDHUP))) f->ready |= ENG_HUP;
    void *tok = f->tok[d];
    if (!tok) {
        f->ready |= (uint8_t)dir;
        p->st.stray++;
        return 0;
    }
    f->tok[d] = NULL; /* forget first: the callback may free the waiter */
    p->st.delivered++;
    fn(ctx, tok, extra | dir);
    return 1;
}

static int up_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    upoll *p = st;
    p->st.polls++;
    if (eng__ur_enter(&p->ur, timeout_ns) < 0) return -1;
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;
    int got = 0;
    io_uring_for_each_cqe(&p->ur.ring, head, cqe)
    {
        n++;
        if (cqe->user_data != UR_INTERNAL)
            got += on_cqe(p, cqe->user_data, cqe->res, cqe->flags, fn, ctx);
    }
    io_uring_cq_advance(&p->ur.ring, n);
    return got;
}

static void up_fd_closed(void *st, int fd)
{
    upoll *p = st;
    if (fd < 0 || (size_t)fd >= p->nfds) return;
    ufd *f = &p->fds[fd];
    for (int d = 0; d < 2; d++) {
        if (!(f->armed & (1u << d))) continue;
        struct io_uring_sqe *sqe = eng__ur_sqe(&p->ur);
        if (!sqe) continue; /* the old generation's CQEs are dropped all the same */
        io_uring_prep_poll_remove(sqe, udata(fd, d, f->gen));
        io_uring_sqe_set_data64(sqe, UR_INTERNAL);
    }
    uint32_t gen = f->gen + 1;
    memset(f, 0, sizeof *f);
    f->gen = gen;
}

static void up_stats(void *st, eng_stats *out)
{
    *out = ((upoll *)st)->st;
}

static const char *up_method(void *st)
{
    return ((upoll *)st)->multishot ? "io_uring poll (multishot)" : "io_uring poll (one-shot)";
}

const eng_ops eng__uring_poll = {
    .name = "uring-poll",
    .summary = "io_uring poll requests (multishot), armed once per fd and direction, no "
               "system call per wait",
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = 0,
              .interest_calls_first_use = 1,
              .reports_hup_err = true,
              .edge_triggered = true,
              .completion = false},
    .init = up_init,
    .free = up_free,
    .want = up_want,
    .cancel = up_cancel,
    .poll = up_poll,
    .fd_closed = up_fd_closed,
    .get_stats = up_stats,
    .method = up_method,
};
