/* test-syscalls.c - system calls per switch, measured with perf over N and 2N switches. */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { LOOP_SWITCHES = 20000 };

struct loop {
    check_pair pair;
    long left;
};

static void bounce(void *arg)
{
    struct loop *l = arg;
    while (--l->left > 0)
        sw_jump(&l->pair.peer, &l->pair.main);
}

/* The workload perf watches: `switch-tests syscall-loop BACKEND N` makes exactly N switches
 * (N even) and prints "switched N". Not a test by itself. */
int test_syscall_loop(const sw_backend *b, int argc, char **argv)
{
    ASSERT_EQ(argc, 1);
    long n = atol(argv[0]);
    ASSERT(n > 0 && n % 2 == 0);
    struct loop l = {.left = n};
    check_pair_init(&l.pair, b, 64 * 1024, bounce, &l);
    long made = 0;
    while (!sw_finished(&l.pair.peer)) {
        --l.left;
        made += 2; /* there and back (the last "back" is the entry returning) */
        sw_jump(&l.pair.main, &l.pair.peer);
    }
    ASSERT_EQ(made, n);
    check_pair_destroy(&l.pair);
    printf("switched %ld\n", made);
    return 0;
}

enum perf_outcome { PERF_OK, PERF_UNAVAILABLE };

/* Run `perf stat -e raw_syscalls:sys_enter` over the workload with n switches. On success
 * *count is the number of system calls entered; PERF_UNAVAILABLE comes with a reason. */
static enum perf_outcome perf_count(const char *backend, long n, long *count, char *why,
                                    size_t whysize)
{
    char self[4096], stats[] = "/tmp/switch-tests-perf-XXXXXX", arg[32], out[256] = "";
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GT(len, 0);
    self[len] = '\0';
    int statfd = mkstemp(stats);
    ASSERT_NE(statfd, -1);
    snprintf(arg, sizeof arg, "%ld", n);
    int fds[2];
    ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
    fflush(stdout);
    pid_t pid = fork();
    ASSERT_NE(pid, -1);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        execlp("perf", "perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", stats, "--",
               self, "syscall-loop", backend, arg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], out, sizeof out - 1);
    out[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ASSERT_EQ(errno, EINTR);

    char text[4096] = "";
    ssize_t tn = read(statfd, text, sizeof text - 1);
    text[tn > 0 ? tn : 0] = '\0';
    close(statfd);
    unlink(stats);

    char expect[64];
    snprintf(expect, sizeof expect, "switched %ld\n", n);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !out[0]) {
        snprintf(why, whysize, "perf unavailable (cannot execute perf)");
        return PERF_UNAVAILABLE;
    }
    if (!out[0]) {
        /* perf refused before starting the workload: no permission, no tracepoint. */
        char *nl = strchr(text, '\n');
        if (nl) *nl = '\0';
        snprintf(why, whysize, "perf unavailable (%s)", text[0] ? text : "perf stat failed");
        return PERF_UNAVAILABLE;
    }
    /* The workload ran: from here on anything unexpected is a failure, not a skip. */
    ASSERT_CONTAINS(out, expect);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *line = strstr(text, "raw_syscalls:sys_enter");
    ASSERT_PTR_NE(line, NULL);
    while (line > text && line[-1] != '\n')
        line--;
    if (line[0] == '<') { /* "<not supported>" or "<not counted>" */
        snprintf(why, whysize, "perf unavailable (the tracepoint was %.*s)",
                 (int)strcspn(line, ","), line);
        return PERF_UNAVAILABLE;
    }
    char *end;
    *count = strtol(line, &end, 10);
    ASSERT(end != line && *end == ',');
    return PERF_OK;
}

int test_syscalls(const sw_backend *b, int argc, char **argv)
{
    (void)argc, (void)argv;
    long n = LOOP_SWITCHES, once = 0, twice = 0;
    char why[512];
    if (perf_count(b->name, n, &once, why, sizeof why) != PERF_OK ||
        perf_count(b->name, 2 * n, &twice, why, sizeof why) != PERF_OK) {
        printf("not run: %s\n", why);
        return CHECK_SKIP;
    }
    /* Start-up and teardown cost the same in both runs; the difference is n switches. */
    double per_switch = (double)(twice - once) / (double)n;
    printf("%s: %ld syscalls for %ld switches, %ld for %ld: %.3f per switch (documented "
           "enters_kernel=%d)\n",
           b->name, once, n, twice, 2 * n, per_switch, b->props.enters_kernel);
    ASSERT_EQ(per_switch >= 0.5, b->props.enters_kernel);
    if (b->props.enters_kernel) {
        /* ucontext: one rt_sigprocmask per swapcontext, nothing more. */
        ASSERT_MSG(per_switch >= 0.95 && per_switch <= 1.05, "%.4f per switch", per_switch);
    } else {
        ASSERT_MSG(per_switch < 0.001, "%.4f per switch", per_switch);
    }
    return 0;
}
