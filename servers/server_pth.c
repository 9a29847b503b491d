/* server_pth.c - blocking-style echo on GNU Pth: one Pth thread per connection (pth_read and
 * pth_write), all on the process's one Pth scheduler. */
#include "server.h"

#include <errno.h>
#include <pth.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#define ACCEPT_BUDGET 64
#define SESSION_BUF   16384       /* the fiber server's read buffer */
#define PTH_STACK     (64 * 1024) /* the fiber server's default stack */

/*
 * Pth in a process with kernel threads. Pth keeps its scheduler in globals and is not safe for
 * use by several kernel threads, so every Pth call is made by the one thread that runs this
 * model (hence no --threads); the front end's other thread, which takes SIGINT and SIGTERM with
 * sigwait, never calls Pth. One thing does not hold: Pth's scheduler waits in select with an
 * empty signal mask (so that it could catch signals for its threads), so while it waits the
 * front end's blocking of SIGINT and SIGTERM is lifted on this kernel thread and a SIGTERM may
 * land here, where its default action would end the process before the statistics (seen: the
 * process killed, no statistics line). The model therefore installs a handler that stops the server
 * as the signal thread does (srv_stop is async-signal-safe: an atomic exchange and eventfd writes).
 * With that, one process hosts both: no separate binary.
 *
 * Pth waits with select(2): an fd at or above FD_SETSIZE cannot be waited for. The model
 * declares a ceiling below it by the fds the process keeps besides its connections (stdio,
 * listener, stop eventfd, reserve fd, Pth's signal pipe, and spares), which the harness reads
 * (`conns_ceiling` in `--list --json`), and the acceptor enforces it: a connection beyond it is
 * refused at once and counted, as beyond --max-conns. An fd at or above FD_SETSIZE all the same
 * (more fds of the process's own than foreseen) is closed and counted as a session that could
 * not be started.
 *
 * A connection's socket stays in blocking mode, as Pth's I/O calls expect: pth_read first polls
 * it with a zero-timeout select and waits in the scheduler only when nothing is there, and
 * pth_write switches it to non-blocking for the write and back. Each also takes an extra event,
 * the stop eventfd turning readable, which ends a wait with EINTR: that is how the stop reaches
 * every session.
 */
#define PTH_OWN_FDS       16
#define PTH_CONNS_CEILING (FD_SETSIZE - PTH_OWN_FDS)

struct pserv {
    struct srv_server *srv;
    struct srv_acceptor acc;
    uint64_t bytes;
    long live; /* sessions running */
};

struct psession {
    struct pserv *ps;
    int fd;
};

static struct srv_server *signalled; /* for on_signal */

static void on_signal(int sig)
{
    (void)sig;
    srv_stop(signalled);
}

static void *session(void *arg)
{
    struct psession *s = arg;
    struct pserv *ps = s->ps;
    char buf[SESSION_BUF];
    pth_event_t stop = pth_event(PTH_EVENT_FD | PTH_UNTIL_FD_READABLE, ps->srv->stop_fd[0]);
    while (stop && !srv_stopping(ps->srv)) {
        ssize_t n = pth_read_ev(s->fd, buf, sizeof buf, stop);
        if (n <= 0) break; /* EOF, an error, or EINTR: the stop */
        ssize_t w = pth_write_ev(s->fd, buf, (size_t)n, stop);
        if (w > 0) ps->bytes += (uint64_t)w;
        if (w != n) break;
    }
    if (stop) pth_event_free(stop, PTH_FREE_THIS);
    close(s->fd);
    srv_conn_done(ps->srv);
    ps->live--;
    free(s);
    return NULL;
}

static void conn_new(struct pserv *ps, pth_attr_t attr, int fd)
{
    if (fd >= FD_SETSIZE) {
        srv_conn_unserved(ps->srv, fd, "fd beyond FD_SETSIZE, which Pth's select cannot wait for");
        return;
    }
    struct psession *s = malloc(sizeof *s);
    if (!s) {
        srv_conn_unserved(ps->srv, fd, "out of memory for a Pth thread");
        return;
    }
    *s = (struct psession){.ps = ps, .fd = fd};
    ps->live++;
    if (!pth_spawn(attr, session, s)) {
        ps->live--;
        free(s);
        srv_conn_unserved(ps->srv, fd, "cannot spawn a Pth thread");
    }
}

/* The listener, on Pth's main thread, until the stop; then wait for every session to end. */
static void serve(struct pserv *ps, pth_attr_t attr)
{
    struct srv_server *srv = ps->srv;
    pth_event_t ready = pth_event(PTH_EVENT_FD | PTH_UNTIL_FD_READABLE, srv->listen_fd[0]);
    pth_event_t stop = pth_event(PTH_EVENT_FD | PTH_UNTIL_FD_READABLE, srv->stop_fd[0]);
    if (!ready || !stop) {
        fputs("echo-server: cannot make the Pth events\n", stderr);
        srv_stop(srv);
    } else {
        pth_event_concat(ready, stop, NULL);
    }
    bool wait = true;
    while (!srv_stopping(srv)) {
        if (wait) pth_wait(ready);
        wait = false;
        for (int i = 0; i < ACCEPT_BUDGET && !wait && !srv_stopping(srv); i++) {
            int fd;
            switch (srv_accept(&ps->acc, &fd, 0)) {
            case SRV_ACCEPT_OK:
                conn_new(ps, attr, fd);
                break;
            case SRV_ACCEPT_SKIP:
                break;
            case SRV_ACCEPT_AGAIN:
                wait = true;
                break;
            case SRV_ACCEPT_BACKOFF:
                pth_nap(pth_time(0, SRV_BACKOFF_MS * 1000));
                i = ACCEPT_BUDGET;
                break;
            }
        }
        if (!wait) pth_yield(NULL); /* a full budget: the sessions run first */
    }
    if (ready) {
        pth_event_isolate(ready);
        pth_event_free(ready, PTH_FREE_THIS);
    }
    if (stop) pth_event_free(stop, PTH_FREE_THIS);
    while (ps->live > 0) /* each sees the stop eventfd readable and ends */
        pth_nap(pth_time(0, 1000));
}

static int pth_model_run(struct srv_server *srv)
{
    struct pserv ps = {.srv = srv, .acc.reserve_fd = -1};
    srv->conns_ceiling = PTH_CONNS_CEILING;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    signalled = srv;
    if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
        perror("echo-server: sigaction");
        return -1;
    }
    if (!pth_init()) {
        fprintf(stderr, "echo-server: pth_init: %s\n", strerror(errno));
        return -1;
    }
    pth_attr_t attr = pth_attr_new();
    int rc = -1;
    if (!attr || !pth_attr_set(attr, PTH_ATTR_STACK_SIZE, (unsigned int)PTH_STACK) ||
        !pth_attr_set(attr, PTH_ATTR_JOINABLE, FALSE)) {
        fputs("echo-server: cannot set up the Pth thread attributes\n", stderr);
    } else if (srv_acceptor_init(&ps.acc, srv, srv->listen_fd[0]) < 0) {
        fputs("echo-server: cannot open the reserve fd\n", stderr);
    } else {
        srv->stats->engine = "pth-select";
        srv_ready(srv);
        serve(&ps, attr);
        rc = 0;
    }
    if (rc < 0) srv_stop(srv);
    srv_acceptor_fini(&ps.acc);
    if (attr) pth_attr_destroy(attr);
    srv_add(&srv->stats->bytes, ps.bytes);
    pth_kill();
    return rc;
}

static void pth_list_props(FILE *f)
{
    fprintf(f, ", \"conns_ceiling\": %d", PTH_CONNS_CEILING);
}

const struct srv_model srv_model_pth = {.name = "pth",
                                        .summary = "GNU Pth, one cooperative thread per connection",
                                        .concurrency = SRV_FIBER_PER_CONN,
                                        .list_props = pth_list_props,
                                        .run = pth_model_run};
