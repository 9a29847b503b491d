/* echo-load's worker: one edge-triggered epoll loop driving a slice of connections through the
 * run's phases (the ramp-up, warm-up, measured window and drain), its mode picked once, and the
 * process's share of workers. */
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

/* ---- the ramp-up and the measured window ---------------------------------------------------- */

/* The measured part of the run starts at `start`: the end of the ramp-up, or the start. */
static void set_window(struct worker *w, int64_t start)
{
    const struct ld_config *cfg = w->c.cfg;
    w->c.t_measure = start + secs_ns(cfg->warmup);
    w->t_cap = start + secs_ns(cfg->max_time);
    w->c.t_end = cfg->requests ? w->t_cap : w->c.t_measure + secs_ns(cfg->duration);
    if (w->c.mode->window) w->c.mode->window(&w->c, start);
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
    /* A coordinated run (--agent): the ramp-up is over here, and the window starts when the
     * coordinator says so (load_agent.c sets started_ns). */
    int64_t start = sy->barrier ? atomic_load(&sy->started_ns) : done;
    if (!start) return false;
    w->c.res.ramp.done = done;
    w->c.res.ramp.unfinished = w->ramp_left;
    set_window(w, start);
    w->c.phase = PH_WARMUP;
    w->restart = true;
    return true;
}

/* After the ramp-up: every connection that is ready goes to its mode. */
static void start_after_ramp(struct worker *w, int64_t now)
{
    for (unsigned i = 0; i < w->c.nslots; i++) {
        struct slot *s = &w->c.slots[i];
        if (s->state == S_READY) w->c.mode->ready(&w->c, s, now);
    }
}

/* ---- the loop ------------------------------------------------------------------------------- */

/*
 * A server that refuses every connect for --connect-timeout, while nothing comes back on the
 * connections already open, is not coming back: the worker gives up and stops the whole run,
 * instead of retrying until the ramp-up's or the run's deadline. A server at its connection
 * limit still echoes on the connections it holds, so its refusals alone stop nothing. A
 * signal stops the run the same way, through the shared flag that every process sees.
 */
static bool stopped(struct worker *w, int64_t now)
{
    int64_t patience = secs_ns(w->c.cfg->connect_timeout);
    if (w->connect_failing_since && now - w->connect_failing_since > patience &&
        now - w->last_progress > patience) {
        int none = 0;
        if (atomic_compare_exchange_strong(&w->sync->stop, &none, LD_STOP_GAVE_UP)) {
            w->c.res.gave_up_error = w->last_connect_error;
            w->c.res.gave_up_after = (double)(now - w->connect_failing_since) / NS_PER_S;
        }
    }
    int why = atomic_load(&w->sync->stop);
    if (!why) return false;
    if (w->c.phase == PH_RAMP) set_window(w, now); /* no window was measured */
    if (w->c.phase <= PH_MEASURE && !w->c.stop_time) {
        w->c.stop_time = now;
        if (w->wall0) take_cpu_end(w, now);
    }
    w->c.res.stopped = why;
    w->c.phase = PH_STOP;
    return true;
}

static void update_phase(struct worker *w, int64_t now)
{
    if (stopped(w, now)) return;
    if (w->c.phase == PH_RAMP && !ramp_over(w, now)) return;
    /* --agent: the coordinator's stop ends the window for every agent at one moment. */
    int64_t stop_at = atomic_load(&w->sync->stop_ns);
    if (stop_at && stop_at < w->c.t_end) {
        w->c.t_end = stop_at;
        if (stop_at < w->c.t_measure) w->c.t_measure = stop_at;
    }
    if (now >= w->t_cap) {
        w->c.res.capped = w->c.phase != PH_DRAIN || w->c.inflight > 0;
        w->c.phase = PH_STOP;
        return;
    }
    if (w->c.phase == PH_WARMUP && now >= w->c.t_measure) {
        w->c.phase = PH_MEASURE;
        take_cpu_start(w, now);
    }
    if (w->c.phase == PH_MEASURE) {
        bool over = w->c.cfg->requests ? w->c.issued >= w->c.quota : now >= w->c.t_end;
        if (over) {
            w->c.phase = PH_DRAIN;
            w->c.stop_time = now;
            if (!w->c.cfg->requests) take_cpu_end(w, now);
            w->t_drain_end = now + secs_ns(w->c.cfg->timeout);
        }
    }
    if (w->c.phase == PH_DRAIN) {
        bool backlog = w->c.mode->backlog && w->c.mode->backlog(&w->c, now);
        if ((w->c.inflight == 0 && !backlog) || now >= w->t_drain_end) w->c.phase = PH_STOP;
    }
}

static int64_t next_wakeup(struct worker *w, int64_t now)
{
    if (w->nagain) return now; /* bytes are waiting: look for events without sleeping */
    int64_t t = w->c.mode->wake_by ? w->c.mode->wake_by(&w->c, w->next_tick) : w->next_tick;
    if (w->c.phase == PH_RAMP) {
        /* Done here: look at the other workers every millisecond until all are. */
        bool waiting = w->ramp_left == 0 || now >= w->ramp_deadline; /* or for a start line */
        int64_t until = waiting ? now + 1000000 : w->ramp_deadline;
        return until < t ? until : t;
    }
    if (w->c.phase == PH_WARMUP && w->c.t_measure < t) t = w->c.t_measure;
    if (w->c.phase == PH_MEASURE && !w->c.cfg->requests && w->c.t_end < t) t = w->c.t_end;
    if (w->c.phase == PH_DRAIN && w->t_drain_end < t) t = w->t_drain_end;
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
    while (w->next_open < w->c.nslots && w->connecting < MAX_CONNECTING)
        ld__slot_open(w, &w->c.slots[w->next_open++], now);
}

static void start_slots(struct worker *w, int64_t now)
{
    if (w->c.cfg->mode != LD_CHURN) {
        open_pending(w, now);
        return;
    }
    /* Churn opens a slot's connection with its request: none is left for open_pending, which
     * would otherwise give a slot a second socket while its first is still open. */
    w->next_open = w->c.nslots;
    for (unsigned i = 0; i < w->c.nslots; i++) {
        if (w->c.mode->open_loop) /* the slot waits for its turn on the schedule */
            w->c.mode->ready(&w->c, &w->c.slots[i], now);
        else
            ld_core_begin(&w->c, &w->c.slots[i], now, now);
    }
}

static void finish(struct worker *w, int64_t now)
{
    struct ld_result *r = &w->c.res;
    if (w->wall0 == 0) take_cpu_start(w, now); /* capped before measuring began: an empty window */
    if (w->c.stop_time == 0) w->c.stop_time = now;
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
    int64_t end = w->c.cfg->requests ? w->c.last_done : w->c.stop_time;
    if (w->c.mode->open_loop && w->c.last_done > end) end = w->c.last_done;
    if (end < w->c.t_measure) end = w->c.stop_time > w->c.t_measure ? w->c.stop_time : now;
    r->seconds = end > w->c.t_measure ? (double)(end - w->c.t_measure) / NS_PER_S : 0;
    for (unsigned i = 0; i < w->c.nslots; i++) {
        struct slot *s = &w->c.slots[i];
        if (w->c.mode->drop) {
            uint64_t counted = 0;
            if (s->busy) w->c.mode->drop(&w->c, s, &counted);
            r->unfinished += counted;
        } else if (s->busy && s->counted) {
            r->unfinished++;
        }
        ld__close_slot(s);
    }
    if (w->c.cfg->requests)
        r->unfinished += w->c.quota > w->c.issued ? w->c.quota - w->c.issued : 0;
    else if (w->c.mode->unsent)
        r->unfinished += w->c.mode->unsent(&w->c);
    r->workers = 1;
    r->window_ns = w->c.t_measure;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct epoll_event evs[MAX_EV];
    /* On schedule, not up to 50 us late. */
    if (w->c.mode->open_loop) prctl(PR_SET_TIMERSLACK, 1UL);
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
        if (w->c.phase == PH_STOP) break;
        if (w->restart) {
            w->restart = false;
            start_after_ramp(w, now);
        }
        if (w->c.mode->tick) w->c.mode->tick(&w->c, now);
        if (now >= w->next_tick) {
            ld__scan(w, now);
            w->next_tick = now + TICK_NS;
        }
        int n = wait_events(w->epfd, evs, next_wakeup(w, now) - now);
        now = ld_now_ns();
        for (int i = 0; i < n; i++)
            ld__on_event(w, evs[i].data.ptr, evs[i].events, now);
        ld__read_again(w, now);
        if (w->next_open < w->c.nslots && w->c.phase <= PH_MEASURE) open_pending(w, now);
    }
    finish(w, now);
    return NULL;
}

static void worker_free(struct worker *w)
{
    if (w->epfd >= 0) close(w->epfd);
    free(w->c.slots);
    free(w->again);
    free(w->sbuf);
    free(w->rbuf);
    free(w->ebuf);
    if (w->c.mode && w->c.mode->fini) w->c.mode->fini(&w->c);
}

/* The mode, once per run: the command line allows at most one of them (load_main.c). */
static const struct ld_mode_ops *pick_mode(const struct ld_config *cfg)
{
    if (cfg->rate > 0) return &ld_mode_rate;
    if (cfg->pipeline > 1) return &ld_mode_pipeline;
    if (cfg->mode == LD_SLOW) return &ld_mode_slow;
    return &ld_mode_closed;
}

static int worker_setup(struct worker *w, const struct ld_config *cfg, const struct ld_share *sh,
                        unsigned idx, unsigned first, unsigned n, uint64_t quota)
{
    memset(w, 0, sizeof(*w));
    w->c.cfg = cfg;
    w->c.nslots = n;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->c.slots = calloc(n, sizeof(*w->c.slots));
    w->again = calloc(n, sizeof(*w->again));
    w->sbuf = malloc(BUF_SIZE);
    w->rbuf = malloc(BUF_SIZE);
    w->ebuf = malloc(BUF_SIZE + 1);
    if (w->epfd < 0 || !w->c.slots || !w->again || !w->sbuf || !w->rbuf || !w->ebuf) return -1;
    for (unsigned i = 0; i < n; i++) {
        w->c.slots[i].fd = -1;
        w->c.slots[i].id = sh->slot_base + first + i;
    }
    ld_result_init(&w->c.res);
    w->t0 = sh->t0;
    w->c.idx = idx;
    w->c.nthreads = sh->threads;
    w->sync = sh->sync;
    w->c.quota = quota;
    w->c.mode = pick_mode(cfg);
    if (w->c.mode->init && w->c.mode->init(&w->c, sh) < 0) return -1;
    set_window(w, sh->t0);
    if (ld_ramp_applies(cfg)) {
        w->c.phase = PH_RAMP;
        w->ramp_left = n;
        w->ramp_deadline = sh->t0 + secs_ns(cfg->ramp_timeout);
        w->c.res.ramp.ran = true;
        w->c.res.ramp.t0 = sh->t0;
    } else {
        w->c.phase = PH_WARMUP;
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
        if (rc == 0) ld_result_merge(out, &ws[i].c.res);
        worker_free(&ws[i]);
    }
    free(ws);
    return rc;
}
