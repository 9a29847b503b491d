/* srv_test_timeouts.c - srv-test scenario `timeouts`: --read-timeout and --idle-timeout close
 * idle and slow clients on time (not early, not much later) and never an active one; a model
 * without an equivalent refuses both flags with one line. */
#include "srv_test.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 200
/* How much later than its deadline a close may come: the machine is shared with other tests,
 * and ASan and valgrind slow the server down. A wheel's rounding is far below it. */
#define LATE_MS         250
#define ACTIVE_EVERY_MS 50 /* the active client's pace: a quarter of the timeout */
/* Clock reads on either side of a moment differ by the poll step at most. */
#define STEP_MS 2
/* A late close fails only on the last of these tries of the whole scenario: a guest cannot see
 * the time its host kept its CPU from it, and a loaded CI machine once held a close 2 ms past
 * LATE_MS. A server that closes late does it on every try; an early close fails at once. */
#define ON_TIME_TRIES 3

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *arg_of(const char *flag)
{
    for (int i = 0; st_server_argv[i] && st_server_argv[i + 1]; i++)
        if (strcmp(st_server_argv[i], flag) == 0) return st_server_argv[i + 1];
    return NULL;
}

/* The server's flags plus `extra` (NULL-terminated: a flag and its value) refused with exit 2
 * and one line naming `needle`. The server's own value of that flag is left out: a flag given
 * twice is refused for that alone. */
static void expect_refused(const char *const extra[], const char *needle)
{
    char *args[64], out[4096], err[4096];
    int n = 0;
    for (int i = 0; st_server_argv[i] && n < 56; i++) {
        if (strcmp(st_server_argv[i], extra[0]) == 0 && st_server_argv[i + 1]) {
            i++;
            continue;
        }
        args[n++] = st_server_argv[i];
    }
    for (int i = 0; extra[i]; i++)
        args[n++] = (char *)extra[i];
    args[n] = NULL;
    int status = st_run_cli(args, out, err, sizeof out);
    ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s %s: status %#x, not exit 2",
               extra[0], extra[1], status);
    ASSERT_MSG(st_count_lines(err) == 1 && strstr(err, needle), "%s %s: not one line naming %s: %s",
               extra[0], extra[1], needle, err);
    tc_note("refused: %s", err);
}

struct watched {
    const char *what;
    int fd;
    double from_lo, from_hi; /* the deadline counts from a moment between these two */
    bool check_early;        /* from_lo is a bound the server cannot beat */
    double closed;           /* when the close was seen; 0 while open */
};

/* The server's close is seen without reading: a FIN (RDHUP) or a reset (HUP, ERR), so a
 * client that holds unread echoes (the slow reader) is watched as well as the others. */
static void poll_closes(struct watched *w, int n, int wait_ms)
{
    struct pollfd p[4];
    for (int i = 0; i < n; i++)
        p[i] = (struct pollfd){w[i].closed ? -1 : w[i].fd, POLLRDHUP, 0};
    if (poll(p, (nfds_t)n, wait_ms) <= 0) return;
    double t = now_ms();
    for (int i = 0; i < n; i++)
        if (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) w[i].closed = t;
}

/* Whether w was closed on time; a late close fails the test on the last try only. */
static bool check_on_time(const struct watched *w, bool last_try)
{
    ASSERT_MSG(w->closed, "the %s client was never closed", w->what);
    double early = w->closed - w->from_lo, late = w->closed - w->from_hi;
    tc_note("%s client closed %.1f ms after it went quiet (timeout %d ms)", w->what,
            w->check_early ? early : late, TIMEOUT_MS);
    if (w->check_early)
        ASSERT_MSG(early >= TIMEOUT_MS - STEP_MS, "the %s client was closed early: %.1f ms",
                   w->what, early);
    if (late <= TIMEOUT_MS + LATE_MS) return true;
    ASSERT_MSG(!last_try, "the %s client was closed late: %.1f ms", w->what, late);
    tc_note("the %s client was closed late (%.1f ms): trying the scenario again", w->what, late);
    return false;
}

/* One server with `flag` TIMEOUT_MS: an idle client, one that goes quiet after one echo, an
 * active one and (idle timeout) one that never reads. Returns whether every close came on
 * time (see ON_TIME_TRIES). */
static bool one_timeout(const char *flag, bool last_try)
{
    bool idle = strcmp(flag, "--idle-timeout") == 0;
    char ms[16];
    snprintf(ms, sizeof ms, "%d", TIMEOUT_MS);
    struct tc_server s;
    st_start_with(&s, NULL, flag, ms);
    int base = tc_tree_fds(s.pid);
    struct watched w[3];
    int n = 0;
    if (idle) {
        /* First, as its fill takes up to 2 s in which the others would go idle. Its last byte
         * moved at most when the fill stopped: no lower bound to hold. */
        int slow = st_slow_reader(&s);
        w[n++] = (struct watched){"never-reading", slow, 0, now_ms(), false, 0};
    }
    double t = now_ms();
    /* The server cannot arm before the connection exists, nor after it echoed. */
    int fd = tc_connect(s.port);
    ASSERT_MSG(fd >= 0, "connect: %s", strerror(errno));
    w[n++] = (struct watched){"idle", fd, t, now_ms(), true, 0};
    fd = tc_connect(s.port);
    ASSERT_MSG(fd >= 0, "connect: %s", strerror(errno));
    uint64_t off = 0;
    t = now_ms();
    ASSERT_EQ(tc_echo(fd, 3, &off, 100, 5000), TC_OK);
    w[n++] = (struct watched){"quiet after one echo", fd, t, now_ms(), true, 0};
    int active = st_fresh(&s, 4, 10);
    uint64_t active_off = 10;
    double end = now_ms() + 3 * TIMEOUT_MS + LATE_MS, next = now_ms() + ACTIVE_EVERY_MS;
    double last_echo = now_ms();
    int echoes = 0;
    bool stalled = false;
    while (now_ms() < end && !stalled) {
        if (now_ms() >= next) {
            /* This process held off a whole timeout (a loaded machine): the server was right
             * to close, and the scenario is tried again. */
            double quiet = now_ms() - last_echo;
            int rc = tc_echo(active, 4, &active_off, 10, 5000);
            stalled = rc != TC_OK && quiet >= TIMEOUT_MS - ACTIVE_EVERY_MS && !last_try;
            ASSERT_MSG(rc == TC_OK || stalled,
                       "the active client lost its connection: %s (%s, %.1f ms after its last "
                       "echo)",
                       tc_rc_name(rc), flag, quiet);
            last_echo = now_ms();
            echoes++;
            next += ACTIVE_EVERY_MS;
        }
        poll_closes(w, n, STEP_MS);
    }
    if (stalled) {
        tc_note("the active client went %d ms or more without an echo: trying the scenario "
                "again",
                TIMEOUT_MS - ACTIVE_EVERY_MS);
        for (int i = 0; i < n; i++)
            close(w[i].fd);
        close(active);
        tc_server_stop(&s, SIGTERM);
        return false;
    }
    tc_note("the active client echoed %d times over %d ms, never closed", echoes,
            3 * TIMEOUT_MS + LATE_MS);
    bool on_time = true;
    for (int i = 0; i < n; i++) {
        on_time &= check_on_time(&w[i], last_try);
        close(w[i].fd);
    }
    close(active);
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "timed-out connections' fds not released");
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, idle ? "timeouts.idle" : "timeouts.read"), (uint64_t)n);
    ASSERT_EQ(tc_stat(&s, idle ? "timeouts.read" : "timeouts.idle"), 0);
    ASSERT_EQ(tc_stat(&s, idle ? "timeouts.idle_ms" : "timeouts.read_ms"), TIMEOUT_MS);
    const char *timers = tc_json_find(s.json, "timers"), *want = arg_of("--timers");
    ASSERT_MSG(timers && timers[0] == '"', "no timers named in %s", s.json);
    if (want)
        ASSERT_MSG(strncmp(timers + 1, want, strlen(want)) == 0 && timers[1 + strlen(want)] == '"',
                   "timers is not \"%s\" in %s", want, s.json);
    return on_time;
}

void t_timeouts(void)
{
    const char *model = arg_of("--model");
    ASSERT_MSG(model, "srv-test timeouts needs --model");
    expect_refused((const char *const[]){"--read-timeout", "0", NULL}, "--read-timeout");
    expect_refused((const char *const[]){"--idle-timeout", "soon", NULL}, "--idle-timeout");
    if (!st_model_declares(model, "takes_timeouts")) {
        expect_refused((const char *const[]){"--read-timeout", "100", NULL}, "--read-timeout");
        expect_refused((const char *const[]){"--idle-timeout", "100", NULL}, "--idle-timeout");
        return;
    }
    if (st_model_declares(model, "takes_fiber_flags"))
        expect_refused((const char *const[]){"--timers", "sundial", NULL}, "heap");
    for (int try = 1; !one_timeout("--read-timeout", try == ON_TIME_TRIES); try++) {
    }
    for (int try = 1; !one_timeout("--idle-timeout", try == ON_TIME_TRIES); try++) {
    }
}

/* The engine's waits so far, from the statistics (epoll_wait, poll/select scans, io_uring_enter).
 */
static uint64_t waits_of(struct tc_server *s)
{
    return tc_stat(s, "kernel_calls.epoll_wait") + tc_stat(s, "kernel_calls.scan") +
           tc_stat(s, "kernel_calls.io_uring_enter");
}

/*
 * --poll-tick MS (fiber): an idle server wakes every MS instead of sleeping until an event or
 * a deadline. With 5 connections open and no traffic for IDLE_WINDOW_MS, the ticking server
 * waits at least a quarter of the ticks that fit (a loaded machine wakes it late), the plain
 * one a handful of times at most.
 */
#define TICK_MS        5
#define IDLE_WINDOW_MS 500
void t_polltick(void)
{
    for (int ticking = 0; ticking < 2; ticking++) {
        struct tc_server s;
        st_start_with(&s, NULL, ticking ? "--poll-tick" : NULL, ticking ? "5" : NULL);
        int fds[5];
        for (int i = 0; i < 5; i++)
            fds[i] = st_fresh(&s, (uint32_t)i, 10);
        tc_sleep_ms(IDLE_WINDOW_MS);
        for (int i = 0; i < 5; i++)
            close(fds[i]);
        tc_server_stop(&s, SIGTERM);
        uint64_t waits = waits_of(&s);
        tc_note("%s: %llu waits in the engine over %d ms idle",
                ticking ? "--poll-tick 5" : "no tick", (unsigned long long)waits, IDLE_WINDOW_MS);
        ASSERT_EQ(tc_stat(&s, "poll_tick_ms"), (uint64_t)(ticking ? TICK_MS : 0));
        if (ticking)
            ASSERT_MSG(waits >= IDLE_WINDOW_MS / TICK_MS / 4, "--poll-tick %d: only %llu waits",
                       TICK_MS, (unsigned long long)waits);
        else
            ASSERT_MSG(waits <= 40, "an idle server without a tick waited %llu times",
                       (unsigned long long)waits);
    }
}
