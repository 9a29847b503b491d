/* srv_test_process.c - srv-test scenarios: the server as a process (signals, zombies,
 * worker processes, its command line, its port, its bind address). */
#include "srv_test.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* SIGTERM with connections open (one of them mid-transfer): JSON, exit 0, all closed. */
void t_sigterm(void)
{
    struct tc_server s;
    int fds[4], z;
    pid_t kids[16];
    static char junk[1 << 20];
    st_start(&s);
    for (int i = 0; i < 3; i++)
        fds[i] = st_fresh(&s, (uint32_t)i, 10);
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
    st_start(&s);
    close(st_fresh(&s, 1, 10));
    tc_server_stop(&s, SIGINT);
    tc_note("SIGTERM and SIGINT: statistics printed, exit 0, every connection closed");
}

/* fork: 300 short connections leave no zombie behind. */
void t_zombies(void)
{
    struct tc_server s;
    st_start(&s);
    int base = tc_tree_fds(s.pid), z = 0;
    pid_t none[1];
    for (int i = 0; i < 300; i++)
        close(st_fresh(&s, (uint32_t)i, 64));
    if (!tc_wait_quiet(&s, base, 10000)) {
        int left = tc_proc_children(s.pid, none, 1, &z);
        ASSERT_MSG(false, "children left: %d (%d zombies)", left, z);
    }
    tc_note("300 connections, every child reaped");
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "connections"), 300);
}

/* Worker processes: one killed with SIGKILL is started again, and the server goes on. */
void t_respawn(void)
{
    struct tc_server s;
    pid_t kids[256];
    int z;
    st_start(&s);
    int n = tc_proc_children(s.pid, kids, 256, &z);
    ASSERT_MSG(n >= 2, "expected worker processes, saw %d children", n);
    close(st_fresh(&s, 1, 100));
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
        close(st_fresh(&s, 10 + (uint32_t)i, 100));
    tc_note("worker %d killed, replaced; 40 new connections echo", (int)kids[0]);
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "respawned"), 1);
    ASSERT_EQ(tc_server_log_count(&s, "ended early"), 1);
}

/* Servers started and stopped by a group signal: 200 in the release build, 50 under the
 * sanitizers, where each start and stop costs about 150 ms (3 processes, each instrumented). */
#ifdef SWITCHYARD_ASAN
#define GROUPSTOP_RUNS 50
#else
#define GROUPSTOP_RUNS 200
#endif
#define GROUPSTOP_MS  60000 /* ... or fewer when this much time has passed */
#define GROUPSTOP_MIN 50    /* runs that must fit in that time */

/*
 * Worker processes: SIGTERM or SIGINT to the whole process group, as Ctrl-C or timeout(1)
 * sends it, reaches the workers as well as the parent; a worker that is gone before the parent
 * knows the server is stopping must not be started again. Many short runs, each stopped at
 * another small delay after "listening", every one with no restart, no log line, exit 0.
 */
void t_groupstop(void)
{
    static const int delay_us[] = {0, 50, 200, 500, 1000, 3000};
    const struct tc_limits lim = {.own_group = true};
    long long end = tc_now_ms() + GROUPSTOP_MS;
    int runs = 0;
    for (; runs < GROUPSTOP_RUNS && tc_now_ms() < end; runs++) {
        struct tc_server s;
        st_start_with(&s, &lim, NULL, NULL);
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

/*
 * thread: a thread that cannot be created (1 GiB stacks under a 512 MiB address-space
 * limit) costs only its connection, closed at once and counted; the server goes on.
 */
void t_spawnfail(void)
{
    struct tc_server s;
    const struct tc_limits lim = {.as_bytes = 512L << 20};
    st_start_with(&s, &lim, "--stack-size", "1073741824");
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
void t_smoke(void)
{
    struct tc_server s;
    st_start(&s);
    int base = tc_tree_fds(s.pid);
    st_load(&s, 8, 1, 10, false);
    st_load(&s, 4, 65536, 2, false);
    st_load(&s, 2, 1 << 20, 1, false);
    st_load(&s, 2, 1000, 1, true);
    ASSERT_MSG(tc_wait_quiet(&s, base, 10000), "server still holds connections");
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_stat(&s, "bytes"), 8 * 10 + 4 * 65536 * 2 + 2 * (1 << 20) + 2 * 1000);
}

/*
 * Every option given twice, and every option whose value is the next option: exit 2, one
 * line naming the option (getopt alone keeps the last of a repeated option, and takes
 * "--model --port 0" as the model "--port" and an argument "0").
 */
static void badflags_each_option(void)
{
    static const char *const opts[][2] = {
        {"--model", "fiber"},      {"--switch", "asm"},       {"--sched", "ring"},
        {"--engine", "merged"},    {"--read-policy", "wait"}, {"--io", "direct"},
        {"--bind", "127.0.0.1"},   {"--port", "0"},           {"--threads", "1"},
        {"--procs", "1"},          {"--max-conns", "10"},     {"--stack-size", "65536"},
        {"--stack", "guarded"},    {"--trigger", "edge"},     {"--touch-lines", "1"},
        {"--read-timeout", "100"}, {"--idle-timeout", "100"}, {"--timers", "heap"},
        {"--poll-tick", "1"}};
    char out[4096], err[4096];
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        char *o = (char *)opts[i][0], *v = (char *)opts[i][1];
        char *twice[] = {st_server_argv[0], "--model", "fiber", o, v, o, v, NULL};
        char *swallowed[] = {st_server_argv[0], "--model", "fiber", o, "--port", "0", NULL};
        char *const *runs[] = {twice, i ? swallowed : swallowed + 2};
        static const char *const why[] = {"given twice", "needs a value"};
        if (!i) swallowed[2] = st_server_argv[0]; /* echo-server --model --port 0 */
        for (int k = 0; k < 2; k++) {
            int st = st_run_cli(runs[k], out, err, sizeof out);
            ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s (%s): status %#x, '%s'", o,
                       why[k], st, err);
            ASSERT_MSG(st_count_lines(err) == 1 && strstr(err, why[k]) && strstr(err, o),
                       "%s: want one line '%s', got '%s'", o, why[k], err);
            ASSERT_MSG(out[0] == '\0', "%s (%s) wrote to stdout: '%s'", o, why[k], out);
        }
    }
    err[strcspn(err, "\n")] = '\0';
    tc_note("%zu options, each twice and each followed by another option: exit 2 (last: %s)",
            sizeof opts / sizeof opts[0], err);
}

/* Every bad flag or value: exit 2, one line on stderr naming the valid choices, no stdout. */
void t_badflags(void)
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
        {"--model", "thread", "--read-timeout", " 5"},
        {"--model", "thread", "--read-timeout", "+5"},
        {"--model", "thread", "--read-timeout", "5 "},
        {"--model", "thread", "--max-conns", "-0"},
        {"--model", "thread", "--port", "0x10"},
    };
    char out[4096], err[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *args[8] = {st_server_argv[0]};
        for (int k = 0; k < 6 && cases[i][k]; k++)
            args[k + 1] = (char *)cases[i][k];
        int st = st_run_cli(args, out, err, sizeof out);
        ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2, "case %zu: status %#x, stderr '%s'", i,
                   st, err);
        ASSERT_MSG(out[0] == '\0', "case %zu wrote to stdout: '%s'", i, out);
        ASSERT_MSG(st_count_lines(err) == 1, "case %zu: want one line, got '%s'", i, err);
        err[strcspn(err, "\n")] = '\0';
        tc_note("exit 2: %s", err);
    }
    badflags_each_option();
    char *help[] = {st_server_argv[0], "--help", NULL};
    int st = st_run_cli(help, out, err, sizeof out);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "usage:"), "--help: %#x", st);
}

/* --bind 0.0.0.0 serves, and says once (not per worker) that it listens on every interface. */
void t_bindany(void)
{
    struct tc_server s;
    st_start_with(&s, NULL, "--bind", "0.0.0.0");
    close(st_fresh(&s, 1, 100));
    tc_server_stop(&s, SIGTERM);
    ASSERT_EQ(tc_server_log_count(&s, "every interface"), 1);
}

/*
 * echo-load (the binary under test here): every floating option takes decimal numbers only,
 * as the integer options do; hex, inf, nan, blanks and stray characters get one line, exit 2.
 */
void t_loadfloats(void)
{
    static const char *const opts[] = {
        "--duration", "--rate",       "--warmup",       "--timeout",     "--connect-timeout",
        "--max-time", "--max-failed", "--ramp-timeout", "--chunk-delay", "--think"};
    static const char *const values[] = {"0x10", "0X1p3", " 1", "inf", "nan", "1_0", "0x0", "1,5"};
    char out[4096], err[4096];
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
            char *args[] = {
                st_server_argv[0], "--port",          "1", "--conns", "1", "--size", "1",
                (char *)opts[i],   (char *)values[k], NULL};
            int st = st_run_cli(args, out, err, sizeof out);
            ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s '%s': status %#x, stderr '%s'",
                       opts[i], values[k], st, err);
            ASSERT_MSG(st_count_lines(err) == 1 && strstr(err, opts[i]),
                       "%s '%s': want one line naming it, got '%s'", opts[i], values[k], err);
        }
    }
    err[strcspn(err, "\n")] = '\0';
    tc_note("%zu options x %zu values: exit 2, one line (last: %s)", sizeof opts / sizeof opts[0],
            sizeof values / sizeof values[0], err);
}

/* A second server on a port the first already serves must refuse it, as one listener's bind
 * does, whether it listens once or in a SO_REUSEPORT group; the first keeps every client. */
void t_porttaken(void)
{
    struct tc_server s;
    st_start(&s);
    char port[16], out[4096], err[4096];
    snprintf(port, sizeof port, "%d", s.port);
    char *args[64];
    int n = 0;
    for (; st_server_argv[n] && n < 60; n++)
        args[n] = st_server_argv[n];
    args[n++] = "--port";
    args[n++] = port;
    args[n] = NULL;
    int st = st_run_cli(args, out, err, sizeof out);
    ASSERT_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "second server: status %#x, stdout '%s'", st,
               out);
    ASSERT_MSG(st_count_lines(err) == 1 && strstr(err, "Address already in use"),
               "one line naming the cause, got '%s'", err);
    ASSERT_MSG(!strstr(out, "listening"), "the second server said it listens: '%s'", out);
    err[strcspn(err, "\n")] = '\0';
    tc_note("second server: exit 1: %s", err);
    st_load(&s, 1, 4096, 3, false); /* one connection: a pool of two processes serves two at once */
    tc_server_stop(&s, SIGTERM);
}

/* A free loopback port (bound, read, closed: nothing else here takes ports meanwhile). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    ASSERT_MSG(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
                   getsockname(fd, (struct sockaddr *)&a, &len) == 0,
               "free port: %s", strerror(errno));
    close(fd);
    return ntohs(a.sin_port);
}

/*
 * The statistics line is the run's result: written to a full device (stdout on /dev/full) it
 * is lost, so the server says so in one line on stderr and exits 1, not 0.
 */
void t_statsfull(void)
{
    char port[16], err[4096];
    snprintf(port, sizeof port, "%d", free_port());
    char *args[64];
    int n = 0, pe[2], status = 0;
    for (; st_server_argv[n] && n < 60; n++)
        args[n] = st_server_argv[n];
    args[n++] = "--port";
    args[n++] = port;
    args[n] = NULL;
    ASSERT_MSG(pipe2(pe, O_CLOEXEC) == 0, "pipe");
    pid_t pid = fork();
    ASSERT_MSG(pid >= 0, "fork");
    if (pid == 0) {
        int full = open("/dev/full", O_WRONLY);
        if (full < 0 || dup2(full, STDOUT_FILENO) < 0) _exit(126);
        dup2(pe[1], STDERR_FILENO);
        execv(args[0], args);
        _exit(127);
    }
    close(pe[1]);
    int fd = -1;
    for (long long end = tc_now_ms() + 10000; fd < 0 && tc_now_ms() < end; tc_sleep_ms(10))
        fd = tc_connect(atoi(port));
    ASSERT_MSG(fd >= 0, "the server never listened on port %s", port);
    close(fd);
    kill(pid, SIGTERM);
    long long deadline = tc_now_ms() + 10000;
    while (waitpid(pid, &status, WNOHANG) == 0 && tc_now_ms() < deadline)
        tc_sleep_ms(5);
    ASSERT_MSG(tc_now_ms() < deadline, "no exit within 10 s of SIGTERM");
    st_slurp(pe[0], err, sizeof err);
    ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x, stderr '%s'", status,
               err);
    ASSERT_MSG(st_count_lines(err) == 1 && strstr(err, "statistics"),
               "want one line about the statistics, got '%s'", err);
    err[strcspn(err, "\n")] = '\0';
    tc_note("stdout on /dev/full: exit 1: %s", err);
}
