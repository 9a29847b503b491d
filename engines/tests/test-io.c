/* test-io.c - the fiber IO conformance matrix: every case for every engine and scheduler. */
#define _GNU_SOURCE
#include "io.h"
#include "asserts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: test-io CASE ENGINE star|ring [eager|wait|adaptive]. One CTest test per combination,
 * each its own process (engines/io/<case>/<engine>/<sched>/<read policy>; the read policy is
 * eager when not given). The switch backend is asm when compiled in, else ucontext: the cases
 * test IO, not switching. Loopback only, every wait bounded.
 */

#define MS ((int64_t)1000000)

static const char *engine_name;
static fb_policy policy;
static fb_read_policy read_policy = FB_READ_EAGER;
static fb_io *io;
static fb_runtime *rt;
static fb_stack_mode stack_mode; /* optional 4th argument: guarded (default) or copy[:K] */
static unsigned shared_stacks;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void start(size_t stack_size)
{
    const sw_backend *b = sw_backend_at(0); /* the registry's first: the fastest class */
    io = fb_io_new(engine_name);
    if (!io && (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
        printf("not run: %s: the kernel refused it: %s\n", engine_name, strerror(errno));
        exit(77);
    }
    if (!io) {
        perror("fb_io_new");
        exit(1);
    }
    fb_io_set_read_policy(io, read_policy);
    fb_config cfg = {.backend = b,
                     .policy = policy,
                     .stack_size = stack_size,
                     .poller = fb_io_poller(io),
                     .stack_mode = stack_mode,
                     .shared_stacks = shared_stacks};
    rt = fb_runtime_new(&cfg);
    if (!rt) {
        perror("fb_runtime_new");
        exit(1);
    }
}

static void spawn(void (*fn)(void *), void *arg)
{
    if (!fb_spawn(rt, fn, arg)) {
        perror("fb_spawn");
        exit(1);
    }
}

/* Run to completion; nothing may be left waiting (no dangling waiter or sleeper). */
static void run_all(void)
{
    ASSERT_EQ(fb_run(rt), 0);
    fb_io_stats st;
    fb_io_get_stats(io, &st);
    ASSERT_EQ(st.waiters, 0);
    ASSERT_EQ(st.sleepers, 0);
}

static void finish(void)
{
    fb_runtime_free(rt);
    fb_io_free(io);
}

static void unix_pair(int sv[2])
{
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* Fill fd's send path until a non-blocking write would block. */
static void fill(int fd)
{
    static char junk[65536];
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    while (write(fd, junk, sizeof junk) > 0)
        ;
    ASSERT_EQ(errno, EAGAIN);
}

/* A listening TCP socket on 127.0.0.1 with a kernel-chosen port. */
static int tcp_listener(struct sockaddr_in *a)
{
    socklen_t alen = sizeof *a;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(l, (struct sockaddr *)a, sizeof *a), 0);
    ASSERT_EQ(listen(l, 64), 0);
    ASSERT_EQ(getsockname(l, (struct sockaddr *)a, &alen), 0);
    return l;
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

static void t_close_wait(void)
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

static void t_fd_reuse(void)
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

static void t_hup(void)
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

static void t_err(void)
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

static void t_half_close(void)
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

static void t_duplex(void)
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

/* ---- sleepers: 10^4 fibers, distinct deadlines, wake in deadline order, none early -------- */

enum { SL_N = 10000 };
static int sl_perm[SL_N];
static int64_t sl_base, sl_deadline[SL_N], sl_last_park;
static int sl_order[SL_N];
static int sl_woken, sl_early, sl_late;

static void sl_fiber(void *arg)
{
    int i = (int)(intptr_t)arg;
    /* Deadlines are set when the fibers run, not when they are spawned: mapping 10^4 stacks
     * can take longer than any fixed margin on a loaded machine. The first pass parks them
     * all within a few ms; 3 us apart they span 30 ms, starting 100 ms after the first ran. */
    if (!sl_base) sl_base = now_ns() + 100 * MS;
    sl_deadline[i] = sl_base + (int64_t)sl_perm[i] * 3000;
    sl_last_park = now_ns();
    if (sl_last_park >= sl_deadline[i]) sl_late++;
    fb_sleep_until(sl_deadline[i]);
    if (now_ns() < sl_deadline[i]) sl_early++;
    sl_order[sl_woken++] = i;
}

static void t_sleepers(void)
{
    start(SW_STACK_MIN);
    /* A shuffled assignment, so that spawn order and deadline order differ. */
    for (int i = 0; i < SL_N; i++)
        sl_perm[i] = i;
    srand(4);
    for (int i = SL_N - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = sl_perm[i];
        sl_perm[i] = sl_perm[j];
        sl_perm[j] = t;
    }
    for (int i = 0; i < SL_N; i++)
        spawn(sl_fiber, (void *)(intptr_t)i);
    run_all();
    printf("%d sleepers parked within %.1f ms; woke %.1f ms after the last deadline\n", SL_N,
           (sl_last_park - (sl_base - 100 * MS)) / 1e6,
           (now_ns() - (sl_base + (int64_t)(SL_N - 1) * 3000)) / 1e6);
    if (sl_late) {
        printf("not run: %d fibers reached their sleep after their deadline (machine too "
               "loaded to judge the order)\n",
               sl_late);
        exit(77);
    }
    ASSERT_EQ(sl_woken, SL_N);
    ASSERT_EQ(sl_early, 0);
    for (int k = 1; k < SL_N; k++)
        ASSERT_LT(sl_deadline[sl_order[k - 1]], sl_deadline[sl_order[k]]);
    fb_io_stats st;
    fb_io_get_stats(io, &st);
    ASSERT_EQ(st.timers_fired, SL_N);
    finish();
}

/* ---- timeout: a wait with a time limit fails with ETIMEDOUT on time ------------------------ */

static int to_fd, to_peer;

/*
 * The lateness bound of a timed wait, in ms. It is checked tightly once per engine and
 * scheduler, under eager: the read policies change when a read waits, not how timers fire.
 * Under wait and adaptive the cases still check ETIMEDOUT, never early, and a timer that did
 * not fire (seconds late) still fails.
 */
static int64_t late_ms(int64_t tight)
{
    return read_policy == FB_READ_EAGER ? tight : 1000;
}

/* Time this thread spent runnable but not running (schedstat's run_delay, ns): on a loaded
 * machine the wake-up after a timeout can wait for a CPU, which is no lateness of the timer. */
static int64_t run_delay_ns(void)
{
    long long on_cpu = 0, delay = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f && fscanf(f, "%lld %lld", &on_cpu, &delay) != 2) delay = 0;
    if (f) fclose(f);
    return delay;
}

/* A timed wait that began at t0 (run delay d0) ended at most `limit` after it, not counting
 * the time the thread waited for a CPU; the correction is printed when it mattered. */
static void assert_on_time(const char *what, int64_t t0, int64_t d0, int64_t limit)
{
    int64_t took = now_ns() - t0, queued = run_delay_ns() - d0;
    printf("%s: returned after %.3f ms (%.3f ms of it waiting for a CPU)\n", what, took / 1e6,
           queued / 1e6);
    ASSERT_LE(took - queued, limit);
}

static void to_fiber(void *arg)
{
    char c;
    (void)arg;
    for (int i = 0; i < 3; i++) {
        int64_t t0 = now_ns(), d0 = run_delay_ns();
        ASSERT_EQ(fb_read_timeout(to_fd, &c, 1, 20 * MS), -1);
        ASSERT_EQ(errno, ETIMEDOUT);
        ASSERT_GE(now_ns() - t0, 20 * MS);
        /* noisy VM: generous, but a missed timer would be seconds */
        assert_on_time("read timeout 20 ms", t0, d0, late_ms(70) * MS);
    }
    int64_t t0 = now_ns(), d0 = run_delay_ns();
    ASSERT_EQ(fb_wait(to_fd, FB_OUT, 15 * MS), -1); /* its send buffer is full */
    ASSERT_EQ(errno, ETIMEDOUT);
    ASSERT_GE(now_ns() - t0, 15 * MS);
    assert_on_time("wait timeout 15 ms", t0, d0, late_ms(65) * MS);
    /* fb_connect with a time limit: a listener with backlog 0 whose queue already holds one
     * connection drops further SYNs, so the connect can only run out of time. */
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ASSERT_EQ(listen(l, 0), 0);
    ASSERT_EQ(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    int first = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(fb_connect(first, (struct sockaddr *)&a, sizeof a, 1000 * MS), 0);
    int second = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    t0 = now_ns();
    d0 = run_delay_ns();
    ASSERT_EQ(fb_connect(second, (struct sockaddr *)&a, sizeof a, 30 * MS), -1);
    ASSERT_EQ(errno, ETIMEDOUT);
    ASSERT_GE(now_ns() - t0, 30 * MS);
    assert_on_time("connect timeout 30 ms", t0, d0, late_ms(80) * MS);
    fb_close(second);
    fb_close(first);
    close(l);
    /* A wait that timed out left nothing behind: data now wakes a new wait at once. */
    c = 'z';
    ASSERT_EQ(write(to_peer, &c, 1), 1);
    c = 0;
    ASSERT_EQ(fb_read_timeout(to_fd, &c, 1, 1000 * MS), 1);
    ASSERT_EQ(c, 'z');
}

static void t_timeout(void)
{
    int sv[2];
    unix_pair(sv);
    to_fd = sv[0];
    to_peer = sv[1];
    fill(to_fd);
    start(0);
    spawn(to_fiber, NULL);
    run_all();
    fb_close(to_fd);
    close(to_peer);
    finish();
}

/* ---- busy: runnable fibers do not starve IO, and the poller never blocks meanwhile --------- */

static int bz_fd, bz_peer, bz_got;
static int64_t bz_sent_at, bz_wrote_at, bz_woke_at;

static void bz_spinner(void *arg)
{
    (void)arg;
    int64_t end = now_ns() + 2000 * MS;
    while (!bz_got && now_ns() < end)
        fb_yield(); /* always runnable: the poller may only look, never block */
}

static void bz_reader(void *arg)
{
    char c;
    (void)arg;
    ASSERT_EQ(fb_read(bz_fd, &c, 1), 1);
    bz_woke_at = now_ns();
    bz_got = 1;
}

static void bz_writer(void *arg)
{
    (void)arg;
    while (now_ns() < bz_sent_at)
        fb_yield();
    ASSERT_EQ(write(bz_peer, "b", 1), 1);
    bz_wrote_at = now_ns();
}

static void t_busy(void)
{
    int sv[2];
    unix_pair(sv);
    bz_fd = sv[0];
    bz_peer = sv[1];
    start(0);
    bz_sent_at = now_ns() + 20 * MS;
    spawn(bz_spinner, NULL);
    spawn(bz_reader, NULL);
    spawn(bz_writer, NULL);
    run_all();
    ASSERT_EQ(bz_got, 1);
    printf("write %.3f ms after its time; reader woke %.3f ms after the write while another "
           "fiber kept yielding\n",
           (bz_wrote_at - bz_sent_at) / 1e6, (bz_woke_at - bz_wrote_at) / 1e6);
    ASSERT_LE(bz_woke_at - bz_wrote_at, 50 * MS);
    fb_close(bz_fd);
    close(bz_peer);
    finish();
}

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

static void t_late_data(void)
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

static void t_late_accept(void)
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

static void t_file_read(void)
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

/* ---- ctl workload: ping-pong over TCP, the pattern the echo server produces --------------- */

enum { PP_CONNS = 4, PP_ROUNDS = 100 };
static int pp_listener;
static struct sockaddr_in pp_addr;

static void pp_session(void *arg)
{
    int c = (int)(intptr_t)arg;
    char buf[256]; /* larger than a request, as the echo server's is */
    ssize_t r;
    while ((r = fb_read(c, buf, sizeof buf)) > 0)
        ASSERT_EQ(fb_write(c, buf, (size_t)r), r);
    fb_close(c);
}

static void pp_acceptor(void *arg)
{
    (void)arg;
    for (int i = 0; i < PP_CONNS; i++) {
        int c = fb_accept(pp_listener, NULL, NULL);
        ASSERT_GE(c, 0);
        spawn(pp_session, (void *)(intptr_t)c);
    }
}

static void pp_client(void *arg)
{
    /* in is larger than a reply, as a real client's buffer is: each reply is a short read. */
    char out[64], in[256];
    (void)arg;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ASSERT_EQ(fb_connect(s, (struct sockaddr *)&pp_addr, sizeof pp_addr, 1000 * MS), 0);
    for (int k = 0; k < PP_ROUNDS; k++) {
        memset(out, 'a' + k % 26, sizeof out);
        ASSERT_EQ(fb_write(s, out, sizeof out), (ssize_t)sizeof out);
        size_t n = 0;
        while (n < sizeof out) {
            ssize_t r = fb_read_timeout(s, in + n, sizeof in - n, 2000 * MS);
            ASSERT_GE(r, 1);
            n += (size_t)r;
        }
        ASSERT_EQ(n, sizeof out);
        ASSERT_EQ(memcmp(in, out, sizeof out), 0);
    }
    fb_close(s);
}

static fb_io_stats pp_stats;

static bool pp_engine_completion(void)
{
    return eng_find(engine_name)->props.completion;
}

static eng_stats pp_run(void)
{
    pp_listener = tcp_listener(&pp_addr);
    start(0);
    spawn(pp_acceptor, NULL);
    for (int i = 0; i < PP_CONNS; i++)
        spawn(pp_client, NULL);
    run_all();
    fb_close(pp_listener);
    fb_io_get_stats(io, &pp_stats);
    finish();
    return pp_stats.engine;
}

static void print_kernel_calls(const eng_stats *st)
{
    printf("%s: %llu waits, %llu polls; epoll_ctl add %llu mod %llu del %llu, epoll_wait %llu, "
           "scans %llu (%llu fds), io_uring_enter %llu (%llu SQEs)%s\n",
           engine_name, (unsigned long long)st->waits, (unsigned long long)st->polls,
           (unsigned long long)st->ctl_add, (unsigned long long)st->ctl_mod,
           (unsigned long long)st->ctl_del, (unsigned long long)st->epoll_waits,
           (unsigned long long)st->scan_calls, (unsigned long long)st->scan_fds,
           (unsigned long long)st->uring_enters, (unsigned long long)st->uring_sqes,
           st->ctl_source == ENG_CTL_NONE ? " (not counted)" : "");
}

/* The kernel-call pattern per wait on a ping-pong (claim C3 and the engines' designs). */
static void t_ctl_pattern(void)
{
    eng_stats st = pp_run();
    uint64_t ctl = st.ctl_add + st.ctl_mod + st.ctl_del;
    print_kernel_calls(&st);
    /* Every round trip parks each side at least once. */
    ASSERT_GE(st.waits, PP_CONNS * PP_ROUNDS);
    /* The read policy's effect. Eager: every server read after a reply finds the queue empty
     * (the client runs only once the server parks), so at least one EAGAIN per round trip.
     * Adaptive and wait: a reply is always a short read, so the next read waits first and
     * finds data; EAGAIN is left only where readiness was stale (an edge engine's ready bit
     * or the first accept), a few per connection, not one per request. The first read on
     * each fd tries first (nothing is known about it yet). */
    printf("%s: reads tried %llu, EAGAIN %llu, waited first %llu\n",
           fb_read_policy_name(read_policy), (unsigned long long)pp_stats.reads_tried,
           (unsigned long long)pp_stats.reads_again,
           (unsigned long long)pp_stats.reads_waited_first);
    if (pp_engine_completion()) {
        /* A completion engine submits each read: no readiness, so no policy and no EAGAIN. */
        ASSERT_EQ(pp_stats.reads_again, 0);
        ASSERT_EQ(pp_stats.reads_waited_first, 0);
    } else if (read_policy == FB_READ_EAGER) {
        ASSERT_GE(pp_stats.reads_again, PP_CONNS * PP_ROUNDS);
        ASSERT_EQ(pp_stats.reads_waited_first, 0);
    } else {
        ASSERT_LE(pp_stats.reads_again, 4 * PP_CONNS + 4);
        ASSERT_GE(pp_stats.reads_waited_first, 2 * PP_CONNS * (PP_ROUNDS - 1));
    }
    uint64_t fds = 2 * PP_CONNS + 1;
    const eng_props *p = &eng_find(engine_name)->props;
    if (p->interest != ENG_INTEREST_KERNEL) {
        /* Nothing registered: one scan per poll, blocking or not, each passing >= 1 fd. */
        ASSERT_EQ(ctl + st.epoll_waits + st.uring_enters, 0);
        ASSERT_EQ(st.scan_calls, st.polls);
        ASSERT_GE(st.scan_fds, st.scan_calls);
    }
    if (p->interest_calls_per_wait == ENG_UNDECLARED) {
        if (st.ctl_source == ENG_CTL_NONE)
            printf("%s: kernel calls not counted\n", engine_name);
        else
            ASSERT_GE(ctl, 1);
        return;
    }
    /* Interest calls grow with the waits exactly as declared; beyond that, only per fd
     * (registration, a re-registration after interest was dropped, removal at close: at most
     * two per direction). A poll enters the kernel at most once. */
    uint64_t interest = ctl + st.uring_sqes, per_wait = (uint64_t)p->interest_calls_per_wait;
    ASSERT_GE(interest, per_wait * st.waits);
    ASSERT_LE(interest, per_wait * st.waits + 4 * fds);
    ASSERT_LE(st.epoll_waits + st.scan_calls + st.uring_enters, st.polls);
}

/*
 * The engine's counts against the kernel's: this process re-runs itself as the ping-pong
 * workload under `perf stat` on the syscall tracepoints of every kernel call an engine may
 * make (and io_uring's per-request submit tracepoint), the workload prints its engine's
 * counts, and each family must be equal.
 */
static void t_ctl_workload(void)
{
    eng_stats st = pp_run();
    printf("engine %llu %llu %llu %llu %llu %llu %llu %d\n",
           (unsigned long long)(st.ctl_add + st.ctl_mod + st.ctl_del),
           (unsigned long long)st.epoll_waits, (unsigned long long)st.scan_calls,
           (unsigned long long)st.uring_enters, (unsigned long long)st.uring_sqes,
           (unsigned long long)st.scan_fds, (unsigned long long)st.waits, (int)st.ctl_source);
}

/* Kernel events, and the family (index into the engine's printed counts) each one adds to. */
static const struct {
    const char *event;
    int family; /* 0 epoll_ctl, 1 epoll waits, 2 scans, 3 io_uring_enter, 4 SQEs */
} kevents[] = {
    {"syscalls:sys_enter_epoll_ctl", 0},      {"syscalls:sys_enter_epoll_wait", 1},
    {"syscalls:sys_enter_epoll_pwait", 1},    {"syscalls:sys_enter_epoll_pwait2", 1},
    {"syscalls:sys_enter_poll", 2},           {"syscalls:sys_enter_ppoll", 2},
    {"syscalls:sys_enter_select", 2},         {"syscalls:sys_enter_pselect6", 2},
    {"syscalls:sys_enter_io_uring_enter", 3}, {"io_uring:io_uring_submit_req", 4},
};
enum { NKEV = sizeof kevents / sizeof kevents[0], NFAM = 5 };

static void t_kernel_calls(void)
{
    static const char *const fam[NFAM] = {"epoll_ctl", "epoll_wait", "poll/select",
                                          "io_uring_enter", "SQEs"};
    char perf_out[] = "/tmp/test-io-perf.XXXXXX", work_out[] = "/tmp/test-io-work.XXXXXX";
    char self[4096], events[1024] = "";
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GE(sl, 1);
    self[sl] = 0;
    for (int i = 0; i < NKEV; i++)
        snprintf(events + strlen(events), sizeof events - strlen(events), "%s%s", i ? "," : "",
                 kevents[i].event);
    int pf = mkstemp(perf_out), wf = mkstemp(work_out);
    ASSERT_GE(pf, 0);
    ASSERT_GE(wf, 0);
    close(pf);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(wf, 1);
        execlp("perf", "perf", "stat", "-x,", "-e", events, "-o", perf_out, "--", self,
               "ctl_workload", engine_name, fb_policy_name(policy),
               fb_read_policy_name(read_policy), (char *)NULL);
        _exit(127);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    FILE *w = fopen(work_out, "r"), *p = fopen(perf_out, "r");
    unsigned long long eng[NFAM] = {0}, kern[NFAM] = {0}, fds = 0, waits = 0;
    int source = -1, have_w = 0, have_k = 0;
    char line[512];
    while (w && fgets(line, sizeof line, w))
        if (sscanf(line, "engine %llu %llu %llu %llu %llu %llu %llu %d", &eng[0], &eng[1], &eng[2],
                   &eng[3], &eng[4], &fds, &waits, &source) == 8)
            have_w = 1;
    while (p && fgets(line, sizeof line, p)) {
        /* value,unit,event,... (the unit is empty for tracepoints) */
        char *end, *name = strchr(line, ',');
        unsigned long long v = strtoull(line, &end, 10);
        if (end == line || !name || !(name = strchr(name + 1, ','))) continue;
        name++;
        name[strcspn(name, ",\n")] = 0;
        for (int i = 0; i < NKEV; i++)
            if (!strcmp(name, kevents[i].event)) {
                kern[kevents[i].family] += v;
                have_k++;
            }
    }
    if (w) fclose(w);
    if (p) fclose(p);
    unlink(work_out);
    unlink(perf_out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127 || have_k < NKEV) {
        printf("not run: perf stat with the syscall and io_uring tracepoints is unavailable "
               "(status %d, %d of %d events read)\n",
               status, have_k, NKEV);
        exit(77);
    }
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_EQ(have_w, 1);
    for (int f = 0; f < NFAM; f++)
        printf("%s: %-15s engine %llu, kernel %llu\n", engine_name, fam[f], eng[f], kern[f]);
    printf("%s: %llu waits, %llu fds passed to scans\n", engine_name, waits, fds);
    if (source == ENG_CTL_NONE) {
        printf("%s: the engine does not count its kernel calls (not counted)\n", engine_name);
        ASSERT_GE(kern[0] + kern[1], 1);
        return;
    }
    for (int f = 0; f < NFAM; f++)
        ASSERT_EQ(eng[f], kern[f]);
    ASSERT_GE(eng[0] + eng[1] + eng[2] + eng[3], 1); /* a workload that waited in the kernel */
}

static const test_case cases[] = {
    {"close_wait", t_close_wait},
    {"fd_reuse", t_fd_reuse},
    {"hup", t_hup},
    {"err", t_err},
    {"half_close", t_half_close},
    {"duplex", t_duplex},
    {"sleepers", t_sleepers},
    {"timeout", t_timeout},
    {"busy", t_busy},
    {"ctl_pattern", t_ctl_pattern},
    {"kernel_calls", t_kernel_calls},
    {"ctl_workload", t_ctl_workload},
    {"late_data", t_late_data},
    {"late_accept", t_late_accept},
    {"file_read", t_file_read},
};

int main(int argc, char **argv)
{
    /* Optional trailing arguments, in any order: a read policy, a stack mode. */
    bool bad_arg = argc < 4 || argc > 6;
    for (int i = 4; !bad_arg && i < argc; i++)
        bad_arg = fb_read_policy_parse(argv[i], &read_policy) != 0 &&
                  fb_stack_mode_parse(argv[i], &stack_mode, &shared_stacks) != 0;
    if (bad_arg) {
        fprintf(stderr, "usage: test-io CASE ENGINE star|ring [%s] [guarded|copy[:K]]\n",
                fb_read_policy_names());
        return 2;
    }
    engine_name = argv[2];
    if (!eng_find(engine_name)) {
        fprintf(stderr, "test-io: unknown engine '%s' (valid: %s)\n", argv[2], eng_names());
        return 2;
    }
    if (fb_policy_parse(argv[3], &policy) < 0) {
        fprintf(stderr, "test-io: unknown scheduler '%s' (valid: star, ring)\n", argv[3]);
        return 2;
    }
    TEST_CASE_REQUIRE("test-io", cases, argv[1])();
    printf("ok %s/%s/%s/%s/%s\n", argv[1], argv[2], argv[3], fb_read_policy_name(read_policy),
           fb_stack_mode_name(stack_mode));
    return 0;
}
