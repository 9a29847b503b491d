/* engine_select.c - pselect(2) on fd bit sets up to the highest waiting fd (< FD_SETSIZE). */
#define _GNU_SOURCE
#include "engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

/*
 * The oldest scanning interface (claim C16): two bit sets, copied in and out on every call,
 * scanned by the kernel up to the highest fd passed, whatever is ready. An fd_set holds
 * FD_SETSIZE (1024) bits and FD_SET beyond it writes past the set, so want refuses such fds
 * with ERANGE: a server on this engine cannot serve more than about a thousand connections,
 * which is what the engine is here to show. Like the poll engine, only fds with a waiter are
 * in the sets, so nothing spins and nothing needs telling at close. select cannot report
 * hang-up or error apart from readiness: both make the fd readable (and an error writable),
 * and the waiter's next system call learns what happened.
 */
typedef struct selst {
    void *tok[FD_SETSIZE][2]; /* [0] ENG_IN, [1] ENG_OUT */
    fd_set want_rd, want_wr;  /* the directions that have a waiter */
    int maxfd;                /* highest fd in either set, -1 when both are empty */
    eng_stats st;
} selst;

static void *sel_init(void)
{
    selst *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    FD_ZERO(&s->want_rd);
    FD_ZERO(&s->want_wr);
    s->maxfd = -1;
    s->st.ctl_source = ENG_CTL_SELF;
    return s;
}

static void sel_free(void *st)
{
    free(st);
}

/* After fd lost a waiter: clear its bits and lower maxfd past fds nobody waits on. */
static void sync_fd(selst *s, int fd)
{
    if (!s->tok[fd][0]) FD_CLR(fd, &s->want_rd);
    if (!s->tok[fd][1]) FD_CLR(fd, &s->want_wr);
    while (s->maxfd >= 0 && !s->tok[s->maxfd][0] && !s->tok[s->maxfd][1])
        s->maxfd--;
}

static int sel_want(void *st, int fd, uint32_t dir, void *token)
{
    selst *s = st;
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if (fd >= FD_SETSIZE) {
        errno = ERANGE; /* an fd_set cannot hold it */
        return -1;
    }
    if ((dir != ENG_IN && dir != ENG_OUT) || !token) {
        errno = EINVAL;
        return -1;
    }
    int d = dir == ENG_OUT;
    if (s->tok[fd][d]) {
        errno = EBUSY;
        return -1;
    }
    s->tok[fd][d] = token;
    FD_SET(fd, d ? &s->want_wr : &s->want_rd);
    if (fd > s->maxfd) s->maxfd = fd;
    s->st.waits++;
    return 0;
}

static void sel_cancel(void *st, int fd, uint32_t dir)
{
    selst *s = st;
    if (fd < 0 || fd >= FD_SETSIZE) return;
    s->tok[fd][dir == ENG_OUT] = NULL;
    sync_fd(s, fd);
}

static int deliver(selst *s, int fd, int d, uint32_t extra, eng_deliver_fn fn, void *ctx)
{
    void *tok = s->tok[fd][d];
    if (!tok) return 0;
    s->tok[fd][d] = NULL; /* forget first: the callback may free the waiter */
    s->st.delivered++;
    fn(ctx, tok, extra | (d ? ENG_OUT : ENG_IN));
    return 1;
}

/* pselect failed with EBADF: an fd in the sets was closed without fd_closed. Wake its waiters
 * with ENG_ERR rather than fail the whole loop on every call from now on. */
static int deliver_bad(selst *s, eng_deliver_fn fn, void *ctx)
{
    int got = 0;
    for (int fd = s->maxfd; fd >= 0; fd--) {
        if ((!s->tok[fd][0] && !s->tok[fd][1]) || fcntl(fd, F_GETFD) >= 0) continue;
        for (int d = 0; d < 2; d++)
            got += deliver(s, fd, d, ENG_ERR, fn, ctx);
        sync_fd(s, fd);
    }
    return got;
}

static int sel_poll(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx)
{
    selst *s = st;
    struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    fd_set rd = s->want_rd, wr = s->want_wr;
    int nfds = s->maxfd + 1;
    s->st.polls++;
    s->st.scan_calls++;
    s->st.scan_fds += (uint64_t)nfds;
    int nev = pselect(nfds, &rd, &wr, NULL, timeout_ns < 0 ? NULL : &ts, NULL);
    if (nev < 0) {
        if (errno == EINTR) return 0;
        return errno == EBADF ? deliver_bad(s, fn, ctx) : -1;
    }
    int got = 0;
    for (int fd = nfds - 1; nev > 0 && fd >= 0; fd--) {
        int r = FD_ISSET(fd, &rd), w = FD_ISSET(fd, &wr);
        if (!r && !w) continue;
        nev -= r + w;
        if (r) got += deliver(s, fd, 0, 0, fn, ctx);
        if (w) got += deliver(s, fd, 1, 0, fn, ctx);
        sync_fd(s, fd);
    }
    return got;
}

static void sel_fd_closed(void *st, int fd)
{
    selst *s = st;
    if (fd < 0 || fd >= FD_SETSIZE) return;
    s->tok[fd][0] = s->tok[fd][1] = NULL;
    sync_fd(s, fd); /* nothing to tell the kernel: it keeps no state between calls */
}

static void sel_stats(void *st, eng_stats *out)
{
    *out = ((selst *)st)->st;
}

static const char *sel_method(void *st)
{
    (void)st;
    return "select";
}

const eng_ops eng__select = {
    .name = "select",
    .summary = "pselect over bit sets up to the highest waiting fd; fds >= FD_SETSIZE refused",
    .props = {.interest = ENG_INTEREST_FD_RANGE,
              .interest_calls_per_wait = 0,
              .interest_calls_first_use = 0,
              .reports_hup_err = false,
              .edge_triggered = false,
              .completion = false},
    .fd_limit = FD_SETSIZE,
    .init = sel_init,
    .free = sel_free,
    .want = sel_want,
    .cancel = sel_cancel,
    .poll = sel_poll,
    .fd_closed = sel_fd_closed,
    .get_stats = sel_stats,
    .method = sel_method,
};
