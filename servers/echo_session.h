/* echo_session.h - the one blocking echo session shared by the thread, fork and fiber models. */
#ifndef SWITCHYARD_ECHO_SESSION_H
#define SWITCHYARD_ECHO_SESSION_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "server.h"

/*
 * The IO a session needs, as three calls on an opaque ctx. Blocking semantics: read waits
 * until at least one byte arrived (returns > 0), the peer finished sending (0), or an error
 * (-1 with errno); write waits until it wrote at least one byte (it may write fewer than
 * asked, or all of them) or fails (-1 with errno). Threads and processes plug in plain
 * recv/send on a blocking socket (srv_fd_io); the fiber model plugs in its fiber read and
 * write, which suspend only the calling fiber. The session itself assumes nothing about who
 * runs it: no thread-local state, no signals, no allocation.
 */
struct srv_io {
    ssize_t (*read)(void *ctx, void *buf, size_t len);
    ssize_t (*write)(void *ctx, const void *buf, size_t len);
    int (*close)(void *ctx);
    void *ctx;
};

/* A buffer of this size is plenty for full-speed echo; the caller decides where it lives. */
#define SRV_ECHO_BUF 16384

/*
 * Echo until the peer's EOF (half-close included: everything read is written back first),
 * then close. A read or write error (reset, broken pipe) ends this session only. Every
 * chunk written is added to *bytes as it goes (NULL: not counted), so a session cut short
 * has still been counted. Returns the bytes echoed by this session.
 */
uint64_t srv_echo_session(const struct srv_io *io, void *buf, size_t cap, srv_counter *bytes);

/* Write all of buf, across partial writes; -1 when the connection failed. */
static inline __attribute__((always_inline)) int
srv_write_all(const struct srv_io *io, const char *buf, size_t len, srv_counter *bytes)
{
    while (len > 0) {
        ssize_t n = io->write(io->ctx, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        if (bytes) srv_add(bytes, (uint64_t)n);
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/*
 * srv_echo_session without the close: echo until EOF or an error, return the bytes echoed.
 * Inline, so that a caller whose io is a constant gets direct calls and keeps ctx in a
 * register (the fiber model's default session, server_fiber.c); everyone else calls
 * srv_echo_session, which is this loop and io->close.
 */
static inline __attribute__((always_inline)) uint64_t
srv_echo_loop(const struct srv_io *io, void *buf, size_t cap, srv_counter *bytes)
{
    uint64_t total = 0;
    for (;;) {
        ssize_t n = io->read(io->ctx, buf, cap);
        if (n < 0 && errno == EINTR) continue;
        /* EOF after everything was echoed, or an error such as a reset: the session ends. */
        if (n <= 0) break;
        if (srv_write_all(io, buf, (size_t)n, bytes) < 0) break;
        total += (uint64_t)n;
    }
    return total;
}

/* Plain blocking socket IO: ctx is a pointer to the int fd. */
extern const struct srv_io srv_fd_io_template;
static inline struct srv_io srv_fd_io(int *fd)
{
    struct srv_io io = srv_fd_io_template;
    io.ctx = fd;
    return io;
}

#endif
