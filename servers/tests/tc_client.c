/* tc_client.c - test clients that check every echoed byte, on non-blocking sockets. */
#include "tc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * The bytes of connection seed's stream at offset off are pattern[(seed + off) % PERIOD].
 * PERIOD is prime and the table carries CHUNK extra bytes, so any chunk is one contiguous
 * slice: a dropped, doubled, flipped or reordered byte shows up as a mismatch.
 */
#define PERIOD 65537u
#define CHUNK  65536u
static unsigned char pattern[PERIOD + CHUNK];

static const unsigned char *stream_at(uint32_t seed, uint64_t off)
{
    if (pattern[0] == 0 && pattern[1] == 0) {
        uint64_t x = 0x9e3779b97f4a7c15ULL;
        for (size_t i = 0; i < PERIOD; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            pattern[i] = (unsigned char)(x >> 24);
        }
        pattern[0] |= 1; /* so the table is never mistaken for uninitialised */
        memcpy(pattern + PERIOD, pattern, CHUNK);
    }
    return pattern + (seed + off) % PERIOD;
}

const char *tc_rc_name(int rc)
{
    static const char *const names[] = {"ok",        "closed early", "reset",
                                        "timed out", "wrong bytes",  "error"};
    return rc >= 0 && rc <= TC_ERROR ? names[rc] : "?";
}

int tc_connect(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t el = sizeof err;
    if (poll(&p, 1, 5000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
        close(fd);
        return -1;
    }
    return fd;
}

static int io_error(int err)
{
    return err == ECONNRESET || err == EPIPE ? TC_RESET : TC_ERROR;
}

/* Read what is there and check it; TC_OK with *got advanced, or the failure. */
static int take(int fd, uint32_t seed, uint64_t off, size_t want, size_t *got)
{
    unsigned char buf[CHUNK];
    size_t room = want < CHUNK ? want : CHUNK;
    ssize_t n = recv(fd, buf, room ? room : 1, 0);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? TC_OK : io_error(errno);
    if (n == 0) return TC_CLOSED;
    if ((size_t)n > want || memcmp(buf, stream_at(seed, off), (size_t)n) != 0) return TC_MISMATCH;
    *got += (size_t)n;
    return TC_OK;
}

static int give(int fd, uint32_t seed, uint64_t off, size_t left, size_t *sent)
{
    ssize_t n = send(fd, stream_at(seed, off), left < CHUNK ? left : CHUNK, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? TC_OK : io_error(errno);
    *sent += (size_t)n;
    return TC_OK;
}

int tc_echo(int fd, uint32_t seed, uint64_t *off, size_t size, int timeout_ms)
{
    long long deadline = tc_now_ms() + timeout_ms;
    size_t sent = 0, got = 0;
    int rc = TC_OK;
    while (rc == TC_OK && got < size) {
        struct pollfd p = {fd, (short)(POLLIN | (sent < size ? POLLOUT : 0)), 0};
        int left = (int)(deadline - tc_now_ms());
        if (left <= 0 || poll(&p, 1, left) == 0) return TC_TIMEOUT;
        if (p.revents & POLLOUT) rc = give(fd, seed, *off + sent, size - sent, &sent);
        if (rc == TC_OK && (p.revents & (POLLIN | POLLHUP | POLLERR)))
            rc = take(fd, seed, *off + got, sent - got, &got);
    }
    *off += got;
    return rc;
}

int tc_wait_closed(int fd, int timeout_ms)
{
    long long deadline = tc_now_ms() + timeout_ms;
    char buf[4096];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int left = (int)(deadline - tc_now_ms());
        if (poll(&p, 1, left > 0 ? left : 0) <= 0) return TC_TIMEOUT;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0) return TC_CLOSED;
        if (n < 0 && errno != EAGAIN && errno != EINTR) return io_error(errno);
    }
}

void tc_reset_close(int fd)
{
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

struct mconn {
    int fd;
    uint32_t seed;
    uint64_t base;    /* stream offset where the current message starts */
    size_t sent, got; /* within the current message */
    int round;
    bool shut, done;
};

/* One poll wake-up for one connection; TC_OK or its failure. */
static int step(struct mconn *c, short revents, const struct tc_load *cfg)
{
    int rc = TC_OK;
    if ((revents & POLLOUT) && c->sent < cfg->size)
        rc = give(c->fd, c->seed, c->base + c->sent, cfg->size - c->sent, &c->sent);
    if (rc == TC_OK && cfg->halfclose && !c->shut && c->sent == cfg->size) {
        shutdown(c->fd, SHUT_WR);
        c->shut = true;
    }
    if (rc != TC_OK || !(revents & (POLLIN | POLLHUP | POLLERR))) return rc;
    rc = take(c->fd, c->seed, c->base + c->got, c->sent - c->got, &c->got);
    if (rc == TC_CLOSED && c->shut && c->got == cfg->size) {
        c->done = true; /* EOF after everything came back: what half-close must give */
        return TC_OK;
    }
    if (rc == TC_OK && c->got == cfg->size && !cfg->halfclose) {
        c->base += cfg->size;
        c->sent = c->got = 0;
        c->done = ++c->round == cfg->rounds;
    }
    return rc;
}

static int run_all(struct mconn *cs, struct pollfd *ps, const struct tc_load *cfg, char *why,
                   size_t len)
{
    long long deadline = tc_now_ms() + cfg->timeout_ms;
    for (int left = cfg->conns; left > 0;) {
        for (int i = 0; i < cfg->conns; i++) {
            ps[i].fd = cs[i].done ? -1 : cs[i].fd;
            ps[i].events = (short)(POLLIN | (cs[i].sent < cfg->size ? POLLOUT : 0));
        }
        int wait = (int)(deadline - tc_now_ms());
        if (wait <= 0 || poll(ps, (nfds_t)cfg->conns, wait) <= 0) {
            snprintf(why, len, "timed out with %d of %d connections unfinished", left, cfg->conns);
            return TC_TIMEOUT;
        }
        for (int i = 0; i < cfg->conns; i++) {
            if (cs[i].done || !ps[i].revents) continue;
            int rc = step(&cs[i], ps[i].revents, cfg);
            if (rc != TC_OK) {
                snprintf(why, len, "connection %d: %s in round %d after %zu of %zu bytes", i,
                         tc_rc_name(rc), cs[i].round, cs[i].got, cfg->size);
                return rc;
            }
            left -= cs[i].done;
        }
    }
    return TC_OK;
}

int tc_echo_many(int port, const struct tc_load *cfg, char *why, size_t len)
{
    struct mconn *cs = calloc((size_t)cfg->conns, sizeof *cs);
    struct pollfd *ps = calloc((size_t)cfg->conns, sizeof *ps);
    int rc = cs && ps ? TC_OK : TC_ERROR;
    snprintf(why, len, "out of memory");
    for (int i = 0; rc == TC_OK && i < cfg->conns; i++) {
        cs[i].fd = tc_connect(port);
        cs[i].seed = (uint32_t)i * 7919u + (uint32_t)cfg->size;
        if (cs[i].fd < 0) {
            snprintf(why, len, "connect %d failed: %s", i, strerror(errno));
            rc = TC_ERROR;
        }
    }
    if (rc == TC_OK) rc = run_all(cs, ps, cfg, why, len);
    for (int i = 0; cs && i < cfg->conns; i++)
        if (cs[i].fd > 0) close(cs[i].fd);
    free(cs);
    free(ps);
    return rc;
}
