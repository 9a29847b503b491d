/* hook.c - libc IO calls interposed with dlsym(RTLD_NEXT): cooperative inside fibers, libc
 * elsewhere. */
#define _GNU_SOURCE
#include "hook.h"
#include "hot_text.h"
#include "io.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/*
 * Why dlsym(RTLD_NEXT) and not link-time wrapping (-Wl,--wrap=read). Both see the calls the
 * program's own objects make, so both would serve echo-server (statically linked against the
 * project's libraries). They differ in what else they see. --wrap rewrites only the
 * references inside the objects of that one link: a call from a shared library (libevent, a
 * database or HTTP client library, anything dlopen'ed) still reaches libc directly, which
 * defeats the point of hooking unmodified blocking code. A definition in the executable,
 * exported to the dynamic symbol table (the fiberhook target adds
 * --export-dynamic-symbol for each name), is what every shared object's `read` resolves to,
 * and RTLD_NEXT then finds libc's (or a sanitizer's interceptor, which forwards to libc).
 * Neither approach sees glibc's calls to itself: getaddrinfo reaches connect, poll, sendto
 * and recvfrom through hidden internal aliases, so a DNS lookup blocks the thread under
 * either (libfiber ships its own resolver for that reason). The costs of RTLD_NEXT are one
 * dlsym per name at start-up and an indirect call on every fall-through; it needs a
 * dynamically linked libc, which every binary here has.
 *
 * Recursion: the fiber IO layer calls libc itself (fb_close calls close, fb_read calls read).
 * The hooks never call fb_read or fb_write; they call libc's function through the pointer and
 * wait with fb_wait or fb_sleep, which make no hooked call. fb_close does call close, so the
 * close hook marks the fd it is closing and lets that inner call through to libc.
 */

#define NS_PER_S  1000000000LL
#define NS_PER_MS 1000000LL

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);
typedef int (*accept4_fn)(int, struct sockaddr *, socklen_t *, int);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*close_fn)(int);
typedef unsigned (*sleep_fn)(unsigned);
typedef int (*usleep_fn)(useconds_t);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*fcntl_fn)(int, int, ...);
typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);

static struct {
    read_fn read;
    write_fn write;
    recv_fn recv;
    send_fn send;
    readv_fn readv, writev;
    accept_fn accept;
    accept4_fn accept4;
    connect_fn connect;
    poll_fn poll;
    close_fn close;
    sleep_fn sleep;
    usleep_fn usleep;
    nanosleep_fn nanosleep;
    fcntl_fn fcntl, fcntl64;
    setsockopt_fn setsockopt;
} libc;

/* What the hooks know about an fd they manage (one process-wide table, indexed by fd). */
typedef struct hook_fd {
    bool known;             /* prepared: O_NONBLOCK is set on the file, by the caller or by us */
    bool user_nonblock;     /* the caller asked for O_NONBLOCK: hand EAGAIN back */
    int64_t rcv_ns, snd_ns; /* SO_RCVTIMEO, SO_SNDTIMEO; 0 = none */
} hook_fd;

static hook_fd *fds;
static size_t nfds;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool resolved;

static __thread bool tls_on;
static __thread int tls_closing = -1; /* the fd the close hook is handing to fb_close */
static __thread fb_hook_stats tls_stats;

static void resolve(void)
{
#define FIND(name) (libc.name = (__typeof__(libc.name))dlsym(RTLD_NEXT, #name))
    resolved = FIND(read) && FIND(write) && FIND(recv) && FIND(send) && FIND(readv) &&
               FIND(writev) && FIND(accept) && FIND(accept4) && FIND(connect) && FIND(poll) &&
               FIND(close) && FIND(sleep) && FIND(usleep) && FIND(nanosleep) && FIND(fcntl) &&
               FIND(setsockopt);
    FIND(fcntl64); /* glibc 2.28 and later; fcntl serves when it is missing */
    if (!libc.fcntl64) libc.fcntl64 = libc.fcntl;
#undef FIND
    struct rlimit rl;
    size_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY
                   ? (size_t)rl.rlim_max
                   : 65536;
    if (n > (1u << 20)) n = 1u << 20;
    fds = calloc(n, sizeof *fds);
    nfds = fds ? n : 0;
}

/* Every hook may run before main (a constructor elsewhere calling read): resolve on demand. */
#define REAL(name) (__builtin_expect(libc.name != NULL, 1) ? libc.name : (ensure(), libc.name))

static void ensure(void)
{
    pthread_once(&once, resolve);
}

__attribute__((constructor)) static void hook_init(void)
{
    ensure();
}

int fb_hook_enable(void)
{
    ensure();
    if (!resolved || !nfds) {
        errno = ENOSYS;
        return -1;
    }
    tls_on = true;
    return 0;
}

void fb_hook_disable(void)
{
    tls_on = false;
}

bool fb_hook_enabled(void)
{
    return tls_on;
}

void fb_hook_get_stats(fb_hook_stats *out)
{
    *out = tls_stats;
}

/* ---- the common part -------------------------------------------------------------------- */

/* Cooperative only on an enabled thread, inside a fiber, with a fiber IO runtime. */
static inline bool active(void)
{
    return tls_on && fb_self() && fb_io_current();
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int64_t timeval_ns(const struct timeval *tv)
{
    return (int64_t)tv->tv_sec * NS_PER_S + (int64_t)tv->tv_usec * 1000;
}

static void forget(int fd)
{
    if (fd >= 0 && (size_t)fd < nfds) fds[fd].known = false;
}

/*
 * The fd's record, prepared on first use: O_NONBLOCK set unless the caller had set it, and
 * the socket timeouts read. NULL means "leave this call to libc": no record (out of range,
 * bad fd) or a file that never blocks in a way a wait could help (regular files, ttys are
 * left alone: switching a terminal to non-blocking would leak into the shell).
 */
static hook_fd *prepare(int fd)
{
    if (fd < 0 || (size_t)fd >= nfds) return NULL;
    hook_fd *h = &fds[fd];
    if (h->known) return h;
    struct stat st;
    if (fstat(fd, &st) < 0 || !(S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))) return NULL;
    int fl = REAL(fcntl)(fd, F_GETFL);
    if (fl < 0) return NULL;
    if (!(fl & O_NONBLOCK) && REAL(fcntl)(fd, F_SETFL, fl | O_NONBLOCK) < 0) return NULL;
    *h = (hook_fd){.known = true, .user_nonblock = (fl & O_NONBLOCK) != 0};
    if (S_ISSOCK(st.st_mode)) {
        struct timeval tv;
        socklen_t len = sizeof tv;
        if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) == 0) h->rcv_ns = timeval_ns(&tv);
        len = sizeof tv;
        if (getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) == 0) h->snd_ns = timeval_ns(&tv);
    }
    return h;
}

/* The record of an fd whose calls wait cooperatively, or NULL when libc should serve it. */
static inline hook_fd *managed(int fd)
{
    if (!active()) return NULL;
    hook_fd *h = prepare(fd);
    if (!h || h->user_nonblock) return NULL;
    tls_stats.calls++;
    return h;
}

static int64_t deadline_after(int64_t timeout_ns)
{
    return timeout_ns > 0 ? now_ns() + timeout_ns : -1;
}

/*
 * Wait in the fiber IO layer until fd is ready for dir or the deadline (-1: none) passes;
 * running out is EAGAIN, as for a socket timeout. A second fiber waiting on the same fd and
 * direction (fb_wait allows one) is not an error for blocking code: it polls every
 * millisecond instead.
 */
static int wait_fd(int fd, uint32_t dir, int64_t deadline)
{
    for (;;) {
        int64_t left = FB_FOREVER;
        if (deadline >= 0) {
            left = deadline - now_ns();
            if (left <= 0) {
                errno = EAGAIN;
                return -1;
            }
        }
        tls_stats.waits++;
        if (fb_wait(fd, dir, left) == 0) return 0;
        if (errno == ETIMEDOUT) errno = EAGAIN;
        if (errno != EBUSY) return -1;
        fb_sleep(NS_PER_MS);
    }
}

/* fb_close, whose own close(2) must reach libc rather than this hook again. */
static int close_through_io(int fd)
{
    int saved = tls_closing;
    tls_closing = fd;
    int rc = fb_close(fd);
    tls_closing = saved;
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* read, recv, write and send are in every echo-server model's path, hooks enabled or not:
 * on a thread that has not enabled them each goes straight to libc, a tail call with no
 * frame, and the hooked_ form does the rest. */
static __attribute__((noinline)) ssize_t hooked_read(int fd, void *buf, size_t len)
{
    hook_fd *h = managed(fd);
    if (!h) return REAL(read)(fd, buf, len);
    int64_t deadline = deadline_after(h->rcv_ns);
    for (;;) {
        ssize_t n = libc.read(fd, buf, len);
        if (n >= 0 || errno != EAGAIN || wait_fd(fd, FB_IN, deadline) < 0) return n >= 0 ? n : -1;
    }
}

ssize_t read(int fd, void *buf, size_t len)
{
    if (__builtin_expect(!tls_on && libc.read != NULL, 1)) return libc.read(fd, buf, len);
    return hooked_read(fd, buf, len);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    hook_fd *h = managed(fd);
    if (!h) return REAL(readv)(fd, iov, iovcnt);
    int64_t deadline = deadline_after(h->rcv_ns);
    for (;;) {
        ssize_t n = libc.readv(fd, iov, iovcnt);
        if (n >= 0 || errno != EAGAIN || wait_fd(fd, FB_IN, deadline) < 0) return n >= 0 ? n : -1;
    }
}

/* MSG_WAITALL keeps its meaning: collect len bytes unless end of file, an error or the
 * timeout comes first (then what arrived so far). */
static __attribute__((noinline)) ssize_t hooked_recv(int fd, void *buf, size_t len, int flags)
{
    hook_fd *h = (flags & MSG_DONTWAIT) ? NULL : managed(fd);
    if (!h) return REAL(recv)(fd, buf, len, flags);
    int64_t deadline = deadline_after(h->rcv_ns);
    size_t got = 0;
    for (;;) {
        ssize_t n = libc.recv(fd, (char *)buf + got, len - got, flags);
        if (n > 0) {
            got += (size_t)n;
            if (!(flags & MSG_WAITALL) || got == len) return (ssize_t)got;
            continue;
        }
        if (n == 0) return (ssize_t)got;
        if (errno != EAGAIN || wait_fd(fd, FB_IN, deadline) < 0) return got ? (ssize_t)got : -1;
    }
}

ssize_t HOT_TEXT recv(int fd, void *buf, size_t len, int flags)
{
    if (__builtin_expect(!tls_on && libc.recv != NULL, 1)) return libc.recv(fd, buf, len, flags);
    return hooked_recv(fd, buf, len, flags);
}

/* ---- writing: a blocking write returns once every byte is written --------------------------- */

static __attribute__((noinline)) ssize_t hooked_write(int fd, const void *buf, size_t len)
{
    hook_fd *h = managed(fd);
    if (!h) return REAL(write)(fd, buf, len);
    int64_t deadline = deadline_after(h->snd_ns);
    size_t done = 0;
    for (;;) {
        ssize_t n = libc.write(fd, (const char *)buf + done, len - done);
        if (n > 0 && (done += (size_t)n) < len) continue;
        if (n >= 0) return (ssize_t)done;
        if (errno != EAGAIN || wait_fd(fd, FB_OUT, deadline) < 0) return done ? (ssize_t)done : -1;
    }
}

ssize_t write(int fd, const void *buf, size_t len)
{
    if (__builtin_expect(!tls_on && libc.write != NULL, 1)) return libc.write(fd, buf, len);
    return hooked_write(fd, buf, len);
}

static __attribute__((noinline)) ssize_t hooked_send(int fd, const void *buf, size_t len, int flags)
{
    hook_fd *h = (flags & MSG_DONTWAIT) ? NULL : managed(fd);
    if (!h) return REAL(send)(fd, buf, len, flags);
    int64_t deadline = deadline_after(h->snd_ns);
    size_t done = 0;
    for (;;) {
        ssize_t n = libc.send(fd, (const char *)buf + done, len - done, flags);
        if (n > 0 && (done += (size_t)n) < len) continue;
        if (n >= 0) return (ssize_t)done;
        if (errno != EAGAIN || wait_fd(fd, FB_OUT, deadline) < 0) return done ? (ssize_t)done : -1;
    }
}

ssize_t HOT_TEXT send(int fd, const void *buf, size_t len, int flags)
{
    if (__builtin_expect(!tls_on && libc.send != NULL, 1)) return libc.send(fd, buf, len, flags);
    return hooked_send(fd, buf, len, flags);
}

/* After a partial write the rest of the current element goes out alone (write), then the
 * remaining elements as they are (writev): no copy of the caller's array is needed. */
ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    hook_fd *h = managed(fd);
    size_t total = 0;
    for (int i = 0; h && i < iovcnt; i++)
        total += iov[i].iov_len;
    if (!h || total == 0) return REAL(writev)(fd, iov, iovcnt);
    int64_t deadline = deadline_after(h->snd_ns);
    size_t done = 0, off = 0;
    int i = 0;
    while (done < total) {
        while (off == 0 && iov[i].iov_len == 0)
            i++;
        ssize_t n = off ? libc.write(fd, (const char *)iov[i].iov_base + off, iov[i].iov_len - off)
                        : libc.writev(fd, iov + i, iovcnt - i);
        if (n < 0) {
            if (errno != EAGAIN || wait_fd(fd, FB_OUT, deadline) < 0)
                return done ? (ssize_t)done : -1;
            continue;
        }
        if (n == 0) break;
        done += (size_t)n;
        for (size_t left = (size_t)n; left > 0;) {
            size_t rest = iov[i].iov_len - off;
            if (left < rest) {
                off += left;
                break;
            }
            left -= rest;
            off = 0;
            i++;
        }
    }
    return (ssize_t)done;
}

/* ---- connections ---------------------------------------------------------------------------- */

int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    hook_fd *h = managed(fd);
    int c;
    if (!h) {
        c = REAL(accept4)(fd, addr, addrlen, flags);
    } else {
        int64_t deadline = deadline_after(h->rcv_ns);
        while ((c = libc.accept4(fd, addr, addrlen, flags)) < 0 &&
               (errno == EAGAIN && wait_fd(fd, FB_IN, deadline) == 0))
            ;
    }
    forget(c); /* a new file under this number: whatever was known about it is stale */
    return c;
}

int accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
    if (!active()) {
        int c = REAL(accept)(fd, addr, addrlen);
        forget(c);
        return c;
    }
    return accept4(fd, addr, addrlen, 0); /* the same call on Linux */
}

/* A blocking connect finishes the handshake before it returns; with SO_SNDTIMEO it gives up
 * with EINPROGRESS, as Linux does. */
int connect(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
    hook_fd *h = managed(fd);
    if (!h) return REAL(connect)(fd, addr, addrlen);
    if (libc.connect(fd, addr, addrlen) == 0) return 0;
    if (errno != EINPROGRESS) return -1;
    if (wait_fd(fd, FB_OUT, deadline_after(h->snd_ns)) < 0) {
        if (errno == EAGAIN) errno = EINPROGRESS;
        return -1;
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return -1;
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

/* ---- poll ------------------------------------------------------------------------------------ */

/* Several fds (or both directions of one): a private epoll fd holds them all, and the fiber
 * waits for that one fd to turn readable. Returns 0 when ready or timed out, -1 on error. */
static int wait_many(struct pollfd *p, nfds_t n, int64_t timeout_ns)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -1;
    for (nfds_t i = 0; i < n; i++) {
        if (p[i].fd < 0) continue;
        struct epoll_event ev = {.events = (uint32_t)p[i].events &
                                           (EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLRDHUP),
                                 .data.u64 = i};
        /* EPERM: a regular file, always ready (and it was not, or poll would have said so);
         * EEXIST: the same fd twice, its first entry serves both. */
        if (epoll_ctl(ep, EPOLL_CTL_ADD, p[i].fd, &ev) < 0 && errno != EPERM && errno != EEXIST) {
            close_through_io(ep);
            return -1;
        }
    }
    tls_stats.waits++;
    int rc = fb_wait(ep, FB_IN, timeout_ns);
    int err = errno;
    close_through_io(ep);
    if (rc < 0 && err != ETIMEDOUT) {
        errno = err;
        return -1;
    }
    return 0;
}

int poll(struct pollfd *p, nfds_t n, int timeout_ms)
{
    if (timeout_ms == 0 || !active()) return REAL(poll)(p, n, timeout_ms);
    tls_stats.calls++;
    int64_t deadline = timeout_ms < 0 ? -1 : now_ns() + timeout_ms * NS_PER_MS;
    for (;;) {
        int ready = libc.poll(p, n, 0);
        if (ready != 0) return ready;
        int64_t left = deadline < 0 ? FB_FOREVER : deadline - now_ns();
        if (deadline >= 0 && left <= 0) return 0;
        if (n == 0) {
            /* poll(NULL, 0, t) is the classic portable sleep; forever is a very long one. */
            tls_stats.waits++;
            fb_sleep(left < 0 ? INT64_MAX / 4 : left);
            continue;
        }
        short dir = n == 1 ? (short)(p[0].events & (POLLIN | POLLOUT)) : 0;
        if (n == 1 && (dir == POLLIN || dir == POLLOUT) && p[0].fd >= 0) {
            tls_stats.waits++;
            if (fb_wait(p[0].fd, dir == POLLIN ? FB_IN : FB_OUT, left) == 0 || errno == ETIMEDOUT)
                continue;
            if (errno != EBUSY) return -1;
        }
        if (wait_many(p, n, left) < 0) return -1;
    }
}

/* ---- close and the sleeps ---------------------------------------------------------------- */

int close(int fd)
{
    forget(fd);
    /* From the scheduler context too: the engine must forget the fd before its number can
     * be reused, wherever the close happens on this thread. */
    if (tls_on && fd != tls_closing && fb_io_current()) {
        tls_stats.calls++;
        return close_through_io(fd);
    }
    return REAL(close)(fd);
}

unsigned sleep(unsigned seconds)
{
    if (!active()) return REAL(sleep)(seconds);
    tls_stats.calls++;
    tls_stats.waits++;
    fb_sleep((int64_t)seconds * NS_PER_S);
    return 0;
}

int usleep(useconds_t usec)
{
    if (!active()) return REAL(usleep)(usec);
    tls_stats.calls++;
    tls_stats.waits++;
    fb_sleep((int64_t)usec * 1000);
    return 0;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!active()) return REAL(nanosleep)(req, rem);
    if (!req || req->tv_sec < 0 || req->tv_nsec < 0 || req->tv_nsec >= NS_PER_S) {
        errno = EINVAL;
        return -1;
    }
    tls_stats.calls++;
    tls_stats.waits++;
    fb_sleep((int64_t)req->tv_sec * NS_PER_S + req->tv_nsec);
    if (rem) *rem = (struct timespec){0, 0};
    return 0;
}

/* ---- the caller's view of the flags and timeouts ----------------------------------------- */

/*
 * On an fd the hooks manage, F_GETFL shows O_NONBLOCK only if the caller set it, and F_SETFL
 * records what the caller wants while keeping the file non-blocking underneath. Like glibc's
 * own fcntl, the third argument is taken as a pointer-sized word whatever the command.
 */
static int fcntl_common(fcntl_fn real, int fd, int cmd, void *arg)
{
    hook_fd *h = fd >= 0 && (size_t)fd < nfds && fds[fd].known ? &fds[fd] : NULL;
    if (h && cmd == F_GETFL) {
        int fl = real(fd, F_GETFL);
        return fl >= 0 && !h->user_nonblock ? fl & ~O_NONBLOCK : fl;
    }
    if (h && cmd == F_SETFL) {
        int fl = (int)(intptr_t)arg;
        int rc = real(fd, F_SETFL, fl | O_NONBLOCK);
        if (rc == 0) h->user_nonblock = (fl & O_NONBLOCK) != 0;
        return rc;
    }
    return real(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(REAL(fcntl), fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(REAL(fcntl64), fd, cmd, arg);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    int rc = REAL(setsockopt)(fd, level, name, val, len);
    if (rc == 0 && level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO) &&
        len >= (socklen_t)sizeof(struct timeval) && fd >= 0 && (size_t)fd < nfds && fds[fd].known) {
        int64_t ns = timeval_ns(val);
        if (name == SO_RCVTIMEO)
            fds[fd].rcv_ns = ns;
        else
            fds[fd].snd_ns = ns;
    }
    return rc;
}
