/* test-io-fd.c - test-io's cases on a file descriptor's life: waits that end with a close, a
 * reused fd number, a hang-up, an error, a half-close, and both directions at once. */
#define _GNU_SOURCE
#include "test-io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- close_wait: fb_close while fibers wait on the fd -------------------------------------- */

static int cw_fd;
static int cw_rc[2], cw_err[2];

static void cw_reader(void *arg)
{
    char c;
    (void)arg;
    cw_rc[0] = (int)fb_read(cw_fd, &c, 1);
    cw_err[0] = errno;
}

static void cw_writer(void *arg)
{
    char buf[4096] = {0};
    (void)arg;
    cw_rc[1] = (int)fb_write(cw_fd, buf, sizeof buf);
    cw_err[1] = errno;
}

static void cw_closer(void *arg)
{
    (void)arg;
    fb_sleep(10 * MS); /* both others are parked by now */
    ASSERT_EQ(fb_close(cw_fd), 0);
}

void t_close_wait(void)
{
    int sv[2];
    start(0);
    unix_pair(sv);
    cw_fd = sv[0];
    fill(sv[0]);
    spawn(cw_reader, NULL);
    spawn(cw_writer, NULL);
    spawn(cw_closer, NULL);
    run_all();
    ASSERT_EQ(cw_rc[0], -1);
    ASSERT_EQ(cw_err[0], EBADF);
    ASSERT_EQ(cw_rc[1], -1);
    ASSERT_EQ(cw_err[1], EBADF);
    close(sv[1]);
    finish();
}

/* ---- fd_reuse: a reused fd number inherits neither waiter nor registration ---------------- */

static int ru_old, ru_new, ru_peer;
static int ru_old_wakes, ru_old_err;
static ssize_t ru_new_rc;

static void ru_old_reader(void *arg)
{
    char c;
    (void)arg;
    ssize_t rc = fb_read(ru_old, &c, 1);
    ru_old_wakes++;
    ru_old_err = rc < 0 ? errno : 0;
}

static void ru_main(void *arg)
{
    int nv[2];
    char c = 'n';
    (void)arg;
    fb_sleep(5 * MS);
    ASSERT_EQ(fb_close(ru_old), 0);
    unix_pair(nv);
    ASSERT_TRUE(nv[0] == ru_old || nv[1] == ru_old);
    ru_new = ru_old;
    ru_peer = nv[0] == ru_old ? nv[1] : nv[0];
    ASSERT_EQ(write(ru_peer, &c, 1), 1); /* the new file is readable: nobody may be woken */
    fb_sleep(20 * MS);
    ASSERT_EQ(ru_old_wakes, 1); /* woken once, by the close, not by the new file's data */
    char got = 0;
    ru_new_rc = fb_read_timeout(ru_new, &got, 1, 1000 * MS); /* a fresh registration works */
    ASSERT_EQ(got, 'n');
    c = 'm';
    ASSERT_EQ(write(ru_peer, &c, 1), 1);
    ASSERT_EQ(fb_read_timeout(ru_new, &got, 1, 1000 * MS), 1);
    ASSERT_EQ(got, 'm');
}

void t_fd_reuse(void)
{
    int sv[2];
    start(0);
    unix_pair(sv);
    ru_old = sv[0];
    spawn(ru_old_reader, NULL);
    spawn(ru_main, NULL);
    run_all();
    ASSERT_EQ(ru_old_wakes, 1);
    ASSERT_EQ(ru_old_err, EBADF);
    ASSERT_EQ(ru_new_rc, 1);
    fb_close(ru_new);
    close(ru_peer);
    close(sv[1]);
    finish();
}

/* ---- hup / err: the waiter wakes, and afterwards the loop does not spin ------------------- */

/* Sleep 100 ms with the troublesome fd still open: polls and CPU time must stay small. */
static void assert_quiet_sleep(void)
{
    fb_stats a, b;
    fb_get_stats(rt, &a);
    int64_t c0 = cpu_ns(), t0 = now_ns();
    fb_sleep(100 * MS);
    int64_t wall = now_ns() - t0, cpu = cpu_ns() - c0;
    fb_get_stats(rt, &b);
    printf("quiet sleep: %lld polls, %.1f ms CPU in %.1f ms\n", (long long)(b.polls - a.polls),
           cpu / 1e6, wall / 1e6);
    ASSERT_LE(b.polls - a.polls, 8);
    ASSERT_LE(cpu, 40 * MS);
}

static int hup_fd, hup_peer;
static ssize_t hup_rc = -2;

static void hup_reader(void *arg)
{
    char c;
    (void)arg;
    hup_rc = fb_read(hup_fd, &c, 1);
    assert_quiet_sleep();
}

static void hup_closer(void *arg)
{
    (void)arg;
    fb_sleep(5 * MS);
    close(hup_peer); /* not ours: a plain close of the peer */
}

void t_hup(void)
{
    int sv[2];
    start(0);
    unix_pair(sv);
    hup_fd = sv[0];
    hup_peer = sv[1];
    spawn(hup_reader, NULL);
    spawn(hup_closer, NULL);
    run_all();
    ASSERT_EQ(hup_rc, 0);
    fb_close(hup_fd);
    finish();
}

static int err_rc, err_errno;

static void err_fiber(void *arg)
{
    struct sockaddr_in *a = arg;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    err_rc = fb_connect(s, (struct sockaddr *)a, sizeof *a, 1000 * MS);
    err_errno = errno;
    assert_quiet_sleep(); /* the refused socket (EPOLLERR|EPOLLHUP) stays open meanwhile */
    fb_close(s);
}

void t_err(void)
{
    struct sockaddr_in a;
    int l = tcp_listener(&a);
    close(l); /* nobody listens on the port any more: connect gets a reset */
    start(0);
    spawn(err_fiber, &a);
    run_all();
    ASSERT_EQ(err_rc, -1);
    ASSERT_EQ(err_errno, ECONNREFUSED);
    finish();
}

/* ---- half_close: read returns 0 after the peer's shutdown, writes still work -------------- */

static int hc_listener;
static struct sockaddr_in hc_addr;
static char hc_client_got[16];

static void hc_server(void *arg)
{
    char buf[16] = {0};
    size_t n = 0;
    ssize_t r;
    (void)arg;
    int c = fb_accept(hc_listener, NULL, NULL);
    ASSERT_GE(c, 0);
    while ((r = fb_read(c, buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    ASSERT_EQ(r, 0); /* the client's FIN */
    ASSERT_EQ(n, 5);
    ASSERT_EQ(memcmp(buf, "hello", 5), 0);
    ASSERT_EQ(fb_write(c, "world", 5), 5); /* our direction is still open */
    ASSERT_EQ(fb_close(c), 0);
}

static void hc_client(void *arg)
{
    size_t n = 0;
    ssize_t r;
    (void)arg;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(fb_connect(s, (struct sockaddr *)&hc_addr, sizeof hc_addr, 1000 * MS), 0);
    ASSERT_EQ(fb_write(s, "hello", 5), 5);
    ASSERT_EQ(shutdown(s, SHUT_WR), 0);
    while ((r = fb_read_timeout(s, hc_client_got + n, sizeof hc_client_got - 1 - n, 2000 * MS)) > 0)
        n += (size_t)r;
    ASSERT_EQ(r, 0);
    ASSERT_EQ(n, 5);
    fb_close(s);
}

void t_half_close(void)
{
    hc_listener = tcp_listener(&hc_addr);
    start(0);
    spawn(hc_server, NULL);
    spawn(hc_client, NULL);
    run_all();
    ASSERT_EQ(memcmp(hc_client_got, "world", 5), 0);
    fb_close(hc_listener);
    finish();
}

/* ---- duplex: a blocked reader and a blocked writer on one socket both progress ------------ */

enum { DX_BIG = 4 << 20, DX_SMALL = 1000 };
static int dx_a, dx_b;
static int dx_writer_done, dx_reader_done_first;
static size_t dx_peer_got;
static unsigned char *dx_out;

static void dx_writer(void *arg)
{
    (void)arg;
    ASSERT_EQ(fb_write(dx_a, dx_out, DX_BIG), DX_BIG); /* blocks: far more than the buffers */
    dx_writer_done = 1;
}

static void dx_reader(void *arg)
{
    char buf[DX_SMALL];
    size_t n = 0;
    (void)arg;
    while (n < DX_SMALL) {
        ssize_t r = fb_read(dx_a, buf + n, DX_SMALL - n);
        ASSERT_GE(r, 1);
        n += (size_t)r;
    }
    for (size_t i = 0; i < DX_SMALL; i++)
        ASSERT_EQ((unsigned char)buf[i], (unsigned char)(i * 7));
    dx_reader_done_first = !dx_writer_done; /* read while the writer was still blocked */
}

static void dx_peer(void *arg)
{
    static char in[65536]; /* not on the fiber's 64 KiB stack */
    char buf[DX_SMALL];
    (void)arg;
    fb_sleep(10 * MS); /* the writer has filled the buffers and parked, the reader too */
    ASSERT_EQ(dx_writer_done, 0);
    for (int i = 0; i < DX_SMALL; i++)
        buf[i] = (char)(i * 7);
    ASSERT_EQ(fb_write(dx_b, buf, DX_SMALL), DX_SMALL);
    fb_sleep(5 * MS);
    while (dx_peer_got < DX_BIG) {
        ssize_t r = fb_read(dx_b, in, sizeof in);
        ASSERT_GE(r, 1);
        for (ssize_t i = 0; i < r; i++)
            ASSERT_EQ((unsigned char)in[i], dx_out[dx_peer_got + (size_t)i]);
        dx_peer_got += (size_t)r;
    }
}

void t_duplex(void)
{
    int sv[2];
    unix_pair(sv);
    dx_a = sv[0];
    dx_b = sv[1];
    dx_out = malloc(DX_BIG);
    for (size_t i = 0; i < DX_BIG; i++)
        dx_out[i] = (unsigned char)(i * 13 + (i >> 11));
    start(0);
    spawn(dx_writer, NULL);
    spawn(dx_reader, NULL);
    spawn(dx_peer, NULL);
    run_all();
    ASSERT_EQ(dx_writer_done, 1);
    ASSERT_EQ(dx_reader_done_first, 1);
    ASSERT_EQ(dx_peer_got, DX_BIG);
    fb_close(dx_a);
    fb_close(dx_b);
    free(dx_out);
    finish();
}
