/* echo-load's worker internals: a worker's connection slots and their state, shared by the
 * worker loop (load_worker.c) and the files it drives (load_conn.c, load_slow.c, load_ramp.c,
 * load_dispatch.c). */
#ifndef SWITCHYARD_HARNESS_LOAD_WORKER_H
#define SWITCHYARD_HARNESS_LOAD_WORKER_H

#include "load.h"

#include <pthread.h>
#include <sys/resource.h>

#define BUF_SIZE 65536
#define NS_PER_S 1000000000.0

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
    bool busy;          /* a request is in flight (churn: from its connect on) */
    bool counted;       /* that request belongs to the measured window */
    bool in_idle;       /* listed in the worker's idle stack (rate mode) */
    bool ramped;        /* completed its first echo during the ramp-up */
    bool again;         /* listed in the worker's read-again ring: bytes may be left unread */
    uint8_t wait;       /* enum slot_wait */
    uint8_t ramp_fails; /* ramp-up: fatal failures of this slot's first echo */
    uint32_t wait_seq;
    uint32_t serial;
    uint64_t id; /* global slot number */
    uint64_t seed;
    uint64_t tx, rx, req_end; /* stream offsets on the current connection */
    uint64_t chunk_end;       /* sending stops here until the next chunk is due (slow
                                 mode) */
    int64_t t_start, t_due, deadline;
    int64_t t_connect, wake_at;
    int64_t t_connected;      /* ramp-up: when connect() was seen complete at once, else 0 */
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
    /* Slots that used up their read budget before EAGAIN: the edge that reported their bytes
     * is spent, so the loop reads them again itself, after its next look at the clock. */
    unsigned *again;
    unsigned nagain, again_head;
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
    struct rusage ru0, ru1;
    int64_t cpu0, cpu1;            /* CLOCK_THREAD_CPUTIME_ID at the window's start and end, ns */
    int64_t wall0, wall1;          /* wall1 0: the window's end is not taken yet */
    int64_t connect_failing_since; /* first failed connect since the last good one, or 0 */
    int64_t last_progress;         /* the last good connect or bytes echoed, or 0 */
    int last_connect_error;
    struct ld_result res;
    pthread_t thread;
};

static inline int64_t secs_ns(double s)
{
    return (int64_t)(s * NS_PER_S);
}

static inline bool rate_mode(const struct worker *w)
{
    return w->cfg->rate > 0;
}

static inline bool pipelined(const struct worker *w)
{
    return w->cfg->pipeline > 1;
}

static inline bool may_start(const struct worker *w)
{
    if (w->phase == PH_RAMP) return false; /* only first echoes, started on connect */
    if (w->phase == PH_WARMUP) return true;
    return w->phase == PH_MEASURE && (w->cfg->requests == 0 || w->issued < w->quota);
}

/*
 * Rate mode: may the request due at `due` still be sent? The warm-up part of the schedule always
 * may; the measured part ends with the window or the request quota.
 */
static inline bool may_dispatch(const struct worker *w, int64_t due)
{
    if (w->phase == PH_STOP || w->phase == PH_RAMP) return false;
    if (due < w->t_measure) return true;
    if (w->cfg->requests) return w->issued < w->quota;
    return due < w->t_end;
}

/* ---- the connection slot's state machine (load_conn.c) --------------------------------------- */

void ld__close_slot(struct slot *s);
/* Makes the slot free for the rate schedule (rate mode's idle list). */
void ld__make_available(struct worker *w, struct slot *s);
/* Counts the error and closes the slot; it reconnects after a pause, or waits idle (churn at a
 * rate). */
void ld__slot_fail(struct worker *w, struct slot *s, enum ld_error kind, int64_t now);
void ld__slot_open(struct worker *w, struct slot *s, int64_t now);
void ld__put_to_work(struct worker *w, struct slot *s, int64_t now);
void ld__begin_request(struct worker *w, struct slot *s, int64_t now, int64_t due);
void ld__send_some(struct worker *w, struct slot *s, int64_t now);
void ld__on_event(struct worker *w, struct slot *s, uint32_t ev, int64_t now);
/* Reads on, once each, the slots listed as having bytes left when the loop last came round. */
void ld__read_again(struct worker *w, int64_t now);
void ld__scan(struct worker *w, int64_t now);

/* ---- slow mode's timed waits (load_slow.c) --------------------------------------------------- */

void ld__start_wait(struct worker *w, struct slot *s, struct fifo *q, int64_t now);
void ld__run_timers(struct worker *w, int64_t now);
/* The earlier of t and the first timed wait that is due. */
int64_t ld__timers_due(struct worker *w, int64_t t);

/* ---- the ramp-up and the measured window (load_ramp.c) --------------------------------------- */

void ld__set_window(struct worker *w, int64_t start);
void ld__first_echo_done(struct worker *w, struct slot *s, int64_t now);
bool ld__ramp_over(struct worker *w, int64_t now);
void ld__start_after_ramp(struct worker *w, int64_t now);

/* ---- pipelining and the rate schedule (load_dispatch.c) -------------------------------------- */

/* The slot's k-th request in flight, oldest first. */
struct ld_inflight *ld__pipe_at(struct worker *w, struct slot *s, unsigned k);
void ld__pipe_fill(struct worker *w, struct slot *s, int64_t now);
void ld__pipe_progress(struct worker *w, struct slot *s, int64_t now);
void ld__advance_due(struct worker *w);
void ld__dispatch_due(struct worker *w, int64_t now);

#endif
