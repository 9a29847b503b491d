/* test-engine.c - each event engine alone (no fibers): delivery, counts, no spin, fd reuse. */
#define _GNU_SOURCE
#include "engine.h"
#include "asserts.h"
#include "test-engine-cases.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* usage: test-engine CASE ENGINE; one CTest test per combination, each its own process. */

static const eng_ops *ops;
static void *eng;

/* What poll delivered, in order. */
enum { MAX_GOT = 64 };
static void *got_tok[MAX_GOT];
static uint32_t got_ev[MAX_GOT];
static int ngot;

static void on_ready(void *ctx, void *token, uint32_t revents)
{
    (void)ctx;
    if (ngot < MAX_GOT) {
        got_tok[ngot] = token;
        got_ev[ngot] = revents;
    }
    ngot++;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Poll until something is delivered or `ms` pass; returns how many were delivered. */
static int poll_for(int ms)
{
    int64_t end = now_ns() + (int64_t)ms * 1000000;
    ngot = 0;
    do {
        int64_t left = end - now_ns();
        ASSERT_GE(ops->poll(eng, left > 0 ? left : 0, on_ready, NULL), 0);
    } while (ngot == 0 && now_ns() < end);
    return ngot;
}

static void pair(int sv[2])
{
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
}

static void put(int fd, size_t n)
{
    char buf[64] = "x";
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
}

static void drain(int fd)
{
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

static eng_stats stats(void)
{
    eng_stats st;
    ops->get_stats(eng, &st);
    return st;
}

static void forget(int fd)
{
    ops->fd_closed(eng, fd);
    close(fd);
}

static int tok1, tok2;

/* Six 20 ms polls with nothing to deliver: how many returned early (< 15 ms). An engine that
 * keeps reporting an fd nobody waits on spins, and its polls return early. */
static int early_polls(void)
{
    int early = 0;
    for (int i = 0; i < 6; i++) {
        int64_t t0 = now_ns();
        ASSERT_EQ(poll_for(20), 0);
        if (now_ns() - t0 < 15 * 1000000) early++;
    }
    return early;
}

/* A non-blocking socket connecting to a loopback port that was just closed, so the connect
 * fails with a reset later. Exits 77 (not run) when the kernel refuses it at once. */
static int refused_connect(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ASSERT_EQ(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    close(l); /* the port is now (almost certainly) closed: connect gets RST */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = connect(s, (struct sockaddr *)&a, sizeof a);
    ASSERT_TRUE(rc < 0 && (errno == EINPROGRESS || errno == ECONNREFUSED));
    if (rc < 0 && errno == ECONNREFUSED) {
        printf("not run: connect was refused synchronously\n");
        exit(77);
    }
    return s;
}

/* ---- cases ------------------------------------------------------------------------------ */

/* A waiter is delivered exactly once, with its direction, and only when ready. */
static void t_deliver(void)
{
    int sv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_PTR_EQ(got_tok[0], &tok1);
    ASSERT_TRUE(got_ev[0] & ENG_IN);
    ASSERT_EQ(poll_for(20), 0); /* consumed: not delivered again although still readable */
    ASSERT_EQ(stats().delivered, 1);
    forget(sv[0]);
    forget(sv[1]);
}

/* One waiter per direction; a reader and a writer on one fd coexist. */
static void t_busy(void)
{
    int sv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok2), -1);
    ASSERT_EQ(errno, EBUSY);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_OUT, &tok2), 0);
    ASSERT_EQ(poll_for(1000), 1); /* writable at once, not readable */
    ASSERT_PTR_EQ(got_tok[0], &tok2);
    ASSERT_TRUE(got_ev[0] & ENG_OUT);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_PTR_EQ(got_tok[0], &tok1);
    ASSERT_TRUE(got_ev[0] & ENG_IN);
    forget(sv[0]);
    forget(sv[1]);
}

/* A cancelled waiter is never delivered. */
static void t_cancel(void)
{
    int sv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    ops->cancel(eng, sv[0], ENG_IN);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(30), 0);
    ASSERT_EQ(poll_for(30), 0);
    /* Engines told of wake-ups rather than levels remember the byte that came unasked. */
    int remembers = ops->props.edge_triggered;
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok2), remembers);
    if (!remembers) {
        ASSERT_EQ(poll_for(1000), 1);
        ASSERT_PTR_EQ(got_tok[0], &tok2);
    }
    forget(sv[0]);
    forget(sv[1]);
}

/*
 * The kernel-call pattern of K waits on one fd, each one woken by one byte (claim C3 for
 * naive), against what the engine declares (eng_props): e.g. naive ADD+DEL per wait, merged
 * one ADD in all, oneshot one ADD then one MOD per wait. libevent declares nothing: whatever
 * its change list lets through is printed.
 */
static void t_pattern(void)
{
    enum { K = 50 };
    int sv[2];
    pair(sv);
    for (int i = 0; i < K; i++) {
        ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
        put(sv[1], 1);
        ASSERT_EQ(poll_for(1000), 1);
        drain(sv[0]);
    }
    eng_stats st = stats();
    printf("%s: %d waits, %llu polls: epoll_ctl add %llu mod %llu del %llu, epoll_wait %llu, "
           "scans %llu (%llu fds), io_uring_enter %llu (%llu SQEs) (source %d)\n",
           ops->name, K, (unsigned long long)st.polls, (unsigned long long)st.ctl_add,
           (unsigned long long)st.ctl_mod, (unsigned long long)st.ctl_del,
           (unsigned long long)st.epoll_waits, (unsigned long long)st.scan_calls,
           (unsigned long long)st.scan_fds, (unsigned long long)st.uring_enters,
           (unsigned long long)st.uring_sqes, (int)st.ctl_source);
    ASSERT_EQ(st.waits, K);
    const eng_props *p = &ops->props;
    if (p->interest != ENG_INTEREST_KERNEL) {
        /* Nothing kept in the kernel: one scan per poll, passing the one waiting fd (a range:
         * every fd number up to it). */
        ASSERT_EQ(st.ctl_add + st.ctl_mod + st.ctl_del + st.epoll_waits + st.uring_enters, 0);
        ASSERT_EQ(st.scan_calls, st.polls);
        ASSERT_EQ(st.scan_fds,
                  st.scan_calls * (uint64_t)(p->interest == ENG_INTEREST_FD_LIST ? 1 : sv[0] + 1));
    }
    if (p->interest_calls_per_wait == ENG_UNDECLARED) {
        if (st.ctl_source != ENG_CTL_NONE) ASSERT_GE(st.ctl_add, 1); /* the first registration */
    } else {
        ASSERT_EQ(st.ctl_source, ENG_CTL_SELF);
        ASSERT_EQ(st.ctl_add + st.ctl_mod + st.ctl_del + st.uring_sqes,
                  (uint64_t)(p->interest_calls_first_use + K * p->interest_calls_per_wait));
        /* An engine that changes nothing per wait never re-arms or removes while the fd lives. */
        if (p->interest_calls_per_wait == 0) ASSERT_EQ(st.ctl_mod + st.ctl_del, 0);
        ASSERT_EQ(st.epoll_waits + st.scan_calls + st.uring_enters, st.polls); /* one per poll */
    }
    forget(sv[0]);
    forget(sv[1]);
}

/*
 * A poll with nothing to deliver returns no sooner than its timeout, whole milliseconds or not:
 * an engine that rounded a sub-millisecond part down (or sent it to a call that takes whole
 * milliseconds) would wake a sleeper early, and the runtime would poll again for the rest.
 */
static void polls_not_early(void)
{
    static const int64_t timeouts_ns[] = {250000, 1500000, 2000000, 2700000};
    for (size_t i = 0; i < sizeof timeouts_ns / sizeof *timeouts_ns; i++) {
        int64_t t0 = now_ns();
        ngot = 0;
        ASSERT_GE(ops->poll(eng, timeouts_ns[i], on_ready, NULL), 0);
        int64_t took = now_ns() - t0;
        printf("%s: poll(%lld ns) took %lld ns\n", ops->name, (long long)timeouts_ns[i],
               (long long)took);
        ASSERT_EQ(ngot, 0);
        ASSERT_GE(took, timeouts_ns[i]);
    }
}

static void t_not_early(void)
{
    polls_not_early();
}

/*
 * Interest nobody waits on must not spin a level-triggered loop: a readable fd whose waiter
 * was delivered (and which is never read) may end at most two polls early; then polls block
 * for their full timeout.
 */
static void t_idle(void)
{
    int sv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1);
    int early = 0;
    for (int i = 0; i < 6; i++) {
        int64_t t0 = now_ns();
        ngot = 0;
        ASSERT_GE(ops->poll(eng, 20 * 1000000, on_ready, NULL), 0);
        ASSERT_EQ(ngot, 0);
        if (now_ns() - t0 < 15 * 1000000) early++;
    }
    printf("%s: polls that returned early: %d of 6, stray events %llu\n", ops->name, early,
           (unsigned long long)stats().stray);
    ASSERT_LE(early, 2);
    forget(sv[0]);
    forget(sv[1]);
}

/* Peer close (EPOLLHUP): both waiters wake; afterwards no spin. */
static void t_hup(void)
{
    int sv[2];
    char big[65536] = {0};
    pair(sv);
    while (write(sv[0], big, sizeof big) > 0) /* fill, so the writer really waits */
        ;
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_OUT, &tok2), 0);
    ASSERT_EQ(poll_for(20), 0);
    forget(sv[1]);
    int64_t end = now_ns() + 1000 * 1000000LL;
    int woke = 0, seen = 0;
    while (woke < 2 && now_ns() < end) {
        poll_for(100);
        for (int i = 0; i < ngot && i < MAX_GOT; i++)
            seen |= got_tok[i] == &tok1 ? 1 : 2;
        woke += ngot;
    }
    ASSERT_EQ(woke, 2);
    ASSERT_EQ(seen, 3); /* the reader and the writer */
    ASSERT_LE(early_polls(), 2);
    forget(sv[0]);
}

/* EPOLLERR: a refused TCP connect wakes its writer; afterwards no spin. */
static void t_err(void)
{
    int s = refused_connect();
    ASSERT_EQ(ops->want(eng, s, ENG_OUT, &tok1), 0);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_PTR_EQ(got_tok[0], &tok1);
    /* As declared: the error bits, or readiness alone. */
    ASSERT_EQ(!!(got_ev[0] & (ENG_ERR | ENG_HUP)), ops->props.reports_hup_err);
    ASSERT_LE(early_polls(), 2);
    forget(s);
}

/*
 * fd number reuse (libdill #129): a new file that gets a closed fd's number inherits neither
 * its waiter nor its registration. Closing with a waiter parked is the caller's business (it
 * cancels first), so this closes an fd that has cached interest and a cancelled waiter.
 */
static void t_reuse(void)
{
    int sv[2], nv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1); /* merged now caches IN interest for sv[0] */
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    ops->cancel(eng, sv[0], ENG_IN);
    int old0 = sv[0], old1 = sv[1];
    forget(sv[0]);
    forget(sv[1]);
    pair(nv);
    ASSERT_TRUE(nv[0] == old0 || nv[1] == old0); /* the lowest numbers come back */
    int fd = nv[0] == old0 ? nv[0] : nv[1], peer = fd == nv[0] ? nv[1] : nv[0];
    (void)old1;
    put(peer, 1);
    ASSERT_EQ(poll_for(30), 0); /* no inherited waiter */
    ASSERT_EQ(ops->want(eng, fd, ENG_IN, &tok2), 0);
    ASSERT_EQ(poll_for(1000), 1); /* a registration really made for the new file */
    ASSERT_PTR_EQ(got_tok[0], &tok2);
    forget(nv[0]);
    forget(nv[1]);
}

/*
 * The kernel forgot the fd before the engine was told (close(2) first, fd_closed after, the
 * wrong order): the engine's DEL fails with EBADF/ENOENT and is tolerated, and the number
 * works again afterwards.
 */
static void t_late_close(void)
{
    int sv[2], nv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1);
    int old0 = sv[0];
    close(sv[0]);
    ops->fd_closed(eng, old0);
    forget(sv[1]);
    pair(nv);
    int fd = nv[0] == old0 ? nv[0] : nv[1], peer = fd == nv[0] ? nv[1] : nv[0];
    ASSERT_EQ(fd, old0);
    put(peer, 1);
    ASSERT_EQ(ops->want(eng, fd, ENG_IN, &tok2), 0);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_PTR_EQ(got_tok[0], &tok2);
    forget(nv[0]);
    forget(nv[1]);
}

/* A wait that must end at once: want says "ready now", or the next poll delivers it. */
static void wait_ends(int fd, uint32_t dir, void *tok)
{
    int rc = ops->want(eng, fd, dir, tok);
    ASSERT_TRUE(rc == 0 || rc == 1);
    if (rc == 0) {
        ASSERT_EQ(poll_for(1000), 1);
        ASSERT_PTR_EQ(got_tok[0], tok);
    }
}

/*
 * Lost wake-up: data arrives while the fd is registered but nobody waits, and a poll runs
 * (an edge engine sees its only edge then). A later bare wait must still learn that the fd
 * is readable: either want says "ready now" or the next poll delivers it.
 */
static void t_lost_edge(void)
{
    int sv[2];
    pair(sv);
    ASSERT_EQ(ops->want(eng, sv[0], ENG_IN, &tok1), 0);
    ops->cancel(eng, sv[0], ENG_IN);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(30), 0);
    wait_ends(sv[0], ENG_IN, &tok2);
    forget(sv[0]);
    forget(sv[1]);

    /* The same for output, reported in the event that wakes a reader: the fd registered with
     * data already there, so an edge engine's first event carries input and output at once.
     * A later bare write wait must still learn that the fd is writable. */
    pair(sv);
    put(sv[1], 1);
    wait_ends(sv[0], ENG_IN, &tok1);
    drain(sv[0]);
    wait_ends(sv[0], ENG_OUT, &tok2);
    forget(sv[0]);
    forget(sv[1]);
}

/*
 * An fd numbered past 1024 (FD_SETSIZE): an engine that declares an fd limit refuses it with
 * ERANGE and parks nothing; every other engine waits on it like on any other fd.
 */
static void t_high_fd(void)
{
    int sv[2];
    struct rlimit rl;
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max < 1600) {
        printf("not run: RLIMIT_NOFILE hard limit %llu < 1600\n", (unsigned long long)rl.rlim_max);
        exit(77);
    }
    if (rl.rlim_cur < 1600) {
        rl.rlim_cur = 1600;
        ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    pair(sv);
    int high = fcntl(sv[0], F_DUPFD_CLOEXEC, 1500);
    ASSERT_GE(high, 1500);
    close(sv[0]);
    int rc = ops->want(eng, high, ENG_IN, &tok1);
    printf("%s: want on fd %d: %d (%s), declared fd limit %d\n", ops->name, high, rc,
           rc < 0 ? strerror(errno) : "parked", ops->fd_limit);
    if (ops->fd_limit && high >= ops->fd_limit) {
        ASSERT_EQ(rc, -1);
        ASSERT_EQ(errno, ERANGE);
        put(sv[1], 1);
        ASSERT_EQ(poll_for(30), 0);
    } else {
        ASSERT_EQ(rc, 0);
        put(sv[1], 1);
        ASSERT_EQ(poll_for(1000), 1);
        ASSERT_PTR_EQ(got_tok[0], &tok1);
    }
    forget(high);
    forget(sv[1]);
}

/* ---- completion engines (eng_ops.submit): operations instead of waits ------------------ */

static eng_op op_of(int kind, int fd, void *buf, size_t len)
{
    return (eng_op){.kind = kind, .fd = fd, .buf = buf, .len = len, .socket = true};
}

/* A read completes only when data comes, with the bytes in the buffer, delivered once. */
static void t_op_read(void)
{
    int sv[2];
    char buf[16] = {0};
    pair(sv);
    eng_op op = op_of(ENG_OP_READ, sv[0], buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    ASSERT_EQ(write(sv[1], "hello", 5), 5);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_TRUE(got_tok[0] == &tok1 && (got_ev[0] & ENG_DONE));
    ASSERT_EQ(op.res, 5);
    ASSERT_EQ(memcmp(buf, "hello", 5), 0);
    ASSERT_EQ(poll_for(20), 0);
    forget(sv[0]);
    forget(sv[1]);
}

/* A write completes with the bytes taken; the peer reads exactly them. */
static void t_op_busy(void)
{
    int sv[2];
    char in[64], out[64];
    pair(sv);
    memset(out, 'w', sizeof out);
    eng_op op = op_of(ENG_OP_WRITE, sv[0], out, sizeof out);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_EQ(op.res, (int)sizeof out);
    ASSERT_EQ(read(sv[1], in, sizeof in), (ssize_t)sizeof in);
    ASSERT_EQ(memcmp(in, out, sizeof in), 0);
    forget(sv[0]);
    forget(sv[1]);
}

/* An accept completes with a new, working connection. */
static void t_op_accept(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ASSERT_EQ(listen(l, 8), 0);
    ASSERT_EQ(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    eng_op op = op_of(ENG_OP_ACCEPT, l, NULL, 0);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_GE(op.res, 0);
    ASSERT_EQ(write(c, "k", 1), 1);
    char k = 0;
    usleep(10000);
    ASSERT_EQ(read(op.res, &k, 1), 1);
    ASSERT_EQ(k, 'k');
    close(op.res);
    close(c);
    close(l);
}

/* A poll completes with the ready mask. */
static void t_op_poll(void)
{
    int sv[2];
    pair(sv);
    eng_op op = {.kind = ENG_OP_POLL, .fd = sv[0], .dir = ENG_IN};
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_TRUE(op.res & POLLIN);
    forget(sv[0]);
    forget(sv[1]);
}

/* An aborted read is still delivered, once, with -ECANCELED, and consumes nothing. */
static void t_op_cancel(void)
{
    int sv[2];
    char buf[8], c = 0;
    pair(sv);
    eng_op op = op_of(ENG_OP_READ, sv[0], buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    ops->abort(eng, &op);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_EQ(op.res, -ECANCELED);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(30), 0);
    ASSERT_EQ(read(sv[0], &c, 1), 1); /* the byte is still there for the next reader */
    forget(sv[0]);
    forget(sv[1]);
}

/* Operations queued in one pass are submitted together by the poll that waits. */
static void t_op_pattern(void)
{
    enum { K = 8 };
    int sv[K][2];
    char buf[K][4];
    eng_op op[K];
    for (int i = 0; i < K; i++) {
        pair(sv[i]);
        put(sv[i][1], 1);
        op[i] = op_of(ENG_OP_READ, sv[i][0], buf[i], sizeof buf[i]);
        ASSERT_EQ(ops->submit(eng, &op[i], &tok1), 0);
    }
    ASSERT_EQ(stats().uring_enters, 0); /* queued, not yet in the kernel */
    int got = 0;
    for (int tries = 0; got < K && tries < 50; tries++)
        got += poll_for(1000);
    eng_stats st = stats();
    printf("%s: %d reads: %llu io_uring_enter, %llu SQEs, %llu polls\n", ops->name, K,
           (unsigned long long)st.uring_enters, (unsigned long long)st.uring_sqes,
           (unsigned long long)st.polls);
    ASSERT_EQ(got, K);
    ASSERT_EQ(st.uring_sqes, K);
    ASSERT_EQ(st.uring_enters, st.polls);
    ASSERT_LE(st.uring_enters, 2);
    for (int i = 0; i < K; i++) {
        ASSERT_EQ(op[i].res, 1);
        forget(sv[i][0]);
        forget(sv[i][1]);
    }
}

/* An fd closed and its number reused while an operation is in flight: the old operation ends
 * cancelled, and the new file's data is neither delivered to it nor consumed. */
static void t_op_reuse(void)
{
    int sv[2], nv[2];
    char buf[8], c = 0;
    pair(sv);
    int old = sv[0];
    eng_op op = op_of(ENG_OP_READ, old, buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    ops->abort(eng, &op);
    close(sv[0]);
    close(sv[1]);
    pair(nv);
    ASSERT_TRUE(nv[0] == old || nv[1] == old);
    int fd = nv[0] == old ? nv[0] : nv[1], peer = fd == nv[0] ? nv[1] : nv[0];
    put(peer, 1);
    ASSERT_EQ(poll_for(1000), 1);
    /* Cancelled, or ended by the old peer's close first (end of file): never the new data. */
    ASSERT_TRUE(op.res == -ECANCELED || op.res == 0);
    ASSERT_EQ(poll_for(30), 0);
    ASSERT_EQ(read(fd, &c, 1), 1);
    close(nv[0]);
    close(nv[1]);
}

/* An accept and a read, each delivered once with its result. */
static void t_op_deliver(void)
{
    t_op_read();
    t_op_accept();
}

/* With nothing in flight, polls block for their whole timeout: nothing spins. */
static void t_op_idle(void)
{
    t_op_read();
    ASSERT_LE(early_polls(), 1);
}

/* The same with an operation in flight that does not complete. */
static void t_op_not_early(void)
{
    int sv[2];
    char buf[8];
    pair(sv);
    eng_op op = op_of(ENG_OP_READ, sv[0], buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    polls_not_early();
    ops->abort(eng, &op);
    ASSERT_EQ(poll_for(1000), 1);
    forget(sv[0]);
    forget(sv[1]);
}

/* A read in flight when the peer closes completes with end of file. */
static void t_op_hup(void)
{
    int sv[2];
    char buf[8];
    pair(sv);
    eng_op op = op_of(ENG_OP_READ, sv[0], buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    forget(sv[1]);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_EQ(op.res, 0);
    forget(sv[0]);
}

/* A refused TCP connect: the poll for writability completes with the error bits. */
static void t_op_err(void)
{
    int s = refused_connect();
    eng_op op = {.kind = ENG_OP_POLL, .fd = s, .dir = ENG_OUT};
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_TRUE(op.res & (POLLERR | POLLHUP));
    close(s);
}

/* close(2) first, abort after (the wrong order): the operation still ends, once. */
static void t_op_late_close(void)
{
    int sv[2];
    char buf[8];
    pair(sv);
    eng_op op = op_of(ENG_OP_READ, sv[0], buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(20), 0);
    close(sv[0]); /* the operation keeps the file open in the kernel */
    ops->abort(eng, &op);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_EQ(op.res, -ECANCELED);
    ASSERT_EQ(poll_for(30), 0);
    close(sv[1]);
}

/* Data that arrived before the operation was submitted is found at once; data that comes
 * later completes a poll submitted before it. */
static void t_op_lost_edge(void)
{
    t_op_poll();
    int sv[2];
    pair(sv);
    put(sv[1], 1);
    eng_op op = {.kind = ENG_OP_POLL, .fd = sv[0], .dir = ENG_IN};
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_TRUE(op.res & POLLIN);
    forget(sv[0]);
    forget(sv[1]);
}

/* An fd past 1024: no limit is declared, so a read on it works. */
static void t_op_high_fd(void)
{
    int sv[2];
    char buf[4];
    struct rlimit rl;
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max < 1600) {
        printf("not run: RLIMIT_NOFILE hard limit %llu < 1600\n", (unsigned long long)rl.rlim_max);
        exit(77);
    }
    if (rl.rlim_cur < 1600) {
        rl.rlim_cur = 1600;
        ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    ASSERT_EQ(ops->fd_limit, 0);
    pair(sv);
    int high = fcntl(sv[0], F_DUPFD_CLOEXEC, 1500);
    ASSERT_GE(high, 1500);
    close(sv[0]);
    eng_op op = op_of(ENG_OP_READ, high, buf, sizeof buf);
    ASSERT_EQ(ops->submit(eng, &op, &tok1), 0);
    put(sv[1], 1);
    ASSERT_EQ(poll_for(1000), 1);
    ASSERT_EQ(op.res, 1);
    close(high);
    close(sv[1]);
}

/* A completion engine (props.completion) answers the same case names with the completion
 * form of each property (t_op_<name>): what was a wait is an operation. */
#define TEST_ENGINE__ENTRY(name, ...)    {#name, t_##name, #__VA_ARGS__},
#define TEST_ENGINE__OP_ENTRY(name, ...) {#name, t_op_##name, #__VA_ARGS__},
static const test_case cases[] = {TEST_ENGINE_CASES(TEST_ENGINE__ENTRY)};
static const test_case completion_cases[] = {TEST_ENGINE_CASES(TEST_ENGINE__OP_ENTRY)};
#undef TEST_ENGINE__ENTRY
#undef TEST_ENGINE__OP_ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(cases);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test-engine CASE ENGINE | test-engine --list\n");
        return 2;
    }
    ops = eng_find(argv[2]);
    if (!ops) {
        fprintf(stderr, "test-engine: unknown engine '%s' (valid: %s)\n", argv[2], eng_names());
        return 2;
    }
    void (*fn)(void) = ops->props.completion
                           ? TEST_CASE_REQUIRE("test-engine", completion_cases, argv[1])
                           : TEST_CASE_REQUIRE("test-engine", cases, argv[1]);
    eng = ops->init();
    if (!eng && (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
        printf("not run: %s: the kernel refused it: %s\n", ops->name, strerror(errno));
        return 77;
    }
    if (!eng) {
        perror("engine init");
        return 1;
    }
    fn();
    ops->free(eng);
    printf("ok %s/%s (%s)\n", argv[1], argv[2], ops->name);
    return 0;
}
