/* server_libev.c - callback-style echo on libev io watchers, one ev_loop per thread. */
#include "server.h"

#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ACCEPT_BUDGET 64
#define LOOP_BUF      65536 /* one read, shared by the loop's connections */

/*
 * As libev's documentation has it: one loop per thread (ev_loop_new, never the default loop,
 * which would take SIGCHLD), one ev_io watcher per fd, started for the events wanted and
 * stopped before the fd is closed. A read goes into the loop's buffer and is sent back at once;
 * only a part the socket did not take is copied out and kept with the connection, which then
 * watches output instead of input until it has gone, so a client that never reads stops being
 * read.
 */
struct econn {
    struct econn *prev, *next; /* every connection of the loop, for shutdown */
    struct eloop *el;
    ev_io w;
    char *pend; /* the unsent part of a reply (malloc'd), NULL when nothing is owed */
    size_t off, len;
};

struct eloop {
    struct srv_server *srv;
    struct ev_loop *loop;
    ev_io accept_w, stop_w;
    ev_timer retry_w;
    struct srv_acceptor acc;
    struct econn conns;
    uint64_t bytes;
    char buf[LOOP_BUF];
};

static char engine_name[48];

static void econn_free(struct econn *c)
{
    ev_io_stop(c->el->loop, &c->w);
    close(c->w.fd);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    srv_conn_done(c->el->srv);
    free(c->pend);
    free(c);
}

/* Send p[0..n) as far as the socket takes it: the count sent, or -1 on an error. */
static ssize_t econn_send(struct econn *c, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = send(c->w.fd, p + done, n - done, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (k < 0) return -1;
        done += (size_t)k;
    }
    c->el->bytes += done;
    return (ssize_t)done;
}

static void econn_watch(struct econn *c, int events)
{
    if ((c->w.events & (EV_READ | EV_WRITE)) == events) return;
    ev_io_stop(c->el->loop, &c->w);
    ev_io_set(&c->w, c->w.fd, events);
    ev_io_start(c->el->loop, &c->w);
}

/* Returns false when the connection must go. */
static bool econn_write_ready(struct econn *c)
{
    ssize_t n = econn_send(c, c->pend + c->off, c->len - c->off);
    if (n < 0) return false;
    c->off += (size_t)n;
    if (c->off < c->len) return true;
    free(c->pend);
    c->pend = NULL;
    econn_watch(c, EV_READ);
    return true;
}

static bool econn_read_ready(struct econn *c)
{
    char *buf = c->el->buf;
    ssize_t n = recv(c->w.fd, buf, LOOP_BUF, 0);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (n == 0) return false; /* EOF: nothing is owed, as input is read only then */
    ssize_t sent = econn_send(c, buf, (size_t)n);
    if (sent < 0) return false;
    if (sent == n) return true;
    c->len = (size_t)(n - sent);
    c->off = 0;
    c->pend = malloc(c->len);
    if (!c->pend) return false;
    memcpy(c->pend, buf + sent, c->len);
    econn_watch(c, EV_WRITE);
    return true;
}

static void on_conn(struct ev_loop *loop, ev_io *w, int revents)
{
    struct econn *c = w->data;
    (void)loop;
    bool keep = c->pend ? !(revents & EV_WRITE) || econn_write_ready(c)
                        : !(revents & EV_READ) || econn_read_ready(c);
    if (!keep) econn_free(c);
}

static void conn_new(int fd, void *arg)
{
    struct eloop *el = arg;
    struct econn *c = malloc(sizeof *c);
    if (!c) {
        srv_conn_unserved(el->srv, fd, "out of memory for a connection");
        return;
    }
    c->el = el;
    c->pend = NULL;
    c->off = c->len = 0;
    c->next = el->conns.next;
    c->prev = &el->conns;
    el->conns.next->prev = c;
    el->conns.next = c;
    ev_io_init(&c->w, on_conn, fd, EV_READ);
    c->w.data = c;
    ev_io_start(el->loop, &c->w);
}

static void on_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct eloop *el = w->data;
    (void)revents;
    ev_io_start(loop, &el->accept_w);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    struct eloop *el = w->data;
    (void)revents;
    if (srv_accept_batch(&el->acc, ACCEPT_BUDGET, SOCK_NONBLOCK, conn_new, el) ==
        SRV_ACCEPT_BACKOFF) {
        /* libev's io watchers are level-triggered: leave the listener out until the timer. */
        ev_io_stop(loop, &el->accept_w);
        ev_timer_set(&el->retry_w, SRV_BACKOFF_MS / 1000.0, 0.);
        ev_timer_start(loop, &el->retry_w);
    }
}

static void on_stop(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)w, (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static const char *backend_name(unsigned b)
{
    return b == EVBACKEND_EPOLL    ? "epoll"
           : b == EVBACKEND_POLL   ? "poll"
           : b == EVBACKEND_SELECT ? "select"
                                   : "other";
}

static int eloop_init(void *arg, struct srv_server *srv, int i)
{
    struct eloop *el = arg;
    el->srv = srv;
    el->conns.next = el->conns.prev = &el->conns;
    el->acc.reserve_fd = -1;
    el->loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_NOENV);
    if (!el->loop || srv_acceptor_init(&el->acc, srv, srv->listen_fd[i]) < 0) return -1;
    ev_io_init(&el->accept_w, on_accept, srv->listen_fd[i], EV_READ);
    ev_io_init(&el->stop_w, on_stop, srv->stop_fd[i], EV_READ);
    ev_init(&el->retry_w, on_retry);
    el->accept_w.data = el->retry_w.data = el;
    ev_io_start(el->loop, &el->accept_w);
    ev_io_start(el->loop, &el->stop_w);
    snprintf(engine_name, sizeof engine_name, "libev-%s", backend_name(ev_backend(el->loop)));
    return 0;
}

/* Safe after a failed or skipped eloop_init (calloc'd struct). */
static void eloop_fini(void *arg)
{
    struct eloop *el = arg;
    while (el->conns.next && el->conns.next != &el->conns)
        econn_free(el->conns.next);
    if (el->loop) ev_loop_destroy(el->loop);
    if (el->srv) {
        srv_acceptor_fini(&el->acc);
        srv_add(&el->srv->stats->bytes, el->bytes);
    }
}

static void eloop_serve(void *arg)
{
    struct eloop *el = arg;
    ev_run(el->loop, 0);
}

static int libev_run(struct srv_server *srv)
{
    static const struct srv_loop_ops ops = {"libev", sizeof(struct eloop), eloop_init, eloop_serve,
                                            eloop_fini};
    srv->stats->engine = engine_name;
    return srv_run_loops(srv, &ops);
}

const struct srv_model srv_model_libev = {.name = "libev",
                                          .summary = "libev io watchers, one event loop per thread",
                                          .concurrency = SRV_EVENT_LOOP,
                                          .per_thread_listener = true,
                                          .takes_threads = true,
                                          .run = libev_run};
