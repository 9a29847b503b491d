/* server_accept.c - accepting for every model: --max-conns, fd exhaustion, TCP_NODELAY. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_bool logged_fds, logged_accept;

void srv_log_once(atomic_bool *flag, const char *fmt, ...)
{
    if (atomic_exchange(flag, true)) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("echo-server: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (logged once; later occurrences are counted in the statistics)\n", stderr);
    va_end(ap);
}

static int open_reserve(void)
{
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int srv_acceptor_init(struct srv_acceptor *a, struct srv_server *srv, int lfd)
{
    a->srv = srv;
    a->lfd = lfd;
    a->reserve_fd = open_reserve();
    return a->reserve_fd < 0 ? -1 : 0;
}

/* Another loop may have taken the slot our reserve gave up: take one back when we can. */
void srv_acceptor_refill(struct srv_acceptor *a)
{
    if (a->reserve_fd < 0) a->reserve_fd = open_reserve();
}

void srv_acceptor_fini(struct srv_acceptor *a)
{
    if (a->reserve_fd >= 0) close(a->reserve_fd);
    a->reserve_fd = -1;
}

/*
 * Out of fds: the pending connection keeps the listener readable, so waiting for
 * readability again would spin. Give up the reserved fd for a moment, take the connection
 * and close it at once (the client sees an orderly close instead of hanging in the
 * backlog), then take the reserve back. With several loops in one process another thread
 * may grab the freed slot first; then there is nothing to do but back off.
 */
static enum srv_accept_rc shed_one(struct srv_acceptor *a)
{
    srv_acceptor_refill(a);
    if (a->reserve_fd < 0) return SRV_ACCEPT_BACKOFF;
    close(a->reserve_fd);
    int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
    int err = errno;
    if (fd >= 0) {
        close(fd);
        srv_add(&a->srv->stats->shed, 1);
    }
    a->reserve_fd = open_reserve();
    if (fd < 0 && (err == EAGAIN || err == EWOULDBLOCK)) return SRV_ACCEPT_AGAIN;
    return fd >= 0 && a->reserve_fd >= 0 ? SRV_ACCEPT_SKIP : SRV_ACCEPT_BACKOFF;
}

enum srv_accept_rc srv_accept_failed(struct srv_acceptor *a, int err)
{
    struct srv_stats *st = a->srv->stats;
    switch (err) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
        return SRV_ACCEPT_AGAIN;
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case EPERM: /* a firewall rule refused it: only this connection is concerned */
        srv_add(&st->accept_errors, 1);
        return SRV_ACCEPT_SKIP;
    case EMFILE:
    case ENFILE:
        srv_add(&st->fd_exhausted, 1);
        srv_log_once(&logged_fds,
                     "out of file descriptors on accept (%s): existing connections go on, "
                     "new ones are closed at once until fds are free",
                     strerror(err));
        return shed_one(a);
    default: /* ENOBUFS, ENOMEM and anything unexpected: let the machine breathe */
        srv_add(&st->accept_errors, 1);
        srv_log_once(&logged_accept, "accept failed: %s; backing off %d ms", strerror(err),
                     SRV_BACKOFF_MS);
        return SRV_ACCEPT_BACKOFF;
    }
}

static void update_max(srv_counter *max, uint64_t now)
{
    uint64_t seen = atomic_load_explicit(max, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak(max, &seen, now)) {
    }
}

bool srv_admit(struct srv_server *srv, int fd)
{
    struct srv_stats *st = srv->stats;
    uint64_t now = atomic_fetch_add(&st->active, 1) + 1;
    long max = srv->opt->max_conns, ceiling = srv->conns_ceiling;
    if (ceiling > 0 && (max == 0 || max > ceiling)) max = ceiling;
    if (max > 0 && now > (uint64_t)max) {
        atomic_fetch_sub(&st->active, 1);
        srv_add(&st->refused, 1);
        close(fd);
        return false;
    }
    update_max(&st->max_concurrent, now);
    srv_add(&st->connections, 1);
    /* Echo replies are small and immediate: Nagle would only delay them. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return true;
}

void srv_conn_done(struct srv_server *srv)
{
    atomic_fetch_sub(&srv->stats->active, 1);
}

enum srv_accept_rc srv_accept(struct srv_acceptor *a, int *fd, int flags)
{
    srv_acceptor_refill(a);
    int c = accept4(a->lfd, NULL, NULL, flags | SOCK_CLOEXEC);
    if (c < 0) return srv_accept_failed(a, errno);
    if (!srv_admit(a->srv, c)) return SRV_ACCEPT_SKIP;
    *fd = c;
    return SRV_ACCEPT_OK;
}

enum srv_accept_rc srv_accept_batch(struct srv_acceptor *a, int budget, int flags,
                                    void (*admit)(int fd, void *ctx), void *ctx)
{
    for (int i = 0; i < budget; i++) {
        int fd;
        switch (srv_accept(a, &fd, flags)) {
        case SRV_ACCEPT_OK:
            admit(fd, ctx);
            break;
        case SRV_ACCEPT_SKIP:
            break;
        case SRV_ACCEPT_AGAIN:
            return SRV_ACCEPT_AGAIN;
        case SRV_ACCEPT_BACKOFF:
            return SRV_ACCEPT_BACKOFF;
        }
    }
    return SRV_ACCEPT_SKIP;
}

int srv_accept_burst(struct srv_acceptor *a, int burst, void (*admit)(int fd, void *ctx), void *ctx)
{
    return srv_accept_batch(a, burst, 0, admit, ctx) == SRV_ACCEPT_BACKOFF ? SRV_BACKOFF_MS : -1;
}

void srv_conn_unserved(struct srv_server *srv, int fd, const char *fmt, ...)
{
    static atomic_bool logged;
    if (fd >= 0) close(fd);
    srv_add(&srv->stats->spawn_failed, 1);
    srv_conn_done(srv);
    if (atomic_load(&logged)) return;
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    srv_log_once(&logged, "%s; connection closed", why);
}
