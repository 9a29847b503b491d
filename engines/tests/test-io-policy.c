/* test-io-policy.c - test-io's cases on the read policies (io.h): data and connections that
 * arrive after a read or accept found nothing, and a regular file, which epoll refuses. */
#define _GNU_SOURCE
#include "test-io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- late_data: data arriving after a short read, before the next read waits -------------- */

/*
 * The read policies' promise: a policy that waits before reading after a short read (the fd
 * counts as drained) must still see data that arrived in between. Each step below arranges
 * one such order deterministically, in one fiber, and reads with a time limit, so a lost
 * wake-up fails with ETIMEDOUT instead of hanging. The number of waits done before reading is
 * checked too, so that the wait-first path is really taken under the policies that have it.
 */
static int ld_fd, ld_peer;
static bool ld_pipe;

static uint64_t waited_first(void)
{
    fb_io_stats st;
    fb_io_get_stats(io, &st);
    return st.reads_waited_first;
}

/* Waits expected before one read: after_drain says whether the fd counts as drained. */
static uint64_t expect_wait(bool after_drain)
{
    if (fb_io_engine(io)->props.completion) return 0; /* the kernel reads: no policy applies */
    switch (read_policy) {
    case FB_READ_WAIT:
        return !fb_io_engine(io)->props.edge_triggered || after_drain;
    case FB_READ_ADAPTIVE:
        return after_drain;
    default:
        return 0;
    }
}

static void ld_read(const char *want, bool after_drain)
{
    char buf[64];
    size_t n = strlen(want);
    uint64_t w0 = waited_first();
    ssize_t got = fb_read_timeout(ld_fd, buf, n < 32 ? 32 : n, 2000 * MS);
    if (got < 0) perror("fb_read_timeout (a lost wake-up ends in ETIMEDOUT)");
    ASSERT_EQ(got, (ssize_t)n);
    ASSERT_EQ(memcmp(buf, want, n), 0);
    ASSERT_EQ(waited_first() - w0, expect_wait(after_drain));
}

static void ld_late_writer(void *arg)
{
    (void)arg;
    fb_sleep(2 * MS);
    ASSERT_EQ(write(ld_peer, "late", 4), 4);
}

static void ld_fiber(void *arg)
{
    char buf[32];
    (void)arg;
    /* A short read on a fresh fd: the fd now counts as drained. */
    ASSERT_EQ(write(ld_peer, "abc", 3), 3);
    ld_read("abc", false);
    /* Data arrives, no poll happens, the next read waits first: the engine must report it
     * (level: it is there when the waiter registers; edge: the arrival's edge is queued). */
    ASSERT_EQ(write(ld_peer, "defg", 4), 4);
    ld_read("defg", true);
    /* Data arrives, then the loop polls while nobody waits (this fiber sleeps): an edge
     * engine keeps the edge in its ready bit, merged may drop the idle interest. */
    ASSERT_EQ(write(ld_peer, "hijkl", 5), 5);
    fb_sleep(3 * MS);
    ld_read("hijkl", true);
    /* A read that fills the buffer exactly: more may be queued, so adaptive tries first. */
    ASSERT_EQ(write(ld_peer, "0123456789abcdefghijklmnopqrstuvwxyz", 36), 36);
    uint64_t w0 = waited_first();
    ASSERT_EQ(fb_read_timeout(ld_fd, buf, 32, 2000 * MS), 32);
    ASSERT_EQ(waited_first() - w0, expect_wait(true));
    ld_read("wxyz", false);
    /* Nothing there: the read parks, and data from another fiber wakes it. */
    spawn(ld_late_writer, NULL);
    ld_read("late", true);
    /* End of file after a short read: 0, and 0 again (an end of file stays readable, and an
     * edge engine reports it only once, so it must not count as drained). */
    if (ld_pipe) {
        close(ld_peer);
        ld_peer = -1;
    } else {
        ASSERT_EQ(shutdown(ld_peer, SHUT_WR), 0);
    }
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(fb_read_timeout(ld_fd, buf, sizeof buf, 2000 * MS), 0);
}

void t_late_data(void)
{
    for (int round = 0; round < 2; round++) {
        int sv[2];
        ld_pipe = round == 1;
        if (ld_pipe) {
            ASSERT_EQ(pipe2(sv, O_CLOEXEC), 0);
            ld_fd = sv[0];
            ld_peer = sv[1];
        } else {
            unix_pair(sv);
            ld_fd = sv[0];
            ld_peer = sv[1];
        }
        start(0);
        spawn(ld_fiber, NULL);
        run_all();
        fb_close(ld_fd);
        if (ld_peer >= 0) close(ld_peer);
        finish();
        printf("late_data over a %s: every late byte delivered\n",
               ld_pipe ? "pipe" : "unix stream socket");
    }
}

/* ---- late_accept: a connection arriving after accept said EAGAIN, before the next wait ------ */

static int la_listener, la_got;
static uint64_t la_w0;

static void la_accept(void *arg)
{
    (void)arg;
    la_w0 = waited_first();
    la_got = fb_accept(la_listener, NULL, NULL);
}

static void la_sleeper(void *arg)
{
    (void)arg;
    fb_sleep(3 * MS);
}

static int la_connect(struct sockaddr_in *a)
{
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(c, (struct sockaddr *)a, sizeof *a), 0); /* loopback: in the backlog now */
    return c;
}

/* One accept inside a fiber, after an EAGAIN outside one left the listener drained. */
static void la_round(struct sockaddr_in *a, bool poll_between)
{
    ASSERT_EQ(fb_accept(la_listener, NULL, NULL), -1); /* outside a fiber: never waits */
    ASSERT_EQ(errno, EAGAIN);
    int c = la_connect(a);
    if (poll_between) {
        spawn(la_sleeper, NULL); /* the loop polls while nobody waits on the listener */
        ASSERT_EQ(fb_run(rt), 0);
    }
    alarm(10); /* fb_accept has no time limit: a lost wake-up ends the test here */
    spawn(la_accept, NULL);
    run_all();
    alarm(0);
    ASSERT_GE(la_got, 0);
    ASSERT_EQ(waited_first() - la_w0, expect_wait(true));
    fb_close(la_got);
    close(c);
}

void t_late_accept(void)
{
    struct sockaddr_in a;
    la_listener = tcp_listener(&a);
    start(0);
    /* The first round finds the listener unknown to the engine (an edge engine's ADD reports
     * the pending connection); the second finds it registered, the arrival's edge queued and
     * not yet polled; in the third the loop polls it with nobody waiting (a ready bit). */
    la_round(&a, false);
    la_round(&a, false);
    la_round(&a, true);
    fb_close(la_listener);
    finish();
    printf("late_accept: three connections that arrived after EAGAIN were accepted\n");
}

/* ---- file_read: a regular file (which epoll refuses) reads under every policy ------------- */

static int fr_fd;

static void fr_fiber(void *arg)
{
    char buf[16];
    (void)arg;
    ASSERT_EQ(fb_read_timeout(fr_fd, buf, sizeof buf, 1000 * MS), 5);
    ASSERT_EQ(memcmp(buf, "hello", 5), 0);
    ASSERT_EQ(fb_read_timeout(fr_fd, buf, sizeof buf, 1000 * MS), 0);
    ASSERT_EQ(fb_read_timeout(fr_fd, buf, sizeof buf, 1000 * MS), 0);
}

void t_file_read(void)
{
    char path[] = "/tmp/test-io-file.XXXXXX";
    fr_fd = mkstemp(path);
    ASSERT_GE(fr_fd, 0);
    unlink(path);
    ASSERT_EQ(write(fr_fd, "hello", 5), 5);
    ASSERT_EQ(lseek(fr_fd, 0, SEEK_SET), 0);
    start(0);
    spawn(fr_fiber, NULL);
    run_all();
    fb_close(fr_fd);
    finish();
}
