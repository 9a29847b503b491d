/* engine_epoll.h - internal: what the four epoll engines share (fd table, counted epoll_ctl). */
#ifndef SWITCHYARD_ENGINE_EPOLL_H
#define SWITCHYARD_ENGINE_EPOLL_H

#include "engine.h"

#include <sys/epoll.h>

/* Per-fd bookkeeping, indexed by fd number. Each engine uses the fields it needs. */
typedef struct eng__fd {
    void *tok[2];     /* parked waiters: [0] ENG_IN, [1] ENG_OUT */
    uint32_t kmask;   /* ENG_IN|ENG_OUT interest the kernel holds (oneshot: currently armed) */
    uint32_t idle[2]; /* merged: poll sequence number when the direction's last waiter left */
    uint8_t reg;      /* the fd is registered with the epoll instance */
    uint8_t ready;    /* edge: directions that fired while nobody waited */
} eng__fd;

#define ENG__BATCH 256

typedef struct eng__ep {
    int epfd;
    eng__fd *fds;
    size_t nfds;  /* entries allocated in fds */
    uint32_t seq; /* incremented by every poll */
    eng_stats st;
    struct epoll_event evs[ENG__BATCH];
} eng__ep;

int eng__ep_init(eng__ep *ep);
void eng__ep_fini(eng__ep *ep);
/* eng__ep_fd's path when the table does not cover fd yet: grow it (out of line, rare). */
eng__fd *eng__ep_fd_grow(eng__ep *ep, int fd);
/* The fd's entry, growing the table as needed; NULL with errno (EBADF for fd < 0, ENOMEM).
 * Every want looks its fd up here, so the covered case is inline and the growth is not. */
static inline eng__fd *eng__ep_fd(eng__ep *ep, int fd)
{
    /* One unsigned compare covers fd < 0 too: (size_t)-1 is never below a table's length. */
    if (__builtin_expect((size_t)fd < ep->nfds, 1)) return &ep->fds[fd];
    return eng__ep_fd_grow(ep, fd);
}
/* The fd's entry if the table already covers it, else NULL. */
static inline eng__fd *eng__ep_peek(eng__ep *ep, int fd)
{
    return (size_t)fd < ep->nfds ? &ep->fds[fd] : NULL; /* fd < 0 wraps to above any length */
}
static inline int eng__dir_index(uint32_t dir)
{
    return dir == ENG_OUT;
}
/* Directions that have a parked waiter. */
static inline uint32_t eng__waiting(const eng__fd *f)
{
    return (f->tok[0] ? ENG_IN : 0) | (f->tok[1] ? ENG_OUT : 0);
}
/* Register a waiter (EINVAL for a bad direction or token, EBUSY when the direction is taken).
 * Inline, as the three helpers below: they run once per wait or per event. */
#include <errno.h>
static inline int eng__park(eng__ep *ep, eng__fd *f, uint32_t dir, void *token)
{
    int i = eng__dir_index(dir);
    if (__builtin_expect((dir != ENG_IN && dir != ENG_OUT) || !token, 0)) {
        errno = EINVAL;
        return -1;
    }
    if (__builtin_expect(f->tok[i] != NULL, 0)) {
        errno = EBUSY;
        return -1;
    }
    f->tok[i] = token;
    ep->st.waits++;
    return 0;
}

/* One counted epoll_ctl. `mask` is ENG_IN|ENG_OUT, `extra` raw EPOLL* flags (EPOLLET, ...).
 * ADD failing with EEXIST is retried as MOD and MOD failing with ENOENT as ADD (the kernel and
 * the cache disagreed; both calls are counted); DEL failing with ENOENT or EBADF counts as
 * done, since close(2) already removed the registration. Returns 0 or -1 with errno. */
int eng__ctl(eng__ep *ep, int op, int fd, uint32_t mask, uint32_t extra);

/* One epoll_wait of at most timeout_ns into ep->evs (timeouts rounded up, never early).
 * Returns the number of events (0 on EINTR), or -1 with errno. */
int eng__wait(eng__ep *ep, int64_t timeout_ns);

/* Translate kernel revents into ENG_* bits: the directions they make ready plus ERR/HUP.
 * HUP and ERR make both directions ready, so every waiter learns about them. */
static inline uint32_t eng__revents(uint32_t events)
{
    uint32_t r = 0;
    if (events & (EPOLLIN | EPOLLRDHUP)) r |= ENG_IN;
    if (events & EPOLLOUT) r |= ENG_OUT;
    if (__builtin_expect(events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR), 0)) {
        if (events & (EPOLLHUP | EPOLLRDHUP)) r |= ENG_HUP;
        if (events & EPOLLERR) r |= ENG_ERR;
        if (events & (EPOLLHUP | EPOLLERR)) r |= ENG_IN | ENG_OUT;
    }
    return r;
}

/* Deliver to the waiters of f whose direction is in `ready` (ENG_* bits from eng__revents).
 * Returns the directions delivered; counts the rest of `ready` & f->kmask as stray. */
static inline uint32_t eng__deliver(eng__ep *ep, eng__fd *f, uint32_t ready, eng_deliver_fn fn,
                                    void *ctx, int *ndelivered)
{
    uint32_t done = 0;
    for (int i = 0; i < 2; i++) {
        uint32_t dir = i ? ENG_OUT : ENG_IN;
        void *tok = f->tok[i];
        if (!(ready & dir)) continue;
        if (!tok) {
            if (f->kmask & dir) ep->st.stray++;
            continue;
        }
        f->tok[i] = NULL; /* forget first: the callback may free the waiter */
        f->idle[i] = ep->seq;
        done |= dir;
        ep->st.delivered++;
        (*ndelivered)++;
        fn(ctx, tok, (ready & ~(ENG_IN | ENG_OUT)) | dir);
    }
    return done;
}

/* Deliver input to f's waiting reader, the one event of a ping-pong: eng__deliver's work for
 * that case alone, without its loop over both directions, whose registers live across the
 * callback cost a third of the event's instructions. The caller has checked f->tok[0]. */
static inline void eng__deliver_in(eng__ep *ep, eng__fd *f, eng_deliver_fn fn, void *ctx,
                                   int *ndelivered)
{
    void *tok = f->tok[0];
    f->tok[0] = NULL; /* forget first: the callback may free the waiter */
    f->idle[0] = ep->seq;
    ep->st.delivered++;
    (*ndelivered)++;
    fn(ctx, tok, ENG_IN);
}

void eng__ep_stats(const eng__ep *ep, eng_stats *out);

/* Kernel-side epoll_ctl and epoll_wait counting for engines that do not issue the calls
 * themselves (engine_kcount.c): tracepoint counters for the calling thread. */
#define ENG__KCOUNT_N 4
typedef struct eng__kcount {
    int fd[ENG__KCOUNT_N]; /* epoll_ctl add, mod, del, epoll_wait; -1 when not open */
} eng__kcount;

/* Open the counters; returns 0, or -1 with errno when perf_event_open is unavailable. */
int eng__kcount_open(eng__kcount *kc);
/* Read the counters into st (ctl_source = ENG_CTL_KERNEL), or mark st not counted. */
void eng__kcount_read(const eng__kcount *kc, eng_stats *st);
void eng__kcount_close(eng__kcount *kc);

#endif
