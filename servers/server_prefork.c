/* server_prefork.c - pre-forked processes, each blocking in accept, one connection at a time. */
#include "echo_session.h"
#include "server.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>

#define DEFAULT_PROCS 150 /* Apache 1.3's default MaxClients: connections served at once */

/*
 * Apache 1.3's prefork (seed 003): the parent (server_procs.c) forks --procs workers up front;
 * each blocks in accept(2) on the one shared listener, echoes that connection to its end with
 * the blocking session of the thread and fork models, and only then accepts again. So at most
 * --procs connections are served at once; the rest wait in the listen backlog. Blocking
 * accept wakes one waiter per connection (the kernel queues accept waiters exclusively), so
 * the workers need no accept mutex. The listener's file description is shared with the
 * parent, which never accepts, so the first worker makes it blocking for all.
 *
 * A worker ends at SIGTERM from the parent, like a fork child: everything it counts goes
 * into the shared statistics as it happens, and the kernel closes its connection.
 */
static int prefork_run(struct srv_server *srv)
{
    struct srv_acceptor a;
    int lfd = srv->listen_fd[0];
    int fl = fcntl(lfd, F_GETFL);
    if (fl < 0 || fcntl(lfd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
        srv_acceptor_init(&a, srv, lfd) < 0) {
        perror("echo-server: prefork worker setup");
        return -1;
    }
    srv->stats->epoll_counted = true; /* blocking accept and IO: epoll_ctl is never called */
    char buf[SRV_ECHO_BUF];
    srv_ready(srv);
    for (;;) {
        int fd;
        switch (srv_accept(&a, &fd, 0)) {
        case SRV_ACCEPT_OK: {
            struct srv_io io = srv_fd_io(&fd);
            srv_echo_session(&io, buf, sizeof buf, &srv->stats->bytes);
            srv_conn_done(srv);
            break;
        }
        case SRV_ACCEPT_BACKOFF:
            nanosleep(&(struct timespec){0, SRV_BACKOFF_MS * 1000000L}, NULL);
            break;
        default: /* refused, shed, or a transient error: accept the next one */
            break;
        }
    }
}

const struct srv_model srv_model_prefork = {
    .name = "prefork",
    .summary = "pre-forked processes blocking in accept, one connection each at a time",
    .concurrency = SRV_PROCESS_POOL,
    .procs_kind = SRV_PROCS_SHARED,
    .term_kills_worker = true,
    .conn_holds_worker = true,
    .default_procs = DEFAULT_PROCS,
    .run = prefork_run};
