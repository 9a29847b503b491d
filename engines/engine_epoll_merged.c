/* engine_epoll_merged.c - cached per-fd interest; epoll_ctl only when the interest really changes.
 */
#include "engine_epoll.h"
#include "hot_text.h"

#include <stdlib.h>
#include <string.h>

/*
 * libfiber's observation: between a fiber's wake-up and its next wait on the same fd, the
 * naive engine deletes the interest and adds it straight back, two system calls that cancel
 * out. Here a waiter leaving (delivered or cancelled) changes nothing in the kernel; the next
 * wait on the same fd and direction finds the interest already there and costs nothing.
 *
 * The price of level-triggered interest nobody waits on: the kernel keeps reporting it. That
 * interest is dropped lazily, the way libuv drops an fd that has no watcher: only when an
 * event arrives for a direction with no waiter. One poll of grace is given first, because a
 * fiber woken in the previous poll may simply not have run yet and will wait again at once;
 * dropping its interest then would cost a MOD now and an ADD or MOD a moment later. So an fd
 * nobody waits on can make poll return without delivering at most twice before its interest
 * is gone: the loop never spins on it. EPOLLHUP and EPOLLERR are reported even for an empty
 * mask, so an fd whose last direction is dropped is deleted, not modified to nothing.
 */
typedef struct merged {
    eng__ep ep;
} merged;

static void *merged_init(void)
{
    merged *m = calloc(1, sizeof *m);
    if (m && eng__ep_init(&m->ep) < 0) {
        free(m);
        m = NULL;
    }
    return m;
}

static void merged_free(void *st)
{
    merged *m = st;
    eng__ep_fini(&m->ep);
    free(m);
}

/* merged_want when the fd's entry, the direction or the kernel's interest needs work. */
static __attribute__((noinline)) int want_slow(merged *m, int fd, uint32_t dir, void *token)
{
    eng__fd *f = eng__ep_fd(&m->ep, fd);
    if (!f || eng__park(&m->ep, f, dir, token) < 0) return -1;
    uint32_t need = f->kmask | dir;
    if (need == f->kmask) return 0; /* the merge: interest left by the previous wait */
    if (eng__ctl(&m->ep, f->kmask ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, need, 0) < 0) {
        f->tok[eng__dir_index(dir)] = NULL;
        return -1;
    }
    f->kmask = need;
    return 0;
}

static int HOT_TEXT merged_want(void *st, int fd, uint32_t dir, void *token)
{
    /* The merge itself, kept free of calls so that it needs no frame: a known fd, a valid and
     * free direction, and interest the kernel already holds. Anything else goes the long way. */
    merged *m = st;
    eng__fd *f = eng__ep_peek(&m->ep, fd);
    int i = eng__dir_index(dir);
    if (__builtin_expect(
            f && token && (f->kmask & dir) && !f->tok[i] && (dir == ENG_IN || dir == ENG_OUT), 1)) {
        f->tok[i] = token;
        m->ep.st.waits++;
        return 0;
    }
    return want_slow(m, fd, dir, token);
}

static void merged_cancel(void *st, int fd, uint32_t dir)
{
    merged *m = st;
    eng__fd *f = eng__ep_peek(&m->ep, fd);
    if (!f) return;
    f->tok[eng__dir_index(dir)] = NULL;
    f->idle[eng__dir_index(dir)] = m->ep.seq;
}

/* An event reported `ready` for f after delivery: drop directions that fired with nobody
 * waiting and whose last waiter left more than one poll ago. */
static void prune(eng__ep *ep, int fd, eng__fd *f, uint32_t ready)
{
    uint32_t keep = f->kmask;
    for (int i = 0; i < 2; i++) {
        uint32_t dir = i ? ENG_OUT : ENG_IN;
        if ((keep & dir) && (ready & dir) && !f->tok[i] && ep->seq - f->idle[i] >= 2) keep &= ~dir;
    }
    if (keep == f->kmask) return;
    eng__ctl(ep, keep ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, fd, keep, 0);
    f->kmask = keep;
}

static int HOT_TEXT merged_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    merged *m = st;
    int got = 0, nev = eng__wait(&m->ep, timeout_ns);
    for (int i = 0; i < nev; i++) {
        int fd = m->ep.evs[i].data.fd;
        eng__fd *f = eng__ep_peek(&m->ep, fd);
        if (!f || !f->kmask) {
            /* A registration the cache does not know (a failed ctl earlier): remove it rather
             * than let it report forever. */
            eng__ctl(&m->ep, EPOLL_CTL_DEL, fd, 0, 0);
            continue;
        }
        uint32_t events = m->ep.evs[i].events;
        /* A ping-pong's every event: input alone, for its waiting reader; nothing is left to
         * prune. */
        if (__builtin_expect(events == EPOLLIN && f->tok[0] != NULL, 1)) {
            eng__deliver_in(&m->ep, f, fn, ctx, &got);
            continue;
        }
        uint32_t ready = eng__revents(events);
        uint32_t done = eng__deliver(&m->ep, f, ready, fn, ctx, &got);
        /* A direction just delivered has a fresh idle mark and is kept: prune only looks at
         * the others, and in a ping-pong there are none. */
        if (ready & f->kmask & ~done) prune(&m->ep, fd, f, ready);
    }
    return nev < 0 ? -1 : got;
}

static void merged_fd_closed(void *st, int fd)
{
    merged *m = st;
    eng__fd *f = eng__ep_peek(&m->ep, fd);
    if (!f) return;
    /* Delete explicitly rather than rely on close(2): a dup of the fd (fork, dup2) would keep
     * the registration alive and its events would name a number that may be reused. */
    if (f->kmask) eng__ctl(&m->ep, EPOLL_CTL_DEL, fd, 0, 0);
    memset(f, 0, sizeof *f);
}

static void merged_stats(void *st, eng_stats *out)
{
    eng__ep_stats(&((merged *)st)->ep, out);
}

static const char *merged_method(void *st)
{
    (void)st;
    return "epoll";
}

const eng_ops eng__merged = {
    .name = "merged",
    .summary = "cached interest, epoll_ctl only on a real change, idle interest dropped lazily",
    .props = {.interest = ENG_INTEREST_KERNEL,
              .interest_calls_per_wait = 0,
              .interest_calls_first_use = 1,
              .reports_hup_err = true,
              .edge_triggered = false,
              .completion = false},
    .init = merged_init,
    .free = merged_free,
    .want = merged_want,
    .cancel = merged_cancel,
    .poll = merged_poll,
    .fd_closed = merged_fd_closed,
    .get_stats = merged_stats,
    .method = merged_method,
};
