/* engine.h - the event engine contract: fd readiness for parked fibers, one ops table per engine.
 */
#ifndef SWITCHYARD_ENGINE_H
#define SWITCHYARD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An engine tells the fiber IO layer (io.h) when a file descriptor a fiber waits on becomes
 * ready. It knows nothing about fibers: a waiter is an opaque token that the engine hands back
 * once, through a callback, when its fd is ready. Engines differ only in how they drive the
 * kernel, which is what the project measures:
 *
 *   naive     EPOLL_CTL_ADD before every wait, EPOLL_CTL_DEL after the wake-up (two
 *             epoll_ctl per wait: the NtyCo / libco / libtask pattern);
 *   merged    the fd's interest in the kernel is cached and only changed when it really must;
 *             interest left behind by a waiter is dropped lazily, when an event arrives for a
 *             direction nobody waits on (the libfiber idea; Redis and libuv cache a mask too);
 *   oneshot   EPOLLONESHOT: ADD on first use, then one EPOLL_CTL_MOD re-arm per wait;
 *   edge      EPOLLET for in|out|rdhup, registered once per fd and untouched until close;
 *   libevent  each wait is an event_add on a libevent event, deleted after it fires, so that
 *             libevent's change list decides what reaches the kernel;
 *   poll      ppoll(2) over every fd that has a waiter, the whole set passed on every call;
 *   select    pselect(2) over fd bit sets up to the highest waiting fd; fds >= FD_SETSIZE are
 *             refused (ERANGE): the sets cannot hold them;
 *   uring-poll  io_uring poll requests (multishot where the kernel has it), armed once per fd
 *             and direction, submitted in the same io_uring_enter that waits;
 *   uring     completion, not readiness: fiber read, write, accept and poll are io_uring
 *             operations (eng_op below), one SQE each, batched per scheduler pass.
 *
 * Rules every engine follows (the conformance tests in engines/tests/ check them):
 *   - want(fd, dir, token): at most one waiter per fd and direction (EBUSY otherwise). The
 *     token must stay valid until it is delivered or cancelled.
 *   - poll delivers each ready waiter's token exactly once and forgets the waiter before it
 *     calls the callback; the callback must not call back into the engine. EPOLLHUP and
 *     EPOLLERR are delivered to every waiter of the fd, with ENG_HUP / ENG_ERR in revents where
 *     the engine declares reports_hup_err (select and libevent cannot tell them from
 *     readiness and wake the waiters as ready, without the bits; see their files).
 *   - fd_closed(fd) must be called BEFORE close(2): it drops every trace of the fd (cached
 *     interest, ready bits, kernel registration), so a new file that gets the same number
 *     inherits nothing (the libdill #129 bug class). The caller has already cancelled or woken
 *     the fd's waiters.
 *   - The engine tolerates a kernel that already forgot the fd (EPOLL_CTL_DEL/MOD failing
 *     with ENOENT or EBADF) and an fd it thought absent being present (ADD failing with
 *     EEXIST); every epoll_ctl issued is counted, failed ones included, so the counts match
 *     what the kernel's syscall tracepoint sees.
 *   - A level-triggered engine must not spin: an fd with kernel interest and no waiter may
 *     make poll return without delivering at most a bounded number of times.
 */

/* Directions a fiber waits for, and extra bits in delivered revents. */
enum {
    ENG_IN = 0x1,   /* readable (or a connection to accept) */
    ENG_OUT = 0x4,  /* writable (or a connect that finished) */
    ENG_ERR = 0x8,  /* the fd reported an error condition (EPOLLERR) */
    ENG_HUP = 0x10, /* hang-up or peer half-close (EPOLLHUP / EPOLLRDHUP) */
    ENG_DONE = 0x20 /* completion engines: the token's operation completed (eng_op.res) */
};

/*
 * The completion form. A completion engine (one with submit) is handed whole operations
 * instead of wishes to be told about readiness: the IO layer fills an eng_op, the engine
 * queues it (submitted with the next poll, all of a scheduler pass's operations in one system
 * call), and poll delivers the token once the kernel has completed it, after setting res.
 * Rules:
 *   - The eng_op and its buffer stay valid and untouched until the token is delivered: the
 *     kernel may write into the buffer until then. A caller that gives up (a timeout, a
 *     close) calls abort and keeps waiting for the delivery, which then carries -ECANCELED
 *     or, if the operation finished first, its result.
 *   - Operations are named by address, never by fd number, so closing and reusing an fd while
 *     an operation is in flight confuses nothing; the IO layer aborts the fd's operations at
 *     fb_close, and the engine needs no fd_closed.
 *   - A WRITE may complete short (res < len): the caller submits the rest.
 *   - Freeing the engine cancels what is still in flight and waits for it.
 */
enum eng_op_kind {
    ENG_OP_READ,   /* read(2) into buf, at most len bytes */
    ENG_OP_WRITE,  /* send(MSG_NOSIGNAL) when socket, else write(2), of buf[0..len) */
    ENG_OP_ACCEPT, /* accept4(SOCK_NONBLOCK | SOCK_CLOEXEC); res is the new fd */
    ENG_OP_POLL    /* readiness of fd for dir; res is the poll(2) mask */
};

typedef struct eng_op {
    int kind; /* enum eng_op_kind */
    int fd;
    void *buf;
    size_t len;
    uint32_t dir; /* ENG_OP_POLL: ENG_IN or ENG_OUT */
    bool socket;  /* ENG_OP_WRITE: the fd is a socket */
    int32_t res;  /* set by the engine before delivery: bytes, fd, mask, or -errno */
    void *token;  /* set by the engine: what delivery hands back */
} eng_op;

/* How an engine's kernel-call counts were obtained. */
enum eng_ctl_source {
    ENG_CTL_SELF,   /* the engine makes its system calls itself and counts every one */
    ENG_CTL_KERNEL, /* read from the kernel's syscall tracepoints for the engine's thread */
    ENG_CTL_NONE    /* not counted: the kernel-call figures are meaningless (report null) */
};

/*
 * Statistics. The first block is the kernel calls the engine makes, in one shape for every
 * engine (zero for the calls an engine does not use), so tests, the server's JSON and the
 * report read them alike; each is checked against the kernel's syscall tracepoint (test
 * engines/io/kernel_calls). The second block is the engine's own bookkeeping.
 */
typedef struct eng_stats {
    uint64_t ctl_add, ctl_mod, ctl_del; /* epoll_ctl by operation */
    uint64_t epoll_waits;               /* epoll_wait / epoll_pwait2 calls */
    uint64_t scan_calls;                /* ppoll or pselect calls */
    uint64_t scan_fds;                  /* fds passed to them (select: highest fd + 1) */
    uint64_t uring_enters;              /* io_uring_enter calls */
    uint64_t uring_sqes;                /* SQEs the kernel took through them */
    uint64_t waits;                     /* want() calls that parked a waiter */
    uint64_t polls;                     /* poll() calls of the engine (a kernel wait or not) */
    uint64_t delivered;                 /* tokens handed back */
    uint64_t stray;                     /* events for a direction nobody waited on */
    enum eng_ctl_source ctl_source;
} eng_stats;

/* Every system call the engine counted: epoll_ctl + epoll_wait + scans + io_uring_enter. */
static inline uint64_t eng_kernel_calls(const eng_stats *st)
{
    return st->ctl_add + st->ctl_mod + st->ctl_del + st->epoll_waits + st->scan_calls +
           st->uring_enters;
}

/* Where an engine keeps the interest of the fds it waits on between two polls (C3, C16). */
enum eng_interest {
    ENG_INTEREST_KERNEL,   /* registered in the kernel (epoll, io_uring), changed by calls */
    ENG_INTEREST_FD_LIST,  /* passed in full on every wait: one entry per waiting fd (poll) */
    ENG_INTEREST_FD_RANGE, /* passed in full on every wait: every fd number up to the highest
                              waiting one (select) */
};

/* An engine's declared behaviour: the conformance tests (engines/tests/) assert exactly what
 * an engine declares here, so a new engine is tested by what it claims, never by its name. */
typedef struct eng_props {
    enum eng_interest interest;
    /* Interest calls (epoll_ctl of any kind, plus the io_uring SQEs that arm or remove a poll)
     * of K waits on one fd, each followed by one poll: first_use + K * per_wait. Every poll
     * of a counting engine is one kernel wait (epoll_wait, a scan or one io_uring_enter), so
     * a wait in a ping-pong costs per_wait + 1 system calls. ENG_UNDECLARED: the engine does
     * not decide them (libevent's change list does). */
    int interest_calls_per_wait;
    int interest_calls_first_use;
    /* revents carry ENG_HUP / ENG_ERR when the kernel reports a hang-up or an error; an
     * engine that cannot tell them from readiness still wakes the waiters, without the bits
     * (the next read or write then returns the error). */
    bool reports_hup_err;
    /* Told of wake-ups (edges) rather than levels: readiness that arrived while nobody waited
     * is remembered, and the next want() for it returns 1 instead of parking. Readiness that
     * was already there before the last edge was taken is not reported again, so the IO
     * layer's read policies (io.h) wait before reading on such an engine only when the fd is
     * known to be drained. A hang-up stays reported (want for ENG_IN returns 1 ever after). */
    bool edge_triggered;
    /* Completion-based (the kernel performs the IO and reports its result) rather than
     * readiness-based (the kernel says when IO would not block). */
    bool completion;
} eng_props;
#define ENG_UNDECLARED (-1)

/* Called by poll once per ready waiter. */
typedef void (*eng_deliver_fn)(void *ctx, void *token, uint32_t revents);

typedef struct eng_ops {
    const char *name;    /* as in its registry line (engines/CMakeLists.txt) */
    const char *summary; /* one line for listings and the README */
    eng_props props;
    /* fds numbered fd_limit or more are refused by want (ERANGE); 0: no limit. */
    int fd_limit;
    /* Create an engine instance; NULL with errno on failure (io_uring engines: the errno of
     * io_uring_setup when the kernel or a sandbox refuses it, e.g. ENOSYS or EPERM). */
    void *(*init)(void);
    void (*free)(void *st);
    /* Register a waiter for one direction (ENG_IN or ENG_OUT). Returns 0 when the waiter is
     * parked, 1 when the engine already knows the fd is ready in that direction (edge: an edge
     * arrived while nobody waited) and nothing was parked, -1 with errno on failure. */
    int (*want)(void *st, int fd, uint32_t dir, void *token);
    /* Forget a parked waiter that was not delivered (timeout, close). */
    void (*cancel)(void *st, int fd, uint32_t dir);
    /* Wait up to timeout_ns (-1: no limit, 0: do not block) and deliver ready waiters.
     * Returns the number delivered, or -1 with errno on a fatal error. */
    int (*poll)(void *st, int64_t timeout_ns, eng_deliver_fn fn, void *ctx);
    /* The fd is about to be closed (see the rules above). */
    void (*fd_closed)(void *st, int fd);
    void (*get_stats)(void *st, eng_stats *out);
    /* The kernel mechanism underneath: "epoll", "poll", "select", "io_uring", or what
     * event_base_get_method reports. */
    const char *(*method)(void *st);
    /* Completion engines only (NULL for readiness engines, whose want/cancel the IO layer
     * uses instead): queue op, delivered later with ENG_DONE (see the rules above); 0, or -1
     * with errno. */
    int (*submit)(void *st, eng_op *op, void *token);
    /* Ask the kernel to cancel a submitted op; its delivery still follows. */
    void (*abort)(void *st, eng_op *op);
} eng_ops;

/* For the engines and the IO layer: make a table indexed by fd hold index fd. `table` is the
 * address of the table's pointer (any T **; read and written with memcpy, so no type is
 * punned), *len its length in elements of `size` bytes. It doubles from 64; new elements are
 * zeroed. Returns the previous length (the first new index) or, when fd already fits, *len;
 * -1 with errno ENOMEM (the table is then unchanged) or EBADF (fd < 0). */
long eng__grow_fd_table(void *table, size_t *len, size_t size, int fd);

/* Compiled-in engines in the registry's order (engines/CMakeLists.txt: naive first, the
 * baseline). */
size_t eng_count(void);
const eng_ops *eng_at(size_t i);
/* Look an engine up by name; NULL when unknown or not compiled in. */
const eng_ops *eng_find(const char *name);
/* The compiled-in names, comma separated, for error messages. */
const char *eng_names(void);

#ifdef __cplusplus
}
#endif
#endif
