/* srv_test.c - behaviour tests for every echo-server model: srv-test SCENARIO SERVER FLAGS...
 * The command line and the helpers every scenario uses; the scenarios are in
 * srv_test_clients.c (what clients do to a server) and srv_test_process.c (the server as a
 * process: signals, workers, its command line). */
#include "srv_test.h"

#include <errno.h>
#include <fcntl.h>
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

char **st_server_argv;

/* Start the server of this test run, with up to two extra flags (NULL: none). */
void st_start_with(struct tc_server *s, const struct tc_limits *lim, const char *flag,
                   const char *value)
{
    char *argv[64];
    int n = 0;
    for (; st_server_argv[n] && n < 60; n++)
        argv[n] = st_server_argv[n];
    if (flag) {
        argv[n++] = (char *)flag;
        argv[n++] = (char *)value;
    }
    argv[n] = NULL;
    tc_server_start(s, argv, lim);
}

void st_start(struct tc_server *s)
{
    st_start_with(s, NULL, NULL, NULL);
}

void st_load(struct tc_server *s, int conns, size_t size, int rounds, bool halfclose)
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
int st_fresh(struct tc_server *s, uint32_t seed, size_t size)
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
void st_check_read_policy(struct tc_server *s)
{
    const char *want = NULL;
    for (int i = 0; st_server_argv[i] && st_server_argv[i + 1]; i++)
        if (strcmp(st_server_argv[i], "--read-policy") == 0) want = st_server_argv[i + 1];
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
void st_check_stack(struct tc_server *s)
{
    const char *want = NULL, *v = tc_json_find(s->json, "stack");
    for (int i = 0; st_server_argv[i] && st_server_argv[i + 1]; i++)
        if (strcmp(st_server_argv[i], "--stack") == 0) want = st_server_argv[i + 1];
    ASSERT_MSG(v, "no stack in %s", s->json);
    if (strncmp(v, "null", 4) == 0 && !want) return;
    ASSERT_MSG(v[0] == '"' && v[1] != '"', "stack is empty in %s", s->json);
    if (!want) return;
    char norm[32];
    snprintf(norm, sizeof norm, "\"%s%s\"", want, strcmp(want, "copy") == 0 ? ":1" : "");
    ASSERT_MSG(strncmp(v, norm, strlen(norm)) == 0, "stack is not %s in %s", norm, s->json);
}

/* Open connections until the server runs out of fds; the first failure is returned. */
int st_fill_up(struct tc_server *s, int *ok, int *nok)
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
bool st_wait_own_fds(pid_t pid, int own, int timeout_ms)
{
    for (long long end = tc_now_ms() + timeout_ms; tc_proc_fds(pid) > own; tc_sleep_ms(10))
        if (tc_now_ms() > end) return false;
    return true;
}

void st_check_cpu_idle(struct tc_server *s, const char *what)
{
    long long t0 = tc_proc_cpu_ticks(s->pid);
    tc_sleep_ms(1000);
    long long used = tc_proc_cpu_ticks(s->pid) - t0;
    tc_note("%s: server CPU over 1 s: %lld ticks (limit %d)", what, used, MAX_IDLE_TICKS);
    ASSERT_MSG(used <= MAX_IDLE_TICKS, "the server spins (%s): %lld ticks in 1 s", what, used);
}

void st_slurp(int fd, char *buf, size_t cap)
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
int st_run_cli(char *const args[], char *out, char *err, size_t cap)
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
    st_slurp(po[0], out, cap);
    st_slurp(pe[0], err, cap);
    return status;
}

int st_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Does the model under test declare the boolean property key in `--list --json`? */
const char *st_model_prop(const char *model, const char *key)
{
    static char out[65536], err[4096];
    char *args[] = {st_server_argv[0], "--list", "--json", NULL};
    int st = st_run_cli(args, out, err, sizeof out);
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
        return v;
    }
}

bool st_model_declares(const char *model, const char *key)
{
    return strncmp(st_model_prop(model, key), "true", 4) == 0;
}

/* Clients that send and never read: small receive buffers, each filled with as much as the
 * server takes. They fill side by side, until none has moved a byte for 200 ms (at most
 * 2 s in all): one at a time, 20 of them took 4 s per model. */
void st_slow_readers(struct tc_server *s, int *fds, int n)
{
    enum { MAX = 64 };
    ASSERT_MSG(n > 0 && n <= MAX, "st_slow_readers: %d clients (1 to %d)", n, MAX);
    struct pollfd p[MAX];
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), small = 4096;
        ASSERT_MSG(fd >= 0, "socket: %s", strerror(errno));
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_MSG(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS,
                   "connect: %s", strerror(errno));
        fds[i] = fd;
        p[i] = (struct pollfd){fd, POLLOUT, 0};
    }
    static char junk[1 << 16];
    long long end = tc_now_ms() + 2000, idle_since = tc_now_ms();
    while (tc_now_ms() < end && tc_now_ms() - idle_since < 200) {
        if (poll(p, (nfds_t)n, 50) <= 0) continue;
        for (int i = 0; i < n; i++)
            if ((p[i].revents & POLLOUT) && send(p[i].fd, junk, sizeof junk, MSG_NOSIGNAL) > 0)
                idle_since = tc_now_ms();
    }
}

int st_slow_reader(struct tc_server *s)
{
    int fd;
    st_slow_readers(s, &fd, 1);
    return fd;
}

#define SRV_TEST__ENTRY(name, ...) {#name, t_##name, #__VA_ARGS__},
static const test_case scenarios[] = {SRV_TEST_CASES(SRV_TEST__ENTRY)};
#undef SRV_TEST__ENTRY

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        TEST_CASE_LIST(scenarios);
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: srv-test SCENARIO ECHO-SERVER [FLAGS...] | srv-test --list\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    st_server_argv = argv + 2;
    char name[64];
    snprintf(name, sizeof name, "%s", argv[1]);
    for (char *p = name; *p; p++)
        if (*p == '-') *p = '_'; /* slow-reader names slow_reader */
    TEST_CASE_REQUIRE("srv-test", scenarios, name)();
    printf("PASS %s\n", argv[1]);
    return 0;
}
