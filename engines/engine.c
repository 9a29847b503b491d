/* engine.c - engine registry and the pieces the epoll engines share (fd table, counted ctl). */
#define _GNU_SOURCE
#include "engine.h"
#include "engine_epoll.h"
#include "engine_registry.h" /* ENG_ENGINES(X): generated from engines/CMakeLists.txt */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The registry's order (engines/CMakeLists.txt). */
#define ENG__DECLARE(id) extern const eng_ops eng__##id;
ENG_ENGINES(ENG__DECLARE)
#undef ENG__DECLARE

static const eng_ops *const engines[] = {
#define ENG__ENTRY(id) &eng__##id,
    ENG_ENGINES(ENG__ENTRY)
#undef ENG__ENTRY
};

size_t eng_count(void)
{
    return sizeof engines / sizeof engines[0];
}

const eng_ops *eng_at(size_t i)
{
    return i < eng_count() ? engines[i] : NULL;
}

const eng_ops *eng_find(const char *name)
{
    for (size_t i = 0; name && i < eng_count(); i++)
        if (strcmp(engines[i]->name, name) == 0) return engines[i];
    return NULL;
}

const char *eng_names(void)
{
    static char names[256];
    if (!names[0]) {
        size_t used = 0;
        for (size_t i = 0; i < eng_count(); i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     engines[i]->name);
    }
    return names;
}

/* ---- shared by the epoll engines ------------------------------------------------------ */

int eng__ep_init(eng__ep *ep)
{
    memset(ep, 0, sizeof *ep);
    ep->st.ctl_source = ENG_CTL_SELF;
    ep->epfd = epoll_create1(EPOLL_CLOEXEC);
    return ep->epfd < 0 ? -1 : 0;
}

void eng__ep_fini(eng__ep *ep)
{
    if (ep->epfd >= 0) close(ep->epfd);
    free(ep->fds);
    ep->fds = NULL;
    ep->nfds = 0;
    ep->epfd = -1;
}

long eng__grow_fd_table(void *table, size_t *len, size_t size, int fd)
{
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    size_t old = *len;
    if ((size_t)fd < old) return (long)old;
    size_t n = old ? old : 64;
    while (n <= (size_t)fd)
        n *= 2;
    void *cur;
    memcpy(&cur, table, sizeof cur);
    char *grown = realloc(cur, n * size);
    if (!grown) return -1; /* errno is ENOMEM */
    memset(grown + old * size, 0, (n - old) * size);
    memcpy(table, &grown, sizeof grown);
    *len = n;
    return (long)old;
}

eng__fd *eng__ep_fd_grow(eng__ep *ep, int fd)
{
    if (eng__grow_fd_table(&ep->fds, &ep->nfds, sizeof *ep->fds, fd) < 0) return NULL;
    return &ep->fds[fd];
}

static uint64_t *op_counter(eng__ep *ep, int op)
{
    return op == EPOLL_CTL_ADD   ? &ep->st.ctl_add
           : op == EPOLL_CTL_MOD ? &ep->st.ctl_mod
                                 : &ep->st.ctl_del;
}

static int ctl_once(eng__ep *ep, int op, int fd, uint32_t events)
{
    /* data.fd only: a stale event cannot outlive its registration, because every
     * registration is removed (fd_closed) before its fd number can be reused. */
    struct epoll_event ev = {.events = events, .data.fd = fd};
    (*op_counter(ep, op))++;
    return epoll_ctl(ep->epfd, op, fd, &ev);
}

int eng__ctl(eng__ep *ep, int op, int fd, uint32_t mask, uint32_t extra)
{
    uint32_t events = extra | ((mask & ENG_IN) ? EPOLLIN : 0) | ((mask & ENG_OUT) ? EPOLLOUT : 0);
    if (ctl_once(ep, op, fd, events) == 0) return 0;
    if (op == EPOLL_CTL_ADD && errno == EEXIST) return ctl_once(ep, EPOLL_CTL_MOD, fd, events);
    if (op == EPOLL_CTL_MOD && errno == ENOENT) return ctl_once(ep, EPOLL_CTL_ADD, fd, events);
    if (op == EPOLL_CTL_DEL && (errno == ENOENT || errno == EBADF)) return 0;
    return -1;
}

int eng__wait(eng__ep *ep, int64_t timeout_ns)
{
    /* epoll_pwait2 takes a timespec, so a sleeper is not rounded up to whole milliseconds. A
     * timeout that is infinite, zero or whole milliseconds loses nothing in epoll_wait, whose
     * kernel path is shorter (no timespec copied in, no signal mask looked at): a server with
     * no timers armed polls with -1 or 0 only. Kernels older than 5.11 lack epoll_pwait2 and
     * get epoll_wait with the timeout rounded up. */
    static int no_pwait2; /* shared by all threads: atomic so the one store is not a race */
    int n;
    ep->seq++;
    ep->st.polls++;
    if (timeout_ns > 0 && timeout_ns % 1000000 != 0 &&
        !__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
        struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
        ep->st.epoll_waits++;
        n = epoll_pwait2(ep->epfd, ep->evs, ENG__BATCH, &ts, NULL);
        if (n >= 0 || errno != ENOSYS) goto done;
        __atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
    }
    int ms = timeout_ns < 0                             ? -1
             : timeout_ns > (int64_t)1000000 * 86400000 ? 86400000
                                                        : (int)((timeout_ns + 999999) / 1000000);
    ep->st.epoll_waits++;
    n = epoll_wait(ep->epfd, ep->evs, ENG__BATCH, ms);
done:
    if (n < 0 && errno == EINTR) return 0;
    return n;
}

void eng__ep_stats(const eng__ep *ep, eng_stats *out)
{
    *out = ep->st;
}
