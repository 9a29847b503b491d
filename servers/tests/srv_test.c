/* srv_test.c - behaviour tests for every echo-server model: srv-test SCENARIO SERVER FLAGS... */
#include "tc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_IDLE_TICKS 20 /* CPU ticks (1/100 s) allowed over a 1 s idle window: 20% */

static char **server_argv;

/* Start the server of this test run, with up to two extra flags (NULL: none). */
static void start_with(struct tc_server *s, const struct tc_limits *lim, const char *flag,
                       const char *value)
{
    char *argv[64];
    int n = 0;
    for (; server_argv[n] && n < 60; n++)
        argv[n] = server_argv[n];
    if (flag) {
        argv[n++] = (char *)flag;
        argv[n++] = (char *)value;
    }
    argv[n] = NULL;
    tc_server_start(s, argv, lim);
}

static void start(struct tc_server *s)
{
    start_with(s, NULL, NULL, NULL);
}

static void load(struct tc_server *s, int conns, size_t size, int rounds, bool halfclose)
{
    struct tc_load cfg = {conns, size, rounds, halfclose, 60000};
    char why[256];
    int rc = tc_echo_many(s->port, &cfg, why, sizeof why);
    ASSERT_MSG(rc == TC_OK, "%d x %zu B x %d%s: %s", conns, size, rounds,
               halfclose ? " half-closed" : "", why);
    tc_note("%3d connections x %7zu B x %2d rounds%s: exact", conns, size, rounds,
            halfclose ? ", half-closed" : "");
}

/* A new connection that echoes `size` bytes once; the open fd is returned. */
static int fresh(struct tc_server *s, uint32_t seed, size_t size)
{
    uint64_t off = 0;
    int fd = tc_connect(s->port);
    ASSERT_MSG(fd >= 0, "connect: %s", strerror(errno));
    int rc = tc_echo(fd, seed, &off, size, 10000);
    ASSERT_MSG(rc == TC_OK, "echo on a new connection: %s", tc_rc_name(rc));
    return fd;
}

/*
 * A fiber server started with --read-policy says so in its statistics, and the policy did
 * what it says: eager never waits before a read, wait and adaptive do.
 */
static void check_read_policy(struct tc_server *s)
{
    const char *want = NULL;
    for (int i = 0; server_argv[i] && server_argv[i + 1]; i++)
        if (strcmp(server_argv[i], "--read-policy") == 0) want = server_argv[i + 1];
    if (!want) return;
    const char *v = tc_json_find(s->json, "read_policy");
    ASSERT_MSG(v && strncmp(v + 1, want, strlen(want)) == 0 && v[1 + strlen(want)] == '"',
               "read_policy is not \"%s\" in %s", want, s->json);
    uint64_t waited = tc_stat(s, "fiber_reads.waited_first");
    if (strcmp(want, "eager") == 0)
        ASSERT_EQ(waited, 0);
    else
        ASSERT_MSG(waited > 0, "--read-policy %s never waited before a read", want);
    tc_note("read policy %s: %llu waits before a read", want, (unsigned long long)waited);
}

/*
 * The statistics name the stack mode that ran: null for a model without one, else never
 * empty (worker processes' parent printed "" once), and the --stack given ("copy" is K = 1).
 */
static void check_stack(struct tc_server *s)
{
    const char *want = NULL, *v = tc_json_find(s->json, "stack");
    for (int i = 0; server_argv[i] && server_argv[i + 1]; i++)
        if (strcmp(server_argv[i], "--stack") == 0) want = server_argv[i + 1];
    ASSERT_MSG(v, "no stack in %s", s->json);
    if (strncmp(v, "null", 4) == 0 && !want) return;
    ASSERT_MSG(v[0] == '"' && v[1] != '"', "stack is empty in %s", s->json);
    if (!want) return;
    char norm[32];
    snprintf(norm, sizeof norm, "\"%s%s\"", want, strcmp(want, "copy") == 0 ? ":1" : "");
    ASSERT_MSG(strncmp(v, norm, strlen(norm)) == 0, "stack is not %s in %s", norm, s->json);
}

/* Payloads from 1 byte to 4 MiB, several connections at once, exact both ways. */
static void t_echo(void)
{
    struct tc_server s;
    start(&s);
    int base = tc_tree_fds(s.pid);
    static const struct {
        int conns;
        size_t size;
        int rounds;
    } sets[] = {{16, 1, 50}, {16, 100, 20}, {8, 65536, 4}, {4, 4 << 20, 1}};
    uint64_t total = 0, conns = 0;
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        load(&s, sets[i].conns, sets[i].size, sets[i].rounds, false);
        total += (uint64_t)sets[i].conns * sets[i].size * (uint64_t)sets[i].rounds;
        conns += (uint64_t)sets[i].conns;
    }
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "server still holds connections");
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "bytes"), total);
    ASSERT_EQ(tc_stat(&s, "connections"), conns);
    check_read_policy(&s);
    check_stack(&s);
}

/* Half-close: everything sent comes back, then the server closes. */
static void t_halfclose(void)
{
    struct tc_server s;
    start(&s);
    load(&s, 4, 1, 1, true);
    load(&s, 4, 1000, 1, true);
    load(&s, 4, 256 << 10, 1, true);
    load(&s, 2, 2 << 20, 1, true);
    /* A client that half-closes and only then starts reading must still get it all. */
    int fd = tc_connect(s.port);
    ASSERT_MSG(fd >= 0, "connect");
    uint64_t off = 0;
    ASSERT_EQ(tc_echo(fd, 5, &off, 100, 10000), TC_OK);
    ASSERT_MSG(send(fd, "late", 4, MSG_NOSIGNAL) == 4, "send");
    shutdown(fd, SHUT_WR);
    tc_sleep_ms(200);
    char buf[8] = {0};
    ASSERT_MSG(recv(fd, buf, sizeof buf, MSG_WAITALL) == 4 && memcmp(buf, "late", 4) == 0,
               "late bytes not echoed");
    ASSERT_EQ(tc_wait_closed(fd, 10000), TC_CLOSED);
    close(fd);
    tc_server_stop(&s, SIGTERM);
}

/* Clients that reset mid-stream end their own connection only; SIGPIPE never kills. */
static void t_reset(void)
{
    struct tc_server s;
    start(&s);
    int base = tc_tree_fds(s.pid);
    int keep = fresh(&s, 1, 1000);
    static char junk[1 << 20];
    for (int i = 0; i < 20; i++) {
        int fd = tc_connect(s.port);
        ASSERT_MSG(fd >= 0, "connect");
        /* Fill both directions, so the server is blocked writing when the RST lands. */
        size_t sent = 0;
        for (int k = 0; k < 50 && sent < sizeof junk; k++) {
            ssize_t n = send(fd, junk + sent, sizeof junk - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else
                tc_sleep_ms(1);
        }
        tc_reset_close(fd);
        fd = tc_connect(s.port);
        ASSERT_MSG(fd >= 0, "connect");
        ASSERT_MSG(send(fd, junk, 100, MSG_NOSIGNAL) == 100, "send");
        tc_reset_close(fd);
    }
    uint64_t off = 1000;
    ASSERT_EQ(tc_echo(keep, 1, &off, 5000, 10000), TC_OK);
    close(fresh(&s, 2, 100));
    close(keep);
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "fds of reset connections not released");
    tc_note("40 resets; the other connection and new ones still echo");
    tc_server_stop(&s, SIGTERM);
}

#define NOFILE 64 /* the server's fd limit in the EMFILE scenario */

/* Open connections until the server runs out of fds; the first failure is returned. */
static int fill_up(struct tc_server *s, int *ok, int *nok)
{
    for (int i = 0; i < NOFILE + 16; i++) {
        int fd = tc_connect(s->port);
        ASSERT_MSG(fd >= 0, "connect %d: %s", i, strerror(errno));
        uint64_t off = 0;
        int rc = tc_echo(fd, (uint32_t)i, &off, 32, 2000);
        if (rc != TC_OK) {
            tc_note("connection %d: %s: the server is out of fds", i, tc_rc_name(rc));
            return fd;
        }
        ok[(*nok)++] = fd;
    }
    return -1;
}

/* The accepting process holds at most `own` fds within timeout_ms (fork closes its copy of a
 * connection only once fork() has returned, which may be after the child already echoed). */
static bool wait_own_fds(pid_t pid, int own, int timeout_ms)
{
    for (long long end = tc_now_ms() + timeout_ms; tc_proc_fds(pid) > own; tc_sleep_ms(10))
        if (tc_now_ms() > end) return false;
    return true;
}

static void check_cpu_idle(struct tc_server *s, const char *what)
{
    long long t0 = tc_proc_cpu_ticks(s->pid);
    tc_sleep_ms(1000);
    long long used = tc_proc_cpu_ticks(s->pid) - t0;
    tc_note("%s: server CPU over 1 s: %lld ticks (limit %d)", what, used, MAX_IDLE_TICKS);
    ASSERT_MSG(used <= MAX_IDLE_TICKS, "the server spins (%s): %lld ticks in 1 s", what, used);
}

/* Out of fds: existing connections go on, no spinning, logged once, recovery afterwards. */
static void t_emfile(void)
{
    struct tc_server s;
    int ok[NOFILE + 16], nok = 0, extra[16], nextra = 0;
    start_with(&s, &(struct tc_limits){.nofile = NOFILE}, NULL, NULL);
    int base = tc_tree_fds(s.pid), own = tc_proc_fds(s.pid);
    int first = fill_up(&s, ok, &nok);
    if (first >= 0)
        extra[nextra++] = first;
    else /* only a server whose connections live in child processes may never run out */
        ASSERT_MSG(wait_own_fds(s.pid, own, 2000),
                   "%d connections, the server never ran out of fds, and holds %d fds itself "
                   "(%d at start)",
                   nok, tc_proc_fds(s.pid), own);
    for (int i = 0; i < 10; i++) {
        extra[nextra] = tc_connect(s.port);
        ASSERT_MSG(extra[nextra] >= 0, "connect");
        send(extra[nextra++], "waiting", 7, MSG_NOSIGNAL);
    }
    for (int i = 0; i < nok; i++) {
        uint64_t off = 32;
        int rc = tc_echo(ok[i], (uint32_t)i, &off, 100, 10000);
        ASSERT_MSG(rc == TC_OK, "connection %d of %d stopped echoing: %s", i, nok, tc_rc_name(rc));
    }
    tc_note("%d connections open before the limit still echo", nok);
    check_cpu_idle(&s, "out of fds");
    int shut = 0;
    for (int i = 0; i < nextra; i++) {
        shut += tc_wait_closed(extra[i], 0) != TC_TIMEOUT;
        close(extra[i]);
    }
    tc_note("%d of %d connections beyond the limit were closed at once", shut, nextra);
    for (int i = 0; i < nok; i++)
        close(ok[i]);
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "fds not released");
    for (int i = 0; i < 5; i++)
        close(fresh(&s, 100 + (uint32_t)i, 1000));
    tc_note("accepting again once fds were free");
    tc_server_stop(&s, SIGTERM);
    if (first >= 0) {
        ASSERT_MSG(tc_stat(&s, "fd_exhausted") >= 1, "EMFILE not counted");
        ASSERT_EQ(tc_server_log_count(&s, "out of file descriptors"), 1);
    } else {
        tc_note("every connection is held by a child process, one each; the accepting "
                "process never ran out");
    }
}

/* --max-conns 5: the sixth and later are closed at once and counted; room frees up again. */
static void t_maxconns(void)
{
    struct tc_server s;
    int fds[5];
    start_with(&s, NULL, "--max-conns", "5");
    for (int i = 0; i < 5; i++)
        fds[i] = fresh(&s, (uint32_t)i, 100);
    for (int i = 0; i < 3; i++) {
        int fd = tc_connect(s.port);
        ASSERT_MSG(fd >= 0, "connect");
        int rc = tc_wait_closed(fd, 5000);
        ASSERT_MSG(rc == TC_CLOSED || rc == TC_RESET, "over the limit but %s", tc_rc_name(rc));
        close(fd);
    }
    for (int i = 0; i < 5; i++) {
        uint64_t off = 100;
        ASSERT_EQ(tc_echo(fds[i], (uint32_t)i, &off, 100, 10000), TC_OK);
    }
    close(fds[0]);
    bool served = false;
    for (long long end = tc_now_ms() + 5000; !served && tc_now_ms() < end;) {
        int fd = tc_connect(s.port);
        uint64_t off = 0;
        served = fd >= 0 && tc_echo(fd, 9, &off, 100, 2000) == TC_OK;
        close(fd);
        if (!served) tc_sleep_ms(20);
    }
    ASSERT_MSG(served, "no room after a connection closed");
    for (int i = 1; i < 5; i++)
        close(fds[i]);
    tc_server_stop(&s, SIGTERM);
    ASSERT_MSG(tc_stat(&s, "refused") >= 3, "refusals not counted");
    ASSERT_EQ(tc_stat(&s, "max_concurrent"), 5);
}

/* 1000 connections come and go: fds, threads and children return to where they were. */
static void t_fdleak(void)
{
    struct tc_server s;
    start(&s);
    int base = tc_tree_fds(s.pid);
    for (int i = 0; i < 20; i++)
        close(fresh(&s, (uint32_t)i, 64));
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "warm-up connections not released");
    long threads0 = tc_proc_threads(s.pid), rss0 = tc_proc_rss_kb(s.pid);
    for (int batch = 0; batch < 20; batch++) {
        struct tc_load cfg = {50, 64, 2, false, 60000};
        char why[256];
        ASSERT_MSG(tc_echo_many(s.port, &cfg, why, sizeof why) == TC_OK, "batch %d: %s", batch,
                   why);
    }
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "fds %d, expected %d (or children left)",
               tc_tree_fds(s.pid), base);
    for (long long end = tc_now_ms() + 5000; tc_proc_threads(s.pid) > threads0;) {
        ASSERT_MSG(tc_now_ms() < end, "threads %ld, expected %ld", tc_proc_threads(s.pid),
                   threads0);
        tc_sleep_ms(10);
    }
    long rss1 = tc_proc_rss_kb(s.pid);
    tc_note("1000 connections: fds %d -> %d, threads %ld, RSS %ld -> %ld KiB", base,
            tc_tree_fds(s.pid), threads0, rss0, rss1);
#ifdef SWITCHYARD_ASAN
    tc_note("RSS growth not checked under ASan (its quarantine keeps freed memory); "
            "LeakSanitizer checks the heap when the server exits");
#else
    ASSERT_MSG(rss1 - rss0 < 8192, "RSS grew by %ld KiB over 1000 connections", rss1 - rss0);
#endif
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "connections"), 1020);
}

/* Idle connections and a slow trickler cost no CPU and do not hold up a new client. */
static void t_idle(void)
{
    struct tc_server s;
    int idle[100], worst = 0;
    start(&s);
    for (int i = 0; i < 100; i++)
        idle[i] = fresh(&s, (uint32_t)i, 1);
    int slow = fresh(&s, 999, 1);
    uint64_t off = 1;
    tc_sleep_ms(200); /* let the start-up of 100 sessions settle */
    long long t0 = tc_proc_cpu_ticks(s.pid);
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(tc_echo(slow, 999, &off, 1, 5000), TC_OK);
        if (i % 5 == 0) {
            long long begin = tc_now_ms();
            close(fresh(&s, 1000 + (uint32_t)i, 100));
            int took = (int)(tc_now_ms() - begin);
            worst = took > worst ? took : worst;
        }
        tc_sleep_ms(50);
    }
    long long used = tc_proc_cpu_ticks(s.pid) - t0;
    tc_note("100 idle + 1 slow client for ~1 s: %lld CPU ticks; new client served in <= %d ms",
            used, worst);
    ASSERT_MSG(used <= MAX_IDLE_TICKS, "%lld ticks with idle clients", used);
    ASSERT_MSG(worst < 2000, "a new client waited %d ms", worst);
    for (int i = 0; i < 100; i++)
        close(idle[i]);
    close(slow);
    tc_server_stop(&s, SIGTERM);
}

/* SIGTERM with connections open (one of them mid-transfer): JSON, exit 0, all closed. */
static void t_sigterm(void)
{
    struct tc_server s;
    int fds[4], z;
    pid_t kids[16];
    static char junk[1 << 20];
    start(&s);
    for (int i = 0; i < 3; i++)
        fds[i] = fresh(&s, (uint32_t)i, 10);
    fds[3] = tc_connect(s.port);
    ASSERT_MSG(fds[3] >= 0, "connect");
    for (int k = 0; k < 20; k++)
        if (send(fds[3], junk, sizeof junk, MSG_NOSIGNAL) < 0) tc_sleep_ms(5);
    int nkids = tc_proc_children(s.pid, kids, 16, &z);
    tc_server_stop(&s, SIGTERM);
    for (int i = 0; i < 4; i++) {
        int rc = tc_wait_closed(fds[i], 5000);
        ASSERT_MSG(rc == TC_CLOSED || rc == TC_RESET, "connection %d after SIGTERM: %s", i,
                   tc_rc_name(rc));
        close(fds[i]);
    }
    for (int i = 0; i < nkids && i < 16; i++)
        ASSERT_MSG(kill(kids[i], 0) < 0 && errno == ESRCH, "child %d outlived the server",
                   (int)kids[i]);
    /* A model that declares a process per connection had one child per connection. */
    const char *conc = tc_json_find(s.json, "concurrency");
    ASSERT_MSG(conc, "no concurrency in %s", s.json);
    if (strncmp(conc, "\"process-per-connection\"", 24) == 0)
        ASSERT_MSG(nkids == 4, "expected 4 children, saw %d", nkids);
    start(&s);
    close(fresh(&s, 1, 10));
    tc_server_stop(&s, SIGINT);
    tc_note("SIGTERM and SIGINT: statistics printed, exit 0, every connection closed");
}

/* fork: 300 short connections leave no zombie behind. */
static void t_zombies(void)
{
    struct tc_server s;
    start(&s);
    int base = tc_tree_fds(s.pid), z = 0;
    pid_t none[1];
    for (int i = 0; i < 300; i++)
        close(fresh(&s, (uint32_t)i, 64));
    if (!tc_wait_quiet(&s, base, 10000)) {
        int left = tc_proc_children(s.pid, none, 1, &z);
        ASSERT_MSG(false, "children left: %d (%d zombies)", left, z);
    }
    tc_note("300 connections, every child reaped");
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "connections"), 300);
}

/* Worker processes: one killed with SIGKILL is started again, and the server goes on. */
static void t_respawn(void)
{
    struct tc_server s;
    pid_t kids[256];
    int z;
    start(&s);
    int n = tc_proc_children(s.pid, kids, 256, &z);
    ASSERT_MSG(n >= 2, "expected worker processes, saw %d children", n);
    close(fresh(&s, 1, 100));
    ASSERT_MSG(kill(kids[0], SIGKILL) == 0, "kill worker: %s", strerror(errno));
    bool back = false;
    for (long long end = tc_now_ms() + 5000; !back && tc_now_ms() < end; tc_sleep_ms(10)) {
        pid_t now[256];
        int k = tc_proc_children(s.pid, now, 256, &z);
        back = k == n && z == 0;
        for (int i = 0; back && i < k && i < 256; i++)
            back = now[i] != kids[0];
    }
    ASSERT_MSG(back, "the killed worker %d was not replaced", (int)kids[0]);
    /* Connections the kernel gives the new worker's listener wait for it, never fail. */
    for (int i = 0; i < 40; i++)
        close(fresh(&s, 10 + (uint32_t)i, 100));
    tc_note("worker %d killed, replaced; 40 new connections echo", (int)kids[0]);
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "respawned"), 1);
    ASSERT_EQ(tc_server_log_count(&s, "ended early"), 1);
}

#define GROUPSTOP_RUNS 200   /* servers started and stopped by a group signal */
#define GROUPSTOP_MS   60000 /* ... or fewer when this much time has passed */
#define GROUPSTOP_MIN  50    /* runs that must fit in that time */

/*
 * Worker processes: SIGTERM or SIGINT to the whole process group, as Ctrl-C or timeout(1)
 * sends it, reaches the workers as well as the parent; a worker that is gone before the parent
 * knows the server is stopping must not be started again. Many short runs, each stopped at
 * another small delay after "listening", every one with no restart, no log line, exit 0.
 */
static void t_groupstop(void)
{
    static const int delay_us[] = {0, 50, 200, 500, 1000, 3000};
    const struct tc_limits lim = {.own_group = true};
    long long end = tc_now_ms() + GROUPSTOP_MS;
    int runs = 0;
    for (; runs < GROUPSTOP_RUNS && tc_now_ms() < end; runs++) {
        struct tc_server s;
        start_with(&s, &lim, NULL, NULL);
        int us = delay_us[runs % (int)(sizeof delay_us / sizeof delay_us[0])];
        if (us) nanosleep(&(struct timespec){0, us * 1000L}, NULL);
        tc_server_stop_group(&s, runs % 2 ? SIGINT : SIGTERM);
        ASSERT_MSG(tc_stat(&s, "respawned") == 0, "run %d (%d us, %s): respawned %llu", runs, us,
                   runs % 2 ? "SIGINT" : "SIGTERM", (unsigned long long)tc_stat(&s, "respawned"));
        ASSERT_MSG(tc_server_log_count(&s, "ended early") == 0, "run %d: '%s'", runs, s.log);
    }
    ASSERT_MSG(runs >= GROUPSTOP_MIN, "only %d runs in %d ms", runs, GROUPSTOP_MS);
    tc_note("%d runs stopped by SIGTERM or SIGINT to the process group: no worker restarted", runs);
}

static void slurp(int fd, char *buf, size_t cap)
{
    ssize_t n = read(fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
}

/*
 * Run the binary with args and return its wait status, with its stdout and stderr. Both are
 * short (a pipe holds 64 KiB), so they are read after it exits; one that does not exit
 * within 10 s (it took the flags and started serving) is killed and reported.
 */
static int run_cli(char *const args[], char *out, char *err, size_t cap)
{
    int po[2], pe[2], status = 0;
    ASSERT_MSG(pipe2(po, O_CLOEXEC) == 0 && pipe2(pe, O_CLOEXEC) == 0, "pipe");
    pid_t pid = fork();
    ASSERT_MSG(pid >= 0, "fork");
    if (pid == 0) {
        dup2(po[1], STDOUT_FILENO);
        dup2(pe[1], STDERR_FILENO);
        execv(args[0], args);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    long long deadline = tc_now_ms() + 10000;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (tc_now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            ASSERT_MSG(false, "'%s ...' did not exit (it accepted the flags?)", args[1]);
        }
        tc_sleep_ms(5);
    }
    slurp(po[0], out, cap);
    slurp(pe[0], err, cap);
    return status;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/*
 * thread: a thread that cannot be created (1 GiB stacks under a 512 MiB address-space
 * limit) costs only its connection, closed at once and counted; the server goes on.
 */
static void t_spawnfail(void)
{
    struct tc_server s;
    const struct tc_limits lim = {.as_bytes = 512L << 20};
    start_with(&s, &lim, "--stack-size", "1073741824");
    for (int i = 0; i < 5; i++) {
        int fd = tc_connect(s.port);
        ASSERT_MSG(fd >= 0, "connect");
        ASSERT_MSG(send(fd, "x", 1, MSG_NOSIGNAL) == 1, "send");
        int rc = tc_wait_closed(fd, 5000);
        ASSERT_MSG(rc == TC_CLOSED || rc == TC_RESET, "no thread, yet %s", tc_rc_name(rc));
        close(fd);
    }
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "spawn_failed"), 5);
    ASSERT_EQ(tc_server_log_count(&s, "cannot start a thread"), 1);
    tc_note("5 connections without a thread: each closed at once, counted, logged once");
}

/* A quick pass for configuration matrices (fiber: switch x scheduler x engine). */
static void t_smoke(void)
{
    struct tc_server s;
    start(&s);
    int base = tc_tree_fds(s.pid);
    load(&s, 8, 1, 10, false);
    load(&s, 4, 65536, 2, false);
    load(&s, 2, 1 << 20, 1, false);
    load(&s, 2, 1000, 1, true);
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "server still holds connections");
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "bytes"), 8 * 10 + 4 * 65536 * 2 + 2 * (1 << 20) + 2 * 1000);
}

/* Every bad flag or value: exit 2, one line on stderr naming the valid choices, no stdout. */
static void t_badflags(void)
{
    static const char *const cases[][6] = {
        {NULL},
        {"--model", "nope"},
        {"--model"},
        {"--model", "thread", "--port", "70000"},
        {"--model", "thread", "--port", "12ab"},
        {"--model", "epoll", "--threads", "0"},
        {"--model", "epoll", "--threads", "65"},
        {"--model", "thread", "--threads", "2"},
        {"--model", "fork", "--threads", "2"},
        {"--model", "thread", "--switch", "asm"},
        {"--model", "epoll", "--engine", "merged"},
        {"--model", "thread", "--io", "hooked"},
        {"--model", "fiber", "--io", "sideways"},
        {"--model", "libevent", "--sched", "ring"},
        {"--model", "epoll", "--sched", "diagonal"},
        {"--model", "fiber", "--read-policy", "lazy"},
        {"--model", "fiber", "--read-policy"},
        {"--model", "thread", "--read-policy", "eager"},
        {"--model", "thread", "--stack-size", "1000"},
        {"--model", "fork", "--stack-size", "65536"},
        {"--model", "thread", "--bogus"},
        {"--model", "thread", "-x"},
        {"--model", "thread", "--bind", "localhost"},
        {"--model", "thread", "stray"},
        {"--model", "thread", "--max-conns", "-1"},
        {"--model", "thread", "--procs", "2"},
        {"--model", "fiber", "--procs", "0"},
        {"--model", "fiber", "--threads", "8", "--procs", "9"},
        {"--model", "epoll", "--procs", "2"},
        {"--model", "thread", "--stack", "copy"},
        {"--model", "fiber", "--stack", "copy:0"},
        {"--model", "fiber", "--stack", "stacky"},
        {"--model", "fiber", "--switch", "setjmp", "--stack", "copy"},
        {"--model", "epoll", "--trigger", "sideways"},
        {"--model", "epoll", "--trigger"},
        {"--model", "fiber", "--trigger", "level"},
        {"--model", "epoll", "--touch-lines", "65"},
        {"--model", "epoll", "--touch-lines", "-1"},
        {"--model", "epoll", "--touch-lines", "8x"},
        {"--model", "fiber", "--touch-lines", "0"},
    };
    char out[4096], err[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *args[8] = {server_argv[0]};
        for (int k = 0; k < 6 && cases[i][k]; k++)
            args[k + 1] = (char *)cases[i][k];
        int st = run_cli(args, out, err, sizeof out);
        ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2, "case %zu: status %#x, stderr '%s'", i,
                   st, err);
        ASSERT_MSG(out[0] == '\0', "case %zu wrote to stdout: '%s'", i, out);
        ASSERT_MSG(count_lines(err) == 1, "case %zu: want one line, got '%s'", i, err);
        err[strcspn(err, "\n")] = '\0';
        tc_note("exit 2: %s", err);
    }
    char *help[] = {server_argv[0], "--help", NULL};
    int st = run_cli(help, out, err, sizeof out);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "usage:"), "--help: %#x", st);
}

/* Does the model under test declare the boolean property key in `--list --json`? */
static bool model_declares(const char *model, const char *key)
{
    static char out[65536], err[4096];
    char *args[] = {server_argv[0], "--list", "--json", NULL};
    int st = run_cli(args, out, err, sizeof out);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && tc_json_valid(out), "--list --json: %#x",
               st);
    for (int i = 0;; i++) {
        char path[64];
        snprintf(path, sizeof path, "members.%d.name", i);
        const char *name = tc_json_find(out, path);
        ASSERT_MSG(name, "model %s is not listed", model);
        if (strncmp(name + 1, model, strlen(model)) != 0 || name[1 + strlen(model)] != '"')
            continue;
        snprintf(path, sizeof path, "members.%d.props.%s", i, key);
        const char *v = tc_json_find(out, path);
        ASSERT_MSG(v, "model %s does not declare %s", model, key);
        return strncmp(v, "true", 4) == 0;
    }
}

#define SLOW_READERS 20 /* more than the thread pool's 16 workers by default */

/* A client that sends and never reads: a small receive buffer, filled with as much as the
 * server takes (until nothing moves for 200 ms, at most 2 s). */
static int slow_reader(struct tc_server *s)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), small = 4096;
    ASSERT_MSG(fd >= 0, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_MSG(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS,
               "connect: %s", strerror(errno));
    static char junk[1 << 16];
    long long end = tc_now_ms() + 2000, idle_since = tc_now_ms();
    while (tc_now_ms() < end && tc_now_ms() - idle_since < 200) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 50) == 1 && send(fd, junk, sizeof junk, MSG_NOSIGNAL) > 0)
            idle_since = tc_now_ms();
    }
    return fd;
}

/*
 * Clients that send a lot and never read must not starve the others: a model that waits in a
 * write for such a client keeps a thread or process per connection for it (thread, fork, a
 * fiber), never one of a fixed set. A model that declares conn_holds_worker (a connection
 * keeps one of a fixed number of workers while it is open) shows that weakness instead once
 * the slow readers hold every worker: a normal client then waits until one of them goes.
 */
static void t_slowreader(void)
{
    struct tc_server s;
    int fds[SLOW_READERS];
    start(&s);
    bool held = model_declares(s.model, "conn_holds_worker");
    for (int i = 0; i < SLOW_READERS; i++)
        fds[i] = slow_reader(&s);
    tc_note("%d clients sent until the server stopped taking their bytes", SLOW_READERS);
    if (held && s.kids0 <= SLOW_READERS) {
        int fd = tc_connect(s.port);
        uint64_t off = 0;
        ASSERT_MSG(fd >= 0, "connect");
        ASSERT_EQ(tc_echo(fd, 1, &off, 100, 1000), TC_TIMEOUT);
        tc_note("declared conn_holds_worker: %d workers, all held; a normal client waits", s.kids0);
        for (int i = 0; i < SLOW_READERS; i++) { /* those in the backlog would hold it too */
            tc_reset_close(fds[i]);
            fds[i] = -1;
        }
        ASSERT_EQ(tc_echo(fd, 1, &off, 100, 10000), TC_OK);
        tc_note("the slow readers gone: the waiting client is served");
        close(fd);
    } else {
        struct tc_load cfg = {10, 100, 20, false, 10000};
        char why[256];
        ASSERT_MSG(tc_echo_many(s.port, &cfg, why, sizeof why) == TC_OK,
                   "normal clients beside %d slow readers: %s", SLOW_READERS, why);
        tc_note("10 normal clients x 20 messages served beside them");
        close(fresh(&s, 7, 65536));
        check_cpu_idle(&s, "slow readers");
    }
    /* Half go away with a reset; the others are still there when the server stops. */
    for (int i = 0; i < SLOW_READERS / 2; i++)
        if (fds[i] >= 0) tc_reset_close(fds[i]);
    close(fresh(&s, 8, 100));
    tc_server_stop(&s, SIGTERM);
    for (int i = SLOW_READERS / 2; i < SLOW_READERS && fds[i] >= 0; i++) {
        int rc = tc_wait_closed(fds[i], 5000);
        ASSERT_MSG(rc == TC_CLOSED || rc == TC_RESET, "slow reader %d: %s", i, tc_rc_name(rc));
        close(fds[i]);
    }
}

/*
 * Out of memory for a new connection (the address space capped at what the server maps once
 * listening): each such connection is closed at once and counted, the first is logged and
 * the rest are not; once the cap is lifted new connections are served again.
 */
static void t_nomem(void)
{
    struct tc_server s;
    start(&s);
    close(fresh(&s, 1, 100));
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)s.pid);
    long vm_kb = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        sscanf(line, "VmSize: %ld kB", &vm_kb);
    if (f) fclose(f);
    ASSERT_MSG(vm_kb > 0, "no VmSize in %s", path);
    struct rlimit cap = {(rlim_t)vm_kb * 1024, RLIM_INFINITY},
                  open_cap = {RLIM_INFINITY, RLIM_INFINITY};
    ASSERT_MSG(prlimit(s.pid, RLIMIT_AS, &cap, NULL) == 0, "prlimit: %s", strerror(errno));
    int fds[2000], n = 0, failed = 0;
    for (; n < 2000 && failed < 20; n++) {
        fds[n] = tc_connect(s.port);
        ASSERT_MSG(fds[n] >= 0, "connect %d", n);
        uint64_t off = 0;
        failed += tc_echo(fds[n], (uint32_t)n, &off, 16, 2000) != TC_OK;
    }
    ASSERT_MSG(prlimit(s.pid, RLIMIT_AS, &open_cap, NULL) == 0, "prlimit: %s", strerror(errno));
    tc_note("address space capped at %ld KiB: %d of %d connections not served", vm_kb, failed, n);
    ASSERT_MSG(failed > 0, "%d connections served under the cap: nothing ran out", n);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    close(fresh(&s, 2, 100));
    tc_note("cap lifted: new connections served again");
    tc_server_stop(&s, SIGTERM);
    ASSERT_MSG(tc_stat(&s, "spawn_failed") >= (uint64_t)failed, "spawn_failed %llu < %d",
               (unsigned long long)tc_stat(&s, "spawn_failed"), failed);
    ASSERT_EQ(tc_server_log_count(&s, "connection closed"), 1);
}

/* --bind 0.0.0.0 serves, and says once (not per worker) that it listens on every interface. */
static void t_bindany(void)
{
    struct tc_server s;
    start_with(&s, NULL, "--bind", "0.0.0.0");
    close(fresh(&s, 1, 100));
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_server_log_count(&s, "every interface"), 1);
}

/*
 * echo-load (the binary under test here): every floating option takes decimal numbers only,
 * as the integer options do; hex, inf, nan, blanks and stray characters get one line, exit 2.
 */
static void t_loadfloats(void)
{
    static const char *const opts[] = {
        "--duration", "--rate",       "--warmup",       "--timeout",     "--connect-timeout",
        "--max-time", "--max-failed", "--ramp-timeout", "--chunk-delay", "--think"};
    static const char *const values[] = {"0x10", "0X1p3", " 1", "inf", "nan", "1_0", "0x0", "1,5"};
    char out[4096], err[4096];
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
            char *args[] = {server_argv[0],  "--port",          "1", "--conns", "1", "--size", "1",
                            (char *)opts[i], (char *)values[k], NULL};
            int st = run_cli(args, out, err, sizeof out);
            ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s '%s': status %#x, stderr '%s'",
                       opts[i], values[k], st, err);
            ASSERT_MSG(count_lines(err) == 1 && strstr(err, opts[i]),
                       "%s '%s': want one line naming it, got '%s'", opts[i], values[k], err);
        }
    }
    err[strcspn(err, "\n")] = '\0';
    tc_note("%zu options x %zu values: exit 2, one line (last: %s)", sizeof opts / sizeof opts[0],
            sizeof values / sizeof values[0], err);
}

/* A second server on a port the first already serves must refuse it, as one listener's bind
 * does, whether it listens once or in a SO_REUSEPORT group; the first keeps every client. */
static void t_porttaken(void)
{
    struct tc_server s;
    start(&s);
    char port[16], out[4096], err[4096];
    snprintf(port, sizeof port, "%d", s.port);
    char *args[64];
    int n = 0;
    for (; server_argv[n] && n < 60; n++)
        args[n] = server_argv[n];
    args[n++] = "--port";
    args[n++] = port;
    args[n] = NULL;
    int st = run_cli(args, out, err, sizeof out);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "second server: status %#x, stdout '%s'", st,
               out);
    ASSERT_MSG(count_lines(err) == 1 && strstr(err, "Address already in use"),
               "one line naming the cause, got '%s'", err);
    ASSERT_MSG(!strstr(out, "listening"), "the second server said it listens: '%s'", out);
    err[strcspn(err, "\n")] = '\0';
    tc_note("second server: exit 1: %s", err);
    load(&s, 1, 4096, 3, false); /* one connection: a pool of two processes serves two at once */
    tc_server_stop(&s, SIGTERM);
}

static const struct {
    const char *name;
    void (*fn)(void);
} scenarios[] = {
    {"echo", t_echo},
    {"halfclose", t_halfclose},
    {"reset", t_reset},
    {"emfile", t_emfile},
    {"maxconns", t_maxconns},
    {"fdleak", t_fdleak},
    {"idle", t_idle},
    {"sigterm", t_sigterm},
    {"zombies", t_zombies},
    {"respawn", t_respawn},
    {"spawnfail", t_spawnfail},
    {"smoke", t_smoke},
    {"badflags", t_badflags},
    {"porttaken", t_porttaken},
    {"groupstop", t_groupstop},
    {"slow-reader", t_slowreader},
    {"nomem", t_nomem},
    {"bindany", t_bindany},
    {"loadfloats", t_loadfloats},
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: srv-test SCENARIO ECHO-SERVER [FLAGS...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    server_argv = argv + 2;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].fn();
            printf("PASS %s\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "srv-test: unknown scenario '%s'\n", argv[1]);
    return 2;
}
