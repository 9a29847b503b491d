/* server_threadpool.c - an epoll dispatcher hands each ready connection to a pool of workers. */
#include "echo_session.h"
#include "server.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_WORKERS 16
#define MIN_STACK       (64 * 1024) /* a worker keeps SRV_ECHO_BUF bytes on its stack */
#define MAX_EVENTS      256
#define ACCEPT_BURST    64
#define READ_BUDGET     16 /* reads per hand-off, so one fast stream cannot keep a worker */
#define CONN_EVENTS     (EPOLLIN | EPOLLRDHUP | EPOLLONESHOT)
/* A reply waits for room: only output is watched (EPOLLERR and EPOLLHUP always are); input,
 * and a half-close (level-triggered EPOLLRDHUP would report it on every wait), once it went. */
#define PEND_EVENTS (EPOLLOUT | EPOLLONESHOT)

/*
 * Seed 001's "push the handling to a thread pool": one dispatcher thread waits in epoll for
 * the listener and every connection; a connection that turns readable is queued for one of
 * --threads workers, which reads and writes what the socket takes without waiting and then
 * re-arms it. EPOLLONESHOT makes the hand-off safe: a reported connection is disarmed until its
 * worker re-arms it with EPOLL_CTL_MOD, so it is never queued twice and only one thread touches
 * it at a time. After that MOD the worker must not touch it again: the next event may already
 * have given it to another worker.
 *
 * A client that sends and never reads must not hold a worker: a blocking write would wait for
 * it for ever, and as many such clients as workers would starve every other client. So a reply
 * that does not fit the socket is kept with its connection (at most one buffer), which goes back
 * to the dispatcher armed for EPOLLOUT alone; the worker that takes it when writable sends the
 * rest first, and reads again only once nothing is pending.
 *
 * Cost of the model: one epoll_ctl (MOD) per request, a queue hand-off between threads per
 * request, and one more of each for every reply the socket could not take at once.
 */
struct conn {
    struct conn *prev, *next; /* every open connection, under pool.lock, for shutdown */
    struct conn *qnext;       /* in the ready queue */
    int fd;
    char *pend; /* the part of a reply not yet sent (SRV_ECHO_BUF, kept once made) */
    size_t pend_off, pend_len;
};

struct pool {
    struct srv_server *srv;
    int epfd;
    pthread_mutex_t lock;
    pthread_cond_t ready;
    struct conn *qhead, *qtail;
    struct conn all;
    bool quit;
    long long retry_at_ms; /* > 0: the listener is left alone until then (out of fds) */
    struct srv_acceptor acc;
};

static int listener_tag, stopper_tag; /* epoll data for the two non-connection fds */
static atomic_bool logged_spawn;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void conn_close(struct pool *p, struct conn *c)
{
    pthread_mutex_lock(&p->lock);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    pthread_mutex_unlock(&p->lock);
    close(c->fd); /* also leaves the epoll set: it was disarmed, and no other fd refers to it */
    free(c->pend);
    free(c);
    srv_conn_done(p->srv);
}

enum send_rc { SENT, PENDING, FAILED };

/* Send what the socket takes now; 0 < *len left over when it is full. */
static enum send_rc send_now(struct pool *p, int fd, const char **buf, size_t *len)
{
    while (*len > 0) {
        ssize_t n = send(fd, *buf, *len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return PENDING;
        if (n <= 0) return FAILED;
        srv_add(&p->srv->stats->bytes, (uint64_t)n);
        *buf += n;
        *len -= (size_t)n;
    }
    return SENT;
}

/* Send a reply; what does not fit is kept with the connection (FAILED: out of memory too). */
static enum send_rc reply(struct pool *p, struct conn *c, const char *buf, size_t len)
{
    enum send_rc rc = send_now(p, c->fd, &buf, &len);
    if (rc != PENDING) return rc;
    if (!c->pend && !(c->pend = malloc(SRV_ECHO_BUF))) return FAILED;
    memcpy(c->pend, buf, len); /* len <= the read buffer's SRV_ECHO_BUF */
    c->pend_off = 0;
    c->pend_len = len;
    return PENDING;
}

/* Send what an earlier reply left, now that the socket reported room (or an error). */
static enum send_rc flush(struct pool *p, struct conn *c)
{
    const char *buf = c->pend + c->pend_off;
    size_t len = c->pend_len;
    enum send_rc rc = send_now(p, c->fd, &buf, &len);
    c->pend_off = (size_t)(buf - c->pend);
    c->pend_len = len;
    return rc;
}

/* Give the connection back to the dispatcher, waiting for input or, with a reply pending,
 * for room to send it. */
static void rearm(struct pool *p, struct conn *c)
{
    struct epoll_event ev = {.events = c->pend_len ? PEND_EVENTS : CONN_EVENTS, .data.ptr = c};
    srv_add(&p->srv->stats->epoll_mod, 1);
    if (epoll_ctl(p->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) conn_close(p, c);
}

/* Send what is pending, then echo what the connection has, never waiting for the client;
 * EOF, a reset or a failed write closes it. */
static void serve(struct pool *p, struct conn *c, char *buf, size_t cap)
{
    enum send_rc rc = c->pend_len ? flush(p, c) : SENT;
    for (int round = 0; rc == SENT && round < READ_BUDGET; round++) {
        ssize_t n = recv(c->fd, buf, cap, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        rc = n <= 0 ? FAILED : reply(p, c, buf, (size_t)n);
    }
    if (rc == FAILED)
        conn_close(p, c);
    else
        rearm(p, c);
}

static void *worker_main(void *arg)
{
    struct pool *p = arg;
    char buf[SRV_ECHO_BUF];
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->qhead && !p->quit)
            pthread_cond_wait(&p->ready, &p->lock);
        struct conn *c = p->qhead;
        if (c) {
            p->qhead = c->qnext;
            if (!p->qhead) p->qtail = NULL;
        }
        pthread_mutex_unlock(&p->lock);
        if (!c) return NULL; /* quitting, and nothing left queued */
        serve(p, c, buf, sizeof buf);
    }
}

static void enqueue(struct pool *p, struct conn *c)
{
    c->qnext = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->qtail)
        p->qtail->qnext = c;
    else
        p->qhead = c;
    p->qtail = c;
    pthread_cond_signal(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

static void conn_new(int fd, void *arg)
{
    struct pool *p = arg;
    struct conn *c = calloc(1, sizeof *c);
    struct epoll_event ev = {.events = CONN_EVENTS, .data.ptr = c};
    if (c) {
        c->fd = fd;
        pthread_mutex_lock(&p->lock);
        c->next = p->all.next;
        c->prev = &p->all;
        p->all.next->prev = c;
        p->all.next = c;
        pthread_mutex_unlock(&p->lock);
        srv_add(&p->srv->stats->epoll_add, 1);
        if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) return;
        conn_close(p, c); /* counts the connection as done */
    } else {
        close(fd);
        srv_conn_done(p->srv);
    }
    srv_add(&p->srv->stats->spawn_failed, 1);
    srv_log_once(&logged_spawn, "cannot register a connection: %s; connection closed",
                 strerror(errno));
}

/* Out of fds and shedding failed: stop watching the listener for a while (level-triggered,
 * it would report the waiting connection on every wait). */
static void listener_pause(struct pool *p, bool pause)
{
    struct epoll_event ev = {.events = pause ? 0 : EPOLLIN, .data.ptr = &listener_tag};
    srv_add(&p->srv->stats->epoll_mod, 1);
    epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->acc.lfd, &ev);
    p->retry_at_ms = pause ? now_ms() + SRV_BACKOFF_MS : 0;
}

static void on_listener(struct pool *p)
{
    /* Blocking sockets (flags 0) for the workers. */
    if (srv_accept_batch(&p->acc, ACCEPT_BURST, 0, conn_new, p) == SRV_ACCEPT_BACKOFF)
        listener_pause(p, true);
}

static void dispatch(struct pool *p)
{
    struct epoll_event ev[MAX_EVENTS];
    for (bool running = true; running;) {
        int timeout = p->retry_at_ms ? (int)(p->retry_at_ms - now_ms()) : -1;
        int n = epoll_wait(p->epfd, ev, MAX_EVENTS, timeout < 0 && p->retry_at_ms ? 0 : timeout);
        srv_add(&p->srv->stats->epoll_waits, 1);
        if (n < 0 && errno != EINTR) {
            perror("echo-server: epoll_wait");
            return;
        }
        for (int i = 0; i < n; i++) {
            if (ev[i].data.ptr == &stopper_tag)
                running = false;
            else if (ev[i].data.ptr == &listener_tag)
                on_listener(p);
            else
                enqueue(p, ev[i].data.ptr);
        }
        if (p->retry_at_ms && now_ms() >= p->retry_at_ms) listener_pause(p, false);
    }
}

/* Wake every worker (blocked reads see end of file, writes fail), wait for them, close all. */
static void shutdown_pool(struct pool *p, pthread_t *th, int started)
{
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    for (struct conn *c = p->all.next; c != &p->all; c = c->next)
        shutdown(c->fd, SHUT_RDWR);
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    while (p->all.next != &p->all)
        conn_close(p, p->all.next);
}

static int add_fd(struct pool *p, int fd, void *tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
    srv_add(&p->srv->stats->epoll_add, 1);
    return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int threadpool_run(struct srv_server *srv)
{
    static struct pool p = {.lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER};
    p.srv = srv;
    p.all.next = p.all.prev = &p.all;
    p.acc.reserve_fd = -1;
    int n = srv->opt->threads, started = 0, rc = 0;
    pthread_t *th = calloc((size_t)n, sizeof *th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (srv->opt->stack_size) pthread_attr_setstacksize(&attr, srv->opt->stack_size);
    srv->stats->epoll_counted = srv->stats->kcalls_counted = true;
    p.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!th || p.epfd < 0 || srv_acceptor_init(&p.acc, srv, srv->listen_fd[0]) < 0 ||
        add_fd(&p, srv->listen_fd[0], &listener_tag) < 0 ||
        add_fd(&p, srv->stop_fd[0], &stopper_tag) < 0) {
        perror("echo-server: thread pool setup");
        rc = -1;
    }
    while (rc == 0 && started < n) {
        if (pthread_create(&th[started], &attr, worker_main, &p) != 0) {
            perror("echo-server: starting the pool's workers");
            rc = -1;
        } else {
            started++;
        }
    }
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        srv_ready(srv);
        dispatch(&p);
    }
    shutdown_pool(&p, th, started);
    srv_acceptor_fini(&p.acc);
    if (p.epfd >= 0) close(p.epfd);
    free(th);
    return rc;
}

static int threadpool_check(const struct srv_options *o, char *why, size_t len)
{
    if (o->stack_size && o->stack_size < MIN_STACK) {
        snprintf(why, len, "--stack-size must be at least %d bytes for --model threadpool",
                 MIN_STACK);
        return -1;
    }
    return 0;
}

const struct srv_model srv_model_threadpool = {
    .name = "threadpool",
    .summary = "an epoll dispatcher handing readable connections to blocking worker threads",
    .concurrency = SRV_THREAD_POOL,
    .takes_threads = true,
    .takes_stack_size = true,
    .default_threads = DEFAULT_WORKERS,
    .check = threadpool_check,
    .run = threadpool_run};
