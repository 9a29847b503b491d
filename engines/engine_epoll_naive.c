/* engine_epoll_naive.c - EPOLL_CTL_ADD before every wait, EPOLL_CTL_DEL after it (NtyCo style). */
#include "engine_epoll.h"

#include <stdlib.h>
#include <string.h>

/*
 * The pattern NtyCo, libco and libtask use: an fd is in the epoll set exactly while a fiber
 * waits on it, so one fd is never owned by two contexts and nothing is left behind. It costs
 * two epoll_ctl per wait. When a reader and a writer wait on the same fd at once, the second
 * wait and the first wake-up become EPOLL_CTL_MOD (the fd can only be added once); it is still
 * two calls per wait.
 */
typedef struct naive {
    eng__ep ep;
} naive;

static void *naive_init(void)
{
    naive *n = calloc(1, sizeof *n);
    if (n && eng__ep_init(&n->ep) < 0) {
        free(n);
        n = NULL;
    }
    return n;
}

static void naive_free(void *st)
{
    naive *n = st;
    eng__ep_fini(&n->ep);
    free(n);
}

/* Make the kernel's interest equal the set of parked waiters. */
static void settle(eng__ep *ep, int fd, eng__fd *f)
{
    uint32_t need = eng__waiting(f);
    if (need == f->kmask) return;
    if (need == 0)
        eng__ctl(ep, EPOLL_CTL_DEL, fd, 0, 0);
    else
        eng__ctl(ep, EPOLL_CTL_MOD, fd, need, 0);
    f->kmask = need;
}

static int naive_want(void *st, int fd, uint32_t dir, void *token)
{
    naive *n = st;
    eng__fd *f = eng__ep_fd(&n->ep, fd);
    if (!f || eng__park(&n->ep, f, dir, token) < 0) return -1;
    uint32_t need = eng__waiting(f);
    if (eng__ctl(&n->ep, f->kmask ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, need, 0) < 0) {
        f->tok[eng__dir_index(dir)] = NULL;
        return -1;
    }
    f->kmask = need;
    return 0;
}

static void naive_cancel(void *st, int fd, uint32_t dir)
{
    naive *n = st;
    eng__fd *f = eng__ep_peek(&n->ep, fd);
    if (!f) return;
    f->tok[eng__dir_index(dir)] = NULL;
    settle(&n->ep, fd, f);
}

static int naive_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    naive *n = st;
    int got = 0, nev = eng__wait(&n->ep, timeout_ns);
    for (int i = 0; i < nev; i++) {
        int fd = n->ep.evs[i].data.fd;
        eng__fd *f = eng__ep_peek(&n->ep, fd);
        if (!f) continue;
        eng__deliver(&n->ep, f, eng__revents(n->ep.evs[i].events), fn, ctx, &got);
        settle(&n->ep, fd, f);
    }
    return nev < 0 ? -1 : got;
}

static void naive_fd_closed(void *st, int fd)
{
    naive *n = st;
    eng__fd *f = eng__ep_peek(&n->ep, fd);
    if (!f) return;
    if (f->kmask) eng__ctl(&n->ep, EPOLL_CTL_DEL, fd, 0, 0);
    memset(f, 0, sizeof *f);
}

static void naive_stats(void *st, eng_stats *out)
{
    eng__ep_stats(&((naive *)st)->ep, out);
}

static const char *naive_method(void *st)
{
    (void)st;
    return "epoll";
}

const eng_ops eng__naive = {
    .name = "naive",
    .summary = "EPOLL_CTL_ADD before every wait, EPOLL_CTL_DEL after (2 epoll_ctl per wait)",
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = 2,
              .interest_calls_first_use = 0,
              .reports_hup_err = true,
              .edge_triggered = false,
              .completion = false},
    .init = naive_init,
    .free = naive_free,
    .want = naive_want,
    .cancel = naive_cancel,
    .poll = naive_poll,
    .fd_closed = naive_fd_closed,
    .get_stats = naive_stats,
    .method = naive_method,
};
