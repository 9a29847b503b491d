/* server.h - the contract between echo-server's front end and its execution models. */
#ifndef SWITCHYARD_SERVER_H
#define SWITCHYARD_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A model is one ops table in its own file server_<model>.c, declared by one line in the
 * registry (servers/CMakeLists.txt). The front end (server_main.c) parses the command line, asks
 * the model to check the options, opens the listening sockets and calls run(), which calls
 * srv_ready() (the "listening" line) once it is set up; the front end prints the statistics once
 * run() returns. run() serves until the server is told to stop (srv_stopping() turns true and every
 * stop fd turns readable), then closes every connection it owns and returns. Adding a model is one
 * file plus one registry line.
 */

#define SRV_MAX_THREADS 64    /* upper bound of listeners: --threads x --procs for event loops */
#define SRV_MAX_WORKERS 4096  /* upper bound of --threads for a thread pool */
#define SRV_MAX_PROCS   20000 /* upper bound of --procs (pid_max is 32768 here) */
#define SRV_BACKOFF_MS  100   /* pause of the listener when fds run out and shedding fails */

struct srv_options {
    const char *model;
    const char *switch_name; /* --switch (fiber only), NULL when not given */
    const char *sched;       /* --sched star|ring (fiber only), NULL when not given */
    const char *engine;      /* --engine (fiber only), NULL when not given */
    const char *read_policy; /* --read-policy eager|wait|adaptive (fiber only), NULL: default */
    const char *io;          /* --io direct|hooked (fiber only), NULL when not given */
    const char *bind;        /* dotted IPv4 address, default 127.0.0.1 */
    int port;                /* 0 lets the kernel choose */
    int threads;             /* event loops, schedulers or pool workers; 1 for thread and fork */
    int procs;               /* worker processes (--procs); 1 = this process serves alone */
    long max_conns;          /* connections served at once; 0 = no limit */
    size_t stack_size;       /* --stack-size for thread and fiber; 0 = the model's default */
    const char *stack;       /* --stack guarded|copy[:K] (fiber only), NULL when not given */
    const char *trigger;     /* --trigger edge|level (epoll only), NULL when not given */
    int touch_lines;         /* --touch-lines N (epoll only, server_epoll.c); -1 while parsing
                                when not given, 0 (none) once the model is chosen */
    /*
     * Timeouts (models that declare takes_timeouts; 0 = none). read_timeout_ms: every read
     * waits at most this long for data; idle_timeout_ms: a connection that moves no byte either
     * way for this long (waiting to read, or for room to write) is closed. Either closes the
     * connection and counts it (srv_stats.read_timeouts, idle_timeouts). When both bound a
     * read, the shorter is the one that fires; equal, it counts as idle.
     */
    long read_timeout_ms, idle_timeout_ms;
    const char
        *timers; /* --timers NAME (fiber only): the runtime's timer structure; NULL: default */
    long poll_tick_ms; /* --poll-tick MS (fiber only): wait at most MS per poll, as NtyCo and libco
                          do (a 1 ms tick); 0 = wait for the next deadline or event */
};

typedef atomic_uint_fast64_t srv_counter;

/*
 * Statistics. The block lives in a MAP_SHARED mapping so that fork's children can add to
 * it; every counter is therefore an atomic. Models with hot loops keep private counters
 * and add them here when they finish.
 */
struct srv_stats {
    srv_counter connections;   /* admitted and given to a session */
    srv_counter refused;       /* closed at once: --max-conns or the model's ceiling reached */
    srv_counter shed;          /* closed at once because the process was out of fds */
    srv_counter spawn_failed;  /* no thread/process/fiber could be made: closed at once */
    srv_counter accept_errors; /* accept failures other than "nothing pending" */
    srv_counter fd_exhausted;  /* accept calls that failed with EMFILE or ENFILE */
    srv_counter bytes;         /* bytes written back to clients */
    srv_counter active;        /* connections open now */
    srv_counter max_concurrent;
    srv_counter epoll_add, epoll_mod, epoll_del;
    /* The event loop's other kernel calls, in the engines' shape (engine.h, eng_stats). */
    srv_counter epoll_waits, scan_calls, scan_fds, uring_enters, uring_sqes;
    srv_counter switches;
    srv_counter stack_saves, stack_restores; /* fiber copy stacks: live parts moved out, in */
    srv_counter reads_tried, reads_again, reads_waited_first; /* fiber IO (io.h) */
    srv_counter hook_calls, hook_waits; /* --io hooked: calls served by the hooks, and waits */
    /*
     * Filled in by the model so the JSON says what really ran. epoll_counted: the model
     * counts every epoll_ctl it makes (false prints null: calls happen inside a library and
     * are not counted). kcalls_counted: the model counts every call of its event loop
     * (epoll_ctl and epoll_wait, poll/select, io_uring_enter and SQEs: "kernel_calls" in the
     * JSON; false prints null). switches_counted: the model counts fiber switches (false
     * prints null: no fibers). reads_counted: the model reads through fiber IO and counts its
     * system calls, EAGAIN results and waits before reading (false prints null).
     * hooks_counted: the hooked libc calls served the sessions (false prints null). Strings
     * may stay NULL (printed as null).
     */
    bool epoll_counted, kcalls_counted, switches_counted, reads_counted, hooks_counted;
    /* The model serves from child processes: their largest peak RSS is printed too. */
    bool children;
    srv_counter respawned;    /* worker processes started again after one ended early */
    srv_counter touch_walked; /* --touch-lines: cache lines walked in all (epoll, at the stop) */
    srv_counter read_timeouts, idle_timeouts; /* connections closed by --read/--idle-timeout */
    /*
     * What keeps the model's timeouts, set by models that take them: the fiber runtime's timer
     * structure (--timers), the epoll yardstick's own lists, or the kernel's socket timeouts.
     */
    const char *timers;
    const char *engine, *switch_name, *sched, *read_policy, *io;
    const char *stack; /* "guarded" or "copy:K" (fiber), NULL for the other models */
    /*
     * Where a model writes a name it formats at run time (stack points here): inside the
     * shared block, so the parent of worker processes prints what its workers wrote. The other
     * names point at constants or at argv, which a forked worker shares with its parent.
     */
    char stack_buf[16];
};

struct srv_server {
    const struct srv_options *opt;
    struct srv_stats *stats;
    int nlisten;                    /* one listener per loop when threads > 1 */
    int listen_fd[SRV_MAX_THREADS]; /* non-blocking, close-on-exec, owned by the front end */
    int stop_fd[SRV_MAX_THREADS];   /* eventfds, one per loop, readable once stopping */
    int port;                       /* the port the listeners are bound to */
    atomic_bool stopping, ready;
    /*
     * In a worker process of srv_run_procs: the pipe end on which srv_ready reports instead
     * of printing (the parent prints "listening" once for all); -1 otherwise.
     */
    int ready_fd;
    /* The connections the model can hold at once by its own declaration (0: no ceiling);
     * srv_admit refuses those beyond it as it does those beyond --max-conns. */
    long conns_ceiling;
};

/* How a model takes --procs. */
enum srv_procs_kind {
    SRV_PROCS_NONE,      /* one process only: --procs must be 1 */
    SRV_PROCS_REUSEPORT, /* --procs P > 1: P processes, each with its own SO_REUSEPORT listeners */
    SRV_PROCS_SHARED,    /* always P worker processes (even 1) that share one listener */
};

/* How a model runs its connections at once: declared, so tests and the harness ask for this
 * instead of for a model's name. */
enum srv_concurrency {
    SRV_THREAD_PER_CONN,  /* one kernel thread per connection */
    SRV_PROCESS_PER_CONN, /* one child process forked per connection */
    SRV_PROCESS_POOL,     /* pre-started processes, one connection each at a time */
    SRV_THREAD_POOL,      /* a fixed set of threads taking ready connections in turn */
    SRV_FIBER_PER_CONN,   /* one fiber per connection on a few scheduler threads */
    SRV_EVENT_LOOP,       /* callbacks on one event loop per thread */
};
const char *srv_concurrency_name(enum srv_concurrency c);

struct srv_model {
    const char *name;
    const char *summary; /* one line for listings */
    enum srv_concurrency concurrency;
    /* Non-NULL when the model is not compiled in: the reason, printed before exit 2. */
    const char *missing;
    /* One listener per thread with SO_REUSEPORT (true), or a single listener (false). */
    bool per_thread_listener;
    enum srv_procs_kind procs_kind;
    /*
     * Worker processes end at SIGTERM at once (the kernel closes their connection), as
     * fork's children do; false: each worker stops in order through its own signal thread.
     */
    bool term_kills_worker;
    /*
     * A connection keeps one of a fixed number of workers for as long as it is open (a process
     * of the pool): as many clients that never read (or never send) as workers take the whole
     * server, and the others wait in the backlog. The slow-reader test shows it.
     */
    bool conn_holds_worker;
    /* Values when --threads or --procs is not given (0: 1). */
    int default_threads, default_procs;
    /* Options the model takes besides the common ones: --threads other than 1, --stack-size,
     * --switch/--sched/--engine/--read-policy, --trigger and --touch-lines. The front end refuses
     * the others with one line naming the models that do take them. */
    bool takes_threads, takes_stack_size, takes_fiber_flags, takes_trigger, takes_touch_lines;
    /* --read-timeout and --idle-timeout (srv_options): the model has an equivalent of both. */
    bool takes_timeouts;
    /* Validate the model-specific options (NULL: none); on error write one line to why, return
     * -1. */
    int (*check)(const struct srv_options *opt, char *why, size_t len);
    /* The model's own entries of its `props` in `--list --json` (NULL: none): each written as
     * `, "key": value`, so the harness reads the model's choices and defaults from the listing. */
    void (*list_props)(FILE *f);
    /* Serve until stopping; close every connection it owns; 0 on success. */
    int (*run)(struct srv_server *srv);
};

/* The models in the registry's order, then those declared but not built (`missing` set),
 * ended by NULL. */
extern const struct srv_model *const srv_models[];
const struct srv_model *srv_model_find(const char *name);

/* Stopping: set by the signal thread on SIGINT/SIGTERM (or by srv_stop on a fatal error). */
static inline bool srv_stopping(struct srv_server *srv)
{
    return atomic_load_explicit(&srv->stopping, memory_order_acquire);
}
void srv_stop(struct srv_server *srv);
/*
 * The model is set up and accepting: print "listening ADDR:PORT" (once) for whoever waits.
 * Open every fd the model keeps for its whole life (epoll fds, reserve fds, dups) before
 * calling it: tests count the server's fds from this moment to find leaks.
 */
void srv_ready(struct srv_server *srv);

/* Counter helpers (relaxed: they are statistics, never used to synchronise). */
static inline void srv_add(srv_counter *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/*
 * Accepting. An acceptor wraps one non-blocking listener and handles what every model must:
 * --max-conns (refuse = accept and close at once, counted), running out of fds (EMFILE or
 * ENFILE: the reserved-fd trick sheds the pending connection so the listener stops being
 * readable, logged once per process; if even that fails the caller backs off for
 * SRV_BACKOFF_MS instead of spinning), and TCP_NODELAY on every admitted connection.
 */
struct srv_acceptor {
    struct srv_server *srv;
    int lfd;
    int reserve_fd; /* an fd on /dev/null, given up for a moment to shed when out of fds */
};

enum srv_accept_rc {
    SRV_ACCEPT_OK,     /* *fd is an admitted connection: call srv_conn_done when it closes */
    SRV_ACCEPT_AGAIN,  /* nothing pending: wait for the listener to turn readable */
    SRV_ACCEPT_SKIP,   /* one connection was refused or shed, or a transient error: retry */
    SRV_ACCEPT_BACKOFF /* out of resources: leave the listener alone for SRV_BACKOFF_MS */
};

int srv_acceptor_init(struct srv_acceptor *a, struct srv_server *srv, int lfd);
void srv_acceptor_fini(struct srv_acceptor *a);
/* One accept4(flags | SOCK_CLOEXEC) plus the policy above. */
enum srv_accept_rc srv_accept(struct srv_acceptor *a, int *fd, int flags);
/*
 * For blocking-model acceptors (thread, fork) woken by poll: accept up to `burst` connections,
 * handing each admitted fd to admit(fd, ctx). Returns the poll timeout to use next: -1, or
 * SRV_BACKOFF_MS when out of resources.
 */
int srv_accept_burst(struct srv_acceptor *a, int burst, void (*admit)(int fd, void *ctx),
                     void *ctx);
/*
 * The same policy split in two for models that accept through another call (the fiber
 * model's fiber accept): srv_accept_failed classifies an accept error err (it may shed a
 * connection itself), srv_admit applies --max-conns to an accepted fd (closing and counting
 * it when refused) and returns whether the caller now owns it. Honour the answer: on AGAIN
 * wait until the listener is readable before accepting again. With a full fd table accept(2)
 * fails with EMFILE even when nothing is pending (the fd is allocated first), and shedding
 * then answers AGAIN: a loop that retries accept at once spins and starves the rest.
 * srv_acceptor_refill takes the reserve fd back if another thread of the process took the
 * slot it gave up; srv_accept does that on every call, others should after each accept.
 */
enum srv_accept_rc srv_accept_failed(struct srv_acceptor *a, int err);
void srv_acceptor_refill(struct srv_acceptor *a);
bool srv_admit(struct srv_server *srv, int fd);
/* A connection admitted by srv_accept or srv_admit has ended (its fd is closed). */
void srv_conn_done(struct srv_server *srv);
/*
 * For event loops woken by a readable listener: accept up to `budget` connections (flags as
 * srv_accept's), handing each admitted fd to admit(fd, ctx). Returns SRV_ACCEPT_BACKOFF when
 * out of resources (leave the listener alone for SRV_BACKOFF_MS: it stays readable),
 * SRV_ACCEPT_AGAIN when nothing is pending, SRV_ACCEPT_SKIP when the budget is spent and more
 * may be pending (an edge-triggered loop comes back to the listener after serving the others).
 */
enum srv_accept_rc srv_accept_batch(struct srv_acceptor *a, int budget, int flags,
                                    void (*admit)(int fd, void *ctx), void *ctx);
/*
 * An admitted connection the model could not take on (no memory, no handle for it): close fd
 * (-1: the library that held it has closed it already), count it in spawn_failed and as done,
 * and log the reason (a printf format), then "; connection closed", once per process.
 */
void srv_conn_unserved(struct srv_server *srv, int fd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Log a line on stderr once per process per key (a static flag owned by the caller). */
void srv_log_once(atomic_bool *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The run() of a model with one event loop per listener (srv->nlisten of them), each a struct
 * of `size` bytes: srv_run_loops makes them zeroed (and frees them), srv_run_loops_in takes
 * them constructed by the caller (C++). init() each in turn (stopping at the first failure),
 * run loops 1.. on threads of their own and loop 0 on the calling thread (so --threads 1 is
 * single-threaded), srv_ready() once all are started; a loop whose serve() returns stops the
 * others. Then join them and fini() every loop, those whose init failed or never ran too.
 * Returns 0, or -1 when a loop could not be set up (one line on stderr naming `what`).
 */
struct srv_loop_ops {
    const char *what; /* the library: "cannot set up the <what> loops" */
    size_t size;      /* of one loop's struct */
    int (*init)(void *loop, struct srv_server *srv, int i); /* 0, or -1 */
    void (*serve)(void *loop);                              /* until the loop's stop fd */
    void (*fini)(void *loop);
};
int srv_run_loops(struct srv_server *srv, const struct srv_loop_ops *ops);
int srv_run_loops_in(struct srv_server *srv, void *loops, const struct srv_loop_ops *ops);

/*
 * Worker processes (server_procs.c), for models whose procs_kind is not SRV_PROCS_NONE: fork
 * srv->opt->procs processes that each run model->run on their share of the listeners (or on
 * the one shared listener), print "listening" once every one is ready, start again a worker
 * that ends early, and on stop send SIGTERM to each (SIGKILL after a grace period) and reap
 * them. The statistics block is shared memory, so the workers' counts add up in it.
 */
int srv_run_procs(struct srv_server *srv, const struct srv_model *model);

/* Front end only (server_main.c): signals, listeners. */
int srv__signals_start(struct srv_server *srv);
void srv__signals_end(struct srv_server *srv);
int srv__open_listeners(struct srv_server *srv, int n, char *why, size_t len);
void srv__close_listeners(struct srv_server *srv);

#endif
