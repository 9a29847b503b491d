/* server_uring.c - hand-written io_uring completion echo without fibers: the second yardstick. */
#include "server.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * The completion model, written out by hand the way server_epoll.c writes out readiness:
 * each connection always has exactly one operation in flight, a RECV into its own buffer or
 * a SEND of what that RECV brought, and the loop reacts to completions instead of readiness.
 * Everything the completions ask for (the next RECV, the SEND, the rest of a short SEND) is
 * queued as SQEs and submitted by the one io_uring_enter that also waits, so a loop pass is
 * one system call however many connections it served: no read, write or epoll call at all.
 *
 * The listener is the exception: accepting goes through srv_accept (the --max-conns, fd
 * exhaustion and TCP_NODELAY policy every model shares), woken by a multishot poll on the
 * listener. Connections are not on the hot path of a ping-pong.
 *
 * The price of completion: a RECV in flight owns its buffer, so every connection, idle or
 * not, keeps CONN_BUF bytes; and a buffer may only be freed once its operation has completed.
 * Hence shutdown: shutdown(2) on every connection makes its RECV complete (with 0), and the
 * loop goes on until every connection has closed; only then is the ring torn down.
 */

#define CONN_BUF      8192
#define RING_SQES     1024
#define ACCEPT_BUDGET 64

enum kind { K_LISTENER, K_STOPPER, K_CONN };

struct item {
    enum kind kind;
    int fd;
};

struct conn {
    struct item it;
    struct conn *prev, *next;
    size_t len, off; /* a SEND in flight: bytes of buf to send, already sent */
    bool sending;
    char buf[CONN_BUF];
};

struct loop {
    struct srv_server *srv;
    struct io_uring ring;
    bool ring_ok, running;
    long long retry_at_ms; /* > 0: the listener is backing off until then */
    struct item listener, stopper;
    bool listener_armed;
    struct conn conns;
    size_t nconns;
    struct srv_acceptor acc;
    uint64_t bytes, enters, sqes;
    pthread_t th;
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* One counted io_uring_enter: submit what is queued, wait for `wait` CQEs at most timeout_ms
 * (-1: no limit). Returns 0, or -1 with errno on a fatal error. */
static int enter(struct loop *l, unsigned wait, long long timeout_ms)
{
    struct io_uring_sq *sq = &l->ring.sq;
    if (sq->sqe_head != sq->sqe_tail) {
        sq->sqe_head = sq->sqe_tail;
        io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
    }
    unsigned head = io_uring_smp_load_acquire(sq->khead), submit = sq->sqe_tail - head;
    struct __kernel_timespec ts = {timeout_ms / 1000, timeout_ms % 1000 * 1000000};
    struct io_uring_getevents_arg arg = {.sigmask_sz = _NSIG / 8};
    if (timeout_ms >= 0) arg.ts = (uint64_t)(uintptr_t)&ts;
    l->enters++;
    long rc = syscall(__NR_io_uring_enter, l->ring.ring_fd, submit, wait,
                      (wait ? IORING_ENTER_GETEVENTS : 0) | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
    l->sqes += io_uring_smp_load_acquire(sq->khead) - head;
    if (rc >= 0 || errno == ETIME || errno == EINTR || errno == EBUSY || errno == EAGAIN) return 0;
    return -1;
}

/* A free SQE; when the ring is full, what is queued is submitted first. */
static struct io_uring_sqe *sqe_get(struct loop *l)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
    if (!sqe && enter(l, 0, -1) == 0) sqe = io_uring_get_sqe(&l->ring);
    return sqe;
}

static int queue_poll(struct loop *l, struct item *it)
{
    struct io_uring_sqe *sqe = sqe_get(l);
    if (!sqe) return -1;
    io_uring_prep_poll_multishot(sqe, it->fd, POLLIN);
    io_uring_sqe_set_data(sqe, it);
    return 0;
}

static void conn_close(struct loop *l, struct conn *c)
{
    c->prev->next = c->next;
    c->next->prev = c->prev;
    close(c->it.fd); /* nothing in flight: the completion that brought us here was the last */
    free(c);
    l->nconns--;
    srv_conn_done(l->srv);
}

static int queue_recv(struct loop *l, struct conn *c)
{
    struct io_uring_sqe *sqe = sqe_get(l);
    if (!sqe) return -1;
    io_uring_prep_recv(sqe, c->it.fd, c->buf, sizeof c->buf, 0);
    io_uring_sqe_set_data(sqe, c);
    c->sending = false;
    return 0;
}

static int queue_send(struct loop *l, struct conn *c)
{
    struct io_uring_sqe *sqe = sqe_get(l);
    if (!sqe) return -1;
    io_uring_prep_send(sqe, c->it.fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, c);
    c->sending = true;
    return 0;
}

/* The completion of c's one operation. */
static void on_conn(struct loop *l, struct conn *c, int res)
{
    int rc;
    if (res == -EINTR || res == -EAGAIN) {
        rc = c->sending ? queue_send(l, c) : queue_recv(l, c); /* try the same again */
    } else if (res <= 0) {
        rc = -1; /* EOF, a reset, or another error: the connection is over */
    } else if (!c->sending) {
        c->len = (size_t)res;
        c->off = 0;
        rc = queue_send(l, c);
    } else {
        c->off += (size_t)res;
        l->bytes += (uint64_t)res;
        rc = c->off < c->len ? queue_send(l, c) : queue_recv(l, c); /* short write: the rest */
    }
    if (rc < 0) conn_close(l, c);
}

static void conn_new(int fd, void *arg)
{
    struct loop *l = arg;
    struct conn *c = malloc(sizeof *c);
    if (c) {
        c->it = (struct item){.kind = K_CONN, .fd = fd};
        c->next = l->conns.next;
        c->prev = &l->conns;
        l->conns.next->prev = c;
        l->conns.next = c;
        l->nconns++;
        if (queue_recv(l, c) == 0) return;
        conn_close(l, c);
        return;
    }
    srv_conn_unserved(l->srv, fd, "cannot allocate a connection: %s", strerror(ENOMEM));
}

static void on_listener(struct loop *l)
{
    switch (srv_accept_batch(&l->acc, ACCEPT_BUDGET, 0, conn_new, l)) {
    case SRV_ACCEPT_BACKOFF:
        l->retry_at_ms = now_ms() + SRV_BACKOFF_MS;
        break;
    case SRV_ACCEPT_SKIP:
        l->retry_at_ms = now_ms(); /* more may be pending: come back after this pass */
        break;
    default:
        break;
    }
}

/* Stop accepting and end every connection; their RECVs complete and close them. */
static void begin_stop(struct loop *l)
{
    l->running = false;
    for (struct conn *c = l->conns.next; c != &l->conns; c = c->next)
        shutdown(c->it.fd, SHUT_RDWR);
}

static void reap(struct loop *l)
{
    struct io_uring_cqe *cqe;
    unsigned head, n = 0;
    io_uring_for_each_cqe(&l->ring, head, cqe)
    {
        struct item *it = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        bool more = cqe->flags & IORING_CQE_F_MORE;
        n++;
        if (it->kind == K_CONN) {
            on_conn(l, (struct conn *)it, res);
        } else if (it->kind == K_STOPPER) {
            if (l->running) begin_stop(l);
        } else {
            l->listener_armed = more;
            if (l->running && res > 0) on_listener(l);
        }
    }
    io_uring_cq_advance(&l->ring, n);
}

static void loop_run(struct loop *l)
{
    while (l->running || l->nconns) {
        if (l->running && !l->listener_armed && queue_poll(l, &l->listener) == 0)
            l->listener_armed = true;
        long long timeout = -1;
        if (l->running && l->retry_at_ms) {
            timeout = l->retry_at_ms - now_ms();
            if (timeout <= 0) {
                l->retry_at_ms = 0;
                on_listener(l);
                continue;
            }
        }
        if (enter(l, 1, timeout) < 0) {
            perror("echo-server: io_uring_enter");
            break; /* buffers may still be in flight: the ring is torn down only at exit */
        }
        reap(l);
    }
}

static void loop_fini(struct loop *l)
{
    srv_acceptor_fini(&l->acc);
    if (l->ring_ok && l->nconns == 0) io_uring_queue_exit(&l->ring);
    /* With connections left (a fatal ring error) their buffers stay allocated: the kernel may
     * still complete into them until the process exits. */
    srv_add(&l->srv->stats->bytes, l->bytes);
    srv_add(&l->srv->stats->uring_enters, l->enters);
    srv_add(&l->srv->stats->uring_sqes, l->sqes);
}

static int loop_init(struct loop *l, struct srv_server *srv, int i)
{
    l->conns.next = l->conns.prev = &l->conns;
    l->listener = (struct item){.kind = K_LISTENER, .fd = srv->listen_fd[i]};
    l->stopper = (struct item){.kind = K_STOPPER, .fd = srv->stop_fd[i]};
    /* COOP_TASKRUN: completions are posted when the loop next enters the kernel (it always
     * does, to wait), instead of interrupting it with an IPI per completion (Linux 5.19). */
    int rc = io_uring_queue_init(RING_SQES, &l->ring, IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(RING_SQES, &l->ring, 0);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    l->ring_ok = true;
    if (!(l->ring.features & IORING_FEAT_EXT_ARG)) {
        errno = ENOSYS;
        return -1;
    }
    if (srv_acceptor_init(&l->acc, srv, l->listener.fd) < 0 || queue_poll(l, &l->stopper) < 0)
        return -1;
    l->running = true;
    return 0;
}

static void *loop_main(void *arg)
{
    struct loop *l = arg;
    loop_run(l);
    loop_fini(l);
    srv_stop(l->srv); /* a loop that ended on its own (an error) takes the others down */
    return NULL;
}

static int uring_run(struct srv_server *srv)
{
    int n = srv->nlisten, started = 1, rc = 0;
    struct loop *loops = calloc((size_t)n, sizeof *loops);
    if (!loops) return -1;
    srv->stats->engine = "io_uring";
    srv->stats->epoll_counted = srv->stats->kcalls_counted = true;
    for (int i = 0; i < n; i++) {
        loops[i].srv = srv;
        loops[i].acc.reserve_fd = -1;
    }
    for (int i = 0; i < n && rc == 0; i++)
        rc = loop_init(&loops[i], srv, i);
    if (rc < 0) {
        /* io_uring_setup refused (ENOSYS, EPERM under seccomp) or out of resources. */
        fprintf(stderr, "echo-server: io_uring: %s\n", strerror(errno));
        for (int i = 0; i < n; i++)
            loop_fini(&loops[i]);
        free(loops);
        return -1;
    }
    /* Loop 0 runs on the calling thread, so --threads 1 is truly single-threaded. */
    while (started < n && pthread_create(&loops[started].th, NULL, loop_main, &loops[started]) == 0)
        started++;
    if (started < n) {
        perror("echo-server: starting the io_uring loops");
        rc = -1;
        srv_stop(srv); /* loop 0 and the started loops see their stop fds at once */
    } else {
        srv_ready(srv);
    }
    loop_main(&loops[0]);
    for (int i = 1; i < started; i++)
        pthread_join(loops[i].th, NULL);
    for (int i = started; i < n; i++)
        loop_fini(&loops[i]);
    free(loops);
    return rc;
}

const struct srv_model srv_model_uring = {
    .name = "uring",
    .summary = "raw io_uring completions (one RECV or SEND in flight per connection), one ring "
               "per thread",
    .concurrency = SRV_EVENT_LOOP,
    .per_thread_listener = true,
    .takes_threads = true,
    .run = uring_run};
