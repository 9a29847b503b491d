/* engine_poll.c - ppoll(2) over every fd that has a waiter: the whole set crosses on every call. */
#define _GNU_SOURCE
#include "engine.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The scanning model (claim C16): the kernel keeps no interest between calls, so every wait
 * copies the set of waiting fds in, polls each one, and copies the results out; the cost of a
 * call grows with the fds waited on, ready or not. The set holds exactly the fds that have a
 * waiter, in a dense array (a waiter's fd enters on its first wait and leaves when its last
 * waiter does), so an fd nobody waits on is never passed and can never spin the loop, and a
 * closed fd is simply absent. The per-fd table maps an fd to its slot in the array.
 */
typedef struct pfd {
    void *tok[2]; /* [0] ENG_IN, [1] ENG_OUT */
    int slot;     /* index in set, or -1 */
} pfd;

typedef struct pollst {
    struct pollfd *set;
    size_t n, cap;
    pfd *fds;
    size_t nfds;
    eng_stats st;
} pollst;

static void *poll_init(void)
{
    pollst *p = calloc(1, sizeof *p);
    if (p) p->st.ctl_source = ENG_CTL_SELF;
    return p;
}

static void poll_free(void *st)
{
    pollst *p = st;
    free(p->set);
    free(p->fds);
    free(p);
}

static pfd *fd_entry(pollst *p, int fd)
{
    long first = eng__grow_fd_table(&p->fds, &p->nfds, sizeof *p->fds, fd);
    if (first < 0) return NULL;
    for (size_t i = (size_t)first; i < p->nfds; i++)
        p->fds[i].slot = -1; /* in no poll set yet */
    return &p->fds[fd];
}

static short events_of(const pfd *f)
{
    return (short)((f->tok[0] ? POLLIN | POLLRDHUP : 0) | (f->tok[1] ? POLLOUT : 0));
}

/* Bring fd's slot in line with its waiters: add it, update its events, or remove it. */
static void sync_slot(pollst *p, int fd, pfd *f)
{
    short ev = events_of(f);
    if (ev && f->slot < 0) {
        f->slot = (int)p->n++;
        p->set[f->slot] = (struct pollfd){.fd = fd};
    }
    if (f->slot < 0) return;
    if (ev) {
        p->set[f->slot].events = ev;
        return;
    }
    struct pollfd last = p->set[--p->n]; /* swap the last slot into the hole */
    if ((size_t)f->slot != p->n) {
        p->set[f->slot] = last;
        p->fds[last.fd].slot = f->slot;
    }
    f->slot = -1;
}

static int poll_want(void *st, int fd, uint32_t dir, void *token)
{
    pollst *p = st;
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if ((dir != ENG_IN && dir != ENG_OUT) || !token) {
        errno = EINVAL;
        return -1;
    }
    pfd *f = fd_entry(p, fd);
    if (!f) return -1;
    if (f->tok[dir == ENG_OUT]) {
        errno = EBUSY;
        return -1;
    }
    if (f->slot < 0 && p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        struct pollfd *set = realloc(p->set, cap * sizeof *set);
        if (!set) return -1;
        p->set = set;
        p->cap = cap;
    }
    f->tok[dir == ENG_OUT] = token;
    sync_slot(p, fd, f);
    p->st.waits++;
    return 0;
}

static void poll_cancel(void *st, int fd, uint32_t dir)
{
    pollst *p = st;
    if (fd < 0 || (size_t)fd >= p->nfds) return;
    p->fds[fd].tok[dir == ENG_OUT] = NULL;
    sync_slot(p, fd, &p->fds[fd]);
}

static uint32_t ready_of(short re)
{
    uint32_t r = 0;
    if (re & (POLLIN | POLLRDHUP)) r |= ENG_IN;
    if (re & POLLOUT) r |= ENG_OUT;
    if (re & (POLLHUP | POLLRDHUP)) r |= ENG_HUP;
    if (re & (POLLERR | POLLNVAL)) r |= ENG_ERR;
    if (re & (POLLHUP | POLLERR | POLLNVAL)) r |= ENG_IN | ENG_OUT;
    return r;
}

static int poll_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    pollst *p = st;
    struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    p->st.polls++;
    p->st.scan_calls++;
    p->st.scan_fds += p->n;
    int nev = ppoll(p->set, p->n, timeout_ns < 0 ? NULL : &ts, NULL);
    if (nev < 0) return errno == EINTR ? 0 : -1;
    int got = 0;
    /* Backwards: delivering may empty a slot, which moves the last slot (already seen) into
     * it, so every slot is looked at exactly once. */
    for (size_t i = p->n; nev > 0 && i-- > 0;) {
        short re = p->set[i].revents;
        if (!re) continue;
        nev--;
        int fd = p->set[i].fd;
        pfd *f = &p->fds[fd];
        uint32_t ready = ready_of(re);
        for (int d = 0; d < 2; d++) {
            uint32_t dir = d ? ENG_OUT : ENG_IN;
            void *tok = f->tok[d];
            if (!(ready & dir) || !tok) continue;
            f->tok[d] = NULL; /* forget first: the callback may free the waiter */
            p->st.delivered++;
            got++;
            fn(ctx, tok, (ready & ~(ENG_IN | ENG_OUT)) | dir);
        }
        sync_slot(p, fd, f);
    }
    return got;
}

static void poll_fd_closed(void *st, int fd)
{
    pollst *p = st;
    if (fd < 0 || (size_t)fd >= p->nfds) return;
    pfd *f = &p->fds[fd];
    f->tok[0] = f->tok[1] = NULL;
    sync_slot(p, fd, f); /* nothing to tell the kernel: it keeps no state between calls */
}

static void poll_stats(void *st, eng_stats *out)
{
    *out = ((pollst *)st)->st;
}

static const char *poll_method(void *st)
{
    (void)st;
    return "poll";
}

const eng_ops eng__poll = {
    .name = "poll",
    .summary = "ppoll over every fd that has a waiter, the whole set passed on every call",
    .props = {.interest = ENG_INTEREST_FD_LIST,
              .interest_calls_per_wait = 0,
              .interest_calls_first_use = 0,
              .reports_hup_err = true,
              .edge_triggered = false,
              .completion = false},
    .init = poll_init,
    .free = poll_free,
    .want = poll_want,
    .cancel = poll_cancel,
    .poll = poll_poll,
    .fd_closed = poll_fd_closed,
    .get_stats = poll_stats,
    .method = poll_method,
};
