/* engine_uring_completion.c - completion: read, write, accept and poll as io_uring operations. */
#define _GNU_SOURCE
#include "engine_uring.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/*
 * The completion form of the engine contract (engine.h, eng_op): the IO layer hands over the
 * whole operation, not a wish to be told about readiness. Each operation becomes one SQE,
 * queued here and submitted by the io_uring_enter of the next poll, which also waits: a
 * scheduler pass that parked many fibers submits all of their operations in one system call.
 * A CQE names its operation by address (user_data), so nothing depends on the fd number, and
 * an fd closed and reused while an operation is in flight cannot be confused with its
 * successor.
 *
 * Cancellation (timeout, close) is asynchronous: abort queues an IORING_OP_ASYNC_CANCEL for
 * the operation, and the operation's own CQE still arrives, with -ECANCELED or with its
 * result if it finished first. Until then the kernel may still write into the operation's
 * buffer, so the IO layer keeps the waiting fiber parked until this engine delivers it.
 * Freeing the engine cancels whatever is still in flight and waits for every CQE.
 *
 * The readiness entry points (want, cancel, fd_closed) do nothing useful here: the IO layer
 * calls submit and abort instead for an engine that has them.
 */
#define UC_ENTRIES  1024
#define UC_INTERNAL UINT64_MAX /* user_data of cancel requests: their CQEs are ignored */

typedef struct ucomp {
    eng__ur ur;
    size_t inflight; /* operations submitted or queued whose CQE has not arrived */
    eng_stats st;
} ucomp;

static void *uc_init(void)
{
    ucomp *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->st.ctl_source = ENG_CTL_SELF;
    if (eng__ur_init(&u->ur, UC_ENTRIES, &u->st) < 0) {
        int e = errno;
        free(u);
        errno = e;
        return NULL;
    }
    return u;
}

/* Reap every CQE in the ring; deliver the operations' tokens when fn is given. */
static int reap(ucomp *u, eng_deliver_fn fn, void *ctx)
{
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;
    int got = 0;
    io_uring_for_each_cqe(&u->ur.ring, head, cqe)
    {
        n++;
        if (cqe->user_data == UC_INTERNAL) continue;
        eng_op *op = (eng_op *)(uintptr_t)cqe->user_data;
        op->res = cqe->res;
        u->inflight--;
        u->st.delivered++;
        got++;
        if (fn) fn(ctx, op->token, ENG_DONE);
    }
    io_uring_cq_advance(&u->ur.ring, n);
    return got;
}

static void uc_free(void *st)
{
    ucomp *u = st;
    /* Buffers of operations still in flight belong to fibers that will never run again; the
     * kernel must be done with them before the ring goes (its teardown is asynchronous). */
    if (u->inflight) {
        struct io_uring_sqe *sqe = eng__ur_sqe(&u->ur);
        if (sqe) {
            io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
            io_uring_sqe_set_data64(sqe, UC_INTERNAL);
        }
        for (int tries = 0; u->inflight && tries < 1000; tries++)
            if (eng__ur_enter(&u->ur, 10 * 1000000) == 0) reap(u, NULL, NULL);
    }
    eng__ur_fini(&u->ur);
    free(u);
}

static int uc_submit(void *st, eng_op *op, void *token)
{
    ucomp *u = st;
    if (op->kind < ENG_OP_READ || op->kind > ENG_OP_POLL) {
        errno = EINVAL;
        return -1;
    }
    struct io_uring_sqe *sqe = eng__ur_sqe(&u->ur);
    if (!sqe) return -1;
    switch (op->kind) {
    case ENG_OP_READ:
        io_uring_prep_read(sqe, op->fd, op->buf, (unsigned)op->len, (uint64_t)-1);
        break;
    case ENG_OP_WRITE:
        if (op->socket)
            io_uring_prep_send(sqe, op->fd, op->buf, op->len, MSG_NOSIGNAL);
        else
            io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)op->len, (uint64_t)-1);
        break;
    case ENG_OP_ACCEPT:
        io_uring_prep_accept(sqe, op->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        break;
    default: /* ENG_OP_POLL */
        io_uring_prep_poll_add(sqe, op->fd, op->dir == ENG_OUT ? POLLOUT : POLLIN | POLLRDHUP);
        break;
    }
    op->token = token;
    io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)op);
    u->inflight++;
    u->st.waits++;
    return 0;
}

static void uc_abort(void *st, eng_op *op)
{
    ucomp *u = st;
    struct io_uring_sqe *sqe = eng__ur_sqe(&u->ur);
    if (!sqe) return; /* the ring is full even after a submit: the operation ends on its own */
    io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)op, 0);
    io_uring_sqe_set_data64(sqe, UC_INTERNAL);
}

static int uc_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    ucomp *u = st;
    u->st.polls++;
    if (eng__ur_enter(&u->ur, timeout_ns) < 0) return -1;
    return reap(u, fn, ctx);
}

static int uc_want(void *st, int fd, uint32_t dir, void *token)
{
    (void)st, (void)fd, (void)dir, (void)token;
    errno = ENOTSUP; /* a completion engine takes operations (submit), not waits */
    return -1;
}

static void uc_cancel(void *st, int fd, uint32_t dir)
{
    (void)st, (void)fd, (void)dir;
}

static void uc_fd_closed(void *st, int fd)
{
    /* Nothing is kept per fd: the IO layer aborts the fd's operations by address. */
    (void)st, (void)fd;
}

static void uc_stats(void *st, eng_stats *out)
{
    *out = ((ucomp *)st)->st;
}

static const char *uc_method(void *st)
{
    (void)st;
    return "io_uring";
}

const eng_ops eng__uring = {
    .name = "uring",
    .summary = "completion: fiber read, write, accept and poll as io_uring operations, "
               "submitted in one enter per scheduler pass",
    /* One SQE per operation, nothing registered beforehand; results carry errors and
     * hang-ups (a read of 0, a poll mask with POLLERR); no edges to remember. */
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = 1,
              .interest_calls_first_use = 0,
              .reports_hup_err = true,
              .edge_triggered = false,
              .completion = true},
    .init = uc_init,
    .free = uc_free,
    .want = uc_want,
    .cancel = uc_cancel,
    .poll = uc_poll,
    .fd_closed = uc_fd_closed,
    .get_stats = uc_stats,
    .method = uc_method,
    .submit = uc_submit,
    .abort = uc_abort,
};
