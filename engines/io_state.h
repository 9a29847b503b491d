/* io_state.h - the fiber IO layer's private state (the runtime object, its fd table, a wait's
 * record) and the steps on it that both halves of the layer take: io.c, the side the scheduler
 * drives (the runtime object, timers, the poller), and io_calls.c, the side fibers call (waits,
 * sleeps, the read policies, read/write/accept/connect/close). Included by those two alone. */
#ifndef SWITCHYARD_IO_STATE_H
#define SWITCHYARD_IO_STATE_H

#include "io.h"
#include "timer.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * A wait lives in the waiting fiber's record (fb_wait_area), not on its stack, so that it stays
 * put while the fiber is parked in copy-stack mode too. Three things can end it, and whichever
 * comes first removes it from every structure that knows it (engine, fd table, timers) before
 * waking the fiber, so nothing can point at it once the fiber runs again:
 *   - the engine delivers its token (fd ready):   err = 0
 *   - its timer expires in the poller:            err = ETIMEDOUT, engine cancel
 *   - another fiber calls fb_close on the fd:     err = EBADF, engine cancel
 * With a completion engine (eng_ops.submit) the wait is for an operation, and only its
 * delivery ends it: a timeout or fb_close sets err and aborts the operation, and the fiber
 * stays parked until the kernel has answered, since until then it may still write into the
 * operation's buffer (on the fiber's stack, or the caller's). fb_close detaches such waits
 * from the fd table at once, so the fd number can be reused while they drain. A readiness wait
 * without a deadline is the exception: its fd's slot knows all of it, and its record is left
 * unwritten (io_fd).
 */
typedef struct io_wait {
    tm_node timer; /* first: a fired timer is its wait; kind TM_SLEEP: fb_sleep, no fd;
                      TM_READ: never armed, the fd's io_read_timer times the wait */
    fiber *f;
    int fd;
    uint32_t dir;
    int err;
    uint32_t revents;
    eng_op *op;     /* the completion form: the operation this wait is for, else NULL */
    eng_op op_copy; /* where `op` points: the caller's operation, off the fiber's stack */
} io_wait;

/*
 * The read policies' state per fd (io.h): what the last attempt on the fd's input side said
 * about its receive queue or accept backlog. It is kept apart from the waits, in one small
 * structure with one decision (try_first) and one update (hint_note), so that another way
 * of doing IO can sit beside it without touching either.
 */
enum io_kind {
    IO_KIND_UNKNOWN,   /* not looked at yet (only a short read makes it matter) */
    IO_KIND_STREAM,    /* stream socket or pipe: a short read means the queue was empty */
    IO_KIND_OTHER,     /* datagrams, devices, eventfds: a short read tells nothing */
    IO_KIND_UNPOLLABLE /* the engine refused it (EPERM: a regular file): never wait first */
};

typedef struct io_hint {
    uint8_t drained; /* found empty, and nothing reported ready since */
    uint8_t kind;    /* enum io_kind */
} io_hint;

enum io_outcome {
    IO_GOT_FULL,  /* a read that filled the buffer, end of file, an error, a connection */
    IO_GOT_SHORT, /* a read that returned less than asked */
    IO_GOT_AGAIN, /* EAGAIN */
    IO_GOT_READY  /* the engine reported the fd ready */
};

/*
 * A timed read's deadline (fb_read_timeout). Arming a timer when a read waits and cancelling it
 * when the data comes would touch the timer structure twice per request (the heap's cancel
 * alone is a sift); instead each fd that has a timed reader owns one node, left armed when
 * the data comes. The next timed wait on the fd only writes its deadline into `due` while the
 * node's armed deadline is no later than it, which a read timeout that restarts at every
 * request always is. When the node fires, the reader waiting then (if it waits with a
 * deadline) times out if `due` has passed, else the node is armed again for `due`; with no
 * such reader it stays idle until the next timed wait arms it. So a connection that keeps
 * answering costs one pop and re-arm per timeout period, not two structure operations per
 * read, and no read ever times out before its own deadline. The node lives apart from the fd
 * table (which moves when it grows) and from the fiber (whose record may be reused); fb_close
 * and fb_io_free free it.
 */
typedef struct io_read_timer {
    tm_node timer; /* first; kind TM_READ */
    int64_t due;   /* the deadline of the fd's timed reader, the one now or the last */
    int fd;
} io_read_timer;

/*
 * An fd's slot. w[d] is the fiber waiting on the fd in that direction, as its wait area. A
 * wait with a deadline or an operation fills in that area (io_wait) and sets recorded[d]; an
 * untimed readiness wait, the one every request of a fiber server makes, writes nothing there:
 * the slot says all of it (the fiber, the fd and the direction), the engine's token names the
 * slot (io_token), and the fiber learns how the wait ended from its wake (fb_wake_with). A
 * parked fiber's record is cold by the time the poll delivers and again when the fiber runs,
 * while this slot is read at both times anyway.
 */
typedef struct io_fd {
    io_wait *w[2];     /* [0] reader, [1] writer */
    io_read_timer *rt; /* NULL until the fd's first timed read waits */
    io_hint hint;      /* the read policies' view of the input side */
    bool nonblock_set; /* O_NONBLOCK is known to be set on this file */
    bool not_socket;   /* ENOTSOCK seen: read(2) and write(2), not recv and send */
    bool recorded[2];  /* w[d]'s io_wait is filled in (see above) */
} io_fd;

/* A readiness wait's engine token: its fd and direction, with bit 0 set. A completion wait's
 * token is its io_wait, 16-aligned, so the two never meet. */
static inline void *io_token(int fd, uint32_t dir)
{
    return (void *)((uintptr_t)(unsigned)fd << 2 | (uintptr_t)(dir == FB_OUT) << 1 | 1);
}

/* What a token io_token made says: that it is one, its fd and its direction. */
static inline bool io_token_is_readiness(uintptr_t t)
{
    return t & 1;
}

static inline size_t io_token_fd(uintptr_t t)
{
    return t >> 2;
}

static inline int io_token_dir(uintptr_t t)
{
    return (int)(t >> 1 & 1); /* an index into io_fd's w[] and recorded[] */
}

struct fb_io {
    const eng_ops *ops;
    /* What every read and write asks of ops, copied beside the fd table's pointer: the engine's
     * ops table is in another page, which a TLB emptied by each system call (common/hot_text.h)
     * would walk in every stretch of a request just for these. */
    int (*want)(void *st, int fd, uint32_t dir, void *token);
    bool completion; /* ops->submit: a completion engine */
    void *eng;
    io_fd *fds;
    size_t nfds;
    const tm_ops *tm; /* the timer structure (fb_config.timers), chosen at the first arm */
    void *timers;
    size_t waiters, sleepers;
    uint64_t timers_fired;
    uint64_t reads_tried, reads_again, reads_waited_first;
    fb_read_policy read_policy;
    int woke; /* wake-ups in the current poll */
};

/* The thread's IO runtime. Local-exec: the layer is linked into programs only, and every read
 * and write starts by loading it, in one instruction rather than the two of a variable that
 * could live in a shared library. */
extern __thread fb_io *fb__io_tls __attribute__((tls_model("local-exec")));

/* ---- ending a wait (io.c): the poller, the timers and fb_close all end waits ---------------- */

/* fb__io_finish's end for a wait whose timer is armed (out of line: a tail call). */
void fb__io_cancel_timer_and_wake(fb_io *io, io_wait *w);

/* Wake w's fiber with err and revents, after taking w out of every structure that knows it
 * (see io_wait). Inline in the engine's delivery callback, the timers' expiry and fb_close. */
static inline __attribute__((always_inline)) void fb__io_finish(fb_io *io, io_wait *w, int err,
                                                                uint32_t revents)
{
    if (w->timer.kind == TM_SLEEP) {
        io->sleepers--;
    } else {
        io_wait **at = &io->fds[w->fd].w[w->dir == FB_OUT];
        if (*at == w) *at = NULL; /* not when fb_close detached it and the number moved on */
        io->waiters--;
    }
    w->err = err;
    w->revents = revents;
    io->woke++;
    /* Both ends are tail calls, so that the engine's delivery callback needs no frame. */
    if (tm_armed(&w->timer))
        fb__io_cancel_timer_and_wake(io, w);
    else
        fb_wake_with(w->f, (uint16_t)err);
}

/* End the untimed readiness wait in slot's direction d (one that is not recorded, io_fd):
 * wake its fiber with err. */
static inline __attribute__((always_inline)) void fb__io_finish_bare(fb_io *io, io_fd *slot, int d,
                                                                     int err)
{
    fiber *f = fb_of_wait_area(slot->w[d]);
    slot->w[d] = NULL;
    io->waiters--;
    io->woke++;
    fb_wake_with(f, (uint16_t)err);
}

/* A completion wait given up (timeout, close): abort its operation, keep it parked. */
void fb__io_give_up(fb_io *io, io_wait *w, int err);

/* ---- timers (io.c) ------------------------------------------------------------------------ */

/* Arm t for deadline in the thread's timer structure (taken at the first arm). 0, or -1. */
int fb__io_arm_timer(fb_io *io, tm_node *t, int64_t deadline);
/* An fd's read timer, armed again only when its armed deadline is later (io_read_timer). */
int fb__io_arm_read_timer(fb_io *io, io_read_timer *rt, int64_t deadline);

#endif
