/* engine_epoll_oneshot.c - EPOLLONESHOT: ADD on first use, one EPOLL_CTL_MOD re-arm per wait. */
#include "engine_epoll.h"

#include <stdlib.h>
#include <string.h>

/*
 * The kernel disarms a oneshot registration after reporting it once, so a fired fd can never
 * spin the loop and a wake-up needs no removal: each wait re-arms with one MOD. The fd stays
 * registered (disarmed) between waits, so only its first wait is an ADD. Disarming covers the
 * whole fd, so when a reader and a writer wait together and one fires, the other is re-armed
 * at once. A cancelled waiter's arming is left alone: if it fires, nobody is woken and the
 * kernel disarms it again.
 */
typedef struct oneshot {
    eng__ep ep;
} oneshot;

static void *oneshot_init(void)
{
    oneshot *o = calloc(1, sizeof *o);
    if (o && eng__ep_init(&o->ep) < 0) {
        free(o);
        o = NULL;
    }
    return o;
}

static void oneshot_free(void *st)
{
    oneshot *o = st;
    eng__ep_fini(&o->ep);
    free(o);
}

/* Arm the fd for every direction that has a waiter (kmask = what is armed now). */
static int arm(eng__ep *ep, int fd, eng__fd *f)
{
    uint32_t need = eng__waiting(f);
    if (!need || (f->kmask & need) == need) return 0;
    if (eng__ctl(ep, f->reg ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, need, EPOLLONESHOT) < 0) return -1;
    f->reg = 1;
    f->kmask = need;
    return 0;
}

static int oneshot_want(void *st, int fd, uint32_t dir, void *token)
{
    oneshot *o = st;
    eng__fd *f = eng__ep_fd(&o->ep, fd);
    if (!f || eng__park(&o->ep, f, dir, token) < 0) return -1;
    if (arm(&o->ep, fd, f) < 0) {
        f->tok[eng__dir_index(dir)] = NULL;
        return -1;
    }
    return 0;
}

static void oneshot_cancel(void *st, int fd, uint32_t dir)
{
    oneshot *o = st;
    eng__fd *f = eng__ep_peek(&o->ep, fd);
    if (f) f->tok[eng__dir_index(dir)] = NULL;
}

static int oneshot_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    oneshot *o = st;
    int got = 0, nev = eng__wait(&o->ep, timeout_ns);
    for (int i = 0; i < nev; i++) {
        int fd = o->ep.evs[i].data.fd;
        eng__fd *f = eng__ep_peek(&o->ep, fd);
        if (!f || !f->reg) continue;
        uint32_t ready = eng__revents(o->ep.evs[i].events);
        eng__deliver(&o->ep, f, ready, fn, ctx, &got);
        f->kmask = 0; /* the kernel disarmed the fd when it reported it */
        arm(&o->ep, fd, f);
    }
    return nev < 0 ? -1 : got;
}

static void oneshot_fd_closed(void *st, int fd)
{
    oneshot *o = st;
    eng__fd *f = eng__ep_peek(&o->ep, fd);
    if (!f) return;
    if (f->reg) eng__ctl(&o->ep, EPOLL_CTL_DEL, fd, 0, 0);
    memset(f, 0, sizeof *f);
}

static void oneshot_stats(void *st, eng_stats *out)
{
    eng__ep_stats(&((oneshot *)st)->ep, out);
}

static const char *oneshot_method(void *st)
{
    (void)st;
    return "epoll";
}

const eng_ops eng__oneshot = {
    .name = "oneshot",
    .summary = "EPOLLONESHOT, ADD once per fd then one EPOLL_CTL_MOD re-arm per wait",
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = 1,
              .interest_calls_first_use = 0,
              .reports_hup_err = true,
              .edge_triggered = false,
              .completion = false},
    .init = oneshot_init,
    .free = oneshot_free,
    .want = oneshot_want,
    .cancel = oneshot_cancel,
    .poll = oneshot_poll,
    .fd_closed = oneshot_fd_closed,
    .get_stats = oneshot_stats,
    .method = oneshot_method,
};
