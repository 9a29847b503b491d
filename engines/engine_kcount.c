/* engine_kcount.c - epoll_ctl and epoll_wait counted by the kernel (syscall tracepoints) per
 * thread. */
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
 * the syscalls:sys_enter_epoll_ctl tracepoint, filtered on the `op` argument, and one on
 * syscalls:sys_enter_epoll_wait, attached to the calling thread only. This needs perf events with
 * tracepoint access (root here); without it the figures are reported as not counted. Every
 * epoll_ctl the thread makes is counted, so the engine's thread must not make others (true for a
 * fiber runtime thread).
 */

static long tracepoint_id(const char *event)
{
    static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/events/syscalls/%s/id", roots[i], event);
        FILE *f = fopen(path, "re");
        long id = -1;
        if (!f) continue;
        if (fscanf(f, "%ld", &id) != 1) id = -1;
        fclose(f);
        if (id >= 0) return id;
    }
    errno = ENOENT;
    return -1;
}

/* One counter on the tracepoint, filtered on epoll_ctl's op when op >= 0. */
static int open_one(long id, int op)
{
    struct perf_event_attr attr;
    char filter[32];
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.size = sizeof attr;
    attr.config = (uint64_t)id;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 || op < 0) return fd;
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
    static const int ops[ENG__KCOUNT_N] = {EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL, -1};
    long ctl = tracepoint_id("sys_enter_epoll_ctl"), wait = tracepoint_id("sys_enter_epoll_wait");
    for (int i = 0; i < ENG__KCOUNT_N; i++)
        kc->fd[i] = -1;
    if (ctl < 0 || wait < 0) return -1;
    for (int i = 0; i < ENG__KCOUNT_N; i++) {
        kc->fd[i] = open_one(ops[i] < 0 ? wait : ctl, ops[i]);
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
    uint64_t v[ENG__KCOUNT_N];
    for (int i = 0; i < ENG__KCOUNT_N; i++) {
        if (kc->fd[i] < 0 || read(kc->fd[i], &v[i], sizeof v[i]) != (ssize_t)sizeof v[i]) {
            st->ctl_add = st->ctl_mod = st->ctl_del = st->epoll_waits = 0;
            st->ctl_source = ENG_CTL_NONE;
            return;
        }
    }
    st->ctl_add = v[0];
    st->ctl_mod = v[1];
    st->ctl_del = v[2];
    st->epoll_waits = v[3];
    st->ctl_source = ENG_CTL_KERNEL;
}

void eng__kcount_close(eng__kcount *kc)
{
    for (int i = 0; i < ENG__KCOUNT_N; i++) {
        if (kc->fd[i] >= 0) close(kc->fd[i]);
        kc->fd[i] = -1;
    }
}
