/* server_epoll.c - hand-written non-blocking, edge-triggered callback echo: the yardstick.
 * --trigger level runs the same loop level-triggered, as a control: what a level-triggered
 * engine pays in the kernel, measured without a fiber runtime on top. --touch-lines N is a
 * control too: what per-connection memory on the request path costs (see touch_walk).
 * --read-timeout and --idle-timeout keep their deadlines in lists of the loop's own (see
 * struct tlist) that set epoll_wait's timeout. */
#include "server.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS    256
#define READ_BUDGET   16 /* reads per connection per turn, so one fast stream cannot starve */
#define ACCEPT_BUDGET 64
#define LOOP_BUF      65536

/*
 * A connection's interest. Edge-triggered: both directions, registered once and never
 * changed. Level-triggered: input while nothing is pending, and only output while something
 * is (level-triggered input would report the unread request on every wait while the loop
 * holds back, and so would EPOLLRDHUP once the peer's FIN is in). Switching costs an
 * EPOLL_CTL_MOD each way, and only when a reply did not fit the socket.
 */
#define EDGE_EVENTS    (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)
#define LEVEL_READING  (EPOLLIN | EPOLLRDHUP)
#define LEVEL_FLUSHING EPOLLOUT

struct loop;
struct item;
typedef void handler_fn(struct loop *l, struct item *it, uint32_t events);

/*
 * Anything registered with epoll: the handler runs on every edge (with the epoll events) and
 * on every turn from the ready list (with MUST_DRAIN: read until the kernel says EAGAIN).
 */
#define MUST_DRAIN EPOLLRDHUP

struct item {
    handler_fn *handle;
    int fd;
    struct item *rprev, *rnext; /* on a ready list (the loop's or a turn's), else NULL */
};

/*
 * Timeouts. Every connection shares each timeout's one length, so a connection (re-)armed at
 * `now` goes to the tail of that timeout's list and each list stays ordered by deadline (the
 * advice libev gives for many equal timeouts): arming and cancelling are O(1) pointer moves,
 * with no system call and no fd, and the loop's epoll_wait sleeps until the earliest head's
 * deadline. A timerfd per connection would cost a timerfd_settime call on every read and
 * double the fds; a heap would pay O(log n) per arm to order what is already in order.
 * Two lists: `read` holds the connections waiting for input (armed whenever data came in, or
 * when a pending reply is gone), `idle` every connection (armed whenever a byte moved).
 */
struct tlink {
    struct tlink *prev, *next; /* NULL when not armed */
    int64_t at;                /* CLOCK_MONOTONIC ns when armed */
};

struct tlist {
    struct tlink head;
    int64_t span; /* ns; 0: this timeout is off */
    srv_counter *fired;
};

/*
 * A connection is lean while idle (no buffer): data is read into the loop's buffer and
 * written straight back; only what the socket would not take is kept, in pend, and no more
 * is read until it is gone.
 */
struct conn {
    struct item it;
    struct conn *prev, *next; /* every connection of the loop, for shutdown */
    char *pend;
    size_t plen, poff;
    char *touch;               /* --touch-lines: the connection's page, NULL without */
    struct tlink rlink, ilink; /* on the loop's read and idle lists */
    bool got;                  /* data came in during this turn (timeouts only) */
};

struct loop {
    struct srv_server *srv;
    int epfd;
    bool running;
    long long retry_at_ms; /* > 0: the listener is backing off until then */
    struct item listener, stopper, ready;
    struct conn conns;
    struct srv_acceptor acc;
    bool level; /* --trigger level */
    int touch_lines;
    struct tlist read, idle; /* --read-timeout, --idle-timeout */
    bool timed;              /* either is on */
    uint64_t bytes, adds, mods, waits, walked;
    pthread_t th;
    char buf[LOOP_BUF];
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void tl_init(struct tlist *t, long ms, srv_counter *fired)
{
    t->head.prev = t->head.next = &t->head;
    t->span = (int64_t)ms * 1000000;
    t->fired = fired;
}

static void tl_cancel(struct tlink *k)
{
    if (!k->next) return;
    k->prev->next = k->next;
    k->next->prev = k->prev;
    k->prev = k->next = NULL;
}

static void tl_arm(struct tlist *t, struct tlink *k, int64_t now)
{
    if (!t->span) return;
    tl_cancel(k);
    k->at = now;
    k->prev = t->head.prev;
    k->next = &t->head;
    t->head.prev->next = k;
    t->head.prev = k;
}

/* The list's earliest deadline, INT64_MAX when empty. */
static int64_t tl_deadline(const struct tlist *t)
{
    return t->head.next != &t->head ? t->head.next->at + t->span : INT64_MAX;
}

static void ready_push(struct item *head, struct item *it)
{
    if (it->rnext) return;
    it->rprev = head->rprev;
    it->rnext = head;
    head->rprev->rnext = it;
    head->rprev = it;
}

static void ready_remove(struct item *it)
{
    if (!it->rnext) return;
    it->rprev->rnext = it->rnext;
    it->rnext->rprev = it->rprev;
    it->rprev = it->rnext = NULL;
}

/*
 * --touch-lines N. A fiber server keeps state of its own per connection on the path of every
 * request (the fiber's record and the frames on its stack); this yardstick keeps one small
 * struct. The control gives each connection a page, and after every read with data the loop
 * walks N cache lines of it from the top down: each line holds the address of the next and a
 * counter, so the walk is a chain of dependent loads with a store per line, as the returns
 * through a resumed fiber's frames are. What that costs per request, beside the plain yardstick,
 * is what memory per connection costs on this machine (harness/README, fiberio).
 */
enum { TOUCH_PAGE = 4096, TOUCH_LINE = 64 };

static char *touch_page(int lines)
{
    char *page = aligned_alloc(TOUCH_PAGE, TOUCH_PAGE);
    if (!page) return NULL;
    char *top = page + TOUCH_PAGE - TOUCH_LINE;
    for (int i = 0; i < lines; i++) {
        char *line = top - TOUCH_LINE * i;
        *(char **)line = i + 1 < lines ? line - TOUCH_LINE : NULL;
        ((uint64_t *)line)[1] = 0;
    }
    return top;
}

static void touch_free(char *top)
{
    if (top) free(top + TOUCH_LINE - TOUCH_PAGE);
}

static void touch_walk(struct loop *l, char *line)
{
    while (line) {
        ((uint64_t *)line)[1]++;
        line = *(char **)line;
        l->walked++;
    }
}

static void conn_close(struct loop *l, struct conn *c)
{
    tl_cancel(&c->rlink);
    tl_cancel(&c->ilink);
    touch_free(c->touch);
    ready_remove(&c->it);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    close(c->it.fd); /* also leaves the epoll set: no EPOLL_CTL_DEL needed */
    free(c->pend);
    free(c);
    srv_conn_done(l->srv);
}

/* Level-triggered only: change what c is watched for. -1: the connection cannot go on. */
static int watch(struct loop *l, struct conn *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, c->it.fd, &ev) < 0) return -1;
    l->mods++;
    return 0;
}

/* Write out what is pending. 1: all gone; 0: the socket is full; -1: the connection failed. */
static int flush(struct loop *l, struct conn *c)
{
    while (c->poff < c->plen) {
        ssize_t w = send(c->it.fd, c->pend + c->poff, c->plen - c->poff, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno == EAGAIN ? 0 : -1;
        c->poff += (size_t)w;
        l->bytes += (uint64_t)w;
    }
    free(c->pend);
    c->pend = NULL;
    c->plen = c->poff = 0;
    return l->level && watch(l, c, LEVEL_READING) < 0 ? -1 : 1;
}

/* Echo n bytes from the loop buffer; keep what the socket did not take. -1: failed. */
static int echo(struct loop *l, struct conn *c, size_t n)
{
    ssize_t w = send(c->it.fd, l->buf, n, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EINTR) return -1;
    size_t done = w > 0 ? (size_t)w : 0;
    l->bytes += done;
    if (done == n) return 0;
    c->pend = malloc(n - done);
    if (!c->pend) return -1;
    memcpy(c->pend, l->buf + done, n - done);
    c->plen = n - done;
    c->poff = 0;
    return l->level ? watch(l, c, LEVEL_FLUSHING) : 0;
}

/*
 * Edge-triggered: keep going until the socket is drained (then the next edge brings us back)
 * or the budget is spent (then the ready list does). A short read on a stream socket means
 * the receive queue was empty at that moment (epoll(7) says so), and anything arriving later
 * raises a new edge, so the usual extra recv that only returns EAGAIN is skipped: one
 * syscall less per request. Not when the peer's FIN is already in (EPOLLRDHUP, which raises
 * no further edge): then reading goes on until EOF. EOF is only read once nothing is
 * pending, so a half-closed client gets everything back before the close. Level-triggered,
 * the same reads are right: whatever is left or arrives later is reported by the next wait.
 */
static bool conn_serve(struct loop *l, struct conn *c, uint32_t events)
{
    struct item *it = &c->it;
    bool drain = events & (MUST_DRAIN | EPOLLHUP | EPOLLERR);
    for (int round = 0; round < READ_BUDGET; round++) {
        if (c->pend) {
            int f = flush(l, c);
            if (f < 0) {
                conn_close(l, c);
                return false;
            }
            if (f == 0) return true; /* the socket is full and EPOLLOUT will come */
        }
        ssize_t n = recv(it->fd, l->buf, sizeof l->buf, 0);
        if (n > 0) c->got = true;
        if (n > 0 && c->touch) touch_walk(l, c->touch);
        if (n > 0 && echo(l, c, (size_t)n) == 0) {
            if ((size_t)n < sizeof l->buf && !drain && !c->pend) return true;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return true;
        conn_close(l, c); /* EOF, a reset, or no memory for what is pending */
        return false;
    }
    ready_push(&l->ready, it);
    return true;
}

/*
 * After a turn of an open connection: a byte moved either way re-arms its idle timeout; data
 * that came in re-arms its read timeout, and so does a pending reply that is gone (a read
 * starts again); while a reply waits for room, no read is waiting, so its read timeout is off.
 */
static void conn_timers(struct loop *l, struct conn *c, bool moved)
{
    bool rearm = !c->pend && (c->got || !c->rlink.next);
    int64_t now = moved || rearm ? now_ns() : 0;
    if (moved) tl_arm(&l->idle, &c->ilink, now);
    if (c->pend)
        tl_cancel(&c->rlink);
    else if (rearm)
        tl_arm(&l->read, &c->rlink, now);
    c->got = false;
}

static void conn_io(struct loop *l, struct item *it, uint32_t events)
{
    struct conn *c = (struct conn *)it;
    uint64_t out = l->bytes;
    if (conn_serve(l, c, events) && l->timed) conn_timers(l, c, c->got || l->bytes != out);
}

/* Close the connections whose timeout passed: idle first, so equal lengths count as idle. */
static void expire(struct loop *l)
{
    int64_t now = now_ns();
    struct tlist *lists[] = {&l->idle, &l->read};
    for (int i = 0; i < 2; i++) {
        struct tlist *t = lists[i];
        size_t off = t == &l->idle ? offsetof(struct conn, ilink) : offsetof(struct conn, rlink);
        while (tl_deadline(t) <= now) {
            conn_close(l, (struct conn *)((char *)t->head.next - off));
            srv_add(t->fired, 1);
        }
    }
}

static void conn_new(int fd, void *arg)
{
    struct loop *l = arg;
    struct conn *c = calloc(1, sizeof *c);
    struct epoll_event ev = {.events = l->level ? LEVEL_READING : EDGE_EVENTS};
    if (c) {
        c->it = (struct item){.handle = conn_io, .fd = fd};
        ev.data.ptr = c;
        if (l->touch_lines && !(c->touch = touch_page(l->touch_lines))) {
            free(c);
            c = NULL;
        }
    }
    /* Registered once for both directions; never modified; closing removes it. */
    if (!c || epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int err = c ? errno : ENOMEM;
        if (c) touch_free(c->touch);
        free(c);
        srv_conn_unserved(l->srv, fd, "cannot register a connection: %s", strerror(err));
        return;
    }
    l->adds++;
    c->next = l->conns.next;
    c->prev = &l->conns;
    l->conns.next->prev = c;
    l->conns.next = c;
    if (l->timed) conn_timers(l, c, true); /* the first read starts now */
}

static void on_listener(struct loop *l, struct item *it, uint32_t events)
{
    (void)events;
    switch (srv_accept_batch(&l->acc, ACCEPT_BUDGET, SOCK_NONBLOCK, conn_new, l)) {
    case SRV_ACCEPT_BACKOFF:
        /* No edge will come for connections already waiting: retry on a timer. */
        l->retry_at_ms = now_ms() + SRV_BACKOFF_MS;
        break;
    case SRV_ACCEPT_SKIP: /* the budget spent: come back after the others */
        ready_push(&l->ready, it);
        break;
    default:
        break;
    }
}

static void on_stop(struct loop *l, struct item *it, uint32_t events)
{
    (void)it, (void)events;
    l->running = false;
}

static int add_item(struct loop *l, struct item *it, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = it};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, it->fd, &ev) < 0) return -1;
    l->adds++;
    return 0;
}

static int wait_timeout(struct loop *l)
{
    if (l->ready.rnext != &l->ready) return 0;
    long long left = -1;
    if (l->retry_at_ms) {
        left = l->retry_at_ms - now_ms();
        if (left < 0) left = 0;
    }
    if (l->timed) {
        int64_t d = tl_deadline(&l->read) < tl_deadline(&l->idle) ? tl_deadline(&l->read)
                                                                  : tl_deadline(&l->idle);
        if (d != INT64_MAX) {
            /* Rounded up: epoll_wait counts whole ms, and a timeout never fires early. */
            int64_t ns = d - now_ns();
            long long ms = ns > 0 ? (ns + 999999) / 1000000 : 0;
            if (left < 0 || ms < left) left = ms;
        }
    }
    return (int)left;
}

/* Give every item that still had work its turn, in order; new work waits for the next one. */
static void run_ready(struct loop *l)
{
    struct item turn = {.rprev = &turn, .rnext = &turn};
    if (l->ready.rnext == &l->ready) return;
    turn.rnext = l->ready.rnext;
    turn.rprev = l->ready.rprev;
    turn.rnext->rprev = turn.rprev->rnext = &turn;
    l->ready.rnext = l->ready.rprev = &l->ready;
    while (turn.rnext != &turn) {
        struct item *it = turn.rnext;
        ready_remove(it);
        it->handle(l, it, MUST_DRAIN);
    }
}

static void loop_iterate(struct loop *l, struct epoll_event *ev)
{
    l->waits++;
    int n = epoll_wait(l->epfd, ev, MAX_EVENTS, wait_timeout(l));
    if (n < 0 && errno != EINTR) {
        perror("echo-server: epoll_wait");
        l->running = false;
        return;
    }
    for (int i = 0; i < n; i++) {
        struct item *it = ev[i].data.ptr;
        it->handle(l, it, ev[i].events);
    }
    if (l->retry_at_ms && now_ms() >= l->retry_at_ms) {
        l->retry_at_ms = 0;
        on_listener(l, &l->listener, 0);
    }
    run_ready(l);
    if (l->timed) expire(l);
}

/* Safe on a loop whose loop_init failed half-way, or never ran after loop_prepare. */
static void loop_fini(struct loop *l)
{
    while (l->conns.next != &l->conns)
        conn_close(l, l->conns.next);
    srv_acceptor_fini(&l->acc);
    if (l->epfd >= 0) close(l->epfd);
    srv_add(&l->srv->stats->bytes, l->bytes);
    srv_add(&l->srv->stats->epoll_add, l->adds);
    srv_add(&l->srv->stats->epoll_mod, l->mods);
    srv_add(&l->srv->stats->epoll_waits, l->waits);
    srv_add(&l->srv->stats->touch_walked, l->walked);
}

static void loop_prepare(struct loop *l, struct srv_server *srv, int i, bool level)
{
    l->srv = srv;
    l->level = level;
    l->touch_lines = srv->opt->touch_lines;
    tl_init(&l->read, srv->opt->read_timeout_ms, &srv->stats->read_timeouts);
    tl_init(&l->idle, srv->opt->idle_timeout_ms, &srv->stats->idle_timeouts);
    l->timed = l->read.span || l->idle.span;
    l->epfd = -1;
    l->acc.reserve_fd = -1;
    l->ready.rnext = l->ready.rprev = &l->ready;
    l->conns.next = l->conns.prev = &l->conns;
    l->listener = (struct item){.handle = on_listener, .fd = srv->listen_fd[i]};
    l->stopper = (struct item){.handle = on_stop, .fd = srv->stop_fd[i]};
}

static int loop_init(struct loop *l)
{
    struct srv_server *srv = l->srv;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0 || srv_acceptor_init(&l->acc, srv, l->listener.fd) < 0) return -1;
    if (add_item(l, &l->listener, EPOLLIN | EPOLLET) < 0 || add_item(l, &l->stopper, EPOLLIN) < 0)
        return -1;
    l->running = true;
    return 0;
}

static void *loop_main(void *arg)
{
    struct loop *l = arg;
    struct epoll_event *ev = malloc(MAX_EVENTS * sizeof *ev);
    while (ev && l->running)
        loop_iterate(l, ev);
    free(ev);
    loop_fini(l);
    /* A loop that ended on its own (an error) takes the others down with it. */
    srv_stop(l->srv);
    return NULL;
}

static int epoll_run(struct srv_server *srv)
{
    int n = srv->nlisten, started = 1, rc = 0;
    struct loop *loops = calloc((size_t)n, sizeof *loops);
    if (!loops) return -1;
    bool level = srv->opt->trigger && strcmp(srv->opt->trigger, "level") == 0;
    srv->stats->engine = level ? "epoll-level" : "epoll-edge";
    srv->stats->epoll_counted = srv->stats->kcalls_counted = true;
    if (srv->opt->read_timeout_ms || srv->opt->idle_timeout_ms)
        srv->stats->timers = "deadline lists (one per timeout length)";
    for (int i = 0; i < n; i++)
        loop_prepare(&loops[i], srv, i, level);
    for (int i = 0; i < n && rc == 0; i++)
        rc = loop_init(&loops[i]);
    /* Loop 0 runs on the calling thread, so --threads 1 is truly single-threaded. */
    while (rc == 0 && started < n) {
        if (pthread_create(&loops[started].th, NULL, loop_main, &loops[started]) != 0)
            rc = -1;
        else
            started++;
    }
    if (rc < 0) {
        perror("echo-server: starting the epoll loops");
        srv_stop(srv); /* loop 0 and the started loops see their stop fds at once */
    } else {
        srv_ready(srv);
    }
    loop_main(&loops[0]);
    for (int i = 1; i < n; i++) {
        if (i < started)
            pthread_join(loops[i].th, NULL);
        else
            loop_fini(&loops[i]);
    }
    free(loops);
    return rc;
}

const struct srv_model srv_model_epoll = {.name = "epoll",
                                          .summary =
                                              "raw epoll callbacks, one event loop per thread",
                                          .concurrency = SRV_EVENT_LOOP,
                                          .per_thread_listener = true,
                                          .takes_threads = true,
                                          .takes_trigger = true,
                                          .takes_touch_lines = true,
                                          .takes_timeouts = true,
                                          .run = epoll_run};
