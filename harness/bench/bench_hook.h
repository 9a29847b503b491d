/* bench_hook.h - the timed loops of switch-bench's hook/ and sync/ rows. */
#ifndef SWITCHYARD_BENCH_HOOK_H
#define SWITCHYARD_BENCH_HOOK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * hook/<call>/pipe/<how>: one 1-byte read (or write) on a pipe that is always ready, so no
 * call ever waits and the row is the price of the path, not of a wait. Every `batch` calls
 * the pipe is refilled (or drained) with one raw system call, the same in every variant.
 *   syscall      syscall(SYS_read, ...) on a plain thread: the kernel's part alone
 *   fallthrough  read() on a plain thread of a program that links the hooks (hooks off)
 *   direct       fb_read / fb_write inside a fiber (the fiber IO calls; hooks off)
 *   hooked       read() / write() inside a fiber with the hooks on, on a blocking pipe
 */
typedef enum bh_call { BH_READ, BH_WRITE } bh_call;
typedef enum bh_how { BH_SYSCALL, BH_FALLTHROUGH, BH_DIRECT, BH_HOOKED } bh_how;

typedef struct bh_io {
    bh_call call;
    bh_how how;
    long batch;                   /* calls per more() (at most 4096: one pipe page) */
    bool (*more)(void *more_arg); /* may be called on a fiber's stack */
    void *more_arg;
    uint64_t calls;
} bh_io;

/* 0, or -1 with errno (pipe, runtime or a call failed). */
int bh_io_run(bh_io *b);

/*
 * sync/<lock>/<contention>: one lock/unlock pair of the measuring fiber (or thread).
 *   uncontended  nobody else wants the lock
 *   fibers:2     a second fiber of the same runtime wants it too; each holder keeps it
 *                across one fb_yield, so every lock finds it taken
 *   threads:2    a second thread (its own runtime for the fiber locks) locks and unlocks
 *                in a tight loop meanwhile
 */
typedef enum bs_lock { BS_FIBER_MUTEX, BS_EVENT_LOCK, BS_PTHREAD_MUTEX } bs_lock;
typedef enum bs_mode { BS_UNCONTENDED, BS_FIBERS, BS_THREADS } bs_mode;

typedef struct bs_sync {
    bs_lock lock;
    bs_mode mode;
    long batch;
    bool (*more)(void *more_arg);
    void *more_arg;
    uint64_t pairs;   /* the measuring side's lock/unlock pairs */
    uint64_t queued;  /* event lock: lock calls (either side) that had to queue */
    uint64_t wakeups; /* event lock: eventfd writes by unlock (either side) */
    uint64_t other;   /* pairs the contending side completed meanwhile */
} bs_sync;

/* 0, or -1 with errno; EDEADLK for the combinations that cannot work (a pthread mutex held
 * across a switch by two fibers of one thread; fb_mutex across threads). */
int bs_sync_run(bs_sync *s);

#ifdef __cplusplus
}
#endif
#endif
