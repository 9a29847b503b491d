/* tc_server.c - start and stop the echo-server under test, and read its process from /proc. */
#include "tc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define START_MS 15000 /* ASan builds start slowly on a busy machine */
#define STOP_MS  15000

static struct tc_server *running; /* killed by tc_fail so a failed test leaves nothing behind */

long long tc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void tc_sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

static void dump_log(struct tc_server *s)
{
    FILE *f = s->errpath[0] ? fopen(s->errpath, "r") : NULL;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        fprintf(stderr, "  server stderr: %s", line);
    if (f) fclose(f);
}

/* Run by a failed assertion: no test leaves a server behind, and its stderr is shown. */
static void kill_running(void)
{
    if (running) {
        kill(running->pid, SIGKILL);
        waitpid(running->pid, NULL, 0);
        dump_log(running);
        unlink(running->errpath);
    }
}

void tc_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("  ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    fflush(stdout);
    va_end(ap);
}

/* Read one line from fd within the deadline; returns its length, -1 on EOF or time-out. */
static int read_line(int fd, char *buf, size_t cap, long long deadline)
{
    size_t n = 0;
    while (n + 1 < cap) {
        struct pollfd p = {fd, POLLIN, 0};
        int left = (int)(deadline - tc_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0) return -1;
        ssize_t r = read(fd, buf + n, 1);
        if (r <= 0) return -1;
        if (buf[n] == '\n') break;
        n++;
    }
    buf[n] = '\0';
    return (int)n;
}

static void set_limit(int resource, long value)
{
    struct rlimit rl;
    getrlimit(resource, &rl);
    rl.rlim_cur = (rlim_t)value;
    if (value > 0 && setrlimit(resource, &rl) < 0)
        fprintf(stderr, "setrlimit %d: %s\n", resource, strerror(errno));
}

static void __attribute__((noreturn))
exec_server(char *const argv[], int out, int err, const struct tc_limits *lim)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a test that died */
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    if (lim && lim->own_group && setsid() < 0) _exit(127);
    if (lim) {
        set_limit(RLIMIT_NOFILE, lim->nofile);
        set_limit(RLIMIT_AS, lim->as_bytes);
    }
    execv(argv[0], argv);
    fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

void tc_server_start(struct tc_server *s, char *const argv[], const struct tc_limits *lim)
{
    int pfd[2], argc = 0;
    char *args[64];
    memset(s, 0, sizeof *s);
    for (; argv[argc] && argc < 60; argc++) {
        args[argc] = argv[argc];
        if (strcmp(argv[argc], "--model") == 0 && argv[argc + 1]) s->model = argv[argc + 1];
    }
    args[argc++] = "--port";
    args[argc++] = "0";
    args[argc] = NULL;
    snprintf(s->errpath, sizeof s->errpath, "/tmp/srv-test-err.XXXXXX");
    int err = mkostemp(s->errpath, O_CLOEXEC);
    ASSERT_MSG(err >= 0 && pipe2(pfd, O_CLOEXEC) == 0, "%s", strerror(errno));
    s->pid = fork();
    ASSERT_MSG(s->pid >= 0, "fork: %s", strerror(errno));
    if (s->pid == 0) exec_server(args, pfd[1], err, lim);
    close(pfd[1]);
    close(err);
    s->out_fd = pfd[0];
    running = s;
    check_on_fail(kill_running);
    char line[256];
    ASSERT_MSG(read_line(s->out_fd, line, sizeof line, tc_now_ms() + START_MS) > 0,
               "no 'listening' line from the server");
    ASSERT_MSG(sscanf(line, "listening %*[0-9.]:%d", &s->port) == 1 && s->port > 0,
               "unexpected first line '%s'", line);
    pid_t none[1];
    int z;
    s->kids0 = tc_proc_children(s->pid, none, 1, &z);
}

static const char *const required_keys[] = {
    "model", "switch",  "sched", "engine",    "threads",  "connections", "max_concurrent",
    "bytes", "refused", "shed",  "epoll_ctl", "switches", "rss_max_kb",  NULL};

static void stop(struct tc_server *s, int sig, bool group)
{
    long long deadline = tc_now_ms() + STOP_MS;
    int status = 0;
    ASSERT_MSG(kill(group ? -s->pid : s->pid, sig) == 0, "server already gone: %s",
               strerror(errno));
    int n = read_line(s->out_fd, s->json, sizeof s->json, deadline);
    char extra[64];
    ASSERT_MSG(n > 0, "no statistics line after signal %d", sig);
    ASSERT_MSG(read_line(s->out_fd, extra, sizeof extra, deadline) < 0, "more output: '%s'", extra);
    while (waitpid(s->pid, &status, WNOHANG) == 0) {
        ASSERT_MSG(tc_now_ms() < deadline, "server did not exit after signal %d", sig);
        tc_sleep_ms(5);
    }
    running = NULL;
    close(s->out_fd);
    dump_log(s);
    FILE *f = fopen(s->errpath, "r");
    size_t got = f ? fread(s->log, 1, sizeof s->log - 1, f) : 0;
    s->log[got] = '\0';
    if (f) fclose(f);
    unlink(s->errpath);
    s->stopped = true;
    ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %#x", status);
    ASSERT_MSG(tc_json_valid(s->json), "invalid JSON: %s", s->json);
    for (int i = 0; required_keys[i]; i++)
        ASSERT_MSG(tc_json_find(s->json, required_keys[i]), "no key '%s' in %s", required_keys[i],
                   s->json);
    tc_note("stats: %s", s->json);
}

void tc_server_stop(struct tc_server *s, int sig)
{
    stop(s, sig, false);
}

void tc_server_stop_group(struct tc_server *s, int sig)
{
    stop(s, sig, true);
}

int tc_server_log_count(struct tc_server *s, const char *needle)
{
    char buf[sizeof s->log];
    if (!s->stopped) {
        FILE *f = fopen(s->errpath, "r");
        size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        buf[got] = '\0';
        if (f) fclose(f);
    } else {
        memcpy(buf, s->log, sizeof buf);
    }
    int n = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
        n += strstr(line, needle) != NULL;
    return n;
}
