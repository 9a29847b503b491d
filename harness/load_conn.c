/* echo-load's worker: one edge-triggered epoll loop driving a slice of connections through
 * requests. */
#define _GNU_SOURCE
#include "load.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE 65536
#define MAX_EV   256
#define TICK_NS  (10 * 1000 * 1000LL) /* timeouts and retries are checked this often */
#define RETRY_NS (10 * 1000 * 1000LL) /* a failed slot waits this long before reconnecting */
/*
 * Persistent connections are opened at most this many at a time per worker: thousands of SYNs
 * at once overflow the server's accept backlog, and each dropped SYN costs a 1 s retransmit.
 */
#define MAX_CONNECTING 512
#define NS_PER_S       1000000000.0

enum slot_state {
    S_IDLE,       /* no socket (churn between requests) */
    S_CONNECTING, /* non-blocking connect in progress */
    S_READY,      /* connected, no request in flight (persistent connections) */
    S_ACTIVE,     /* a request is being sent and its echo read */
    S_RETRY,      /* failed; reconnects at `deadline` */
    S_DONE,       /* nothing more to do in this run */
};

/* PH_RAMP: connecting, and one verified echo per connection, before anything is measured. */
enum phase { PH_RAMP, PH_WARMUP, PH_MEASURE, PH_DRAIN, PH_STOP };

/* What a slow-mode connection is waiting for on a timer, if anything. */
enum slot_wait { W_NONE, W_CHUNK, W_THINK };

struct slot {
    int fd;
    uint8_t state;
    bool busy;    /* a request is in flight (churn: from its connect on) */
    bool counted; /* that request belongs to the measured window */
    bool in_idle; /* listed in the worker's idle stack (rate mode) */
    bool ramped;  /* completed its first echo during the ramp-up */
    uint8_t wait; /* enum slot_wait */
    uint32_t wait_seq;
    uint32_t serial;
    uint64_t id; /* global slot number */
    uint64_t seed;
    uint64_t tx, rx, req_end; /* stream offsets on the current connection */
    uint64_t chunk_end;       /* sending stops here until the next chunk is due (slow
                                 mode) */
    int64_t t_start, t_due, deadline;
    int64_t t_connect, wake_at;
    uint16_t p_head, p_count; /* --pipeline: the slot's requests in flight (ring in w->pipe) */
};

/* --pipeline: one request in flight on a connection, in stream order. */
struct ld_inflight {
    uint64_t end; /* stream offset just past its last byte */
    int64_t t_start;
    bool counted;
};

/*
 * Slow mode's timers. Every wait in one queue lasts the same time (the chunk delay, or the think
 * time), so appending keeps a queue in due order and a ring buffer is the whole timer structure. An
 * entry whose slot has moved on since (failed, reconnected) no longer matches the slot's wait_seq
 * and is dropped when it comes up.
 */
struct timed {
    unsigned slot;
    uint32_t seq;
};
struct fifo {
    struct timed *e;
    unsigned head, n, cap;
    int64_t delay;
    uint8_t kind; /* enum slot_wait */
};

struct worker {
    const struct ld_config *cfg;
    struct slot *slots;
    unsigned nslots;
    int epfd;
    /* Rate mode: slots free for the next due request, first in first out, so requests rotate
     * over every connection instead of reusing the few most recently freed. */
    unsigned *idle;
    unsigned nidle, idle_head;
    unsigned inflight;
    unsigned connecting; /* slots in S_CONNECTING */
    unsigned next_open;  /* pingpong: slots below this one have been opened once */
    enum phase phase;
    unsigned idx, nthreads; /* this worker among its process's workers */
    unsigned ramp_left;     /* connections still owing their first echo */
    bool ramp_reported, restart;
    int64_t ramp_deadline;
    struct ld_sync *sync;
    struct fifo chunkq, thinkq;
    int64_t t_measure, t_end, t_drain_end, t_cap, next_tick, last_done, stop_time;
    double interval; /* rate mode: ns between this worker's requests */
    int64_t t0;      /* common start of the run */
    int64_t sched0;  /* rate mode: this worker's schedule starts here */
    uint64_t due_k;
    int64_t next_due;
    uint64_t quota, issued; /* --requests: counted requests this worker may start / has started */
    uint8_t *sbuf, *rbuf, *ebuf;
    struct ld_inflight *pipe; /* --pipeline > 1: cfg->pipeline entries per slot */
    struct rusage ru0;
    int64_t cpu0; /* CLOCK_THREAD_CPUTIME_ID at the window's start, ns */
    int64_t wall0;
    struct ld_result res;
    pthread_t thread;
};

int64_t ld_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t secs_ns(double s)
{
    return (int64_t)(s * NS_PER_S);
}

static bool rate_mode(const struct worker *w)
{
    return w->cfg->rate > 0;
}

static bool may_start(const struct worker *w)
{
    if (w->phase == PH_RAMP) return false; /* only first echoes, started on connect */
    if (w->phase == PH_WARMUP) return true;
    return w->phase == PH_MEASURE && (w->cfg->requests == 0 || w->issued < w->quota);
}

/*
 * Rate mode: may the request due at `due` still be sent? The warm-up part of the schedule always
 * may; the measured part ends with the window or the request quota.
 */
static bool may_dispatch(const struct worker *w, int64_t due)
{
    if (w->phase == PH_STOP || w->phase == PH_RAMP) return false;
    if (due < w->t_measure) return true;
    if (w->cfg->requests) return w->issued < w->quota;
    return due < w->t_end;
}

static void close_slot(struct slot *s)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

static bool pipelined(const struct worker *w)
{
    return w->cfg->pipeline > 1;
}

static void end_request(struct worker *w, struct slot *s)
{
    if (s->busy) {
        s->busy = false;
        w->inflight -= s->p_count ? s->p_count : 1; /* p_count: pipelined requests */
        s->p_count = 0;
    }
}

static void make_available(struct worker *w, struct slot *s)
{
    if (!s->in_idle) {
        s->in_idle = true;
        w->idle[(w->idle_head + w->nidle++) % w->nslots] = (unsigned)(s - w->slots);
    }
}

static void slot_fail(struct worker *w, struct slot *s, enum ld_error kind, int64_t now)
{
    if (w->phase == PH_RAMP)
        w->res.ramp.errors[kind]++;
    else
        w->res.errors[kind]++;
    s->wait = W_NONE;
    if (s->state == S_CONNECTING) w->connecting--;
    end_request(w, s);
    close_slot(s);
    if (rate_mode(w) && w->cfg->mode == LD_CHURN) {
        s->state = S_IDLE;
        make_available(w, s);
        return;
    }
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
    if (!w->cfg->spread || w->cfg->addr.ss_family != AF_INET) return 0;
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    struct sockaddr_in src = {.sin_family = AF_INET};
    uint32_t host = (127u << 24) | (uint32_t)(2 + (s->id + s->serial) % 253);
    src.sin_addr.s_addr = htonl(host);
    return bind(fd, (struct sockaddr *)&src, sizeof(src));
}

static void send_some(struct worker *w, struct slot *s, int64_t now);
static void begin_request(struct worker *w, struct slot *s, int64_t now, int64_t due);
static void pipe_fill(struct worker *w, struct slot *s, int64_t now);

/* A ready slot's next step: wait for the rate schedule, fill its pipeline, or send a request
 * when the run still wants one. */
static void put_to_work(struct worker *w, struct slot *s, int64_t now)
{
    if (rate_mode(w))
        make_available(w, s);
    else if (pipelined(w))
        pipe_fill(w, s, now);
    else if (may_start(w))
        begin_request(w, s, now, now);
}

static void connected(struct worker *w, struct slot *s, int64_t now)
{
    w->res.connects++;
    w->connecting--;
    if (w->cfg->mode == LD_CHURN) {
        s->state = S_ACTIVE;
        s->req_end = s->chunk_end = w->cfg->size;
        s->deadline = s->t_start + secs_ns(w->cfg->timeout);
        send_some(w, s, now);
        return;
    }
    s->state = S_READY;
    if (w->phase == PH_RAMP) {
        struct ld_ramp *r = &w->res.ramp;
        r->connects++;
        r->last_connect = now;
        ld_hist_record(&r->connect, (uint64_t)(now - s->t_connect));
        begin_request(w, s, now, now); /* the first echo, never counted as a request */
        return;
    }
    put_to_work(w, s, now);
}

/* Opens a new connection for the slot; the outcome arrives as an epoll event or a failure. */
static void slot_open(struct worker *w, struct slot *s, int64_t now)
{
    const struct ld_config *cfg = w->cfg;
    s->serial++;
    s->seed = ld_payload_seed(cfg->seed, s->id, s->serial);
    s->tx = s->rx = 0;
    s->t_connect = now;
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
    int rc = connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addrlen);
    if (rc < 0 && errno != EINPROGRESS) {
        slot_fail(w, s, connect_errno_kind(errno), now);
        return;
    }
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
    bool ramp = w->phase == PH_RAMP;
    if (rate_mode(w) && !ramp && due >= w->t_measure)
        ld_hist_record(&w->res.lag, (uint64_t)(now - due));
    s->busy = true;
    w->inflight++;
    s->t_start = now;
    s->t_due = due;
    if (ramp)
        s->counted = false;
    else if (rate_mode(w))
        s->counted = due >= w->t_measure;
    else
        s->counted = w->phase == PH_MEASURE;
    if (s->counted && w->cfg->requests) w->issued++;
}

/* Starts one request: on the open connection (pingpong) or on a new one (churn). */
static void begin_request(struct worker *w, struct slot *s, int64_t now, int64_t due)
{
    mark_request(w, s, now, due);
    if (w->cfg->mode == LD_CHURN) {
        slot_open(w, s, now);
        return;
    }
    s->state = S_ACTIVE;
    s->req_end = s->tx + w->cfg->size;
    /* Slow mode sends the first chunk now and the rest on timers; a ramp-up echo goes whole. */
    bool chunked = w->cfg->mode == LD_SLOW && w->phase != PH_RAMP;
    s->chunk_end = chunked && w->cfg->chunk < w->cfg->size ? s->tx + w->cfg->chunk : s->req_end;
    s->deadline = now + secs_ns(w->cfg->timeout);
    send_some(w, s, now);
}

/* ---- slow mode: timed waits ----------------------------------------------------------------- */

static int fifo_push(struct fifo *q, unsigned slot, uint32_t seq)
{
    if (q->n == q->cap) {
        unsigned cap = q->cap ? 2 * q->cap : 64;
        struct timed *e = malloc(cap * sizeof(*e));
        if (!e) return -1;
        for (unsigned i = 0; i < q->n; i++)
            e[i] = q->e[(q->head + i) % q->cap];
        free(q->e);
        q->e = e;
        q->cap = cap;
        q->head = 0;
    }
    q->e[(q->head + q->n++) % q->cap] = (struct timed){slot, seq};
    return 0;
}

static void start_wait(struct worker *w, struct slot *s, struct fifo *q, int64_t now)
{
    s->wait = q->kind;
    s->wait_seq++;
    s->wake_at = now + q->delay;
    if (fifo_push(q, (unsigned)(s - w->slots), s->wait_seq) < 0) slot_fail(w, s, LD_ERR_IO, now);
}

/* The entry at the head of q, dropping those whose slot has moved on; NULL when empty. */
static struct slot *fifo_head(struct worker *w, struct fifo *q)
{
    while (q->n > 0) {
        struct timed t = q->e[q->head];
        struct slot *s = &w->slots[t.slot];
        if (s->wait == q->kind && s->wait_seq == t.seq) return s;
        q->head = (q->head + 1) % q->cap;
        q->n--;
    }
    return NULL;
}

static void fifo_pop(struct fifo *q)
{
    q->head = (q->head + 1) % q->cap;
    q->n--;
}

/* Send the next chunk of every connection whose chunk delay is over; start the next request of
 * every connection whose think time is over. */
static void run_timers(struct worker *w, int64_t now)
{
    struct slot *s;
    while ((s = fifo_head(w, &w->chunkq)) && s->wake_at <= now) {
        fifo_pop(&w->chunkq);
        s->wait = W_NONE;
        s->chunk_end = s->tx + w->cfg->chunk < s->req_end ? s->tx + w->cfg->chunk : s->req_end;
        send_some(w, s, now);
    }
    while ((s = fifo_head(w, &w->thinkq)) && s->wake_at <= now) {
        fifo_pop(&w->thinkq);
        s->wait = W_NONE;
        if (s->state == S_READY && may_start(w)) begin_request(w, s, now, now);
    }
}

static int64_t timers_due(struct worker *w, int64_t t)
{
    struct slot *c = fifo_head(w, &w->chunkq), *k = fifo_head(w, &w->thinkq);
    if (c && c->wake_at < t) t = c->wake_at;
    if (k && k->wake_at < t) t = k->wake_at;
    return t;
}

/* ---- ramp-up -------------------------------------------------------------------------------- */

/* The measured part of the run starts at `start`: the end of the ramp-up, or the start. */
static void set_window(struct worker *w, int64_t start)
{
    const struct ld_config *cfg = w->cfg;
    w->t_measure = start + secs_ns(cfg->warmup);
    w->t_cap = start + secs_ns(cfg->max_time);
    w->t_end = cfg->requests ? w->t_cap : w->t_measure + secs_ns(cfg->duration);
    if (cfg->rate > 0) {
        /* Workers start their schedules spread over one interval, not all at one instant. */
        w->sched0 = start + (int64_t)(w->interval * w->idx / w->nthreads);
        w->next_due = w->sched0;
        w->due_k = 0;
    }
}

static void first_echo_done(struct worker *w, struct slot *s, int64_t now)
{
    struct ld_ramp *r = &w->res.ramp;
    if (!s->ramped) {
        s->ramped = true;
        w->ramp_left--;
        r->ready++;
        r->last_ready = now;
        ld_hist_record(&r->first_echo, (uint64_t)(now - s->t_start));
    }
    s->state = S_READY;
}

/* Is the ramp-up over for the whole run? It is once every worker of every process has its
 * connections echoed once, or at the common deadline; then the window is set from then. */
static bool ramp_over(struct worker *w, int64_t now)
{
    struct ld_sync *sy = w->sync;
    int64_t none = 0;
    if (w->ramp_left == 0 && !w->ramp_reported) {
        w->ramp_reported = true;
        if (atomic_fetch_add(&sy->ramped, 1) + 1 == sy->workers)
            atomic_compare_exchange_strong(&sy->done_ns, &none, now);
    }
    none = 0;
    if (now >= w->ramp_deadline)
        atomic_compare_exchange_strong(&sy->done_ns, &none, w->ramp_deadline);
    int64_t done = atomic_load(&sy->done_ns);
    if (!done) return false;
    w->res.ramp.done = done;
    w->res.ramp.unfinished = w->ramp_left;
    set_window(w, done);
    w->phase = PH_WARMUP;
    w->restart = true;
    return true;
}

/* After the ramp-up: every connection that is ready starts its requests (closed loop) or joins the
 * idle list (rate mode). */
static void start_after_ramp(struct worker *w, int64_t now)
{
    for (unsigned i = 0; i < w->nslots; i++) {
        struct slot *s = &w->slots[i];
        if (s->state == S_READY) put_to_work(w, s, now);
    }
}

static void complete(struct worker *w, struct slot *s, int64_t now)
{
    end_request(w, s);
    if (w->phase == PH_RAMP) {
        first_echo_done(w, s, now);
        return;
    }
    if (s->counted) {
        w->res.requests++;
        w->res.bytes += w->cfg->size;
        ld_hist_record(&w->res.lat, (uint64_t)(now - s->t_due));
        if (rate_mode(w)) ld_hist_record(&w->res.lat_unc, (uint64_t)(now - s->t_start));
        w->last_done = now;
    }
    if (w->cfg->mode == LD_CHURN) {
        close_slot(s);
        s->state = S_IDLE;
    } else {
        s->state = S_READY;
    }
    if (!rate_mode(w) && w->cfg->mode == LD_SLOW && w->cfg->think > 0)
        start_wait(w, s, &w->thinkq, now);
    else
        put_to_work(w, s, now);
}

/* ---- pipelining (--pipeline K > 1) -------------------------------------------------------- */

/*
 * Each connection keeps K requests in flight, sent back to back: a ring of K entries per slot
 * in stream order, so the echo's stream offset tells which request a byte completes. The
 * verification is the same as with one request (the connection's bytes are one payload
 * stream whatever the request boundaries); only completion and latency are per request.
 */
static struct ld_inflight *pipe_at(struct worker *w, struct slot *s, unsigned k)
{
    unsigned K = w->cfg->pipeline;
    return &w->pipe[(size_t)(s - w->slots) * K + (s->p_head + k) % K];
}

/* Start requests on the slot until K are in flight or no more may start, then send them. */
static void pipe_fill(struct worker *w, struct slot *s, int64_t now)
{
    bool started = false;
    while (s->p_count < w->cfg->pipeline && may_start(w)) {
        if (s->p_count == 0) {
            s->busy = true;
            s->state = S_ACTIVE;
            s->req_end = s->tx;
            s->deadline = now + secs_ns(w->cfg->timeout);
        }
        struct ld_inflight *q = pipe_at(w, s, s->p_count++);
        q->t_start = now;
        q->counted = w->phase == PH_MEASURE;
        if (q->counted && w->cfg->requests) w->issued++;
        s->req_end += w->cfg->size;
        s->chunk_end = s->req_end; /* pingpong only: every request goes whole */
        q->end = s->req_end;
        w->inflight++;
        started = true;
    }
    if (started) send_some(w, s, now);
}

/* Complete every request whose echo is now whole, and start as many new ones. */
static void pipe_progress(struct worker *w, struct slot *s, int64_t now)
{
    bool done = false;
    /* The caller's clock was read before its receive loop, which with several requests in
     * flight may already have completed and started others: read it afresh. */
    now = ld_now_ns();
    while (s->p_count && s->rx >= pipe_at(w, s, 0)->end) {
        struct ld_inflight *q = pipe_at(w, s, 0);
        s->p_head = (uint16_t)((s->p_head + 1) % w->cfg->pipeline);
        s->p_count--;
        w->inflight--;
        done = true;
        if (!q->counted) continue;
        w->res.requests++;
        w->res.bytes += w->cfg->size;
        ld_hist_record(&w->res.lat, (uint64_t)(now - q->t_start));
        w->last_done = now;
    }
    if (!done) return;
    if (s->p_count) {
        s->deadline = pipe_at(w, s, 0)->t_start + secs_ns(w->cfg->timeout);
    } else {
        s->busy = false;
        s->state = S_READY;
    }
    pipe_fill(w, s, now);
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
    if (s->tx < s->req_end) start_wait(w, s, &w->chunkq, now); /* slow mode: the next chunk */
}

static void record_mismatch(struct worker *w, struct slot *s, size_t n, size_t owed, int64_t now)
{
    size_t at = 0;
    while (at < n && at < owed && w->rbuf[at] == w->ebuf[at])
        at++;
    enum ld_mismatch_kind kind =
        at >= owed ? LD_MM_EXTRA : ld_mismatch_classify(w->rbuf, w->ebuf, n, at);
    w->res.mismatch_kinds[kind]++;
    struct ld_mismatch_info *mi = &w->res.first_mismatch;
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
    return true;
}

static void recv_some(struct worker *w, struct slot *s, int64_t now)
{
    for (;;) {
        ssize_t k = recv(s->fd, w->rbuf, BUF_SIZE, 0);
        if (k > 0) {
            if (!verify(w, s, (size_t)k, now)) return;
            if (s->p_count) { /* pipelined requests in flight (a ramp-up echo goes alone) */
                pipe_progress(w, s, now);
                if (s->state != S_ACTIVE) return; /* nothing owed, or the slot failed */
                continue;
            }
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

static void on_event(struct worker *w, struct slot *s, uint32_t ev, int64_t now)
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

static void advance_due(struct worker *w)
{
    w->due_k++;
    w->next_due = w->sched0 + (int64_t)((double)w->due_k * w->interval);
}

static void dispatch_due(struct worker *w, int64_t now)
{
    uint8_t free_state = w->cfg->mode == LD_CHURN ? S_IDLE : S_READY;
    while (w->next_due <= now && w->nidle > 0 && may_dispatch(w, w->next_due)) {
        struct slot *s = &w->slots[w->idle[w->idle_head]];
        w->idle_head = (w->idle_head + 1) % w->nslots;
        w->nidle--;
        s->in_idle = false;
        /* A stale entry (the slot failed and is reconnecting) is dropped; it is listed again
         * once it is free. */
        if (s->state != free_state) continue;
        begin_request(w, s, now, w->next_due);
        advance_due(w);
    }
}

/* Timeouts and retries, checked every tick rather than kept in a timer structure per slot. */
static void scan(struct worker *w, int64_t now)
{
    for (unsigned i = 0; i < w->nslots; i++) {
        struct slot *s = &w->slots[i];
        if (s->state == S_CONNECTING && now > s->deadline) {
            slot_fail(w, s, LD_ERR_CONNECT_TIMEOUT, now);
        } else if (s->state == S_ACTIVE && now > s->deadline) {
            slot_fail(w, s, LD_ERR_TIMEOUT, now);
        } else if (s->state == S_RETRY && now >= s->deadline) {
            /* In rate mode the drain may still need connections for the backlog. */
            bool go = w->phase == PH_RAMP || w->phase == PH_WARMUP || w->phase == PH_MEASURE ||
                      (w->phase == PH_DRAIN && rate_mode(w));
            if (go && w->cfg->mode != LD_CHURN) {
                slot_open(w, s, now);
            } else if (go && may_start(w)) {
                s->state = S_IDLE;
                begin_request(w, s, now, now);
            } else {
                s->state = S_DONE;
            }
        }
    }
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void take_cpu_start(struct worker *w, int64_t now)
{
    getrusage(RUSAGE_THREAD, &w->ru0);
    w->cpu0 = thread_cpu_ns();
    w->wall0 = now;
}

static double tv_diff(struct timeval a, struct timeval b)
{
    return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_usec - b.tv_usec) / 1e6;
}

static void update_phase(struct worker *w, int64_t now)
{
    if (w->phase == PH_RAMP && !ramp_over(w, now)) return;
    if (now >= w->t_cap) {
        w->res.capped = w->phase != PH_DRAIN || w->inflight > 0;
        w->phase = PH_STOP;
        return;
    }
    if (w->phase == PH_WARMUP && now >= w->t_measure) {
        w->phase = PH_MEASURE;
        take_cpu_start(w, now);
    }
    if (w->phase == PH_MEASURE) {
        bool over = w->cfg->requests ? w->issued >= w->quota : now >= w->t_end;
        if (over) {
            w->phase = PH_DRAIN;
            w->stop_time = now;
            w->t_drain_end = now + secs_ns(w->cfg->timeout);
        }
    }
    if (w->phase == PH_DRAIN) {
        bool backlog = rate_mode(w) && may_dispatch(w, w->next_due) && w->next_due <= now;
        if ((w->inflight == 0 && !backlog) || now >= w->t_drain_end) w->phase = PH_STOP;
    }
}

static int64_t next_wakeup(struct worker *w, int64_t now)
{
    int64_t t = timers_due(w, w->next_tick);
    if (w->phase == PH_RAMP) {
        /* Done here: look at the other workers every millisecond until all are. */
        int64_t until = w->ramp_left == 0 ? now + 1000000 : w->ramp_deadline;
        return until < t ? until : t;
    }
    if (w->phase == PH_WARMUP && w->t_measure < t) t = w->t_measure;
    if (w->phase == PH_MEASURE && !w->cfg->requests && w->t_end < t) t = w->t_end;
    if (w->phase == PH_DRAIN && w->t_drain_end < t) t = w->t_drain_end;
    if (rate_mode(w) && w->nidle > 0 && w->next_due < t) t = w->next_due;
    if (w->t_cap < t) t = w->t_cap;
    return t < now ? now : t;
}

static int wait_events(int epfd, struct epoll_event *evs, int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    int n = epoll_pwait2(epfd, evs, MAX_EV, &ts, NULL);
    if (n < 0 && errno == ENOSYS) /* kernels before 5.11: millisecond resolution, rounded up */
        n = epoll_wait(epfd, evs, MAX_EV, (int)((ns + 999999) / 1000000));
    return n;
}

static void open_pending(struct worker *w, int64_t now)
{
    while (w->next_open < w->nslots && w->connecting < MAX_CONNECTING)
        slot_open(w, &w->slots[w->next_open++], now);
}

static void start_slots(struct worker *w, int64_t now)
{
    if (w->cfg->mode != LD_CHURN) {
        open_pending(w, now);
        return;
    }
    for (unsigned i = 0; i < w->nslots; i++) {
        if (rate_mode(w))
            make_available(w, &w->slots[i]);
        else
            begin_request(w, &w->slots[i], now, now);
    }
}

static void finish(struct worker *w, int64_t now)
{
    struct ld_result *r = &w->res;
    if (w->wall0 == 0) take_cpu_start(w, now); /* capped before measuring began: an empty window */
    if (w->stop_time == 0) w->stop_time = now;
    /*
     * The total comes from the thread's CPU clock, which the kernel brings up to date when it is
     * read. getrusage(RUSAGE_THREAD) reports the runtime as of the thread's last scheduler
     * accounting, up to a tick stale, so over a window of a few milliseconds it could show more
     * CPU than wall time (seen: 1.55 cores from one thread). getrusage only splits the total
     * into user and system time, in its own proportion.
     */
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    double total = (double)(thread_cpu_ns() - w->cpu0) / NS_PER_S;
    double user = tv_diff(ru.ru_utime, w->ru0.ru_utime);
    double sys = tv_diff(ru.ru_stime, w->ru0.ru_stime);
    double user_share = user + sys > 0 ? user / (user + sys) : 0;
    r->cpu_user = total * user_share;
    r->cpu_sys = total - r->cpu_user;
    double wall = (double)(now - w->wall0) / NS_PER_S;
    r->max_thread_core = wall > 0 ? (r->cpu_user + r->cpu_sys) / wall : 0;
    /*
     * Requests are counted by when they started (or were due). In closed loop that is unbiased
     * over a fixed window; in rate mode a server that fell behind finishes its backlog after
     * the window, and the time that took must count, or the rate would look achieved.
     */
    int64_t end = w->cfg->requests ? w->last_done : w->stop_time;
    if (rate_mode(w) && w->last_done > end) end = w->last_done;
    if (end < w->t_measure) end = w->stop_time > w->t_measure ? w->stop_time : now;
    r->seconds = end > w->t_measure ? (double)(end - w->t_measure) / NS_PER_S : 0;
    for (unsigned i = 0; i < w->nslots; i++) {
        struct slot *s = &w->slots[i];
        if (pipelined(w)) {
            for (unsigned k = 0; s->busy && k < s->p_count; k++)
                r->unfinished += pipe_at(w, s, k)->counted;
        } else if (s->busy && s->counted) {
            r->unfinished++;
        }
        close_slot(s);
    }
    if (w->cfg->requests)
        r->unfinished += w->quota > w->issued ? w->quota - w->issued : 0;
    else if (rate_mode(w))
        while (w->next_due < w->t_end && w->next_due < w->stop_time) {
            if (w->next_due >= w->t_measure) r->unfinished++;
            advance_due(w);
        }
    r->workers = 1;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct epoll_event evs[MAX_EV];
    if (rate_mode(w)) prctl(PR_SET_TIMERSLACK, 1UL); /* wake on schedule, not up to 50 us late */
    struct timespec t0 = {.tv_sec = w->t0 / 1000000000LL, .tv_nsec = w->t0 % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t0, NULL) == EINTR)
        ;
    int64_t now = ld_now_ns();
    w->next_tick = now + TICK_NS;
    update_phase(w, now); /* with no warm-up the very first requests are measured */
    start_slots(w, now);
    for (;;) {
        now = ld_now_ns();
        update_phase(w, now);
        if (w->phase == PH_STOP) break;
        if (w->restart) {
            w->restart = false;
            start_after_ramp(w, now);
        }
        run_timers(w, now);
        dispatch_due(w, now);
        if (now >= w->next_tick) {
            scan(w, now);
            w->next_tick = now + TICK_NS;
        }
        int n = wait_events(w->epfd, evs, next_wakeup(w, now) - now);
        now = ld_now_ns();
        for (int i = 0; i < n; i++)
            on_event(w, evs[i].data.ptr, evs[i].events, now);
        if (w->next_open < w->nslots && w->phase <= PH_MEASURE) open_pending(w, now);
    }
    finish(w, now);
    return NULL;
}

static void worker_free(struct worker *w)
{
    if (w->epfd >= 0) close(w->epfd);
    free(w->slots);
    free(w->idle);
    free(w->sbuf);
    free(w->rbuf);
    free(w->ebuf);
    free(w->chunkq.e);
    free(w->thinkq.e);
    free(w->pipe);
}

static int worker_setup(struct worker *w, const struct ld_config *cfg, const struct ld_share *sh,
                        unsigned idx, unsigned first, unsigned n, uint64_t quota)
{
    memset(w, 0, sizeof(*w));
    w->cfg = cfg;
    w->nslots = n;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->slots = calloc(n, sizeof(*w->slots));
    w->idle = calloc(n, sizeof(*w->idle));
    w->sbuf = malloc(BUF_SIZE);
    w->rbuf = malloc(BUF_SIZE);
    w->ebuf = malloc(BUF_SIZE + 1);
    if (w->epfd < 0 || !w->slots || !w->idle || !w->sbuf || !w->rbuf || !w->ebuf) return -1;
    if (cfg->pipeline > 1 && !(w->pipe = calloc((size_t)n * cfg->pipeline, sizeof *w->pipe)))
        return -1;
    for (unsigned i = 0; i < n; i++) {
        w->slots[i].fd = -1;
        w->slots[i].id = sh->slot_base + first + i;
    }
    ld_result_init(&w->res);
    w->t0 = sh->t0;
    w->idx = idx;
    w->nthreads = sh->threads;
    w->sync = sh->sync;
    w->quota = quota;
    w->chunkq = (struct fifo){.delay = secs_ns(cfg->chunk_delay), .kind = W_CHUNK};
    w->thinkq = (struct fifo){.delay = secs_ns(cfg->think), .kind = W_THINK};
    if (cfg->rate > 0) w->interval = NS_PER_S / (sh->rate * n / sh->conns);
    set_window(w, sh->t0);
    if (ld_ramp_applies(cfg)) {
        w->phase = PH_RAMP;
        w->ramp_left = n;
        w->ramp_deadline = sh->t0 + secs_ns(cfg->ramp_timeout);
        w->res.ramp.ran = true;
        w->res.ramp.t0 = sh->t0;
    } else {
        w->phase = PH_WARMUP;
    }
    return 0;
}

int ld_run_process(const struct ld_config *cfg, const struct ld_share *sh, struct ld_result *out)
{
    unsigned nt = sh->threads;
    struct worker *ws = calloc(nt, sizeof(*ws));
    if (!ws) return -1;
    for (unsigned i = 0; i < nt; i++)
        ws[i].epfd = -1;
    int rc = 0;
    unsigned first = 0;
    uint64_t quota_given = 0;
    for (unsigned i = 0; i < nt && rc == 0; i++) {
        unsigned n = sh->conns / nt + (i < sh->conns % nt ? 1 : 0);
        /* Each worker's share of the quota follows its share of the connections. */
        uint64_t upto = sh->requests * (first + n) / sh->conns;
        rc = worker_setup(&ws[i], cfg, sh, i, first, n, upto - quota_given);
        quota_given = upto;
        first += n;
    }
    /* Only a thread that really started is joined: a failed pthread_create leaves its
     * pthread_t undefined. The ones already running finish their share; the run then fails. */
    unsigned started = 0;
    while (rc == 0 && started < nt) {
        if (pthread_create(&ws[started].thread, NULL, worker_main, &ws[started]) != 0) {
            rc = -1;
            break;
        }
        started++;
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(ws[i].thread, NULL);
    ld_result_init(out);
    for (unsigned i = 0; i < nt; i++) {
        if (rc == 0) ld_result_merge(out, &ws[i].res);
        worker_free(&ws[i]);
    }
    free(ws);
    return rc;
}
