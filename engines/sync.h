/* sync.h - fiber synchronization: mutex, condition variable and semaphore in one runtime, and an
 * event lock across runtimes on different threads. */
#ifndef SWITCHYARD_SYNC_H
#define SWITCHYARD_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fiber.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Within one runtime (fb_mutex, fb_cond, fb_sem). A fiber that must wait parks (fb_park) and
 * the thread runs its other fibers; nothing here enters the kernel. Waiters are served in
 * FIFO order and ownership is handed over, not competed for: fb_mutex_unlock makes the
 * longest waiter the owner before it runs, so a fiber that unlocks and locks again at once
 * queues behind it (no barging, no starvation). The objects belong to the runtime of the
 * first fiber that waits on them; using one from another thread is refused with EPERM (use
 * fb_event for that). All calls that can wait must come from a fiber.
 *
 * At runtime shutdown: a fiber parked on one of these whose waker is gone (the owner
 * finished without unlocking, nobody posts) can never run again; fb_run then returns -1 with
 * EDEADLK instead of hanging, and fb_runtime_free discards the fiber. The object still lists
 * the discarded waiter: its destroy call reports EBUSY and the object must not be used again.
 */
typedef struct fb_waiter fb_waiter;
typedef struct fb_waitq {
    fb_waiter *head, *tail;
    fb_runtime *rt; /* the runtime the waiters belong to (set by the first waiter) */
} fb_waitq;

typedef struct fb_mutex {
    fiber *owner;
    fb_waitq q;
} fb_mutex;

typedef struct fb_cond {
    fb_waitq q;
} fb_cond;

typedef struct fb_sem {
    size_t value;
    fb_waitq q;
} fb_sem;

#define FB_MUTEX_INIT                                                                              \
    {                                                                                              \
        0                                                                                          \
    }
#define FB_COND_INIT                                                                               \
    {                                                                                              \
        0                                                                                          \
    }

void fb_mutex_init(fb_mutex *m);
/* 0, or EBUSY when it is locked or fibers wait on it. */
int fb_mutex_destroy(fb_mutex *m);
/* 0; EDEADLK when the caller owns it already, EPERM outside a fiber or from another runtime. */
int fb_mutex_lock(fb_mutex *m);
/* 0, or EBUSY when another fiber owns it (or waits for it). */
int fb_mutex_trylock(fb_mutex *m);
/* 0, or EPERM when the caller does not own it. */
int fb_mutex_unlock(fb_mutex *m);

void fb_cond_init(fb_cond *c);
int fb_cond_destroy(fb_cond *c);
/* Unlock m, wait for a signal, lock m again. 0, or the error of fb_mutex_lock/unlock. */
int fb_cond_wait(fb_cond *c, fb_mutex *m);
void fb_cond_signal(fb_cond *c);    /* wake the longest waiter, if any */
void fb_cond_broadcast(fb_cond *c); /* wake them all */

/* A counting semaphore, e.g. to let at most `value` fibers reach a back end at once. */
void fb_sem_init(fb_sem *s, size_t value);
int fb_sem_destroy(fb_sem *s);
int fb_sem_wait(fb_sem *s);    /* 0, or EPERM outside a fiber or from another runtime */
int fb_sem_trywait(fb_sem *s); /* 0, or EAGAIN when the count is zero */
void fb_sem_post(fb_sem *s);   /* hands the unit straight to the longest waiter, if any */
size_t fb_sem_value(const fb_sem *s);

/*
 * An event lock: a mutex for fibers of different runtimes on different threads (and for
 * plain threads). The fast path is one compare-and-swap on an atomic word to lock and one
 * exchange to unlock. A fiber that finds it taken queues an eventfd (from a small per-thread
 * pool) and waits for it to turn readable in its own IO runtime (fb_wait on the eventfd), so
 * its scheduler keeps running every other fiber; a plain thread blocks in poll on it.
 * Unlocking pops the longest waiter and writes its eventfd; the woken waiter competes for the
 * word again and, beaten by a newcomer, goes back to the head of the queue, as libfiber's
 * fiber_event does. A waiter that has queued for more than 1 ms is handed the lock instead
 * (the unlocker takes the word on its behalf), so competing never starves anyone for long.
 * The queue is guarded by a spinlock held for a few instructions, never across a switch or a
 * system call.
 *
 * Needs the calling thread's fiber IO runtime (io.h) when called from a fiber.
 */
typedef struct fb_event_waiter fb_event_waiter;
typedef struct fb_event {
    atomic_int locked;
    atomic_int waiters; /* queued, so unlock knows whether to look at the queue */
    atomic_flag guard;  /* protects head and tail */
    fb_event_waiter *head, *tail;
    atomic_uint_fast64_t contended; /* statistics: lock calls that had to queue, */
    atomic_uint_fast64_t wakeups;   /* and eventfd writes by unlock */
} fb_event;

#define FB_EVENT_INIT                                                                              \
    {                                                                                              \
        0, 0, ATOMIC_FLAG_INIT, NULL, NULL, 0, 0                                                   \
    }

void fb_event_init(fb_event *e);
/* 0, or EBUSY when it is locked or waited for. */
int fb_event_destroy(fb_event *e);
/* 0, or an error of the wait (ENOMEM, EMFILE for the eventfd, EPERM: a fiber without IO). */
int fb_event_lock(fb_event *e);
/* The same, giving up with ETIMEDOUT after timeout_ns (FB_FOREVER from io.h: no limit). */
int fb_event_lock_timeout(fb_event *e, int64_t timeout_ns);
int fb_event_trylock(fb_event *e); /* 0, or EBUSY */
int fb_event_unlock(fb_event *e);  /* 0, or EPERM when it was not locked */

#ifdef __cplusplus
}
#endif
#endif
