/* io_calls.c - fiber IO, the side fibers call: waits and sleeps, the read policies, and
 * read/write/accept/connect/close. */
#define _GNU_SOURCE
#include "hot_text.h"
#include "io_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static io_fd *fd_slot(fb_io *io, int fd)
{
    /* fd < 0 wraps to above any length; eng__grow_fd_table then says EBADF. */
    if (__builtin_expect((size_t)fd < io->nfds, 1)) return &io->fds[fd];
    if (eng__grow_fd_table(&io->fds, &io->nfds, sizeof *io->fds, fd) < 0) return NULL;
    return &io->fds[fd];
}

/* ---- waiting ------------------------------------------------------------------------------ */

static inline int64_t deadline_after(int64_t timeout_ns)
{
    return timeout_ns < 0 ? -1 : tm_now() + timeout_ns;
}

/*
 * The record of a wait lives in the fiber's record (fb_wait_area), never on the fiber's stack:
 * the poller, the timers and fb_close reach it while the fiber is parked, and in copy-stack
 * mode a parked fiber's frames are elsewhere (fiber.h, the aliasing hazard). A fiber waits on
 * one thing at a time, so one area per fiber is enough. An untimed readiness wait uses only its
 * address, as its entry in the fd's slot (io_fd).
 */
_Static_assert(sizeof(io_wait) <= FB_WAIT_AREA, "io_wait must fit the fiber's wait area");

static io_wait *new_wait(fiber *self)
{
    return fb_wait_area(self);
}

/*
 * The checks every wait makes before it parks: false with errno EAGAIN outside a fiber
 * (nothing can be parked), EBUSY when another fiber already waits on fd in dir, ETIMEDOUT when
 * the deadline (-1: none) has passed.
 */
static inline __attribute__((always_inline)) bool may_wait(const io_fd *slot, const fiber *self,
                                                           uint32_t dir, int64_t deadline)
{
    if (!self) {
        errno = EAGAIN;
        return false;
    }
    if (slot->w[dir == FB_OUT]) {
        errno = EBUSY;
        return false;
    }
    if (deadline >= 0 && deadline <= tm_now()) {
        errno = ETIMEDOUT;
        return false;
    }
    return true;
}

/* self's wait area filled in as the record of a wait on fd in dir (io_wait). */
static inline __attribute__((always_inline)) io_wait *record_wait(fiber *self, int fd, uint32_t dir)
{
    /* Field by field rather than a whole-record initialiser: the completion form's op_copy
     * (most of the record) is written only by complete_op, and the timer's links only when
     * it is armed; zeroing them on every wait was a third of the wait's instructions. */
    io_wait *w = new_wait(self);
    tm_node_init(&w->timer, TM_WAIT);
    w->f = self;
    w->fd = fd;
    w->dir = dir;
    w->err = 0;
    w->revents = 0;
    w->op = NULL;
    return w;
}

/* The completion form's start: may_wait, then the record, for an fd whose slot is looked up
 * (and the table grown) here. NULL with errno. */
static inline __attribute__((always_inline)) io_wait *begin_wait(fb_io *io, fiber *self, int fd,
                                                                 uint32_t dir, int64_t deadline)
{
    io_fd *slot = fd_slot(io, fd);
    if (!slot || !may_wait(slot, self, dir, deadline)) return NULL;
    return record_wait(self, fd, dir);
}

/* Enter w in the fd table and park until whatever ends it (see io_wait) wakes the fiber. */
static void park_wait(fb_io *io, io_wait *w)
{
    io_fd *slot = &io->fds[w->fd];
    slot->w[w->dir == FB_OUT] = w;
    slot->recorded[w->dir == FB_OUT] = true;
    io->waiters++;
    fb_park();
}

/*
 * The completion form: hand op to the engine and park until its delivery, however the wait
 * ends (see io_wait). A file opened non-blocking makes io_uring answer EAGAIN at once instead
 * of waiting; then the fd's readiness is awaited as an operation of its own and op retried.
 * Returns op's result (>= 0), or -1 with errno.
 */
static ssize_t complete_op(fb_io *io, eng_op *op, uint32_t dir, int64_t deadline)
{
    for (;;) {
        io_wait *w = begin_wait(io, fb_self(), op->fd, dir, deadline);
        if (!w) return -1;
        /* The engine writes the operation's result while the fiber is parked, so the
         * operation too goes into the wait area, and its result is copied back at once: the
         * retry below reuses the area. */
        w->op_copy = *op;
        w->op = &w->op_copy;
        if (io->ops->submit(io->eng, w->op, w) < 0) return -1;
        if (deadline >= 0 && fb__io_arm_timer(io, &w->timer, deadline) < 0)
            fb__io_give_up(io, w, ENOMEM); /* no timer: cancel at once rather than wait forever */
        park_wait(io, w);
        op->res = w->op_copy.res;
        int err = w->err;
        if (op->res >= 0) return op->res; /* also when it finished before an abort took hold */
        if (err) {
            errno = err;
            return -1;
        }
        if (op->res == -EINTR) continue;
        if (op->res == -EAGAIN && op->kind != ENG_OP_POLL) {
            eng_op ready = {.kind = ENG_OP_POLL, .fd = op->fd, .dir = dir};
            if (complete_op(io, &ready, dir, deadline) < 0) return -1;
            continue;
        }
        errno = -op->res;
        return -1;
    }
}

/*
 * complete_op for an operation with a buffer. In copy-stack mode a buffer on a shared stack
 * cannot be handed to the kernel: it writes a read's bytes while the fiber is parked, when
 * another fiber's frames occupy those addresses. Such a buffer goes through a heap copy
 * (the fiber stays parked until the kernel let go of it, so the copy is freed after).
 */
static ssize_t complete_buffered(fb_io *io, eng_op *op, uint32_t dir, int64_t deadline)
{
    if (!op->len || !fb_on_shared_stack(op->buf, op->len))
        return complete_op(io, op, dir, deadline);
    void *caller = op->buf;
    char *bounce = malloc(op->len);
    if (!bounce) return -1;
    if (op->kind == ENG_OP_WRITE) memcpy(bounce, caller, op->len);
    op->buf = bounce;
    ssize_t n = complete_op(io, op, dir, deadline);
    if (n > 0 && op->kind == ENG_OP_READ) memcpy(caller, bounce, (size_t)n);
    op->buf = caller;
    free(bounce);
    return n;
}

/* wait_until on a completion engine: readiness awaited as an operation. */
static __attribute__((noinline)) int wait_completion(fb_io *io, int fd, uint32_t dir,
                                                     int64_t deadline)
{
    eng_op op = {.kind = ENG_OP_POLL, .fd = fd, .dir = dir};
    return complete_op(io, &op, dir, deadline) < 0 ? -1 : 0;
}

/* A read wait's deadline, on the fd's read timer (io_read_timer); w then counts as timed by
 * it. Out of line: only timed reads come here. 0, or -1 with errno ENOMEM. */
static __attribute__((noinline)) int time_read(fb_io *io, io_fd *slot, io_wait *w, int fd,
                                               int64_t deadline)
{
    io_read_timer *rt = slot->rt;
    if (!rt) {
        rt = malloc(sizeof *rt);
        if (!rt) return -1;
        tm_node_init(&rt->timer, TM_READ);
        rt->fd = fd;
        slot->rt = rt;
    }
    if (fb__io_arm_read_timer(io, rt, deadline) < 0) return -1;
    rt->due = deadline;
    w->timer.kind = TM_READ;
    return 0;
}

/* Park self, the calling fiber (NULL outside one: EAGAIN), until fd is ready for dir or the
 * deadline (-1: none) passes. Inline: a read that waits first runs it once per request, and a
 * call's frame costs as much as the checks it holds. park_ready is its readiness-engine form
 * for a caller that holds fd's slot already (the slot stays put: nothing between the lookup
 * and the park grows the table but fb__io_arm_timer's allocation, after which it is looked up
 * again); by_fd: a read's wait, timed by the fd's read timer (io_read_timer) rather than its own.
 */
static inline __attribute__((always_inline)) int
park_ready(fb_io *io, fiber *self, io_fd *slot, int fd, uint32_t dir, int64_t deadline, bool by_fd)
{
    if (!may_wait(slot, self, dir, deadline)) return -1;
    /* Untimed, the wait is known by the slot alone (io_fd): its area is not written. */
    io_wait *w = deadline >= 0 ? record_wait(self, fd, dir) : new_wait(self);
    int rc = io->want(io->eng, fd, dir, io_token(fd, dir));
    if (rc != 0) return rc > 0 ? 0 : -1; /* 1: the engine already knows it is ready */
    if (deadline >= 0) {
        if ((by_fd ? time_read(io, slot, w, fd, deadline)
                   : fb__io_arm_timer(io, &w->timer, deadline)) < 0) {
            io->ops->cancel(io->eng, fd, dir);
            return -1;
        }
        slot = &io->fds[fd]; /* arming allocates; the slot is re-read to be safe */
    }
    slot->w[dir == FB_OUT] = w; /* park_wait's entry, with the slot at hand */
    slot->recorded[dir == FB_OUT] = deadline >= 0;
    io->waiters++;
    fb_park();
    /* How the wait ended comes with the wake, in the line of the record the resume has read. */
    int err = fb_woken_with(self);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

static inline __attribute__((always_inline)) int wait_ready(fb_io *io, fiber *self, int fd,
                                                            uint32_t dir, int64_t deadline)
{
    if (io->completion) return wait_completion(io, fd, dir, deadline);
    io_fd *slot = fd_slot(io, fd);
    if (!slot) return -1;
    return park_ready(io, self, slot, fd, dir, deadline, false);
}

/* wait_ready for the calling fiber. */
static int wait_until(fb_io *io, int fd, uint32_t dir, int64_t deadline)
{
    return wait_ready(io, fb_self(), fd, dir, deadline);
}

/* wait_until for a read that found its fd empty (a readiness engine, fd covered by the
 * table): its deadline is the fd's read timer's. */
static __attribute__((noinline)) int wait_to_read(fb_io *io, int fd, int64_t deadline)
{
    return park_ready(io, fb_self(), &io->fds[fd], fd, FB_IN, deadline, true);
}

/* prepare's first call on an fd: the table grown to cover it, O_NONBLOCK set. */
static __attribute__((noinline)) fb_io *prepare_first(fb_io *io, int fd)
{
    if (!io) {
        errno = EPERM;
        return NULL;
    }
    io_fd *slot = fd_slot(io, fd);
    if (!slot) return NULL;
    if (!slot->nonblock_set) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)) return NULL;
        slot->nonblock_set = true;
    }
    return io;
}

/* The thread's IO runtime, and the fd made non-blocking once. Every read and write starts
 * here, so the case of an fd already seen is inline and the rest is not. */
static inline __attribute__((always_inline)) fb_io *prepare(int fd)
{
    fb_io *io = fb__io_tls;
    /* One unsigned compare covers fd < 0 too: (size_t)-1 is never below a table's length. */
    if (__builtin_expect(io && (size_t)fd < io->nfds && io->fds[fd].nonblock_set, 1)) return io;
    return prepare_first(io, fd);
}

int fb_wait(int fd, uint32_t dir, int64_t timeout_ns)
{
    fb_io *io = fb__io_tls;
    if (!io) {
        errno = EPERM;
        return -1;
    }
    if (dir != FB_IN && dir != FB_OUT) {
        errno = EINVAL;
        return -1;
    }
    return wait_until(io, fd, dir, deadline_after(timeout_ns));
}

int fb_sleep_until(int64_t mono_ns)
{
    fb_io *io = fb__io_tls;
    fiber *self = fb_self();
    if (mono_ns < 0) mono_ns = 0;
    if (!io || !self) {
        struct timespec ts = {mono_ns / 1000000000, mono_ns % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        return 0;
    }
    io_wait *w = new_wait(self);
    *w = (io_wait){.timer.kind = TM_SLEEP, .f = self, .fd = -1};
    if (fb__io_arm_timer(io, &w->timer, mono_ns) < 0) return -1;
    io->sleepers++;
    fb_park();
    return 0;
}

int fb_sleep(int64_t ns)
{
    return fb_sleep_until(tm_now() + (ns > 0 ? ns : 0));
}

/* ---- read policies --------------------------------------------------------------------------- */

/* Try the system call first (true) or wait for readiness first (false)? */
static inline bool try_first(const fb_io *io, const io_hint *h)
{
    /* Outside a fiber nothing can wait: wait_first finds that out and tries the call. */
    if (h->kind == IO_KIND_UNPOLLABLE) return true;
    switch (io->read_policy) {
    case FB_READ_WAIT:
        /* An edge engine would never report data that was there before the last edge was
         * consumed, so waiting first is only safe once the fd is known to be drained. */
        return io->ops->props.edge_triggered && !h->drained;
    case FB_READ_ADAPTIVE:
        return !h->drained;
    default:
        return true;
    }
}

/* Whether a short read on fd means its queue was empty: true for stream sockets and pipes.
 * A datagram socket returns one datagram per read, however many wait behind it; a regular
 * file or directory never blocks, and epoll refuses it. */
static __attribute__((noinline)) uint8_t classify(int fd)
{
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0)
        return type == SOCK_STREAM ? IO_KIND_STREAM : IO_KIND_OTHER;
    struct stat st;
    if (fstat(fd, &st) < 0) return IO_KIND_OTHER;
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return IO_KIND_UNPOLLABLE;
    return S_ISFIFO(st.st_mode) ? IO_KIND_STREAM : IO_KIND_OTHER;
}

static inline void hint_note(fb_io *io, int fd, enum io_outcome what)
{
    io_hint *h = &io->fds[fd].hint; /* re-read: the table may have moved during a wait */
    switch (what) {
    case IO_GOT_SHORT:
        /* Classified on the first short read only, and never under eager, which ignores the
         * hint: one getsockopt per connection at most. */
        if (io->read_policy == FB_READ_EAGER) return;
        if (h->kind == IO_KIND_UNKNOWN) h->kind = classify(fd);
        h->drained = h->kind == IO_KIND_STREAM;
        break;
    case IO_GOT_AGAIN:
        h->drained = 1;
        break;
    default:
        h->drained = 0;
        break;
    }
}

/* The policy chose to wait before the call. Files that never block and that epoll refuses
 * (regular files, directories) are recognised on the first such wait and always read at
 * once; an engine refusing some other file with EPERM gets the same treatment. */
static inline __attribute__((always_inline)) int wait_first(fb_io *io, int fd, int64_t deadline)
{
    fiber *self = fb_self(); /* looked up once, here, for the wait as well */
    if (!self) return 0;     /* outside a fiber nothing waits: the call is tried at once */
    /* Only readiness engines get here (the callers give completion engines their own path),
     * and prepare covered fd with the table. */
    io_fd *slot = &io->fds[fd];
    if (slot->hint.kind == IO_KIND_UNKNOWN) slot->hint.kind = classify(fd);
    if (slot->hint.kind == IO_KIND_UNPOLLABLE) return 0;
    io->reads_waited_first++;
    if (park_ready(io, self, slot, fd, FB_IN, deadline, true) == 0) {
        hint_note(io, fd, IO_GOT_READY);
        return 0;
    }
    if (errno != EPERM) return -1;
    io->fds[fd].hint.kind = IO_KIND_UNPOLLABLE;
    return 0;
}

/* ---- the calls ------------------------------------------------------------------------------ */

/* A read on a completion engine. Out of line: its operation record would otherwise widen
 * the frame of every read, and that frame is a parked fiber's stack, read again on resume. */
static __attribute__((noinline)) ssize_t read_completion(fb_io *io, int fd, void *buf, size_t len,
                                                         int64_t deadline)
{
    eng_op op = {.kind = ENG_OP_READ, .fd = fd, .buf = buf, .len = len > INT_MAX ? INT_MAX : len};
    return complete_buffered(io, &op, FB_IN, deadline);
}

/* fb_read_timeout's body, inline in fb_read too: there its deadline is the constant -1, and
 * every deadline check of the wait folds away with the call fb_read made to get here. */
static inline __attribute__((always_inline)) ssize_t read_within(int fd, void *buf, size_t len,
                                                                 int64_t timeout_ns)
{
    fb_io *io = prepare(fd);
    int64_t deadline = deadline_after(timeout_ns);
    if (!io) return -1;
    if (io->completion) return read_completion(io, fd, buf, len, deadline);
    if (len && !try_first(io, &io->fds[fd].hint) && wait_first(io, fd, deadline) < 0) return -1;
    for (;;) {
        /* recv on sockets, as the yardsticks do: read(2) on a socket takes the VFS path
         * (fdget_pos, vfs_read, sock_read_iter) to the same sock_recvmsg, measurably longer
         * per request. Anything else gets read(2), found out once by ENOTSOCK. */
        io->reads_tried++;
        ssize_t n = io->fds[fd].not_socket ? read(fd, buf, len) : recv(fd, buf, len, 0);
        if (n < 0 && errno == ENOTSOCK) {
            io->fds[fd].not_socket = true;
            continue;
        }
        if (n > 0 && (size_t)n < len) {
            hint_note(io, fd, IO_GOT_SHORT);
            return n;
        }
        if (n >= 0) {
            hint_note(io, fd, IO_GOT_FULL); /* a full buffer, or end of file (stays readable) */
            return n;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) {
            hint_note(io, fd, IO_GOT_FULL); /* an error: whatever comes next, ask the kernel */
            return -1;
        }
        io->reads_again++;
        hint_note(io, fd, IO_GOT_AGAIN);
        if (wait_to_read(io, fd, deadline) < 0) return -1;
        hint_note(io, fd, IO_GOT_READY);
    }
}

ssize_t fb_read_timeout(int fd, void *buf, size_t len, int64_t timeout_ns)
{
    return read_within(fd, buf, len, timeout_ns);
}

ssize_t HOT_TEXT fb_read(int fd, void *buf, size_t len)
{
    return read_within(fd, buf, len, FB_FOREVER);
}

/*
 * Writes try first under every read policy. A socket's send buffer is nearly always
 * writable (a request-response peer has read the previous reply before sending the next
 * request), so waiting first would add a wait to every write and save nothing; EAGAIN comes
 * only from a full buffer, and only then is waiting worth its cost. The send that fills the
 * buffer partly returns a short count, and the loop's next send gets EAGAIN and waits: that
 * extra call happens once per full buffer, not once per request.
 */
/* fb_write on a completion engine: a short write is submitted again for the rest, like
 * write(2)'s. */
static __attribute__((noinline)) ssize_t write_completion(fb_io *io, int fd, const char *buf,
                                                          size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t left = len - done;
        eng_op op = {.kind = ENG_OP_WRITE,
                     .fd = fd,
                     .buf = (char *)buf + done,
                     .len = left > INT_MAX ? INT_MAX : left,
                     .socket = !io->fds[fd].not_socket};
        ssize_t n = complete_buffered(io, &op, FB_OUT, -1);
        if (n < 0 && errno == ENOTSOCK && op.socket) {
            io->fds[fd].not_socket = true;
            continue;
        }
        if (n == 0) errno = EIO; /* no progress on a non-empty write: do not spin on it */
        if (n <= 0) return done ? (ssize_t)done : -1;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* fb_write on a readiness engine, from its first call on: `n` is what that call returned when
 * fb_write already made it (tried), else it is made here. */
static __attribute__((noinline)) ssize_t write_ready(fb_io *io, int fd, const char *buf, size_t len,
                                                     ssize_t n, bool tried)
{
    size_t done = 0;
    while (done < len) {
        /* send with MSG_NOSIGNAL on sockets: a reset peer gives EPIPE, never SIGPIPE. The fd
         * table is re-read each time: it may have moved while this fiber was parked. */
        const char *p = buf + done;
        if (!tried)
            n = io->fds[fd].not_socket ? write(fd, p, len - done)
                                       : send(fd, p, len - done, MSG_NOSIGNAL);
        tried = false;
        if (n < 0 && errno == ENOTSOCK) {
            io->fds[fd].not_socket = true;
            continue;
        }
        if (n >= 0) {
            done += (size_t)n;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN || wait_until(io, fd, FB_OUT, -1) < 0) return done ? (ssize_t)done : -1;
    }
    return (ssize_t)done;
}

/* fb_write but for its common case. `n` is what a send fb_write made returned (tried), else
 * nothing was tried yet. */
static __attribute__((noinline)) ssize_t write_rest(int fd, const void *buf, size_t len, ssize_t n,
                                                    bool tried)
{
    fb_io *io = prepare(fd);
    if (!io) return -1;
    if (io->completion) return write_completion(io, fd, buf, len);
    return write_ready(io, fd, buf, len, n, tried);
}

ssize_t HOT_TEXT fb_write(int fd, const void *buf, size_t len)
{
    /* The common case, a socket known to the runtime that takes the whole reply at once: one
     * look at its slot, and only len kept across the call (the rest is looked up again). */
    fb_io *io = fb__io_tls;
    if (__builtin_expect(io && (size_t)fd < io->nfds && len && !io->completion, 1)) {
        const io_fd *slot = &io->fds[fd];
        if (__builtin_expect(slot->nonblock_set && !slot->not_socket, 1)) {
            ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
            if (__builtin_expect(n == (ssize_t)len, 1)) return n;
            return write_rest(fd, buf, len, n, true);
        }
    }
    return write_rest(fd, buf, len, 0, false);
}

int fb_accept(int lfd, struct sockaddr *addr, socklen_t *addrlen)
{
    fb_io *io = prepare(lfd);
    if (!io) return -1;
    while (io->completion) {
        eng_op op = {.kind = ENG_OP_ACCEPT, .fd = lfd};
        ssize_t fd = complete_op(io, &op, FB_IN, -1);
        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
        if (fd >= 0 && addr && addrlen && getpeername((int)fd, addr, addrlen) < 0) *addrlen = 0;
        return (int)fd;
    }
    /* The read policy applies to the backlog as to a receive queue: after EAGAIN the
     * listener counts as drained and adaptive waits before the next accept4. */
    if (!try_first(io, &io->fds[lfd].hint) && wait_first(io, lfd, -1) < 0) return -1;
    for (;;) {
        /* The new fd is not recorded as non-blocking here: the caller may close it with
         * close(2) (a refused connection) and the number must not carry the mark. */
        io->reads_tried++;
        int fd = accept4(lfd, addr, addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0 || (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)) {
            hint_note(io, lfd, IO_GOT_FULL);
            return fd;
        }
        if (errno != EAGAIN) continue;
        io->reads_again++;
        hint_note(io, lfd, IO_GOT_AGAIN);
        if (wait_until(io, lfd, FB_IN, -1) < 0) return -1;
        hint_note(io, lfd, IO_GOT_READY);
    }
}

int fb_connect(int fd, const struct sockaddr *addr, socklen_t addrlen, int64_t timeout_ns)
{
    fb_io *io = prepare(fd);
    int64_t deadline = deadline_after(timeout_ns);
    int err = 0;
    socklen_t elen = sizeof err;
    if (!io) return -1;
    if (connect(fd, addr, addrlen) == 0) return 0;
    if (errno != EINPROGRESS && errno != EINTR) return -1;
    if (wait_until(io, fd, FB_OUT, deadline) < 0) return -1;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0) return -1;
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

int fb_close(int fd)
{
    fb_io *io = fb__io_tls;
    if (io && fd >= 0 && (size_t)fd < io->nfds) {
        io_fd *slot = &io->fds[fd];
        for (int d = 0; d < 2; d++) {
            io_wait *w = slot->w[d];
            if (!w) continue;
            if (!slot->recorded[d]) {
                io->ops->cancel(io->eng, fd, d ? FB_OUT : FB_IN);
                fb__io_finish_bare(io, slot, d, EBADF);
                continue;
            }
            if (w->op) { /* it wakes with EBADF once the kernel has let go of its buffer */
                slot->w[d] = NULL;
                fb__io_give_up(io, w, EBADF);
                continue;
            }
            io->ops->cancel(io->eng, fd, w->dir);
            fb__io_finish(io, w, EBADF, 0);
        }
        if (slot->rt) {
            if (io->tm) io->tm->cancel(io->timers, &slot->rt->timer); /* a no-op when idle */
            free(slot->rt);
        }
        /* Before close(2): once the number is free, a new file may get it at once. */
        io->ops->fd_closed(io->eng, fd);
        memset(slot, 0, sizeof *slot);
    }
    return close(fd);
}
