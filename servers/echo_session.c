/* echo_session.c - read what arrives, write all of it back, until EOF: written once. */
#include "echo_session.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

/* Write all of buf, across partial writes; -1 when the connection failed. */
static int write_all(const struct srv_io *io, const char *buf, size_t len, srv_counter *bytes)
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

uint64_t srv_echo_session(const struct srv_io *io, void *buf, size_t cap, srv_counter *bytes)
{
    uint64_t total = 0;
    for (;;) {
        ssize_t n = io->read(io->ctx, buf, cap);
        if (n < 0 && errno == EINTR) continue;
        /* EOF after everything was echoed, or an error such as a reset: the session ends. */
        if (n <= 0) break;
        if (write_all(io, buf, (size_t)n, bytes) < 0) break;
        total += (uint64_t)n;
    }
    io->close(io->ctx);
    return total;
}

static ssize_t fd_read(void *ctx, void *buf, size_t len)
{
    return recv(*(int *)ctx, buf, len, 0);
}

/* MSG_NOSIGNAL: a peer that reset the connection gives EPIPE here, never SIGPIPE. */
static ssize_t fd_write(void *ctx, const void *buf, size_t len)
{
    return send(*(int *)ctx, buf, len, MSG_NOSIGNAL);
}

static int fd_close(void *ctx)
{
    return close(*(int *)ctx);
}

const struct srv_io srv_fd_io_template = {fd_read, fd_write, fd_close, NULL};
