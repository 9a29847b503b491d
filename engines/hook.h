/* hook.h - opt-in hooked libc IO: plain blocking calls made by a fiber suspend only that fiber.
 */
#ifndef SWITCHYARD_HOOK_H
#define SWITCHYARD_HOOK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Linking the `fiberhook` object library into a program defines read, write, recv, send,
 * readv, writev, accept, accept4, connect, poll, close, sleep, usleep and nanosleep (plus
 * fcntl and setsockopt, to keep the caller's view of O_NONBLOCK and of SO_RCVTIMEO /
 * SO_SNDTIMEO) in the program itself; each calls the next definition, libc's, found with
 * dlsym(RTLD_NEXT) (hook.c says why this and not -Wl,--wrap).
 *
 * A call is served cooperatively only when all three hold: the calling thread enabled hooks
 * (fb_hook_enable), it has a fiber IO runtime (io.h), and the call comes from inside a fiber.
 * Everywhere else, the scheduler context of that same thread included, the call goes straight
 * to libc. Served cooperatively means: the fd (a socket or a pipe/FIFO) is switched to
 * O_NONBLOCK behind the caller's back on first use, and a call that would block waits in the
 * fiber IO layer (fb_wait, fb_sleep, fb_close) instead of in the kernel:
 *
 *   - an fd the caller made non-blocking itself (O_NONBLOCK, SOCK_NONBLOCK, MSG_DONTWAIT)
 *     keeps that meaning: the call returns EAGAIN at once, as libco does;
 *   - SO_RCVTIMEO bounds read, readv, recv and accept, SO_SNDTIMEO bounds write, writev,
 *     send and connect; running out gives EAGAIN (EINPROGRESS for connect), as the kernel;
 *   - write, writev and send on a blocking fd return only once every byte is written (or
 *     the timeout or an error ends it, with the bytes written so far), as the kernel does;
 *   - poll with a timeout waits in the engine (several fds: through a private epoll fd);
 *   - close tells the fiber IO layer (fb_close: waiters wake with EBADF, the engine forgets
 *     the fd) before the number is freed;
 *   - sleep, usleep and nanosleep suspend only the fiber (fb_sleep).
 *
 * Not seen by any hook: calls glibc makes internally (getaddrinfo's DNS queries use hidden
 * aliases of connect, poll, sendto and recvfrom, so a DNS lookup still blocks the thread;
 * "localhost" is answered from /etc/hosts and does not), ioctl(FIONBIO), dup2 onto a
 * hooked fd number, and fds closed by glibc internally. The O_NONBLOCK set in secret lives
 * on the open file description: another thread or process sharing the file sees it too.
 */

/* Serve the calling thread's fiber calls through the hooks from now on. Returns 0, or -1 with
 * errno ENOSYS when libc's functions could not be found (a statically linked libc). */
int fb_hook_enable(void);
void fb_hook_disable(void);
bool fb_hook_enabled(void);

/* Per thread: calls served cooperatively, and how many of them suspended their fiber. */
typedef struct fb_hook_stats {
    uint64_t calls;
    uint64_t waits;
} fb_hook_stats;
void fb_hook_get_stats(fb_hook_stats *out);

#ifdef __cplusplus
}
#endif
#endif
