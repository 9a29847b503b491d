/* echo_session.h - the one blocking echo session shared by the thread, fork and fiber models. */
#ifndef SWITCHYARD_ECHO_SESSION_H
#define SWITCHYARD_ECHO_SESSION_H

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

/* Plain blocking socket IO: ctx is a pointer to the int fd. */
extern const struct srv_io srv_fd_io_template;
static inline struct srv_io srv_fd_io(int *fd)
{
    struct srv_io io = srv_fd_io_template;
    io.ctx = fd;
    return io;
}

#endif
