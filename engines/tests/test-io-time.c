/* test-io-time.c - test-io's cases on time: many sleepers in deadline order, timed waits that
 * end on time, and runnable fibers that must not starve IO. */
#define _GNU_SOURCE
#include "test-io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

void t_sleepers(void)
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

/*
 * A timed wait that began at t0 (run delay d0) ended at most `limit` after it, not counting
 * the time the thread waited for a CPU. A late return fails only on the last of ON_TIME_TRIES
 * tries of the same wait; before that the caller waits again and this returns 0. A guest
 * cannot see the time its host kept its CPU from it (steal reads 0 in a Firecracker guest's
 * /proc/stat), and a loaded CI machine once held such a wait 80 ms past any run delay; an
 * engine that fires its timers late does so on every try.
 */
enum { ON_TIME_TRIES = 3 };

static int on_time(const char *what, int64_t t0, int64_t d0, int64_t limit, int try)
{
    int64_t took = now_ns() - t0, queued = run_delay_ns() - d0;
    printf("%s, try %d: returned after %.3f ms (%.3f ms of it waiting for a CPU)\n", what, try,
           took / 1e6, queued / 1e6);
    if (took - queued > limit && try < ON_TIME_TRIES) return 0;
    ASSERT_LE(took - queued, limit);
    return 1;
}

static void to_fiber(void *arg)
{
    char c;
    (void)arg;
    for (int i = 0; i < 3; i++)
        for (int try = 1;; try++) {
            int64_t t0 = now_ns(), d0 = run_delay_ns();
            ASSERT_EQ(fb_read_timeout(to_fd, &c, 1, 20 * MS), -1);
            ASSERT_EQ(errno, ETIMEDOUT);
            ASSERT_GE(now_ns() - t0, 20 * MS);
            /* noisy VM: generous, but a missed timer would be seconds */
            if (on_time("read timeout 20 ms", t0, d0, late_ms(70) * MS, try)) break;
        }
    for (int try = 1;; try++) {
        int64_t t0 = now_ns(), d0 = run_delay_ns();
        ASSERT_EQ(fb_wait(to_fd, FB_OUT, 15 * MS), -1); /* its send buffer is full */
        ASSERT_EQ(errno, ETIMEDOUT);
        ASSERT_GE(now_ns() - t0, 15 * MS);
        if (on_time("wait timeout 15 ms", t0, d0, late_ms(65) * MS, try)) break;
    }
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
    for (int try = 1;; try++) {
        int second = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int64_t t0 = now_ns(), d0 = run_delay_ns();
        ASSERT_EQ(fb_connect(second, (struct sockaddr *)&a, sizeof a, 30 * MS), -1);
        ASSERT_EQ(errno, ETIMEDOUT);
        ASSERT_GE(now_ns() - t0, 30 * MS);
        int ok = on_time("connect timeout 30 ms", t0, d0, late_ms(80) * MS, try);
        fb_close(second);
        if (ok) break;
    }
    fb_close(first);
    close(l);
    /* A wait that timed out left nothing behind: data now wakes a new wait at once. */
    c = 'z';
    ASSERT_EQ(write(to_peer, &c, 1), 1);
    c = 0;
    ASSERT_EQ(fb_read_timeout(to_fd, &c, 1, 1000 * MS), 1);
    ASSERT_EQ(c, 'z');
}

void t_timeout(void)
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

/* ---- moved deadlines: a timed read's timer outlives the read (io.c, io_read_timer) ---------- */

static int md_fd, md_peer;

/* One byte to the reader's fd, `arg` ms from now (0: as soon as it runs). */
static void md_send_after(void *arg)
{
    if (arg) fb_sleep((int64_t)(intptr_t)arg * MS);
    ASSERT_EQ(write(md_peer, "d", 1), 1);
}

/* A timed read that data ends at once: the sender runs while the reader waits, so only a
 * stall longer than the timeout could make this read time out. */
static void md_read_answered(int64_t timeout_ms)
{
    char c = 0;
    spawn(md_send_after, NULL);
    ASSERT_EQ(fb_read_timeout(md_fd, &c, 1, timeout_ms * MS), 1);
    ASSERT_EQ(c, 'd');
}

/* Timed reads that nothing answered, each after one that data answered at once (the
 * answered one leaves its timer armed): the first try and every try again of on_time(). */
static int md_timed_out;

/* A timed read that data answers at once leaves its timer armed at `left_ms`; the timed read
 * after it, which nothing answers, must end with ETIMEDOUT, never early, and on time. */
static void md_times_out_after(const char *what, int64_t left_ms, int64_t timeout_ms)
{
    for (int try = 1;; try++) {
        char c;
        md_read_answered(left_ms);
        int64_t t0 = now_ns(), d0 = run_delay_ns();
        ASSERT_EQ(fb_read_timeout(md_fd, &c, 1, timeout_ms * MS), -1);
        ASSERT_EQ(errno, ETIMEDOUT);
        ASSERT_GE(now_ns() - t0, timeout_ms * MS);
        md_timed_out++;
        if (on_time(what, t0, d0, (timeout_ms + late_ms(60)) * MS, try)) break;
    }
}

static void md_fiber(void *arg)
{
    (void)arg;
    /* Later: the timer left at the first read's deadline (100 ms) fires first and must move
     * on to the second read's (300 ms after it began), not end it. */
    md_times_out_after("read timeout 300 ms after one of 100 ms", 100, 300);
    /* Earlier: a timer left for 5 s must not hold back a 30 ms timeout. */
    md_times_out_after("read timeout 30 ms after one of 5 s", 5000, 30);
    /* A read without a deadline outlives the timer a timed read left (100 ms). */
    md_read_answered(100);
    char c = 0;
    int64_t t0 = now_ns();
    spawn(md_send_after, (void *)(intptr_t)200);
    ASSERT_EQ(fb_read(md_fd, &c, 1), 1);
    ASSERT_EQ(c, 'd');
    ASSERT_GE(now_ns() - t0, 200 * MS);
    /* Closed with its timer armed (100 ms): the timer goes with the fd, so the poller must not
     * meet it when that time passes (ASan's build would see the freed node). */
    md_read_answered(100);
    ASSERT_EQ(fb_close(md_fd), 0);
    fb_sleep(150 * MS);
}

void t_moved_deadline(void)
{
    int sv[2];
    unix_pair(sv);
    md_fd = sv[0];
    md_peer = sv[1];
    start(0);
    spawn(md_fiber, NULL);
    run_all();
    fb_io_stats st;
    fb_io_get_stats(io, &st);
    /* The reads that timed out (two, or more when one was tried again) and the two sleeps:
     * no timer that only moved on counts. */
    ASSERT_GE(md_timed_out, 2);
    ASSERT_EQ(st.timers_fired, md_timed_out + 2);
    close(md_peer);
    finish();
}

/* ---- busy: runnable fibers do not starve IO, and the poller never blocks meanwhile --------- */

static int bz_fd, bz_peer, bz_got;
static int64_t bz_sent_at, bz_wrote_at, bz_woke_at, bz_queued;

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
    bz_queued += run_delay_ns();
    bz_got = 1;
}

static void bz_writer(void *arg)
{
    (void)arg;
    while (now_ns() < bz_sent_at)
        fb_yield();
    ASSERT_EQ(write(bz_peer, "b", 1), 1);
    bz_wrote_at = now_ns();
    bz_queued = -run_delay_ns();
}

void t_busy(void)
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
    printf("write %.3f ms after its time; reader woke %.3f ms after the write (%.3f ms of it "
           "waiting for a CPU) while another fiber kept yielding\n",
           (bz_wrote_at - bz_sent_at) / 1e6, (bz_woke_at - bz_wrote_at) / 1e6, bz_queued / 1e6);
    /* A poller that blocked, or never looked, would leave the reader to the spinner's 2 s. */
    ASSERT_LE(bz_woke_at - bz_wrote_at - bz_queued, 500 * MS);
    fb_close(bz_fd);
    close(bz_peer);
    finish();
}
