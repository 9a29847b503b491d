/* engine_kcount.c - epoll_ctl counted by the kernel (syscall tracepoint) for the calling thread. */
#define _GNU_SOURCE
#include "engine_epoll.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * An engine built on a library (libevent) cannot count the epoll_ctl calls the library makes:
 * they happen inside it, and interposing the libc symbol would be neither portable nor
 * limited to the engine. The kernel can count them instead: one perf counter per operation on
 * the syscalls:sys_enter_epoll_ctl tracepoint, filtered on the `op` argument, attached to the
 * calling thread only. This needs perf events with tracepoint access (root here); without it
 * the figures are reported as not counted. Every epoll_ctl the thread makes is counted, so the
 * engine's thread must not make others (true for a fiber runtime thread).
 */

static long tracepoint_id(void)
{
    static const char *const paths[] = {
        "/sys/kernel/tracing/events/syscalls/sys_enter_epoll_ctl/id",
        "/sys/kernel/debug/tracing/events/syscalls/sys_enter_epoll_ctl/id",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        FILE *f = fopen(paths[i], "re");
        long id = -1;
        if (!f) continue;
        if (fscanf(f, "%ld", &id) != 1) id = -1;
        fclose(f);
        if (id >= 0) return id;
    }
    errno = ENOENT;
    return -1;
}

static int open_one(long id, int op)
{
    struct perf_event_attr attr;
    char filter[32];
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.size = sizeof attr;
    attr.config = (uint64_t)id;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return -1;
    snprintf(filter, sizeof filter, "op == %d", op);
    if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int eng__kcount_open(eng__kcount *kc)
{
    static const int ops[3] = {EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL};
    long id = tracepoint_id();
    for (int i = 0; i < 3; i++)
        kc->fd[i] = -1;
    if (id < 0) return -1;
    for (int i = 0; i < 3; i++) {
        kc->fd[i] = open_one(id, ops[i]);
        if (kc->fd[i] < 0) {
            int e = errno;
            eng__kcount_close(kc);
            errno = e;
            return -1;
        }
    }
    return 0;
}

void eng__kcount_read(const eng__kcount *kc, eng_stats *st)
{
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        if (kc->fd[i] < 0 || read(kc->fd[i], &v[i], sizeof v[i]) != (ssize_t)sizeof v[i]) {
            st->ctl_add = st->ctl_mod = st->ctl_del = 0;
            st->ctl_source = ENG_CTL_NONE;
            return;
        }
    }
    st->ctl_add = v[0];
    st->ctl_mod = v[1];
    st->ctl_del = v[2];
    st->ctl_source = ENG_CTL_KERNEL;
}

void eng__kcount_close(eng__kcount *kc)
{
    for (int i = 0; i < 3; i++) {
        if (kc->fd[i] >= 0) close(kc->fd[i]);
        kc->fd[i] = -1;
    }
}
