/* check.c - failure reporting, context pairs, child processes and mapping counts for the tests. */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void check_pair_init(check_pair *p, const sw_backend *b, size_t stack_size, sw_entry_fn entry,
                     void *arg)
{
    ASSERT_EQ(sw_stack_alloc(&p->stack, stack_size), 0);
    ASSERT_EQ(sw_init_self(&p->main, b), 0);
    ASSERT_EQ(sw_make(&p->peer, b, &p->stack, entry, arg, &p->main), 0);
    ASSERT_EQ(sw_finished(&p->peer), false);
}

void check_pair_destroy(check_pair *p)
{
    sw_stack_free(&p->stack);
}

void check_run_child(void (*fn)(void *), void *arg, check_child *out)
{
    int fds[2];
    ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT_NE(pid, -1);
    if (pid == 0) {
        /* No core file: the children of these tests are meant to die. The alarm bounds a child
         * that hangs instead of dying. */
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        alarm(20);
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        fn(arg);
        fflush(stderr);
        _exit(0);
    }
    close(fds[1]);
    size_t used = 0;
    for (;;) {
        char scratch[512];
        char *dst = used < sizeof out->err - 1 ? out->err + used : scratch;
        size_t room = used < sizeof out->err - 1 ? sizeof out->err - 1 - used : sizeof scratch;
        ssize_t n = read(fds[0], dst, room);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (dst != scratch) used += (size_t)n;
    }
    out->err[used] = '\0';
    close(fds[0]);
    while (waitpid(pid, &out->status, 0) < 0)
        ASSERT_EQ(errno, EINTR);
}

const char *check_describe_status(int status, char *buf, size_t size)
{
    if (WIFEXITED(status))
        snprintf(buf, size, "exited %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "killed by SIG%s", sigabbrev_np(WTERMSIG(status)));
    else
        snprintf(buf, size, "wait status 0x%x", (unsigned)status);
    return buf;
}

long check_maps_count(void)
{
    static char buf[65536];
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    ASSERT_NE(fd, -1);
    long lines = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        ASSERT_GE(n, 0);
        if (n == 0) break;
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    }
    close(fd);
    return lines;
}
