/* server_libevent.c - callback-style echo on libevent bufferevents, one event_base per thread. */
#include "server.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#define ACCEPT_BUDGET 64
#define HIGH_WATER    (1 << 20) /* echo bytes queued for a slow reader before reading pauses */

/*
 * Every event_base is created, run and freed by one thread, and the stop request arrives
 * through that loop's own eventfd, so no base is ever touched by two threads. libevent's
 * locking (evthread_use_pthreads, libevent_pthreads) would only add cost, so it is not used.
 */
struct lconn {
    struct lconn *prev, *next; /* every connection of the loop, for shutdown */
    struct lev *lv;
    struct bufferevent *bev;
    bool closing; /* the peer sent EOF; close once the output has drained */
};

struct lev {
    struct srv_server *srv;
    struct event_base *base;
    struct event *accept_ev, *stop_ev, *retry_ev;
    struct srv_acceptor acc;
    struct lconn conns;
    uint64_t bytes;
};

static char engine_name[48];

/* Bytes still queued were never echoed: take them back out of the count. */
static void lconn_free(struct lconn *c)
{
    c->lv->bytes -= evbuffer_get_length(bufferevent_get_output(c->bev));
    bufferevent_free(c->bev); /* BEV_OPT_CLOSE_ON_FREE closes the socket */
    c->prev->next = c->next;
    c->next->prev = c->prev;
    srv_conn_done(c->lv->srv);
    free(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct lconn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev), *out = bufferevent_get_output(bev);
    c->lv->bytes += evbuffer_get_length(in);
    evbuffer_add_buffer(out, in); /* moves the chains, no copy */
    if (evbuffer_get_length(out) >= HIGH_WATER)
        bufferevent_disable(bev, EV_READ); /* a client that does not read stops being read */
}

/* The output drained (write low watermark 0): finish a half-closed connection, or read on. */
static void on_write(struct bufferevent *bev, void *arg)
{
    struct lconn *c = arg;
    if (c->closing)
        lconn_free(c);
    else if (!(bufferevent_get_enabled(bev) & EV_READ))
        bufferevent_enable(bev, EV_READ);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct lconn *c = arg;
    if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
        evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
        c->closing = true; /* half-close: everything read is still owed to the client */
        bufferevent_disable(bev, EV_READ);
        return;
    }
    lconn_free(c); /* EOF with nothing owed, a reset, or an error */
}

static void conn_new(int fd, void *arg)
{
    struct lev *lv = arg;
    struct lconn *c = calloc(1, sizeof *c);
    struct bufferevent *bev =
        c ? bufferevent_socket_new(lv->base, fd, BEV_OPT_CLOSE_ON_FREE) : NULL;
    if (!bev || bufferevent_enable(bev, EV_READ | EV_WRITE) < 0) {
        if (bev) bufferevent_free(bev); /* BEV_OPT_CLOSE_ON_FREE closes fd */
        free(c);
        srv_conn_unserved(lv->srv, bev ? -1 : fd, "cannot make a bufferevent for a connection");
        return;
    }
    *c = (struct lconn){.lv = lv, .bev = bev, .next = lv->conns.next, .prev = &lv->conns};
    lv->conns.next->prev = c;
    lv->conns.next = c;
    bufferevent_setcb(bev, on_read, on_write, on_event, c);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    struct lev *lv = arg;
    (void)fd, (void)what;
    event_add(lv->accept_ev, NULL);
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
    struct lev *lv = arg;
    (void)lfd, (void)what;
    if (srv_accept_batch(&lv->acc, ACCEPT_BUDGET, SOCK_NONBLOCK, conn_new, lv) ==
        SRV_ACCEPT_BACKOFF) {
        /* Level-triggered: leave the listener out until the timer, or it would spin. */
        event_del(lv->accept_ev);
        event_add(lv->retry_ev, &(struct timeval){0, SRV_BACKOFF_MS * 1000});
    }
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
    struct lev *lv = arg;
    (void)fd, (void)what;
    event_base_loopbreak(lv->base);
}

static int lev_init(void *arg, struct srv_server *srv, int i)
{
    struct lev *lv = arg;
    lv->srv = srv;
    lv->conns.next = lv->conns.prev = &lv->conns;
    lv->acc.reserve_fd = -1;
    lv->base = event_base_new();
    if (!lv->base || srv_acceptor_init(&lv->acc, srv, srv->listen_fd[i]) < 0) return -1;
    lv->accept_ev = event_new(lv->base, srv->listen_fd[i], EV_READ | EV_PERSIST, on_accept, lv);
    lv->stop_ev = event_new(lv->base, srv->stop_fd[i], EV_READ | EV_PERSIST, on_stop, lv);
    lv->retry_ev = evtimer_new(lv->base, on_retry, lv);
    if (!lv->accept_ev || !lv->stop_ev || !lv->retry_ev) return -1;
    if (event_add(lv->accept_ev, NULL) < 0 || event_add(lv->stop_ev, NULL) < 0) return -1;
    snprintf(engine_name, sizeof engine_name, "libevent-%s", event_base_get_method(lv->base));
    return 0;
}

/* Safe after a failed or skipped lev_init (calloc'd struct). */
static void lev_fini(void *arg)
{
    struct lev *lv = arg;
    while (lv->conns.next && lv->conns.next != &lv->conns)
        lconn_free(lv->conns.next);
    if (lv->accept_ev) event_free(lv->accept_ev);
    if (lv->stop_ev) event_free(lv->stop_ev);
    if (lv->retry_ev) event_free(lv->retry_ev);
    if (lv->base) event_base_free(lv->base);
    if (lv->srv) {
        srv_acceptor_fini(&lv->acc);
        srv_add(&lv->srv->stats->bytes, lv->bytes);
    }
}

static void lev_serve(void *arg)
{
    struct lev *lv = arg;
    if (event_base_dispatch(lv->base) < 0)
        fputs("echo-server: event_base_dispatch failed\n", stderr);
}

static int libevent_run(struct srv_server *srv)
{
    static const struct srv_loop_ops ops = {"libevent", sizeof(struct lev), lev_init, lev_serve,
                                            lev_fini};
    srv->stats->engine = engine_name;
    return srv_run_loops(srv, &ops);
}

const struct srv_model srv_model_libevent = {.name = "libevent",
                                             .summary =
                                                 "libevent callbacks, one event loop per thread",
                                             .concurrency = SRV_EVENT_LOOP,
                                             .per_thread_listener = true,
                                             .takes_threads = true,
                                             .run = libevent_run};
