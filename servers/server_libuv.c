/* server_libuv.c - callback-style echo on libuv streams, one uv_loop_t per thread. */
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#define ACCEPT_BUDGET 64
#define LOOP_BUF      65536     /* one read, shared by the loop's connections */
#define HIGH_WATER    (1 << 20) /* reply bytes queued for a slow reader before reading pauses */

/*
 * As libuv's guide writes a TCP echo server: a uv_tcp_t per connection, uv_read_start with an
 * allocation callback, uv_try_write of what was read and uv_write of what the socket did not
 * take, uv_close for every handle before uv_loop_close. The listener is the one departure:
 * libuv's own accept loop (uv_listen) sheds connections at fd exhaustion without a count and
 * has no --max-conns, so the listener is a uv_poll_t that calls the shared acceptor
 * (server_accept.c) and hands each admitted fd to uv_tcp_open.
 */
struct uconn {
    uv_tcp_t tcp; /* first: the handle's address is the connection's */
    struct uconn *prev, *next;
    struct uloop *ul;
    bool reading, closing;
    bool eof; /* the peer sent EOF while a reply was queued: close once it has gone */
};

struct uwrite {
    uv_write_t req;
    struct uconn *c;
    size_t len;
    char data[]; /* the part of a read the socket did not take at once */
};

struct uloop {
    struct srv_server *srv;
    uv_loop_t loop;
    uv_poll_t accept_w, stop_w;
    uv_timer_t retry_w;
    uv_tcp_t probe; /* closed at once: see uloop_init */
    struct srv_acceptor acc;
    struct uconn conns;
    uint64_t bytes;
    bool loop_ok; /* uv_loop_init completed */
    char buf[LOOP_BUF];
};

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
static void on_accept(uv_poll_t *p, int status, int events);

static void on_closed(uv_handle_t *h)
{
    struct uconn *c = (struct uconn *)h;
    srv_conn_done(c->ul->srv);
    free(c);
}

static void uconn_close(struct uconn *c)
{
    if (c->closing) return;
    c->closing = true;
    c->prev->next = c->next;
    c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->tcp,
             on_closed); /* cancels queued writes: their bytes never count */
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct uconn *c = (struct uconn *)h;
    (void)suggested;
    *b = uv_buf_init(c->ul->buf, LOOP_BUF); /* consumed in on_read before the next read */
}

static void on_written(uv_write_t *req, int status)
{
    struct uwrite *w = (struct uwrite *)req;
    struct uconn *c = w->c;
    if (status == 0) c->ul->bytes += w->len;
    free(w);
    if (status == UV_ECANCELED) return; /* closed meanwhile */
    if (status < 0 || (c->eof && c->tcp.write_queue_size == 0)) {
        uconn_close(c);
    } else if (!c->reading && !c->eof && c->tcp.write_queue_size == 0) {
        c->reading = true;
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct uconn *c = (struct uconn *)s;
    if (n == 0) return; /* EAGAIN */
    if (n < 0) {
        /* EOF while a reply is queued: it is still owed, so close once it has gone. */
        if (n == UV_EOF && s->write_queue_size > 0) {
            uv_read_stop(s);
            c->reading = false;
            c->eof = true;
            return;
        }
        uconn_close(c);
        return;
    }
    uv_buf_t all = uv_buf_init(b->base, (unsigned)n);
    int sent = s->write_queue_size == 0 ? uv_try_write(s, &all, 1) : 0;
    if (sent == UV_EAGAIN || sent == UV_ENOSYS) sent = 0;
    if (sent < 0) {
        uconn_close(c);
        return;
    }
    c->ul->bytes += (uint64_t)sent;
    if (sent == n) return;
    size_t rest = (size_t)(n - sent);
    struct uwrite *w = malloc(sizeof *w + rest);
    if (!w) {
        uconn_close(c);
        return;
    }
    w->c = c;
    w->len = rest;
    memcpy(w->data, b->base + sent, rest);
    uv_buf_t part = uv_buf_init(w->data, (unsigned)rest);
    if (uv_write(&w->req, s, &part, 1, on_written) < 0) {
        free(w);
        uconn_close(c);
        return;
    }
    if (s->write_queue_size >= HIGH_WATER) { /* a client that does not read stops being read */
        uv_read_stop(s);
        c->reading = false;
    }
}

static void conn_new(int fd, void *arg)
{
    struct uloop *ul = arg;
    struct uconn *c = calloc(1, sizeof *c);
    if (!c || uv_tcp_init(&ul->loop, &c->tcp) < 0) {
        free(c);
        srv_conn_unserved(ul->srv, fd, "cannot make a uv_tcp_t for a connection");
        return;
    }
    c->ul = ul;
    c->next = ul->conns.next;
    c->prev = &ul->conns;
    ul->conns.next->prev = c;
    ul->conns.next = c;
    if (uv_tcp_open(&c->tcp, fd) < 0) {
        close(fd); /* not taken by the handle, so uv_close leaves it */
        srv_add(&ul->srv->stats->spawn_failed, 1);
        uconn_close(c);
        return;
    }
    c->reading = true;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void on_retry(uv_timer_t *t)
{
    struct uloop *ul = t->data;
    uv_poll_start(&ul->accept_w, UV_READABLE, on_accept);
}

static void on_accept(uv_poll_t *p, int status, int events)
{
    struct uloop *ul = p->data;
    (void)status, (void)events;
    if (srv_accept_batch(&ul->acc, ACCEPT_BUDGET, SOCK_NONBLOCK, conn_new, ul) ==
        SRV_ACCEPT_BACKOFF) {
        /* uv_poll_t is level-triggered: leave the listener out until the timer. */
        uv_poll_stop(p);
        uv_timer_start(&ul->retry_w, on_retry, SRV_BACKOFF_MS, 0);
    }
}

static void on_stop(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    uv_stop(p->loop);
}

static int uloop_init(void *arg, struct srv_server *srv, int i)
{
    struct uloop *ul = arg;
    ul->srv = srv;
    ul->conns.next = ul->conns.prev = &ul->conns;
    ul->acc.reserve_fd = -1;
    if (uv_loop_init(&ul->loop) < 0) return -1;
    ul->loop_ok = true;
    if (srv_acceptor_init(&ul->acc, srv, srv->listen_fd[i]) < 0) return -1;
    if (uv_poll_init_socket(&ul->loop, &ul->accept_w, srv->listen_fd[i]) < 0 ||
        uv_poll_init(&ul->loop, &ul->stop_w, srv->stop_fd[i]) < 0 ||
        uv_timer_init(&ul->loop, &ul->retry_w) < 0)
        return -1;
    /* The first stream of a loop opens libuv's own spare fd (for its accept loop, unused
     * here), kept until uv_loop_close: open it now, before the server counts its fds. */
    if (uv_tcp_init(&ul->loop, &ul->probe) < 0) return -1;
    uv_close((uv_handle_t *)&ul->probe, NULL);
    ul->accept_w.data = ul->stop_w.data = ul->retry_w.data = ul;
    if (uv_poll_start(&ul->accept_w, UV_READABLE, on_accept) < 0 ||
        uv_poll_start(&ul->stop_w, UV_READABLE, on_stop) < 0)
        return -1;
    return 0;
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (uv_is_closing(h)) return;
    if (h->type == UV_TCP)
        uconn_close((struct uconn *)h);
    else
        uv_close(h, NULL); /* the listener's and stop fd's polls leave their fds open */
}

/* Safe after a failed or skipped uloop_init (calloc'd struct). */
static void uloop_fini(void *arg)
{
    struct uloop *ul = arg;
    if (ul->loop_ok) {
        uv_walk(&ul->loop, close_any, NULL);
        uv_run(&ul->loop, UV_RUN_DEFAULT); /* runs the close callbacks, then ends */
        if (uv_loop_close(&ul->loop) != 0)
            fputs("echo-server: a libuv handle was left open at exit\n", stderr);
    }
    if (ul->srv) {
        srv_acceptor_fini(&ul->acc);
        srv_add(&ul->srv->stats->bytes, ul->bytes);
    }
}

static void uloop_serve(void *arg)
{
    struct uloop *ul = arg;
    uv_run(&ul->loop, UV_RUN_DEFAULT);
}

static int libuv_run(struct srv_server *srv)
{
    static const struct srv_loop_ops ops = {"libuv", sizeof(struct uloop), uloop_init, uloop_serve,
                                            uloop_fini};
    srv->stats->engine = "libuv-epoll";
    return srv_run_loops(srv, &ops);
}

const struct srv_model srv_model_libuv = {.name = "libuv",
                                          .summary = "libuv streams, one event loop per thread",
                                          .concurrency = SRV_EVENT_LOOP,
                                          .per_thread_listener = true,
                                          .takes_threads = true,
                                          .run = libuv_run};
