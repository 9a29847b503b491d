/* server_fiber.c - one fiber per connection runs the blocking echo session on fiber IO. */
#include "echo_session.h"
#include "hot_text.h"
#include "json_print.h"
#include "server.h"

#include "engine.h"
#include "fiber.h"
#include "hook.h"
#include "io.h"
#include "timer.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/*
 * The same session code as the thread and fork models, run by fibers: fb_read and fb_write
 * suspend only the calling fiber, and the scheduler waits in the chosen event engine when no
 * fiber can run. --threads N runs N independent runtimes, one per thread, each with its own
 * SO_REUSEPORT listener (libfiber's advice for many cores): nothing is shared between them
 * but the statistics, added up when they finish.
 *
 * Each runtime has three kinds of fiber: an acceptor, a stopper that waits on the loop's
 * stop eventfd, and one session per connection. On stop, the stopper closes the acceptor's
 * listener (a dup, so the front end's own fd stays valid) and shuts down every session's
 * socket; blocked sessions wake, see end of file, close, and the scheduler returns once no
 * fiber is left.
 *
 * --io picks how a session reaches the socket. direct (the default): fb_read and fb_write,
 * the fiber IO calls. hooked: the thread model's own srv_fd_io, plain recv and send on a
 * blocking socket, made cooperative by the hooked libc calls (engines/hook.h) that each
 * runtime thread enables; the acceptor then uses plain accept4 too, so sockets start out
 * blocking as in the thread model. Comparing the two prices the hooks (experiments/hooks.py).
 *
 * Timeouts (--read-timeout, --idle-timeout) are the runtime's timers (--timers chooses their
 * structure): direct, every read is fb_read_timeout, whose per-fd timer stays armed across the
 * reads (io_read_timer), and with --idle-timeout a write that finds the socket full waits
 * for room at most that long; hooked, the sockets carry SO_RCVTIMEO and SO_SNDTIMEO, which the
 * hooked calls honour with the same timers. --poll-tick MS wraps the IO poller so that no wait
 * lasts longer than MS, the fixed tick of NtyCo's and libco's loops, for comparison with the
 * deadline-driven wait.
 */

#define DEFAULT_ENGINE "merged"
#define DEFAULT_SCHED  FB_RING
/* The read policy that measured best (README: ping-pong and streaming, per engine). */
#define DEFAULT_READ_POLICY FB_READ_ADAPTIVE

struct session;

struct runtime {
    struct srv_server *srv;
    int index;
    const sw_backend *backend;
    fb_policy policy;
    fb_stack_mode stack_mode;
    unsigned shared_stacks;
    fb_read_policy read_policy;
    const char *engine;
    bool hooked;          /* --io hooked */
    const tm_ops *timers; /* --timers */
    int64_t read_ns;      /* what bounds a read: the shorter of the two timeouts; 0 = none */
    bool read_idle;       /* that bound is --idle-timeout's (it counts as idle) */
    int64_t idle_ns;      /* --idle-timeout, also for a write waiting for room; 0 = none */
    struct {
        fb_poller inner;
        int64_t ns;
    } tick; /* --poll-tick: the IO poller, and the longest wait it may do */
    fb_io *io;
    fb_runtime *rt;
    int listen_fd; /* this runtime's dup of the front end's listener */
    struct srv_acceptor acc;
    bool stopping;
    struct session *sessions; /* open sessions, for shutdown on stop */
    srv_counter bytes;        /* private until the end: no cache line shared across threads */
    size_t buf_size;
    int setup_rc;
    int expect; /* runtime 0: how many runtimes must finish setting up before "listening" */
    pthread_t th;
};

/*
 * In guarded mode a session and its buffer live on the fiber's own stack: a session costs no
 * heap memory. In copy mode both go to the heap (one allocation, buffer after the record),
 * because the fibers of a shared stack run at the same addresses (fiber.h, the aliasing
 * hazard): the stopper walks the session list, and a list node on a session's stack would be
 * some other session's bytes whenever that one ran last. The copy-mode buffer is small
 * (COPY_BUF) so that an idle connection costs little; a larger echo just takes more reads.
 */
enum { COPY_BUF = 2048 };

struct session {
    struct runtime *r;
    struct session *prev, *next;
    int fd; /* in copy mode the echo buffer follows the record, in the same allocation */
};

/* Runtime 0 prints "listening" once every runtime is set up (or one failed). */
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t setup_cond = PTHREAD_COND_INITIALIZER;
static int setup_count;

static __thread struct runtime *tls_runtime; /* the calling thread's runtime */
static atomic_bool logged_spawn;

/* ---- the session's IO ------------------------------------------------------------------ */

static ssize_t s_read(void *ctx, void *buf, size_t len)
{
    return fb_read(((struct session *)ctx)->fd, buf, len);
}

static ssize_t s_write(void *ctx, const void *buf, size_t len)
{
    return fb_write(((struct session *)ctx)->fd, buf, len);
}

/* The default session's calls (serve): ctx is the fd itself, not the session. */
static ssize_t fd_read(void *ctx, void *buf, size_t len)
{
    return fb_read((int)(intptr_t)ctx, buf, len);
}

static ssize_t fd_write(void *ctx, const void *buf, size_t len)
{
    return fb_write((int)(intptr_t)ctx, buf, len);
}

static void count_timeout(struct runtime *r, bool idle)
{
    srv_add(idle ? &r->srv->stats->idle_timeouts : &r->srv->stats->read_timeouts, 1);
}

/* A read that waits at most the timeout; running out ends the session, counted. */
static ssize_t s_read_timed(void *ctx, void *buf, size_t len)
{
    struct session *s = ctx;
    ssize_t n = fb_read_timeout(s->fd, buf, len, s->r->read_ns);
    if (n < 0 && errno == ETIMEDOUT) count_timeout(s->r, s->r->read_idle);
    return n;
}

/* --idle-timeout: what the socket takes, and a wait for room of at most the timeout when it
 * takes nothing (every byte moved restarts the idle clock, so the wait is per call). */
static ssize_t s_write_idle(void *ctx, const void *buf, size_t len)
{
    struct session *s = ctx;
    for (;;) {
        ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return n;
        if (fb_wait(s->fd, FB_OUT, s->r->idle_ns) < 0) {
            if (errno == ETIMEDOUT) count_timeout(s->r, true);
            return -1;
        }
    }
}

/* Hooked: the socket's own timeouts (set at accept) end a call with EAGAIN. */
static struct session *hooked_session(void *ctx)
{
    return (struct session *)((char *)ctx - offsetof(struct session, fd));
}

static ssize_t s_read_hooked(void *ctx, void *buf, size_t len)
{
    ssize_t n = srv_fd_io_template.read(ctx, buf, len);
    struct runtime *r = hooked_session(ctx)->r;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) count_timeout(r, r->read_idle);
    return n;
}

static ssize_t s_write_hooked(void *ctx, const void *buf, size_t len)
{
    ssize_t n = srv_fd_io_template.write(ctx, buf, len);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        count_timeout(hooked_session(ctx)->r, true);
    return n;
}

static int hooked_timeouts(struct runtime *r, int fd)
{
    struct timeval rt = {.tv_sec = r->read_ns / 1000000000,
                         .tv_usec = r->read_ns % 1000000000 / 1000},
                   wt = {.tv_sec = r->idle_ns / 1000000000,
                         .tv_usec = r->idle_ns % 1000000000 / 1000};
    if (r->read_ns && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof rt) < 0) return -1;
    if (r->idle_ns && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wt, sizeof wt) < 0) return -1;
    return 0;
}

/* --poll-tick: the runtime's idle wait (-1) or a later deadline becomes the tick. */
static int tick_poll(void *state, int64_t timeout_ns)
{
    struct runtime *r = state;
    if (timeout_ns < 0 || timeout_ns > r->tick.ns) timeout_ns = r->tick.ns;
    return r->tick.inner.poll(r->tick.inner.state, timeout_ns);
}

static size_t tick_pending(void *state)
{
    struct runtime *r = state;
    return r->tick.inner.pending(r->tick.inner.state);
}

/* Sessions leave the list before closing, so the stopper never shuts down a reused fd
 * number. */
static void leave_list(struct session *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        s->r->sessions = s->next;
    if (s->next) s->next->prev = s->prev;
}

static int s_close(void *ctx)
{
    struct session *s = ctx;
    leave_list(s);
    return fb_close(s->fd);
}

/* Hooked mode: ctx is the session's fd (srv_fd_io's convention); its close is plain close(2),
 * which the hooks turn into fb_close. */
static int s_close_hooked(void *ctx)
{
    leave_list(hooked_session(ctx));
    return srv_fd_io_template.close(ctx);
}

/* Enter s in the runtime's session list. */
static void session_enter(struct runtime *r, struct session *s)
{
    s->next = r->sessions;
    s->prev = NULL;
    if (s->next) s->next->prev = s;
    r->sessions = s;
}

/* Enter s in the list and give io the calls a session of r makes. */
static void session_open(struct runtime *r, struct session *s, struct srv_io *io)
{
    session_enter(r, s);
    *io = (struct srv_io){r->read_ns ? s_read_timed : s_read, r->idle_ns ? s_write_idle : s_write,
                          s_close, s};
    if (r->hooked) {
        *io = srv_fd_io(&s->fd);
        io->close = s_close_hooked;
        if (r->read_ns) io->read = s_read_hooked;
        if (r->idle_ns) io->write = s_write_hooked;
    }
}

/*
 * A session of r on s. A parked fiber's lines are cold when it resumes, so a request should
 * read as few as it can: the default session (no timeouts, not hooked) runs srv_echo_loop with
 * calls known here, which become direct, its state stays in registers, and a request reads
 * neither the session record nor an io record. The other sessions call srv_echo_session
 * through an io in this frame.
 */
static inline __attribute__((always_inline)) void serve(struct runtime *r, struct session *s,
                                                        char *buf)
{
    if (!r->read_ns && !r->idle_ns && !r->hooked) {
        const struct srv_io io = {fd_read, fd_write, NULL, (void *)(intptr_t)s->fd};
        session_enter(r, s);
        srv_echo_loop(&io, buf, r->buf_size, &r->bytes);
        s_close(s);
        return;
    }
    struct srv_io io;
    session_open(r, s, &io);
    srv_echo_session(&io, buf, r->buf_size, &r->bytes);
}

/*
 * Guarded mode. The session record is a local of this frame, below the buffer, so that what
 * a request touches on the fiber's stack (the buffer's first bytes, the frames down to the
 * switch) is a few hundred contiguous bytes on one page. Declared in the frame that also holds
 * the buffer, it would sit above the buffer's 16 KiB, on another page: with a thousand
 * connections, one more TLB entry and cache line per request, which measured
 * (harness/experiments/fiberio.py, 1,000 connections) as a visible share of the fiber
 * server's CPU.
 */
static void __attribute__((noinline)) HOT_TEXT serve_on_stack(struct runtime *r, int fd, char *buf)
{
    struct session s = {.fd = fd, .r = r};
    serve(r, &s, buf);
}

static void session_main(void *arg)
{
    struct runtime *r = tls_runtime;
    int fd = (int)(intptr_t)arg;
    if (r->stopping) {
        fb_close(fd); /* accepted just before the stop: nobody will shut it down */
        srv_conn_done(r->srv);
        return;
    }
    if (r->stack_mode == FB_STACK_COPY) {
        struct session *s = malloc(sizeof *s + r->buf_size);
        if (!s) {
            fb_close(fd);
            srv_add(&r->srv->stats->spawn_failed, 1);
        } else {
            *s = (struct session){.fd = fd, .r = r};
            serve(r, s, (char *)(s + 1));
            free(s);
        }
    } else {
        char buf[r->buf_size];
        serve_on_stack(r, fd, buf);
    }
    srv_conn_done(r->srv);
}

/* ---- acceptor and stopper -------------------------------------------------------------- */

static atomic_bool logged_fd_limit;

static void spawn_session(struct runtime *r, int fd)
{
    int limit = fb_io_engine(r->io)->fd_limit;
    if (limit && fd >= limit) {
        /* The engine could never wait on it (select: an fd_set holds FD_SETSIZE bits). */
        close(fd);
        srv_add(&r->srv->stats->refused, 1);
        srv_conn_done(r->srv);
        srv_log_once(&logged_fd_limit,
                     "the %s engine cannot wait on fd %d (limit %d, FD_SETSIZE); connections "
                     "beyond it are closed",
                     r->engine, fd, limit);
        return;
    }
    int err = 0;
    if (r->hooked && hooked_timeouts(r, fd) < 0)
        err = errno;
    else if (fb_spawn(r->rt, session_main, (void *)(intptr_t)fd))
        return;
    else
        err = errno;
    close(fd);
    srv_add(&r->srv->stats->spawn_failed, 1);
    srv_conn_done(r->srv);
    srv_log_once(&logged_spawn, "cannot start a fiber: %s; connection closed", strerror(err));
}

static void acceptor_main(void *arg)
{
    struct runtime *r = arg;
    while (!r->stopping) {
        /* Hooked: a blocking socket, as the thread model's acceptor makes; the listener itself
         * is non-blocking (the front end's), so the hooked accept4 answers EAGAIN. */
        int fd = r->hooked ? accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC)
                           : fb_accept(r->listen_fd, NULL, NULL);
        srv_acceptor_refill(&r->acc); /* another runtime may have taken our reserve's slot */
        if (fd >= 0) {
            if (srv_admit(r->srv, fd)) spawn_session(r, fd);
            continue;
        }
        if (r->stopping || errno == EBADF) break;
        /* Out of fds, accept4 fails with EMFILE even when nothing is pending, so it must
         * not simply be retried: that would spin and starve every session. */
        switch (srv_accept_failed(&r->acc, errno)) {
        case SRV_ACCEPT_AGAIN: /* the pending connection was shed: wait for the next one */
            fb_wait(r->listen_fd, FB_IN, FB_FOREVER);
            break;
        case SRV_ACCEPT_BACKOFF:
            fb_sleep((int64_t)SRV_BACKOFF_MS * 1000000);
            break;
        default: /* one was refused or shed, more may be pending: let sessions run first */
            fb_yield();
            break;
        }
    }
}

static void stopper_main(void *arg)
{
    struct runtime *r = arg;
    int fd = r->srv->stop_fd[r->index];
    while (!srv_stopping(r->srv) && fb_wait(fd, FB_IN, FB_FOREVER) < 0 && errno != EBADF)
        fb_sleep(1000000); /* ENOMEM on the wait: try again shortly */
    r->stopping = true;
    fb_close(r->listen_fd); /* the acceptor wakes with EBADF */
    r->listen_fd = -1;
    for (struct session *s = r->sessions; s; s = s->next)
        shutdown(s->fd, SHUT_RDWR); /* blocked reads see end of file, writes fail */
}

/* ---- one runtime per thread ------------------------------------------------------------- */

static int runtime_setup(struct runtime *r)
{
    const struct srv_options *o = r->srv->opt;
    bool copy = r->stack_mode == FB_STACK_COPY;
    size_t stack = o->stack_size ? o->stack_size : copy ? 256 * 1024 : 64 * 1024;
    r->buf_size = copy ? COPY_BUF : stack / 4 < SRV_ECHO_BUF ? stack / 4 : SRV_ECHO_BUF;
    r->listen_fd = dup(r->srv->listen_fd[r->index]);
    /* Everything the runtime holds open is opened before "listening" is printed. */
    if (r->listen_fd < 0 || srv_acceptor_init(&r->acc, r->srv, r->listen_fd) < 0 ||
        sw_overflow_guard_init() < 0)
        return -1;
    r->io = fb_io_new(r->engine);
    if (!r->io || (r->hooked && fb_hook_enable() < 0)) return -1;
    fb_io_set_read_policy(r->io, r->read_policy);
    fb_config cfg = {.backend = r->backend,
                     .policy = r->policy,
                     .stack_size = stack,
                     .poller = fb_io_poller(r->io),
                     .stack_mode = r->stack_mode,
                     .shared_stacks = r->shared_stacks,
                     .timers = r->timers};
    if (o->poll_tick_ms) {
        r->tick.inner = cfg.poller;
        r->tick.ns = (int64_t)o->poll_tick_ms * 1000000;
        cfg.poller = (fb_poller){.state = r, .poll = tick_poll, .pending = tick_pending};
    }
    r->rt = fb_runtime_new(&cfg);
    if (!r->rt) return -1;
    if (!fb_spawn(r->rt, stopper_main, r) || !fb_spawn(r->rt, acceptor_main, r)) return -1;
    return 0;
}

static void runtime_finish(struct runtime *r)
{
    struct srv_stats *st = r->srv->stats;
    if (r->rt) {
        fb_stats fs;
        fb_get_stats(r->rt, &fs);
        srv_add(&st->switches, fs.switches);
        srv_add(&st->stack_saves, fs.stack_saves);
        srv_add(&st->stack_restores, fs.stack_restores);
        fb_runtime_free(r->rt);
    }
    if (r->io) {
        fb_io_stats is;
        fb_io_get_stats(r->io, &is);
        srv_add(&st->epoll_add, is.engine.ctl_add);
        srv_add(&st->epoll_mod, is.engine.ctl_mod);
        srv_add(&st->epoll_del, is.engine.ctl_del);
        srv_add(&st->epoll_waits, is.engine.epoll_waits);
        srv_add(&st->scan_calls, is.engine.scan_calls);
        srv_add(&st->scan_fds, is.engine.scan_fds);
        srv_add(&st->uring_enters, is.engine.uring_enters);
        srv_add(&st->uring_sqes, is.engine.uring_sqes);
        if (is.engine.ctl_source == ENG_CTL_NONE) st->epoll_counted = st->kcalls_counted = false;
        srv_add(&st->reads_tried, is.reads_tried);
        srv_add(&st->reads_again, is.reads_again);
        srv_add(&st->reads_waited_first, is.reads_waited_first);
        if (r->listen_fd >= 0) fb_close(r->listen_fd);
        fb_hook_stats hs;
        fb_hook_get_stats(&hs);
        srv_add(&st->hook_calls, hs.calls);
        srv_add(&st->hook_waits, hs.waits);
        fb_hook_disable();
        fb_io_free(r->io);
    } else if (r->listen_fd >= 0) {
        close(r->listen_fd);
    }
    srv_acceptor_fini(&r->acc);
    srv_add(&st->bytes, atomic_load(&r->bytes));
}

/* Set up, tell runtime 0, serve, add the statistics up. */
static void *runtime_main(void *arg)
{
    struct runtime *r = arg;
    tls_runtime = r;
    r->setup_rc = runtime_setup(r);
    if (r->setup_rc < 0) {
        fprintf(stderr, "echo-server: fiber runtime %d: %s\n", r->index, strerror(errno));
        srv_stop(r->srv);
    }
    pthread_mutex_lock(&setup_lock);
    setup_count++;
    pthread_cond_broadcast(&setup_cond);
    while (r->index == 0 && setup_count < r->expect)
        pthread_cond_wait(&setup_cond, &setup_lock);
    pthread_mutex_unlock(&setup_lock);
    if (r->index == 0 && !srv_stopping(r->srv)) srv_ready(r->srv);
    if (r->setup_rc == 0 && fb_run(r->rt) < 0) {
        fprintf(stderr, "echo-server: fiber runtime %d: %s\n", r->index, strerror(errno));
        srv_stop(r->srv);
    }
    runtime_finish(r);
    return NULL;
}

static int fiber_run(struct srv_server *srv)
{
    const struct srv_options *o = srv->opt;
    int n = srv->nlisten, started = 1, rc = 0;
    struct runtime *rs = calloc((size_t)n, sizeof *rs);
    if (!rs) return -1;
    struct srv_stats *st = srv->stats;
    st->switch_name = o->switch_name ? o->switch_name : sw_backend_at(0)->name;
    st->engine = o->engine ? o->engine : DEFAULT_ENGINE;
    st->sched = o->sched ? o->sched : fb_policy_name(DEFAULT_SCHED);
    fb_stack_mode mode = FB_STACK_GUARDED;
    unsigned k = 0;
    fb_stack_mode_parse(o->stack ? o->stack : "guarded", &mode, &k); /* checked already */
    if (mode == FB_STACK_COPY)
        snprintf(st->stack_buf, sizeof st->stack_buf, "copy:%u", k);
    else
        snprintf(st->stack_buf, sizeof st->stack_buf, "guarded");
    st->stack = st->stack_buf;
    st->read_policy = o->read_policy ? o->read_policy : fb_read_policy_name(DEFAULT_READ_POLICY);
    st->io = o->io ? o->io : "direct";
    const tm_ops *timers = o->timers ? tm_find(o->timers) : tm_default(); /* checked already */
    st->timers = timers->name;
    st->hooks_counted = strcmp(st->io, "hooked") == 0;
    st->switches_counted = true;
    st->reads_counted = true;
    st->epoll_counted = st->kcalls_counted = true; /* until an engine says it cannot count */
    for (int i = 0; i < n; i++) {
        rs[i] = (struct runtime){
            .srv = srv, .index = i, .engine = st->engine, .listen_fd = -1, .acc.reserve_fd = -1};
        rs[i].hooked = strcmp(st->io, "hooked") == 0;
        rs[i].timers = timers;
        rs[i].idle_ns = o->idle_timeout_ms * 1000000;
        rs[i].read_ns = o->read_timeout_ms * 1000000;
        rs[i].read_idle =
            o->idle_timeout_ms && (!o->read_timeout_ms || o->idle_timeout_ms <= o->read_timeout_ms);
        if (rs[i].read_idle) rs[i].read_ns = rs[i].idle_ns;
        rs[i].backend = sw_backend_find(st->switch_name);
        rs[i].stack_mode = mode;
        rs[i].shared_stacks = k;
        fb_policy_parse(st->sched, &rs[i].policy);
        fb_read_policy_parse(st->read_policy, &rs[i].read_policy);
    }
    /* Runtime 0 runs on the calling thread, so --threads 1 is truly single-threaded. */
    while (started < n && pthread_create(&rs[started].th, NULL, runtime_main, &rs[started]) == 0)
        started++;
    if (started < n) {
        perror("echo-server: starting the fiber threads");
        srv_stop(srv); /* the started runtimes see their stop fds and finish */
        rc = -1;
    }
    rs[0].expect = started;
    runtime_main(&rs[0]);
    for (int i = 1; i < started; i++)
        pthread_join(rs[i].th, NULL);
    for (int i = 0; i < started; i++)
        if (rs[i].setup_rc < 0) rc = -1;
    free(rs);
    return rc;
}

/* The compiled-in backends that declare copy-stack support, for the error message. */
static const char *copy_backends(void)
{
    static char names[128];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sw_backend_count(); i++)
        if (sw_backend_at(i)->props.copy_stack)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     sw_backend_at(i)->name);
    return names;
}

static int fiber_check(const struct srv_options *o, char *why, size_t len)
{
    if (o->switch_name && !sw_backend_find(o->switch_name)) {
        snprintf(why, len, "unknown --switch '%s' (valid: %s)", o->switch_name, sw_backend_names());
        return -1;
    }
    if (o->engine && !eng_find(o->engine)) {
        snprintf(why, len, "unknown --engine '%s' (valid: %s)", o->engine, eng_names());
        return -1;
    }
    fb_read_policy rp;
    if (o->read_policy && fb_read_policy_parse(o->read_policy, &rp) < 0) {
        snprintf(why, len, "unknown --read-policy '%s' (valid: %s)", o->read_policy,
                 fb_read_policy_names());
        return -1;
    }
    fb_policy p;
    if (o->sched && fb_policy_parse(o->sched, &p) < 0) {
        snprintf(why, len, "unknown --sched '%s' (valid: star, ring)", o->sched);
        return -1;
    }
    if (o->io && strcmp(o->io, "direct") && strcmp(o->io, "hooked")) {
        snprintf(why, len, "unknown --io '%s' (valid: direct, hooked)", o->io);
        return -1;
    }
    if (o->timers && !tm_find(o->timers)) {
        snprintf(why, len, "unknown --timers '%s' (valid: %s)", o->timers, tm_names());
        return -1;
    }
    fb_stack_mode mode;
    unsigned k;
    if (o->stack && fb_stack_mode_parse(o->stack, &mode, &k) < 0) {
        snprintf(why, len, "unknown --stack '%s' (valid: guarded, copy, copy:K with K 1..1024)",
                 o->stack);
        return -1;
    }
    const sw_backend *b = sw_backend_find(o->switch_name ? o->switch_name : sw_backend_at(0)->name);
    if (o->stack && mode == FB_STACK_COPY && !b->props.copy_stack) {
        snprintf(why, len,
                 "--stack copy needs a switch backend that can move stacks; '%s' cannot "
                 "(valid: %s)",
                 b->name, copy_backends());
        return -1;
    }
    if (o->stack_size && o->stack_size < SW_STACK_MIN) {
        snprintf(why, len, "--stack-size must be at least %d bytes for --model fiber",
                 SW_STACK_MIN);
        return -1;
    }
    return 0;
}

/* What `echo-server --list --json` declares of this model beyond the common properties: the
 * read policies (--read-policy) in io.h's order and what the model takes when none is given. */
static void fiber_list_props(FILE *f)
{
    fputs(", \"read_policies\": [", f);
    for (int p = 0; strcmp(fb_read_policy_name((fb_read_policy)p), "?") != 0; p++) {
        if (p) fputs(", ", f);
        json_print_string(f, fb_read_policy_name((fb_read_policy)p));
    }
    fputs("]", f);
    json_print_str_field(f, ", ", "default_read_policy", fb_read_policy_name(DEFAULT_READ_POLICY));
    json_print_str_field(f, ", ", "default_engine", DEFAULT_ENGINE);
    json_print_str_field(f, ", ", "default_timers", tm_default()->name);
}

const struct srv_model srv_model_fiber = {
    .name = "fiber",
    .summary = "one fiber per connection over an event engine, blocking-style code",
    .concurrency = SRV_FIBER_PER_CONN,
    .takes_threads = true,
    .takes_stack_size = true,
    .takes_fiber_flags = true,
    .takes_timeouts = true,
    .per_thread_listener = true,
    .procs_kind = SRV_PROCS_REUSEPORT,
    .check = fiber_check,
    .list_props = fiber_list_props,
    .run = fiber_run};
