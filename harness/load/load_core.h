/*
 * echo-load's core as its modes see it: a worker's connection slots, the state machine that takes
 * each through connect, requests, verified echoes and failures (load_core.c), and the ops table
 * of the mode that decides when a slot's next request leaves (load_mode_*.c).
 *
 * The core owns the connections and the byte-by-byte check of every echo; it knows one request
 * in flight per slot, sent whole or in chunks. A mode adds the rest through the hooks below:
 *
 *   closed    the next request leaves as soon as the last one's echo is complete;
 *   pipeline  K requests in flight per connection, completed by the echo's stream offset;
 *   rate      requests fall due on a fixed schedule and take the slot free the longest;
 *   slow      requests go out in timed chunks, with a think time after each echo.
 *
 * A mode calls only the functions declared here; the core calls a mode only through its table.
 */
#ifndef SWITCHYARD_HARNESS_LOAD_CORE_H
#define SWITCHYARD_HARNESS_LOAD_CORE_H

#include "load.h"

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

struct slot {
    int fd;
    uint8_t state;
    bool busy;          /* a request is in flight (churn: from its connect on) */
    bool counted;       /* that request belongs to the measured window */
    bool ramped;        /* completed its first echo during the ramp-up */
    bool again;         /* listed in the worker's read-again ring: bytes may be left unread */
    uint8_t ramp_fails; /* ramp-up: fatal failures of this slot's first echo */
    uint32_t serial;
    uint64_t id; /* global slot number */
    uint64_t seed;
    uint64_t tx, rx, req_end; /* stream offsets on the current connection */
    uint64_t chunk_end;       /* sending stops here until the mode sends the next chunk */
    int64_t t_start, t_due, deadline;
    int64_t t_connect;
    int64_t t_connected; /* ramp-up: when connect() was seen complete at once, else 0 */
};

struct ld_mode_ops;

/* What of a worker its mode may read and count into. */
struct ld_core {
    const struct ld_config *cfg;
    const struct ld_mode_ops *mode;
    void *mode_state; /* the mode's own, from its init */
    struct slot *slots;
    unsigned nslots;
    enum phase phase;
    unsigned idx, nthreads; /* this worker among its process's workers */
    unsigned inflight;      /* requests in flight over all slots */
    uint64_t quota, issued; /* --requests: counted requests this worker may start / has started */
    int64_t t_measure, t_end;
    int64_t stop_time; /* when the measured window stopped taking requests, or 0 */
    int64_t last_done; /* when the last counted request completed */
    struct ld_result res;
};

/* What a mode's `received` made of the bytes just verified on a slot. */
enum ld_took {
    LD_NOT_MINE, /* the mode has nothing in flight there: the core's one request is owed */
    LD_READ_ON,  /* requests are still owed: read on */
    LD_STOP,     /* nothing is owed, or the slot failed */
};

/*
 * A mode. ready and echoed are required; a NULL hook does nothing (or what its comment says).
 * The worker picks the table once per run; the core calls it, never the other way round.
 */
struct ld_mode_ops {
    const char *name;
    /* Open loop: requests leave on a schedule, so the thread asks for exact wake-ups, a churn
     * slot waits for its turn instead of starting at once, and the drain still reconnects. */
    bool open_loop;
    int (*init)(struct ld_core *c, const struct ld_share *sh); /* -1: out of memory */
    void (*fini)(struct ld_core *c);
    /* The measured window was (re)set to start at `start` (t_measure and t_end are set). */
    void (*window)(struct ld_core *c, int64_t start);
    /* A slot is connected with nothing in flight: put it to work. */
    void (*ready)(struct ld_core *c, struct slot *s, int64_t now);
    /* A request's echo is complete and counted; the slot is ready (or idle, churn). */
    void (*echoed)(struct ld_core *c, struct slot *s, int64_t now);
    /* Does a request due at `due` belong to the measured window? NULL: it does when it starts
     * in the measure phase. Never asked during the ramp-up, whose echoes never count. */
    bool (*counts)(const struct ld_core *c, int64_t due);
    /* Bytes were verified on the slot (s->rx moved). */
    enum ld_took (*received)(struct ld_core *c, struct slot *s, int64_t now);
    /* The slot's requests are abandoned (it failed, or the run ended): forget the mode's ones,
     * return how many were in flight (0: the core's one request) and add the counted ones to
     * *counted when it is not NULL. */
    unsigned (*drop)(struct ld_core *c, struct slot *s, uint64_t *counted);
    /* The slot failed and is closed. True: the mode took it (it waits for the mode); false: it
     * reconnects after a pause. */
    bool (*failed)(struct ld_core *c, struct slot *s, int64_t now);
    /* Sending stopped at s->chunk_end, before the request's end. */
    void (*paused)(struct ld_core *c, struct slot *s, int64_t now);
    /* Once per turn of the worker's loop: whatever is due now. */
    void (*tick)(struct ld_core *c, int64_t now);
    /* The earlier of t and the next time tick has work. */
    int64_t (*wake_by)(struct ld_core *c, int64_t t);
    /* The drain: is there work due that must still be sent? */
    bool (*backlog)(const struct ld_core *c, int64_t now);
    /* At the end: requests due inside the window that were never sent. */
    uint64_t (*unsent)(struct ld_core *c);
};

extern const struct ld_mode_ops ld_mode_closed, ld_mode_pipeline, ld_mode_rate, ld_mode_slow;

static inline int64_t secs_ns(double s)
{
    return (int64_t)(s * NS_PER_S);
}

static inline unsigned slot_index(const struct ld_core *c, const struct slot *s)
{
    return (unsigned)(s - c->slots);
}

static inline bool may_start(const struct ld_core *c)
{
    if (c->phase == PH_RAMP) return false; /* only first echoes, started on connect */
    if (c->phase == PH_WARMUP) return true;
    return c->phase == PH_MEASURE && (c->cfg->requests == 0 || c->issued < c->quota);
}

/* Starts one request due at `due` (now, in closed loop): on the open connection, or on a new
 * one (churn). */
void ld_core_begin(struct ld_core *c, struct slot *s, int64_t now, int64_t due);
/* Sends the slot's bytes up to s->chunk_end, as far as the socket takes them. */
void ld_core_send(struct ld_core *c, struct slot *s, int64_t now);
/* Counts the error and closes the slot; it reconnects after a pause unless its mode takes it. */
void ld_core_fail(struct ld_core *c, struct slot *s, enum ld_error kind, int64_t now);

#endif
