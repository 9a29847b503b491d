/* engine_uring.c - the counted io_uring the io_uring engines share (setup, submit, wait). */
#define _GNU_SOURCE
#include "engine_uring.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int eng__ur_init(eng__ur *u, unsigned entries, eng_stats *st)
{
    memset(u, 0, sizeof *u);
    u->st = st;
    /* Completions are posted by task work in the ring owner's thread. By default the kernel
     * interrupts that thread for it (an IPI when the wake-up came from the other CPU), which
     * cost 2.7x the server CPU per request on this VM; COOP_TASKRUN runs it at the thread's
     * next kernel entry instead, and TASKRUN_FLAG says in the ring when some is pending, so
     * a non-blocking poll knows it must enter. Kernels before 5.19 refuse both: none then. */
    int rc = io_uring_queue_init(entries, &u->ring,
                                 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
    if (rc == -EINVAL) rc = io_uring_queue_init(entries, &u->ring, 0);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    /* One wait with a timeout in one enter needs IORING_ENTER_EXT_ARG (Linux 5.11). */
    if (!(u->ring.features & IORING_FEAT_EXT_ARG)) {
        io_uring_queue_exit(&u->ring);
        errno = ENOSYS;
        return -1;
    }
    /* Slot i of the submission array names SQE i, so publishing the tail submits in order
     * (liburing does the same at setup; repeated here because this file relies on it). */
    for (unsigned i = 0; i < u->ring.sq.ring_entries; i++)
        u->ring.sq.array[i] = i;
    return 0;
}

void eng__ur_fini(eng__ur *u)
{
    io_uring_queue_exit(&u->ring);
}

/* Publish the SQEs filled since the last call; returns how many the kernel has not taken. */
static unsigned flush(eng__ur *u)
{
    struct io_uring_sq *sq = &u->ring.sq;
    if (sq->sqe_head != sq->sqe_tail) {
        sq->sqe_head = sq->sqe_tail;
        io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
    }
    return sq->sqe_tail - io_uring_smp_load_acquire(sq->khead);
}

static int enter(eng__ur *u, unsigned submit, unsigned wait, unsigned flags,
                 const struct timespec *ts)
{
    struct __kernel_timespec kts;
    struct io_uring_getevents_arg arg = {.sigmask_sz = _NSIG / 8};
    if (ts) {
        kts.tv_sec = ts->tv_sec;
        kts.tv_nsec = ts->tv_nsec;
        arg.ts = (uint64_t)(uintptr_t)&kts;
    }
    unsigned head = io_uring_smp_load_acquire(u->ring.sq.khead);
    u->st->uring_enters++;
    long rc = syscall(__NR_io_uring_enter, u->ring.ring_fd, submit, wait,
                      flags | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
    /* What the kernel took, read from the ring: exact even when the wait then fails. */
    u->st->uring_sqes += io_uring_smp_load_acquire(u->ring.sq.khead) - head;
    if (rc >= 0 || errno == ETIME || errno == EINTR || errno == EBUSY || errno == EAGAIN) return 0;
    return -1;
}

struct io_uring_sqe *eng__ur_sqe(eng__ur *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (sqe) return sqe;
    if (enter(u, flush(u), 0, 0, NULL) < 0) return NULL;
    sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) errno = EBUSY;
    return sqe;
}

int eng__ur_enter(eng__ur *u, int64_t timeout_ns)
{
    unsigned submit = flush(u);
    /* Completions may be waiting in the kernel: overflowed CQEs, or task work not yet run. */
    bool pending =
        IO_URING_READ_ONCE(*u->ring.sq.kflags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN);
    if (timeout_ns == 0) {
        if (!submit && !pending) return 0;
        return enter(u, submit, 0, pending ? IORING_ENTER_GETEVENTS : 0, NULL);
    }
    struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
    return enter(u, submit, 1, IORING_ENTER_GETEVENTS, timeout_ns < 0 ? NULL : &ts);
}
