/* echo_session.c - the echo session (echo_session.h's loop, then the close) and plain socket IO. */
#include "echo_session.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

uint64_t srv_echo_session(const struct srv_io *io, void *buf, size_t cap, srv_counter *bytes)
{
    uint64_t total = srv_echo_loop(io, buf, cap, bytes);
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
