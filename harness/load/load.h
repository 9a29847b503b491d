/* echo-load's shared types: the run configuration, per-run results, error kinds, and the entry
 * points. */
#ifndef SWITCHYARD_HARNESS_LOAD_H
#define SWITCHYARD_HARNESS_LOAD_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "histogram.h"
#include "payload.h"

/* pingpong and slow keep their connections for the whole run; churn opens one per request. */
enum ld_mode { LD_PINGPONG, LD_CHURN, LD_SLOW };

/* Error kinds, counted per run. The ones marked fatal make echo-load exit non-zero. */
enum ld_error {
    LD_ERR_CONNECT_FAILED,   /* connect refused or failed */
    LD_ERR_CONNECT_TIMEOUT,  /* connect did not complete within --connect-timeout */
    LD_ERR_ADDR_UNAVAILABLE, /* EADDRNOTAVAIL: no local port left for that source address */
    LD_ERR_FD_EXHAUSTED,     /* EMFILE/ENFILE/ENOBUFS creating a socket */
    LD_ERR_TIMEOUT,          /* a request's echo did not complete within --timeout */
    LD_ERR_EARLY_CLOSE, /* fatal: the server closed while an echo was owed (or idle, persistent) */
    LD_ERR_RESET,       /* fatal: the connection was reset */
    LD_ERR_MISMATCH,    /* fatal: a byte came back wrong, missing, extra or out of order */
    LD_ERR_IO,          /* any other socket error */
    LD_ERR_KINDS
};

extern const char *const ld_error_names[LD_ERR_KINDS];
bool ld_error_is_fatal(enum ld_error e);

struct ld_config {
    struct sockaddr_storage addr; /* server address (loopback only) */
    socklen_t addrlen;
    char host[64];
    int port;
    unsigned conns;    /* connections (pingpong) or concurrent slots (churn), whole run */
    uint64_t size;     /* bytes per request */
    double duration;   /* measured seconds, or 0 when --requests is used */
    uint64_t requests; /* requests to measure, or 0 when --duration is used */
    enum ld_mode mode;
    unsigned pipeline;      /* pingpong, closed loop: requests in flight per connection (>= 1) */
    double rate;            /* total requests per second (open loop), 0 = closed loop */
    unsigned threads;       /* worker threads per process */
    unsigned procs;         /* worker processes (1 = this process only) */
    double warmup;          /* seconds excluded from the figures */
    double timeout;         /* seconds a request may take */
    double max_failed;      /* share of measured requests that may fail or never complete */
    double connect_timeout; /* seconds a connect may take */
    double max_time;        /* hard cap on the whole run in seconds */
    uint64_t seed;          /* run seed for the payload streams */
    bool json;
    bool spread; /* spread source addresses over 127.0.0.2-254 (IPv4 only) */
    /* --agent: a load host's share of a coordinated run (load_agent.c): any server address,
     * and the window starts on a line on stdin after the ramp-up instead of right after it. */
    bool agent;
    /* Ramp-up (persistent modes): seconds allowed to connect and echo once on every connection
     * before the warm-up and window start; 0 = no ramp-up. */
    double ramp_timeout;
    /* Slow mode: each request goes out in chunks of `chunk` bytes, `chunk_delay` seconds apart, and
     * a connection waits `think` seconds after an echo before its next request. */
    uint64_t chunk;
    double chunk_delay, think;
};

/*
 * The ramp-up is over for every worker of every process at one instant: the workers count
 * themselves done here (shared memory, set up before the processes fork), and the first one to see
 * all of them done, or the ramp-up deadline, fixes done_ns with a compare-and-swap.
 */
struct ld_sync {
    _Atomic unsigned ramped; /* workers whose every connection has echoed once */
    _Atomic int64_t done_ns; /* 0 until the ramp-up is over */
    unsigned workers;        /* how many workers take part */
    /* Why every worker of every process stops now: 0 (it does not), LD_STOP_GAVE_UP,
     * LD_STOP_BAD_ECHO, or the number of the signal (SIGINT, SIGTERM) that asked echo-load to
     * stop. */
    _Atomic int stop;
    /* --agent only: when the coordinator's start line came (after done_ns, when the agent said
     * "ready"; the window is set from it), and when its stop line or the end of stdin came. */
    bool barrier;
    _Atomic int64_t started_ns;
    _Atomic int64_t stop_ns;
};
#define LD_STOP_GAVE_UP  (-1)
#define LD_STOP_BAD_ECHO (-2) /* a connection's first echo failed twice: the server is broken */
#define LD_STOP_NO_START (-3) /* --agent: stdin ended, or said something else, before "start" */

/* The first mismatch seen, for the report. */
struct ld_mismatch_info {
    bool seen;
    enum ld_mismatch_kind kind;
    uint64_t slot;
    uint64_t offset; /* stream offset of the first bad byte on that connection */
    uint8_t expected, got;
};

/* The ramp-up, apart from the steady state (persistent modes with --ramp-timeout > 0). */
struct ld_ramp {
    bool ran;
    uint64_t connects;    /* connections established during the ramp-up, retries
                             included */
    uint64_t ready;       /* connections that completed their first verified echo */
    uint64_t unfinished;  /* connections without a first echo when the ramp-up ended */
    int64_t last_connect; /* when the last connection was established (monotonic
                             ns) */
    int64_t last_ready;   /* when the last first echo completed */
    int64_t t0, done;     /* start of the run; when the ramp-up ended for every worker */
    uint64_t errors[LD_ERR_KINDS];
    struct ld_hist connect;    /* connect() to established */
    struct ld_hist first_echo; /* the first request on a connection: send to verified echo */
};

/*
 * Results of one worker, one process, or the whole run (merged by addition). Plain data with no
 * pointers: worker processes send it to the parent through a pipe as is.
 */
struct ld_result {
    uint64_t requests;   /* started inside the measured window and echoed completely */
    uint64_t bytes;      /* echoed bytes received and verified for those requests */
    uint64_t bytes_all;  /* every echoed byte verified, whole run (ramp-up, warm-up, drain) */
    uint64_t unfinished; /* started (or due) inside the window but never completed */
    uint64_t connects;   /* successful connects, whole run */
    uint64_t errors[LD_ERR_KINDS];
    uint64_t mismatch_kinds[LD_MM_KINDS];
    struct ld_mismatch_info first_mismatch;
    double seconds;           /* measured window (longest worker) */
    double cpu_user, cpu_sys; /* CPU seconds of the workers over their measured window */
    double cores;             /* each worker's CPU time over its window's wall time, summed */
    double max_thread_core;   /* the busiest worker's CPU time / wall time */
    unsigned workers;
    bool capped;            /* --max-time stopped the run before its work was done */
    int stopped;            /* ld_sync.stop when it cut the run short, else 0 */
    int gave_up_error;      /* the last connect error before giving up (enum ld_error) */
    double gave_up_after;   /* seconds without a successful connect when it gave up */
    bool bad_echo;          /* this result's worker stopped the run with LD_STOP_BAD_ECHO */
    int bad_echo_error;     /* then the second failure of that first echo (enum ld_error) */
    uint64_t bad_echo_slot; /* and the connection it was */
    struct ld_hist lat;     /* latency: from the due time in rate mode, from the send otherwise */
    struct ld_hist lat_unc; /* rate mode only: from the moment the request was sent */
    struct ld_hist lag;     /* rate mode only: how late each request left, against its due time */
    struct ld_ramp ramp;    /* errors[] above count only what happened after the ramp-up */
    /* --agent: when (monotonic ns) the ramp-up was over and "ready" said, the start and stop
     * lines came, and the measured window began (the latest worker's). */
    int64_t ready_ns, start_ns, stop_ns, window_ns;
};

/* Monotonic clock in nanoseconds; CLOCK_MONOTONIC is shared by all processes of the machine.
 * Inline, so that every file reads the clock without depending on another. */
static inline int64_t ld_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void ld_result_init(struct ld_result *r);
void ld_result_merge(struct ld_result *dst, const struct ld_result *src);

/*
 * Runs this process's share of the load: `threads` workers over `conns` connections, with the
 * given share of the rate and request quota. `slot_base` numbers the slots so payload seeds
 * differ between processes. t0 is the common start on the monotonic clock.
 */
struct ld_share {
    unsigned conns;
    unsigned threads;
    uint64_t requests;
    double rate;
    uint64_t slot_base;
    int64_t t0;
    struct ld_sync *sync; /* shared by every worker of the run */
};
int ld_run_process(const struct ld_config *cfg, const struct ld_share *share,
                   struct ld_result *out);

/* Ramp-up: does this run have one, and the merge of its figures (load_report.c). */
bool ld_ramp_applies(const struct ld_config *cfg);
void ld_ramp_merge(struct ld_ramp *dst, const struct ld_ramp *src);

/* --agent: a thread that says "ready" on stdout once the ramp-up is over, starts the window on a
 * "start" line from stdin and ends it on the next line or stdin's end (load_agent.c). */
int ld_agent_start(struct ld_sync *sync);

/* Reporting (load_report.c). */
void ld_print_version(void);
void ld_report_human(const struct ld_config *cfg, const struct ld_result *r);
void ld_report_json(const struct ld_config *cfg, const struct ld_result *r);
int ld_exit_status(const struct ld_config *c, const struct ld_result *r);

#endif
