/* echo-load's core: the connection slot's state machine from connect through requests, echoes
 * and failures, the byte-by-byte check of every echo, and the ramp-up's first echoes. Where modes
 * differ it asks the worker's mode (load_core.h). */
#define _GNU_SOURCE
#include "load_worker.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define RETRY_NS (10 * 1000 * 1000LL) /* a failed slot waits this long before reconnecting */
/*
 * Reads of one slot per turn of the worker's loop. A pipelined stream of large echoes stays
 * readable for as long as the run lasts (each completed request sends the next), so reading until
 * EAGAIN would never return to the loop: no phase change, no --max-time, no signal, and the
 * other connections starve into timeouts.
 */
#define READ_BUDGET 16

static void slot_fail(struct worker *w, struct slot *s, enum ld_error kind, int64_t now);
static void begin_request(struct worker *w, struct slot *s, int64_t now, int64_t due);
static void send_some(struct worker *w, struct slot *s, int64_t now);

/* The worker a mode's pointer belongs to: struct ld_core is its first member. */
static struct worker *worker_of(struct ld_core *c)
{
    return (struct worker *)c;
}

void ld__close_slot(struct slot *s)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

static void end_request(struct worker *w, struct slot *s)
{
    if (s->busy) {
        s->busy = false;
        unsigned n = w->c.mode->drop ? w->c.mode->drop(&w->c, s, NULL) : 0;
        w->c.inflight -= n ? n : 1; /* n: the mode's requests (pipelined) */
    }
}

/*
 * A first echo that comes back wrong, or cut short, once may be chance, and the slot tries again
 * on a fresh connection; twice, it is the server, and retrying until the ramp-up's deadline would
 * only count the same failure thousands of times: the whole run stops.
 */
static void check_first_echo(struct worker *w, struct slot *s, enum ld_error kind)
{
    if (w->c.phase != PH_RAMP || !ld_error_is_fatal(kind) || ++s->ramp_fails < 2) return;
    int none = 0;
    if (atomic_compare_exchange_strong(&w->sync->stop, &none, LD_STOP_BAD_ECHO)) {
        w->c.res.bad_echo = true;
        w->c.res.bad_echo_error = kind;
        w->c.res.bad_echo_slot = s->id;
    }
}

static void slot_fail(struct worker *w, struct slot *s, enum ld_error kind, int64_t now)
{
    check_first_echo(w, s, kind);
    if (s->state == S_CONNECTING || kind == LD_ERR_CONNECT_FAILED ||
        kind == LD_ERR_CONNECT_TIMEOUT) {
        if (!w->connect_failing_since) w->connect_failing_since = now;
        w->last_connect_error = kind;
    }
    if (w->c.phase == PH_RAMP)
        w->c.res.ramp.errors[kind]++;
    else
        w->c.res.errors[kind]++;
    if (s->state == S_CONNECTING) w->connecting--;
    end_request(w, s);
    ld__close_slot(s);
    if (w->c.mode->failed && w->c.mode->failed(&w->c, s, now)) return;
    /* Waiting before reconnecting keeps a refusing server from turning this into a busy loop. */
    s->state = S_RETRY;
    s->deadline = now + RETRY_NS;
}

static enum ld_error connect_errno_kind(int err)
{
    switch (err) {
    case EADDRNOTAVAIL:
    case EADDRINUSE:
        return LD_ERR_ADDR_UNAVAILABLE;
    case ETIMEDOUT:
        return LD_ERR_CONNECT_TIMEOUT;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
        return LD_ERR_FD_EXHAUSTED;
    default:
        return LD_ERR_CONNECT_FAILED;
    }
}

/*
 * Binding each connection to its own loopback source address (with the port left to connect(),
 * IP_BIND_ADDRESS_NO_PORT) multiplies the usable 4-tuples by 253, so churn at tens of thousands
 * of connections per second does not run out of ephemeral ports while closed sockets sit in
 * TIME_WAIT.
 */
static int bind_source(const struct worker *w, const struct slot *s, int fd)
{
    if (!w->c.cfg->spread || w->c.cfg->addr.ss_family != AF_INET) return 0;
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    struct sockaddr_in src = {.sin_family = AF_INET};
    uint32_t host = (127u << 24) | (uint32_t)(2 + (s->id + s->serial) % 253);
    src.sin_addr.s_addr = htonl(host);
    return bind(fd, (struct sockaddr *)&src, sizeof(src));
}

/* A ready slot's next step is its mode's. */
static void put_to_work(struct worker *w, struct slot *s, int64_t now)
{
    w->c.mode->ready(&w->c, s, now);
}

static void connected(struct worker *w, struct slot *s, int64_t now)
{
    w->c.res.connects++;
    w->connect_failing_since = 0;
    w->last_progress = now;
    w->connecting--;
    if (w->c.cfg->mode == LD_CHURN) {
        s->state = S_ACTIVE;
        s->req_end = s->chunk_end = w->c.cfg->size;
        s->deadline = s->t_start + secs_ns(w->c.cfg->timeout);
        send_some(w, s, now);
        return;
    }
    s->state = S_READY;
    if (w->c.phase == PH_RAMP) {
        struct ld_ramp *r = &w->c.res.ramp;
        r->connects++;
        r->last_connect = now;
        int64_t done = s->t_connected ? s->t_connected : ld_now_ns();
        ld_hist_record(&r->connect, (uint64_t)(done - s->t_connect));
        begin_request(w, s, now, now); /* the first echo, never counted as a request */
        return;
    }
    put_to_work(w, s, now);
}

/* On loopback the handshake often completes inside connect() itself: then its latency is the
 * call's, not the time until the event loop gets round to the connection's EPOLLOUT. */
static int64_t connect_done_at(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_state == TCP_ESTABLISHED)
        return ld_now_ns();
    return 0;
}

/* Opens a new connection for the slot; the outcome arrives as an epoll event or a failure. */
void ld__slot_open(struct worker *w, struct slot *s, int64_t now)
{
    const struct ld_config *cfg = w->c.cfg;
    s->serial++;
    s->seed = ld_payload_seed(cfg->seed, s->id, s->serial);
    s->tx = s->rx = 0;
    s->t_connect = now;
    s->t_connected = 0;
    int fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        bool exhausted = connect_errno_kind(errno) == LD_ERR_FD_EXHAUSTED;
        slot_fail(w, s, exhausted ? LD_ERR_FD_EXHAUSTED : LD_ERR_IO, now);
        return;
    }
    s->fd = fd;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (bind_source(w, s, fd) < 0) {
        slot_fail(w, s, LD_ERR_ADDR_UNAVAILABLE, now);
        return;
    }
    /* Ramp-up connect latency is each connection's own: its clock starts at its connect(), not
     * at the batch's `now`, which would charge it the time spent opening the ones before it. */
    bool ramp = w->c.phase == PH_RAMP;
    if (ramp) s->t_connect = ld_now_ns();
    int rc = connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addrlen);
    if (rc < 0 && errno != EINPROGRESS) {
        slot_fail(w, s, connect_errno_kind(errno), now);
        return;
    }
    if (ramp) s->t_connected = connect_done_at(fd);
    /* Registered once, after connect(), for both directions: no epoll_ctl per request. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = s};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        slot_fail(w, s, LD_ERR_IO, now);
        return;
    }
    s->state = S_CONNECTING;
    w->connecting++;
    s->deadline = now + secs_ns(cfg->connect_timeout);
    if (rc == 0) connected(w, s, now);
}

/*
 * A connect that succeeded is signalled by EPOLLOUT alone; only a failure (EPOLLERR/EPOLLHUP)
 * needs SO_ERROR to tell refused from timed out, which saves a syscall per churned connection.
 */
static void finish_connect(struct worker *w, struct slot *s, uint32_t ev, int64_t now)
{
    if (!(ev & (EPOLLERR | EPOLLHUP))) {
        connected(w, s, now);
        return;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err == 0) err = errno;
    slot_fail(w, s, connect_errno_kind(err), now);
}

static void mark_request(struct worker *w, struct slot *s, int64_t now, int64_t due)
{
    bool ramp = w->c.phase == PH_RAMP;
    s->busy = true;
    w->c.inflight++;
    s->t_start = now;
    s->t_due = due;
    if (ramp)
        s->counted = false;
    else if (w->c.mode->counts)
        s->counted = w->c.mode->counts(&w->c, due);
    else
        s->counted = w->c.phase == PH_MEASURE;
    if (s->counted && w->c.cfg->requests) w->c.issued++;
}

/* Starts one request: on the open connection (pingpong) or on a new one (churn). */
static void begin_request(struct worker *w, struct slot *s, int64_t now, int64_t due)
{
    mark_request(w, s, now, due);
    if (w->c.cfg->mode == LD_CHURN) {
        ld__slot_open(w, s, now);
        return;
    }
    s->state = S_ACTIVE;
    s->req_end = s->tx + w->c.cfg->size;
    /* With --chunk (slow mode only) the first chunk goes now and the mode sends the rest; a
     * ramp-up echo goes whole. */
    bool chunked = w->c.cfg->chunk && w->c.phase != PH_RAMP;
    s->chunk_end =
        chunked && w->c.cfg->chunk < w->c.cfg->size ? s->tx + w->c.cfg->chunk : s->req_end;
    s->deadline = now + secs_ns(w->c.cfg->timeout);
    send_some(w, s, now);
}

static void first_echo_done(struct worker *w, struct slot *s, int64_t now)
{
    struct ld_ramp *r = &w->c.res.ramp;
    if (!s->ramped) {
        s->ramped = true;
        w->ramp_left--;
        r->ready++;
        r->last_ready = now;
        ld_hist_record(&r->first_echo, (uint64_t)(now - s->t_start));
    }
    s->state = S_READY;
}

static void complete(struct worker *w, struct slot *s, int64_t now)
{
    end_request(w, s);
    if (w->c.phase == PH_RAMP) {
        first_echo_done(w, s, now);
        return;
    }
    if (s->counted) {
        w->c.res.requests++;
        w->c.res.bytes += w->c.cfg->size;
        ld_hist_record(&w->c.res.lat, (uint64_t)(now - s->t_due));
        w->c.last_done = now;
    }
    if (w->c.cfg->mode == LD_CHURN) {
        ld__close_slot(s);
        s->state = S_IDLE;
    } else {
        s->state = S_READY;
    }
    w->c.mode->echoed(&w->c, s, now);
}

static void send_some(struct worker *w, struct slot *s, int64_t now)
{
    while (s->tx < s->chunk_end) {
        size_t n = s->chunk_end - s->tx < BUF_SIZE ? (size_t)(s->chunk_end - s->tx) : BUF_SIZE;
        ld_payload_fill(s->seed, s->tx, w->sbuf, n);
        ssize_t k = send(s->fd, w->sbuf, n, MSG_NOSIGNAL);
        if (k > 0) {
            s->tx += (uint64_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; /* the EPOLLOUT edge resumes it */
        slot_fail(w, s, errno == EPIPE || errno == ECONNRESET ? LD_ERR_RESET : LD_ERR_IO, now);
        return;
    }
    if (s->tx < s->req_end && w->c.mode->paused) w->c.mode->paused(&w->c, s, now);
}

static void record_mismatch(struct worker *w, struct slot *s, size_t n, size_t owed, int64_t now)
{
    size_t at = 0;
    while (at < n && at < owed && w->rbuf[at] == w->ebuf[at])
        at++;
    enum ld_mismatch_kind kind =
        at >= owed ? LD_MM_EXTRA : ld_mismatch_classify(w->rbuf, w->ebuf, n, at);
    w->c.res.mismatch_kinds[kind]++;
    struct ld_mismatch_info *mi = &w->c.res.first_mismatch;
    if (!mi->seen) {
        *mi = (struct ld_mismatch_info){.seen = true,
                                        .kind = kind,
                                        .slot = s->id,
                                        .offset = s->rx + at,
                                        .expected = w->ebuf[at],
                                        .got = w->rbuf[at]};
    }
    slot_fail(w, s, LD_ERR_MISMATCH, now);
}

/* Checks n received bytes against the stream; false when the slot failed. */
static bool verify(struct worker *w, struct slot *s, size_t n, int64_t now)
{
    size_t owed = (size_t)(s->tx - s->rx); /* bytes sent and not yet echoed */
    size_t good = n < owed ? n : owed;
    /* One byte beyond what arrived lets the classifier recognise a dropped byte. */
    ld_payload_fill(s->seed, s->rx, w->ebuf, n + 1);
    if (n > owed || memcmp(w->rbuf, w->ebuf, good) != 0) {
        record_mismatch(w, s, n, owed, now);
        return false;
    }
    s->rx += n;
    w->c.res.bytes_all += n;
    return true;
}

/* The slot may have bytes left that no new edge will report: read on at the loop's next turn. */
static void read_later(struct worker *w, struct slot *s)
{
    if (s->again) return;
    s->again = true;
    w->again[(w->again_head + w->nagain++) % w->c.nslots] = (unsigned)(s - w->c.slots);
}

static void recv_some(struct worker *w, struct slot *s, int64_t now)
{
    for (unsigned reads = 0;; reads++) {
        if (reads == READ_BUDGET) {
            read_later(w, s);
            return;
        }
        ssize_t k = recv(s->fd, w->rbuf, BUF_SIZE, 0);
        if (k > 0) {
            w->last_progress = now;
            if (!verify(w, s, (size_t)k, now)) return;
            /* The mode's requests in flight (pipelined; a ramp-up echo goes alone). */
            const struct ld_mode_ops *m = w->c.mode;
            enum ld_took took = m->received ? m->received(&w->c, s, now) : LD_NOT_MINE;
            if (took == LD_STOP) return;
            if (took == LD_READ_ON) continue;
            if (s->state == S_ACTIVE && s->rx == s->req_end) {
                /* Nothing more is owed, so stop here instead of paying for a read that says
                 * EAGAIN; stray bytes would arrive with a fresh edge and fail verification. */
                complete(w, s, now);
                return;
            }
            continue;
        }
        if (k == 0) {
            slot_fail(w, s, LD_ERR_EARLY_CLOSE, now);
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        slot_fail(w, s, errno == ECONNRESET ? LD_ERR_RESET : LD_ERR_IO, now);
        return;
    }
}

void ld__on_event(struct worker *w, struct slot *s, uint32_t ev, int64_t now)
{
    if (s->fd < 0) return;
    if (s->state == S_CONNECTING) {
        finish_connect(w, s, ev, now);
        return;
    }
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) recv_some(w, s, now);
    if (s->fd >= 0 && s->state == S_ACTIVE && (ev & EPOLLOUT) && s->tx < s->chunk_end)
        send_some(w, s, now);
}

void ld__read_again(struct worker *w, int64_t now)
{
    for (unsigned n = w->nagain; n > 0; n--) {
        struct slot *s = &w->c.slots[w->again[w->again_head]];
        w->again_head = (w->again_head + 1) % w->c.nslots;
        w->nagain--;
        s->again = false;
        /* Since listed, the slot may have failed, or reconnected and still be connecting; any
         * connection it holds that is past its connect may have bytes to read. */
        if (s->fd >= 0 && (s->state == S_ACTIVE || s->state == S_READY)) recv_some(w, s, now);
    }
}

/* Timeouts and retries, checked every tick rather than kept in a timer structure per slot. */
void ld__scan(struct worker *w, int64_t now)
{
    for (unsigned i = 0; i < w->c.nslots; i++) {
        struct slot *s = &w->c.slots[i];
        if (s->state == S_CONNECTING && now > s->deadline) {
            slot_fail(w, s, LD_ERR_CONNECT_TIMEOUT, now);
        } else if (s->state == S_ACTIVE && now > s->deadline) {
            slot_fail(w, s, LD_ERR_TIMEOUT, now);
        } else if (s->state == S_RETRY && now >= s->deadline) {
            /* In rate mode the drain may still need connections for the backlog. */
            bool go = w->c.phase == PH_RAMP || w->c.phase == PH_WARMUP ||
                      w->c.phase == PH_MEASURE || (w->c.phase == PH_DRAIN && w->c.mode->open_loop);
            if (go && w->c.cfg->mode != LD_CHURN) {
                ld__slot_open(w, s, now);
            } else if (go && may_start(&w->c)) {
                s->state = S_IDLE;
                begin_request(w, s, now, now);
            } else {
                s->state = S_DONE;
            }
        }
    }
}

/* ---- the interface for modes (load_core.h) ------------------------------------------------- */

void ld_core_begin(struct ld_core *c, struct slot *s, int64_t now, int64_t due)
{
    begin_request(worker_of(c), s, now, due);
}

void ld_core_send(struct ld_core *c, struct slot *s, int64_t now)
{
    send_some(worker_of(c), s, now);
}

void ld_core_fail(struct ld_core *c, struct slot *s, enum ld_error kind, int64_t now)
{
    slot_fail(worker_of(c), s, kind, now);
}
