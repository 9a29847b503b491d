/* io.h - fiber IO: blocking-style calls that suspend only the calling fiber, over an event engine.
 */
#ifndef SWITCHYARD_IO_H
#define SWITCHYARD_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "engine.h"
#include "fiber.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One IO runtime per thread, beside the thread's fiber runtime: it owns an event engine
 * (engine.h, chosen by name) and the timers, and plugs into the scheduler as its poller:
 *
 *     fb_io *io = fb_io_new("merged");
 *     fb_config cfg = {.backend = b, .policy = FB_RING, .poller = fb_io_poller(io)};
 *     fb_runtime *rt = fb_runtime_new(&cfg);
 *     ... fb_spawn(rt, ...); fb_run(rt);
 *     fb_runtime_free(rt);
 *     fb_io_free(io);
 *
 * The poller computes the next timer deadline, waits in the engine (without blocking while
 * fibers are runnable), and wakes the fibers whose fd became ready or whose timer expired.
 *
 * The calls below act on the calling thread's IO runtime. Inside a fiber they suspend only
 * that fiber; outside a fiber they never wait (a call that would have to fails with EAGAIN,
 * fb_sleep sleeps the thread). Every fd they touch is switched to non-blocking on first use.
 *
 * Rules:
 *   - An fd used with these calls must be closed with fb_close, never close(2) directly:
 *     fb_close tells the engine before the number can be reused, and wakes any fiber still
 *     waiting on the fd with EBADF.
 *   - At most one fiber waits to read and one to write on an fd at a time (a second gets
 *     EBUSY); reading and writing concurrently from two fibers is fine (full duplex).
 *   - Free the IO runtime after the fiber runtime. Fibers discarded while parked leave their
 *     waits behind; fb_io_free drops them without touching the discarded stacks.
 *
 * On a completion engine (engine.h: eng_ops.submit, the `uring` engine) the same calls hand
 * whole operations to the kernel instead of waiting for readiness: fb_read, fb_write,
 * fb_accept and fb_wait each submit one operation (a read, a send or write, an accept, a
 * poll) and park the fiber until it completes; a scheduler pass submits all of its fibers'
 * operations in one system call. What differs for the caller:
 *   - the buffer belongs to the kernel until the call returns. A timeout or fb_close cancels
 *     the operation, and the call returns only once the kernel has answered: with ETIMEDOUT or
 *     EBADF, or with the operation's result when it completed before the cancellation took
 *     hold (a read that timed out as its data arrived returns the data);
 *   - fb_write submits the rest after a short write, as it calls write(2) again otherwise;
 *   - discarding a runtime whose fibers are parked in such calls is not allowed: their stacks
 *     would be freed under operations the kernel may still complete into (fb_io_free cancels
 *     and drains what is left, but only after the runtime has freed the stacks).
 */

typedef struct fb_io fb_io;

enum { FB_IN = ENG_IN, FB_OUT = ENG_OUT };
#define FB_FOREVER ((int64_t)-1)

/*
 * Read policies: when fb_read and fb_accept try their system call and when they wait for
 * readiness first. Chosen per IO runtime (fb_io_set_read_policy), FB_READ_EAGER by default:
 *   FB_READ_EAGER     try the call first, wait only after EAGAIN;
 *   FB_READ_WAIT      wait for readiness first, then call. An engine that reports only new
 *                     readiness (eng_props.edge_triggered: edge, uring-poll) cannot tell
 *                     about data that was already there, so on such an engine it waits first
 *                     only when the fd is known to be drained, as adaptive does;
 *   FB_READ_ADAPTIVE  a per-fd hint: after a read that returned less than asked on a stream
 *                     (a stream socket or a pipe), or after EAGAIN, the fd counts as drained
 *                     and the next call waits first; after a read that filled the buffer, an
 *                     end of file, an error, or once the engine reported the fd ready, the
 *                     next call tries first.
 * None can hang on data that arrives between a call and the wait that follows it: a
 * level-triggered engine reports what is there when the waiter registers, and an edge engine
 * reports the arrival (the new edge) or has kept it in its ready bit. fb_write always tries
 * first (see io_calls.c). A completion engine (eng_ops.submit: uring) has no readiness to wait for:
 * the kernel performs the read, so the policy does not apply there.
 */
typedef enum fb_read_policy { FB_READ_EAGER, FB_READ_WAIT, FB_READ_ADAPTIVE } fb_read_policy;

typedef struct fb_io_stats {
    eng_stats engine;      /* epoll_ctl by operation, waits, polls (engine.h) */
    uint64_t timers_fired; /* sleeps and timed waits that ran out */
    /* fb_read and fb_accept: system calls tried, those that said EAGAIN, and waits done
     * before trying (the read policy's choice). */
    uint64_t reads_tried, reads_again, reads_waited_first;
    size_t waiters;  /* fibers waiting on an fd now */
    size_t sleepers; /* fibers in fb_sleep now */
} fb_io_stats;

/* Create the calling thread's IO runtime on the engine `name` (see eng_names()). NULL with
 * errno: EINVAL for an unknown name, EBUSY when the thread already has one, or the engine's
 * own error. */
fb_io *fb_io_new(const char *name);
void fb_io_free(fb_io *io);
fb_io *fb_io_current(void);
/* The hook for fb_config.poller. */
fb_poller fb_io_poller(fb_io *io);
const eng_ops *fb_io_engine(const fb_io *io);
/* The kernel mechanism underneath (engine.h: "epoll", or libevent's method). */
const char *fb_io_method(const fb_io *io);
void fb_io_get_stats(const fb_io *io, fb_io_stats *out);
/* The read policy of an IO runtime; takes effect from the next call. */
void fb_io_set_read_policy(fb_io *io, fb_read_policy p);
fb_read_policy fb_io_read_policy(const fb_io *io);
/* "eager", "wait", "adaptive"; parse returns 0, or -1 for an unknown name. */
const char *fb_read_policy_name(fb_read_policy p);
int fb_read_policy_parse(const char *name, fb_read_policy *out);
/* "eager, wait, adaptive", for error messages. */
const char *fb_read_policy_names(void);

/* Wait until fd is ready for dir (FB_IN or FB_OUT), at most timeout_ns (FB_FOREVER: no
 * limit). Returns 0 when ready (readiness is a hint: the next call may still get EAGAIN), or
 * -1 with errno ETIMEDOUT, EBADF (fb_close while waiting), EBUSY, ENOMEM. */
int fb_wait(int fd, uint32_t dir, int64_t timeout_ns);

/* read(2) for fibers: at least one byte, 0 at end of file, or -1 with errno. */
ssize_t fb_read(int fd, void *buf, size_t len);
/* The same with a time limit: -1/ETIMEDOUT when nothing arrived in time. */
ssize_t fb_read_timeout(int fd, void *buf, size_t len, int64_t timeout_ns);
/* Write all len bytes across partial writes (on a socket without raising SIGPIPE). Returns len;
 * when an error ends it early, the bytes already written if any (the error repeats on the next
 * call), else -1 with errno. */
ssize_t fb_write(int fd, const void *buf, size_t len);
/* accept4 for fibers: the new fd is non-blocking and close-on-exec. */
int fb_accept(int lfd, struct sockaddr *addr, socklen_t *addrlen);
/* connect(2) for fibers, at most timeout_ns: 0, or -1 with errno (ETIMEDOUT when it did not
 * finish in time; the socket should then be closed). */
int fb_connect(int fd, const struct sockaddr *addr, socklen_t addrlen, int64_t timeout_ns);
/* Suspend the calling fiber for at least ns nanoseconds. Returns 0. */
int fb_sleep(int64_t ns);
/* Suspend the calling fiber until CLOCK_MONOTONIC reaches mono_ns. Returns 0. */
int fb_sleep_until(int64_t mono_ns);
/* Wake the fd's waiters with EBADF, tell the engine, then close(2). */
int fb_close(int fd);

#ifdef __cplusplus
}
#endif
#endif
