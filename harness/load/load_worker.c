/* echo-load's worker: one edge-triggered epoll loop driving a slice of connections through the
 * run's phases, and the process's share of workers. */
#define _GNU_SOURCE
#include "load_worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_EV  256
#define TICK_NS (10 * 1000 * 1000LL) /* timeouts and retries are checked this often */
/*
 * Persistent connections are opened at most this many at a time per worker: thousands of SYNs
 * at once overflow the server's accept backlog, and each dropped SYN costs a 1 s retransmit.
 */
#define MAX_CONNECTING 512

int64_t ld_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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

/* The end of the CPU window: where the measured window ends, so that the CPU divides by the
 * same seconds as the requests (the drain after it would otherwise count, and a short window
 * showed more cores than the thread could use). */
static void take_cpu_end(struct worker *w, int64_t now)
{
    getrusage(RUSAGE_THREAD, &w->ru1);
    w->cpu1 = thread_cpu_ns();
    w->wall1 = now;
}

static double tv_diff(struct timeval a, struct timeval b)
{
    return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_usec - b.tv_usec) / 1e6;
}

/*
 * A server that refuses every connect for --connect-timeout, while nothing comes back on the
 * connections already open, is not coming back: the worker gives up and stops the whole run,
 * instead of retrying until the ramp-up's or the run's deadline. A server at its connection
 * limit still echoes on the connections it holds, so its refusals alone stop nothing. A
 * signal stops the run the same way, through the shared flag that every process sees.
 */
static bool stopped(struct worker *w, int64_t now)
{
    int64_t patience = secs_ns(w->cfg->connect_timeout);
    if (w->connect_failing_since && now - w->connect_failing_since > patience &&
        now - w->last_progress > patience) {
        int none = 0;
        if (atomic_compare_exchange_strong(&w->sync->stop, &none, LD_STOP_GAVE_UP)) {
            w->res.gave_up_error = w->last_connect_error;
            w->res.gave_up_after = (double)(now - w->connect_failing_since) / NS_PER_S;
        }
    }
    int why = atomic_load(&w->sync->stop);
    if (!why) return false;
    if (w->phase == PH_RAMP) ld__set_window(w, now); /* no window was measured */
    if (w->phase <= PH_MEASURE && !w->stop_time) {
        w->stop_time = now;
        if (w->wall0) take_cpu_end(w, now);
    }
    w->res.stopped = why;
    w->phase = PH_STOP;
    return true;
}

static void update_phase(struct worker *w, int64_t now)
{
    if (stopped(w, now)) return;
    if (w->phase == PH_RAMP && !ld__ramp_over(w, now)) return;
    /* --agent: the coordinator's stop ends the window for every agent at one moment. */
    int64_t stop_at = atomic_load(&w->sync->stop_ns);
    if (stop_at && stop_at < w->t_end) {
        w->t_end = stop_at;
        if (stop_at < w->t_measure) w->t_measure = stop_at;
    }
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
            if (!w->cfg->requests) take_cpu_end(w, now);
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
    if (w->nagain) return now; /* bytes are waiting: look for events without sleeping */
    int64_t t = ld__timers_due(w, w->next_tick);
    if (w->phase == PH_RAMP) {
        /* Done here: look at the other workers every millisecond until all are. */
        bool waiting = w->ramp_left == 0 || now >= w->ramp_deadline; /* or for a start line */
        int64_t until = waiting ? now + 1000000 : w->ramp_deadline;
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
        ld__slot_open(w, &w->slots[w->next_open++], now);
}

static void start_slots(struct worker *w, int64_t now)
{
    if (w->cfg->mode != LD_CHURN) {
        open_pending(w, now);
        return;
    }
    /* Churn opens a slot's connection with its request: none is left for open_pending, which
     * would otherwise give a slot a second socket while its first is still open. */
    w->next_open = w->nslots;
    for (unsigned i = 0; i < w->nslots; i++) {
        if (rate_mode(w))
            ld__make_available(w, &w->slots[i]);
        else
            ld__begin_request(w, &w->slots[i], now, now);
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
    if (w->wall1 == 0) take_cpu_end(w, now); /* --requests: the window ends with the last echo */
    double total = (double)(w->cpu1 - w->cpu0) / NS_PER_S;
    double user = tv_diff(w->ru1.ru_utime, w->ru0.ru_utime);
    double sys = tv_diff(w->ru1.ru_stime, w->ru0.ru_stime);
    double user_share = user + sys > 0 ? user / (user + sys) : 0;
    r->cpu_user = total * user_share;
    r->cpu_sys = total - r->cpu_user;
    double wall = (double)(w->wall1 - w->wall0) / NS_PER_S;
    r->max_thread_core = wall > 0 ? total / wall : 0;
    r->cores = r->max_thread_core;
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
                r->unfinished += ld__pipe_at(w, s, k)->counted;
        } else if (s->busy && s->counted) {
            r->unfinished++;
        }
        ld__close_slot(s);
    }
    if (w->cfg->requests)
        r->unfinished += w->quota > w->issued ? w->quota - w->issued : 0;
    else if (rate_mode(w))
        while (w->next_due < w->t_end && w->next_due < w->stop_time) {
            if (w->next_due >= w->t_measure) r->unfinished++;
            ld__advance_due(w);
        }
    r->workers = 1;
    r->window_ns = w->t_measure;
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
            ld__start_after_ramp(w, now);
        }
        ld__run_timers(w, now);
        ld__dispatch_due(w, now);
        if (now >= w->next_tick) {
            ld__scan(w, now);
            w->next_tick = now + TICK_NS;
        }
        int n = wait_events(w->epfd, evs, next_wakeup(w, now) - now);
        now = ld_now_ns();
        for (int i = 0; i < n; i++)
            ld__on_event(w, evs[i].data.ptr, evs[i].events, now);
        ld__read_again(w, now);
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
    free(w->again);
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
    w->again = calloc(n, sizeof(*w->again));
    w->sbuf = malloc(BUF_SIZE);
    w->rbuf = malloc(BUF_SIZE);
    w->ebuf = malloc(BUF_SIZE + 1);
    if (w->epfd < 0 || !w->slots || !w->idle || !w->again || !w->sbuf || !w->rbuf || !w->ebuf)
        return -1;
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
    ld__set_window(w, sh->t0);
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
